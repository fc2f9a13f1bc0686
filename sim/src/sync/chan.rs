//! Go channels.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::panic::Location;
use std::rc::Rc;
use std::task::Poll;

use super::select::sealed::Case as SelectCase;
use super::Op;
use crate::rt::{self, Dir, Holders, ResId, ResKind, ResState, State, TaskId, Wait};
use crate::trace::EventKind;

/// A signal channel ([`Chan::signal`]) is only ever closed: the wait-for
/// graph counts no receivers of it as releasers, which a send would need.
#[inline]
fn only_closed(s: &State, id: ResId) {
    if let ResState::Chan { signal: true, .. } = s.resources[id as usize].st {
        s.misuse(format_args!(
            "sim: a send on signal channel \"{}\", which is only ever closed (Chan::signal)",
            s.resources[id as usize].name
        ));
    }
}

/// Marks a grant that tells a parked sender its channel was closed.
pub(crate) const CLOSED: u32 = 0x8000_0000;

/// A Go channel (`make(chan T, cap)`): capacity 0 is a rendezvous, `close`
/// wakes every receiver with `None`, a send on a closed channel panics.
/// Blocked senders and receivers are served in FIFO order, as Go's are.
///
/// Cloning a `Chan` copies the reference, as passing a Go channel does.
///
/// Who holds each end, for deadlock detection: a receive can be proved dead
/// only when the engine knows every task that could still send, and a send
/// every task that could still receive. A task that has not touched a
/// channel yet may do so later, so having seen its users is not enough: the
/// model declares them, each task at its start ([`Chan::declare_sender`],
/// [`Chan::declare_receiver`]), or for a task it hands the channel to
/// ([`Chan::declare_sender_for`]). Until an end is declared, waits on the
/// other end are never part of a partial deadlock (a global one, where no
/// task can run, is still found). Once it is, a task that uses it without
/// having been declared makes the run fail with a panic naming it, since
/// a deadlock could have been judged without it; and once every declared
/// holder of one end has finished, a foreground task's wait on the other is
/// dead by itself (a background one is parked, as at the end of a run).
///
/// ```
/// let run = sim::Sim::new(0).run(|| async {
///     let ch = sim::sync::Chan::new("results", 1);
///     let tx = ch.clone();
///     sim::spawn("worker", async move { tx.send(7).await });
///     assert_eq!(ch.recv().await, Some(7));
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
pub struct Chan<T> {
    inner: Rc<Inner<T>>,
}

impl<T> Clone for Chan<T> {
    fn clone(&self) -> Self {
        Chan { inner: self.inner.clone() }
    }
}

struct Inner<T> {
    id: ResId,
    cap: usize,
    st: RefCell<ChanState<T>>,
}

#[derive(Clone, Copy)]
struct Waiter {
    task: TaskId,
    gen: u32,
    case: u32,
}

struct ChanState<T> {
    buf: VecDeque<T>,
    closed: bool,
    recvq: VecDeque<Waiter>,
    sendq: VecDeque<(Waiter, T)>,
    /// Values handed to parked receivers (`None`: the channel was closed).
    handoff: Vec<(TaskId, Option<T>)>,
}

impl<T> ChanState<T> {
    /// The first parked receiver still waiting (select entries may be stale).
    fn first_receiver(&self, s: &State) -> Option<usize> {
        self.recvq.iter().position(|w| s.is_waiting(w.task, w.gen))
    }

    fn first_sender(&self, s: &State) -> Option<usize> {
        self.sendq.iter().position(|(w, _)| s.is_waiting(w.task, w.gen))
    }
}

impl Chan<()> {
    /// A channel that is only ever closed to broadcast an event, as Go's
    /// `ctx.Done()` or a `done` channel. Its closer is the task that declared
    /// the send end ([`Chan::declare_sender`]). Waits on it are deadlock edges
    /// like any other, but a report illustrates a deadlock with a cycle that
    /// avoids them where one exists, since they are rarely the cause. Its
    /// receivers need no declaration: any task may wait for the event.
    pub fn signal(name: impl Into<Cow<'static, str>>) -> Chan<()> {
        Chan::make(name.into(), 0, true)
    }

    /// A signal channel closed as it is made, by the current task, inside
    /// its step (`context`'s child of a cancelled parent, which Go cancels
    /// as it is made): the close is recorded as any other, but makes the
    /// task no holder of the send end, whose holders (the cancellers) the
    /// maker declares as for an open one.
    pub(crate) fn signal_closed(name: impl Into<Cow<'static, str>>) -> Chan<()> {
        let ch = Chan::signal(name);
        rt::with(|s| {
            let id = ch.inner.id;
            ch.inner.st.borrow_mut().closed = true;
            s.record(s.current, EventKind::Close, Some(id), None, None, None, None);
        });
        ch
    }
}

