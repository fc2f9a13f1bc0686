//! Spawning virtual threads (goroutines, Java threads) and joining them.
//!
//! ```
//! let run = sim::Sim::new(0).run(|| async {
//!     let h = sim::spawn("worker", async { 40 + 2 });
//!     assert_eq!(h.join().await, 42);
//! });
//! assert!(!run.outcome.is_failure());
//! ```

use std::borrow::Cow;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::rt::{self, cell::TaskCell, execution::spawn_task, Status, TaskId, Wait};

/// Handle to a spawned task. Its result waits in the task's own cell until
/// [`JoinHandle::join`] takes it; a handle never leaves its execution's thread.
pub struct JoinHandle<T> {
    task: TaskId,
    /// The execution that spawned the task (see `State::run_id`).
    run: u64,
    /// The handle does not own a `T`.
    _output: PhantomData<fn() -> T>,
    /// Not `Send`: execution numbers are per thread.
    _not_send: PhantomData<*const ()>,
}

fn spawn_inner<T: 'static>(
    name: Cow<'static, str>,
    background: bool,
    fut: impl Future<Output = T> + 'static,
) -> JoinHandle<T> {
    rt::with(|s| {
        let cell = TaskCell::new(&mut s.blocks, fut);
        let task = spawn_task(s, name, background, cell);
        JoinHandle { task, run: s.run_id, _output: PhantomData, _not_send: PhantomData }
    })
}

/// Spawns a foreground task: the run lasts until it returns.
pub fn spawn<T: 'static>(name: impl Into<Cow<'static, str>>, fut: impl Future<Output = T> + 'static) -> JoinHandle<T> {
    spawn_inner(name.into(), false, fut)
}

/// Spawns a background task (a server loop, a receiver): the run may end
/// while it is still blocked, and it is then "parked", not deadlocked.
///
/// ```
/// use sim::sync::Chan;
/// // A loop nobody sends to any more: parked in the background...
/// let serve = |background: bool| {
///     sim::Sim::new(0).run(move || async move {
///         let requests: Chan<u32> = Chan::new("requests", 0);
///         let server = async move { while requests.recv().await.is_some() {} };
///         if background {
///             sim::spawn_background("server", server);
///         } else {
///             sim::spawn("server", server);
///         }
///     })
/// };
/// assert_eq!(serve(true).outcome, sim::Outcome::Completed);
/// // ...and blocked for good in the foreground, where it must return.
/// assert!(serve(false).outcome.deadlock().is_some());
/// ```
pub fn spawn_background<T: 'static>(
    name: impl Into<Cow<'static, str>>,
    fut: impl Future<Output = T> + 'static,
) -> JoinHandle<T> {
    spawn_inner(name.into(), true, fut)
}

impl<T> JoinHandle<T> {
    /// The task's id (spawn order; `main` is 0).
    pub fn id(&self) -> TaskId {
        self.task
    }

    /// Waits for the task to return and gives its result. A scheduling point.
    pub async fn join(self) -> T {
        Join { task: self.task, yielded: false }.await;
        rt::with(|s| {
            assert_eq!(
                s.run_id, self.run,
                "a JoinHandle was joined in another execution than the one that spawned its task"
            );
            // SAFETY: the handle comes from `spawn_inner` in this execution,
            // whose cell for `task` holds a future with output `T`; cells
            // live until the execution ends.
            unsafe { s.cells[self.task as usize].take_output::<T>() }
        })
        .expect("joined task left its result")
    }
}

struct Join {
    task: TaskId,
    yielded: bool,
}

impl Future for Join {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if !self.yielded {
            self.yielded = true;
            if !rt::with(|s| s.yield_now()) {
                return Poll::Pending;
            }
        }
        let task = self.task;
        rt::with(|s| {
            if s.tasks[task as usize].status == Status::Finished {
                // A join looks at the task: only its spawn, its finish and what
                // is granted to it change its pseudo-resource (so a grant's
                // step, not a join's, is the last change a granted step finds).
                s.touch_read(crate::scheduler::Footprint::task_resource(task));
                Poll::Ready(())
            } else {
                // A join that blocks touches nothing, as a lock taken while
                // held is no step: it only waits for the finish, which wakes
                // it to look again. Had the task finished first, the join
                // would have gone on at once, to the same state: no race.
                // Counted as one, its reversal (the task finished before the
                // join) is a preemption of the joiner, which a bound cuts,
                // and as the latest race of the task's last step it hid that
                // step's race with another task.
                let me = s.current;
                s.joiners.push((task, me));
                s.block(Wait::Join(task));
                Poll::Pending
            }
        })
    }
}

/// A scheduling point and nothing else: lets the scheduler run another task.
pub async fn yield_now() {
    YieldNow(false).await
}

struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        if rt::with(|s| {
            // A read with no step, then a yield: a loop that waits for what
            // it read to change (`for len(ch) > 0 { runtime.Gosched() }`)
            // polls once a round. Reads without a yield after them (checks
            // in straight-line code, a work loop's) are no poll.
            let t = s.current;
            if let Some(what) = s.tasks[t as usize].observed.take() {
                s.strategy.get().polled(t, what);
            }
            s.yield_now()
        }) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// The current task's id.
pub fn current() -> TaskId {
    rt::with(|s| s.current)
}

/// A data choice among `n` alternatives (`n >= 1`), drawn by the run's
/// strategy like every scheduling choice: a seed replays it, and a search
/// strategy explores it. Not a scheduling point.
///
/// ```
/// let run = sim::Sim::new(5).run(|| async {
///     let backlog = sim::task::choose(4); // 0, 1, 2 or 3
///     assert!(backlog < 4);
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[track_caller]
pub fn choose(n: usize) -> usize {
    assert!(n >= 1, "choose needs at least one alternative");
    rt::with(|s| s.pick_index(n))
}
