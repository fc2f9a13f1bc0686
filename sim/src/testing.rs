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
//!
//! A bug that needs a preemption at one exact point (a task stopped between
//! a check and the lock it then takes) can hide from random scheduling for
//! many thousands of seeds; [`check_pct`] runs PCT (as `deadsim hunt
//! --strategy pct:D`), which gives such a schedule a fixed chance in every
//! seed.

use std::future::Future;

use crate::lockorder::WarningKind;
use crate::scheduler::StrategyKind;
use crate::Sim;

/// Runs `model` on seeds `0..iterations`; panics at the first failing seed
/// with the full report and how to replay it.
pub fn check_random<F, Fut>(model: F, iterations: u64)
where
    F: Fn() -> Fut + Clone + 'static,
    Fut: Future<Output = ()> + 'static,
{
    Check::random().run(model, iterations)
}

/// [`check_random`] under PCT of depth `depth` (1 to 10: the number of
/// ordering constraints a bug needs, 2 or 3 for most deadlocks), each seed
/// run twice as `deadsim hunt --strategy pct:D` runs it: once to learn its
/// length, then with the priority change points. `DEADSIM_SEED=N` replays
/// seed N under the same strategy.
///
/// ```should_panic
/// use sim::sync::Mutex;
/// // T2 must run between T1's two locks: PCT depth 2 finds it in a few seeds.
/// sim::testing::check_pct(
///     || async {
///         let (a, b) = (Mutex::new("A"), Mutex::new("B"));
///         sim::spawn("T1", async move { let _x = a.lock().await; let _y = b.lock().await; });
///         sim::spawn("T2", async move { let _y = b.lock().await; let _x = a.lock().await; });
///     },
///     100,
///     2,
/// );
/// ```
///
/// # Panics
/// Also when `depth` is not 1 to 10, as `--strategy pct:D` refuses it.
pub fn check_pct<F, Fut>(model: F, iterations: u64, depth: u32)
where
    F: Fn() -> Fut + Clone + 'static,
    Fut: Future<Output = ()> + 'static,
{
    Check::pct(depth).run(model, iterations)
}

/// [`check_random`] and [`check_pct`] with settings: the step limit (a
/// model that runs long, or one whose livelock should show sooner) and the
/// virtual time of a step (`step_ns(0)`, for a model whose timers should
/// not be overtaken by the steps between them; see [`crate::time`]).
///
/// ```
/// use sim::testing::Check;
/// // A worker and its result: 1,000 steps are plenty, and no step takes time.
/// Check::pct(2).max_steps(1_000).step_ns(0).run(
///     || async {
///         let done = sim::sync::Chan::<()>::new("done", 1);
///         let tx = done.clone();
///         sim::spawn("worker", async move { tx.send(()).await });
///         done.recv().await;
///     },
///     200,
/// );
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Check {
    strategy: StrategyKind,
    max_steps: u64,
    step_ns: Option<u64>,
    lock_order_fails: bool,
    /// The finding kinds [`Check::lock_order_allows`] leaves out, a bit each.
    lock_order_allowed: u8,
    model: Option<&'static str>,
}

impl Check {
    /// Random scheduling, as [`check_random`].
    pub fn random() -> Check {
        Check {
            strategy: StrategyKind::Random,
            max_steps: crate::DEFAULT_MAX_STEPS,
            step_ns: None,
            lock_order_fails: false,
            lock_order_allowed: 0,
            model: None,
        }
    }

    /// PCT of depth `depth`, as [`check_pct`].
    ///
    /// # Panics
    /// When `depth` is not 1 to 10.
    pub fn pct(depth: u32) -> Check {
        Check { strategy: pct(depth), ..Check::random() }
    }

    /// Stops each run after `n` steps (a failure, `step-limit`).
    pub fn max_steps(mut self, n: u64) -> Check {
        self.max_steps = n;
        self
    }

