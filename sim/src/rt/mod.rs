//! The runtime: the state of one execution and the step loop that drives it.
//!
//! Kept apart from the public facades (`sync`, `task`, `time`) as loom keeps
//! its `rt`: primitives call into [`State`] through [`with`]. This module
//! owns how tasks and resources are stored and how a step is taken; each
//! primitive in `sync/` owns its own [`ResState`] variant and reads and
//! changes it there (`mutex.rs` its holder, `chan.rs` its queue), and
//! `waitfor` reads every variant to find who a blocked task waits for.
//!
//! A new primitive touches: its file in `sync/` (the facade, as the real
//! one reads); [`ResKind`] (and `ResKind::ALL`, which the trace reader
//! checks names against) and a [`ResState`] variant here; a [`Wait`]
//! variant if a task can block on it; `waitfor::edges_of`, which turns that
//! wait into edges to the tasks that could end it; the trace reader's
//! checks (`trace/json.rs`), if its events carry state a trace must agree
//! with; and the visualizer's `model.rs`, if it is drawn as a lock or a pipe.

pub(crate) mod cell;
pub(crate) mod execution;
pub(crate) mod pending;
pub(crate) mod slots;
pub mod taskset;

use std::borrow::Cow;
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::Location;

use crate::frame::Frame;
use crate::outcome::Outcome;
use crate::scheduler::Strategy;
use crate::trace::{EventKind, Recorder};
use crate::waitfor::Verdict;
pub use taskset::{FrozenTaskSet, TaskId, TaskSet};

/// Index of a resource (lock, monitor, channel, pipe) within one execution.
pub type ResId = u32;

/// What a blocked task waits for. The wait-for graph is computed from these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Mutex lock, RWMutex write lock (its writer slot), monitor entry.
    Lock(ResId),
    /// RWMutex read lock, held up by a writer or a waiting writer.
    RLock(ResId),
    /// RWMutex writer that owns the writer slot, waiting for readers to leave.
    Drain(ResId),
    /// `Object.wait()`: waiting for a notify.
    Notify(ResId),
    Send(ResId),
    Recv(ResId),
    /// `select` over the cases in `Task::cases`.
    Select,
    Write(ResId),
    Read(ResId),
    Join(TaskId),
}

impl Wait {
    pub(crate) fn op(&self) -> &'static str {
        match self {
            Wait::Lock(_) => "lock",
            Wait::RLock(_) => "rlock",
            Wait::Drain(_) => "lock",
            Wait::Notify(_) => "wait",
            Wait::Send(_) => "send",
            Wait::Recv(_) => "recv",
            Wait::Select => "select",
            Wait::Write(_) => "write",
            Wait::Read(_) => "read",
            Wait::Join(_) => "join",
        }
    }

    pub(crate) fn resource(&self) -> Option<ResId> {
        match *self {
            Wait::Lock(r)
            | Wait::RLock(r)
            | Wait::Drain(r)
            | Wait::Notify(r)
            | Wait::Send(r)
            | Wait::Recv(r)
            | Wait::Write(r)
            | Wait::Read(r) => Some(r),
            Wait::Select | Wait::Join(_) => None,
        }
    }
}

/// Direction of a channel operation (a select case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    Send,
    Recv,
}

impl From<Dir> for crate::trace::CaseDir {
    fn from(d: Dir) -> Self {
        match d {
            Dir::Send => crate::trace::CaseDir::Send,
            Dir::Recv => crate::trace::CaseDir::Recv,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Ready,
    Blocked(Wait),
    Sleeping,
    Finished,
}

pub(crate) struct Task {
    pub name: Cow<'static, str>,
    pub background: bool,
    pub parent: Option<TaskId>,
    pub status: Status,
    pub started: bool,
    /// The step the task first ran in (once `started`): declarations are
    /// taken only in it (see [`State::check_declared_in_time`]). Before, the
    /// step it was spawned in (a step-limit report says how long it waited).
    pub first_step: u64,
    pub frames: Vec<Frame>,
    /// Set when another task completed this task's blocked operation for it
    /// (a channel hand-off, an RWMutex hand-off): the select case index, or 0.
    pub granted: Option<u32>,
    /// Bumped at every grant, so stale queue entries of a select are ignored.
    pub wait_gen: u32,
    /// The cases of the select this task is blocked in.
    pub cases: Vec<(ResId, Dir)>,
    /// Monitor entry count to restore after `wait`.
    pub saved_count: u32,
    /// The lock this task's next operation takes, while it is enabled.
    pub pending_lock: Option<ResId>,
    /// Locks it holds, in the order taken, with where (for the lock-order graph).
    pub held: Vec<HeldLock>,
    /// The model declared it a holder (or closer) of a channel or pipe end:
    /// its finish may leave a wait on the other end with nobody to serve it.
    pub holds_declared_end: bool,
    /// What its last read with no step ([`crate::observe`]) found, since
    /// its last `yield_now`: that yield reports it to the strategy as a
    /// poll (see `scheduler/spin.rs`).
    pub observed: Option<u64>,
}

impl Task {
    /// True if the task is blocked on resource `r`.
    #[inline]
    fn waits_on(&self, r: ResId) -> bool {
        matches!(self.status, Status::Blocked(w) if w.resource() == Some(r))
    }
}

/// The tasks holding one end of a channel or pipe, ascending. Usually a few,
/// so a sorted list (a bit set per end would grow with every task spawned).
#[derive(Clone, Debug, Default)]
pub(crate) struct Holders {
    tasks: Vec<TaskId>,
    /// Tasks declared to only close this end (a pipe end a goroutine closes
    /// to cancel the other side, as `conn.Close()` does): a close releases
    /// the end's waiters as a use would, so they count as releasers, but a
    /// report explains a deadlock by the end's users where it can.
    closers: Vec<TaskId>,
    /// The model declared who holds this end (`declare_sender` and the
    /// like). Only then are the holders known: a task that has not used an
    /// end yet may use it later, so the tasks that used it are not all.
    declared: bool,
    /// The step of the first declaration (see [`State::check_declared_in_time`]).
    declared_at: u64,
}

impl Holders {
    pub fn new() -> Holders {
        Holders::default()
    }

    /// Task `t` used this end. True if the model declared this end's
    /// holders without `t` (see [`State::hold_end_for`]).
    #[inline]
    pub fn insert(&mut self, t: TaskId) -> bool {
        match self.tasks.binary_search(&t) {
            Ok(_) => false,
            Err(i) => {
                self.tasks.insert(i, t);
                self.declared
            }
        }
    }

    /// The model declared, in step `step`, that task `t` holds this end.
    pub fn declare(&mut self, t: TaskId, step: u64) {
        if let Err(i) = self.tasks.binary_search(&t) {
            self.tasks.insert(i, t);
        }
        self.closers.retain(|&c| c != t);
        self.mark_declared(step);
    }

    /// The model declared, in step `step`, that task `t` closes this end (and no more).
    pub fn declare_closer(&mut self, t: TaskId, step: u64) {
        if !self.contains(t) {
            if let Err(i) = self.closers.binary_search(&t) {
                self.closers.insert(i, t);
            }
        }
        self.mark_declared(step);
    }

    pub(crate) fn mark_declared(&mut self, step: u64) {
        if !self.declared {
            self.declared = true;
            self.declared_at = step;
        }
    }

    /// The step of the first declaration, if the holders are declared.
    pub fn declared_since(&self) -> Option<u64> {
        self.declared.then_some(self.declared_at)
    }

    /// True if task `t` uses or closes this end.
    pub fn holds(&self, t: TaskId) -> bool {
        self.contains(t) || self.closers.binary_search(&t).is_ok()
    }

    /// Task `t`, finished, uses this end no more (a closer stays one).
    pub fn remove(&mut self, t: TaskId) {
        if let Ok(i) = self.tasks.binary_search(&t) {
            self.tasks.remove(i);
        }
    }

    /// The users and the closers, closers last.
    pub fn iter_all(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.tasks.iter().chain(&self.closers).copied()
    }

    /// True if the model declared this end's holders (see [`Holders::declared`]).
    pub fn known(&self) -> bool {
        self.declared
    }

    pub fn iter(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.tasks.iter().copied()
    }

    /// The tasks declared only to close this end (see [`Holders::declare_closer`]).
    pub fn closers(&self) -> &[TaskId] {
        &self.closers
    }

    /// True if task `t` holds this end (closers aside).
    pub fn contains(&self, t: TaskId) -> bool {
        self.tasks.binary_search(&t).is_ok()
    }
}

/// A hold's [`Hold::depth`] for a stack of `len` frames: 0 (printed after
/// the stack) past 65,535 frames, where a `u16` would wrap onto the depth
/// of a frame still below.
#[inline(always)]
pub(crate) fn depth_of(len: usize) -> u16 {
    u16::try_from(len).unwrap_or(0)
}

/// A lock a task holds and the frame where it took it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeldLock {
    // The frame first: with the id first, copies of this struct were made
    // through misaligned stack loads that stalled on store forwarding.
    pub at: Option<Frame>,
    pub lock: ResId,
}

/// Who holds a resource and the frame where it was taken.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hold {
    pub task: TaskId,
    /// Handed by `task` to another task to unlock (`MutexGuard::hand_off`):
    /// any task might unlock it, as Go allows. (In the padding after `task`:
    /// a hold is no larger for it, and an unlock clears it with the hold.)
    pub handed: bool,
    /// How many frames the task had when it took it (`at` is the innermost
    /// of them), while that frame is on the stack; 0 once it has returned
    /// (`State::frame_returned`), or if it was taken with none. A report
    /// prints the hold under that frame, as jstack prints `- locked` under
    /// the frame that entered the monitor. Also in the padding.
    pub depth: u16,
    pub at: Option<Frame>,
}

