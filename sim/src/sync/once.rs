//! Go's `sync.Once`, built on a [`Mutex`].

use std::borrow::Cow;
use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

use super::Mutex;

/// Go's `sync.Once`: [`Once::call_once`] runs its function the first time
/// only. A call that comes while the first one runs waits for it to finish,
/// as Go's `Do` does: on a mutex of lock class `sync.Once` (the locks chart
/// gives the class; a report, the frame `sync.(*Once).Do`). So a function
/// that calls `call_once` on its own `Once` again deadlocks, as in Go, and
/// is reported as a task waiting for a lock it holds.
///
/// ```
/// use sim::sync::Once;
/// let run = sim::Sim::new(0).run(|| async {
///     let (once, runs) = (Once::new("closeOnce"), std::rc::Rc::new(std::cell::Cell::new(0)));
///     for name in ["closer-1", "closer-2"] {
///         let (once, runs) = (once.clone(), runs.clone());
///         sim::spawn(name, async move {
///             once.call_once(|| async move { runs.set(runs.get() + 1) }).await;
///         });
///     }
///     once.call_once(|| async {}).await; // main too, perhaps first
///     assert!(once.is_done());
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[derive(Clone)]
pub struct Once {
    m: Mutex,
    done: Rc<Cell<bool>>,
}

impl Once {
    /// A `Once` whose function has not run.
    pub fn new(name: impl Into<Cow<'static, str>>) -> Once {
        Once { m: Mutex::with_class(name, Some(super::ONCE_CLASS)), done: Rc::new(Cell::new(false)) }
    }

    /// True once a `call_once` function has returned. A read of the
    /// `Once`'s state, which an exhaustive search orders against the store.
    pub fn is_done(&self) -> bool {
        let done = self.done.get();
        crate::observe(self.m.id(), u64::from(done));
        done
    }

    /// `once.Do(f)`: runs `f` unless a call did before. Done is seen at once
    /// (Go's atomic load, read as the state it is); else the mutex is taken,
    /// done looked at again, `f` run and awaited, done set, and the mutex
    /// let go, each lock and unlock a scheduling point.
    pub async fn call_once<F, Fut>(&self, f: F)
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ()>,
    {
        crate::access(self.m.id(), false);
        if self.done.get() {
            return;
        }
        let _f = crate::frame("sync.(*Once).Do");
        let g = self.m.lock().await;
        if !self.done.get() {
            f().await;
            // Go sets done after f returns (a deferred store): a call that
            // saw it unset waits on the mutex meanwhile.
            crate::access(self.m.id(), true);
            self.done.set(true);
        }
        g.unlock().await;
    }
}
