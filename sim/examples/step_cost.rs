//! The cost of the step loop: runs seeds `0..N` of `abba --fixed` (random
//! strategy, recording off, one core) and prints schedules/s and ns/step.
//!
//! ```sh
//! cargo run --release -p sim --example step_cost -- 2000000      # wall clock
//! cargo build --release -p sim --example step_cost
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/step_cost 20000                    # instructions
//! ```
//!
//! Wall-clock figures move with the machine's load; callgrind's instruction
//! count for the same binary and arguments does not, so it is the figure to
//! compare a change of the hot path by (divide by N for instructions per
//! schedule). A second argument sets the rounds per thread (default 3).

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_000_000);
    let rounds = args.next().unwrap_or_else(|| "3".into());
    let model = sim::models::find("abba")
        .unwrap()
        .configure(&[("fixed".into(), "true".into()), ("rounds".into(), rounds)])
        .unwrap();
    let t = std::time::Instant::now();
    let mut steps = 0;
    for seed in 0..n {
        steps += std::hint::black_box(model.run(seed, false)).steps;
    }
    let e = t.elapsed().as_secs_f64();
    println!(
        "{n} schedules: {:.0} schedules/s, {:.1} ns/step, {:.1} steps/schedule",
        n as f64 / e,
        e * 1e9 / steps as f64,
        steps as f64 / n as f64
    );
}
