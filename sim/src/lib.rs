//! # sim: the deadsim engine
//!
//! A deterministic, single-threaded discrete-event simulator for concurrent
//! code written as async Rust. Virtual threads are futures; an operation on
//! a primitive ([`sync`]: a lock, a send or receive, a read or write, a
//! `wait()`; a `sleep`, a spawn's join) is a scheduling point at which a
//! seeded [`scheduler::Strategy`] picks the next task (a monitor's `notify`,
//! [`choose`] and read-only looks such as `len` are not). Making a primitive, and every operation of one but plain reads
//! of its own state (an id, a count), panics outside a task that
//! [`Sim::run`] drives. The engine knows what every
//! blocked task waits for, so it finds wait-for cycles through locks,
//! monitors, channels and pipes the moment they form, and reports them like a
//! thread dump.
//!
//! ```
//! use sim::sync::Mutex;
//!
//! // Two threads take two mutexes in opposite orders (AB/BA).
//! let model = || async {
//!     let (a, b) = (Mutex::new("A"), Mutex::new("B"));
//!     sim::spawn("T1", async move {
//!         let ga = a.lock().await;
//!         let gb = b.lock().await;
//!         gb.unlock().await;
//!         ga.unlock().await;
//!     });
//!     sim::spawn("T2", async move {
//!         let gb = b.lock().await;
//!         let ga = a.lock().await;
//!         ga.unlock().await;
//!         gb.unlock().await;
//!     });
//! };
//! let found = (0..100).map(|seed| sim::Sim::new(seed).run(model)).find(|r| r.outcome.is_failure());
//! let run = found.expect("some seed deadlocks");
//! let d = run.outcome.deadlock().unwrap();
//! assert_eq!(d.cycle.len(), 2);
//! ```
//!
//! Where to look:
//! - [`Sim`] runs a model for one seed; [`Run`] and [`Outcome`] say how it
//!   ended, and [`Deadlock`] is the report.
//! - [`sync`], [`time`], [`context`], [`spawn`] and [`spawn_background`]:
//!   what a model is written with, after Go's and Java's primitives;
//!   [`frame_at`] and [`at`] give it the real code's call sites.
//! - [`testing::check_random`] and [`testing::check_pct`]: a model inside a
//!   `#[test]`.
//! - [`hunt`]: many seeds on many cores; [`scheduler`]: PCT, the exhaustive
//!   search ([`scheduler::explore`]), schedule strings and
//!   [`scheduler::shrink`].
//! - [`models`]: the built-in models, and [`models::Configured`], a model with
//!   its parameters, for everything the CLI does to one.
//! - [`trace`]: the JSON trace the visualizer draws; [`lockorder`]: lock-order
//!   warnings across runs.

pub mod context;
pub mod frame;
pub mod fsutil;
pub mod hunt;
pub mod lockorder;
pub mod models;
pub mod names;
pub mod outcome;
pub mod rng;
pub(crate) mod rt;
pub mod scheduler;
pub mod sync;
pub mod task;
pub mod testing;
pub mod time;
pub mod trace;
pub(crate) mod waitfor;

pub use frame::{at, frame, frame_at, Frame, FrameGuard};
pub use fsutil::write_atomic;
pub use outcome::{BlockedTask, Deadlock, Outcome, RunningTask};
/// The iterator of [`TaskSet::iter`].
pub use rt::taskset::Iter as TaskSetIter;
pub use rt::taskset::{FrozenTaskSet, TaskId, TaskSet};
pub use rt::{ResId, ResKind};
pub use task::{choose, spawn, spawn_background, yield_now, JoinHandle};

use std::future::Future;

use rt::execution::{Execution, RunConfig};
use scheduler::Strategy;
use trace::{EventKind, Meta, Param, Trace};

/// Steps after which a run is stopped as a `step-limit` outcome, by default.
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;
/// Virtual nanoseconds one step takes, by default.
pub const DEFAULT_STEP_NS: u64 = 100;