/// A monitor's last `notify` or `notifyAll`: at which step, by whom and
/// where, and the tasks it woke (what a deadlock report of tasks in the
/// monitor's `wait()` says last happened).
pub(crate) struct Notified {
    pub monitor: ResId,
    pub step: u64,
    pub by: Hold,
    pub all: bool,
    pub woken: Vec<TaskId>,
}

/// The last notify of each monitor notified in this run. Kept beside the
/// resources, not in them: a monitor's state stays as small as the others'
/// (the step loop copies and scans resources), and a notify is rare next to
/// a lock. Entries and their buffers outlive a run; `used` counts this run's.
#[derive(Default)]
pub(crate) struct Notes {
    entries: Vec<Notified>,
    used: usize,
    /// By resource id: 1 + the index of its entry, or 0.
    index: Vec<u32>,
}

impl Notes {
    pub fn clear(&mut self) {
        for n in &self.entries[..self.used] {
            self.index[n.monitor as usize] = 0;
        }
        self.used = 0;
    }

    /// The last notify of `monitor` in this run.
    pub fn of(&self, monitor: ResId) -> Option<&Notified> {
        match self.index.get(monitor as usize) {
            Some(&i) if i > 0 => Some(&self.entries[i as usize - 1]),
            _ => None,
        }
    }

    /// Records a notify of `monitor` and returns its entry, `woken` emptied.
    pub fn note(&mut self, monitor: ResId, step: u64, by: Hold, all: bool) -> &mut Notified {
        let m = monitor as usize;
        if self.index.len() <= m {
            self.index.resize(m + 1, 0);
        }
        if self.index[m] == 0 {
            if self.used == self.entries.len() {
                self.entries.push(Notified { monitor, step, by, all, woken: Vec::new() });
            }
            self.used += 1;
            self.index[m] = self.used as u32;
        }
        let n = &mut self.entries[self.index[m] as usize - 1];
        (n.monitor, n.step, n.by, n.all) = (monitor, step, by, all);
        n.woken.clear();
        n
    }
}

pub(crate) enum ResState {
    Mutex {
        holder: Option<Hold>,
    },
    RwLock {
        /// The writer holding the lock.
        writer: Option<Hold>,
        /// A writer that owns the writer slot and waits for readers to leave;
        /// it already blocks new readers (Go's RWMutex prefers writers).
        pending: Option<TaskId>,
        readers: Vec<Hold>,
    },
    Monitor {
        owner: Option<Hold>,
        count: u32,
        wait_set: Vec<TaskId>,
    },
    Chan {
        senders: Holders,
        receivers: Holders,
        /// Only ever closed, as a Go `ctx.Done()` or `done` channel.
        signal: bool,
    },
    Pipe {
        writers: Holders,
        readers: Holders,
        /// The writer whose write is in progress; other writers queue behind it.
        active_writer: Option<TaskId>,
    },
    /// An atomic counter: never waited on.
    Atomic,
}

impl ResState {
    /// Becomes `new`, keeping this state's vectors (emptied, then given
    /// `new`'s members) where both are of one kind: a slot reused by the next
    /// run allocates nothing for the holders of its channel ends, the readers
    /// of its RWMutex or the wait set of its monitor.
    #[inline(always)]
    fn reset_to(&mut self, new: ResState) {
        fn refill<T>(old: &mut Vec<T>, new: Vec<T>) {
            old.clear();
            old.extend(new);
        }
        fn refill_end(old: &mut Holders, new: Holders) {
            refill(&mut old.tasks, new.tasks);
            refill(&mut old.closers, new.closers);
            old.declared = new.declared;
            old.declared_at = new.declared_at;
        }
        match (self, new) {
            (ResState::Mutex { holder }, ResState::Mutex { holder: h2 }) => *holder = h2,
            (
                ResState::Chan { senders, receivers, signal },
                ResState::Chan { senders: s2, receivers: r2, signal: g2 },
            ) => {
                refill_end(senders, s2);
                refill_end(receivers, r2);
                *signal = g2;
            }
            (
                ResState::Pipe { writers, readers, active_writer },
                ResState::Pipe { writers: w2, readers: r2, active_writer: a2 },
            ) => {
                refill_end(writers, w2);
                refill_end(readers, r2);
                *active_writer = a2;
            }
            (
                ResState::RwLock { writer, pending, readers },
                ResState::RwLock { writer: w2, pending: p2, readers: r2 },
            ) => {
                *writer = w2;
                *pending = p2;
                refill(readers, r2);
            }
            (
                ResState::Monitor { owner, count, wait_set },
                ResState::Monitor { owner: o2, count: c2, wait_set: w2 },
            ) => {
                *owner = o2;
                *count = c2;
                refill(wait_set, w2);
            }
            (old, new) => *old = new,
        }
    }
}

/// The kind of a resource, as traces and reports name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResKind {
    Mutex,
    RwMutex,
    Monitor,
    Chan,
    Pipe,
    Atomic,
}

impl ResKind {
    /// Every kind, in the order traces list them in their documentation.
    pub const ALL: [ResKind; 6] =
        [ResKind::Mutex, ResKind::RwMutex, ResKind::Monitor, ResKind::Chan, ResKind::Pipe, ResKind::Atomic];

    pub fn as_str(self) -> &'static str {
        match self {
            ResKind::Mutex => "mutex",
            ResKind::RwMutex => "rwmutex",
            ResKind::Monitor => "monitor",
            ResKind::Chan => "chan",
            ResKind::Pipe => "pipe",
            ResKind::Atomic => "atomic",
        }
    }
}

pub(crate) struct Resource {
    pub name: Cow<'static, str>,
    pub kind: ResKind,
    pub class: Option<&'static str>,
    pub capacity: Option<u64>,
    /// Tasks blocked on this resource that retry when it is released.
    pub waiters: Vec<TaskId>,
    /// Enabled tasks whose next operation takes this lock. Whoever takes it
    /// first disables the others at once (as loom does), so no step is ever
    /// spent on an attempt that can only block.
    pub pending: Vec<TaskId>,
    pub st: ResState,
}

