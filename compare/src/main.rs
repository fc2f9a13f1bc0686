//! `cargo run --release -p compare [N]`: deadsim, shuttle 0.9 and loom 0.7 on
//! the same model, side by side in one run: `abba --fixed` (two threads
//! spawned by main, two mutexes taken in the same order, 3 rounds, every
//! lock and unlock a scheduling point). Each row is five turns per tool, taken
//! in turn, of N schedules each (default 300,000); the ratio is of the
//! medians, and each tool's range is printed beside it.
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

/// Rounds per row: the two tools take turns, so that a slow spell of the
/// machine falls on both and not on one tool's whole measurement.
const ROUNDS_PER_ROW: u64 = 5;

/// One row: `ROUNDS_PER_ROW` turns of deadsim then shuttle, `n` schedules
/// each (deadsim's turn `i` runs seeds `i*n..(i+1)*n`). Gives both tools'
/// rates, each sorted.
fn turns(n: u64, mut deadsim: impl FnMut(u64) -> f64, mut shuttle: impl FnMut() -> f64) -> (Vec<f64>, Vec<f64>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..ROUNDS_PER_ROW {
        a.push(deadsim(i * n));
        b.push(shuttle());
    }
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    (a, b)
}

fn median(xs: &[f64]) -> f64 {
    xs[xs.len() / 2]
}

/// Prints a row: the medians and their ratio, then each tool's range.
fn row(what: &str, (a, b): (Vec<f64>, Vec<f64>)) {
    let (ma, mb) = (median(&a), median(&b));
    println!(
        "{what:<26} {ma:>12.0} {mb:>12.0} {:>7.1}x   ({:.0}-{:.0} / {:.0}-{:.0}, ratio of medians)",
        ma / mb,
        a[0],
        a[a.len() - 1],
        b[0],
        b[b.len() - 1]
    );
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300_000);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let model = sim::models::find("abba").unwrap().configure(&[("fixed".into(), "true".into())]).unwrap();
    println!(
        "abba --fixed, {ROUNDS} rounds, {n} schedules per turn, {ROUNDS_PER_ROW} turns per tool and row \
         (taken in turn), {cores} core(s)\n"
    );

    let random = turns(
        n,
        |first| {
            rate(n, || {
                for seed in first..first + n {
                    std::hint::black_box(model.run(seed, false));
                }
            })
        },
        || rate(n, || shuttle::check_random(abba_shuttle, n as usize)),
    );
    let per_thread = (n as usize).div_ceil(cores);
    let parallel = turns(
        n,
        |first| {
            let range = sim::hunt::SeedRange { first, last: first + n - 1 };
            rate(n, || {
                let r = sim::hunt::hunt(range, cores, |seed| model.run(seed, false).outcome);
                assert!(r.failure.is_none(), "abba --fixed never deadlocks");
            })
        },
        || {
            rate((per_thread * cores) as u64, || {
                std::thread::scope(|s| {
                    for _ in 0..cores {
                        s.spawn(|| shuttle::check_random(abba_shuttle, per_thread));
                    }
                })
            })
        },
    );
    let pct = turns(
        n,
        |first| {
            rate(n, || {
                for seed in first..first + n {
                    std::hint::black_box(sim::scheduler::StrategyKind::Pct(2).run(&model, seed, false, 1_000_000));
                }
            })
        },
        || rate(n, || shuttle::check_pct(abba_shuttle, n as usize, 2)),
    );

    let t = Instant::now();
    // The search alone, as loom's: not the random check of its proof.
    let ds = sim::scheduler::explore(
        &model,
        &sim::scheduler::ExploreConfig { cross_check: false, ..sim::scheduler::ExploreConfig::default() },
    );
    let ds_dfs_time = t.elapsed().as_secs_f64();
    assert!(ds.exhausted && ds.failure.is_none());
    let t = Instant::now();
    loom::model(abba_loom);
    let loom_time = t.elapsed().as_secs_f64();
    let loom_execs = LOOM_EXECUTIONS.load(Ordering::Relaxed);

    println!("{:<26} {:>12} {:>12} {:>8}", "search, schedules/s", "deadsim", "shuttle 0.9", "ratio");
    row("random, one core", random);
    row(&format!("random, {cores} cores"), parallel);
    row("PCT (d=2), one core", pct);
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
