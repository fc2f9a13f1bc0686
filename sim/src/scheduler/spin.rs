//! Telling a task that spins from one that polls once.
//!
//! A Go loop around a `select` with a default case (`for { select { case
//! <-stop: return; default: } }`), or one that loads an atomic until it
//! changes (`for atomic.LoadInt32(&ready) == 0 { runtime.Gosched() }`),
//! never blocks. Go's scheduler is fair and lets the others run; PCT and an
//! exhaustive search are not, and would run it alone until the step limit.
//! A task spins when a poll (a select that takes its default, an atomic
//! load, `fetch_add` or `fetch_sub`, or a `yield_now` after a read with no
//! step, `Chan::len`, `Pipe::buffered`, `AtomicU64::peek`, `Context::err`,
//! `WaitGroup::count`, `Once::is_done` or the model's own through
//! `sim::observe`, of what that read found) finds what two of its polls found before, with no other task run
//! since: nothing but the task itself can have changed what it polls, so
//! the polls learn nothing the first did not. Two make a loop that has gone
//! round once; straight-line code that checks twice (`ctx.Err()` before and
//! after a step) is no spin, nor are polls with other tasks' steps between,
//! or a load that finds a new value (one the task itself stored).
//!
//! Only PCT uses it. An exhaustive search cannot: which schedules are fair
//! depends on how independent steps are ordered (another task's step
//! between two polls ends a spin), which the partial-order reduction takes
//! for the same schedule, and a yield leaves out schedules where the
//! task's next step is real work, so a proof would not be one.

use crate::rt::TaskId;

/// The polls that found nothing since another task last ran.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpinWatch {
    /// The task that has run alone since its first poll below.
    task: Option<TaskId>,
    /// What each of its polls found (see [`Strategy::polled`](super::Strategy::polled)).
    polls: Vec<u64>,
}

/// Polls remembered at most: a task that runs alone and finds something
/// new each time (a value it counts up) keeps no longer a list.
const POLLS_KEPT: usize = 64;

impl SpinWatch {
    /// Task `t` was picked for the next step.
    #[inline]
    pub fn picked(&mut self, t: TaskId) {
        if self.task.is_some_and(|p| p != t) {
            self.task = None;
            self.polls.clear();
        }
    }

    /// Task `t` polled and found `what`: true if it spins.
    pub fn polled(&mut self, t: TaskId, what: u64) -> bool {
        if self.task != Some(t) {
            self.task = Some(t);
            self.polls.clear();
        }
        if self.polls.iter().filter(|&&p| p == what).count() >= 2 {
            // Counted again from here: a task that goes on spinning (no
            // other can run) is told each round.
            self.polls.clear();
            return true;
        }
        if self.polls.len() == POLLS_KEPT {
            self.polls.clear();
        }
        self.polls.push(what);
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
        assert!(!w.polled(1, 7) && !w.polled(1, 7));
        w.picked(2);
        w.picked(1);
        assert!(!w.polled(1, 7) && !w.polled(1, 7));
        // Two tasks' polls do not mix.
        assert!(!w.polled(2, 7));
        assert!(!w.polled(1, 7) && !w.polled(1, 7));
        // Something new each time is no spin, and the list stays short.
        for v in 0..1000 {
            assert!(!w.polled(1, 100 + v));
        }
        assert!(w.polls.len() <= super::POLLS_KEPT);
    }
}
