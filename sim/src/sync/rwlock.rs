//! Go's `sync.RWMutex`.

use std::borrow::Cow;
use std::task::Poll;

use super::Op;
use crate::rt::{self, Hold, ResId, ResKind, ResState, State, Status, TaskId, Wait};
use crate::trace::EventKind;

/// Go's `sync.RWMutex`, writer-preferring as Go's is:
/// - a writer first takes the writer slot, then waits for the readers to
///   leave; from the moment it takes the slot, new readers block behind it;
/// - at a writer's unlock, the readers that were waiting get the lock
///   before the next writer (Go hands it to them directly).
///
/// ```
/// let run = sim::Sim::new(0).run(|| async {
///     let rw = sim::sync::RwMutex::new("streamLock");
///     let r = rw.rlock().await;
///     r.runlock().await;
///     let w = rw.lock().await;
///     w.unlock().await;
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RwMutex {
    id: ResId,
}

/// A held read lock. Release with [`RwReadGuard::runlock`] or by dropping it.
#[must_use = "the read lock is released when the guard is dropped"]
pub struct RwReadGuard {
    id: ResId,
    held: bool,
    /// Who took its read lock, and where: which hold its RUnlock lets go
    /// of (by another task too, as Go allows), as a report tells them apart.
    task: TaskId,
    at: Option<crate::Frame>,
}

/// A held write lock. Release with [`RwWriteGuard::unlock`] or by dropping it.
#[must_use = "the write lock is released when the guard is dropped"]
pub struct RwWriteGuard {
    id: ResId,
    held: bool,
}

fn st(s: &mut State, id: ResId) -> (&mut Option<Hold>, &mut Option<u32>, &mut Vec<Hold>) {
    match &mut s.resources[id as usize].st {
        ResState::RwLock { writer, pending, readers } => (writer, pending, readers),
        _ => unreachable!(),
    }
}

impl RwMutex {
    /// The RWMutex `g` holds (for `Cond::wait_write`).
    pub(crate) fn of_write(g: &RwWriteGuard) -> RwMutex {
        RwMutex { id: g.id }
    }

    /// The RWMutex `g` read-holds (for `Cond::wait_read`).
    pub(crate) fn of_read(g: &RwReadGuard) -> RwMutex {
        RwMutex { id: g.id }
    }

    /// A new unlocked RWMutex.
    pub fn new(name: impl Into<Cow<'static, str>>) -> RwMutex {
        RwMutex::with_class(name, None)
    }

    /// A new RWMutex in lock class `class`.
    pub fn with_class(name: impl Into<Cow<'static, str>>, class: Option<&'static str>) -> RwMutex {
        let name = name.into();
        let id = rt::with(|s| {
            s.new_resource(
                name,
                ResKind::RwMutex,
                None,
                class,
                ResState::RwLock { writer: None, pending: None, readers: Vec::new() },
            )
        });
        RwMutex { id }
    }

    /// The resource id.
    pub fn id(&self) -> ResId {
        self.id
    }

    /// `rw.Lock()`: a scheduling point; blocks while a writer holds or owns
    /// the writer slot, then while readers remain.
    pub async fn lock(&self) -> RwWriteGuard {
        let id = self.id;
        Op::new(move || {
            rt::with(|s| {
                let me = s.current;
                // A writer, waiting or not, holds off new readers.
                s.write_asked(me, id);
                if s.take_grant().is_some() {
                    // The last reader handed the lock over (see `runlock`).
                    return Poll::Ready(RwWriteGuard { id, held: true });
                }
                let here = s.hold_here();
                let (writer, pending, readers) = st(s, id);
                if writer.is_some() || pending.is_some() {
                    s.block(Wait::Lock(id));
                    return Poll::Pending;
                }
                if readers.is_empty() {
                    *writer = Some(here);
                    s.record(me, EventKind::Lock, Some(id), None, None, None, None);
                    s.acquired(me, id);
                    Poll::Ready(RwWriteGuard { id, held: true })
                } else {
                    *pending = Some(me);
                    // Owning the writer slot changes the lock: readers now wait.
                    s.touch(id);
                    s.block(Wait::Drain(id));
                    Poll::Pending
                }
            })
        })
        .await
    }

    /// `rw.RLock()`: a scheduling point; blocks while a writer holds the lock
    /// or waits for it.
    pub async fn rlock(&self) -> RwReadGuard {
        let id = self.id;
        Op::new(move || {
            rt::with(|s| {
                if s.take_grant().is_some() {
                    // A writer's unlock handed us the read lock (at our top frame).
                    return Poll::Ready(RwReadGuard { id, held: true, task: s.current, at: s.top_frame(s.current) });
                }
                let here = s.hold_here();
                let (writer, pending, readers) = st(s, id);
                if writer.is_some() || pending.is_some() {
                    s.block(Wait::RLock(id));
                    Poll::Pending
                } else {
                    readers.push(here);
                    s.record(here.task, EventKind::RLock, Some(id), None, None, None, None);
                    s.acquired(here.task, id);
                    Poll::Ready(RwReadGuard { id, held: true, task: here.task, at: here.at })
                }
            })
        })
        .await
    }
}