/// A model invariant: if `cond` is false, the run ends with an
/// `invariant` outcome naming the task, the message and its stack.
///
/// ```
/// let run = sim::Sim::new(0).run(|| async { sim::check(1 + 1 == 3, "arithmetic") });
/// assert_eq!(run.outcome.verdict(), "invariant");
/// ```
pub fn check(cond: bool, msg: impl std::fmt::Display) {
    if cond {
        return;
    }
    rt::with(|s| {
        // A second invariant broken in the step that broke the first: the
        // run ends with the first, and its trace has the one check event.
        if s.failure.is_some() {
            return;
        }
        let t = s.current;
        s.record(t, EventKind::Check, None, None, None, None, None);
        let frames = rt::execution::stack_of(s, t);
        s.fail(Outcome::Invariant { task: s.tasks[t as usize].name.to_string(), message: msg.to_string(), frames });
    })
}

/// Records that a model's state value changed (for example a
/// `BufferManager`'s `numRequiredBuffers`), as a `value` event on the current
/// task, attached to `resource` (a lock's or channel's id) when given. It
/// changes nothing in the run; traces and charts show it.
///
/// ```
/// let run = sim::Sim::new(0).record(true).run(|| async {
///     let bq = sim::sync::Monitor::new("bufferQueue");
///     sim::note(Some(bq.id()), "numRequiredBuffers", 5);
/// });
/// let trace = run.trace.unwrap();
/// let e = trace.events.iter().find(|e| e.kind == sim::trace::EventKind::Value).unwrap();
/// assert_eq!((e.op.as_deref(), e.amount), (Some("numRequiredBuffers"), Some(5)));
/// ```
pub fn note(resource: Option<ResId>, name: &'static str, value: u64) {
    rt::with(|s| {
        let t = s.current;
        s.record(t, EventKind::Value, resource, Some(value), None, None, Some(name));
    })
}

/// Declares that the current step reads (or, with `write`, changes) state
/// that `resource` guards, outside any operation on it: a racy read in the
/// model, such as a credit check without the lock. It changes nothing in the
/// run; an exhaustive search needs it to know the step conflicts with the
/// resource's operations.
pub fn access(resource: ResId, write: bool) {
    // A primitive's state read after the run (a test's look at a counter)
    // is in no step.
    if !rt::is_live() {
        return;
    }
    rt::with(|s| {
        if let Some(fp) = s.footprint.as_mut() {
            let set = if write { &mut fp.resources } else { &mut fp.reads };
            set.insert(resource);
        }
    })
}

/// Declares that the current step read `value` from state that `resource`
/// guards: [`access`] for a read, which also tells PCT what was found. The
/// task's next [`yield_now`] (Go's `runtime.Gosched()`) reports the last
/// such read as a poll, so a loop that waits for the state to change and
/// yields (`for { mu.Lock(); d := done; mu.Unlock(); if d { break };
/// runtime.Gosched() }`) spins when it finds the same value a third time
/// with no other task run since (but spinners), and PCT then lets the
/// others run, as Go's fair scheduler would; without it, PCT may run the
/// loop alone to the step limit. A read with no yield after it (a check in straight-line
/// code, in a work loop) is no poll. The primitives' own reads with no step
/// (`Chan::len`, `Pipe::buffered`, `AtomicU64::peek`, `Context::err`,
/// `WaitGroup::count`, `Once::is_done`) call it themselves.
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// let run = sim::testing::Check::pct(1).max_steps(2_000).run_seed(
///     &|| async {
///         let (mu, done) = (sim::sync::Mutex::new("mu"), Rc::new(Cell::new(false)));
///         let (m, d) = (mu, done.clone());
///         let w = sim::spawn("worker", async move {
///             let g = m.lock().await;
///             d.set(true);
///             g.unlock().await;
///         });
///         loop {
///             let g = mu.lock().await;
///             let d = done.get();
///             sim::observe(mu.id(), u64::from(d));
///             g.unlock().await;
///             if d {
///                 break;
///             }
///             sim::yield_now().await;
///         }
///         w.join().await;
///     },
///     1,
///     false,
/// );
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
pub fn observe(resource: ResId, value: u64) {
    if !rt::is_live() {
        return;
    }
    rt::with(|s| {
        if let Some(fp) = s.footprint.as_mut() {
            fp.reads.insert(resource);
        }
        let what = scheduler::spin::poll_key(resource, scheduler::spin::PollOp::Observe, value);
        let t = s.current;
        s.tasks[t as usize].observed = Some(what);
    })
}