impl<T: 'static> Chan<T> {
    /// `make(chan T, cap)`.
    pub fn new(name: impl Into<Cow<'static, str>>, cap: usize) -> Chan<T> {
        Chan::make(name.into(), cap, false)
    }

    fn make(name: Cow<'static, str>, cap: usize, signal: bool) -> Chan<T> {
        let id = rt::with(|s| {
            s.new_resource(
                name,
                ResKind::Chan,
                Some(cap as u64),
                None,
                ResState::Chan { senders: Holders::new(), receivers: Holders::new(), signal },
            )
        });
        Chan {
            inner: Rc::new(Inner {
                id,
                cap,
                st: RefCell::new(ChanState {
                    buf: VecDeque::with_capacity(cap),
                    closed: false,
                    recvq: VecDeque::new(),
                    sendq: VecDeque::new(),
                    handoff: Vec::new(),
                }),
            }),
        }
    }

    /// The resource id.
    pub fn id(&self) -> ResId {
        self.inner.id
    }

    /// Declares that the current task will send on (or close) this channel.
    #[track_caller]
    pub fn declare_sender(&self) {
        rt::with_at(Location::caller(), |s| s.declare_end_for(self.inner.id, Dir::Send, s.current));
    }

    /// Declares that the current task will receive from this channel.
    #[track_caller]
    pub fn declare_receiver(&self) {
        rt::with_at(Location::caller(), |s| s.declare_end_for(self.inner.id, Dir::Recv, s.current));
    }

    /// Declares that task `task` sends on (or closes) this channel: for a
    /// channel the current task hands to another one, as a Go goroutine
    /// hands a channel inside a struct.
    #[track_caller]
    pub fn declare_sender_for(&self, task: TaskId) {
        rt::with_at(Location::caller(), |s| s.declare_end_for(self.inner.id, Dir::Send, task));
    }

    /// Declares that task `task` receives from this channel.
    #[track_caller]
    pub fn declare_receiver_for(&self, task: TaskId) {
        rt::with_at(Location::caller(), |s| s.declare_end_for(self.inner.id, Dir::Recv, task));
    }

    /// Messages buffered now (`len(ch)`). A read of the channel's state,
    /// which an exhaustive search orders against its sends and receives.
    pub fn len(&self) -> usize {
        let n = self.inner.st.borrow().buf.len();
        crate::observe(self.inner.id, n as u64);
        n
    }

    /// True if no message is buffered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn recv_ready(&self, s: &State) -> bool {
        let st = self.inner.st.borrow();
        !st.buf.is_empty() || st.closed || st.first_sender(s).is_some()
    }

    pub(crate) fn send_ready(&self, s: &State) -> bool {
        let st = self.inner.st.borrow();
        st.closed || st.first_receiver(s).is_some() || st.buf.len() < self.inner.cap
    }

    /// Receives now; the caller checked [`Chan::recv_ready`].
    pub(crate) fn recv_now(&self, s: &mut State) -> Option<T> {
        let id = self.inner.id;
        let me = s.current;
        s.hold_end(id, Dir::Recv);
        let mut st = self.inner.st.borrow_mut();
        let got = if let Some(v) = st.buf.pop_front() {
            // A parked sender moves its value into the freed slot.
            if let Some(i) = st.first_sender(s) {
                let (w, val) = st.sendq.remove(i).unwrap();
                st.buf.push_back(val);
                s.record(w.task, EventKind::Send, Some(id), Some(st.buf.len() as u64), None, Some(me), None);
                s.grant(w.task, w.case);
            }
            Some(v)
        } else if let Some(i) = st.first_sender(s) {
            let (w, val) = st.sendq.remove(i).unwrap();
            s.record(w.task, EventKind::Send, Some(id), Some(0), None, Some(me), None);
            s.grant(w.task, w.case);
            Some(val)
        } else {
            debug_assert!(st.closed);
            None
        };
        s.record(me, EventKind::Recv, Some(id), Some(st.buf.len() as u64), None, None, None);
        got
    }

    /// Sends now; the caller checked [`Chan::send_ready`].
    pub(crate) fn send_now(&self, s: &mut State, v: T) {
        let id = self.inner.id;
        let me = s.current;
        only_closed(s, id);
        s.hold_end(id, Dir::Send);
        let mut st = self.inner.st.borrow_mut();
        if st.closed {
            drop(st);
            // The failing step saw the close: a search must order it with it.
            s.touch(id);
            s.misuse(format_args!("send on closed channel"));
        }
        if let Some(i) = st.first_receiver(s) {
            let w = st.recvq.remove(i).unwrap();
            st.handoff.push((w.task, Some(v)));
            s.record(me, EventKind::Send, Some(id), Some(0), None, None, None);
            s.record(w.task, EventKind::Recv, Some(id), Some(0), None, Some(me), None);
            s.grant(w.task, w.case);
        } else {
            st.buf.push_back(v);
            s.record(me, EventKind::Send, Some(id), Some(st.buf.len() as u64), None, None, None);
        }
    }

    pub(crate) fn park_recv(&self, s: &mut State, case: u32) {
        let me = s.current;
        s.hold_end(self.inner.id, Dir::Recv);
        // Parking changes the channel's queues: a later send depends on it.
        s.touch(self.inner.id);
        let gen = s.tasks[me as usize].wait_gen;
        self.inner.st.borrow_mut().recvq.push_back(Waiter { task: me, gen, case });
    }

    pub(crate) fn park_send(&self, s: &mut State, case: u32, v: T) {
        let me = s.current;
        only_closed(s, self.inner.id);
        s.hold_end(self.inner.id, Dir::Send);
        s.touch(self.inner.id);
        let gen = s.tasks[me as usize].wait_gen;
        self.inner.st.borrow_mut().sendq.push_back((Waiter { task: me, gen, case }, v));
    }

    /// The value handed to the current task while it was parked (`None`: closed).
    pub(crate) fn take_handoff(&self, me: TaskId) -> Option<T> {
        let mut st = self.inner.st.borrow_mut();
        let i = st.handoff.iter().position(|(t, _)| *t == me).expect("granted receiver finds its value");
        st.handoff.swap_remove(i).1
    }

    /// Removes the current task's stale parked send, giving its value back.
    pub(crate) fn unpark_send(&self, me: TaskId) -> Option<T> {
        let mut st = self.inner.st.borrow_mut();
        let i = st.sendq.iter().position(|(w, _)| w.task == me)?;
        st.sendq.remove(i).map(|(_, v)| v)
    }

    pub(crate) fn unpark_recv(&self, me: TaskId) {
        let mut st = self.inner.st.borrow_mut();
        if let Some(i) = st.recvq.iter().position(|w| w.task == me) {
            st.recvq.remove(i);
        }
    }

    /// `ch <- v`: a scheduling point; blocks until a receiver takes it (or,
    /// buffered, until there is room). Panics if the channel is closed.
    #[track_caller]
    pub fn send(&self, v: T) -> impl Future<Output = ()> + '_ {
        let at = Location::caller();
        let mut v = Some(v);
        let mut parked = false;
        Op::new(move || {
            rt::with_at(at, |s| {
                if parked {
                    let g = s.take_grant().expect("a parked sender resumes only when granted");
                    if g & CLOSED != 0 {
                        s.touch(self.inner.id);
                        s.misuse(format_args!("send on closed channel"));
                    }
                    return Poll::Ready(());
                }
                if self.send_ready(s) {
                    self.send_now(s, v.take().unwrap());
                    Poll::Ready(())
                } else {
                    self.park_send(s, 0, v.take().unwrap());
                    parked = true;
                    s.block(Wait::Send(self.inner.id));
                    Poll::Pending
                }
            })
        })
    }

    /// `v, ok := <-ch`: a scheduling point; `None` once the channel is closed and drained.
    #[track_caller]
    pub fn recv(&self) -> impl Future<Output = Option<T>> + '_ {
        let at = Location::caller();
        let mut parked = false;
        Op::new(move || {
            rt::with_at(at, |s| {
                if parked {
                    s.take_grant().expect("a parked receiver resumes only when granted");
                    return Poll::Ready(self.take_handoff(s.current));
                }
                if self.recv_ready(s) {
                    Poll::Ready(self.recv_now(s))
                } else {
                    self.park_recv(s, 0);
                    parked = true;
                    s.block(Wait::Recv(self.inner.id));
                    Poll::Pending
                }
            })
        })
    }

    /// `close(ch)`: a scheduling point. Parked receivers get `None`, parked
    /// senders panic. Closing twice panics, as in Go.
    #[track_caller]
    pub fn close(&self) -> impl Future<Output = ()> + '_ {
        let close = self.close_or(true, Location::caller());
        async move {
            close.await;
        }
    }

    /// `close(ch)` unless it is closed already, in one step (what a
    /// `sync.Once` or a mutex around the close makes of it in Go, as
    /// `context`'s cancel does): true if this call closed it. A misuse
    /// (an undeclared closer) is reported at `at`.
    pub(crate) fn close_once(&self, at: &'static Location<'static>) -> impl Future<Output = bool> + '_ {
        self.close_or(false, at)
    }

    fn close_or(&self, twice_panics: bool, at: &'static Location<'static>) -> impl Future<Output = bool> + '_ {
        Op::new(move || {
            rt::with_at(at, |s| {
                let id = self.inner.id;
                let me = s.current;
                let mut st = self.inner.st.borrow_mut();
                if st.closed {
                    drop(st);
                    s.touch(id);
                    if twice_panics {
                        s.misuse(format_args!("close of closed channel"));
                    }
                    return Poll::Ready(false);
                }
                st.closed = true;
                s.hold_end(id, Dir::Send);
                s.record(me, EventKind::Close, Some(id), None, None, None, None);
                while let Some(w) = st.recvq.pop_front() {
                    if s.is_waiting(w.task, w.gen) {
                        st.handoff.push((w.task, None));
                        s.grant(w.task, w.case);
                    }
                }
                let senders: Vec<Waiter> = st.sendq.iter().map(|(w, _)| *w).collect();
                for w in senders {
                    if s.is_waiting(w.task, w.gen) {
                        s.grant(w.task, w.case | CLOSED);
                    }
                }
                Poll::Ready(true)
            })
        })
    }

    /// A receive case for [`crate::sync::select`].
    pub fn recv_case(&self) -> RecvCase<T> {
        RecvCase { chan: self.clone(), value: None }
    }

    /// A send case for [`crate::sync::select`].
    pub fn send_case(&self, v: T) -> SendCase<T> {
        SendCase { chan: self.clone(), value: Some(v), sent: false }
    }
}

