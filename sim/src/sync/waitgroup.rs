//! Go's `sync.WaitGroup`, built on a [`Monitor`].

use std::borrow::Cow;
use std::cell::Cell;
use std::future::Future;
use std::panic::Location;
use std::rc::Rc;
use std::task::Poll;

use super::{Monitor, Op};
use crate::TaskId;

/// Go's `sync.WaitGroup`: a counter that [`WaitGroup::add`] raises and
/// [`WaitGroup::done`] lowers; [`WaitGroup::wait`] blocks until it is zero.
///
/// It is a [`Monitor`] of lock class `sync.WaitGroup` around the counter,
/// so traces and the timeline and lock charts show it as that monitor,
/// which `done` and `wait` take for a step or two where Go's atomics take
/// none. A deadlock report speaks of it as Go does, with its counter:
/// "waiting in Wait on WaitGroup \"wg\" (counter 1), and no task left that
/// may call Done on it" ([`crate::outcome::BlockedTask::counter`]). A lock held across
/// `wait` is reported as the lock-order note for a lock held in `wait()`,
/// which is the bug it usually is in Go.
///
/// Declare the tasks that will call `done` ([`WaitGroup::declare_done`]),
/// as a monitor's notifiers are declared, and with them every task that
/// will spawn one later (a `main` that starts a waiter before its
/// workers): a `wait` whose declared tasks have all returned with the
/// counter above zero (a `Done` forgotten on an error path) is then found
/// the step the last of them returns, even beside tasks that run on. Leave
/// out the spawner and a correct program can be reported deadlocked before
/// the workers exist. Undeclared, any live task could still call `done`,
/// and such a wait is found only when no task can run.
///
/// ```
/// use sim::sync::WaitGroup;
/// let run = sim::Sim::new(0).run(|| async {
///     let wg = WaitGroup::new("wg");
///     for name in ["worker-1", "worker-2"] {
///         wg.add(1).await;
///         let wg = wg.clone();
///         sim::spawn(name, async move {
///             wg.declare_done();
///             sim::yield_now().await; // the work
///             wg.done().await;
///         });
///     }
///     wg.wait().await;
///     assert_eq!(wg.count(), 0);
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[derive(Clone)]
pub struct WaitGroup {
    m: Monitor,
    count: Rc<Cell<u64>>,
}

impl WaitGroup {
    /// A WaitGroup with its counter at zero.
    pub fn new(name: impl Into<Cow<'static, str>>) -> WaitGroup {
        let wg = WaitGroup { m: Monitor::with_class(name, Some(super::WAITGROUP_CLASS)), count: Rc::new(Cell::new(0)) };
        wg.set(0);
        wg
    }

    /// The monitor's resource id.
    pub fn id(&self) -> crate::ResId {
        self.m.id()
    }

    /// The counter now. A read of the WaitGroup's state, which an
    /// exhaustive search orders against `add`, `done` and `wait`.
    pub fn count(&self) -> u64 {
        let n = self.count.get();
        crate::observe(self.m.id(), n);
        n
    }

    /// `wg.Add(n)`: raises the counter. A scheduling point, as Go's atomic
    /// add is a step of its own: a `wait` may come between the caller's
    /// operation before and its `add` (Go's docs: an `Add` that raises the
    /// counter from zero must happen before the `Wait`; one after a
    /// rendezvous the waiter passed may not).
    pub async fn add(&self, n: u64) {
        Op::new(|| {
            crate::access(self.m.id(), true);
            self.set(self.count.get() + n);
            Poll::Ready(())
        })
        .await
    }

    /// Sets the counter, and the engine's copy a report gives.
    fn set(&self, n: u64) {
        self.count.set(n);
        crate::rt::with(|s| s.set_counter(self.m.id(), n));
    }

    /// `wg.Done()`: lowers the counter, and wakes every `wait` when it
    /// reaches zero. A scheduling point.
    ///
    /// # Panics
    /// With the counter at zero, as Go does: "sync: negative WaitGroup
    /// counter". And, once the tasks that call `done` are declared, if the
    /// caller is not one of them: a wait judged without it could have been
    /// reported deadlocked (checked on every call, not only the last).
    #[track_caller]
    pub fn done(&self) -> impl Future<Output = ()> + '_ {
        self.done_at(Location::caller())
    }

    async fn done_at(&self, at: &'static Location<'static>) {
        // Named as Go's stack traces name it.
        let _f = crate::frame("sync.(*WaitGroup).Done");
        let id = self.m.id();
        crate::rt::with_at(at, |s| {
            let me = s.current;
            s.check_notifier(id, me);
            if !s.done_by.contains(&(id, me)) {
                s.done_by.push((id, me));
            }
        });
        let g = self.m.enter().await;
        let n = self.count.get();
        if n == 0 {
            g.exit().await;
            crate::rt::misuse_at(at, "sync: negative WaitGroup counter");
        }
        self.set(n - 1);
        if n == 1 {
            g.notify_all_at(at);
        }
        g.exit().await;
    }

    /// `wg.Wait()`: returns once the counter is zero (at once if it is). A
    /// scheduling point.
    ///
    /// # Panics
    /// Woken by the last `done`, but with the counter raised again before it
    /// looked, as Go's `Wait` does: "sync: WaitGroup is reused before
    /// previous Wait has returned".
    #[track_caller]
    pub fn wait(&self) -> impl Future<Output = ()> + '_ {
        self.wait_at(Location::caller())
    }

    async fn wait_at(&self, at: &'static Location<'static>) {
        let _f = crate::frame("sync.(*WaitGroup).Wait");
        let g = self.m.enter().await;
        if self.count.get() > 0 {
            // Only the `done` that brings the counter to zero notifies: one
            // wake-up, then the counter is looked at once more, as Go does.
            g.wait().await;
            if self.count.get() > 0 {
                g.exit().await;
                crate::rt::misuse_at(at, "sync: WaitGroup is reused before previous Wait has returned");
            }
        }
        g.exit().await;
    }

    /// Declares that the current task may call [`WaitGroup::done`]; see
    /// [`Monitor::declare_notifier`], which it is.
    #[track_caller]
    pub fn declare_done(&self) {
        self.m.declare_notifier();
    }

    /// Declares that task `task` may call [`WaitGroup::done`]: for a task
    /// spawned later with it.
    #[track_caller]
    pub fn declare_done_for(&self, task: TaskId) {
        self.m.declare_notifier_for(task);
    }
}
