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
//! A context made from another ([`Context::with_cancel`],
//! [`Context::with_timeout`], Go's `WithCancel(parent)`) is cancelled with
//! it, with its error, as Go's children are; so the parent's cancellers,
//! declared before or after, are declared its cancellers too. A parent
//! whose cancellers were never declared may be cancelled by any task, and
//! so may its children: a child's own cancellers (a timeout's timer among
//! them) are then kept, and declared once the parent's are, so a helper
//! that makes a child and declares its cancel works under any parent.
//! [`Context::background`] is never cancelled.
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
use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::rc::{Rc, Weak};

use crate::sync::Chan;
use crate::TaskId;

/// `context.Canceled`'s text: `ctx.Err()` after a `cancel()`.
pub const CANCELED: &str = "context canceled";
/// `context.DeadlineExceeded`'s text: `ctx.Err()` after the timeout.
pub const DEADLINE_EXCEEDED: &str = "context deadline exceeded";

/// A `context.Context`: its [`Context::done`] channel and [`Context::err`].
/// Clones share both.
#[derive(Clone)]
pub struct Context {
    node: Rc<Node>,
}

/// One context of a tree, as Go's `cancelCtx`.
struct Node {
    done: Chan<()>,
    err: Cell<Option<&'static str>>,
    /// Contexts made from this one, cancelled with it (Go's `children`).
    children: RefCell<Vec<Rc<Node>>>,
    /// The tasks declared to cancel it, its own and its ancestors'.
    cancellers: RefCell<Vec<TaskId>>,
    /// An ancestor's cancellers were never declared (any task may cancel
    /// it): nor are this one's on its channel, or a wait on it could be
    /// judged with a canceller left out; `cancellers` keeps them until then.
    open_ancestor: Cell<bool>,
    /// `context.Background()`: never cancelled; its children are roots.
    background: bool,
    /// The parent, whose `children` a cancel of this one leaves (Go's
    /// `removeChild`); weak, so that a tree holds no cycle.
    parent: Weak<Node>,
    /// Closed, and every context under it too, by the cancel that closed
    /// it: a later cancel need not walk it again.
    settled: Cell<bool>,
    /// The task of its timer (a `with_timeout` context's), which a cancel
    /// stops as Go's `timerCtx.cancel` stops its timer.
    timer: Cell<Option<TaskId>>,
}

/// The `cancel` function `context.WithCancel` returns. Clones cancel the
/// same context.
#[derive(Clone)]
pub struct CancelFunc {
    ctx: Context,
}

/// `context.WithCancel(context.Background())`: a context and the function
/// that cancels it. `name` names its done channel in reports
/// (`"<name>.Done()"`).
pub fn with_cancel(name: impl Into<Cow<'static, str>>) -> (Context, CancelFunc) {
    child(None, name.into(), false)
}

/// `context.WithTimeout(context.Background(), d)`: [`with_cancel`], and a
/// timer that cancels it with [`DEADLINE_EXCEEDED`] after `timeout_ns` of
/// virtual time, unless it was cancelled before. The timer is a background
/// task (`"<name> timer"`), declared a canceller here, so that a wait on
/// `ctx.Done()` is judged while it runs: the cancellers are then declared,
/// and every other task that calls `cancel()` (Go's `defer cancel()`) must
/// be declared too ([`CancelFunc::declare`]), on every seed alike. A
/// cancel before the deadline (its own, or a parent's) stops the timer, as
/// Go's does: its task ends in that step, and the run's clock does not go
/// on to a deadline that no longer cancels anything. A timeout of 0 (a
/// deadline already past) is cancelled as it is made, with no timer.
///
/// ```
/// use sim::context;
/// let run = sim::Sim::new(0).run(|| async {
///     let (ctx, cancel) = context::with_timeout("rpc", 5_000_000_000);
///     cancel.declare();
///     cancel.cancel().await; // the call returned: Go's defer cancel()
///     assert_eq!(ctx.err(), Some(context::CANCELED));
///     let reply: sim::sync::Chan<()> = sim::sync::Chan::new("reply", 0);
///     reply.recv().await; // nobody sends
/// });
/// // Found as it blocks, not 5 s later at the stopped timer's deadline.
/// assert!(matches!(run.outcome, sim::Outcome::Deadlock(_)));
/// assert!(run.time_ns < 1_000_000, "{}", run.time_ns);
/// ```
pub fn with_timeout(name: impl Into<Cow<'static, str>>, timeout_ns: u64) -> (Context, CancelFunc) {
    let name = name.into();
    timed(&name, child(None, name.clone(), timeout_ns == 0), timeout_ns)
}

