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

mod random;

pub use random::RandomStrategy;

use crate::rt::{TaskId, TaskSet};

/// Decides every choice of one execution.
///
/// Random search draws from a seed; later strategies (PCT, exhaustive
/// search, replay of a schedule string) implement the same two calls.
pub trait Strategy {
    /// The task to run at `step` (1-based), among `enabled` (never empty).
    /// `last` is the task that ran the previous step, if it is still enabled.
    fn pick_task(&mut self, enabled: &TaskSet, last: Option<TaskId>, step: u64) -> TaskId;

    /// One of `n` alternatives (`n >= 1`) of a data choice: a `select` case
    /// among the ready ones, the waiter a `notify` wakes.
    fn pick_index(&mut self, n: usize) -> usize;

    /// A short name for traces and reports (`random`).
    fn name(&self) -> String;
}
