//! Go's `sync.Cond`, built on a [`Monitor`].

use std::borrow::Cow;
use std::future::Future;
use std::panic::Location;

use super::{Monitor, Mutex, MutexGuard, RwMutex, RwReadGuard, RwWriteGuard};
use crate::TaskId;

/// Go's `sync.Cond`: `Wait` lets go of the lock it is given (`c.L`), waits
/// for a `Signal` or `Broadcast`, and takes the lock again before it
/// returns. `Signal` wakes the task waiting longest (Go's wait list is a
/// queue), `Broadcast` every one; neither needs the lock.
///
/// It is a [`Monitor`] of lock class `sync.Cond` that holds the wait list:
/// a `wait` enters it before it unlocks `c.L`, so a `signal` made between
/// the unlock and the wait is not lost (Go takes a ticket first for that),
/// and `signal`/`broadcast` enter it for a step. Traces and the timeline and
/// lock charts show it as that monitor; a deadlock report and the wait-for
/// graph speak of it as Go does: "waiting in Wait on Cond \"cond\", and no
/// task left that may signal it", "Last notify of \"cond\": Signal() at
/// step 18 by ..." ([`crate::outcome::BlockedTask::cond`]).
///
/// Declare the tasks that may signal ([`Cond::declare_signaler`]), as a
/// monitor's notifiers are declared: a `wait` whose declared signalers have
/// all returned is found as the last one returns, even beside tasks that
/// run on. Undeclared, any live task could still signal, and such a wait
/// is found only when no task can run.
///
/// ```
/// use std::{cell::Cell, rc::Rc};
/// use sim::sync::{Cond, Mutex};
/// let run = sim::Sim::new(0).run(|| async {
///     let (mu, cond, ready) = (Mutex::new("mu"), Cond::new("cond"), Rc::new(Cell::new(false)));
///     let r = ready.clone();
///     sim::spawn("producer", async move {
///         cond.declare_signaler();
///         let g = mu.lock().await;
///         r.set(true);
///         g.unlock().await;
///         cond.signal().await;
///     });
///     let mut g = mu.lock().await;
///     while !ready.get() {
///         g = cond.wait(g).await; // for !ready { c.Wait() }
///     }
///     g.unlock().await;
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Cond {
    m: Monitor,
}

impl Cond {
    /// `sync.NewCond(l)`: the lock is given to each `wait`.
    pub fn new(name: impl Into<Cow<'static, str>>) -> Cond {
        Cond { m: Monitor::with_class(name, Some(super::COND_CLASS)) }
    }

    /// The monitor's resource id.
    pub fn id(&self) -> crate::ResId {
        self.m.id()
    }

    /// `c.Wait()` with `c.L` a [`Mutex`] the caller holds (`g`): unlocks it,
    /// waits for a signal, locks it again and returns its guard. Several
    /// scheduling points.
    pub async fn wait(&self, g: MutexGuard) -> MutexGuard {
        let _f = crate::frame("sync.(*Cond).Wait");
        let mu = Mutex::of(&g);
        self.wait_unlocked(g.unlock()).await;
        mu.lock().await
    }

    /// `c.Wait()` with `c.L` an [`RwMutex`]'s write lock.
    pub async fn wait_write(&self, g: RwWriteGuard) -> RwWriteGuard {
        let _f = crate::frame("sync.(*Cond).Wait");
        let rw = RwMutex::of_write(&g);
        self.wait_unlocked(g.unlock()).await;
        rw.lock().await
    }

    /// `c.Wait()` with `c.L` an [`RwMutex`]'s read lock (`rw.RLocker()`).
    pub async fn wait_read(&self, g: RwReadGuard) -> RwReadGuard {
        let _f = crate::frame("sync.(*Cond).Wait");
        let rw = RwMutex::of_read(&g);
        self.wait_unlocked(g.runlock()).await;
        rw.rlock().await
    }

    /// Joins the wait list, lets go of `c.L` (`unlock`), and waits: the wait
    /// list's monitor is held across the unlock, so no signal falls between.
    async fn wait_unlocked(&self, unlock: impl std::future::Future<Output = ()>) {
        let list = self.m.enter().await;
        unlock.await;
        list.wait().await;
        list.exit().await;
    }

    /// `c.Signal()`: wakes the task waiting longest, if any. A scheduling
    /// point.
    #[track_caller]
    pub fn signal(&self) -> impl Future<Output = ()> + '_ {
        let at = Location::caller();
        async move {
            let _f = crate::frame("sync.(*Cond).Signal");
            let list = self.m.enter().await;
            list.notify_one(true, at);
            list.exit().await;
        }
    }

    /// `c.Broadcast()`: wakes every waiting task. A scheduling point.
    #[track_caller]
    pub fn broadcast(&self) -> impl Future<Output = ()> + '_ {
        let at = Location::caller();
        async move {
            let _f = crate::frame("sync.(*Cond).Broadcast");
            let list = self.m.enter().await;
            list.notify_all_at(at);
            list.exit().await;
        }
    }

    /// Declares that the current task may call [`Cond::signal`] or
    /// [`Cond::broadcast`]; see [`Monitor::declare_notifier`], which it is.
    #[track_caller]
    pub fn declare_signaler(&self) {
        self.m.declare_notifier();
    }

    /// Declares that task `task` may signal: for a task spawned later.
    #[track_caller]
    pub fn declare_signaler_for(&self, task: TaskId) {
        self.m.declare_notifier_for(task);
    }
}
