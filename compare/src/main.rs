//! `cargo run --release -p compare [N]`: deadsim, shuttle 0.9 and loom 0.7 on
//! the same model, side by side in one run: `abba --fixed` (two threads
//! spawned by main, two mutexes taken in the same order, 3 rounds, every
//! lock and unlock a scheduling point). N schedules per row (default 300,000).
//!
//! Random search is measured on one core each, and on every core: deadsim's
//! hunt loop (`sim::hunt`, what `deadsim hunt` runs) against one shuttle
//! `check_random` per core on its own thread (shuttle has no parallel runner;
//! this is the best a user can do with it).
//!
//! This crate is a workspace member but not a default member, so the
//! README's `cargo test` never builds shuttle or loom.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const ROUNDS: usize = 3;

/// The model for shuttle.
fn abba_shuttle() {
    use shuttle::sync::Mutex;
    use std::sync::Arc;
    let (a, b) = (Arc::new(Mutex::new(())), Arc::new(Mutex::new(())));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (a, b) = (a.clone(), b.clone());
            shuttle::thread::spawn(move || {
                for _ in 0..ROUNDS {
                    let ga = a.lock().unwrap();
                    let gb = b.lock().unwrap();
                    drop(gb);
                    drop(ga);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

static LOOM_EXECUTIONS: AtomicUsize = AtomicUsize::new(0);

/// The model for loom. `std::sync::Arc`, as shuttle's: a `loom::sync::Arc`
/// makes every clone and drop a scheduling point of its own (1,350
/// executions instead of 150), which is not the model the others run.
fn abba_loom() {
    use loom::sync::Mutex;
    use std::sync::Arc;
    LOOM_EXECUTIONS.fetch_add(1, Ordering::Relaxed);
    let (a, b) = (Arc::new(Mutex::new(())), Arc::new(Mutex::new(())));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (a, b) = (a.clone(), b.clone());
            loom::thread::spawn(move || {
                for _ in 0..ROUNDS {
                    let ga = a.lock().unwrap();
                    let gb = b.lock().unwrap();
                    drop(gb);
                    drop(ga);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// Runs `f` (which runs `n` schedules) and gives schedules per second.
fn rate(n: u64, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    n as f64 / t.elapsed().as_secs_f64()
}

fn row(what: &str, a: f64, b: f64) {
    println!("{what:<34} {a:>14.0} {b:>14.0} {:>8.1}x", a / b);
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300_000);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let model = sim::models::find("abba").unwrap().configure(&[("fixed".into(), "true".into())]).unwrap();
    println!("abba --fixed, {ROUNDS} rounds, {n} schedules per row, {cores} core(s)\n");

    let ds_random = rate(n, || {
        for seed in 0..n {
            std::hint::black_box(model.run(seed, false));
        }
    });
    let sh_random = rate(n, || shuttle::check_random(abba_shuttle, n as usize));
    let range = sim::hunt::SeedRange { first: 0, last: n - 1 };
    let ds_hunt = rate(n, || {
        let r = sim::hunt::hunt(range, cores, |seed| model.run(seed, false).outcome);
        assert!(r.failure.is_none(), "abba --fixed never deadlocks");
    });
    let per_thread = (n as usize).div_ceil(cores);
    let sh_parallel = rate((per_thread * cores) as u64, || {
        std::thread::scope(|s| {
            for _ in 0..cores {
                s.spawn(|| shuttle::check_random(abba_shuttle, per_thread));
            }
        })
    });
    let ds_pct = rate(n, || {
        for seed in 0..n {
            std::hint::black_box(sim::scheduler::StrategyKind::Pct(2).run(&model, seed, false, 1_000_000));
        }
    });
    let sh_pct = rate(n, || shuttle::check_pct(abba_shuttle, n as usize, 2));

    let t = Instant::now();
    let ds = sim::scheduler::explore(&model, &sim::scheduler::ExploreConfig::default());
    let ds_dfs_time = t.elapsed().as_secs_f64();
    assert!(ds.exhausted && ds.failure.is_none());
    let t = Instant::now();
    loom::model(abba_loom);
    let loom_time = t.elapsed().as_secs_f64();
    let loom_execs = LOOM_EXECUTIONS.load(Ordering::Relaxed);

    println!("{:<34} {:>14} {:>14} {:>9}", "search, schedules/s", "deadsim", "shuttle 0.9", "ratio");
    row("random, one core", ds_random, sh_random);
    row(&format!("random, {cores} cores"), ds_hunt, sh_parallel);
    row("PCT (d=2), one core", ds_pct, sh_pct);
    println!();
    println!("{:<34} {:>14} {:>14} {:>9}", "exhaustive", "deadsim (DPOR)", "loom 0.7", "ratio");
    println!(
        "{:<34} {:>14} {:>14} {:>8.1}x",
        "executions to exhaust",
        ds.executions,
        loom_execs,
        loom_execs as f64 / ds.executions as f64
    );
    println!(
        "{:<34} {:>14.4} {:>14.4} {:>8.1}x",
        "seconds to exhaust",
        ds_dfs_time,
        loom_time,
        loom_time / ds_dfs_time
    );
    println!(
        "\ndeadsim on {cores} cores is its hunt loop (sim::hunt, what `deadsim hunt` runs); shuttle on {cores} cores"
    );
    println!("is one check_random per core, each on its own thread. deadsim's PCT runs each seed twice:");
    println!("once to learn the step bound, once with the change points.");
}
