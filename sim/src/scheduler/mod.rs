//! Scheduling strategies: who runs next, and which way a data choice goes.
//!
//! Every choice an execution makes goes through one [`Strategy`]: the task to
//! run at each step, the ready case a `select` takes, the waiter a `notify`
//! wakes. A strategy sees the enabled tasks as a [`TaskSet`] in ascending id
//! order, so the same choices give the same run on any machine.
//!
//! ```
//! use sim::scheduler::{RandomStrategy, Strategy};
//! use sim::TaskSet;
//! let mut s = RandomStrategy::new(3);
//! let mut enabled = TaskSet::new();
//! enabled.insert(0);
//! enabled.insert(2);
//! let t = s.pick_task(&enabled, None, 1);
//! assert!(t == 0 || t == 2);
//! ```

mod dfs;
mod footprint;
mod pct;
mod random;
mod replay;
mod roots;
mod shrink;
pub(crate) mod spin;
mod touches;
mod vclock;

pub use dfs::{explore, CrossCheck, ExploreConfig, ExploreResult, CROSS_CHECK_SEEDS, DEFAULT_MAX_EXECUTIONS};
pub use footprint::{Footprint, ResSet};
pub use pct::PctStrategy;
pub use random::RandomStrategy;
pub use replay::{fingerprint, ReplayStrategy, Schedule};
pub use shrink::{shrink, shrink_until, Shrunk};

use crate::models::Configured;
use crate::{Run, Sim};

/// The per-seed strategies a hunt can use (`--strategy random|pct[:d]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    Random,
    /// PCT of depth `d`.
    Pct(u32),
}

impl std::str::FromStr for StrategyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<StrategyKind, String> {
        // Spaces around it are no part of it, as around a seed range; nor
        // is case (PCT:2), as in chart and format names.
        let s = s.trim();
        match s.to_ascii_lowercase().as_str() {
            "random" => Ok(StrategyKind::Random),
            "pct" => Ok(StrategyKind::Pct(3)),
            lower => match lower.strip_prefix("pct:").map(|d| d.parse::<u32>()) {
                Some(Ok(d)) if (1..=10).contains(&d) => Ok(StrategyKind::Pct(d)),
                Some(_) => Err(format!("`{s}`: the PCT depth is a whole number from 1 to 10 (pct:3)")),
                None => Err(format!(
                    "`{s}` is not a strategy (random, pct, pct:D; and dfs on `hunt`, the exhaustive search of `deadsim explore`)"
                )),
            },
        }
    }
}

impl std::fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StrategyKind::Random => f.write_str("random"),
            StrategyKind::Pct(d) => write!(f, "pct:{d}"),
        }
    }
}

impl StrategyKind {
    /// Runs `seed` of `model` under this strategy. PCT first runs the seed
    /// with depth 1 (its priorities, no change point) to learn the step
    /// bound `k`, then with the full depth; a failure of the first run is
    /// the result.
    pub fn run(&self, model: &Configured, seed: u64, record: bool, max_steps: u64) -> Run {
        self.run_by(seed, record, max_steps, |sim| model.run_with(sim))
    }

    /// [`StrategyKind::run`] of any program: `run` runs it on the [`Sim`]
    /// it is given (`|sim| sim.run(my_model)`), once for random, twice for
    /// PCT.
    ///
    /// ```
    /// use sim::scheduler::StrategyKind;
    /// let run = StrategyKind::Pct(2).run_by(7, false, 10_000, |sim| sim.run(|| async {
    ///     sim::spawn("T", async { sim::yield_now().await });
    /// }));
    /// assert_eq!(run.outcome, sim::Outcome::Completed);
    /// ```
    pub fn run_by(&self, seed: u64, record: bool, max_steps: u64, run: impl Fn(Sim) -> Run) -> Run {
        match *self {
            StrategyKind::Random => run(Sim::new(seed).record(record).max_steps(max_steps)),
            StrategyKind::Pct(d) => {
                let stream = PctStrategy::stream(seed);
                let probe = run(Sim::new(seed)
                    .record(record && d == 1)
                    .max_steps(max_steps)
                    .strategy(Box::new(PctStrategy::with_stream(stream.clone(), 1, 0))));
                if d == 1 || probe.outcome.is_failure() {
                    let mut done = if record && probe.trace.is_none() {
                        run(Sim::new(seed)
                            .record(true)
                            .max_steps(max_steps)
                            .strategy(Box::new(PctStrategy::new(seed, 1, 0))))
                    } else {
                        probe
                    };
                    // The run of `--strategy pct:D --seed N`, as the report
                    // names it (it wrote pct:1, the probe's depth).
                    if let Some(t) = done.trace.as_mut() {
                        t.meta.strategy = self.to_string();
                    }
                    return done;
                }
                let k = probe.steps;
                run(Sim::new(seed)
                    .record(record)
                    .max_steps(max_steps)
                    .strategy(Box::new(PctStrategy::with_stream(stream, d, k))))
            }
        }
    }
}

/// Why a strategy stops a run early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Halt {
    /// A replayed schedule no longer fits the model.
    Diverged(String),
    /// An exhaustive search found this run redundant (sleep-set blocked).
    Pruned,
}

use crate::rt::{TaskId, TaskSet};

/// Decides every choice of one execution.
///
/// Random search draws from a seed; PCT, the exhaustive search and replay
/// of a schedule string implement the same calls, each in its own file.
pub trait Strategy {
    /// The task to run at `step` (1-based), among `enabled` (never empty).
    /// `last` is the task that ran the previous step, if it is still enabled.
    fn pick_task(&mut self, enabled: &TaskSet, last: Option<TaskId>, step: u64) -> TaskId;

    /// One of `n` alternatives (`n >= 1`) of a data choice: a `select` case
    /// among the ready ones, the waiter a `notify` wakes.
    fn pick_index(&mut self, n: usize) -> usize;

    /// A short name for traces and reports (`random`).
    fn name(&self) -> String;

    /// Task `task` polled shared state and found `what`: a `select` that
    /// took its default (`what` stands for its cases, channels and
    /// directions), an atomic load, `fetch_add(0)` or `fetch_sub` (the atomic,
    /// the operation and the value found), or a `yield_now` after a read
    /// with no step such as `len(ch)` (the resource and the value). The same
    /// found a third time with no other task run since (but spinners) is a
    /// spin, which PCT makes yield (see `scheduler/spin.rs`).
    fn polled(&mut self, _task: TaskId, _what: u64) {}

    /// True if the engine should report each step's [`Footprint`] through
    /// [`Strategy::step_done`] (partial-order reduction needs it).
    fn wants_footprints(&self) -> bool {
        false
    }

    /// Called after every step with the task that ran and what it touched.
    fn step_done(&mut self, _task: TaskId, _footprint: &Footprint) {}

    /// Called before every pick (when footprints are wanted) with every
    /// task's known next access: (task, resource).
    fn pending(&mut self, _accesses: &[(TaskId, u32)]) {}

    /// True if the strategy may ever stop a run ([`Strategy::halt`]); the
    /// engine then asks after every pick. Asked once per run.
    fn may_halt(&self) -> bool {
        false
    }

    /// Asked after every pick when [`Strategy::may_halt`]: `Some` stops the
    /// run (outcome `Stopped`).
    fn halt(&mut self) -> Option<Halt> {
        None
    }
}
