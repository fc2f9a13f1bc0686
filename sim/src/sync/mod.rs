//! Synchronization primitives known to the scheduler, mirroring the real ones:
//! Go's `sync.Mutex` and `sync.RWMutex`, Java's monitors (`synchronized`,
//! `wait`/`notify`), Go channels with `select`, a bounded byte [`Pipe`], and
//! atomic counters.
//!
//! Every operation that another task could observe is a scheduling point: the
//! task yields to the scheduler first, and the operation takes effect when the
//! scheduler picks the task again. Releasing with `unlock().await` /
//! `exit().await` is a scheduling point too; dropping a guard instead releases
//! at once, inside the current step (convenient for `defer`-style code and for
//! unwinding, but it explores fewer interleavings). A task that panics keeps
//! what it holds: the run ends with the panic, as a Go program would.

mod atomic;
mod chan;
mod monitor;
mod mutex;
mod pipe;
mod rwlock;
mod select;

pub use atomic::AtomicU64;
pub use chan::{Chan, RecvCase, SendCase};
pub use monitor::{Monitor, MonitorGuard};
pub use mutex::{Lock, Mutex, MutexGuard, Unlock};
pub use pipe::{Pipe, PipeClosed};
pub use rwlock::{RwMutex, RwReadGuard, RwWriteGuard};
pub use select::{select, SelectCase};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The common shape of an operation: yield at the first poll, then attempt
/// the operation at every later poll until it completes.
pub(crate) struct Op<F> {
    yielded: bool,
    /// A mutex or monitor this operation takes (see `State::yield_lock`).
    lock: Option<crate::rt::ResId>,
    attempt: F,
}

// `attempt` is only ever called through `&mut`, never pinned, so `Op` can
// move freely whatever it captures.
impl<F> Unpin for Op<F> {}

impl<F, T> Op<F>
where
    F: FnMut() -> Poll<T>,
{
    pub(crate) fn new(attempt: F) -> Op<F> {
        Op { yielded: false, lock: None, attempt }
    }

    /// An operation that takes lock `r`: it blocks at its scheduling point
    /// already if the lock is taken.
    pub(crate) fn locking(r: crate::rt::ResId, attempt: F) -> Op<F> {
        Op { yielded: false, lock: Some(r), attempt }
    }
}

impl<F, T> Future for Op<F>
where
    F: FnMut() -> Poll<T>,
{
    type Output = T;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<T> {
        if !self.yielded {
            self.yielded = true;
            let lock = self.lock;
            let go_on = crate::rt::with(|s| match lock {
                Some(r) => s.yield_lock(r),
                None => s.yield_now(),
            });
            if !go_on {
                return Poll::Pending;
            }
        }
        (self.attempt)()
    }
}
