//! Go's `sync.Mutex`.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::rt::{self, Hold, ResId, ResKind, ResState, State, Wait};
use crate::trace::EventKind;

/// Go's `sync.Mutex`: not reentrant (locking it again from the holder is a
/// one-task deadlock), no FIFO hand-off (an unlock wakes every waiter and the
/// scheduler picks which one gets it).
///
/// ```
/// let run = sim::Sim::new(0).run(|| async {
///     let mu = sim::sync::Mutex::new("mu");
///     let g = mu.lock().await;
///     g.unlock().await;
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Mutex {
    id: ResId,
}

/// A held [`Mutex`]. Release with [`MutexGuard::unlock`] (a scheduling point)
/// or by dropping it (releases inside the current step).
#[must_use = "the mutex is released when the guard is dropped"]
pub struct MutexGuard {
    id: ResId,
    held: bool,
}

impl Mutex {
    /// A new unlocked mutex named `name` in reports and traces.
    pub fn new(name: impl Into<Cow<'static, str>>) -> Mutex {
        Mutex::with_class(name, None)
    }

    /// A new mutex that belongs to lock class `class` (all instances of one
    /// field of one type, as lockdep groups them).
    pub fn with_class(name: impl Into<Cow<'static, str>>, class: Option<&'static str>) -> Mutex {
        let name = name.into();
        let id = rt::with(|s| s.new_resource(name, ResKind::Mutex, None, class, ResState::Mutex { holder: None }));
        Mutex { id }
    }

    /// The resource id (creation order within the run).
    pub fn id(&self) -> ResId {
        self.id
    }

    /// The mutex `g` holds (for `Cond::wait`, which locks it again).
    pub(crate) fn of(g: &MutexGuard) -> Mutex {
        Mutex { id: g.id }
    }

    /// `mu.Lock()`: a scheduling point; blocks while another task holds it.
    pub fn lock(&self) -> Lock {
        Lock { id: self.id, yielded: false }
    }
}

/// The future of [`Mutex::lock`].
// Written out rather than as an `async fn` over `Op` like the other
// primitives: a lock is the commonest operation of every model, and one
// state machine less per lock shows in a hunt's schedules per second.
#[must_use = "futures do nothing unless awaited"]
pub struct Lock {
    id: ResId,
    yielded: bool,
}

impl Future for Lock {
    type Output = MutexGuard;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<MutexGuard> {
        let Lock { id, ref mut yielded } = *self;
        rt::with(|s| lock_step(s, id, yielded)).map(|()| MutexGuard { id, held: true })
    }
}

/// One poll of a lock: its scheduling point (once), then the attempt. One
/// function, so that a lock taken without returning to the step loop (see
/// `State::yield_now`) is a single call.
#[inline(never)]
fn lock_step(s: &mut State, id: ResId, yielded: &mut bool) -> Poll<()> {
    if !*yielded {
        *yielded = true;
        if !s.yield_lock(id) {
            return Poll::Pending;
        }
    }
    let t = s.current;
    // `State::hold_of` spelled out: through it, the hold was built before
    // the borrow of the mutex and copied in, 1.5% of `step_cost`'s
    // instructions; this is 0.3%.
    let frames = &s.tasks[t as usize].frames;
    let (at, depth) = (frames.last().copied(), rt::depth_of(frames.len()));
    let ResState::Mutex { holder } = &mut s.resources[id as usize].st else { unreachable!() };
    if holder.is_some() {
        s.block(Wait::Lock(id));
        return Poll::Pending;
    }
    *holder = Some(Hold { task: t, handed: false, depth, at });
    s.record(t, EventKind::Lock, Some(id), None, None, None, None);
    s.took_lock(id, t);
    s.acquired_at(t, id, at);
    Poll::Ready(())
}

/// Marks the hold on `id` (a mutex, or an RWMutex's write lock) handed off
/// (`Hold::handed`), once: whoever calls it, the locker or a task the
/// guard was moved to.
pub(crate) fn hand_off(s: &mut State, id: ResId) {
    let t = s.current;
    let hold = match &mut s.resources[id as usize].st {
        ResState::Mutex { holder } => holder.as_mut(),
        ResState::RwLock { writer, .. } => writer.as_mut(),
        _ => None,
    };
    let Some(h) = hold.filter(|h| !h.handed) else { return };
    h.handed = true;
    // No longer the locker's frame's either: the task's `held` drops it, so
    // `State::frame_returned` would not see that frame return.
    h.depth = 0;
    let locker = h.task;
    // No longer the locker's for lock order: the locks it takes next are
    // not taken while holding this one.
    s.released(locker, id);
    // In the trace, so that its reader knows it too.
    s.record(t, EventKind::Value, Some(id), Some(1), None, None, Some("hand_off"));
}