/// The state of one execution. Primitives reach it through [`with`].
pub(crate) struct State {
    pub tasks: slots::Slots<Task>,
    pub enabled: TaskSet,
    /// Tasks that blocked on a channel or pipe end and may still wait there
    /// (see [`State::judge_waits_served_by`]).
    pub end_waiting: TaskSet,
    /// Reused by [`State::judge_waits_served_by`]: the tasks it found waiting no more.
    pub end_gone: Vec<TaskId>,
    pub unstarted: u32,
    pub foreground_live: u32,
    pub current: TaskId,
    pub resources: slots::Slots<Resource>,
    pub timers: BinaryHeap<Reverse<(u64, u64, TaskId)>>,
    pub timer_seq: u64,
    pub clock: u64,
    pub step: u64,
    pub op_cost: u64,
    pub strategy: StrategySlot,
    pub rec: Option<Recorder>,
    pub failure: Option<Outcome>,
    /// Each task's future (and output, once it returned), by task id.
    pub cells: Vec<cell::TaskCell>,
    /// The blocks the cells live in, kept across runs.
    pub blocks: cell::BlockPool,
    /// This execution's number on this thread: a `JoinHandle` from another
    /// execution must not read this one's cells.
    pub run_id: u64,
    /// Set when the polled task yielded or blocked through a primitive.
    pub suspended: bool,
    /// True if events are recorded or footprints gathered (see [`State::record`]).
    pub observed: bool,
    /// The run's step limit.
    pub max_steps: u64,
    /// True if scheduling points may take the next step in place (see
    /// [`State::take_next_step_here`]).
    pub inline_steps: bool,
    /// Steps the current poll may still take in place before the loop has
    /// to look again: what is left of the step limit, and the steps before
    /// the earliest sleeper is due. Set by the loop before each poll; 0 when
    /// steps are not taken in place.
    pub inline_left: u64,
    /// A pick made at a scheduling point for the loop to run next.
    pub next_pick: Option<TaskId>,
    pub scratch: crate::waitfor::Scratch,
    /// What the current step touched, when the strategy asks for it.
    pub footprint: Option<crate::scheduler::Footprint>,
    /// Buffer for `pending_accesses`.
    pub pending_ops: Vec<(TaskId, ResId)>,
    /// What changed since the last report of `pending_ops` (with footprints on).
    pub pending_changes: pending::Changes,
    /// Tasks spawned and not finished, kept only with footprints on: what
    /// `pending_accesses` walks at every step of an exploration (by the end
    /// of a long ttrpc run, most of its thousands of tasks have finished).
    pub live: TaskSet,
    /// "took `to` while holding `from`", one per pair.
    pub lock_edges: Vec<RawEdge>,
    /// The pairs of `lock_edges` among the first 64 resources, as bit rows
    /// (`edge_rows[from]` bit `to`): the common "already seen" test without
    /// a scan of the list.
    pub edge_rows: [u64; 64],
    /// Locks held while blocked in a send, a write or a monitor's wait(), one per (lock, resource).
    pub held_across: Vec<RawHeldAcross>,
    /// The RWMutexes a task asked to write-lock, once each: a read lock
    /// waits only behind a writer, so an edge into a read lock of an RWMutex
    /// nobody writes is no wait (see [`crate::lockorder`]).
    pub rw_written: Vec<RawWritten>,
    /// (joined, joiner) for each task blocked in a join: a finishing task
    /// wakes its joiners from this list, not from a look at every task (a
    /// ttrpc run of 6,000 calls spawns some 24,000, and main joins them).
    pub joiners: Vec<(TaskId, TaskId)>,
    /// Each notified monitor's last notify.
    pub notes: Notes,
    /// (monitor, task): the declared notifiers of monitors that declare
    /// them (see `Monitor::declare_notifier`), each pair once.
    pub notifiers: Vec<(ResId, TaskId)>,
    /// (monitor, step): the step of each monitor's first declared notifier
    /// (see [`State::check_declared_in_time`]).
    pub notifiers_at: Vec<(ResId, u64)>,
    /// (monitor, counter): each `WaitGroup`'s counter as it last changed,
    /// for reports (the counter itself lives in the WaitGroup).
    pub counters: Vec<(ResId, u64)>,
    /// (WaitGroup, task): who called `Done` on each WaitGroup, for a
    /// report of a Done never called ("\"w1\" returned without calling
    /// Done").
    pub done_by: Vec<(ResId, TaskId)>,
    /// The model's line that called the primitive now running, while it
    /// runs (see [`with_at`]): where a misuse of it is reported.
    pub op_at: Option<&'static Location<'static>>,
    /// By task id, the channel and pipe ends whose holders it is among (as
    /// a user, or declared one), to leave once it has finished (see
    /// [`State::leave_ends`]). Beside the tasks rather than in them: a
    /// larger `Task` costs every step a little.
    pub ends: Vec<Vec<(ResId, Dir)>>,
}

/// The strategy of an execution: the built-in random one kept inline (no
/// allocation per run, and its pick inlined into the step loop), any other
/// behind the trait.
#[allow(clippy::large_enum_variant)] // inline on purpose: one slot per thread, reused
pub(crate) enum StrategySlot {
    Random(crate::scheduler::RandomStrategy),
    Other(Box<dyn Strategy>),
}

impl StrategySlot {
    #[inline]
    pub fn get(&mut self) -> &mut dyn Strategy {
        match self {
            StrategySlot::Random(r) => r,
            StrategySlot::Other(b) => &mut **b,
        }
    }

    #[inline(always)]
    pub fn pick_task(&mut self, enabled: &TaskSet, last: Option<TaskId>, step: u64) -> TaskId {
        match self {
            StrategySlot::Random(r) => r.pick_task(enabled, last, step),
            StrategySlot::Other(b) => b.pick_task(enabled, last, step),
        }
    }
}

/// (from, to, from_at, to_at, task, [from held, to taken or asked for] for
/// reading) of a lock-order edge.
pub(crate) type RawEdge = (ResId, ResId, Option<Frame>, Option<Frame>, TaskId, [bool; 2]);
/// (rwmutex, site, task) of the first write lock asked for on an RWMutex.
pub(crate) type RawWritten = (ResId, Option<Frame>, TaskId);
/// (lock, lock_at, op, resource, op_at, task) of a lock held across a blocking operation.
pub(crate) type RawHeldAcross = (ResId, Option<Frame>, &'static str, ResId, Option<Frame>, TaskId);

thread_local! {
    static CURRENT: Cell<*mut State> = const { Cell::new(std::ptr::null_mut()) };
}

/// Runs `f` on the current execution's state.
///
/// Panics when called outside a simulation: every primitive must be used
/// from inside a task that `Sim::run` drives.
#[inline]
pub(crate) fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let p = CURRENT.with(|c| c.get());
    assert!(
        !p.is_null(),
        "a deadsim primitive was used outside a simulation (call it from a task run by sim::Sim::run)"
    );
    // SAFETY: `p` points to the `State` boxed by the running `Execution`,
    // which outlives every poll; the engine is single-threaded, and `with`
    // is never re-entered (primitives run no user code inside `f`).
    f(unsafe { &mut *p })
}

/// Like [`with`], for a primitive the model called on line `at` (its
/// `#[track_caller]` location): a misuse that `f` panics on
/// ([`State::misuse`]) cites that line, as Go's and Java's stack traces
/// cite the caller's, not a line of this library.
#[inline]
pub(crate) fn with_at<R>(at: &'static Location<'static>, f: impl FnOnce(&mut State) -> R) -> R {
    /// Puts the line before back, also as a misuse unwinds (a task may
    /// catch the panic and go on: its line is no later operation's).
    struct Restore(Option<&'static Location<'static>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            with_live(|s| s.op_at = self.0);
        }
    }
    let _restore = Restore(with(|s| s.op_at.replace(at)));
    with(f)
}

/// Panics for a model's misuse of a primitive, citing the model's line `at`
/// that called it: "send on closed channel (at src/model.rs:12)".
#[cold]
pub(crate) fn misuse_at(at: &'static Location<'static>, msg: impl std::fmt::Display) -> ! {
    // Not `panic!`, whose location would be this line: the engine takes a
    // payload that comes without the hook's message for the whole message.
    std::panic::resume_unwind(Box::new(format!("{msg} (at {}:{})", at.file(), at.line())))
}

/// Like [`with`], but does nothing outside a simulation or during teardown.
/// For `Drop` impls, which also run when the engine drops leftover futures.
#[inline]
pub(crate) fn with_live(f: impl FnOnce(&mut State)) {
    let p = CURRENT.with(|c| c.get());
    if !p.is_null() {
        // SAFETY: as in `with`.
        f(unsafe { &mut *p })
    }
}

/// True inside a running simulation (false outside one and during teardown).
#[inline]
pub(crate) fn is_live() -> bool {
    !CURRENT.with(|c| c.get()).is_null()
}

pub(crate) fn set_current(p: *mut State) -> *mut State {
    CURRENT.with(|c| c.replace(p))
}

impl State {
    #[inline]
    pub fn top_frame(&self, t: TaskId) -> Option<Frame> {
        self.tasks[t as usize].frames.last().copied()
    }

    pub fn hold_here(&self) -> Hold {
        self.hold_of(self.current)
    }

    /// A hold by `t` taken where it is now.
    #[inline]
    pub fn hold_of(&self, t: TaskId) -> Hold {
        let frames = &self.tasks[t as usize].frames;
        Hold { task: t, handed: false, depth: depth_of(frames.len()), at: frames.last().copied() }
    }

