//! The step loop: pick an enabled task, poll it to its next scheduling point,
//! repeat until every foreground task has returned or the run fails.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BinaryHeap;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use super::cell::TaskCell;
use super::{set_current, State, Status, StrategySlot, Task, TaskId, TaskSet};
use crate::outcome::Outcome;
use crate::scheduler::Strategy;
use crate::trace::{EventKind, FrameInfo, Recorder, ResourceInfo, TaskInfo};

/// The settings of one execution.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub seed: u64,
    pub record: bool,
    /// With `record`: keep the events too (else only the schedule).
    pub events: bool,
    pub max_steps: u64,
    /// Virtual nanoseconds each step advances the clock.
    pub step_ns: u64,
}

/// What one execution produced.
pub(crate) struct RawRun {
    pub outcome: Outcome,
    pub steps: u64,
    pub time: u64,
    /// What was recorded, with the task and resource tables, when recording
    /// (boxed: a hunt's runs carry, copy and drop one pointer for it).
    pub recorded: Option<Box<Recorded>>,
    pub lock_order: crate::lockorder::LockOrder,
}

/// A recorded run's events and the tables that name their tasks and resources.
pub(crate) struct Recorded {
    pub recorder: Recorder,
    pub tasks: Vec<TaskInfo>,
    pub resources: Vec<ResourceInfo>,
}

fn noop_waker() -> Waker {
    const VTABLE: RawWakerVTable = RawWakerVTable::new(|_| RAW, |_| {}, |_| {}, |_| {});
    const RAW: RawWaker = RawWaker::new(std::ptr::null(), &VTABLE);
    // SAFETY: every vtable function ignores the (null) data pointer.
    unsafe { Waker::from_raw(RAW) }
}

thread_local! {
    /// True while a task is being polled: the panic hook stays quiet then and
    /// keeps the message and location for the outcome.
    static IN_POLL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The state of the last run on this thread, emptied but with its
    /// allocations (task blocks among them), for the next run to reuse.
    static POOL: RefCell<Option<Box<State>>> = const { RefCell::new(None) };
    /// Executions started on this thread (see `State::run_id`).
    static RUNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_POLL.with(|c| c.get()) {
                let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                    s.to_string()
                } else if let Some(s) = info.payload().downcast_ref::<String>() {
                    s.clone()
                } else {
                    "non-string panic payload".to_string()
                };
                let full = match info.location() {
                    Some(l) => format!("{msg} (at {}:{})", l.file(), l.line()),
                    None => msg,
                };
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(full));
            } else {
                previous(info)
            }
        }));
    });
}

/// The strategy a pooled state holds between runs (a zero-sized box: no allocation).
struct Idle;

impl Strategy for Idle {
    fn pick_task(&mut self, enabled: &TaskSet, _last: Option<TaskId>, _step: u64) -> TaskId {
        enabled.nth(0)
    }
    fn pick_index(&mut self, _n: usize) -> usize {
        0
    }
    fn name(&self) -> String {
        "idle".to_string()
    }
}

/// Owns the state (and through it the task cells) of one execution.
pub(crate) struct Execution {
    state: Box<State>,
}

/// Restores the previous thread-local state pointer even if the loop unwinds.
struct CurrentGuard(*mut State);
impl Drop for CurrentGuard {
    fn drop(&mut self) {
        set_current(self.0);
    }
}

