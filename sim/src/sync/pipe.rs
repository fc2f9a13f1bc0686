//! A one-way byte stream with a capacity: a socket buffer, or Go's `net.Pipe`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::panic::Location;
use std::rc::Rc;
use std::task::Poll;

use super::Op;
use crate::rt::{self, Dir, Holders, ResId, ResKind, ResState, State, TaskId, Wait};
use crate::trace::EventKind;

/// The other end of the pipe was closed (Go's `io.ErrClosedPipe`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeClosed;

impl std::fmt::Display for PipeClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("io: read/write on closed pipe")
    }
}

/// Why a [`Pipe::read`] returned no bytes, as Go's `Read` says it with its
/// error: a read that returns `Ok(0)` is not the end of the stream (a read
/// of `max` 0, or one that took a `net.Pipe` write of 0 bytes: Go's
/// `(0, nil)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// End of stream: the write end is closed and nothing is left (`io.EOF`).
    Eof,
    /// The read end is closed (`io.ErrClosedPipe`).
    Closed,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Eof => f.write_str("EOF"),
            ReadError::Closed => PipeClosed.fmt(f),
        }
    }
}

impl std::error::Error for ReadError {}

/// A one-way byte stream with a capacity in bytes.
///
/// - A write of `n` bytes moves what fits into the buffer and blocks for the
///   rest; as readers free room, the rest moves in. It returns when every
///   byte is in the buffer (or, with capacity 0, taken by a reader).
/// - Capacity 0 behaves as Go's `net.Pipe`: nothing is buffered, a write
///   completes only when readers have taken every byte, in pieces the size
///   of each read. A write of 0 bytes waits for one read, which returns 0
///   (not end of stream).
/// - A read takes what is there, up to its size, whatever the message
///   boundaries; it blocks only when nothing is there.
/// - Writes are serialized: a second writer waits for the write in progress.
///
/// Message objects of type `M` ride beside the bytes: a write may carry one,
/// and it reaches the reader with the write's last byte, exactly as a
/// decoded frame would.
///
/// Who holds each end, for deadlock detection: as for a [`Chan`](crate::sync::Chan),
/// a wait on one end can be proved dead only once the model declared the
/// other end's holders ([`Pipe::declare_writer`], [`Pipe::declare_reader`]),
/// each task when it starts. A task that only closes an end
/// ([`Pipe::close_write`], [`Pipe::close_read`], as Go code closes a conn
/// to cancel a read) releases its waiters too, and holds that end: declare
/// it as well (a close by a task declared without it fails the run, as a
/// read or write does). Once every declared holder of one end has
/// finished, a wait on the other is dead by itself, unless a task on the
/// waiter's own side may still close it (a read closer's `close_read`
/// fails a read, a write closer's `close_write` a write). A declared
/// closer of the waiter's own side is one of its releasers even while the
/// other end is held: a write is not dead while a write closer runs.
///
/// ```
/// let run = sim::Sim::new(0).run(|| async {
///     let p: sim::sync::Pipe<&str> = sim::sync::Pipe::new("client->server", 8);
///     let w = p.clone();
///     sim::spawn("writer", async move { w.write(12, Some("hello")).await.unwrap() });
///     let mut got = Vec::new();
///     let mut bytes = 0;
///     while bytes < 12 {
///         bytes += p.read(5, &mut got).await.unwrap();
///     }
///     assert_eq!(got, vec!["hello"]);
/// });
/// assert_eq!(run.outcome, sim::Outcome::Completed);
/// ```
pub struct Pipe<M> {
    inner: Rc<Inner<M>>,
}

impl<M> Clone for Pipe<M> {
    fn clone(&self) -> Self {
        Pipe { inner: self.inner.clone() }
    }
}

struct Inner<M> {
    id: ResId,
    cap: u64,
    st: RefCell<PipeState<M>>,
}

struct PipeState<M> {
    buffered: u64,
    /// Bytes of the write in progress not yet in the buffer (or, capacity 0, not yet read).
    pending: u64,
    active: Option<TaskId>,
    /// Stream offset up to which bytes have been accepted by writes.
    written: u64,
    /// Stream offset up to which bytes have been read.
    read: u64,
    /// Messages with the stream offset of their last byte.
    msgs: VecDeque<(u64, M)>,
    readers_waiting: Vec<TaskId>,
    writers_waiting: Vec<TaskId>,
    write_closed: bool,
    read_closed: bool,
}