/// `case v := <-ch:` in a select. After the select picked it, [`RecvCase::take`]
/// gives the value (`None`: the channel was closed).
pub struct RecvCase<T> {
    chan: Chan<T>,
    value: Option<Option<T>>,
}

impl<T: 'static> RecvCase<T> {
    /// The received value; panics if this case was not the one selected.
    #[track_caller]
    pub fn take(&mut self) -> Option<T> {
        self.value.take().expect("RecvCase::take on a case the select did not pick")
    }
}

/// `case ch <- v:` in a select. If another case was picked, the value is
/// still here ([`SendCase::into_value`]).
pub struct SendCase<T> {
    chan: Chan<T>,
    value: Option<T>,
    sent: bool,
}

impl<T: 'static> SendCase<T> {
    /// The value, if it was not sent.
    pub fn into_value(self) -> Option<T> {
        self.value
    }

    /// True if this case's value was sent.
    pub fn was_sent(&self) -> bool {
        self.sent
    }
}

#[allow(private_interfaces)]
impl<T: 'static> SelectCase for RecvCase<T> {
    fn resource(&self) -> (ResId, bool) {
        (self.chan.inner.id, false)
    }
    fn ready(&self, s: &State) -> bool {
        self.chan.recv_ready(s)
    }
    fn complete(&mut self, s: &mut State) {
        self.value = Some(self.chan.recv_now(s));
    }
    fn park(&mut self, s: &mut State, case: u32) {
        self.chan.park_recv(s, case);
    }
    fn finish_granted(&mut self, s: &mut State, _grant: u32) {
        self.value = Some(self.chan.take_handoff(s.current));
    }
    fn cancel(&mut self, s: &mut State) {
        self.chan.unpark_recv(s.current);
    }
}

#[allow(private_interfaces)]
impl<T: 'static> SelectCase for SendCase<T> {
    fn resource(&self) -> (ResId, bool) {
        (self.chan.inner.id, true)
    }
    fn ready(&self, s: &State) -> bool {
        self.chan.send_ready(s)
    }
    fn complete(&mut self, s: &mut State) {
        let v = self.value.take().expect("a send case sends once");
        self.chan.send_now(s, v);
        self.sent = true;
    }
    fn park(&mut self, s: &mut State, case: u32) {
        let v = self.value.take().expect("a send case parks its value once");
        self.chan.park_send(s, case, v);
    }
    fn finish_granted(&mut self, s: &mut State, grant: u32) {
        if grant & CLOSED != 0 {
            s.touch(self.chan.id());
            s.misuse(format_args!("send on closed channel"));
        }
        self.sent = true;
    }
    fn cancel(&mut self, s: &mut State) {
        if self.value.is_none() && !self.sent {
            self.value = self.chan.unpark_send(s.current);
        }
    }
}