impl Execution {
    /// An execution with `strategy`, or the random strategy from the seed.
    pub fn new(cfg: &RunConfig, strategy: Option<Box<dyn Strategy>>) -> Execution {
        install_panic_hook();
        let footprint =
            if strategy.as_ref().is_some_and(|b| b.wants_footprints()) { Some(Default::default()) } else { None };
        // See `State::take_next_step_here`.
        let inline_steps = strategy.as_ref().is_none_or(|b| !b.wants_footprints() && !b.may_halt());
        let run_id = RUNS.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        let state = match POOL.with(|p| p.borrow_mut().take()) {
            Some(mut st) => {
                st.tasks.clear();
                st.enabled.clear();
                st.end_waiting.clear();
                st.unstarted = 0;
                st.foreground_live = 0;
                st.current = 0;
                st.resources.clear();
                st.timers.clear();
                st.timer_seq = 0;
                st.clock = 0;
                st.step = 0;
                st.op_cost = cfg.step_ns;
                match (strategy, &mut st.strategy) {
                    // Reseeded in place: no 300-byte generator moved in per run.
                    (None, StrategySlot::Random(r)) => r.reseed(cfg.seed),
                    (None, slot) => *slot = StrategySlot::Random(crate::scheduler::RandomStrategy::new(cfg.seed)),
                    (Some(b), slot) => *slot = StrategySlot::Other(b),
                }
                st.rec = if cfg.record { Some(Recorder::default()) } else { None };
                st.failure = None;
                st.run_id = run_id;
                st.suspended = false;
                st.observed = (cfg.record && cfg.events) || footprint.is_some();
                st.inline_steps = inline_steps;
                st.inline_left = 0;
                st.max_steps = cfg.max_steps;
                st.next_pick = None;
                if footprint.is_some() {
                    st.live.clear();
                }
                st.footprint = footprint;
                st.pending_ops.clear();
                st.pending_changes.reset();
                st.clear_lock_edges();
                st.held_across.clear();
                st.rw_written.clear();
                st.joiners.clear();
                st.notes.clear();
                st.notifiers.clear();
                st.notifiers_at.clear();
                st.counters.clear();
                st.done_by.clear();
                st.op_at = None;
                st.scratch.undecided.clear();
                st.scratch.judge_due = None;
                st.scratch.stopped.clear();
                st
            }
            None => Box::new(State {
                tasks: Default::default(),
                enabled: TaskSet::new(),
                end_waiting: TaskSet::new(),
                end_gone: Vec::new(),
                live: TaskSet::new(),
                unstarted: 0,
                foreground_live: 0,
                current: 0,
                resources: Default::default(),
                timers: BinaryHeap::new(),
                timer_seq: 0,
                clock: 0,
                step: 0,
                op_cost: cfg.step_ns,
                strategy: match strategy {
                    Some(b) => StrategySlot::Other(b),
                    None => StrategySlot::Random(crate::scheduler::RandomStrategy::new(cfg.seed)),
                },
                rec: if cfg.record { Some(Recorder::default()) } else { None },
                failure: None,
                cells: Vec::new(),
                blocks: Default::default(),
                run_id,
                suspended: false,
                observed: (cfg.record && cfg.events) || footprint.is_some(),
                inline_steps,
                inline_left: 0,
                max_steps: cfg.max_steps,
                next_pick: None,
                scratch: Default::default(),
                footprint,
                pending_ops: Vec::new(),
                pending_changes: Default::default(),
                lock_edges: Vec::new(),
                edge_rows: [0; 64],
                held_across: Vec::new(),
                rw_written: Vec::new(),
                joiners: Vec::new(),
                notes: Default::default(),
                notifiers: Vec::new(),
                notifiers_at: Vec::new(),
                counters: Vec::new(),
                done_by: Vec::new(),
                op_at: None,
                ends: Vec::new(),
            }),
        };
        Execution { state }
    }

