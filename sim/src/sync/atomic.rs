//! Atomic counters (Java's `AtomicInteger`, netty's reference count).

use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;
use std::task::Poll;

use super::Op;
use crate::rt::{self, ResId, ResKind, ResState};
use crate::scheduler::spin::{poll_key, PollOp};
use crate::trace::EventKind;

/// An atomic integer: each operation is one indivisible step and a
/// scheduling point, so which task's update comes first is explored.
///
/// ```
/// let run = sim::Sim::new(0).run(|| async {
///     let refs = sim::sync::AtomicU64::new("refCnt", 2);
///     assert_eq!(refs.fetch_sub(1).await, 2);
///     assert_eq!(refs.load().await, 1);
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
#[derive(Clone, Debug)]
pub struct AtomicU64 {
    id: ResId,
    value: Rc<Cell<u64>>,
}

impl AtomicU64 {
    /// A new atomic holding `v`.
    pub fn new(name: impl Into<Cow<'static, str>>, v: u64) -> AtomicU64 {
        let name = name.into();
        let id = rt::with(|s| s.new_resource(name, ResKind::Atomic, None, None, ResState::Atomic));
        AtomicU64 { id, value: Rc::new(Cell::new(v)) }
    }

    /// The resource id.
    pub fn id(&self) -> ResId {
        self.id
    }

    /// The value, read without a scheduling point (for invariants and
    /// reports). Read in a step, it is a read of the atomic, which an
    /// exhaustive search orders against the atomic's updates.
    pub fn peek(&self) -> u64 {
        let v = self.value.get();
        crate::observe(self.id, v);
        v
    }

    /// `poll`: a load, `fetch_add(0)` or `fetch_sub` (told apart by the number), which
    /// tells the strategy the value it found: a loop that finds the same one
    /// with no other task run since spins (a spin lock, `fetch_add(1)`
    /// finding 1, then `fetch_sub(1)` finding 2; see `scheduler/spin.rs`).
    /// `fetch_add(n)` with `n > 0` is no poll: a counter finds a new value each time, and a
    /// spin lock's `fetch_add` holds the lock for a moment, so a spin seen
    /// there would make its task yield holding it (ten takers of a spin
    /// lock then ran to the step limit under PCT); its `fetch_sub`, which
    /// gives it back, is where the spin is seen.
    async fn update(&self, poll: Option<PollOp>, f: impl Fn(u64) -> u64) -> u64 {
        let (id, value) = (self.id, self.value.clone());
        Op::new(move || {
            let old = value.get();
            let new = f(old);
            value.set(new);
            rt::with(|s| {
                let t = s.current;
                if let Some(op) = poll {
                    let what = poll_key(id, op, old);
                    s.strategy.get().polled(t, what);
                }
                s.record(t, EventKind::Atomic, Some(id), Some(new), None, None, None);
            });
            Poll::Ready(old)
        })
        .await
    }

    /// `get()`: a scheduling point.
    pub async fn load(&self) -> u64 {
        self.update(Some(PollOp::Load), |v| v).await
    }

    /// `getAndAdd(n)`: returns the value before.
    pub async fn fetch_add(&self, n: u64) -> u64 {
        // No poll but a read (`fetch_add(0)`, Go's `atomic.AddInt32(&x,
        // 0)`): see `update`.
        self.update(if n == 0 { Some(PollOp::FetchAddZero) } else { None }, move |v| v.wrapping_add(n)).await
    }

    /// `getAndAdd(-n)`: returns the value before.
    pub async fn fetch_sub(&self, n: u64) -> u64 {
        self.update(Some(PollOp::FetchSub), move |v| v.wrapping_sub(n)).await
    }

    /// `set(v)`.
    pub async fn store(&self, v: u64) {
        self.update(None, move |_| v).await;
    }
}