/// A context made from `parent` (none: from Background), as Go's
/// `propagateCancel` links it; `expired`, one whose deadline has passed as
/// it is made (a timeout of 0), which Go cancels at once with
/// [`DEADLINE_EXCEEDED`] unless the parent's cancel came first.
fn child(parent: Option<&Rc<Node>>, name: Cow<'static, str>, expired: bool) -> (Context, CancelFunc) {
    let parent = parent.filter(|p| !p.background);
    let expired = expired.then_some(DEADLINE_EXCEEDED);
    let (done, err, cancellers, open) = match parent {
        None if expired.is_some() => (Chan::signal_closed(format!("{name}.Done()")), expired, Vec::new(), false),
        None => (Chan::signal(format!("{name}.Done()")), None, Vec::new(), false),
        Some(p) => {
            // Go cancels it as it is made if the parent is: its own channel,
            // closed now. Either way the parent's cancellers are its own, so
            // that who must be declared does not depend on which came first.
            let err = p.err.get().or(expired);
            let done = match err {
                Some(_) => Chan::signal_closed(format!("{name}.Done()")),
                None => Chan::signal(format!("{name}.Done()")),
            };
            let known = !p.open_ancestor.get() && crate::rt::with(|s| s.end_known(p.done.id(), crate::rt::Dir::Send));
            let cancellers = p.cancellers.borrow().clone();
            if known {
                for &t in &cancellers {
                    done.declare_sender_for(t);
                }
            }
            (done, err, cancellers, !known)
        }
    };
    let mut node = Node::new(done, cancellers, open, false);
    node.err.set(err);
    node.settled.set(err.is_some());
    // One cancelled as it is made is in no parent's list (Go's removeChild).
    let linked = parent.filter(|_| err.is_none());
    if let Some(p) = linked {
        node.parent = Rc::downgrade(p);
    }
    let node = Rc::new(node);
    if let Some(p) = linked {
        p.children.borrow_mut().push(node.clone());
    }
    let ctx = Context { node };
    (ctx.clone(), CancelFunc { ctx })
}

/// [`with_cancel`]'s context with a timer that cancels it with
/// [`DEADLINE_EXCEEDED`] after `timeout_ns`: a background task, declared
/// a canceller (kept, under a parent any task may cancel: see
/// [`CancelFunc::declare_for`]), and not started for one already cancelled.
fn timed(name: &str, (ctx, cancel): (Context, CancelFunc), timeout_ns: u64) -> (Context, CancelFunc) {
    if ctx.err().is_some() {
        return (ctx, cancel);
    }
    let timer = cancel.clone();
    // Go's deadline counts from the call, not from the timer task's first
    // step; and that step sets the timer, with no scheduling point before
    // it, so a cancel finds the task not started or asleep (both stopped).
    let deadline = crate::time::now().saturating_add(timeout_ns);
    let h = crate::spawn_background(format!("{name} timer"), async move {
        crate::time::sleep_until(deadline).await;
        timer.cancel_with(DEADLINE_EXCEEDED, Location::caller()).await;
    });
    cancel.declare_for(h.id());
    ctx.node.timer.set(Some(h.id()));
    (ctx, cancel)
}

