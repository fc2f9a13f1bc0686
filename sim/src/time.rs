//! The virtual clock: `sleep`, `now`, and Go's `time.After` and `time.Ticker`.
//!
//! Every step advances the clock by the run's step cost; a sleeper becomes
//! ready once the clock has passed its deadline, and when no task can run
//! but one sleeps, the clock jumps to the nearest deadline. Time labels events
//! and orders wake-ups; it never forbids an interleaving otherwise.
//!
//! So a duration races with the steps around it: every step costs 100 ns
//! by default ([`Sim::step_ns`](crate::Sim::step_ns)), so a worker that
//! sleeps 900 ns against a 1,000 ns timeout still loses to it in most
//! schedules when the steps between the two add up to more than the 100
//! ns they differ by. Give durations that should race far larger than the
//! steps they span, or set the step cost to 0 (the clock then moves only
//! by sleeps). `sleep(ns)` counts from its own step; [`after`] from its
//! call.
//!
//! ```
//! use sim::sync::{select, Chan};
//! let worker_first = |step_ns, seed| {
//!     let won = std::rc::Rc::new(std::cell::Cell::new(false));
//!     let w = won.clone();
//!     sim::Sim::new(seed).step_ns(step_ns).run(move || async move {
//!         let result: Chan<u32> = Chan::new("result", 0);
//!         let tx = result.clone();
//!         sim::spawn_background("worker", async move {
//!             sim::time::sleep(900).await;
//!             tx.send(1).await;
//!         });
//!         let timeout = sim::time::after(1_000);
//!         let (mut r, mut t) = (result.recv_case(), timeout.recv_case());
//!         w.set(select(&mut [&mut r, &mut t], false).await == Some(0));
//!     });
//!     won.get()
//! };
//! // With 100 ns steps, the timeout wins most schedules; without, never.
//! let wins = (0..100).filter(|&seed| worker_first(100, seed)).count();
//! assert!(wins < 50, "{wins}");
//! assert!((0..100).all(|seed| worker_first(0, seed)));
//! ```
//!
//! ```
//! let run = sim::Sim::new(0).run(|| async {
//!     let t0 = sim::time::now();
//!     sim::time::sleep(5_000).await;
//!     assert!(sim::time::now() >= t0 + 5_000);
//! });
//! assert_eq!(run.outcome, sim::Outcome::Completed);
//! ```

use std::cmp::Reverse;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::rt::{self, Status};
use crate::trace::EventKind;

/// The latest deadline a sleep or timer can have: Go's longest duration
/// (`math.MaxInt64` nanoseconds, about 292 years). A longer sleep ends
/// there, so the clock, which each step then moves on by the step cost,
/// stays far from the end of `u64` (a deadline of `clock + ns` once
/// wrapped round to the past, waking the sleeper at once).
pub const END_OF_TIME: u64 = i64::MAX as u64;

/// The virtual time in nanoseconds.
pub fn now() -> u64 {
    rt::with(|s| {
        s.timed_step();
        s.clock
    })
}

/// Go's `time.After(d)`: a channel that receives one value `ns` virtual
/// nanoseconds from now, the timeout case of a `select`. A background task
/// named `time.After` (it keeps no run alive, as a Go timer keeps no program
/// alive) sleeps until then, then sends on it; buffered, so it never waits.
/// The send is a step of that task: it comes at the deadline or, if the
/// scheduler runs other tasks first, after it (so two timers whose
/// deadlines are close may deliver in either order).
///
/// ```
/// use sim::sync::{select, Chan};
/// let run = sim::Sim::new(0).run(|| async {
///     let results: Chan<u32> = Chan::new("results", 0);
///     results.declare_receiver(); // nobody will send: only the timeout fires
///     let timeout = sim::time::after(1_000_000);
///     let (mut r, mut t) = (results.recv_case(), timeout.recv_case());
///     assert_eq!(select(&mut [&mut r, &mut t], false).await, Some(1));
///     assert!(sim::time::now() >= 1_000_000);
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
pub fn after(ns: u64) -> crate::sync::Chan<()> {
    let ch = crate::sync::Chan::new("time.After", 1);
    let tx = ch.clone();
    // The deadline counts from the call, not from the task's first step.
    let at = now().saturating_add(ns);
    crate::spawn_background("time.After", async move {
        tx.declare_sender();
        Sleep { ns: 0, state: 1, until: Some(at) }.await;
        tx.send(()).await;
    });
    ch
}