    /// Task `t`'s frame at `depth` (1: its outermost) returns: the locks it
    /// took and still holds are no longer printed under a frame (a call of
    /// the same function made next would sit where it was). Called only
    /// when `t` holds a lock, which few frames return with.
    #[cold]
    #[inline(never)]
    pub fn frame_returned(&mut self, t: TaskId, depth: usize) {
        let depth = depth_of(depth);
        if depth == 0 {
            return;
        }
        let clear = |h: &mut Hold| {
            if h.task == t && h.depth == depth {
                h.depth = 0;
            }
        };
        for i in 0..self.tasks[t as usize].held.len() {
            let r = self.tasks[t as usize].held[i].lock;
            match &mut self.resources[r as usize].st {
                ResState::Mutex { holder: Some(h) } | ResState::Monitor { owner: Some(h), .. } => clear(h),
                ResState::RwLock { writer, readers, .. } => {
                    writer.iter_mut().chain(readers.iter_mut()).for_each(clear);
                }
                _ => {}
            }
        }
    }

    #[inline(always)]
    pub fn new_resource(
        &mut self,
        name: Cow<'static, str>,
        kind: ResKind,
        capacity: Option<u64>,
        class: Option<&'static str>,
        st: ResState,
    ) -> ResId {
        let id = self.resources.len() as ResId;
        match self.resources.reuse() {
            Some(r) => {
                r.name = name;
                r.kind = kind;
                r.class = class;
                r.capacity = capacity;
                r.waiters.clear();
                r.pending.clear();
                r.st.reset_to(st);
            }
            None => self.resources.push(Resource {
                name,
                kind,
                class,
                capacity,
                waiters: Vec::new(),
                pending: Vec::new(),
                st,
            }),
        }
        id
    }

    /// The current task reached a scheduling point and stays enabled.
    ///
    /// Returns true if the task is to go on at once: the next step is taken
    /// here, as the step loop would take it, and it fell to this same task.
    /// The caller then carries on with its operation instead of returning
    /// `Pending`. See [`State::take_next_step_here`].
    #[inline]
    #[must_use = "on true the task goes on with its operation"]
    pub fn yield_now(&mut self) -> bool {
        self.suspended = true;
        self.take_next_step_here()
    }

    /// Takes the scheduling decision of the next step inside the current
    /// task's poll, when nothing the loop looks at could differ: no failure,
    /// steps left, no sleeper due (both in [`State::inline_left`]), and a
    /// strategy that neither needs footprints nor may halt a run (random and
    /// PCT; not DFS, replay or shrink). A live foreground task is given: only
    /// the loop retires tasks. Everything the loop does for a step is done
    /// here in its order, with the same arguments to the strategy, so the run
    /// is the same step for step and draw for draw. What is saved is the
    /// task's return to the loop and its resumption, most of the cost of a
    /// step, and most steps of a run go to the task that just yielded.
    ///
    /// A pick of another task is kept in `next_pick` for the loop, which
    /// uses it without asking the strategy again.
    #[inline(always)]
    fn take_next_step_here(&mut self) -> bool {
        if self.failure.is_some() | (self.inline_left == 0) {
            return false;
        }
        // With this task the only one enabled, the random strategy's pick is
        // forced and draws nothing; any other pick goes to the strategy.
        let forced = self.enabled.len() == 1 && matches!(self.strategy, StrategySlot::Random(_));
        if !forced && !self.pick_here() {
            return false;
        }
        if let Some(rec) = self.rec.as_mut() {
            if self.enabled.len() > 1 {
                rec.choices.push(self.current);
            }
            rec.schedule.push(self.current);
        }
        self.inline_left -= 1;
        self.step += 1;
        self.clock += self.op_cost;
        self.suspended = false;
        true
    }

    /// How many steps a poll that starts now may take in place (see
    /// [`State::inline_left`]). A scheduling point at the `j`th of them
    /// (from 0) sees step `step + j` and clock `clock + j * op_cost`; it must
    /// go back to the loop at the step limit and once a sleeper is due.
    pub fn inline_budget(&self) -> u64 {
        if !self.inline_steps {
            return 0;
        }
        let mut n = self.max_steps.saturating_sub(self.step);
        if let Some(std::cmp::Reverse((at, _, _))) = self.timers.peek() {
            let due = match at.checked_sub(self.clock) {
                None | Some(0) => 0,
                Some(_) if self.op_cost == 0 => u64::MAX,
                Some(d) => d.div_ceil(self.op_cost),
            };
            n = n.min(due);
        }
        n
    }

    /// The strategy's pick at a scheduling point, with the arguments the
    /// loop would give it: true if it fell to the current task, else the
    /// pick is kept for the loop.
    #[inline(never)]
    fn pick_here(&mut self) -> bool {
        let me = self.current;
        let t = self.strategy.pick_task(&self.enabled, Some(me), self.step + 1);
        if t != me {
            self.next_pick = Some(t);
            // The loop runs the pick; nothing more is taken in this poll.
            self.inline_left = 0;
        }
        t == me
    }

    /// The current task cannot proceed: it leaves the enabled set until woken.
    /// Detects a deadlock formed by this wait.
    pub fn block(&mut self, wait: Wait) {
        self.suspended = true;
        self.block_task(self.current, wait);
    }

    /// Task `t` (the current one or another) cannot proceed.
    pub fn block_task(&mut self, t: TaskId, wait: Wait) {
        self.disable(t, wait);
        if self.failure.is_none() && !self.holder_can_run(wait) {
            self.detect_at_block(t);
        }
    }

    /// The bookkeeping of [`State::block_task`] without its deadlock check,
    /// for a wait whose holder is known to run.
    #[inline(always)]
    fn disable(&mut self, t: TaskId, wait: Wait) {
        let task = &mut self.tasks[t as usize];
        task.status = Status::Blocked(wait);
        if !task.held.is_empty() {
            self.note_held_across(t, wait);
        }
        self.enabled.remove(t);
        // Background waiters too: one left parked may hold what a
        // foreground task waits for.
        if matches!(wait, Wait::Send(_) | Wait::Recv(_) | Wait::Write(_) | Wait::Read(_) | Wait::Select) {
            self.end_waiting.insert(t);
        }
        // Lock waiters retry when the lock is released; every other wait is
        // completed by a grant from the primitive's own queues.
        if let Wait::Lock(r) | Wait::RLock(r) = wait {
            self.resources[r as usize].waiters.push(t);
        }
        // A join names the task it waits for.
        let peer = if let Wait::Join(u) = wait { Some(u) } else { None };
        self.record(t, EventKind::Block, wait.resource(), None, None, peer, Some(wait.op()));
    }

    #[inline(never)]
    fn detect_at_block(&mut self, t: TaskId) {
        match crate::waitfor::detect_from(self, t) {
            Verdict::Dead(d) => self.failure = Some(Outcome::Deadlock(d)),
            Verdict::Alive => {}
            Verdict::Undecided => {
                let undecided = &mut self.scratch.undecided;
                undecided.push(t);
                // A model that keeps spawning may never let every task start:
                // a task that blocks again is kept once (the order of the
                // re-judge is by task then).
                if undecided.len() > 2 * self.tasks.len() + 64 {
                    undecided.sort_unstable();
                    undecided.dedup();
                }
            }
        }
    }

    /// The last spawned task is about to take its first step (where a task
    /// declares the channel ends it holds): after it, the waits that could
    /// not be judged can be. Sends the loop to its rarely taken branch (by
    /// the step limit it tests anyway: the common path tests nothing more)
    /// after this one step.
    #[inline(never)]
    pub fn judge_after_step(&mut self) {
        if self.scratch.judge_due.is_some() {
            // Asked already in this step: the limit saved is the real one.
            return;
        }
        self.scratch.judge_due = Some(self.max_steps);
        self.max_steps = self.step;
        self.inline_left = 0;
    }

    /// Judges again the waits [`State::detect_at_block`] could not, if
    /// [`State::judge_after_step`] asked for it and every spawned task has
    /// run: a deadlock they closed is found now rather than never (a
    /// heartbeat task that runs on hides it from every later check but the
    /// step limit).
    #[inline(never)]
    pub fn judge_undecided(&mut self) {
        let Some(max_steps) = self.scratch.judge_due.take() else { return };
        self.max_steps = max_steps;
        if !self.scratch.stopped.is_empty() {
            let mut stopped = std::mem::take(&mut self.scratch.stopped);
            for &t in &stopped {
                crate::rt::execution::judge_finished(self, t);
                self.leave_ends(t);
            }
            stopped.clear();
            self.scratch.stopped = stopped;
        }
        if self.unstarted > 0 || self.failure.is_some() || self.foreground_live == 0 {
            // Spawned again in that step: judged once that task has run.
            // Or the run is over: background tasks blocked at the end are
            // parked, not deadlocked (as at any other end of a run).
            return;
        }
        // With every task started, none of these waits is undecided again:
        // nothing is pushed onto the list while it is taken.
        let mut undecided = std::mem::take(&mut self.scratch.undecided);
        for &t in &undecided {
            if self.failure.is_some() {
                break;
            }
            if matches!(self.tasks[t as usize].status, Status::Blocked(_)) {
                self.detect_at_block(t);
            }
        }
        debug_assert!(self.scratch.undecided.is_empty(), "a wait undecided with every task started");
        undecided.clear();
        self.scratch.undecided = undecided;
    }