    /// Runs `main` as task 0 ("main") until the run ends.
    pub fn run<F: Future<Output = ()> + 'static>(mut self, main: F) -> RawRun {
        let sp: *mut State = &mut *self.state;
        let _restore = CurrentGuard(set_current(sp));
        // SAFETY (for every `unsafe { &mut *sp }` below): the state is boxed
        // and outlives this function; task polls reach it through the same
        // pointer, and no reference taken here is held across a poll.
        let st = unsafe { &mut *sp };
        let main = TaskCell::new(&mut st.blocks, main);
        spawn_task(st, Cow::Borrowed("main"), false, main);
        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut last: Option<TaskId> = None;
        let may_halt = unsafe { &mut *sp }.strategy.get().may_halt();
        let outcome = loop {
            let s = unsafe { &mut *sp };
            // One test on the common path; which of the three it was, after.
            if s.failure.is_some() | (s.foreground_live == 0) | (s.step >= s.max_steps) {
                // Here too after the step that `judge_after_step` asked for.
                if s.scratch.judge_due.is_some() {
                    s.judge_undecided();
                }
                if let Some(f) = s.failure.take() {
                    break f;
                }
                if s.foreground_live == 0 {
                    break Outcome::Completed;
                }
                if s.step >= s.max_steps {
                    break Outcome::StepLimit {
                        steps: s.step,
                        blocked: crate::waitfor::blocked_tasks(s),
                        running: crate::waitfor::running_tasks(s).into(),
                        shared: crate::waitfor::shared_names(s).into(),
                    };
                }
            }
            // Sleepers whose deadline has passed become ready.
            while let Some(&std::cmp::Reverse((at, _, t))) = s.timers.peek() {
                if at > s.clock {
                    break;
                }
                s.timers.pop();
                s.current = t;
                s.wake(t);
            }
            if s.enabled.is_empty() {
                // Nothing can run: jump the clock to the next deadline.
                if let Some(std::cmp::Reverse((at, _, t))) = s.timers.pop() {
                    s.clock = s.clock.max(at);
                    s.current = t;
                    s.wake(t);
                    continue;
                }
                let d = crate::waitfor::detect_global(s);
                break Outcome::Deadlock(Box::new(d));
            }
            let last_enabled = last.filter(|&l| s.enabled.contains(l));
            if s.footprint.is_some() {
                report_pending(s);
            }
            // A scheduling point may have picked already (`take_next_step_here`).
            let t = match s.next_pick.take() {
                Some(t) if s.enabled.contains(t) => t,
                _ => s.strategy.pick_task(&s.enabled, last_enabled, s.step + 1),
            };
            if may_halt {
                if let Some(halt) = s.strategy.get().halt() {
                    break Outcome::Stopped { step: s.step + 1, halt };
                }
            }
            debug_assert!(s.enabled.contains(t), "the strategy picked a task that is not enabled");
            if let Some(rec) = s.rec.as_mut() {
                if s.enabled.len() > 1 {
                    rec.choices.push(t);
                }
                rec.schedule.push(t);
            }
            s.step += 1;
            s.clock += s.op_cost;
            s.current = t;
            s.suspended = false;
            s.inline_left = s.inline_budget();
            let task = &mut s.tasks[t as usize];
            if !task.started {
                task.started = true;
                task.first_step = s.step;
                s.unstarted -= 1;
                if s.unstarted == 0 && !s.scratch.undecided.is_empty() {
                    s.judge_after_step();
                }
                if s.footprint.is_some() {
                    first_step_footprint(s, t);
                }
            }
            let cell = s.cells[t as usize];
            IN_POLL.with(|c| c.set(true));
            // SAFETY: cells stay live until teardown; a finished task is never
            // enabled again, and its cell answers `Ready` anyway.
            let polled = catch_unwind(AssertUnwindSafe(|| unsafe { cell.poll(&mut cx) }));
            IN_POLL.with(|c| c.set(false));
            last = Some(t);
            let s = unsafe { &mut *sp };
            match polled {
                // The cell dropped the finished future inside the poll, while
                // `t` was current: guards it still owned released as this task.
                Ok(Poll::Ready(())) => finish_task(s, t),
                Ok(Poll::Pending) => {
                    if !s.suspended && s.failure.is_none() {
                        // Recorded as a panic of the task, as the outcome says.
                        s.record(t, EventKind::Panic, None, None, None, None, None);
                        let frames = stack_of(s, t);
                        s.fail(Outcome::Panic {
                            task: s.tasks[t as usize].name.to_string(),
                            message: "the task awaited a future that is not a deadsim primitive \
                                      (only sim::sync, sim::time and sim::task operations may suspend a task)"
                                .to_string(),
                            frames,
                        });
                    }
                }
                Err(payload) => {
                    // The future stays in its cell: teardown drops it with the others.
                    // The hook's message has the location; without it (a test
                    // set its own hook over ours since), the payload's.
                    // The hook's one only if it is this panic's: a panic a task
                    // caught itself leaves the hook's message behind.
                    let own = if let Some(s) = payload.downcast_ref::<&str>() {
                        s.to_string()
                    } else if let Some(s) = payload.downcast_ref::<String>() {
                        s.clone()
                    } else {
                        "non-string panic payload".to_string()
                    };
                    let message = match LAST_PANIC.with(|p| p.borrow_mut().take()) {
                        Some(hooked) if hooked.starts_with(&own) => hooked,
                        _ => own,
                    };
                    s.record(t, EventKind::Panic, None, None, None, None, None);
                    let frames = stack_of(s, t);
                    // A panic outranks a failure recorded earlier in the same step.
                    s.failure = Some(Outcome::Panic { task: s.tasks[t as usize].name.to_string(), message, frames });
                }
            }
            let s = unsafe { &mut *sp };
            if let Some(fp) = s.footprint.as_mut() {
                s.strategy.get().step_done(t, fp);
                s.pending_changes.step(t, fp);
                fp.resources.clear();
                fp.reads.clear();
                fp.data_choice = false;
                fp.timed = false;
                fp.granted = false;
            }
        };
        let s = unsafe { &mut *sp };
        if s.footprint.is_some() && !matches!(outcome, Outcome::Stopped { .. }) {
            // The run's last state has known next accesses too (the lock a
            // task waits to take when nothing else can run): a search must
            // see their races as it sees those of every state before.
            report_pending(s);
        }
        if let Outcome::Deadlock(_) = &outcome {
            let t = s.current;
            s.record(t, EventKind::Deadlock, None, None, None, None, None);
        }
        // Teardown: leftover futures are dropped with no current execution, so
        // their guards and frames do nothing.
        set_current(std::ptr::null_mut());
        let s = &mut *self.state;
        for cell in s.cells.drain(..) {
            // SAFETY: each cell is live and freed once, here.
            unsafe { cell.free(&mut s.blocks) };
        }
        let recorded = s.rec.take().map(|recorder| {
            let tasks = s
                .tasks
                .iter()
                .enumerate()
                .map(|(i, t)| TaskInfo {
                    id: i as u32,
                    name: t.name.to_string(),
                    background: t.background,
                    parent: t.parent,
                })
                .collect();
            let resources = s
                .resources
                .iter()
                .enumerate()
                .map(|(i, r)| ResourceInfo {
                    id: i as u32,
                    name: r.name.to_string(),
                    kind: r.kind.as_str().to_string(),
                    capacity: r.capacity,
                    class: r.class.map(str::to_string),
                })
                .collect();
            Box::new(Recorded { recorder, tasks, resources })
        });
        let lock_order = if s.lock_edges.is_empty() && s.held_across.is_empty() && s.rw_written.is_empty() {
            crate::lockorder::LockOrder::default()
        } else {
            let name = |r: u32| s.resources[r as usize].name.clone();
            let class = |r: u32| s.resources[r as usize].class;
            let task = |t: u32| s.tasks[t as usize].name.clone();
            crate::lockorder::LockOrder {
                edges: s
                    .lock_edges
                    .iter()
                    .map(|&(from, to, from_at, to_at, t, [from_read, read])| crate::lockorder::OrderEdge {
                        from: name(from),
                        to: name(to),
                        class_from: class(from),
                        class_to: class(to),
                        from_at,
                        to_at,
                        task: task(t),
                        recursive: from == to,
                        from_read,
                        read,
                    })
                    .collect(),
                held_across: s
                    .held_across
                    .iter()
                    .map(|&(l, lock_at, op, r, op_at, t)| crate::lockorder::HeldAcross {
                        lock: name(l),
                        lock_at,
                        op,
                        resource: name(r),
                        op_at,
                        task: task(t),
                    })
                    .collect(),
                written: s
                    .rw_written
                    .iter()
                    .map(|&(r, at, t)| crate::lockorder::WriteLocked {
                        lock: name(r),
                        class: class(r),
                        at,
                        task: task(t),
                    })
                    .collect(),
            }
        };
        let raw = RawRun { outcome, steps: s.step, time: s.clock, recorded, lock_order };
        // Hand the allocations to the next run on this thread.
        let Execution { mut state } = self;
        if let StrategySlot::Other(_) = state.strategy {
            state.strategy = StrategySlot::Other(Box::new(Idle));
        }
        // Tasks and resources stay in their slots, reset when reused.
        state.tasks.clear();
        state.resources.clear();
        POOL.with(|p| *p.borrow_mut() = Some(state));
        raw
    }
}