/// One execution's settings: seed, strategy, recording, limits, labels.
///
/// ```
/// use sim::sync::Mutex;
/// let run = sim::Sim::new(7).record(true).max_steps(10_000).run(|| async {
///     let m = Mutex::new("m");
///     sim::spawn("worker", async move {
///         let g = m.lock().await;
///         g.unlock().await;
///     });
/// });
/// assert_eq!((run.seed, &run.outcome), (7, &sim::Outcome::Completed));
/// // Recording on: the trace, whose schedule string replays this run.
/// let trace = run.trace.expect("recorded");
/// assert!(trace.meta.replay.starts_with("ds1:custom:"));
/// ```
pub struct Sim {
    cfg: RunConfig,
    strategy: Option<Box<dyn Strategy>>,
    model: std::borrow::Cow<'static, str>,
    /// Shared, so labelling a run with its parameters costs no allocation;
    /// `None` until labelled.
    params: Option<std::sync::Arc<[Param]>>,
}

/// The result of one execution.
#[derive(Debug)]
pub struct Run {
    /// The seed the run was made with ([`Sim::new`]).
    pub seed: u64,
    /// How it ended: completed, or the failure with its report.
    pub outcome: Outcome,
    /// Scheduling points taken, the last one included.
    pub steps: u64,
    /// Virtual time at the end, in nanoseconds.
    pub time_ns: u64,
    /// The trace, when recording was on (boxed: a run is moved around a lot).
    pub trace: Option<Box<Trace>>,
    /// Lock-order facts of the run (see [`lockorder`]).
    pub lock_order: lockorder::LockOrder,
}

impl Run {
    /// The schedule string that replays this run (`ds1:MODEL:FINGERPRINT:...`),
    /// when recording was on; `None` otherwise.
    ///
    /// ```
    /// let m = sim::models::find("abba").unwrap().configure(&[]).unwrap();
    /// let run = m.run(0, true);
    /// assert_eq!(run.schedule(), Some("ds1:abba:a5167e82:1.2x2.1"));
    /// assert_eq!(m.run(0, false).schedule(), None);
    /// ```
    pub fn schedule(&self) -> Option<&str> {
        self.trace.as_ref().map(|t| t.meta.replay.as_str())
    }
}

impl Sim {
    /// A run with `seed`, the random strategy, recording off.
    pub fn new(seed: u64) -> Sim {
        Sim {
            cfg: RunConfig {
                seed,
                record: false,
                events: true,
                max_steps: DEFAULT_MAX_STEPS,
                step_ns: DEFAULT_STEP_NS,
            },
            strategy: None,
            model: std::borrow::Cow::Borrowed("custom"),
            params: None,
        }
    }

    /// Records a trace (off by default; switching it changes no choice).
    pub fn record(mut self, on: bool) -> Sim {
        self.cfg.record = on;
        self
    }

    /// With [`Sim::record`], whether the trace keeps its events (on by
    /// default). Off, it has the run's schedule string, tasks and
    /// resources, and no events: a few bytes a step where events take
    /// some 260, for a run recorded only to replay it (a hunt's failing
    /// seed stopped at a step limit of millions). Changes no choice.
    ///
    /// ```
    /// let run = sim::Sim::new(0).record(true).events(false).run(|| async {
    ///     sim::spawn("T", async { sim::yield_now().await });
    /// });
    /// let trace = run.trace.unwrap();
    /// assert!(trace.events.is_empty() && trace.meta.replay.starts_with("ds1:custom:"));
    /// ```
    pub fn events(mut self, on: bool) -> Sim {
        self.cfg.events = on;
        self
    }