    /// Names the model in its traces (and so in their charts' titles:
    /// "Timeline · prod · seed 1"), in place of `custom` ([`Sim::label`]).
    ///
    /// ```
    /// use sim::testing::Check;
    /// let run = Check::random().label("prod").run_seed(&|| async { sim::yield_now().await }, 1, true);
    /// assert_eq!(run.trace.unwrap().meta.model, "prod");
    /// ```
    ///
    /// # Panics
    /// If `model` is empty or has a character other than an ASCII letter,
    /// digit, `-` or `_`, as [`crate::models::Configured::new`]: it goes
    /// into schedule strings.
    pub fn label(mut self, model: &'static str) -> Check {
        assert!(
            !model.is_empty() && model.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "model name `{model}`: use ASCII letters, digits, `-` and `_` (it goes into schedule strings)"
        );
        self.model = Some(model);
        self
    }

    /// Virtual nanoseconds per step ([`Sim::step_ns`]).
    pub fn step_ns(mut self, ns: u64) -> Check {
        self.step_ns = Some(ns);
        self
    }

    /// Fails the check too when no seed failed but the lock order over the
    /// seeds run has findings, as `deadsim hunt` prints them: a `WARNING`
    /// of a possible deadlock (two locks taken in both orders, which a lock
    /// held around both may yet rule out; an RWMutex read-locked again), or
    /// an `INFO` that is one if the other side needs the lock (a lock held
    /// across a blocking send, write or wait (a WaitGroup's, a Cond's, a
    /// monitor's), a lock chain into one, two locks of one class nested,
    /// which is how two same-named locks taken in both orders show). So a
    /// model that holds a lock across a send by design fails it too, unless
    /// it allows that kind ([`Check::lock_order_allows`]). By default the
    /// findings are shown only beside a failure. `DEADSIM_SEED=N` runs one
    /// seed, which judges no lock order over many.
    ///
    /// ```should_panic
    /// use sim::sync::Mutex;
    /// // T2 starts after T1 is done: no run deadlocks, but B then A
    /// // against A then B deadlocks once T2 no longer waits.
    /// sim::testing::Check::random().lock_order_fails().run(
    ///     || async {
    ///         let (a, b) = (Mutex::new("A"), Mutex::new("B"));
    ///         sim::spawn("T1", async move { let _x = a.lock().await; let _y = b.lock().await; }).join().await;
    ///         sim::spawn("T2", async move { let _y = b.lock().await; let _x = a.lock().await; }).join().await;
    ///     },
    ///     10,
    /// );
    /// ```
    pub fn lock_order_fails(mut self) -> Check {
        self.lock_order_fails = true;
        self
    }

    /// With [`Check::lock_order_fails`]: findings of this kind fail no
    /// check (a model that holds a lock across a send its receiver takes no
    /// lock for allows [`WarningKind::HeldAcrossBlocking`]); they are still
    /// shown beside a failure, and with the findings that fail it.
    ///
    /// ```
    /// use sim::lockorder::WarningKind;
    /// use sim::sync::{Chan, Mutex};
    /// sim::testing::Check::random()
    ///     .lock_order_fails()
    ///     .lock_order_allows(WarningKind::HeldAcrossBlocking)
    ///     .run(
    ///         || async {
    ///             let (mu, ch) = (Mutex::new("mu"), Chan::<u32>::new("results", 0));
    ///             let rx = ch.clone();
    ///             let consumer = sim::spawn("consumer", async move { rx.recv().await; });
    ///             let g = mu.lock().await;
    ///             ch.send(1).await; // held across the send, by design
    ///             g.unlock().await;
    ///             consumer.join().await;
    ///         },
    ///         100,
    ///     );
    /// ```
    pub fn lock_order_allows(mut self, kind: WarningKind) -> Check {
        self.lock_order_allowed |= 1 << kind as u8;
        self
    }

