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
//!
//! Each strategy is a file here: `random.rs`, `pct.rs`, `dfs.rs` (the
//! exhaustive search, which drives executions itself), `replay.rs`
//! (schedule strings) and `shrink.rs` (a search over replays). A new
//! per-seed strategy implements [`Strategy`] in its own file, and to be
//! chosen by `--strategy` it needs a [`StrategyKind`] variant (its name in
//! `FromStr` and `Display`, and how a seed runs under it in
//! [`StrategyKind::run_by`]); the compiler then points at every `match`
//! that must learn it (the CLI's help text and `sim::testing`'s replay
//! hint among them). The trace records the strategy by its `Display`
//! name, which `deadsim render` reads back to check a trace by running it
//! again.

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
    /// PCT of depth `d`, 1 to 10 ([`PCT_DEPTHS`]; build one with
    /// [`StrategyKind::pct`], which checks `d`: running one of another
    /// depth panics).
    ///
    /// ```should_panic
    /// // PCT depth 0: expected 1 to 10
    /// sim::scheduler::StrategyKind::Pct(0).run_by(0, false, 100, |sim| sim.run(|| async {}));
    /// ```
    Pct(u32),
}

/// The PCT depths `--strategy pct:D` takes.
pub const PCT_DEPTHS: std::ops::RangeInclusive<u32> = 1..=10;
/// The depth of `--strategy pct`.
pub const DEFAULT_PCT_DEPTH: u32 = 3;

impl std::str::FromStr for StrategyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<StrategyKind, String> {
        // Spaces around it are no part of it, as around a seed range; nor
        // is case (PCT:2), as in chart and format names.
        let s = s.trim();
        match s.to_ascii_lowercase().as_str() {
            "random" => Ok(StrategyKind::Random),
            "pct" => Ok(StrategyKind::Pct(DEFAULT_PCT_DEPTH)),
            lower => match lower.strip_prefix("pct:").map(|d| d.parse::<u32>()) {
                Some(Ok(d)) => StrategyKind::pct(d).map_err(|e| format!("`{s}`: {e}")),
                Some(Err(_)) => Err(format!("`{s}`: {}", pct_depth_expected())),
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

/// What a PCT depth must be, as errors say it.
fn pct_depth_expected() -> String {
    format!(
        "the PCT depth is a whole number from {} to {} (pct:{DEFAULT_PCT_DEPTH})",
        PCT_DEPTHS.start(),
        PCT_DEPTHS.end()
    )
}

impl StrategyKind {
    /// PCT of depth `d`, one of [`PCT_DEPTHS`].
    ///
    /// ```
    /// use sim::scheduler::StrategyKind;
    /// assert_eq!(StrategyKind::pct(2), Ok(StrategyKind::Pct(2)));
    /// assert!(StrategyKind::pct(0).is_err());
    /// ```
    pub fn pct(d: u32) -> Result<StrategyKind, String> {
        match PCT_DEPTHS.contains(&d) {
            true => Ok(StrategyKind::Pct(d)),
            false => Err(pct_depth_expected()),
        }
    }

    /// Runs `seed` of `model` under this strategy. PCT first runs the seed
    /// with depth 1 (its priorities, no change point) to learn the step
    /// bound `k`, then with the full depth; a failure of the first run is
    /// the result.
    pub fn run(&self, model: &Configured, seed: u64, record: bool, max_steps: u64) -> Run {
        self.run_by(seed, record, max_steps, |sim| model.run_with(sim))
    }

    /// [`StrategyKind::run`], recorded for its schedule string alone (a
    /// trace without events: see [`Sim::events`]).
    pub fn run_for_schedule(&self, model: &Configured, seed: u64, max_steps: u64) -> Run {
        self.run_by(seed, true, max_steps, |sim| model.run_with(sim.events(false)))
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
            StrategyKind::Pct(d) => pct::run_seed(d, seed, record, max_steps, run),
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

    /// Called before every pick (when footprints are wanted) with the known
    /// next accesses, (task, resource), that may have changed since the
    /// last call: the first call of a run has every task's; later ones
    /// leave out the pairs whose task has not run and whose resource no
    /// step has touched since (the answer to those stands).
    fn pending(&mut self, _accesses: &[(TaskId, u32)]) {}

    /// Debug builds, after [`Strategy::pending`]: every task's known next
    /// access, for the strategy to check that those it was not told would
    /// have changed nothing.
    fn check_pending(&mut self, _all: &[(TaskId, u32)]) {}

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
