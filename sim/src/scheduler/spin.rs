//! Telling a task that spins from one that polls once.
//!
//! A Go loop around a `select` with a default case (`for { select { case
//! <-stop: return; default: } }`), or one that loads an atomic until it
//! changes (`for atomic.LoadInt32(&ready) == 0 { runtime.Gosched() }`),
//! never blocks. Go's scheduler is fair and lets the others run; PCT and an
//! exhaustive search are not, and would run it alone until the step limit.
//! A task spins when a poll (a select that takes its default, an atomic
//! load, `fetch_add(0)` or `fetch_sub`, or a `yield_now` after a read with no
//! step, `Chan::len`, `Pipe::buffered`, `AtomicU64::peek`, `Context::err`,
//! `WaitGroup::count`, `Once::is_done` or the model's own through
//! `sim::observe`, of what that read found) finds what two of its polls found before, with no other task run
//! since but spinners: nothing but the task itself can have changed what
//! it polls, so the polls learn nothing the first did not. A spinner's
//! steps are its polls and what goes round them (the lock and unlock
//! around a flag's read, a yield), so they do not end another task's count:
//! two tasks that take turns on one mutex to read one flag, or a poller
//! beside a waiter, are each seen to spin. A spinner stops being one when
//! a poll finds something new (a select that takes a case is such a poll),
//! or when it goes more steps without a poll than its round took (it left
//! its loop). Two make a loop that has gone
//! round once; straight-line code that checks twice (`ctx.Err()` before and
//! after a step) is no spin, nor are polls with steps of other tasks (not
//! spinning) between, or a load that finds a new value (one the task
//! itself stored).
//!
//! Only PCT uses it. An exhaustive search cannot: which schedules are fair
//! depends on how independent steps are ordered (another task's step
//! between two polls ends a spin), which the partial-order reduction takes
//! for the same schedule, and a yield leaves out schedules where the
//! task's next step is real work, so a proof would not be one.

use crate::rt::{ResId, TaskId};

/// The polls a task can make of a value, each its own number in
/// [`poll_key`]: an atomic's load, `fetch_add(0)` and `fetch_sub`, and a read
/// declared through `sim::observe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PollOp {
    Load = 0,
    FetchAddZero = 1,
    FetchSub = 2,
    Observe = 3,
}

/// What a poll of `resource` by `op` found (`value`), as the one number a
/// [`SpinWatch`] compares: two polls are alike when resource, operation
/// and value all are. (A hash, so that one never matches a select's cases
/// but by a 1 in 2^64 chance, which would cost one yield more.)
pub(crate) fn poll_key(resource: ResId, op: PollOp, value: u64) -> u64 {
    ((u64::from(resource) << 2 | op as u64) << 1 | 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ value
}

/// Each polling task's polls that found nothing since another task that
/// may have changed it ran.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpinWatch {
    /// Steps of tasks that were not spinning (any of which may have changed
    /// what another task polls).
    total: u64,
    /// By task id, for the tasks that polled.
    tasks: Vec<Watch>,
}

/// One task's polls.
#[derive(Clone, Debug, Default)]
struct Watch {
    /// Its own steps among `total`: `total - own` counts the others'.
    own: u64,
    /// The others' steps when the polls below began.
    others: u64,
    /// What each of its polls found (see [`Strategy::polled`](super::Strategy::polled)),
    /// with its steps since the poll before it in the list (0 for the first).
    polls: Vec<(u64, u32)>,
    /// True while it spins: its steps then are polls and the steps that go
    /// round them (a lock and unlock to read a flag, a yield), which change
    /// nothing another task polls, so they do not end another spinner's
    /// count (two tasks taking turns on one mutex to read one flag, a poller
    /// beside a waiter).
    spinning: bool,
    /// What the polls of its spin found (a round may poll more than one
    /// thing: a flag, then a stop flag): one that finds anything else has
    /// stopped spinning.
    cycle: Vec<u64>,
    /// Its steps since its last poll.
    quiet: u32,
    /// While it spins, the steps it may take without a poll: the widest of
    /// its rounds' gaps since it began to spin. A spinner that goes longer
    /// without has left its loop.
    limit: u32,
}

/// Polls remembered at most: a task that runs alone and finds something
/// new each time (a value it counts up) keeps no longer a list.
const POLLS_KEPT: usize = 64;

/// The most steps a spinner may take without a poll, whatever its round's
/// width: past this, its steps count as any task's.
const QUIET_MAX: u32 = 64;

impl SpinWatch {
    /// Task `t` was picked for the next step.
    #[inline]
    pub fn picked(&mut self, t: TaskId) {
        match self.tasks.get_mut(t as usize) {
            Some(w) if w.spinning => {
                w.quiet = w.quiet.saturating_add(1);
                if w.quiet > w.limit {
                    // Longer than a round without a poll: it left its loop.
                    w.spinning = false;
                    self.total += 1;
                    w.own += 1;
                }
            }
            Some(w) => {
                w.quiet = w.quiet.saturating_add(1);
                self.total += 1;
                w.own += 1;
            }
            None => self.total += 1,
        }
    }