    /// True (and noted as seen) if "took `to` while holding `from`" is new
    /// in this run; the caller then adds it to `lock_edges`.
    #[inline]
    fn new_edge(&mut self, from: ResId, to: ResId) -> bool {
        if (from < 64) & (to < 64) {
            let row = &mut self.edge_rows[from as usize];
            let bit = 1u64 << to;
            let new = *row & bit == 0;
            *row |= bit;
            new
        } else {
            !self.lock_edges.iter().any(|e| e.0 == from && e.1 == to)
        }
    }

    /// True if "took `to` while holding `from`" needs no new edge: seen in
    /// this run among the first 64 resources. False for ids from 64 on,
    /// whose edges [`State::order_edges`] looks up in the list. (A lock
    /// taken while held is a second read lock, an edge to itself: a
    /// monitor's re-entry does not count as taking it.)
    #[inline]
    fn seen_edge(&self, from: ResId, to: ResId) -> bool {
        (from < 64) & (to < 64) && self.edge_rows[from as usize] & (1u64 << to) != 0
    }

    /// Empties `lock_edges` and the bit rows that mirror it.
    pub fn clear_lock_edges(&mut self) {
        for e in &self.lock_edges {
            if (e.0 < 64) & (e.1 < 64) {
                self.edge_rows[e.0 as usize] = 0;
            }
        }
        self.lock_edges.clear();
    }

    /// Records the locks `t` holds while it blocks: a lock wait is a
    /// lock-order edge already (as lockdep records the attempt); a send or a
    /// write is noted as held across a blocking operation.
    #[inline(never)]
    fn note_held_across(&mut self, t: TaskId, wait: Wait) {
        if let Wait::Lock(r) | Wait::RLock(r) | Wait::Drain(r) = wait {
            let at = self.top_frame(t);
            // A read lock asked for again while held is an edge to itself:
            // recursive read locking, which a writer in between deadlocks.
            // (Not under its own write lock: that wait is the deadlock itself.)
            let writes =
                matches!(&self.resources[r as usize].st, ResState::RwLock { writer: Some(w), .. } if w.task == t);
            let read = matches!(wait, Wait::RLock(_));
            let again = read && !writes;
            for i in 0..self.tasks[t as usize].held.len() {
                let HeldLock { lock: h, at: h_at } = self.tasks[t as usize].held[i];
                if (h != r || again) && self.new_edge(h, r) {
                    let modes = [self.read_held(t, h), read];
                    self.lock_edges.push((h, r, h_at, at, t, modes));
                }
            }
            return;
        }
        let op = match wait {
            Wait::Write(_) => "pipe write",
            Wait::Send(_) | Wait::Select => "channel send",
            // wait() lets go of its own monitor only: one held besides is
            // Java's nested monitor lockout, if the notifier needs it.
            Wait::Notify(_) => "wait()",
            _ => return,
        };
        let op_at = self.top_frame(t);
        // The resources it sends on or writes to, by index (no list is made):
        // the one of a send or write, or each send case of a select.
        let n = if let Wait::Select = wait { self.tasks[t as usize].cases.len() } else { 1 };
        for c in 0..n {
            let r = match wait {
                Wait::Send(r) | Wait::Write(r) | Wait::Notify(r) => r,
                _ => match self.tasks[t as usize].cases[c] {
                    (r, Dir::Send) => r,
                    _ => continue,
                },
            };
            for i in 0..self.tasks[t as usize].held.len() {
                let HeldLock { lock: l, at: l_at } = self.tasks[t as usize].held[i];
                if !self.held_across.iter().any(|h| h.0 == l && h.3 == r) {
                    self.held_across.push((l, l_at, op, r, op_at, t));
                }
            }
        }
    }

    /// A quick "no deadlock" for the common case: a lock whose holder can run.
    #[inline]
    fn holder_can_run(&self, wait: Wait) -> bool {
        let Wait::Lock(r) = wait else { return false };
        let holder = match &self.resources[r as usize].st {
            ResState::Mutex { holder } => *holder,
            ResState::Monitor { owner, .. } => *owner,
            _ => None,
        };
        holder.is_some_and(|h| matches!(self.tasks[h.task as usize].status, Status::Ready | Status::Sleeping))
    }

    /// Makes a blocked task ready again (it retries its operation when scheduled).
    pub fn wake(&mut self, t: TaskId) {
        let task = &mut self.tasks[t as usize];
        if matches!(task.status, Status::Blocked(_) | Status::Sleeping) {
            task.status = Status::Ready;
            self.enabled.insert(t);
            let by = self.current;
            self.record(t, EventKind::Wake, None, None, None, Some(by), None);
        }
    }

    /// Completes a blocked task's operation on its behalf (hand-off) and makes it ready.
    pub fn grant(&mut self, t: TaskId, case: u32) {
        // The grantee's next step depends on this one (see `take_grant`).
        self.touch(crate::scheduler::Footprint::task_resource(t));
        let task = &mut self.tasks[t as usize];
        task.granted = Some(case);
        task.wait_gen = task.wait_gen.wrapping_add(1);
        task.cases.clear();
        self.wake(t);
    }

    /// True if `t` is blocked and `gen` is its current wait generation.
    #[inline]
    pub fn is_waiting(&self, t: TaskId, gen: u32) -> bool {
        let task = &self.tasks[t as usize];
        matches!(task.status, Status::Blocked(_)) && task.wait_gen == gen
    }

    /// The current task reached a lock operation on `r` (a mutex or a
    /// monitor entry): it stays enabled if it could take the lock now, and
    /// blocks at once otherwise.
    ///
    /// Returns true if the task goes on at once (see [`State::yield_now`]).
    #[inline(always)]
    #[must_use = "on true the task goes on with its operation"]
    pub fn yield_lock(&mut self, r: ResId) -> bool {
        let t = self.current;
        if self.lock_free_for(r, t) {
            if self.yield_now() {
                // It takes the lock in this same call: nobody sees it pending.
                return true;
            }
            self.resources[r as usize].pending.push(t);
            self.tasks[t as usize].pending_lock = Some(r);
            false
        } else {
            self.suspended = true;
            self.block_task(t, Wait::Lock(r));
            false
        }
    }

    /// Every task's known next access that `keep` keeps: the resource a
    /// blocked task waits on, or the lock an enabled task is about to take
    /// (for partial-order reduction).
    #[inline]
    pub fn pending_accesses(&self, out: &mut Vec<(TaskId, ResId)>, keep: impl Fn(TaskId, ResId) -> bool) {
        out.clear();
        for i in self.live.iter() {
            let task = &self.tasks[i as usize];
            match task.status {
                Status::Blocked(Wait::Select) => {
                    out.extend(task.cases.iter().map(|&(r, _)| (i, r)).filter(|&(i, r)| keep(i, r)));
                }
                Status::Blocked(w) => {
                    if let Some(r) = w.resource().filter(|&r| keep(i, r)) {
                        out.push((i, r));
                    }
                }
                Status::Ready => {
                    if let Some(r) = task.pending_lock.filter(|&r| keep(i, r)) {
                        out.push((i, r));
                    }
                }
                _ => {}
            }
        }
    }

    fn lock_free_for(&self, r: ResId, t: TaskId) -> bool {
        match &self.resources[r as usize].st {
            ResState::Mutex { holder } => holder.is_none(),
            ResState::Monitor { owner, .. } => owner.is_none_or(|h| h.task == t),
            _ => true,
        }
    }

    /// Task `t` took lock `r`: every other task about to take it is disabled.
    #[inline]
    pub fn took_lock(&mut self, r: ResId, t: TaskId) {
        self.tasks[t as usize].pending_lock = None;
        let pending = &mut self.resources[r as usize].pending;
        // Usually the taker was the only one about to take it.
        if pending.len() <= 1 && pending.first().is_none_or(|&p| p == t) {
            pending.clear();
            return;
        }
        self.disable_pending(r, t);
    }