pub(crate) fn stack_of(s: &State, t: TaskId) -> Vec<FrameInfo> {
    s.tasks[t as usize].frames.iter().rev().map(|&f| FrameInfo::from(f)).collect()
}

/// Registers a new task whose future is in `cell`; it is enabled at once.
pub(crate) fn spawn_task(s: &mut State, name: Cow<'static, str>, background: bool, cell: TaskCell) -> TaskId {
    let id = s.tasks.len() as TaskId;
    let parent = if id == 0 { None } else { Some(s.current) };
    match s.tasks.reuse() {
        Some(t) => {
            t.name = name;
            t.background = background;
            t.parent = parent;
            t.status = Status::Ready;
            t.started = false;
            t.first_step = s.step;
            t.frames.clear();
            t.granted = None;
            t.wait_gen = 0;
            t.cases.clear();
            t.saved_count = 0;
            t.pending_lock = None;
            t.held.clear();
            t.holds_declared_end = false;
            t.observed = None;
        }
        None => s.tasks.push(Task {
            name,
            background,
            parent,
            status: Status::Ready,
            started: false,
            first_step: s.step,
            frames: Vec::new(),
            granted: None,
            wait_gen: 0,
            cases: Vec::new(),
            saved_count: 0,
            pending_lock: None,
            held: Vec::new(),
            holds_declared_end: false,
            observed: None,
        }),
    }
    match s.ends.get_mut(id as usize) {
        Some(ends) => ends.clear(),
        None => s.ends.push(Vec::new()),
    }
    s.enabled.insert(id);
    s.unstarted += 1;
    if !background {
        s.foreground_live += 1;
    }
    s.cells.push(cell);
    s.record(id, EventKind::Spawn, None, None, None, parent, None);
    if s.footprint.is_some() {
        s.spawned_or_finished(id, true);
    }
    id
}