    /// Task `t` polled and found `what`: true if it spins.
    pub fn polled(&mut self, t: TaskId, what: u64) -> bool {
        if self.tasks.len() <= t as usize {
            self.tasks.resize_with(t as usize + 1, Watch::default);
        }
        let w = &mut self.tasks[t as usize];
        let others = self.total - w.own;
        if w.others != others {
            // Another task (not spinning) ran since: the count starts again.
            w.others = others;
            w.polls.clear();
        }
        let gap = if w.polls.is_empty() { 0 } else { w.quiet };
        w.quiet = 0;
        if w.spinning && !w.cycle.contains(&what) {
            // Something new: it no longer spins, and this step (which
            // `picked` did not count) may have changed what others poll.
            w.spinning = false;
            self.total += 1;
            w.own += 1;
        }
        if w.polls.iter().filter(|p| p.0 == what).count() >= 2 {
            // Counted again from here: a task that goes on spinning (no
            // other can run) is told each round.
            // The round: its polls since the first of the three, and the
            // most steps between two of them (not the steps before it).
            let first = w.polls.iter().position(|p| p.0 == what).unwrap_or(0);
            let width = w.polls[first + 1..].iter().map(|p| p.1).fold(gap, u32::max);
            w.cycle.clear();
            w.cycle.extend(w.polls[first..].iter().map(|p| p.0));
            w.cycle.sort_unstable();
            w.cycle.dedup();
            w.polls.clear();
            // A round may be wider than the ones that made the spin seen:
            // the limit only grows while it spins.
            w.limit = if w.spinning { w.limit.max(width) } else { width }.min(QUIET_MAX);
            w.spinning = true;
            return true;
        }
        if w.polls.len() == POLLS_KEPT {
            w.polls.clear();
        }
        w.polls.push((what, gap));
        false
    }
}

#[cfg(test)]
mod tests {
    use super::SpinWatch;

    #[test]
    fn the_same_poll_found_a_third_time_alone_is_a_spin() {
        let mut w = SpinWatch::default();
        w.picked(1);
        assert!(!w.polled(1, 7));
        w.picked(1);
        // Another poll between: still alone.
        assert!(!w.polled(1, 9));
        // Twice is straight-line code checking again; a third time is a loop.
        assert!(!w.polled(1, 7));
        assert!(w.polled(1, 7));
        // Counted again from there.
        assert!(!w.polled(1, 7) && !w.polled(1, 7) && w.polled(1, 7));
        // Another task's step between two polls: no spin.
        w.picked(1);
        assert!(!w.polled(1, 8) && !w.polled(1, 8));
        w.picked(2);
        w.picked(1);
        assert!(!w.polled(1, 8) && !w.polled(1, 8));
        // Two tasks' polls do not mix.
        w.picked(2);
        assert!(!w.polled(2, 8));
        w.picked(1);
        assert!(!w.polled(1, 8) && !w.polled(1, 8));
        // Something new each time is no spin, and the list stays short.
        for v in 0..1000 {
            assert!(!w.polled(1, 100 + v));
        }
        assert!(w.tasks[1].polls.len() <= super::POLLS_KEPT);
    }

    #[test]
    fn a_spinners_steps_do_not_end_another_tasks_count() {
        let mut w = SpinWatch::default();
        // Task 2 spins.
        for _ in 0..2 {
            w.picked(2);
            assert!(!w.polled(2, 5));
        }
        w.picked(2);
        assert!(w.polled(2, 5));
        // Task 1 polls between task 2's steps: a spin all the same.
        for i in 0..3 {
            w.picked(1);
            assert_eq!(w.polled(1, 7), i == 2, "poll {i}");
            w.picked(2);
            assert!(!w.polled(2, 5) || i == 2);
        }
        // Task 2 finds something new: no longer a spinner, and its steps
        // end task 1's count again.
        w.picked(2);
        assert!(!w.polled(2, 6));
        w.picked(1);
        assert!(!w.polled(1, 7));
        w.picked(2);
        w.picked(1);
        assert!(!w.polled(1, 7) && !w.polled(1, 7));
        // A spinner that goes more steps without a poll than its round took
        // has stopped: its steps count again.
        let mut w = SpinWatch::default();
        for _ in 0..3 {
            w.picked(2);
            w.polled(2, 5);
        }
        w.picked(1);
        assert!(!w.polled(1, 7) && !w.polled(1, 7));
        for _ in 0..=super::QUIET_MAX {
            w.picked(2);
        }
        w.picked(1);
        assert!(!w.polled(1, 7));
    }
}