/// Go's `time.Ticker`: every `period` of virtual time, a tick (the time) is
/// sent on [`Ticker::c`], a channel of capacity 1; a tick the reader has not
/// taken yet makes the next one be dropped, as Go's are. [`Ticker::stop`]
/// stops the ticks and does not close the channel: a receive after it waits
/// for good, and is reported so (the ticking task ends at the stop, or at
/// its next wake-up if it was already woken for a tick).
///
/// The ticks come from a background task named after the ticker, declared
/// the channel's sender. A period shorter than a step (100 ns by default,
/// [`crate::Sim::step_ns`]) makes a tick due at every step: the ticker and a
/// loop that drains it then never block, and PCT, which runs the
/// highest-priority task that can, may run them alone until the step limit.
/// Give a period of several steps, or a step cost of 0.
///
/// ```
/// let run = sim::Sim::new(0).run(|| async {
///     let ticker = sim::time::Ticker::new("heartbeat", 1_000);
///     let first = ticker.c().recv().await.unwrap();
///     let second = ticker.c().recv().await.unwrap();
///     assert!(first >= 1_000 && second >= first + 1_000);
///     ticker.stop();
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[derive(Clone)]
pub struct Ticker {
    c: crate::sync::Chan<u64>,
    stopped: std::rc::Rc<std::cell::Cell<bool>>,
    /// The ticking task, which `stop` ends where it sleeps.
    task: crate::TaskId,
}

impl Ticker {
    /// `time.NewTicker(period)`. `name` names the ticking task, and the
    /// channel (`"<name>.C"`).
    ///
    /// # Panics
    /// With a period of 0, as Go's `NewTicker` does ("non-positive interval").
    #[track_caller]
    pub fn new(name: impl Into<std::borrow::Cow<'static, str>>, period: u64) -> Ticker {
        assert!(period > 0, "time: non-positive interval for NewTicker");
        let name: String = name.into().into_owned();
        let c = crate::sync::Chan::new(format!("{name}.C"), 1);
        let stopped = std::rc::Rc::new(std::cell::Cell::new(false));
        let (tx, stop) = (c.clone(), stopped.clone());
        // Ticks at whole periods from now, as Go's runtime timer fires them.
        let start = now();
        let h = crate::spawn_background(name, async move {
            let mut next = start;
            loop {
                next = next.saturating_add(period);
                Sleep { ns: 0, state: 1, until: Some(next) }.await;
                // In the step the timer woke it in, with no scheduling point
                // between: a stop() seen here is one that came before, and
                // none can come between the look and the send (Go: "after
                // Stop, no more ticks will be sent").
                if stop.get() {
                    return;
                }
                let t = now();
                // A tick nobody took yet: this one is dropped.
                rt::with(|s| {
                    if tx.send_ready(s) {
                        tx.send_now(s, t);
                    } else {
                        s.touch(tx.id());
                    }
                });
                // A tick late by whole periods sends once, and goes on
                // from the next period after now.
                let t = now();
                if t >= next.saturating_add(period) {
                    next = t - (t - start) % period;
                }
            }
        });
        c.declare_sender_for(h.id());
        Ticker { c, stopped, task: h.id() }
    }

    /// `ticker.C`.
    pub fn c(&self) -> &crate::sync::Chan<u64> {
        &self.c
    }

    /// `ticker.Stop()`: no tick is sent after it. Not a scheduling point.
    /// The ticking task ends here if it sleeps until its next tick (or has
    /// not started), as Go's runtime timer is taken off its heap; one woken
    /// for a tick and not run yet returns when it runs, without sending.
    pub fn stop(&self) {
        self.stopped.set(true);
        // Go's `defer ticker.Stop()` is a drop guard here, which may run at
        // the run's teardown, when there is no task to end.
        if rt::is_live() {
            rt::with(|s| crate::rt::execution::stop_timer_task(s, self.task));
        }
    }
}

/// Suspends the current task for `ns` virtual nanoseconds (at most until
/// [`END_OF_TIME`]). A scheduling point.
pub async fn sleep(ns: u64) {
    Sleep { ns, state: 0, until: None }.await
}

/// Sleeps until virtual time `at`, from the task's current step: no
/// scheduling point before it (a timer task's first step sets its timer,
/// so it is never found started and not yet asleep).
pub(crate) async fn sleep_until(at: u64) {
    Sleep { ns: 0, state: 1, until: Some(at) }.await
}

/// `state` 0: the scheduling point to take; 1: set the timer; 2: woken.
struct Sleep {
    ns: u64,
    state: u8,
    /// A deadline of its own instead of `ns` from the timer's setting.
    until: Option<u64>,
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.state == 0 {
            self.state = 1;
            if !rt::with(|s| s.yield_now()) {
                return Poll::Pending;
            }
        }
        match self.state {
            1 => {
                self.state = 2;
                let (ns, until) = (self.ns, self.until);
                rt::with(|s| {
                    let t = s.current;
                    s.timed_step();
                    let at = until.unwrap_or(s.clock.saturating_add(ns)).min(END_OF_TIME).max(s.clock);
                    s.record(t, EventKind::Sleep, None, Some(at - s.clock), None, None, None);
                    s.timer_seq += 1;
                    s.timers.push(Reverse((at, s.timer_seq, t)));
                    // An earlier deadline: the loop looks at it before any further step.
                    s.inline_left = 0;
                    s.tasks[t as usize].status = Status::Sleeping;
                    s.enabled.remove(t);
                    s.suspended = true;
                });
                Poll::Pending
            }
            _ => Poll::Ready(()),
        }
    }
}