impl Context {
    /// `context.Background()`: never cancelled. A wait on its `done()`
    /// (Go's nil channel) never ends, and is reported so.
    pub fn background() -> Context {
        let done = Chan::signal("context.Background().Done()");
        crate::rt::with(|s| s.declare_no_holders(done.id(), crate::rt::Dir::Send));
        Context { node: Rc::new(Node::new(done, Vec::new(), false, true)) }
    }

    /// `context.WithCancel(ctx)`: a child of this context, cancelled by its
    /// own `cancel()` or with this one (taking its error).
    ///
    /// ```
    /// use sim::context;
    /// let run = sim::Sim::new(0).run(|| async {
    ///     let (parent, cancel) = context::with_cancel("server");
    ///     cancel.declare();
    ///     let (child, _cancel_child) = parent.with_cancel("request");
    ///     cancel.cancel().await; // the server shuts down: every request ends
    ///     child.done().recv().await;
    ///     assert_eq!(child.err(), Some(context::CANCELED));
    /// });
    /// assert_eq!(run.outcome, sim::Outcome::Completed);
    /// ```
    pub fn with_cancel(&self, name: impl Into<Cow<'static, str>>) -> (Context, CancelFunc) {
        child(Some(&self.node), name.into(), false)
    }

    /// `context.WithTimeout(ctx, d)`: [`Context::with_cancel`], and a timer
    /// that cancels the child as [`with_timeout`]'s does. Where any task may
    /// cancel this context (its cancellers were never declared), so may any
    /// the child, and its timer is kept as a canceller until this one's
    /// cancellers are declared.
    pub fn with_timeout(&self, name: impl Into<Cow<'static, str>>, timeout_ns: u64) -> (Context, CancelFunc) {
        let name = name.into();
        timed(&name, child(Some(&self.node), name.clone(), timeout_ns == 0), timeout_ns)
    }

    /// `ctx.Done()`: closed once the context is cancelled. Receive from it,
    /// or select on [`Chan::recv_case`].
    pub fn done(&self) -> &Chan<()> {
        &self.node.done
    }

    /// `ctx.Err()`: `None` until the context is cancelled, then
    /// [`CANCELED`] or [`DEADLINE_EXCEEDED`].
    pub fn err(&self) -> Option<&'static str> {
        // A read of the context's state, which an exhaustive search must
        // order against the cancel that closes its channel: without it, a
        // check of `ctx.Err()` before a send was taken for independent of
        // the cancel, and a leak was "proved" impossible.
        let err = self.node.err.get();
        let found = match err {
            None => 0,
            Some(e) if e == CANCELED => 1,
            Some(_) => 2,
        };
        crate::observe(self.node.done.id(), found);
        err
    }
}

impl Node {
    fn new(done: Chan<()>, cancellers: Vec<TaskId>, open_ancestor: bool, background: bool) -> Node {
        Node {
            done,
            err: Cell::new(None),
            children: RefCell::new(Vec::new()),
            cancellers: RefCell::new(cancellers),
            open_ancestor: Cell::new(open_ancestor),
            background,
            parent: Weak::new(),
            settled: Cell::new(false),
            timer: Cell::new(None),
        }
    }
}

