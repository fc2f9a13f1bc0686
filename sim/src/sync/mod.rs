//! Synchronization primitives known to the scheduler, mirroring the real ones:
//! Go's `sync.Mutex` and `sync.RWMutex`, Java's monitors (`synchronized`,
//! `wait`/`notify`), Go channels with `select`, a bounded byte [`Pipe`],
//! atomic counters, Go's [`WaitGroup`] and [`Cond`] (built on monitors), and
//! Go's [`Once`] (on a mutex).
//!
//! Every operation that another task could observe is a scheduling point
//! (but for those the crate's documentation lists: a monitor's `notify`, and
//! read-only looks such as `len`): the task yields
//! to the scheduler first, and the operation takes effect when the
//! scheduler picks the task again. Releasing with `unlock().await` /
//! `exit().await` is a scheduling point too; dropping a guard instead releases
//! at once, inside the current step (convenient for `defer`-style code and for
//! unwinding, but it explores fewer interleavings). A task that panics keeps
//! what it holds: the run ends with the panic, as a Go program would.

mod atomic;
mod chan;
mod cond;
mod monitor;
mod mutex;
mod once;
mod pipe;
mod rwlock;
mod select;
mod waitgroup;

pub use atomic::AtomicU64;
pub use chan::{Chan, RecvCase, SendCase};
pub use cond::Cond;
pub use monitor::{Enter, Exit, Monitor, MonitorGuard};
pub use mutex::{Lock, Mutex, MutexGuard, Unlock};
pub use once::Once;
pub use pipe::{Pipe, PipeClosed, ReadError};
pub use rwlock::{RwMutex, RwReadGuard, RwWriteGuard};
pub use select::{select, Select, SelectCase};
pub use waitgroup::WaitGroup;

/// The lock class of a [`Cond`]'s monitor. Reports, the trace reader and
/// the charts tell a `Cond` from a plain monitor by it (a monitor a model
/// puts in this class is taken for one).
pub const COND_CLASS: &str = "sync.Cond";
/// The lock class of a [`WaitGroup`]'s monitor (see [`COND_CLASS`]).
pub const WAITGROUP_CLASS: &str = "sync.WaitGroup";
/// The lock class of a [`Once`]'s mutex: taken again by the same code
/// path on every call, which is no lock-order finding.
pub const ONCE_CLASS: &str = "sync.Once";

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The common shape of an operation: yield at the first poll, then attempt
/// the operation at every later poll until it completes.
pub(crate) struct Op<F> {
    yielded: bool,
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
        Op { yielded: false, attempt }
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
            // Locks have futures of their own, which block at this point
            // already if the lock is taken (see `State::yield_lock`).
            if !crate::rt::with(|s| s.yield_now()) {
                return Poll::Pending;
            }
        }
        (self.attempt)()
    }
}
