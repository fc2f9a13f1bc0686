//! The last steps that touched each resource, with their vector clocks:
//! what the race check of partial-order reduction looks up at every step.
//!
//! A race check asks, for a task `t` and a resource `r`, for the latest step
//! of another task that touched `r` (when `t`'s access changes `r`), or that
//! changed it (when `t` only looks). The latest step and the latest one of a
//! task other than that step's answer it for every `t`, so two of each are
//! kept per resource, with the clocks a new step joins. Before, every step
//! kept its clock and every resource the list of its steps, searched
//! backwards: memory grew as steps x tasks, and with 256 ttrpc callers the
//! searches took most of an execution's time.

use super::vclock::{ClockId, ClockPool};
use crate::rt::TaskId;

/// One step that touched a resource.
#[derive(Clone, Copy, Debug)]
pub(super) struct Touch {
    /// The step's index in its execution.
    pub step: usize,
    pub task: TaskId,
    /// The clock after the step (shared with its task and its other
    /// resources), held once by each place that keeps this touch.
    pub clock: ClockId,
}

/// The latest touch, and the latest of a task other than its.
#[derive(Clone, Debug, Default)]
struct Latest {
    last: Option<Touch>,
    other: Option<Touch>,
}

impl Latest {
    /// Keeps `t`, holding its clock; a touch pushed out lets its clock go.
    fn note(&mut self, t: Touch, pool: &mut ClockPool) {
        pool.hold(t.clock);
        let gone = if self.last.as_ref().is_some_and(|l| l.task != t.task) {
            std::mem::replace(&mut self.other, self.last.take())
        } else {
            self.last.take()
        };
        if let Some(g) = gone {
            pool.release(g.clock);
        }
        self.last = Some(t);
    }

    /// The latest touch of a task other than `t`.
    fn not_by(&self, t: TaskId) -> Option<&Touch> {
        match &self.last {
            Some(l) if l.task == t => self.other.as_ref(),
            l => l.as_ref(),
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Entry {
    /// Every touch: the steps that changed the resource and those that only looked.
    any: Latest,
    /// The steps that changed it.
    changed: Latest,
}

/// The index of one execution (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct Touches {
    /// Resources, by id (dense from 0).
    resources: Vec<Entry>,
    /// The pseudo-resources of tasks ([`super::Footprint::task_resource`]), by task id.
    tasks: Vec<Entry>,
}

/// Ids from here up are tasks' pseudo-resources (`u32::MAX - t`).
const TASK_IDS: u32 = u32::MAX / 2;

impl Touches {
    /// Forgets every touch. Their clocks are not let go one by one: the
    /// pool is cleared with this index.
    pub fn clear(&mut self) {
        self.resources.clear();
        self.tasks.clear();
    }

    fn entry(&self, r: u32) -> Option<&Entry> {
        if r >= TASK_IDS {
            self.tasks.get((u32::MAX - r) as usize)
        } else {
            self.resources.get(r as usize)
        }
    }

    fn entry_mut(&mut self, r: u32) -> &mut Entry {
        // Resource ids are dense from 0: far below the task pseudo-resources.
        debug_assert!(r >= TASK_IDS || (r as usize) < (1 << 30), "resource id {r}");
        let (list, i) =
            if r >= TASK_IDS { (&mut self.tasks, (u32::MAX - r) as usize) } else { (&mut self.resources, r as usize) };
        if list.len() <= i {
            list.resize_with(i + 1, Entry::default);
        }
        &mut list[i]
    }

    /// The latest step of a task other than `t` that conflicts with `t`'s
    /// access to `r`: any touch if the access changes `r`, else a change.
    pub fn last_conflict(&self, r: u32, t: TaskId, changes: bool) -> Option<&Touch> {
        let e = self.entry(r)?;
        if changes {
            e.any.not_by(t)
        } else {
            e.changed.not_by(t)
        }
    }

    /// Notes that a step touched `r`, and whether it `changed` it. The
    /// steps of an execution are noted in their order.
    pub fn note(&mut self, r: u32, changed: bool, touch: Touch, pool: &mut ClockPool) {
        let e = self.entry_mut(r);
        if changed {
            e.changed.note(touch, pool);
        }
        e.any.note(touch, pool);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::Footprint;

    /// The search `Touches` replaces: every step's touches, scanned backwards.
    fn scan(log: &[(u32, TaskId, bool)], r: u32, t: TaskId, changes: bool) -> Option<usize> {
        log.iter().rposition(|&(lr, lt, lchanged)| lr == r && lt != t && (changes || lchanged))
    }

    #[test]
    fn finds_what_a_backward_scan_of_every_step_finds() {
        // A fixed pseudo-random run of 3,000 touches by 4 tasks of 3
        // resources and 2 task pseudo-resources, each step checked against
        // the scan for every task, resource and kind of access.
        let mut rng = crate::rng::SimRng::new(1);
        let mut next = |n: u64| u64::from(rng.below(n as u32));
        let ids = [0, 1, 2, Footprint::task_resource(0), Footprint::task_resource(3)];
        let mut touches = Touches::default();
        let mut log = Vec::new();
        let mut pool = ClockPool::default();
        for step in 0..3000 {
            let (r, task, changed) = (ids[next(5) as usize], next(4) as TaskId, next(3) != 0);
            let clock = pool.copy_of(None);
            touches.note(r, changed, Touch { step, task, clock }, &mut pool);
            pool.release(clock);
            log.push((r, task, changed));
            for &r in &ids {
                for t in 0..4 {
                    for changes in [false, true] {
                        let got = touches.last_conflict(r, t, changes).map(|h| h.step);
                        assert_eq!(got, scan(&log, r, t, changes), "step {step}, r {r}, t {t}, changes {changes}");
                    }
                }
            }
        }
        // Each step's clock is held by its touches alone: those pushed out
        // went back to the pool, so it holds no more clocks than the index
        // keeps (two latest touches of each kind per id) plus one.
        assert!(pool.slots() <= ids.len() * 4 + 1, "{} clocks for {} ids", pool.slots(), ids.len());
        touches.clear();
        pool.clear();
        assert!(touches.last_conflict(0, 9, true).is_none());
    }
}