fn release_write(id: ResId) {
    rt::with(|s| {
        let me = s.current;
        let (writer, _, _) = st(s, id);
        let Some(w) = writer.take() else {
            s.touch(id);
            panic!("sync: Unlock of unlocked RWMutex")
        };
        s.released(w.task, id);
        s.record(me, EventKind::Unlock, Some(id), None, None, None, None);
        // Readers that waited get the lock now, before any writer.
        let waiters = std::mem::take(&mut s.resources[id as usize].waiters);
        for &t in &waiters {
            if s.tasks[t as usize].status == Status::Blocked(Wait::RLock(id)) {
                let here = s.hold_of(t);
                st(s, id).2.push(here);
                s.record(t, EventKind::RLock, Some(id), None, None, Some(me), None);
                s.acquired(t, id);
                s.grant(t, 0);
            }
        }
        s.resources[id as usize].waiters = waiters;
        // Writers retry for the writer slot.
        s.wake_all(id);
    })
}

fn release_read(id: ResId, owner: TaskId, at: Option<crate::Frame>) {
    rt::with(|s| {
        let me = s.current;
        let (_, pending, readers) = st(s, id);
        // The guard's own read lock, taken by `owner` at `at`; else the
        // task's latest (nested RLocks are let go inner first: the hold left
        // is the outer one, where a report says it was taken); else, as Go
        // lets any goroutine RUnlock, the first taken.
        let pos = readers
            .iter()
            .rposition(|h| h.task == owner && h.at == at)
            .or_else(|| readers.iter().rposition(|h| h.task == me))
            .or(if readers.is_empty() { None } else { Some(0) });
        let Some(pos) = pos else {
            s.touch(id);
            panic!("sync: RUnlock of unlocked RWMutex")
        };
        let reader = readers.remove(pos).task;
        let handoff = if readers.is_empty() { pending.take() } else { None };
        s.record(me, EventKind::RUnlock, Some(id), None, None, None, None);
        s.released(reader, id);
        if let Some(w) = handoff {
            let here = s.hold_of(w);
            *st(s, id).0 = Some(here);
            s.record(w, EventKind::Lock, Some(id), None, None, Some(me), None);
            s.acquired(w, id);
            s.grant(w, 0);
        }
    })
}

impl RwWriteGuard {
    /// Says that another task will unlock this write lock (Go lets any
    /// goroutine call `Unlock`), as [`crate::sync::MutexGuard::hand_off`]
    /// does for a mutex: a wait on it is then judged only once no task
    /// can run. Not a scheduling point.
    ///
    /// ```
    /// use sim::sync::RwMutex;
    /// let run = sim::Sim::new(0).run(|| async {
    ///     let rw = RwMutex::new("rw");
    ///     let w = rw.lock().await;
    ///     w.hand_off();
    ///     sim::spawn("unlocker", async move {
    ///         sim::time::sleep(1_000).await;
    ///         w.unlock().await;
    ///     });
    ///     let r = rw.rlock().await; // waits for the unlocker, not for main
    ///     r.runlock().await;
    /// });
    /// assert_eq!(run.outcome, sim::Outcome::Completed);
    /// ```
    pub fn hand_off(&self) {
        let id = self.id;
        rt::with(|s| super::mutex::hand_off(s, id));
    }

    /// Go code that returns without `rw.Unlock()`: the write lock stays
    /// held by this task for good (a dropped guard would release it). Not
    /// a scheduling point. See [`crate::sync::MutexGuard::leak`].
    pub fn leak(mut self) {
        self.held = false;
    }

    /// `rw.Unlock()`: a scheduling point, then the release.
    pub async fn unlock(mut self) {
        self.held = false;
        let id = self.id;
        Op::new(move || {
            release_write(id);
            Poll::Ready(())
        })
        .await
    }
}

impl RwReadGuard {
    /// Go code that returns without `rw.RUnlock()`: the read lock stays
    /// held by this task for good, and a writer waits for ever (a dropped
    /// guard would release it). Not a scheduling point.
    ///
    /// ```
    /// use sim::sync::RwMutex;
    /// let run = sim::Sim::new(0).run(|| async {
    ///     let rw = RwMutex::new("rw");
    ///     rw.rlock().await.leak(); // return without RUnlock
    ///     rw.lock().await; // never taken
    /// });
    /// assert_eq!(run.outcome.verdict(), "deadlock");
    /// ```
    pub fn leak(mut self) {
        self.held = false;
    }

    /// `rw.RUnlock()`: a scheduling point, then the release.
    pub async fn runlock(mut self) {
        self.held = false;
        let (id, task, at) = (self.id, self.task, self.at);
        Op::new(move || {
            release_read(id, task, at);
            Poll::Ready(())
        })
        .await
    }
}

impl Drop for RwWriteGuard {
    fn drop(&mut self) {
        if self.held && rt::is_live() && !std::thread::panicking() {
            release_write(self.id);
        }
    }
}

impl Drop for RwReadGuard {
    fn drop(&mut self) {
        if self.held && rt::is_live() && !std::thread::panicking() {
            release_read(self.id, self.task, self.at);
        }
    }
}
