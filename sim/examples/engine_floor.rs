//! What the engine's parts cost on their own: a run that does nothing, one
//! spawn, one mutex, a step taken in place, a lock and unlock, the first
//! random draw. `step_cost` measures a whole model; this splits the figure
//! into the parts a change of the runtime would move.
//!
//! ```sh
//! cargo run --release -p sim --example engine_floor                 # every case, ns per run
//! cargo build --release -p sim --example engine_floor
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/engine_floor 20000 lock                # one case, instructions
//! ```
//!
//! Each case is a whole run (seed `i` of `0..N`, recording off); a part's
//! cost is its case minus `empty` (for `yield` and `lock`, divided by the
//! 10 operations of the run). Under callgrind, "I refs" / N is
//! instructions per run, a figure that does not move with the machine's
//! load.

use std::time::Instant;

/// Operations in the `yield` and `lock` cases.
const OPS: u32 = 10;

const CASES: &[(&str, &str)] = &[
    ("empty", "a run whose main task returns at once"),
    ("spawn", "main spawns one task that returns at once"),
    ("mutex", "main makes one mutex"),
    ("yield", "main yields 10 times (each step taken in place)"),
    ("lock", "main locks and unlocks one mutex 10 times"),
    ("draw", "main spawns two tasks and makes one random choice (the seed's first draw)"),
];

fn run_case(case: &str, seed: u64) -> sim::Run {
    let sim = sim::Sim::new(seed);
    match case {
        "empty" => sim.run(|| async {}),
        "spawn" => sim.run(|| async {
            sim::spawn("T1", async {});
        }),
        "mutex" => sim.run(|| async {
            let _a = sim::sync::Mutex::new("A");
        }),
        "yield" => sim.run(|| async {
            for _ in 0..OPS {
                sim::task::yield_now().await;
            }
        }),
        "lock" => sim.run(|| async {
            let a = sim::sync::Mutex::new("A");
            for _ in 0..OPS {
                let g = a.lock().await;
                g.unlock().await;
            }
        }),
        "draw" => sim.run(|| async {
            sim::spawn("T1", async {});
            sim::spawn("T2", async {});
            sim::task::choose(2);
        }),
        _ => unreachable!("checked in main"),
    }
}

/// Nanoseconds per run of `case` over seeds `0..n`.
fn ns_per_run(case: &str, n: u64) -> f64 {
    let t = Instant::now();
    for seed in 0..n {
        std::hint::black_box(run_case(case, seed));
    }
    t.elapsed().as_secs_f64() * 1e9 / n as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let only = args.next();
    if let Some(case) = &only {
        if !CASES.iter().any(|(c, _)| c == case) {
            let names: Vec<&str> = CASES.iter().map(|(c, _)| *c).collect();
            eprintln!("engine_floor: unknown case {case:?}; one of {}", names.join(", "));
            std::process::exit(2);
        }
        ns_per_run(case, n);
        return;
    }
    // Each case twice, in turn, keeping the lower: a slow spell of a shared
    // machine then falls on one turn, not on one case.
    let mut ns: Vec<f64> = CASES.iter().map(|(c, _)| ns_per_run(c, n)).collect();
    for (i, (c, _)) in CASES.iter().enumerate() {
        ns[i] = ns[i].min(ns_per_run(c, n));
    }
    let empty = ns[0];
    println!("{n} runs per case, recording off, one core\n");
    println!("{:<6} {:>10} {:>14}  what", "case", "ns/run", "ns over empty");
    for (i, (c, what)) in CASES.iter().enumerate() {
        let over = if i == 0 { String::new() } else { format!("{:.1}", ns[i] - empty) };
        println!("{c:<6} {:>10.1} {over:>14}  {what}", ns[i]);
    }
    println!(
        "\na step taken in place: {:.1} ns; a lock and unlock: {:.1} ns (one task, no other to pick)",
        (ns[3] - empty) / OPS as f64,
        (ns[4] - ns[2]) / OPS as f64
    );
}