impl<M: 'static> Pipe<M> {
    /// A pipe with `capacity` bytes of buffer (0: `net.Pipe`).
    pub fn new(name: impl Into<Cow<'static, str>>, capacity: u64) -> Pipe<M> {
        let name = name.into();
        let id = rt::with(|s| {
            s.new_resource(
                name,
                ResKind::Pipe,
                Some(capacity),
                None,
                ResState::Pipe { writers: Holders::new(), readers: Holders::new(), active_writer: None },
            )
        });
        Pipe {
            inner: Rc::new(Inner {
                id,
                cap: capacity,
                st: RefCell::new(PipeState {
                    buffered: 0,
                    pending: 0,
                    active: None,
                    written: 0,
                    read: 0,
                    msgs: VecDeque::new(),
                    readers_waiting: Vec::new(),
                    writers_waiting: Vec::new(),
                    write_closed: false,
                    read_closed: false,
                }),
            }),
        }
    }

    /// The resource id.
    pub fn id(&self) -> ResId {
        self.inner.id
    }

    /// Bytes in the buffer now. A read of the pipe's state, which an
    /// exhaustive search orders against its writes and reads.
    pub fn buffered(&self) -> u64 {
        let n = self.inner.st.borrow().buffered;
        crate::observe(self.inner.id, n);
        n
    }

    /// Declares that the current task writes to this pipe.
    #[track_caller]
    pub fn declare_writer(&self) {
        rt::with_at(Location::caller(), |s| s.declare_end_for(self.inner.id, Dir::Send, s.current));
    }

    /// Declares that the current task reads from this pipe.
    #[track_caller]
    pub fn declare_reader(&self) {
        rt::with_at(Location::caller(), |s| s.declare_end_for(self.inner.id, Dir::Recv, s.current));
    }

    /// Declares that the current task may close the write end
    /// ([`Pipe::close_write`]) and does not write: its close releases the
    /// readers, so it is one of their releasers, but a report explains a
    /// deadlock by the writers where it can.
    #[track_caller]
    pub fn declare_write_closer(&self) {
        rt::with_at(Location::caller(), |s| s.declare_closer_for(self.inner.id, Dir::Send, s.current));
    }

    /// Declares that the current task may close the read end
    /// ([`Pipe::close_read`]) and does not read (see [`Pipe::declare_write_closer`]).
    #[track_caller]
    pub fn declare_read_closer(&self) {
        rt::with_at(Location::caller(), |s| s.declare_closer_for(self.inner.id, Dir::Recv, s.current));
    }

    fn set_active(s: &mut State, id: ResId, w: Option<TaskId>) {
        if let ResState::Pipe { active_writer, .. } = &mut s.resources[id as usize].st {
            *active_writer = w;
        }
    }

    /// Writes `n` bytes (with `msg` riding on the last one): a scheduling
    /// point; blocks until every byte is in the buffer or read.
    ///
    /// # Errors
    /// [`PipeClosed`] if either end is closed when it starts, or the write
    /// end while it is blocked ([`Pipe::close_write`]), or the read end
    /// before every byte was taken ([`Pipe::close_read`]).
    #[track_caller]
    pub fn write(&self, n: u64, msg: Option<M>) -> impl Future<Output = Result<(), PipeClosed>> + '_ {
        self.write_at(n, msg, Location::caller())
    }

    async fn write_at(&self, n: u64, msg: Option<M>, at: &'static Location<'static>) -> Result<(), PipeClosed> {
        let mut msg = msg;
        let mut started = false;
        let inner = self.inner.clone();
        Op::new(move || {
            rt::with_at(at, |s| {
                let id = inner.id;
                let me = s.current;
                if started {
                    return match s.take_grant() {
                        Some(g) if g & super::chan::CLOSED != 0 => Poll::Ready(Err(PipeClosed)),
                        Some(_) => Poll::Ready(Ok(())),
                        None => unreachable!("a writer in progress resumes only when granted"),
                    };
                }
                s.hold_end(id, Dir::Send);
                let mut st = inner.st.borrow_mut();
                if st.write_closed || st.read_closed {
                    // It failed on what a close did: ordered against it.
                    s.touch(id);
                    return Poll::Ready(Err(PipeClosed));
                }
                if st.active.is_some() {
                    s.touch(id);
                    st.writers_waiting.push(me);
                    drop(st);
                    s.block(Wait::Write(id));
                    return Poll::Pending;
                }
                st.written += n;
                let end = st.written;
                if let Some(m) = msg.take() {
                    st.msgs.push_back((end, m));
                }
                let fits = n.min(inner.cap - st.buffered);
                st.buffered += fits;
                st.pending = n - fits;
                s.record(me, EventKind::Write, Some(id), Some(fits), Some(st.buffered), None, None);
                let readers = std::mem::take(&mut st.readers_waiting);
                for &r in &readers {
                    s.wake(r);
                }
                st.readers_waiting = readers;
                st.readers_waiting.clear();
                // Go's net.Pipe hands even an empty slice to a reader and
                // waits for it (its loop runs once): a write of 0 bytes is
                // done when a read, which returns 0, took it.
                if st.pending == 0 && (inner.cap > 0 || n > 0) {
                    return Poll::Ready(Ok(()));
                }
                st.active = Some(me);
                started = true;
                drop(st);
                Self::set_active(s, id, Some(me));
                s.block(Wait::Write(id));
                Poll::Pending
            })
        })
        .await
    }

    /// Reads up to `max` bytes: a scheduling point; blocks while the pipe is
    /// empty. Messages whose last byte was read are appended to `out`.
    /// Returns the bytes read: 0 only for a read of `max` 0, or one that
    /// took a `net.Pipe` write of 0 bytes, never at end of stream.
    ///
    /// # Errors
    /// [`ReadError::Eof`] once the write end is closed and nothing is left
    /// (Go's `io.EOF`); [`ReadError::Closed`] if the read end is closed
    /// ([`Pipe::close_read`]), before or while it waits.
    ///
    /// A read of `max` 0 waits as any read does and takes nothing, as Go's
    /// `Read` of an empty slice.
    ///
    /// ```
    /// use sim::sync::{Pipe, ReadError};
    /// let run = sim::Sim::new(0).run(|| async {
    ///     let p: Pipe<()> = Pipe::new("conn", 16);
    ///     p.write(3, None).await.unwrap();
    ///     p.close_write().await;
    ///     let mut msgs = Vec::new();
    ///     assert_eq!(p.read(8, &mut msgs).await, Ok(3)); // what was buffered
    ///     assert_eq!(p.read(8, &mut msgs).await, Err(ReadError::Eof));
    /// });
    /// assert_eq!(run.outcome, sim::Outcome::Completed);
    /// ```
    #[track_caller]
    pub fn read<'a>(&'a self, max: u64, out: &'a mut Vec<M>) -> impl Future<Output = Result<u64, ReadError>> + 'a {
        self.read_at(max, out, Location::caller())
    }

    async fn read_at(&self, max: u64, out: &mut Vec<M>, at: &'static Location<'static>) -> Result<u64, ReadError> {
        let inner = self.inner.clone();
        Op::new(move || {
            rt::with_at(at, |s| {
                let id = inner.id;
                let me = s.current;
                s.hold_end(id, Dir::Recv);
                let mut st = inner.st.borrow_mut();
                if st.read_closed {
                    s.touch(id);
                    return Poll::Ready(Err(ReadError::Closed));
                }
                let k = if st.buffered > 0 {
                    let k = max.min(st.buffered);
                    st.buffered -= k;
                    k
                } else if inner.cap == 0 && st.active.is_some() {
                    // A write in progress: its bytes not yet read, or none
                    // (a write of 0 bytes, which this read completes).
                    let k = max.min(st.pending);
                    st.pending -= k;
                    k
                } else if st.write_closed {
                    s.record(me, EventKind::Read, Some(id), Some(0), Some(0), None, None);
                    return Poll::Ready(Err(ReadError::Eof));
                } else {
                    s.touch(id);
                    st.readers_waiting.push(me);
                    drop(st);
                    s.block(Wait::Read(id));
                    return Poll::Pending;
                };
                st.read += k;
                let upto = st.read;
                while st.msgs.front().is_some_and(|(end, _)| *end <= upto) {
                    out.push(st.msgs.pop_front().unwrap().1);
                }
                s.record(me, EventKind::Read, Some(id), Some(k), Some(st.buffered), None, None);
                if let Some(w) = st.active {
                    // The blocked write goes on as room frees up.
                    if inner.cap > 0 && st.pending > 0 {
                        let m = st.pending.min(inner.cap - st.buffered);
                        st.pending -= m;
                        st.buffered += m;
                        s.record(w, EventKind::Write, Some(id), Some(m), Some(st.buffered), Some(me), None);
                    }
                    if st.pending == 0 {
                        st.active = None;
                        s.grant(w, 0);
                        let ws = std::mem::take(&mut st.writers_waiting);
                        for &q in &ws {
                            s.wake(q);
                        }
                        drop(st);
                        Self::set_active(s, id, None);
                    }
                }
                Poll::Ready(Ok(k))
            })
        })
        .await
    }

    /// Closes the write end: readers get end of stream once the buffer is empty.
    /// A write in progress (blocked for room, or on a `net.Pipe` for readers)
    /// fails, as Go's `Write` does when its conn is closed under it: what is
    /// in the buffer stays readable, the rest of the write is dropped, and
    /// so is its message. Writes waiting their turn fail too.
    /// A use of the write end: a task declared without it fails the run
    /// once the end's holders are declared ([`Pipe::declare_writer`]).
    #[track_caller]
    pub fn close_write(&self) -> impl Future<Output = ()> + '_ {
        self.close_write_at(Location::caller())
    }

    async fn close_write_at(&self, at: &'static Location<'static>) {
        let inner = self.inner.clone();
        Op::new(move || {
            rt::with_at(at, |s| {
                s.close_end(inner.id, Dir::Send);
                let mut st = inner.st.borrow_mut();
                st.write_closed = true;
                let me = s.current;
                s.record(me, EventKind::Close, Some(inner.id), None, Some(st.buffered), None, None);
                let failed = st.active.take();
                if let Some(w) = failed {
                    // The stream ends where the buffer does: a reader must
                    // not wait for bytes, or a message, that never come.
                    st.written -= st.pending;
                    let zero_length = st.pending == 0;
                    st.pending = 0;
                    let end = st.written;
                    while st.msgs.back().is_some_and(|(last, _)| *last > end) {
                        st.msgs.pop_back();
                    }
                    // A net.Pipe write of 0 bytes (the only write in
                    // progress with nothing pending): every byte before it
                    // was read, so a message at its end is its own.
                    if zero_length && st.msgs.back().is_some_and(|(last, _)| *last == end) {
                        st.msgs.pop_back();
                    }
                    s.grant(w, super::chan::CLOSED);
                }
                for q in std::mem::take(&mut st.writers_waiting) {
                    s.wake(q);
                }
                for r in std::mem::take(&mut st.readers_waiting) {
                    s.wake(r);
                }
                drop(st);
                if failed.is_some() {
                    Self::set_active(s, inner.id, None);
                }
                Poll::Ready(())
            })
        })
        .await
    }

    /// Closes the read end: the write in progress and later writes fail.
    /// A use of the read end, as [`Pipe::close_write`] is of the write end.
    #[track_caller]
    pub fn close_read(&self) -> impl Future<Output = ()> + '_ {
        self.close_read_at(Location::caller())
    }

    async fn close_read_at(&self, at: &'static Location<'static>) {
        let inner = self.inner.clone();
        Op::new(move || {
            rt::with_at(at, |s| {
                s.close_end(inner.id, Dir::Recv);
                let mut st = inner.st.borrow_mut();
                st.read_closed = true;
                let me = s.current;
                s.record(me, EventKind::Close, Some(inner.id), None, Some(st.buffered), None, None);
                if let Some(w) = st.active.take() {
                    st.pending = 0;
                    s.grant(w, super::chan::CLOSED);
                }
                for q in std::mem::take(&mut st.writers_waiting) {
                    s.wake(q);
                }
                for r in std::mem::take(&mut st.readers_waiting) {
                    s.wake(r);
                }
                drop(st);
                Self::set_active(s, inner.id, None);
                Poll::Ready(())
            })
        })
        .await
    }
}