    /// Runs `model` on seeds `0..iterations`; panics at the first failing
    /// seed with the report and how to replay it. `DEADSIM_SEED=N` runs
    /// only seed N, with its trace.
    pub fn run<F, Fut>(&self, model: F, iterations: u64)
    where
        F: Fn() -> Fut + Clone + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        check(model, iterations, self)
    }

    /// Replays seed `seed` with its trace printed to stderr; panics with its
    /// report if it fails.
    pub fn replay<F, Fut>(&self, model: F, seed: u64)
    where
        F: Fn() -> Fut + Clone + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        replay_with(model, seed, self)
    }

    /// One seed's run under these settings, for a sweep that wants every
    /// seed's outcome rather than the first failure (`record`: keep its
    /// trace).
    ///
    /// ```
    /// use sim::testing::Check;
    /// let run = Check::pct(2).max_steps(500).run_seed(&|| async { sim::yield_now().await }, 7, false);
    /// assert_eq!(run.outcome, sim::Outcome::Completed);
    /// ```
    pub fn run_seed<F, Fut>(&self, model: &F, seed: u64, record: bool) -> crate::Run
    where
        F: Fn() -> Fut + Clone + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        let (step_ns, model_name) = (self.step_ns, self.model);
        self.strategy.run_by(seed, record, self.max_steps, |sim| {
            let sim = match step_ns {
                Some(ns) => sim.step_ns(ns),
                None => sim,
            };
            let sim = match model_name {
                Some(name) => sim.label(name, Vec::<crate::trace::Param>::new()),
                None => sim,
            };
            sim.run(model.clone())
        })
    }

    /// How a failure's report says to replay seed `seed`.
    fn replay_hint(&self, seed: u64) -> String {
        let plain = self.max_steps == crate::DEFAULT_MAX_STEPS && self.step_ns.is_none();
        match (self.strategy, plain) {
            (StrategyKind::Random, true) => format!("sim::testing::replay(model, {seed})"),
            (StrategyKind::Pct(d), true) => format!("sim::testing::replay_pct(model, {seed}, {d})"),
            (_, false) => format!("the same Check's .replay(model, {seed})"),
        }
    }
}

/// `--strategy pct:D`, checked as the CLI checks it.
fn pct(depth: u32) -> StrategyKind {
    StrategyKind::pct(depth).unwrap_or_else(|e| panic!("deadsim: check_pct: pct:{depth}: {e}"))
}

/// Seeds `0..iterations` of `model` under `cfg`, to the first failure.
fn check<F, Fut>(model: F, iterations: u64, cfg: &Check)
where
    F: Fn() -> Fut + Clone + 'static,
    Fut: Future<Output = ()> + 'static,
{
    if let Some(seed) = seed_from_env(std::env::var("DEADSIM_SEED").ok()).unwrap_or_else(|e| panic!("{e}")) {
        replay_with(model, seed, cfg);
        return;
    }
    let under = match cfg.strategy {
        StrategyKind::Random => String::new(),
        StrategyKind::Pct(d) => format!(" (PCT, depth {d})"),
    };
    // The lock order over the seeds run, as `deadsim hunt` prints it: a
    // failure's report says what else the seeds showed (two locks taken in
    // both orders elsewhere, a lock held across a send).
    let mut order = crate::lockorder::LockOrder::default();
    for seed in 0..iterations {
        let run = cfg.run_seed(&model, seed, false);
        order.merge(&run.lock_order);
        if run.outcome.is_failure() {
            panic!(
                "deadsim: seed {seed} of 0..{iterations}{under} failed after {} steps\n\n{}\n{}{}Replay it with its \
                 trace: DEADSIM_SEED={seed} cargo test <this test>, or {}.",
                run.steps,
                run.outcome,
                unfair_note(&run.outcome, &cfg.strategy.to_string()),
                lock_order_section(&order, &format!("seeds 0..={seed}")),
                cfg.replay_hint(seed)
            );
        }
    }
    let allowed = |w: &crate::lockorder::Warning| cfg.lock_order_allowed & (1 << w.kind as u8) != 0;
    if cfg.lock_order_fails && order.warnings().iter().any(|w| !allowed(w)) {
        panic!(
            "deadsim: no seed of 0..{iterations}{under} failed, but the lock order shows a possible deadlock \
             (Check::lock_order_fails)\n\n{}",
            lock_order_section(&order, &format!("seeds 0..{iterations}"))
        );
    }
}

/// For a step limit under PCT, what it may mean (see
/// [`crate::outcome::unfair_limit_note`]), on a line of its own.
fn unfair_note(outcome: &crate::Outcome, strategy: &str) -> String {
    match (outcome, crate::outcome::unfair_limit_note(strategy)) {
        (crate::Outcome::StepLimit { .. }, Some(note)) => format!("{note}\n\n"),
        _ => String::new(),
    }
}

