//! Go's `context`: the cancellation signal the goroutines of one request
//! share. `ctx.Done()` is a [`Chan::signal`] channel, closed once by the
//! first `cancel()` or by the timeout; `cancel()` may be called any number
//! of times, from any declared task, as Go's may.
//!
//! Who may cancel is declared as a channel's senders are
//! ([`CancelFunc::declare`], [`CancelFunc::declare_for`]): a wait on
//! `ctx.Done()` whose declared cancellers have all returned is then dead by
//! itself ("no task left that may send on it or close it"), found as the
//! last one returns. A timeout's timer is declared a canceller by
//! [`with_timeout`] (so, there, every task that cancels must be declared).
//! With none declared ([`with_cancel`] alone), any task may cancel, and such
//! a wait is found only when no task can run.
//!
//! ```
//! use sim::context;
//! use sim::sync::{select, Chan};
//! let run = sim::Sim::new(0).run(|| async {
//!     // A worker gives up when its caller's deadline passes.
//!     let (ctx, cancel) = context::with_timeout("req", 1_000);
//!     cancel.declare(); // main cancels too, as `defer cancel()` does
//!     let results: Chan<u32> = Chan::new("results", 0);
//!     results.declare_receiver();
//!     let (c, tx) = (ctx.clone(), results.clone());
//!     let worker = sim::spawn("worker", async move {
//!         tx.declare_sender();
//!         let (mut send, mut done) = (tx.send_case(7), c.done().recv_case());
//!         select(&mut [&mut send, &mut done], false).await;
//!     });
//!     worker.join().await; // nobody receives: the worker waits for the deadline
//!     assert_eq!(ctx.err(), Some(context::DEADLINE_EXCEEDED));
//!     cancel.cancel().await;
//!     cancel.cancel().await; // again: nothing happens, as in Go
//! });
//! assert_eq!(run.outcome, sim::Outcome::Completed);
//! ```

use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;

use crate::sync::Chan;
use crate::TaskId;

/// `context.Canceled`'s text: `ctx.Err()` after a `cancel()`.
pub const CANCELED: &str = "context canceled";
/// `context.DeadlineExceeded`'s text: `ctx.Err()` after the timeout.
pub const DEADLINE_EXCEEDED: &str = "context deadline exceeded";

/// A `context.Context` that can be cancelled: its [`Context::done`] channel
/// and [`Context::err`]. Clones share both.
#[derive(Clone)]
pub struct Context {
    done: Chan<()>,
    err: Rc<Cell<Option<&'static str>>>,
}

/// The `cancel` function `context.WithCancel` returns. Clones cancel the
/// same context.
#[derive(Clone)]
pub struct CancelFunc {
    ctx: Context,
}

/// `context.WithCancel(ctx)`: a context and the function that cancels it.
/// `name` names its done channel in reports (`"<name>.Done()"`).
pub fn with_cancel(name: impl Into<Cow<'static, str>>) -> (Context, CancelFunc) {
    let name: String = name.into().into_owned();
    let ctx = Context { done: Chan::signal(format!("{name}.Done()")), err: Rc::new(Cell::new(None)) };
    (ctx.clone(), CancelFunc { ctx })
}

/// `context.WithTimeout(ctx, d)`: [`with_cancel`], and a timer that cancels
/// it with [`DEADLINE_EXCEEDED`] after `timeout_ns` of virtual time, unless
/// it was cancelled before. The timer is a background task
/// (`"<name> timer"`), declared a canceller here, so that a wait on
/// `ctx.Done()` is judged while it runs: the cancellers are then declared,
/// and every other task that calls `cancel()` (Go's `defer cancel()`) must
/// be declared too ([`CancelFunc::declare`]), on every seed alike.
pub fn with_timeout(name: impl Into<Cow<'static, str>>, timeout_ns: u64) -> (Context, CancelFunc) {
    let name: String = name.into().into_owned();
    let (ctx, cancel) = with_cancel(name.clone());
    let timer = cancel.clone();
    let h = crate::spawn_background(format!("{name} timer"), async move {
        crate::time::sleep(timeout_ns).await;
        timer.cancel_with(DEADLINE_EXCEEDED).await;
    });
    cancel.declare_for(h.id());
    (ctx, cancel)
}

impl Context {
    /// `ctx.Done()`: closed once the context is cancelled. Receive from it,
    /// or select on [`Chan::recv_case`].
    pub fn done(&self) -> &Chan<()> {
        &self.done
    }

    /// `ctx.Err()`: `None` until the context is cancelled, then
    /// [`CANCELED`] or [`DEADLINE_EXCEEDED`].
    pub fn err(&self) -> Option<&'static str> {
        self.err.get()
    }
}

impl CancelFunc {
    /// `cancel()`: closes `ctx.Done()` unless it is closed already (then it
    /// does nothing, as Go's does). A scheduling point.
    ///
    /// # Panics
    /// Once cancellers are declared, if the caller is not one of them (as a
    /// send by an undeclared sender does), and the context is still open.
    pub async fn cancel(&self) {
        self.cancel_with(CANCELED).await
    }

    async fn cancel_with(&self, why: &'static str) {
        if self.ctx.done.close_once().await {
            self.ctx.err.set(Some(why));
        }
    }

    /// Declares that the current task may call [`CancelFunc::cancel`].
    pub fn declare(&self) {
        self.ctx.done.declare_sender();
    }

    /// Declares that task `task` may call [`CancelFunc::cancel`]: for a task
    /// spawned with it, right after the spawn.
    pub fn declare_for(&self, task: TaskId) {
        self.ctx.done.declare_sender_for(task);
    }
}
