//! `cargo run --release -p compare`: deadsim, shuttle 0.9 and loom 0.7 on
//! the same model, side by side in one run: `abba --fixed` (two threads,
//! two mutexes taken in the same order, 3 rounds, every lock and unlock a
//! scheduling point).
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

/// The model for loom.
fn abba_loom() {
    use loom::sync::{Arc, Mutex};
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

fn rate(n: u64, f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    n as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let model = sim::models::find("abba").unwrap().configure(&[("fixed".into(), "true".into())]).unwrap();
    println!("abba --fixed, {ROUNDS} rounds, {n} schedules per random/PCT row, one core\n");

    let ds_random = rate(n, || {
        for seed in 0..n {
            std::hint::black_box(model.run(seed, false));
        }
    });
    let ds_pct = rate(n, || {
        for seed in 0..n {
            std::hint::black_box(sim::scheduler::StrategyKind::Pct(2).run(&model, seed, false, 1_000_000));
        }
    });
    let sh_random = rate(n, || shuttle::check_random(abba_shuttle, n as usize));
    let sh_pct = rate(n, || shuttle::check_pct(abba_shuttle, n as usize, 2));

    let t = Instant::now();
    let ds = sim::scheduler::explore(&model, &sim::scheduler::ExploreConfig::default());
    let ds_dfs_time = t.elapsed().as_secs_f64();
    let t = Instant::now();
    loom::model(abba_loom);
    let loom_time = t.elapsed().as_secs_f64();
    let loom_execs = LOOM_EXECUTIONS.load(Ordering::Relaxed);

    println!("{:<28} {:>16} {:>16} {:>8}", "search", "deadsim", "shuttle 0.9", "ratio");
    println!("{:<28} {:>16.0} {:>16.0} {:>7.1}x", "random, schedules/s", ds_random, sh_random, ds_random / sh_random);
    println!("{:<28} {:>16.0} {:>16.0} {:>7.1}x", "PCT (d=2), schedules/s", ds_pct, sh_pct, ds_pct / sh_pct);
    println!();
    println!("{:<28} {:>16} {:>16} {:>8}", "exhaustive", "deadsim (DPOR)", "loom 0.7", "ratio");
    println!(
        "{:<28} {:>16} {:>16} {:>7.2}x",
        "executions to exhaust",
        ds.executions,
        loom_execs,
        loom_execs as f64 / ds.executions as f64
    );
    println!(
        "{:<28} {:>16.4} {:>16.4} {:>7.1}x",
        "seconds to exhaust",
        ds_dfs_time,
        loom_time,
        loom_time / ds_dfs_time
    );
    println!("\n(deadsim PCT runs each seed twice: once to learn the step bound, once with the change points.)");
}