/// The lock-order findings, each report after a blank line, under a heading
/// naming where they come from; nothing when there are none.
fn lock_order_section(order: &crate::lockorder::LockOrder, over: &str) -> String {
    let warnings = order.warnings();
    if warnings.is_empty() {
        return String::new();
    }
    let n = warnings.len();
    let mut out = format!("Lock order ({n} finding{} over {over}):\n", if n == 1 { "" } else { "s" });
    for w in warnings {
        out.push('\n');
        out.push_str(&w.report);
    }
    out.push('\n');
    out
}

/// The seed `DEADSIM_SEED` names, if set. A value that is not a seed is an
/// error, not a reason to run the whole search instead: a typo would
/// otherwise pass a test the user meant to replay.
fn seed_from_env(value: Option<String>) -> Result<Option<u64>, String> {
    match value {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("deadsim: DEADSIM_SEED=`{v}` is not a seed (a whole number, 0 to {})", u64::MAX)),
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
    report_replay(run, seed);
}

/// [`replay`] of a seed of [`check_pct`], under PCT of depth `depth`.
pub fn replay_pct<F, Fut>(model: F, seed: u64, depth: u32)
where
    F: Fn() -> Fut + Clone + 'static,
    Fut: Future<Output = ()> + 'static,
{
    replay_with(model, seed, &Check::pct(depth))
}

fn replay_with<F, Fut>(model: F, seed: u64, cfg: &Check)
where
    F: Fn() -> Fut + Clone + 'static,
    Fut: Future<Output = ()> + 'static,
{
    report_replay(cfg.run_seed(&model, seed, true), seed);
}