    /// Disables every task but `t` about to take lock `r`, which `t` took:
    /// what [`State::disable`] does for each, with no deadlock check (the
    /// holder is `t`, which runs). The lock and the tasks are borrowed once
    /// for the whole walk; what needs the whole state (recording, the
    /// lock-order edges of a task that holds other locks) is done apart, in
    /// the same task order.
    #[inline(never)]
    fn disable_pending(&mut self, r: ResId, t: TaskId) {
        let wait = Wait::Lock(r);
        let res = &mut self.resources[r as usize];
        let from = res.waiters.len();
        let mut holding = false;
        for &p in &res.pending {
            let task = &mut self.tasks[p as usize];
            // Every pending task but the taker is held up: the taker holds
            // the lock now (a monitor's own re-entry is not pending).
            if p != t && task.status == Status::Ready {
                task.status = Status::Blocked(wait);
                holding |= !task.held.is_empty();
                self.enabled.remove(p);
                res.waiters.push(p);
            }
        }
        res.pending.clear();
        if holding | self.observed {
            self.note_disabled(r, from);
        }
    }

    /// For [`State::disable_pending`]: the held-across facts and the Block
    /// event of each task it disabled (`waiters[from..]` of lock `r`), in its order.
    #[cold]
    fn note_disabled(&mut self, r: ResId, from: usize) {
        let wait = Wait::Lock(r);
        for i in from..self.resources[r as usize].waiters.len() {
            let p = self.resources[r as usize].waiters[i];
            if !self.tasks[p as usize].held.is_empty() {
                self.note_held_across(p, wait);
            }
            self.record(p, EventKind::Block, Some(r), None, None, None, Some(wait.op()));
        }
    }

    /// Wakes every task queued on resource `r`.
    #[inline]
    pub fn wake_all(&mut self, r: ResId) {
        if !self.resources[r as usize].waiters.is_empty() {
            self.wake_waiters(r);
        }
    }

    /// What [`State::wake`] does for each task waiting on `r`, with the
    /// lock and the tasks borrowed once for the whole walk.
    #[inline(never)]
    fn wake_waiters(&mut self, r: ResId) {
        if self.observed {
            return self.wake_waiters_observed(r);
        }
        let res = &mut self.resources[r as usize];
        let eager = matches!(res.st, ResState::Mutex { .. } | ResState::Monitor { .. });
        for &t in &res.waiters {
            let task = &mut self.tasks[t as usize];
            if task.waits_on(r) {
                task.status = Status::Ready;
                self.enabled.insert(t);
                if eager {
                    // Still about to take the lock: the next taker disables it again.
                    res.pending.push(t);
                    task.pending_lock = Some(r);
                }
            }
        }
        res.waiters.clear();
    }

    /// [`State::wake_waiters`] one task at a time through [`State::wake`],
    /// which records each Wake event in its place.
    #[cold]
    fn wake_waiters_observed(&mut self, r: ResId) {
        let eager = matches!(self.resources[r as usize].st, ResState::Mutex { .. } | ResState::Monitor { .. });
        // By index: waking a task adds nothing to `waiters`.
        for i in 0..self.resources[r as usize].waiters.len() {
            let t = self.resources[r as usize].waiters[i];
            if self.tasks[t as usize].waits_on(r) {
                self.wake(t);
                if eager {
                    self.resources[r as usize].pending.push(t);
                    self.tasks[t as usize].pending_lock = Some(r);
                }
            }
        }
        self.resources[r as usize].waiters.clear();
    }

    /// Takes the grant left for the current task, if any.
    #[inline]
    pub fn take_grant(&mut self) -> Option<u32> {
        let g = self.tasks[self.current as usize].granted.take();
        if g.is_some() {
            self.touch(crate::scheduler::Footprint::task_resource(self.current));
            if let Some(fp) = self.footprint.as_mut() {
                fp.granted = true;
            }
        }
        g
    }

