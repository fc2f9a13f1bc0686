//! Running a model inside a user's own `#[test]`, in the spirit of shuttle's
//! `check_random`.
//!
//! ```should_panic
//! use sim::sync::Mutex;
//! // Fails the test with the deadlock report and the replay command.
//! sim::testing::check_random(
//!     || async {
//!         let (a, b) = (Mutex::new("A"), Mutex::new("B"));
//!         sim::spawn("T1", async move { let _x = a.lock().await; let _y = b.lock().await; });
//!         sim::spawn("T2", async move { let _y = b.lock().await; let _x = a.lock().await; });
//!     },
//!     1000,
//! );
//! ```
//!
//! Set `DEADSIM_SEED=N` to run only seed N, with its trace printed to stderr
//! (and written to the file named by `DEADSIM_TRACE`, if set).

use std::future::Future;

use crate::Sim;

/// Runs `model` on seeds `0..iterations`; panics at the first failing seed
/// with the full report and how to replay it.
pub fn check_random<F, Fut>(model: F, iterations: u64)
where
    F: Fn() -> Fut + Clone + 'static,
    Fut: Future<Output = ()> + 'static,
{
    if let Some(seed) = std::env::var("DEADSIM_SEED").ok().and_then(|s| s.trim().parse::<u64>().ok()) {
        replay(model, seed);
        return;
    }
    for seed in 0..iterations {
        let run = Sim::new(seed).run(model.clone());
        if run.outcome.is_failure() {
            panic!(
                "deadsim: seed {seed} of 0..{iterations} failed after {} steps\n\n{}\nReplay it with its trace: \
                 DEADSIM_SEED={seed} cargo test <this test>, or sim::testing::replay(model, {seed}).",
                run.steps, run.outcome
            );
        }
    }
}

/// Runs one seed with recording on, prints its events to stderr, and panics
/// with the report if it fails.
pub fn replay<F, Fut>(model: F, seed: u64)
where
    F: FnOnce() -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    let run = Sim::new(seed).record(true).run(model);
    let trace = run.trace.expect("recording was on");
    for e in &trace.events {
        let task = &trace.tasks[e.task as usize].name;
        let res = e.resource.map(|r| format!(" \"{}\"", trace.resources[r as usize].name)).unwrap_or_default();
        eprintln!("step {:>5} {:>10}ns  {task:<16} {:?}{res}", e.step, e.time, e.kind);
    }
    if let Ok(path) = std::env::var("DEADSIM_TRACE") {
        if let Err(e) = trace.write_file(std::path::Path::new(&path)) {
            eprintln!("deadsim: cannot write {path}: {e}");
        }
    }
    if run.outcome.is_failure() {
        panic!("deadsim: seed {seed} failed after {} steps\n\n{}", run.steps, run.outcome);
    }
}