/// Prints a replayed run's events to stderr; panics with its report if it failed.
fn report_replay(run: crate::Run, seed: u64) {
    let trace = run.trace.expect("recording was on");
    // As `deadsim replay` lists them (but its `runs` lines).
    let labels = trace.task_labels();
    for e in &trace.events {
        eprintln!("{}", trace.event_line(&labels, e));
    }
    // Where the trace went, or how to get it: the failure message is what a
    // user reads, and the events above may have scrolled far away.
    let written = match std::env::var("DEADSIM_TRACE") {
        Ok(path) => match trace.write_file(std::path::Path::new(&path)) {
            Ok(()) => format!("Its trace is in {path}; `deadsim render {path}` draws it."),
            Err(e) => {
                eprintln!("deadsim: cannot write {path}: {e}");
                format!("Its trace could not be written to {path}: {e}.")
            }
        },
        Err(_) => "Set DEADSIM_TRACE=file.json to write its trace; `deadsim render file.json` draws it.".to_string(),
    };
    if run.outcome.is_failure() {
        panic!(
            "deadsim: seed {seed} failed after {} steps\n\n{}\n{}{}{written}",
            run.steps,
            run.outcome,
            unfair_note(&run.outcome, &trace.meta.strategy),
            lock_order_section(&run.lock_order, &format!("seed {seed}"))
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::Mutex;

    async fn abba(fixed: bool) {
        let (a, b) = (Mutex::new("A"), Mutex::new("B"));
        let (first, second) = if fixed { (a, b) } else { (b, a) };
        crate::spawn("T1", async move {
            let _x = a.lock().await;
            let _y = b.lock().await;
        });
        crate::spawn("T2", async move {
            let _y = first.lock().await;
            let _x = second.lock().await;
        });
    }

    fn panic_message(f: impl FnOnce()) -> Option<String> {
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).err()?;
        Some(err.downcast_ref::<String>().cloned().unwrap_or_default())
    }

    #[test]
    fn check_random_fails_at_the_lowest_failing_seed_and_replay_gives_the_same_report() {
        let lowest =
            (0..1000).find(|&s| Sim::new(s).run(|| abba(false)).outcome.is_failure()).expect("AB/BA deadlocks");
        let msg = panic_message(|| check_random(|| abba(false), 1000)).expect("check_random fails the test");
        assert!(msg.starts_with(&format!("deadsim: seed {lowest} of 0..1000 failed after ")), "{msg}");
        assert!(msg.contains(&format!("DEADSIM_SEED={lowest} cargo test")), "{msg}");
        let replayed = panic_message(|| replay(|| abba(false), lowest)).expect("the seed fails again");
        // The same report: everything between the first line and the lock
        // order (over the seeds run, or the one seed replayed), or the last
        // line, which says where the trace is (replay) or how to replay
        // (check_random).
        let report = |m: &str| {
            let body = m.split_once('\n').map(|(_, r)| r).unwrap_or_default();
            let body = body.split_once("\nLock order (").map_or(body, |(r, _)| r);
            body.rsplit_once('\n').map_or(body, |(r, _)| r).to_string()
        };
        assert!(!report(&replayed).trim().is_empty());
        assert_eq!(report(&msg), report(&replayed), "{msg}\n---\n{replayed}");
        // AB/BA: the circular dependency, over the seeds run and in the seed replayed.
        assert!(msg.contains(&format!("Lock order (1 finding over seeds 0..={lowest}):")), "{msg}");
        assert!(replayed.contains(&format!("Lock order (1 finding over seed {lowest}):")), "{replayed}");
        assert!(msg.contains("WARNING: possible circular locking dependency detected"), "{msg}");
        if std::env::var_os("DEADSIM_TRACE").is_none() {
            assert!(
                replayed
                    .ends_with("Set DEADSIM_TRACE=file.json to write its trace; `deadsim render file.json` draws it."),
                "{replayed}"
            );
        }
        assert_eq!(panic_message(|| check_random(|| abba(true), 1000)), None, "A then B never deadlocks");
    }

    #[test]
    fn check_pct_fails_at_the_lowest_seed_pct_fails_and_replay_pct_gives_the_same_report() {
        let pct = StrategyKind::Pct(2);
        let fails = |s: u64| pct.run_by(s, false, crate::DEFAULT_MAX_STEPS, |sim| sim.run(|| abba(false)));
        let lowest = (0..100).find(|&s| fails(s).outcome.is_failure()).expect("PCT finds AB/BA");
        let msg = panic_message(|| check_pct(|| abba(false), 100, 2)).expect("check_pct fails the test");
        assert!(msg.starts_with(&format!("deadsim: seed {lowest} of 0..100 (PCT, depth 2) failed after ")), "{msg}");
        assert!(msg.contains(&format!("or sim::testing::replay_pct(model, {lowest}, 2).")), "{msg}");
        let replayed = panic_message(|| replay_pct(|| abba(false), lowest, 2)).expect("the seed fails again");
        let cycle = |m: &str| m.lines().filter(|l| l.starts_with('"')).map(str::to_string).collect::<Vec<_>>();
        assert!(!cycle(&msg).is_empty());
        assert_eq!(cycle(&msg), cycle(&replayed), "{msg}\n---\n{replayed}");
        assert_eq!(panic_message(|| check_pct(|| abba(true), 300, 3)), None, "A then B never deadlocks");
        let bad = panic_message(|| check_pct(|| abba(true), 1, 0)).expect("depth 0 is refused");
        assert!(bad.starts_with("deadsim: check_pct: "), "{bad}");
    }

    #[test]
    fn a_check_with_settings_runs_them_and_replays_under_them() {
        // A busy loop: the step limit set is the one hit.
        let busy = || async {
            loop {
                crate::yield_now().await;
            }
        };
        let msg = panic_message(|| Check::random().max_steps(50).run(busy, 10)).expect("a livelock fails");
        assert!(msg.starts_with("deadsim: seed 0 of 0..10 failed after 50 steps"), "{msg}");
        assert!(msg.contains("step limit: still running after 50 steps"), "{msg}");
        assert!(msg.ends_with("or the same Check's .replay(model, 0)."), "{msg}");
        // Random search is fair in the long run: no note of PCT's unfairness.
        assert!(!msg.contains("highest-priority"), "{msg}");
        let replayed = panic_message(|| Check::pct(2).max_steps(50).replay(busy, 0)).expect("and again");
        assert!(replayed.contains("step limit: still running after 50 steps"), "{replayed}");
        // Under PCT a step limit may be its unfairness: the report says so.
        let under_pct = panic_message(|| Check::pct(2).max_steps(50).run(busy, 10)).expect("a livelock fails");
        for msg in [&replayed, &under_pct] {
            assert!(msg.contains("PCT runs the highest-priority task whenever it can"), "{msg}");
        }
        // The virtual time of a step: at 0 ns, steps move no clock.
        let clock = || async {
            crate::yield_now().await;
            crate::check(crate::time::now() == 0, "the clock stood still");
        };
        assert_eq!(panic_message(|| Check::pct(2).step_ns(0).run(clock, 20)), None);
        let moved = panic_message(|| Check::random().run(clock, 1)).expect("by default a step takes time");
        assert!(moved.contains("invariant violated in \"main\": the clock stood still"), "{moved}");
        assert!(moved.ends_with("or sim::testing::replay(model, 0)."), "{moved}");
    }

    #[test]
    fn a_lock_order_that_could_deadlock_fails_the_check_only_when_asked() {
        // T2 starts after T1 is done: no run deadlocks.
        let sequential = || async {
            let (a, b) = (Mutex::new("A"), Mutex::new("B"));
            crate::spawn("T1", async move {
                let _x = a.lock().await;
                let _y = b.lock().await;
            })
            .join()
            .await;
            crate::spawn("T2", async move {
                let _y = b.lock().await;
                let _x = a.lock().await;
            })
            .join()
            .await;
        };
        assert_eq!(panic_message(|| Check::random().run(sequential, 10)), None);
        let msg = panic_message(|| Check::pct(2).lock_order_fails().run(sequential, 10)).expect("the order fails it");
        assert!(
            msg.starts_with(
                "deadsim: no seed of 0..10 (PCT, depth 2) failed, but the lock order shows a possible deadlock"
            ),
            "{msg}"
        );
        assert!(msg.contains("Lock order (1 finding over seeds 0..10):") && msg.contains("circular locking"), "{msg}");
        // A model that takes its locks in one order passes.
        assert_eq!(panic_message(|| Check::random().lock_order_fails().run(|| abba(true), 10)), None);
        // An INFO finding fails it too: a lock held across a send is a deadlock if the receiver
        // needs the lock, which the lock order cannot tell (here it does not).
        let held_across_send = || async {
            let mu = crate::sync::Mutex::new("mu");
            let ch: crate::sync::Chan<u32> = crate::sync::Chan::new("ch", 0);
            let rx = ch.clone();
            let h = crate::spawn("consumer", async move {
                rx.recv().await;
            });
            let g = mu.lock().await;
            ch.send(1).await;
            g.unlock().await;
            h.join().await;
        };
        let mut order = crate::lockorder::LockOrder::default();
        for seed in 0..10 {
            order.merge(&crate::Sim::new(seed).run(held_across_send).lock_order);
        }
        let kinds: Vec<_> = order.warnings().iter().map(|w| w.kind).collect();
        assert_eq!(kinds, [crate::lockorder::WarningKind::HeldAcrossBlocking]);
        let msg =
            panic_message(|| Check::random().lock_order_fails().run(held_across_send, 10)).expect("INFO fails it");
        assert!(msg.contains("INFO: lock held across a blocking channel send"), "{msg}");
        // Unless the model allows that kind; another kind still fails.
        let allows = |k| Check::random().lock_order_fails().lock_order_allows(k);
        assert_eq!(panic_message(|| allows(WarningKind::HeldAcrossBlocking).run(held_across_send, 10)), None);
        assert!(panic_message(|| allows(WarningKind::CircularDependency).run(held_across_send, 10)).is_some());
        assert!(panic_message(|| allows(WarningKind::HeldAcrossBlocking).run(sequential, 10)).is_some());
    }

    #[test]
    fn deadsim_seed_must_be_a_seed() {
        assert_eq!(seed_from_env(None), Ok(None));
        assert_eq!(seed_from_env(Some(" 42 ".into())), Ok(Some(42)));
        for bad in ["", "x", "-1", "1.5", "18446744073709551616"] {
            let e = seed_from_env(Some(bad.into())).unwrap_err();
            assert!(e.contains(&format!("DEADSIM_SEED=`{bad}` is not a seed")), "{e}");
        }
    }
}