impl CancelFunc {
    /// `cancel()`: closes `ctx.Done()` unless it is closed already (then it
    /// does nothing, as Go's does), and then each context made from it that
    /// is still open, with the same error. Each close is a scheduling point.
    ///
    /// # Panics
    /// Once cancellers are declared, if the caller is not one of them, on
    /// every call: a wait on `ctx.Done()` judged without it could have been
    /// reported deadlocked.
    #[track_caller]
    pub fn cancel(&self) -> impl std::future::Future<Output = ()> + '_ {
        self.cancel_with(CANCELED, Location::caller())
    }

    /// `cancel()` with error `why`, called on the model's line `at`.
    async fn cancel_with(&self, why: &'static str, at: &'static Location<'static>) {
        let root = &self.ctx.node;
        crate::rt::with_at(at, |s| {
            let (id, me) = (root.done.id(), s.current);
            // Kept cancellers (under a parent not declared yet) are declared
            // ones too: a caller left out of them is told now, on every
            // seed, not only once the parent's are declared.
            let kept = root.open_ancestor.get() && {
                let c = root.cancellers.borrow();
                !c.is_empty() && !c.contains(&me)
            };
            if kept || s.declared_without(id, crate::rt::Dir::Send, me) {
                s.touch(id);
                s.misuse(format_args!(
                    "sim: task {me} (\"{}\") cancels context \"{}\", whose cancellers were declared without \
                     it: declare every task that calls cancel(), when it starts (CancelFunc::declare, \
                     CancelFunc::declare_for), or none (with_timeout declares its timer, so then every one)",
                    s.tasks[me as usize].name,
                    s.resources[id as usize].name.trim_end_matches(".Done()")
                ));
            }
        });
        // Go closes the children under the parent's lock, one by one.
        let (mut open, mut closed) = (vec![root.clone()], Vec::new());
        while let Some(node) = open.pop() {
            if node.done.close_once(at).await {
                node.err.set(Some(why));
                open.extend(node.children.borrow().iter().rev().cloned());
                closed.push(node);
            } else if !node.settled.get() {
                // Closed by a cancel still under way (the context's own):
                // Go's parent waits on the child's lock until that one has
                // closed its children; this walk closes them too, so it
                // returns with none open.
                open.extend(node.children.borrow().iter().rev().cloned());
            }
        }
        let me = crate::rt::with(|s| s.current);
        for node in closed {
            node.settled.set(true);
            // Go's timerCtx.cancel stops the timer once the context and its
            // children are closed: the timer task ends where it sleeps, and
            // the run does not wait for a deadline that no longer cancels
            // anything. (A timer cancelling its own context is the caller.)
            if let Some(t) = node.timer.get().filter(|&t| t != me) {
                crate::rt::with(|s| crate::rt::execution::stop_timer_task(s, t));
            }
        }
        // Go's removeChild, once it is closed (before, a parent's cancel
        // in between would pass it by, and return with it open): a context
        // cancelled by its own cancel leaves its parent's list, which a
        // later cancel of the parent then need not walk.
        if let Some(p) = root.parent.upgrade() {
            p.children.borrow_mut().retain(|c| !Rc::ptr_eq(c, root));
        }
    }

    /// Declares that the current task may call [`CancelFunc::cancel`].
    #[track_caller]
    pub fn declare(&self) {
        self.declare_for(crate::rt::with(|s| s.current));
    }

    /// Declares that task `task` may call [`CancelFunc::cancel`]: for a task
    /// spawned with it, right after the spawn. It may then cancel every
    /// context made from this one too. On a context made from one whose
    /// cancellers were never declared (any task may cancel it, and so this
    /// one), the canceller is kept, and declared with every other kept
    /// under that one once its cancellers are declared.
    #[track_caller]
    pub fn declare_for(&self, task: TaskId) {
        let root = &self.ctx.node;
        // On a context any task may cancel (an ancestor's cancellers were
        // never declared), the canceller is kept, not declared: its channel
        // stays undeclared. Once the ancestor's are declared, every context
        // under it declares all it kept (see below).
        let keep_only = root.open_ancestor.get();
        let mut open = vec![root.clone()];
        while let Some(node) = open.pop() {
            let mut c = node.cancellers.borrow_mut();
            if !c.contains(&task) {
                c.push(task);
            }
            if !keep_only {
                if node.open_ancestor.replace(false) {
                    // Known from now on: the cancellers kept while it was
                    // not, a timer's among them, and this one.
                    for &u in c.iter() {
                        node.done.declare_sender_for(u);
                    }
                } else {
                    node.done.declare_sender_for(task);
                }
            }
            drop(c);
            open.extend(node.children.borrow().iter().cloned());
        }
    }
}
