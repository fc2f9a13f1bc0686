//! Java's object monitor: `synchronized`, `wait`, `notify`, `notifyAll`.

use std::borrow::Cow;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::Op;
use crate::rt::{self, Hold, ResId, ResKind, ResState, State, Status, TaskId, Wait};
use crate::trace::EventKind;

/// A Java object's monitor: reentrant (an owner and an entry count), `wait`
/// releases every entry and restores them when it returns, `notify` wakes
/// one waiter chosen by the scheduler and `notifyAll` wakes all; no fairness
/// anywhere.
///
/// ```
/// let run = sim::Sim::new(0).run(|| async {
///     let bq = sim::sync::Monitor::new("bufferQueue");
///     let outer = bq.enter().await;   // synchronized (bufferQueue) {
///     let inner = bq.enter().await;   //   synchronized (bufferQueue) {  -- reentrant
///     inner.exit().await;             //   }
///     outer.exit().await;             // }
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Monitor {
    id: ResId,
}

/// One entry into a [`Monitor`]. Leave with [`MonitorGuard::exit`] (a
/// scheduling point) or by dropping it. Leaving from a task that does not
/// own the monitor (the guard moved to another task) panics as Java does;
/// `exit` cites the model's line, a drop (which has no caller) the library's.
#[must_use = "the monitor is exited when the guard is dropped"]
pub struct MonitorGuard {
    id: ResId,
    held: bool,
}

fn st(s: &mut State, id: ResId) -> (&mut Option<Hold>, &mut u32, &mut Vec<u32>) {
    match &mut s.resources[id as usize].st {
        ResState::Monitor { owner, count, wait_set, .. } => (owner, count, wait_set),
        _ => unreachable!(),
    }
}

/// Notes a notify (`all` for notifyAll) by the running task, and moves the
/// tasks it wakes from the wait set to the note's `woken`: all of them, or
/// the one at `pick`. Returns how many.
fn note_notify(s: &mut State, id: ResId, all: bool, pick: Option<usize>) -> usize {
    let (by, step) = (s.hold_here(), s.step);
    let ResState::Monitor { wait_set, .. } = &mut s.resources[id as usize].st else { unreachable!() };
    let n = s.notes.note(id, step, by, all);
    match pick {
        // The wait set's buffer is kept for the next waiters: no allocation.
        None => std::mem::swap(wait_set, &mut n.woken),
        Some(k) => n.woken.push(wait_set.remove(k)),
    }
    n.woken.len()
}

/// The `i`th task the last notify of monitor `id` woke.
fn woken(s: &State, id: ResId, i: usize) -> TaskId {
    s.notes.of(id).expect("a notify was noted").woken[i]
}

/// Takes the monitor with `count` entries if it is free or already ours.
fn try_acquire(s: &mut State, id: ResId, count: u32) -> bool {
    let here = s.hold_here();
    let (owner, c, _) = st(s, id);
    match owner {
        None => {
            *owner = Some(here);
            *c = count;
            true
        }
        Some(h) if h.task == here.task => {
            *c += count;
            true
        }
        Some(_) => false,
    }
}

impl Monitor {
    /// A new monitor (the lock of one Java object).
    pub fn new(name: impl Into<Cow<'static, str>>) -> Monitor {
        Monitor::with_class(name, None)
    }

    /// A new monitor in lock class `class` (for example every `bufferQueue`
    /// of every `BufferManager`).
    pub fn with_class(name: impl Into<Cow<'static, str>>, class: Option<&'static str>) -> Monitor {
        let name = name.into();
        let id = rt::with(|s| {
            s.new_resource(
                name,
                ResKind::Monitor,
                None,
                class,
                ResState::Monitor { owner: None, count: 0, wait_set: Vec::new() },
            )
        });
        Monitor { id }
    }

    /// The resource id.
    pub fn id(&self) -> ResId {
        self.id
    }