#[inline(always)]
fn release(s: &mut State, id: ResId) {
    let ResState::Mutex { holder } = &mut s.resources[id as usize].st else { unreachable!() };
    let Some(h) = holder.take() else {
        s.touch(id);
        panic!("sync: unlock of unlocked mutex")
    };
    s.released(h.task, id);
    let t = s.current;
    s.record(t, EventKind::Unlock, Some(id), None, None, None, None);
    s.wake_all(id);
}

/// One poll of an unlock: its scheduling point (once), then the release.
#[inline(never)]
fn unlock_step(s: &mut State, id: ResId, yielded: &mut bool) -> Poll<()> {
    if !*yielded {
        *yielded = true;
        if !s.yield_now() {
            return Poll::Pending;
        }
    }
    release(s, id);
    Poll::Ready(())
}

impl MutexGuard {
    /// Says that another task will unlock this mutex: Go lets any goroutine
    /// call `Unlock`. Call it in the task that locked, then move the guard
    /// to the one that unlocks (or in that one, before anything waits on
    /// the mutex). Otherwise the task that locked is taken for
    /// the one that will unlock, and a task waiting for the lock while that
    /// one waits for it is reported deadlocked at once, though the guard's
    /// new owner would unlock. Until the unlock, a wait on this mutex is
    /// judged only once no task can run (reports still name the task that
    /// locked as its holder). Not a scheduling point.
    ///
    /// ```
    /// use sim::sync::{Chan, Mutex};
    /// let run = sim::Sim::new(0).run(|| async {
    ///     let mu = Mutex::new("mu");
    ///     let ch: Chan<u32> = Chan::new("ch", 0);
    ///     let g = mu.lock().await;
    ///     g.hand_off();
    ///     sim::spawn("unlocker", async move {
    ///         sim::time::sleep(1_000).await;
    ///         g.unlock().await; // mu.Unlock() in another goroutine
    ///     });
    ///     let tx = ch.clone();
    ///     let h = sim::spawn("sender", async move {
    ///         let g = mu.lock().await; // waits for the unlocker, not for main
    ///         tx.send(1).await;
    ///         g.unlock().await;
    ///     });
    ///     ch.declare_sender_for(h.id());
    ///     ch.declare_receiver();
    ///     assert_eq!(ch.recv().await, Some(1));
    /// });
    /// assert_eq!(run.outcome, sim::Outcome::Completed);
    /// ```
    pub fn hand_off(&self) {
        let id = self.id;
        rt::with(|s| hand_off(s, id));
    }

    /// Go code that returns without `mu.Unlock()`: the mutex stays locked
    /// by this task for good (a dropped guard would release it, as Rust's
    /// guards do, and the bug would be gone). Not a scheduling point.
    ///
    /// ```
    /// use sim::sync::Mutex;
    /// let run = sim::Sim::new(0).run(|| async {
    ///     let mu = Mutex::new("mu");
    ///     mu.lock().await.leak(); // return without Unlock
    ///     mu.lock().await; // never taken
    /// });
    /// assert_eq!(run.outcome.verdict(), "deadlock");
    /// ```
    pub fn leak(self) {
        // The hold stays in the engine's books, under the task that locked.
        std::mem::forget(self);
    }

    /// `mu.Unlock()`: a scheduling point, then the release.
    pub fn unlock(self) -> Unlock {
        let id = self.id;
        // The future releases: this guard has nothing left to do.
        std::mem::forget(self);
        Unlock { id, yielded: false }
    }
}

/// The future of [`MutexGuard::unlock`].
#[must_use = "futures do nothing unless awaited"]
pub struct Unlock {
    id: ResId,
    yielded: bool,
}

impl Future for Unlock {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let Unlock { id, ref mut yielded } = *self;
        rt::with(|s| unlock_step(s, id, yielded))
    }
}

impl Drop for Unlock {
    /// An unlock dropped before its first poll releases as its guard would
    /// have; once polled, the unlock is under way and completes only in a poll.
    #[inline]
    fn drop(&mut self) {
        if !self.yielded {
            release_dropped(self.id);
        }
    }
}

impl Drop for MutexGuard {
    #[inline]
    fn drop(&mut self) {
        if self.held {
            release_dropped(self.id);
        }
    }
}

/// The release of a guard or an unpolled unlock that is dropped: apart, so
/// that the drop of an unlock that ran (every `unlock().await`) is one test.
#[cold]
#[inline(never)]
fn release_dropped(id: ResId) {
    if rt::is_live() && !std::thread::panicking() {
        rt::with(|s| release(s, id));
    }
}