    /// Records an event when recording is on, and notes the resource in the
    /// step's footprint when a strategy asks for footprints. `task` is the
    /// subject. Inlined to one test of [`State::observed`] when neither is on.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn record(
        &mut self,
        task: TaskId,
        kind: EventKind,
        resource: Option<ResId>,
        amount: Option<u64>,
        buffered: Option<u64>,
        peer: Option<TaskId>,
        op: Option<&'static str>,
    ) {
        if self.observed {
            self.record_observed(task, kind, resource, amount, buffered, peer, op);
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn record_observed(
        &mut self,
        task: TaskId,
        kind: EventKind,
        resource: Option<ResId>,
        amount: Option<u64>,
        buffered: Option<u64>,
        peer: Option<TaskId>,
        op: Option<&'static str>,
    ) {
        if let (Some(r), Some(fp), false) = (resource, self.footprint.as_mut(), kind == EventKind::Value) {
            let set = if kind == EventKind::Block { &mut fp.reads } else { &mut fp.resources };
            set.insert(r);
        }
        if let Some(rec) = self.rec.as_mut() {
            let frame = self.tasks[task as usize].frames.last().copied();
            rec.event(self.step, self.clock, task, kind, resource, amount, buffered, frame, peer, op);
            // A select waits on its cases, not one resource: they go with the event.
            if let (EventKind::Block, Some("select")) = (kind, op) {
                let cases = self.tasks[task as usize]
                    .cases
                    .iter()
                    .map(|&(r, d)| crate::trace::Case { resource: r, dir: d.into() });
                rec.events.last_mut().expect("just pushed").cases.extend(cases);
            }
        }
    }

    /// Panics for the model's misuse of the primitive now running (Go's
    /// "send on closed channel", a declaration left out), citing the
    /// model's line that called it if the primitive said (see [`with_at`]),
    /// else this call's.
    #[cold]
    #[track_caller]
    pub fn misuse(&self, msg: std::fmt::Arguments<'_>) -> ! {
        match self.op_at {
            Some(at) => misuse_at(at, msg),
            None => panic!("{msg}"),
        }
    }

    /// Marks the current task as holding one end of a channel or pipe.
    #[inline]
    pub fn hold_end(&mut self, r: ResId, dir: Dir) {
        self.hold_end_for(r, dir, self.current)
    }

    /// Marks task `t` as holding one end of a channel or pipe: it used it.
    #[inline]
    pub fn hold_end_for(&mut self, r: ResId, dir: Dir, t: TaskId) {
        if !self.end(r, dir).contains(t) {
            self.add_user(r, dir, t);
        }
    }

    /// Task `t`, not among the holders of this end, uses it: one of them
    /// now (noted for `leave_ends`), and a misuse if they were declared.
    fn add_user(&mut self, r: ResId, dir: Dir, t: TaskId) {
        let undeclared = self.end(r, dir).insert(t);
        self.ends[t as usize].push((r, dir));
        if undeclared {
            self.undeclared_use(r, dir, t);
        }
    }

    /// The current task closes one end of a pipe: a use of it, which a
    /// task declared only to close it may make.
    pub fn close_end(&mut self, r: ResId, dir: Dir) {
        let t = self.current;
        if !self.end(r, dir).holds(t) {
            self.add_user(r, dir, t);
        }
    }

    /// Task `t` used an end of `r` whose holders the model declared without
    /// it. The wait-for graph trusts a declared end's holders to be all of
    /// them, so a wait on the other end could have been judged a deadlock
    /// while this task was still to use it: the model is told at once, as
    /// a panic in the task (reported as the run's outcome). The receive end
    /// of a signal channel is the exception: nobody waits to close one.
    #[cold]
    fn undeclared_use(&mut self, r: ResId, dir: Dir, t: TaskId) {
        let res = &self.resources[r as usize];
        let (kind, end) = match (&res.st, dir) {
            (ResState::Chan { signal: true, .. }, Dir::Recv) => return,
            (ResState::Chan { .. }, Dir::Send) => ("channel", "sends on (or closes)"),
            (ResState::Chan { .. }, Dir::Recv) => ("channel", "receives from"),
            (_, Dir::Send) => ("pipe", "writes to (or closes the write end of)"),
            (_, Dir::Recv) => ("pipe", "reads from (or closes the read end of)"),
        };
        self.touch(r);
        let res = &self.resources[r as usize];
        self.misuse(format_args!(
            "sim: task {t} (\"{}\") {end} {kind} \"{}\", whose holders of that end were declared without it: \
             declare every task that uses or closes the end, or hands it to a task it spawns later, \
             when it starts (declare_sender, declare_receiver, declare_writer, declare_reader, or \
             their _for forms), or none",
            self.tasks[t as usize].name, res.name
        ));
    }

    /// A declaration that adds task `t` to holders known since `since` (the
    /// step of their first declaration, or `None` if this is it) comes in
    /// time: in that step, before `t` ran, or in the step `t` first ran in.
    /// Detection takes the declared holders as all there are once every task
    /// has started: a wait judged in a step between, with `t` left out, could
    /// have been reported as a deadlock `t` would have released. (A new
    /// channel's holders, declared as it is made, and a task's own at its
    /// start are in time.)
    fn check_declared_in_time(&self, t: TaskId, since: Option<u64>, what: &str, r: ResId) {
        let task = &self.tasks[t as usize];
        if since.is_some_and(|at| at != self.step) && task.started && task.first_step != self.step {
            let who = if t == self.current { "declared itself" } else { "was declared" };
            self.misuse(format_args!(
                "sim: task {t} (\"{}\") {who} {what} \"{}\" after its first scheduling point, beside \
                 others declared in an earlier step: declare each when the channel, pipe or monitor is made \
                 or when the task starts (before it locks, sends, sleeps or yields; or from the task that \
                 spawns it, right after the spawn, with the _for forms)",
                task.name, self.resources[r as usize].name
            ));
        }
    }

    /// The model declared that task `t` may notify monitor `r`.
    pub fn declare_notifier(&mut self, r: ResId, t: TaskId) {
        if t as usize >= self.tasks.len() {
            self.misuse(format_args!(
                "sim: a notifier of \"{}\" declared for task {t}, which does not exist (a TaskId from JoinHandle::id)",
                self.resources[r as usize].name
            ));
        }
        if !self.notifiers.contains(&(r, t)) {
            match self.notifiers_at.iter().find(|&&(m, _)| m == r) {
                Some(&(_, since)) => self.check_declared_in_time(t, Some(since), "a notifier of monitor", r),
                None => self.notifiers_at.push((r, self.step)),
            }
            self.notifiers.push((r, t));
        }
    }

    /// WaitGroup `r`'s counter is now `n` (see [`State::counters`]).
    pub fn set_counter(&mut self, r: ResId, n: u64) {
        match self.counters.iter_mut().find(|(m, _)| *m == r) {
            Some(c) => c.1 = n,
            None => self.counters.push((r, n)),
        }
    }

    /// WaitGroup `r`'s counter, if `r` is a WaitGroup.
    pub fn counter(&self, r: ResId) -> Option<u64> {
        self.counters.iter().find(|&&(m, _)| m == r).map(|&(_, n)| n)
    }

    /// True if monitor `r` declares its notifiers.
    #[inline]
    pub fn declares_notifiers(&self, r: ResId) -> bool {
        !self.notifiers.is_empty() && self.notifiers.iter().any(|&(m, _)| m == r)
    }

    /// A notify of `r` by `t`: if `r` declares its notifiers, `t` must be
    /// one (else a wait judged dead could have been notified: the run fails).
    #[inline]
    pub fn check_notifier(&mut self, r: ResId, t: TaskId) {
        if self.declares_notifiers(r) && !self.notifiers.contains(&(r, t)) {
            self.touch(r);
            let (task, res) = (&self.tasks[t as usize].name, &self.resources[r as usize]);
            // A Cond's notifies are its Signals and Broadcasts, a
            // WaitGroup's its Dones, each declared as such.
            if res.class == Some(crate::sync::COND_CLASS) {
                self.misuse(format_args!(
                    "sim: task {t} (\"{task}\") signals Cond \"{}\", whose signalers were declared without it: \
                     declare every task that signals or broadcasts it, or spawns a task that will, when it \
                     starts (declare_signaler, declare_signaler_for), or none",
                    res.name
                ));
            }
            if res.class == Some(crate::sync::WAITGROUP_CLASS) {
                self.misuse(format_args!(
                    "sim: task {t} (\"{task}\") calls Done on WaitGroup \"{}\", whose callers of Done were declared \
                     without it: declare every task that calls Done, or spawns a task that will, when it starts \
                     (declare_done, declare_done_for), or none",
                    res.name
                ));
            }
            self.misuse(format_args!(
                "sim: task {t} (\"{task}\") notifies monitor \"{}\", whose notifiers were declared without it: \
                 declare every task that notifies it, or spawns a task that will, when it starts \
                 (declare_notifier, declare_notifier_for), or none",
                res.name
            ));
        }
    }

    /// The model declared that task `t` holds one end of a channel or pipe.
    pub fn declare_end_for(&mut self, r: ResId, dir: Dir, t: TaskId) {
        self.declare_holder(r, dir, t, false);
    }

    /// The model declared that nobody holds one end of `r` (Go's
    /// `context.Background().Done()`, which nothing closes): waits on the
    /// other end are dead by themselves.
    pub fn declare_no_holders(&mut self, r: ResId, dir: Dir) {
        let step = self.step;
        self.end(r, dir).mark_declared(step);
    }

    /// True if one end of `r` has declared holders.
    pub fn end_known(&self, r: ResId, dir: Dir) -> bool {
        self.end_ref(r, dir).is_some_and(Holders::known)
    }

    /// True if one end of `r` has declared holders and `t` is not one of them.
    pub fn declared_without(&self, r: ResId, dir: Dir, t: TaskId) -> bool {
        self.end_ref(r, dir).is_some_and(|h| h.known() && !h.holds(t))
    }

    /// The model declared that task `t` only closes one end of a pipe (see [`Holders::declare_closer`]).
    pub fn declare_closer_for(&mut self, r: ResId, dir: Dir, t: TaskId) {
        self.declare_holder(r, dir, t, true);
    }

    fn declare_holder(&mut self, r: ResId, dir: Dir, t: TaskId, closer: bool) {
        if t as usize >= self.tasks.len() {
            self.misuse(format_args!(
                "sim: {} of \"{}\" declared for task {t}, which does not exist (a TaskId from JoinHandle::id)",
                if closer { "a closer" } else { "an end" },
                self.resources[r as usize].name
            ));
        }
        // A finished task that held this end has left its holders (see
        // `leave_ends`): declared again (`CancelFunc::declare_for` declares
        // its task on every context under it), it adds nothing, as a holder
        // still listed did not.
        if self.tasks[t as usize].status == Status::Finished && self.ends[t as usize].contains(&(r, dir)) {
            let step = self.step;
            self.end(r, dir).mark_declared(step);
            self.tasks[t as usize].holds_declared_end = true;
            return;
        }
        let what = match (&self.resources[r as usize].st, dir, closer) {
            (ResState::Chan { .. }, Dir::Send, _) => "a sender on channel",
            (ResState::Chan { .. }, Dir::Recv, _) => "a receiver from channel",
            (_, Dir::Send, false) => "a writer to pipe",
            (_, Dir::Recv, false) => "a reader from pipe",
            (_, Dir::Send, true) => "a closer of the write end of pipe",
            (_, Dir::Recv, true) => "a closer of the read end of pipe",
        };
        let since = self.end_ref(r, dir).and_then(|end| {
            let adds = if closer { !end.holds(t) } else { !end.contains(t) };
            end.declared_since().filter(|_| adds)
        });
        self.check_declared_in_time(t, since, what, r);
        let step = self.step;
        let end = self.end(r, dir);
        if closer {
            end.declare_closer(t, step);
        } else {
            let new = !end.contains(t);
            end.declare(t, step);
            if new {
                self.ends[t as usize].push((r, dir));
            }
        }
        self.tasks[t as usize].holds_declared_end = true;
    }

    /// Finished task `t` leaves the ends it held, once the waits it could
    /// have served are judged: every look at an end's holders passes over
    /// finished ones, and a ttrpc run spawns a goroutine a call onto the
    /// same channels (6,000 calls: 4 s, most of it in such looks).
    #[inline]
    pub fn leave_ends(&mut self, t: TaskId) {
        if !self.ends[t as usize].is_empty() {
            self.leave_ends_held(t);
        }
    }

    /// (`ends[t]` keeps the list: a declaration of `t` after its finish
    /// finds there that it held the end, see [`State::declare_holder`].)
    #[inline(never)]
    fn leave_ends_held(&mut self, t: TaskId) {
        for i in 0..self.ends[t as usize].len() {
            let (r, dir) = self.ends[t as usize][i];
            self.end(r, dir).remove(t);
        }
    }

    /// Task `t`, a declared holder of a channel or pipe end, finished: a
    /// task blocked on the other end may have lost its last releaser, and
    /// its wait is dead by itself (see [`crate::waitfor`]). Judged now, as
    /// a wait is when it blocks: tasks that run on would hide it from every
    /// later check but the step limit.
    #[cold]
    pub fn judge_waits_served_by(&mut self, t: TaskId) {
        // Only the tasks that blocked on an end since the last look and may
        // still wait there (`end_waiting`, kept loosely: a task that no
        // longer waits on an end leaves it here), not every task.
        let mut waiting = std::mem::take(&mut self.end_waiting);
        let mut gone = std::mem::take(&mut self.end_gone);
        gone.clear();
        for u in waiting.iter() {
            if self.failure.is_some() {
                break;
            }
            let task = &self.tasks[u as usize];
            // `t` held an end of a resource `u` waits on: either side, as a
            // close on the waiter's own side may wake it too.
            let served = |s: &State, r: ResId| {
                [Dir::Send, Dir::Recv].into_iter().any(|d| s.end_ref(r, d).is_some_and(|h| h.holds(t)))
            };
            let waits = match task.status {
                Status::Blocked(Wait::Send(r) | Wait::Write(r) | Wait::Recv(r) | Wait::Read(r)) => served(self, r),
                Status::Blocked(Wait::Select) => task.cases.iter().any(|&(r, _)| served(self, r)),
                _ => {
                    gone.push(u);
                    false
                }
            };
            if waits {
                self.detect_at_block(u);
            }
        }
        for &u in &gone {
            waiting.remove(u);
        }
        self.end_gone = gone;
        self.end_waiting = waiting;
    }

    /// Task `t` finished: if it was a declared notifier of a monitor, a task
    /// in that monitor's `wait()` may have lost its last notifier, and is
    /// judged now, as [`State::judge_waits_served_by`] judges an end's
    /// waiters (a task that runs on would hide it from every later check
    /// but the step limit).
    #[cold]
    pub fn judge_waits_notified_by(&mut self, t: TaskId) {
        if !self.notifiers.iter().any(|&(_, u)| u == t) {
            return;
        }
        for u in 0..self.tasks.len() as TaskId {
            if self.failure.is_some() {
                break;
            }
            if let Status::Blocked(Wait::Notify(r)) = self.tasks[u as usize].status {
                if self.notifiers.contains(&(r, t)) {
                    self.detect_at_block(u);
                }
            }
        }
    }

    /// The holders of an end of channel or pipe `r`, if it is one.
    fn end_ref(&self, r: ResId, dir: Dir) -> Option<&Holders> {
        match (&self.resources[r as usize].st, dir) {
            (ResState::Chan { senders: h, .. }, Dir::Send)
            | (ResState::Chan { receivers: h, .. }, Dir::Recv)
            | (ResState::Pipe { writers: h, .. }, Dir::Send)
            | (ResState::Pipe { readers: h, .. }, Dir::Recv) => Some(h),
            _ => None,
        }
    }

    #[inline]
    fn end(&mut self, r: ResId, dir: Dir) -> &mut Holders {
        match (&mut self.resources[r as usize].st, dir) {
            (ResState::Chan { senders: h, .. }, Dir::Send)
            | (ResState::Chan { receivers: h, .. }, Dir::Recv)
            | (ResState::Pipe { writers: h, .. }, Dir::Send)
            | (ResState::Pipe { readers: h, .. }, Dir::Recv) => h,
            _ => unreachable!("an end of a lock"),
        }
    }

    /// A data choice among `n` alternatives, through the strategy. A forced
    /// choice (`n == 1`) asks nothing and records nothing, so schedules stay
    /// short and a forced step added to a model shifts no later choice.
    #[inline]
    pub fn pick_index(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let k = self.strategy.get().pick_index(n);
        if let Some(rec) = self.rec.as_mut() {
            rec.choices.push(k as u32);
        }
        if let Some(fp) = self.footprint.as_mut() {
            fp.data_choice = true;
        }
        k
    }

    /// Notes that the current step touched resource `r` (for the footprint a
    /// partial-order-reducing strategy asks for).
    #[inline(always)]
    pub fn touch(&mut self, r: u32) {
        if self.footprint.is_some() {
            self.touch_footprint(r);
        }
    }

    /// For partial-order reduction: task `t` was spawned (`live`) or
    /// finished, which touches its pseudo-resource and changes [`State::live`].
    #[cold]
    pub fn spawned_or_finished(&mut self, t: TaskId, live: bool) {
        self.touch_footprint(crate::scheduler::Footprint::task_resource(t));
        if live {
            self.live.insert(t);
        } else {
            self.live.remove(t);
        }
    }

    /// For partial-order reduction: the current step set a timer or read
    /// the clock (see [`crate::scheduler::Footprint::timed`]).
    pub fn timed_step(&mut self) {
        if let Some(fp) = self.footprint.as_mut() {
            fp.timed = true;
        }
    }

    fn touch_footprint(&mut self, r: u32) {
        if let Some(fp) = self.footprint.as_mut() {
            fp.resources.insert(r);
        }
    }

    /// Task `t` took lock `r` (not a reentrant re-entry): lock-order edges
    /// from every lock it already holds.
    #[inline]
    pub fn acquired(&mut self, t: TaskId, r: ResId) {
        let at = self.top_frame(t);
        self.acquired_at(t, r, at);
    }

    /// [`State::acquired`] with `t`'s current frame `at` already at hand.
    #[inline]
    pub fn acquired_at(&mut self, t: TaskId, r: ResId, at: Option<Frame>) {
        let held = &self.tasks[t as usize].held;
        // Usually the one lock it holds is one it held when it took this
        // lock before in the run: a look at a bit row, without a call.
        match held.len() {
            0 => {}
            1 if self.seen_edge(held[0].lock, r) => {}
            _ => self.order_edges(t, r, at),
        }
        self.tasks[t as usize].held.push(HeldLock { at, lock: r });
    }

    #[inline(never)]
    fn order_edges(&mut self, t: TaskId, r: ResId, at: Option<Frame>) {
        // `r` is taken already, so held.
        let read = self.read_held(t, r);
        for i in 0..self.tasks[t as usize].held.len() {
            let HeldLock { lock: h, at: h_at } = self.tasks[t as usize].held[i];
            // `h == r`: a read lock taken again (recursive read locking).
            if self.new_edge(h, r) {
                let modes = [self.read_held(t, h), read];
                self.lock_edges.push((h, r, h_at, at, t, modes));
            }
        }
    }

    /// True if lock `r`, which `t` holds, is an RWMutex `t` holds for
    /// reading (its writer, if any, is another task).
    fn read_held(&self, t: TaskId, r: ResId) -> bool {
        matches!(&self.resources[r as usize].st, ResState::RwLock { writer, .. } if writer.is_none_or(|w| w.task != t))
    }

    /// Task `t` asks to write-lock RWMutex `r`: noted once a run, with
    /// where it asked, whether or not it gets the lock.
    pub fn write_asked(&mut self, t: TaskId, r: ResId) {
        if !self.rw_written.iter().any(|w| w.0 == r) {
            let at = self.top_frame(t);
            self.rw_written.push((r, at, t));
        }
    }

    /// Task `t` let lock `r` go.
    #[inline]
    pub fn released(&mut self, t: TaskId, r: ResId) {
        let held = &mut self.tasks[t as usize].held;
        // Locks are usually let go in the reverse order of taking.
        if held.last().is_some_and(|h| h.lock == r) {
            held.pop();
        } else if let Some(i) = held.iter().rposition(|h| h.lock == r) {
            held.remove(i);
        }
    }

    /// Notes that the current step looked at resource `r` without changing it.
    #[inline(always)]
    pub fn touch_read(&mut self, r: u32) {
        if self.footprint.is_some() {
            self.touch_read_footprint(r);
        }
    }

    #[cold]
    fn touch_read_footprint(&mut self, r: u32) {
        if let Some(fp) = self.footprint.as_mut() {
            fp.reads.insert(r);
        }
    }

    pub fn fail(&mut self, outcome: Outcome) {
        if self.failure.is_none() {
            self.failure = Some(outcome);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ResKind;

    /// `ResKind::ALL` is what the trace reader accepts: a kind left out of
    /// it would make valid traces unreadable. The match has no wildcard, so
    /// a new kind does not compile until it has a place here.
    #[test]
    fn every_resource_kind_is_in_all_once() {
        let place = |k: ResKind| match k {
            ResKind::Mutex => 0,
            ResKind::RwMutex => 1,
            ResKind::Monitor => 2,
            ResKind::Chan => 3,
            ResKind::Pipe => 4,
            ResKind::Atomic => 5,
        };
        let places: Vec<usize> = ResKind::ALL.iter().map(|&k| place(k)).collect();
        assert_eq!(places, (0..6).collect::<Vec<_>>());
    }
}