    /// Declares that the current task may notify this monitor. Until a
    /// model declares a monitor's notifiers, a task in its `wait()` can be
    /// notified by any live task (in Java, any thread with a reference),
    /// so a wait is never part of a deadlock while some unrelated task runs
    /// on (a heartbeat, a server loop). Once declared, only the declared
    /// notifiers still alive can release a wait (none alive: the wait is
    /// dead by itself), and a notify by a task not declared fails the run.
    /// Declare every notifier when it starts, as channel ends are declared,
    /// and a task that will spawn one later too (it could release the wait
    /// through it).
    ///
    /// ```
    /// use sim::sync::Monitor;
    /// let run = sim::Sim::new(0).run(|| async {
    ///     sim::spawn_background("heartbeat", async {
    ///         loop {
    ///             sim::time::sleep(1_000_000).await;
    ///         }
    ///     });
    ///     let m = Monitor::new("m");
    ///     for name in ["W1", "W2"] {
    ///         sim::spawn(name, async move {
    ///             m.declare_notifier();
    ///             let g = m.enter().await;
    ///             g.wait().await; // nobody notifies: both wait for good
    ///             g.exit().await;
    ///         });
    ///     }
    /// });
    /// let d = run.outcome.deadlock().expect("found beside the heartbeat");
    /// assert_eq!(d.running, vec!["heartbeat"]);
    /// ```
    #[track_caller]
    pub fn declare_notifier(&self) {
        rt::with_at(Location::caller(), |s| {
            let t = s.current;
            s.declare_notifier(self.id, t)
        });
    }

    /// Declares that task `task` may notify this monitor (see
    /// [`Monitor::declare_notifier`]): for a task spawned later with it.
    #[track_caller]
    pub fn declare_notifier_for(&self, task: TaskId) {
        rt::with_at(Location::caller(), |s| s.declare_notifier(self.id, task));
    }

    /// Entering `synchronized (obj)`: a scheduling point; reentrant.
    pub fn enter(&self) -> Enter {
        Enter { id: self.id, yielded: false }
    }

    /// True if the current task owns the monitor (`Thread.holdsLock`).
    pub fn held_by_current(&self) -> bool {
        rt::with(|s| {
            let me = s.current;
            matches!(st(s, self.id).0, Some(h) if h.task == me)
        })
    }
}

/// The future of [`Monitor::enter`].
// Written out rather than as an `async fn` over `Op`, as `Mutex::lock` is:
// entering and leaving monitors are most of the steps of a Flink run.
#[must_use = "futures do nothing unless awaited"]
pub struct Enter {
    id: ResId,
    yielded: bool,
}

impl Future for Enter {
    type Output = MonitorGuard;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<MonitorGuard> {
        let Enter { id, ref mut yielded } = *self;
        rt::with(|s| enter_step(s, id, yielded)).map(|()| MonitorGuard { id, held: true })
    }
}

/// One poll of an entry: its scheduling point (once), then the attempt.
#[inline(never)]
fn enter_step(s: &mut State, id: ResId, yielded: &mut bool) -> Poll<()> {
    if !*yielded {
        *yielded = true;
        if !s.yield_lock(id) {
            return Poll::Pending;
        }
    }
    if !try_acquire(s, id, 1) {
        s.block(Wait::Lock(id));
        return Poll::Pending;
    }
    let (t, c) = (s.current, *st(s, id).1);
    s.record(t, EventKind::Enter, Some(id), Some(c as u64), None, None, None);
    s.took_lock(id, t);
    if c == 1 {
        s.acquired(t, id);
    }
    Poll::Ready(())
}

/// Leaves the monitor once. A task that does not own it panics, citing the
/// model's line `at` of the exit if known.
fn release(s: &mut State, id: ResId, at: Option<&'static Location<'static>>) {
    let me = s.current;
    let (owner, count, _) = st(s, id);
    if !matches!(owner, Some(h) if h.task == me) {
        s.touch(id);
        let msg = "IllegalMonitorStateException: monitor exit by a task that does not own it";
        match at {
            Some(at) => rt::misuse_at(at, msg),
            None => panic!("{msg}"),
        }
    }
    *count -= 1;
    let c = *count;
    if c == 0 {
        *owner = None;
    }
    s.record(me, EventKind::Exit, Some(id), Some(c as u64), None, None, None);
    if c == 0 {
        s.released(me, id);
        s.wake_all(id);
    }
}

/// One poll of an exit: its scheduling point (once), then the release.
#[inline(never)]
fn exit_step(s: &mut State, id: ResId, yielded: &mut bool, at: &'static Location<'static>) -> Poll<()> {
    if !*yielded {
        *yielded = true;
        if !s.yield_now() {
            return Poll::Pending;
        }
    }
    release(s, id, Some(at));
    Poll::Ready(())
}

/// The future of [`MonitorGuard::exit`].
#[must_use = "futures do nothing unless awaited"]
pub struct Exit {
    id: ResId,
    yielded: bool,
    at: &'static Location<'static>,
}

impl Future for Exit {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let Exit { id, ref mut yielded, at } = *self;
        rt::with(|s| exit_step(s, id, yielded, at))
    }
}

impl Drop for Exit {
    /// An exit dropped before its first poll releases as its guard would
    /// have; once polled, the exit is under way and completes only in a poll.
    fn drop(&mut self) {
        if !self.yielded && rt::is_live() && !std::thread::panicking() {
            rt::with(|s| release(s, self.id, Some(self.at)));
        }
    }
}

