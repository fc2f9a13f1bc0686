//! Go's `sync.Mutex`.

use std::borrow::Cow;
use std::task::Poll;

use super::Op;
use crate::rt::{self, ResId, ResKind, ResState, Wait};
use crate::trace::EventKind;

/// Go's `sync.Mutex`: not reentrant (locking it again from the holder is a
/// one-task deadlock), no FIFO hand-off (an unlock wakes every waiter and the
/// scheduler picks which one gets it).
///
/// ```
/// sim::Sim::new(0).run(|| async {
///     let mu = sim::sync::Mutex::new("mu");
///     let g = mu.lock().await;
///     g.unlock().await;
/// });
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

    /// `mu.Lock()`: a scheduling point; blocks while another task holds it.
    pub async fn lock(&self) -> MutexGuard {
        let id = self.id;
        Op::locking(id, move || {
            rt::with(|s| {
                let here = s.hold_here();
                let ResState::Mutex { holder } = &mut s.resources[id as usize].st else { unreachable!() };
                if holder.is_none() {
                    *holder = Some(here);
                    s.record(here.task, EventKind::Lock, Some(id), None, None, None, None);
                    s.took_lock(id, here.task);
                    s.acquired(here.task, id);
                    Poll::Ready(MutexGuard { id, held: true })
                } else {
                    s.block(Wait::Lock(id));
                    Poll::Pending
                }
            })
        })
        .await
    }
}

fn release(id: ResId) {
    rt::with(|s| {
        let ResState::Mutex { holder } = &mut s.resources[id as usize].st else { unreachable!() };
        let Some(h) = holder.take() else { panic!("sync: unlock of unlocked mutex") };
        s.released(h.task, id);
        let t = s.current;
        s.record(t, EventKind::Unlock, Some(id), None, None, None, None);
        s.wake_all(id);
    })
}

impl MutexGuard {
    /// `mu.Unlock()`: a scheduling point, then the release.
    pub async fn unlock(mut self) {
        self.held = false;
        let id = self.id;
        Op::new(move || {
            release(id);
            Poll::Ready(())
        })
        .await
    }
}

impl Drop for MutexGuard {
    fn drop(&mut self) {
        if self.held && rt::is_live() && !std::thread::panicking() {
            release(self.id);
        }
    }
}