    /// Stops the run after `n` steps (outcome `step-limit`).
    pub fn max_steps(mut self, n: u64) -> Sim {
        self.cfg.max_steps = n;
        self
    }

    /// Virtual nanoseconds per step.
    pub fn step_ns(mut self, ns: u64) -> Sim {
        self.cfg.step_ns = ns;
        self
    }

    /// Uses `strategy` instead of random scheduling from the seed.
    pub fn strategy(mut self, strategy: Box<dyn Strategy>) -> Sim {
        self.strategy = Some(strategy);
        self
    }

    /// True if the run records a trace.
    pub(crate) fn records(&self) -> bool {
        self.cfg.record
    }

    /// Names the model and its parameters in the trace.
    pub fn label(
        mut self,
        model: impl Into<std::borrow::Cow<'static, str>>,
        params: impl Into<std::sync::Arc<[Param]>>,
    ) -> Sim {
        self.model = model.into();
        self.params = Some(params.into());
        self
    }

    /// Runs `main` as task 0 until every foreground task returned, a
    /// deadlock forms, an invariant fails, a task panics or the step limit.
    ///
    /// A task's panic is an outcome, caught with its message and `file:line`
    /// by a panic hook the first run installs, which passes every other
    /// panic on to the hook that was there. Set a hook of your own before
    /// the first run: one set later replaces it, and each task's panic then
    /// goes through yours and its outcome has no `file:line`.
    pub fn run<F, Fut>(self, main: F) -> Run
    where
        F: FnOnce() -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        // Named only when a trace needs it: a hunt's runs allocate nothing for it.
        let named = self.cfg.record.then(|| self.strategy.as_ref().map_or_else(|| "random".to_string(), |s| s.name()));
        let exec = Execution::new(&self.cfg, self.strategy);
        let raw = exec.run(async move { main().await });
        let trace = raw.recorded.map(|recorded| {
            let rt::execution::Recorded { recorder: rec, tasks, resources } = *recorded;
            // One line, as the format says: a panic's message (an
            // `assert_eq!`'s left and right) may have several.
            let outcome_line = one_line(&raw.outcome.summary());
            Trace {
                format: trace::FORMAT.to_string(),
                version: trace::VERSION,
                meta: Meta {
                    model: self.model.to_string(),
                    params: self.params.as_deref().unwrap_or_default().to_vec(),
                    seed: self.cfg.seed,
                    strategy: named.expect("recorded runs name their strategy"),
                    verdict: raw.outcome.verdict().to_string(),
                    message: outcome_line,
                    steps: raw.steps,
                    time_ns: raw.time,
                    deadsim: env!("CARGO_PKG_VERSION").to_string(),
                    replay: scheduler::Schedule {
                        model: self.model.to_string(),
                        fingerprint: scheduler::fingerprint(&self.model, self.params.as_deref().unwrap_or_default()),
                        choices: rec.choices,
                    }
                    .encode(),
                },
                tasks,
                resources,
                frames: rec.frames,
                events: rec.events,
                schedule: rec.schedule,
                deadlock: raw.outcome.deadlock().cloned(),
            }
        });
        Run {
            seed: self.cfg.seed,
            outcome: raw.outcome,
            steps: raw.steps,
            time_ns: raw.time,
            trace: trace.map(Box::new),
            lock_order: raw.lock_order,
        }
    }
}

/// `text` on one line: its lines trimmed and joined with "; ".
fn one_line(text: &str) -> String {
    if !text.contains(['\n', '\r']) {
        return text.to_string();
    }
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}