/// A task's first step comes after the step that spawned it, which
/// enabled it: it looks at the task's pseudo-resource (as a join does; it
/// changes nothing a join sees) and counts the spawn as before it.
#[cold]
fn first_step_footprint(s: &mut State, t: TaskId) {
    if let Some(fp) = s.footprint.as_mut() {
        fp.reads.insert(crate::scheduler::Footprint::task_resource(t));
        fp.granted = true;
    }
}

/// Tells a search the known next accesses of the tasks that wait (see
/// [`State::pending_accesses`]), those it was not told as they are now
/// (see `pending.rs`).
fn report_pending(s: &mut State) {
    let mut ops = std::mem::take(&mut s.pending_ops);
    s.pending_accesses(&mut ops, |t, r| s.pending_changes.changed(t, r));
    s.pending_changes.reported();
    s.strategy.get().pending(&ops);
    #[cfg(debug_assertions)]
    {
        s.pending_accesses(&mut ops, |_, _| true);
        s.strategy.get().check_pending(&ops);
    }
    s.pending_ops = ops;
}

/// Ends task `t`, a timer's, where it waits for its deadline: Go's
/// `timer.Stop` on a timer that has not fired, whose function then never
/// runs. A timer asleep leaves the timer queue, and one not started yet
/// never starts; either is finished in the current step (its `finish`
/// event there), so a run does not go on to a deadline nothing waits for.
/// One that has woken (its deadline passed) runs on, as a fired Go timer
/// does, and `false` says so. The future stays in its cell until the
/// execution's teardown drops it.
pub(crate) fn stop_timer_task(s: &mut State, t: TaskId) -> bool {
    let task = &s.tasks[t as usize];
    match task.status {
        Status::Sleeping => s.timers.retain(|r| r.0 .2 != t),
        Status::Ready if !task.started => {
            s.unstarted -= 1;
            if s.unstarted == 0 && !s.scratch.undecided.is_empty() {
                s.judge_after_step();
            }
        }
        _ => return false,
    }
    // What the task would have done next depends on this step, as a wake's.
    s.touch(crate::scheduler::Footprint::task_resource(t));
    // Its finish names the task whose step stopped it, as a wake names the
    // waker; the waits it could have served are judged once that step is
    // over (the stopping task goes on with it).
    let by = s.current;
    end_task(s, t, Some(by));
    s.scratch.stopped.push(t);
    s.judge_after_step();
    true
}

fn finish_task(s: &mut State, t: TaskId) {
    end_task(s, t, None);
    judge_finished(s, t);
    s.leave_ends(t);
}

/// Marks task `t` finished, its finish recorded (with `peer`, the task
/// that stopped it, for a stopped timer), and wakes its joiners.
#[inline(always)]
fn end_task(s: &mut State, t: TaskId, peer: Option<TaskId>) {
    let task = &mut s.tasks[t as usize];
    task.status = Status::Finished;
    task.frames.clear();
    s.enabled.remove(t);
    if !task.background {
        s.foreground_live -= 1;
    }
    s.record(t, EventKind::Finish, None, None, None, peer, None);
    if s.footprint.is_some() {
        s.spawned_or_finished(t, false);
    }
    if !s.joiners.is_empty() {
        wake_joiners(s, t);
    }
}

/// Wakes the tasks blocked joining `t`, in the order of their ids (as a
/// look at every task woke them).
#[inline(never)]
fn wake_joiners(s: &mut State, t: TaskId) {
    if !s.joiners.iter().any(|&(joined, _)| joined == t) {
        return;
    }
    let mut woken: Vec<TaskId> = Vec::new();
    s.joiners.retain(|&(joined, u)| {
        if joined == t {
            woken.push(u);
        }
        joined != t
    });
    woken.sort_unstable();
    for u in woken {
        if s.tasks[u as usize].status == Status::Blocked(super::Wait::Join(t)) {
            s.wake(u);
        }
    }
}

/// Judges the waits finished task `t` could have served or notified.
#[inline(always)]
pub(crate) fn judge_finished(s: &mut State, t: TaskId) {
    // Background tasks blocked when the run ends are parked, not deadlocked.
    if s.tasks[t as usize].holds_declared_end && s.failure.is_none() && s.foreground_live > 0 {
        s.judge_waits_served_by(t);
    }
    if !s.notifiers.is_empty() && s.failure.is_none() && s.foreground_live > 0 {
        s.judge_waits_notified_by(t);
    }
}