fn check_owner(s: &mut State, id: ResId, what: &str) {
    let me = s.current;
    if !matches!(st(s, id).0, Some(h) if h.task == me) {
        s.touch(id);
        s.misuse(format_args!("IllegalMonitorStateException: {what} by a task that does not own the monitor"));
    }
}

impl MonitorGuard {
    /// Leaving the `synchronized` block: a scheduling point, then the exit.
    #[track_caller]
    pub fn exit(self) -> Exit {
        let id = self.id;
        // The future releases: this guard has nothing left to do.
        std::mem::forget(self);
        Exit { id, yielded: false, at: Location::caller() }
    }

    /// `obj.wait()`: releases every entry, waits for a notify, then takes the
    /// monitor back with the same entry count. A scheduling point.
    #[track_caller]
    pub fn wait(&self) -> impl Future<Output = ()> + '_ {
        let at = Location::caller();
        let id = self.id;
        // 0: not yet waiting; 1: in the wait set; 2: notified, re-entering.
        let mut phase = 0u8;
        Op::new(move || {
            rt::with_at(at, |s| {
                let me = s.current;
                if phase == 0 {
                    check_owner(s, id, "wait");
                    let (owner, count, wait_set) = st(s, id);
                    let saved = std::mem::replace(count, 0);
                    *owner = None;
                    wait_set.push(me);
                    s.tasks[me as usize].saved_count = saved;
                    s.record(me, EventKind::Wait, Some(id), Some(saved as u64), None, None, None);
                    phase = 1;
                    s.released(me, id);
                    s.wake_all(id);
                    s.block(Wait::Notify(id));
                    return Poll::Pending;
                }
                phase = 2;
                let saved = s.tasks[me as usize].saved_count;
                if try_acquire(s, id, saved) {
                    s.record(me, EventKind::Enter, Some(id), Some(saved as u64), None, None, None);
                    s.took_lock(id, me);
                    s.acquired(me, id);
                    Poll::Ready(())
                } else {
                    s.block(Wait::Lock(id));
                    Poll::Pending
                }
            })
        })
    }

    /// `obj.notify()`: wakes one waiter, chosen by the scheduler.
    ///
    /// Not a scheduling point: the woken task needs the monitor, which the
    /// caller holds, so nobody can observe the notify before the exit.
    #[track_caller]
    pub fn notify(&self) {
        self.notify_one(false, Location::caller())
    }

    /// `notify`, of the longest waiting task with `oldest` (Go's
    /// `Cond.Signal`, whose wait list is a queue), else of one the scheduler
    /// picks (Java's, which promises no order).
    /// A misuse is reported at `at`, the model's line.
    pub(crate) fn notify_one(&self, oldest: bool, at: &'static Location<'static>) {
        rt::with_at(at, |s| {
            check_owner(s, self.id, "notify");
            let me = s.current;
            s.check_notifier(self.id, me);
            let n = st(s, self.id).2.len();
            s.record(me, EventKind::Notify, Some(self.id), Some(n.min(1) as u64), None, None, None);
            let pick = match n {
                0 => None,
                _ if oldest => Some(0),
                _ => Some(s.pick_index(n)),
            };
            if note_notify(s, self.id, false, pick) > 0 {
                let t = woken(s, self.id, 0);
                s.wake(t);
            }
        })
    }

    /// `obj.notifyAll()`: wakes every waiter. Not a scheduling point (see [`MonitorGuard::notify`]).
    #[track_caller]
    pub fn notify_all(&self) {
        self.notify_all_at(Location::caller())
    }

    /// `notifyAll`, a misuse reported at `at`, the model's line.
    pub(crate) fn notify_all_at(&self, at: &'static Location<'static>) {
        rt::with_at(at, |s| {
            check_owner(s, self.id, "notifyAll");
            let me = s.current;
            s.check_notifier(self.id, me);
            let n = st(s, self.id).2.len();
            s.record(me, EventKind::NotifyAll, Some(self.id), Some(n as u64), None, None, None);
            note_notify(s, self.id, true, None);
            for i in 0..n {
                let t = woken(s, self.id, i);
                debug_assert_eq!(s.tasks[t as usize].status, Status::Blocked(Wait::Notify(self.id)));
                s.wake(t);
            }
        })
    }
}

impl Drop for MonitorGuard {
    fn drop(&mut self) {
        if self.held && rt::is_live() && !std::thread::panicking() {
            rt::with(|s| release(s, self.id, None));
        }
    }
}
