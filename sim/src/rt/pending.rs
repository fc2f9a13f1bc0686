//! What changed since the last report of known next accesses.
//!
//! An exploration with partial-order reduction is told, before every pick,
//! each task's known next access (the lock it is about to take, what it
//! waits on; [`State::pending_accesses`](super::State::pending_accesses)),
//! and checks each pair (task, resource) for a race with the last step that
//! touched the resource. Telling it every pair at every step cost half of
//! an exploration of ttrpc (thousands of callers queued on one lock,
//! checked again at each step). The check of a pair gives what it gave
//! last time unless the task ran since (its clock moved), the resource was
//! touched since (its last conflicting step moved), or the pair is new;
//! and the search's answer to a pair it was told before (a branch to try)
//! is there already. So after the first report of a run, only the pairs of
//! a task that ran or of a resource that was touched are told again. A new
//! pair comes only from one of those: a task's next access changes when it
//! runs, or when a step on that resource blocks or wakes it. Debug builds
//! check the whole at every report: the strategy is shown every pair and
//! asserts it would do nothing with those it was not told
//! (`Strategy::check_pending`).

use super::{ResId, TaskId};
use crate::scheduler::Footprint;

/// Marks of the tasks that ran and the resources touched since the last
/// report. A mark is the number of the next report, so that a report
/// clears every mark by counting on, not by a walk.
#[derive(Default)]
pub(crate) struct Changes {
    /// The number of the next report; 0 until a run's first report, which
    /// tells every pair.
    next: u32,
    tasks: Vec<u32>,
    resources: Vec<u32>,
}

impl Changes {
    /// A new run: its first report tells every pair.
    pub fn reset(&mut self) {
        self.next = 0;
        self.tasks.clear();
        self.resources.clear();
    }

    /// Notes the step task `t` just took and what it touched.
    pub fn step(&mut self, t: TaskId, footprint: &Footprint) {
        if self.next == 0 {
            return;
        }
        mark(&mut self.tasks, t, self.next);
        // A task's pseudo-resource (`Footprint::task_resource`) is no one's
        // next access, and far past any real id: left out.
        for r in footprint.resources.iter().chain(footprint.reads.iter()) {
            if r < u32::MAX / 2 {
                mark(&mut self.resources, r, self.next);
            }
        }
    }

    /// Whether this report tells the search the pair (`t`, `r`).
    #[inline]
    pub fn changed(&self, t: TaskId, r: ResId) -> bool {
        let n = self.next;
        let marked = |v: &[u32], i: u32| v.get(i as usize) == Some(&n);
        n == 0 || marked(&self.tasks, t) || marked(&self.resources, r)
    }

    /// Counts on to the next report.
    pub fn reported(&mut self) {
        // After u32::MAX reports in one run the marks would be read again:
        // start over with a report of every pair.
        self.next = self.next.checked_add(1).unwrap_or(0);
        if self.next == 0 {
            self.tasks.clear();
            self.resources.clear();
        }
    }
}

fn mark(v: &mut Vec<u32>, i: u32, n: u32) {
    let i = i as usize;
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] = n;
}
