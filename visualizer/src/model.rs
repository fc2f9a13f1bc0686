//! What the charts draw, derived from a trace's events: task states over
//! time, locks held, blocked intervals, frames, pipe levels.
//!
//! Positions are step boundaries: position `k` is the end of step `k`
//! (position 0 the start of the run). Step `s` runs from position `s - 1` to
//! `s`; an event of step `s` takes effect at position `s`. The states follow
//! `traces/README.md`: a task is *blocked* from a `block` (or `sleep`) to the
//! next `wake`, *finished* after `finish`, *running* during the steps the
//! `schedule` gives it, and *ready* otherwise.
//!
//! A position has one time, the end of its step (when its events happen),
//! unless the clock jumped there: when no task could run, the engine moved
//! the clock to the next sleeper's deadline and woke it, in the same step.
//! Then the step after it starts later, at the wakes' time
//! ([`Model::resume`]), and in between no task runs: the time charts draw
//! a task's state over [`Model::spans`], which keep the two apart.
//!
//! ```
//! let trace = sim::trace::Trace::read_file("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let m = visualizer::Model::new(&trace).unwrap();
//! // T2 (task 2) took B at step 4 and still held it at the deadlock.
//! let h = &m.tasks[2].holds[0];
//! assert_eq!((m.trace.resources[h.resource as usize].name.as_str(), h.start, h.open), ("B", 4, true));
//! assert_eq!(m.state_at(1, 7), Some(visualizer::model::State::Blocked));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use sim::trace::{EventKind, Trace};

use crate::Error;

/// A task's state at a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    Running,
    Ready,
    Blocked,
    Finished,
}

impl State {
    /// The four states, in legend order.
    pub const ALL: [State; 4] = [State::Running, State::Ready, State::Blocked, State::Finished];

    pub fn name(self) -> &'static str {
        match self {
            State::Running => "running",
            State::Ready => "ready",
            State::Blocked => "blocked",
            State::Finished => "finished",
        }
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// How a lock is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// A mutex, an RWMutex write lock, a monitor.
    Exclusive,
    /// An RWMutex read lock.
    Read,
}

/// A lock or monitor held by a task from `start` to `end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub task: u32,
    pub resource: u32,
    pub start: u64,
    pub end: u64,
    pub mode: Mode,
    /// Still held when the trace ends.
    pub open: bool,
    /// Frame where it was taken.
    pub frame: Option<u32>,
}

/// A blocked interval: from a `block` or `sleep` to the next `wake`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub task: u32,
    pub start: u64,
    pub end: u64,
    /// The resource it waits for (none for a join, a select or a sleep).
    pub resource: Option<u32>,
    /// `lock`, `rlock`, `wait`, `send`, `recv`, `select`, `write`, `read`, `join` or `sleep`.
    pub op: String,
    /// Still blocked when the trace ends.
    pub open: bool,
    pub frame: Option<u32>,
    /// The task a join waits for.
    pub peer: Option<u32>,
    /// The cases of a select, in its order.
    pub cases: Vec<sim::trace::Case>,
}

/// A point event drawn as a mark on a task's lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum MarkKind {
    PipeWrite,
    PipeRead,
    Send,
    Recv,
    /// The last notify of a monitor the deadlock's tasks wait on in
    /// `wait()`, as the report names it: it woke a task.
    Notify,
    /// That notify, when it woke nobody: the lost one.
    LostNotify,
}

impl MarkKind {
    pub const ALL: [MarkKind; 6] = [
        MarkKind::PipeWrite,
        MarkKind::PipeRead,
        MarkKind::Send,
        MarkKind::Recv,
        MarkKind::Notify,
        MarkKind::LostNotify,
    ];

    pub fn name(self) -> &'static str {
        match self {
            MarkKind::PipeWrite => "pipe write",
            MarkKind::PipeRead => "pipe read",
            MarkKind::Send => "channel send",
            MarkKind::Recv => "channel receive",
            MarkKind::Notify => "last notify of a monitor waited on",
            MarkKind::LostNotify => "last notify, lost (nobody waited)",
        }
    }
}

/// A mark: a pipe read or write, a channel send or receive, a report's last notify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    pub pos: u64,
    pub kind: MarkKind,
    pub resource: u32,
    /// Bytes moved (pipes) or messages buffered after (channels).
    pub amount: u64,
}

/// Everything about one task.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskTrack {
    /// Position of its spawn (none: never seen).
    pub spawn: Option<u64>,
    /// State changes: the state from each position to the next change (the
    /// last one lasts to the end). Empty before the spawn.
    pub states: Vec<(u64, State)>,
    /// Blocked intervals, in order.
    pub blocks: Vec<Block>,
    /// Locks held, by start.
    pub holds: Vec<Hold>,
    /// Innermost frame changes: `(position, frame id)`.
    pub frames: Vec<(u64, u32)>,
    /// Pipe and channel marks, in order.
    pub marks: Vec<Mark>,
}

/// A pipe byte-count change, or a read or write on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeOp {
    pub pos: u64,
    pub task: u32,
    /// true: write; false: read.
    pub write: bool,
    pub amount: u64,
    pub buffered: u64,
}

/// Everything about one resource.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceTrack {
    /// Holds of this lock, by start.
    pub holds: Vec<Hold>,
    /// Tasks blocked acquiring it (`lock`, `rlock`), by start.
    pub waits: Vec<Block>,
    /// Pipe reads and writes, in order.
    pub pipe_ops: Vec<PipeOp>,
}

/// The derived view of a trace that every chart draws from.
#[derive(Clone)]
pub struct Model<'a> {
    pub trace: &'a Trace,
    /// The last position (the number of steps).
    pub end: u64,
    /// Virtual time at each position (index = position, length `end + 1`):
    /// the end of its step, when the step's own events happen.
    // Shared: a chart of a window draws from a copy of the model with other
    // colours (see `Model::coloured_for`), which should not copy the tracks.
    pub times: Arc<Vec<u64>>,
    /// The positions where the clock jumped, with the time it jumped to
    /// (later than `times` there), in order: see [`Model::resume`].
    pub jumps: Arc<Vec<(u64, u64)>>,
    pub tasks: Arc<Vec<TaskTrack>>,
    pub resources: Arc<Vec<ResourceTrack>>,
    /// Position of the deadlock, when the run ended in one.
    pub deadlock: Option<u64>,
    /// Where and in which task the run failed otherwise (an invariant, a panic).
    pub failure: Option<Failure>,
    /// Each task's colour slot (see [`Model::task_colour`]).
    colour_slots: Vec<u32>,
    /// The tasks the wait-for graph draws, in a trace of more tasks than
    /// the palette has colours (empty otherwise).
    drawn: Vec<u32>,
    /// Each task's name as the charts give it: with its id after it when
    /// another task has the same name (see [`Model::task_name`]).
    labels: Arc<Vec<String>>,
    /// Colour slots given from another trace's charts, by task
    /// ([`Model::with_colours_of`]); empty when none were.
    pinned: Arc<Vec<Option<u32>>>,
}

/// A stretch of a task's state between two points `(position, late)`:
/// see [`Model::spans`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub state: State,
    pub start: (u64, bool),
    pub end: (u64, bool),
}

/// A failure other than a deadlock, as the charts mark it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The position of the step it happened in.
    pub pos: u64,
    /// The task that failed.
    pub task: u32,
    /// "invariant violated" or "panic".
    pub what: &'static str,
}

/// The steps at the end of a run whose lock holders come first for colours
/// when no window is given (the wait-for graph): the longest window `auto` draws.
const RECENT: u64 = 400;

/// Each task's slot in the palette's cycle of [`crate::palette::TASK_COLOURS`]
/// colours. Up to [`crate::palette::TASK_COLOURS`] tasks, the tasks of the
/// deadlock cycle come first, in the cycle's order, and the others follow by
/// id. So a cycle of up to nine tasks has full-strength colours of distinct
/// hues (ttrpc's serverConn.run, id 1, and receiver.run, id 10, were a rose
/// and a pale rose, side by side in one cycle); past nine tasks the others
/// take the tints of the hues the cycle does not have before those it has.
/// And the figures of one system's deadlock agree: Flink's two threads in
/// the cycle have the same colours in the minimal and the pipeline traces,
/// where their ids are 1, 2 and 2, 3 (by id they had differed). A larger one (a ttrpc server with a goroutine per request) would repeat a
/// colour every so many ids, wherever the repeats fall; so the slots go
/// first to the tasks of the deadlock cycle, then to the other tasks the
/// wait-for graph draws (`drawn`), both whatever the window, then to the
/// tasks holding a lock in the window `a..b`, longest held first (the lanes
/// and the legend of a locks chart), then to the others by their last
/// event, latest first (the end of the run is what a figure shows by
/// default), ties by id. Tasks a figure shows side by side then differ in
/// colour as far as the palette allows (see `spread` for which colour each
/// takes), and once it is used up, the colours repeat without the cycle's.
fn colour_slots(trace: &Trace, tracks: &[TaskTrack], (a, b): (u64, u64), drawn: &[u32]) -> Vec<u32> {
    let n = trace.tasks.len();
    let cycle: Vec<u32> = trace.deadlock.iter().flat_map(|d| d.cycle.iter().map(|b| b.task)).collect();
    if n <= crate::palette::TASK_COLOURS as usize {
        return few_slots(n, &cycle);
    }
    let mut last = vec![0u64; n];
    for e in &trace.events {
        if let Some(l) = last.get_mut(e.task as usize) {
            *l = e.step;
        }
    }
    let mut order: Vec<u32> = cycle.clone();
    let mut rest: Vec<u32> = (0..n as u32).filter(|t| !cycle.contains(t)).collect();
    // Steps of lock holding within the window.
    let held: Vec<u64> = (0..n)
        .map(|t| {
            let holds = tracks.get(t).map_or(&[][..], |tt| &tt.holds[..]);
            // One more for each hold in the window, so that a lock taken
            // in the window's last step (at a deadlock) counts.
            let within = holds.iter().filter(|h| h.end > a && h.start <= b);
            within.map(|h| h.end.min(b).saturating_sub(h.start.max(a)) + 1).sum()
        })
        .collect();
    let mut in_graph = vec![false; n];
    for &t in drawn {
        if let Some(d) = in_graph.get_mut(t as usize) {
            *d = true;
        }
    }
    rest.sort_by_key(|&t| {
        let t_ = t as usize;
        // The graph's tasks keep one order whatever the window, so that
        // they have the colours of the wait-for graph in every chart.
        let held = if in_graph[t_] { 0 } else { held[t_] };
        (!in_graph[t_], std::cmp::Reverse(held), std::cmp::Reverse(last[t_]), t)
    });
    let graph = cycle.len() + rest.iter().filter(|&&t| in_graph[t as usize]).count();
    order.extend(rest);
    let slots = spread(&order, cycle.len(), graph);
    let mut by_task = vec![0u32; n];
    for (&t, slot) in order.iter().zip(slots) {
        by_task[t as usize] = slot;
    }
    by_task
}

/// Gives the tasks of `pinned` their slots; a task whose slot is now
/// another's (pinned) takes one no task has, if any is left.
fn pin(slots: &mut [u32], pinned: &[Option<u32>]) {
    if pinned.iter().all(Option::is_none) {
        return;
    }
    let taken: Vec<u32> = pinned.iter().flatten().copied().collect();
    let mut used = vec![false; crate::palette::TASK_COLOURS as usize];
    for (t, slot) in slots.iter_mut().enumerate() {
        if let Some(p) = pinned.get(t).copied().flatten() {
            *slot = p;
        }
    }
    for (t, &slot) in slots.iter().enumerate() {
        if pinned.get(t).copied().flatten().is_some() || !taken.contains(&slot) {
            if let Some(u) = used.get_mut(slot as usize) {
                *u = true;
            }
        }
    }
    for (t, slot) in slots.iter_mut().enumerate() {
        if pinned.get(t).copied().flatten().is_none() && taken.contains(slot) {
            if let Some(free) = used.iter().position(|u| !u) {
                used[free] = true;
                *slot = free as u32;
            }
        }
    }
}

/// `colour_slots` for a trace of no more tasks than colours: every task
/// keeps a colour of its own. The cycle takes slots 0, 1, ... up to the
/// full-strength colours, and past them each the colour farthest from the
/// cycle's before it. The others, by id, take the slots left: first those
/// clear of every cycle colour ([`palette::DISTINCT`](crate::palette::DISTINCT)),
/// the tints of hues the cycle does not have before the others, and only
/// once those are used the rest, farthest from the cycle's colours first.
/// In slot order alone, main beside a cycle of 12 philosophers took the
/// pale form of philosopher-3's cyan (ΔE 11) while clear colours were left,
/// and a server goroutine beside a ttrpc cycle of 5 a dark purple by the
/// cycle's wine (ΔE 9): a reader takes one for the other.
fn few_slots(n: usize, cycle: &[u32]) -> Vec<u32> {
    use crate::palette::{self, DISTINCT, FULL_COLOURS, TASK_COLOURS};
    let (hues, colours) = (FULL_COLOURS as usize, TASK_COLOURS as usize);
    let delta = |s: usize, u: usize| palette::difference(palette::task(s as u32), palette::task(u as u32));
    let k = cycle.len();
    let mut taken: Vec<usize> = (0..k.min(hues)).collect();
    while taken.len() < k {
        let far = (0..colours)
            .filter(|s| !taken.contains(s))
            .max_by_key(|&s| (taken.iter().map(|&u| delta(s, u)).min(), std::cmp::Reverse(s)));
        taken.push(far.expect("no more cycle tasks than colours"));
    }
    // The nearest cycle colour; the order of the colours that pass for one.
    let nearest = |s: usize| taken.iter().map(|&u| delta(s, u)).min().unwrap_or(u32::MAX);
    let cycle_hue = |s: usize| s >= hues && taken.contains(&(s % hues));
    let mut free: Vec<usize> = (0..colours).filter(|s| !taken.contains(s)).collect();
    free.sort_by_key(|&s| {
        let d = nearest(s);
        match d >= DISTINCT {
            // Clear: tints of hues the cycle lacks first, in slot order.
            true => (false, cycle_hue(s), std::cmp::Reverse(0), s),
            // Passing for a cycle colour: the farthest first.
            false => (true, false, std::cmp::Reverse(d), s),
        }
    });
    let mut slots = vec![0u32; n];
    for (&t, &s) in cycle.iter().zip(&taken) {
        slots[t as usize] = s as u32;
    }
    for (t, &s) in (0..n as u32).filter(|t| !cycle.contains(t)).zip(&free) {
        slots[t as usize] = s as u32;
    }
    slots
}

/// The slots of tasks ranked as in `colour_slots` (the `cycle` first, then
/// the `graph`'s other tasks), in a trace of more tasks than colours. By
/// rank alone, the lightened and darkened forms came right after the
/// cycle's nine hues: 30 ttrpc callers put `main` in a pale cyan beside the
/// cyan of `caller-24` of the cycle, and two callers blocked behind it in a
/// teal and a pale teal (ΔE 11 each). So the cycle takes the
/// full-strength colours, in its order, and each task after it the free
/// colour farthest (ΔE) from those ranked before it. No other task has a
/// colour that passes for a cycle task's ([`palette::DISTINCT`]): where only
/// such are left, colours repeat instead. Past the graph's tasks, the
/// colours clear of theirs go first, and a colour that repeats is one of
/// those, of the last-ranked task first, skipping one that passes for the
/// colour of the task ranked just before (and, for the cycle's last task,
/// the cycle's first): neighbours in a cycle, which the charts draw side by
/// side, keep apart. (The cycle's colours are kept to
/// it while it leaves half the palette to the rest, the graph's likewise.)
fn spread(order: &[u32], cycle: usize, graph: usize) -> Vec<u32> {
    use crate::palette::{self, DISTINCT, FULL_COLOURS, TASK_COLOURS};
    let colours = TASK_COLOURS as usize;
    let deltas: Vec<Vec<u32>> = (0..TASK_COLOURS)
        .map(|s| (0..TASK_COLOURS).map(|u| palette::difference(palette::task(s), palette::task(u))).collect())
        .collect();
    let kept_cycle = if cycle * 2 <= colours { cycle } else { 0 };
    let kept_graph = if graph * 2 <= colours { graph } else { kept_cycle };
    // Whether slot `s` is clear of the colours of the first `k` ranks.
    let clear =
        |s: usize, taken: &[usize], k: usize| taken[..k.min(taken.len())].iter().all(|&p| deltas[s][p] >= DISTINCT);
    let mut taken: Vec<usize> = Vec::with_capacity(colours);
    for i in 0..order.len().min(colours) {
        if i < cycle.min(FULL_COLOURS as usize) {
            taken.push(i);
            continue;
        }
        let free = (0..colours).filter(|s| !taken.contains(s) && (i < kept_cycle || clear(*s, &taken, kept_cycle)));
        // Ties to the lower slot: the full-strength colours first.
        let key = |&s: &usize| {
            let nearest = taken.iter().map(|&u| deltas[s][u]).min().unwrap_or(u32::MAX);
            (i < kept_graph || clear(s, &taken, kept_graph), nearest, std::cmp::Reverse(s))
        };
        match free.max_by_key(key) {
            Some(slot) => taken.push(slot),
            None => break,
        }
    }
    let mut again: Vec<usize> =
        (kept_graph..taken.len()).rev().filter(|&r| clear(taken[r], &taken, kept_graph)).collect();
    if again.is_empty() {
        again = (kept_cycle..taken.len()).rev().collect();
    }
    if again.is_empty() {
        again = (0..taken.len()).rev().collect();
    }
    let mut slots: Vec<u32> = taken.iter().map(|&s| s as u32).collect();
    for i in taken.len()..order.len() {
        // Each in turn, but not one that passes for a neighbour's: the rank
        // before, and for the cycle's last task its first, which it waits
        // for. In turn alone, 30 philosophers gave philosopher-27 the colour
        // of philosopher-26 (the last-ranked colour repeated first), one
        // lane and one box from it, and philosopher-29 a dark indigo by
        // philosopher-0's indigo (ΔE 10).
        let mut near = vec![slots[i - 1] as usize];
        if i + 1 == cycle {
            near.push(slots[0] as usize);
        }
        let apart = |r: usize| near.iter().map(|&n| deltas[taken[r]][n]).min().unwrap_or(u32::MAX);
        let turn = (0..again.len()).map(|k| again[(i - taken.len() + k) % again.len()]);
        let pick = turn.clone().find(|&r| apart(r) >= DISTINCT);
        // None clear of them (a palette of few colours): the farthest, the
        // first in turn of those.
        let r = pick.or_else(|| turn.rev().max_by_key(|&r| apart(r))).unwrap_or(again[0]);
        slots.push(taken[r] as u32);
    }
    slots
}

/// Pushes a state change, merging with the previous one when it is at the
/// same position or has the same state.
fn push_state(v: &mut Vec<(u64, State)>, pos: u64, st: State) {
    if let Some(last) = v.last_mut() {
        if last.0 == pos {
            last.1 = st;
            if v.len() >= 2 && v[v.len() - 2].1 == st {
                v.pop();
            }
            return;
        }
        if last.1 == st {
            return;
        }
    }
    v.push((pos, st));
}

fn is_lock_kind(kind: &str) -> bool {
    matches!(kind, "mutex" | "rwmutex" | "monitor")
}

impl<'a> Model<'a> {
    /// Derives the model. Fails on a trace with no events.
    pub fn new(trace: &'a Trace) -> Result<Model<'a>, Error> {
        if trace.events.is_empty() {
            return Err(Error("the trace has no events, nothing to draw".into()));
        }
        let nt = trace.tasks.len();
        let nr = trace.resources.len();
        let end = last_position(trace);
        let (times, jumps) = boundary_times(trace, end);

        // Base states (without running) and everything else from the events.
        let mut base: Vec<Vec<(u64, State)>> = vec![Vec::new(); nt];
        let mut tasks: Vec<TaskTrack> = vec![TaskTrack::default(); nt];
        let mut resources: Vec<ResourceTrack> = vec![ResourceTrack::default(); nr];
        // (task, resource, mode) -> (start, depth, frame) of the holds still open.
        type Open = BTreeMap<(u32, u32, Mode), (u64, u32, Option<u32>)>;
        let mut open_holds: Open = BTreeMap::new();
        let mut open_blocks: Vec<Option<Block>> = vec![None; nt];
        let mut all_holds: Vec<Hold> = Vec::new();
        let mut all_blocks: Vec<Block> = Vec::new();

        let close_block = |b: &mut Option<Block>, pos: u64, all: &mut Vec<Block>| {
            if let Some(mut blk) = b.take() {
                blk.end = pos.max(blk.start);
                all.push(blk);
            }
        };

        // The events of the notifies a deadlock report names as its
        // monitors' last: the last notify event on each (two in one step
        // share its step and task).
        let named_notifies: Vec<usize> = trace
            .deadlock
            .iter()
            .flat_map(|d| &d.notifies)
            .filter(|n| n.last.is_some())
            .filter_map(|n| {
                trace.events.iter().rposition(|e| {
                    matches!(e.kind, EventKind::Notify | EventKind::NotifyAll) && e.resource == Some(n.resource)
                })
            })
            .collect();
        for (i, e) in trace.events.iter().enumerate() {
            let t = e.task as usize;
            let pos = e.step;
            let tt = &mut tasks[t];
            if tt.spawn.is_none() {
                // A task seen before its spawn event (or without one) exists from here.
                tt.spawn = Some(pos);
                base[t].push((pos, State::Ready));
            }
            if let Some(f) = e.frame {
                if tt.frames.last().map(|x| x.1) != Some(f) {
                    tt.frames.push((pos, f));
                }
            }
            let res_kind = e.resource.map(|r| trace.resources[r as usize].kind.as_str());
            match e.kind {
                EventKind::Spawn => {
                    // Already recorded as the first sighting above.
                }
                EventKind::Block | EventKind::Sleep => {
                    close_block(&mut open_blocks[t], pos, &mut all_blocks);
                    let op = match e.kind {
                        EventKind::Sleep => "sleep".to_string(),
                        _ => e.op.as_deref().unwrap_or("wait").to_string(),
                    };
                    let resource = if e.kind == EventKind::Sleep { None } else { e.resource };
                    open_blocks[t] = Some(Block {
                        task: e.task,
                        start: pos,
                        end: pos,
                        resource,
                        op,
                        open: false,
                        frame: e.frame,
                        peer: e.peer,
                        cases: e.cases.clone(),
                    });
                    push_state(&mut base[t], pos, State::Blocked);
                }
                EventKind::Wake => {
                    close_block(&mut open_blocks[t], pos, &mut all_blocks);
                    push_state(&mut base[t], pos, State::Ready);
                }
                EventKind::Finish => {
                    close_block(&mut open_blocks[t], pos, &mut all_blocks);
                    push_state(&mut base[t], pos, State::Finished);
                }
                EventKind::Lock | EventKind::RLock | EventKind::Enter => {
                    if let Some(r) = e.resource {
                        let mode = if e.kind == EventKind::RLock { Mode::Read } else { Mode::Exclusive };
                        let entry = open_holds.entry((e.task, r, mode)).or_insert((pos, 0, e.frame));
                        entry.1 += 1;
                        if e.kind == EventKind::Enter {
                            // A monitor counts its own entries: one hold however deep.
                            entry.1 = 1;
                        }
                    }
                }
                EventKind::Unlock | EventKind::RUnlock | EventKind::Exit | EventKind::Wait => {
                    if let Some(r) = e.resource {
                        let mode = if e.kind == EventKind::RUnlock { Mode::Read } else { Mode::Exclusive };
                        let release = match e.kind {
                            EventKind::Exit => e.amount.unwrap_or(0) == 0,
                            EventKind::Wait => true,
                            _ => {
                                let d = open_holds.get_mut(&(e.task, r, mode)).map(|x| {
                                    x.1 = x.1.saturating_sub(1);
                                    x.1
                                });
                                d == Some(0)
                            }
                        };
                        if release {
                            if let Some((start, _, frame)) = open_holds.remove(&(e.task, r, mode)) {
                                all_holds.push(Hold {
                                    task: e.task,
                                    resource: r,
                                    start,
                                    end: pos,
                                    mode,
                                    open: false,
                                    frame,
                                });
                            }
                        }
                    }
                }
                EventKind::Write | EventKind::Read => {
                    if let (Some(r), Some("pipe")) = (e.resource, res_kind) {
                        let write = e.kind == EventKind::Write;
                        let amount = e.amount.unwrap_or(0);
                        let buffered = e.buffered.unwrap_or(0);
                        resources[r as usize].pipe_ops.push(PipeOp { pos, task: e.task, write, amount, buffered });
                        // A write of 0 bytes is an attempt that blocks (a full or
                        // unbuffered pipe): still a write on the lane.
                        if amount > 0 || write {
                            let kind = if write { MarkKind::PipeWrite } else { MarkKind::PipeRead };
                            tasks[t].marks.push(Mark { pos, kind, resource: r, amount });
                        }
                    }
                }
                EventKind::Send | EventKind::Recv => {
                    if let Some(r) = e.resource {
                        let kind = if e.kind == EventKind::Send { MarkKind::Send } else { MarkKind::Recv };
                        tasks[t].marks.push(Mark { pos, kind, resource: r, amount: e.amount.unwrap_or(0) });
                    }
                }
                // Only the notify a deadlock report names as a monitor's last
                // (a run's other notifies would crowd a long run's lanes).
                EventKind::Notify | EventKind::NotifyAll => {
                    if let Some(r) = e.resource.filter(|_| named_notifies.contains(&i)) {
                        let amount = e.amount.unwrap_or(0);
                        let kind = if amount == 0 { MarkKind::LostNotify } else { MarkKind::Notify };
                        tasks[t].marks.push(Mark { pos, kind, resource: r, amount });
                    }
                }
                _ => {}
            }
        }
        for (t, b) in open_blocks.iter_mut().enumerate() {
            if let Some(mut blk) = b.take() {
                blk.end = end.max(blk.start);
                blk.open = true;
                all_blocks.push(blk);
            }
            let _ = t;
        }
        for ((task, resource, mode), (start, _, frame)) in open_holds {
            all_holds.push(Hold { task, resource, start, end: end.max(start), mode, open: true, frame });
        }
        all_holds.sort_by_key(|h| (h.start, h.end, h.task, h.resource, h.mode));
        all_blocks.sort_by_key(|b| (b.start, b.end, b.task));
        for h in &all_holds {
            tasks[h.task as usize].holds.push(h.clone());
            if is_lock_kind(&trace.resources[h.resource as usize].kind) {
                resources[h.resource as usize].holds.push(h.clone());
            }
        }
        for b in &all_blocks {
            if let (Some(r), "lock" | "rlock") = (b.resource, b.op.as_str()) {
                resources[r as usize].waits.push(b.clone());
            }
            tasks[b.task as usize].blocks.push(b.clone());
        }

        // Running steps from the schedule, merged with the base states.
        let mut runs: Vec<Vec<u64>> = vec![Vec::new(); nt];
        for (i, &t) in trace.schedule.iter().enumerate() {
            runs[t as usize].push(i as u64 + 1);
        }
        for t in 0..nt {
            let b = &base[t];
            let mut out: Vec<(u64, State)> = Vec::with_capacity(b.len() + 2 * runs[t].len());
            let mut bi = 0;
            let mut cur: Option<State> = None;
            for &s in &runs[t] {
                while bi < b.len() && b[bi].0 < s {
                    cur = Some(b[bi].1);
                    push_state(&mut out, b[bi].0, b[bi].1);
                    bi += 1;
                }
                if tasks[t].spawn.is_none() {
                    tasks[t].spawn = Some(s - 1);
                }
                push_state(&mut out, s - 1, State::Running);
                while bi < b.len() && b[bi].0 == s {
                    cur = Some(b[bi].1);
                    bi += 1;
                }
                push_state(&mut out, s, cur.unwrap_or(State::Ready));
            }
            while bi < b.len() {
                push_state(&mut out, b[bi].0, b[bi].1);
                bi += 1;
            }
            tasks[t].states = out;
        }

        let deadlock = trace.deadlock.as_ref().map(|d| d.step.min(end));
        // The run's last check or panic event is the one that ended it.
        let failure = trace.events.iter().rev().find_map(|e| {
            let what = match e.kind {
                EventKind::Check => "invariant violated",
                EventKind::Panic => "panic",
                _ => return None,
            };
            Some(Failure { pos: e.step.min(end), task: e.task, what })
        });
        let recent = (end.saturating_sub(RECENT), end);
        let slots = colour_slots(trace, &tasks, recent, &[]);
        let (times, jumps) = (Arc::new(times), Arc::new(jumps));
        let (tasks, resources) = (Arc::new(tasks), Arc::new(resources));
        let labels = Arc::new(trace.task_labels());
        let mut m = Model {
            trace,
            end,
            times,
            jumps,
            tasks,
            resources,
            deadlock,
            failure,
            colour_slots: slots,
            drawn: vec![],
            labels,
            pinned: Arc::new(Vec::new()),
        };
        if m.tasks.len() > crate::palette::TASK_COLOURS as usize {
            // The tasks the wait-for graph draws (each its own node) come
            // right after the cycle: a task blocked behind it, or main
            // joining, must not wear a cycle task's colour there.
            m.drawn = crate::waitfor::Graph::new(&m).tasks();
            m.colour_slots = colour_slots(m.trace, &m.tasks, recent, &m.drawn);
        }
        Ok(m)
    }

    /// This model with its colours given for the window `a..b`: the
    /// cycle's and the wait-for graph's tasks first, as in every window,
    /// then the tasks by their steps of lock holding in the window, then by
    /// their last event. `None` when the colours would not change, as in a
    /// trace of no more tasks than the palette has colours (each task has
    /// its own). A chart of a window draws from it, so that the tasks it
    /// shows side by side (a locks chart of `--window all`, where the
    /// holders of long ago are the ones drawn) differ in colour.
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/abba-deadlock.json");
    /// let trace = visualizer::load(std::path::Path::new(path)).unwrap();
    /// let m = visualizer::Model::new(&trace).unwrap();
    /// // Three tasks, three colours in every window.
    /// assert!(m.coloured_for(0, m.end).is_none());
    /// ```
    pub fn coloured_for(&self, a: u64, b: u64) -> Option<Model<'a>> {
        if self.tasks.len() <= crate::palette::TASK_COLOURS as usize {
            return None;
        }
        let mut slots = colour_slots(self.trace, &self.tasks, (a, b), &self.drawn);
        pin(&mut slots, &self.pinned);
        (slots != self.colour_slots).then(|| Model { colour_slots: slots, ..self.clone() })
    }

    /// This model with the colours of `same`, a model of the same run whose
    /// tasks have other names ([`crate::rename_tasks`]): task by task, as
    /// `same` has them (after its [`Model::with_colours_of`]). Unchanged if
    /// the two do not have the same tasks.
    pub fn with_colours_from(&self, same: &Model) -> Model<'a> {
        if same.colour_slots.len() != self.colour_slots.len() {
            return self.clone();
        }
        Model { colour_slots: same.colour_slots.clone(), pinned: same.pinned.clone(), ..self.clone() }
    }

    /// This model with each task that `other` has too (the same name, as
    /// the charts give it) in the colour it has in `other`'s charts, and
    /// the number of such tasks. The others keep theirs, or take a colour
    /// no task has where theirs is taken. For a pair of figures, a bug and
    /// its fix, whose threads must look alike: the fixed run has no cycle,
    /// whose tasks would take the first colours.
    ///
    /// ```
    /// let abba = sim::models::find("abba").unwrap();
    /// let trace = |fixed: &str| {
    ///     let m = abba.configure(&[("fixed".into(), fixed.into())]).unwrap();
    ///     m.run(0, true).trace.unwrap()
    /// };
    /// let (bug, fix) = (trace("false"), trace("true"));
    /// let (bug, fix) = (visualizer::Model::new(&bug).unwrap(), visualizer::Model::new(&fix).unwrap());
    /// // T1 leads the cycle, so it has the first colour; in the fixed run main has it.
    /// assert_ne!(fix.task_colour(1), bug.task_colour(1));
    /// let (fix, matched) = fix.with_colours_of(&bug);
    /// assert_eq!(matched, 3); // main, T1, T2
    /// assert_eq!(fix.task_colour(1), bug.task_colour(1));
    /// ```
    pub fn with_colours_of(&self, other: &Model) -> (Model<'a>, usize) {
        let pinned: Vec<Option<u32>> = self
            .labels
            .iter()
            .map(|l| other.labels.iter().position(|o| o == l).map(|u| other.colour_slots[u]))
            .collect();
        let matched = pinned.iter().flatten().count();
        let mut slots = self.colour_slots.clone();
        pin(&mut slots, &pinned);
        (Model { colour_slots: slots, pinned: Arc::new(pinned), ..self.clone() }, matched)
    }

    /// The colour of task `t`, the same in every chart drawn from this
    /// model (a chart of a window draws from [`Model::coloured_for`]).
    pub fn task_colour(&self, t: u32) -> crate::palette::Rgb {
        crate::palette::task(self.colour_slots.get(t as usize).copied().unwrap_or(t))
    }

    /// The state of `task` at position `pos` (the state of the step after
    /// it), or `None` before its spawn.
    pub fn state_at(&self, task: u32, pos: u64) -> Option<State> {
        let st = &self.tasks.get(task as usize)?.states;
        let i = st.partition_point(|(p, _)| *p <= pos);
        if i == 0 {
            None
        } else {
            Some(st[i - 1].1)
        }
    }

    /// Virtual time at position `pos`.
    pub fn time(&self, pos: u64) -> u64 {
        self.times[pos.min(self.end) as usize]
    }

    /// Virtual time when the step after position `pos` starts: its time,
    /// unless the clock jumped there. When no task can run (every one
    /// blocked, asleep or finished), the engine moves the clock to the next
    /// sleeper's deadline and wakes it, still in the step at `pos`: those
    /// wakes happen at this later time, and no task runs from
    /// [`Model::time`] to it. A sleeper woken so slept until then, not
    /// until the end of the step.
    pub fn resume(&self, pos: u64) -> u64 {
        match self.jumps.binary_search_by_key(&pos, |j| j.0) {
            Ok(i) => self.jumps[i].1,
            Err(_) => self.time(pos),
        }
    }

    /// The time of a point `(position, late)`: [`Model::resume`] when
    /// `late`, else [`Model::time`].
    pub fn time_at(&self, (pos, late): (u64, bool)) -> u64 {
        if late {
            self.resume(pos)
        } else {
            self.time(pos)
        }
    }

    /// Task `t`'s states for a time axis, from the one it is in just before
    /// position `from` (which may last past that position's time, to the
    /// end of a clock jump there): each [`TaskTrack::states`] entry as a span between points
    /// `(position, late)` (see [`Model::time_at`]). A task runs or is ready
    /// from the start of a step, after any clock jump before it
    /// ([`Model::resume`]), and until the end of its step (a jump after it is
    /// not its time); it blocks or finishes at the end of its step, and is
    /// blocked until its wake. A jump at a position where the task runs or
    /// is ready on both sides (it went to sleep and the jump woke it, in one
    /// step: the states, by position, show no sleep) is a span of its own,
    /// blocked: nothing runs while the clock jumps.
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/abba-deadlock.json");
    /// let trace = visualizer::load(std::path::Path::new(path)).unwrap();
    /// let m = visualizer::Model::new(&trace).unwrap();
    /// use visualizer::model::State::*;
    /// // No clock jumps: the spans are the states, T1 running steps 1 and 5.
    /// let spans: Vec<_> = m.spans(1, 0).iter().map(|s| (s.state, s.start.0, s.end.0)).collect();
    /// assert_eq!(spans, [(Running, 1, 2), (Ready, 2, 4), (Running, 4, 5), (Blocked, 5, 5)]);
    /// ```
    pub fn spans(&self, t: u32, from: u64) -> Vec<Span> {
        let Some(tt) = self.tasks.get(t as usize) else { return Vec::new() };
        let st = &tt.states;
        let active = |s: State| matches!(s, State::Running | State::Ready);
        let first = st.partition_point(|(p, _)| *p < from).saturating_sub(1);
        let mut out = Vec::with_capacity(st.len() - first.min(st.len()));
        for i in first..st.len() {
            let (p, state) = st[i];
            let next = st.get(i + 1);
            let end = (next.map_or(self.end, |x| x.0), next.is_some_and(|x| active(x.1)));
            let mut start = (p, active(state));
            if active(state) {
                // Jumps inside the stretch, and at its end when it goes on
                // running or ready after it.
                let lo = self.jumps.partition_point(|j| j.0 <= p);
                for &(q, _) in self.jumps[lo..].iter().take_while(|j| j.0 < end.0 || (j.0 == end.0 && end.1)) {
                    out.push(Span { state, start, end: (q, false) });
                    out.push(Span { state: State::Blocked, start: (q, false), end: (q, true) });
                    start = (q, true);
                }
                if start == end {
                    continue;
                }
            }
            out.push(Span { state, start, end });
        }
        out
    }

    /// The first position whose time is at least `t`.
    pub fn pos_at_or_after(&self, t: u64) -> u64 {
        self.times.partition_point(|&x| x < t) as u64
    }

    /// The last position whose time is at most `t`.
    pub fn pos_at_or_before(&self, t: u64) -> u64 {
        (self.times.partition_point(|&x| x <= t) as u64).saturating_sub(1)
    }

    /// Where the story ends: the deadlock, or the end of the trace.
    pub fn stop(&self) -> u64 {
        self.deadlock.unwrap_or(self.end)
    }

    /// True if the run deadlocked at a position in `a..=b`. A chart of a
    /// window that ends before the deadlock draws no cycle: at its right
    /// edge the tasks of the cycle are not stuck yet.
    pub fn deadlock_in(&self, a: u64, b: u64) -> bool {
        self.deadlock.is_some_and(|d| (a..=b).contains(&d))
    }

    /// Ids of the tasks in the deadlock cycle.
    pub fn cycle_tasks(&self) -> Vec<u32> {
        self.trace.deadlock.as_ref().map(|d| d.cycle.iter().map(|b| b.task).collect()).unwrap_or_default()
    }

    /// Ids of the resources the tasks of the deadlock cycle wait for.
    pub fn cycle_resources(&self) -> BTreeSet<u32> {
        self.trace.deadlock.as_ref().map(|d| d.cycle.iter().filter_map(|b| b.resource).collect()).unwrap_or_default()
    }

    /// Where the deadlock's story starts: the earliest step at which a task
    /// of the cycle took a lock it still holds, or blocked for the last time.
    /// A deadlock with no cycle (a lock whose holder returned, a Done never
    /// called) has its blocked tasks instead, and the tasks that caused it:
    /// a returned holder from when it took the lock it still holds, a task
    /// that never called Done from when it returned.
    pub fn story_start(&self) -> Option<u64> {
        let mut cycle = self.cycle_tasks();
        let mut start: Option<u64> = None;
        if cycle.is_empty() {
            let behind = self.trace.deadlock.as_ref().map(|d| d.behind.as_slice()).unwrap_or_default();
            cycle = behind.iter().map(|b| b.task).collect();
            for b in behind {
                // Its open holds count below, as a cycle task's do.
                cycle.extend(b.returned.iter().map(|r| r.task));
                for &t in &b.forgot_done {
                    let finished = self
                        .tasks
                        .get(t as usize)
                        .and_then(|tt| tt.states.iter().rev().find(|(_, st)| *st == State::Finished).map(|&(p, _)| p));
                    if let Some(p) = finished {
                        start = Some(start.map_or(p, |s| s.min(p)));
                    }
                }
            }
        }
        for &t in &cycle {
            let Some(tt) = self.tasks.get(t as usize) else { continue };
            let holds = tt.holds.iter().filter(|h| h.open).map(|h| h.start);
            let block = tt.blocks.last().filter(|b| b.open).map(|b| b.start);
            for p in holds.chain(block) {
                start = Some(start.map_or(p, |s| s.min(p)));
            }
        }
        start
    }

    /// Ids of lock-like resources (mutex, RWMutex, monitor).
    pub fn locks(&self) -> Vec<u32> {
        self.trace.resources.iter().filter(|r| is_lock_kind(&r.kind)).map(|r| r.id).collect()
    }

    /// True if some event of the trace is on one of the resources `ids`.
    pub fn has_events_on(&self, ids: &[u32]) -> bool {
        self.trace.events.iter().any(|e| e.resource.is_some_and(|r| ids.contains(&r)))
    }

    /// Ids of pipes.
    pub fn pipes(&self) -> Vec<u32> {
        self.trace.resources.iter().filter(|r| r.kind == "pipe").map(|r| r.id).collect()
    }

    /// Name of a task, as the charts give it: a name two tasks share (a
    /// pool of `worker`s) has the task's id after it, `worker (task 2)`,
    /// as the deadlock report names such a task.
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/abba-deadlock.json");
    /// let mut trace = visualizer::load(std::path::Path::new(path)).unwrap();
    /// trace.tasks[2].name = "T1".into();
    /// let m = visualizer::Model::new(&trace).unwrap();
    /// assert_eq!((m.task_name(0), m.task_name(1), m.task_name(2)), ("main", "T1 (task 1)", "T1 (task 2)"));
    /// ```
    pub fn task_name(&self, t: u32) -> &str {
        self.labels.get(t as usize).map_or("?", |x| x.as_str())
    }

    /// Name of a resource.
    pub fn resource_name(&self, r: u32) -> &str {
        self.trace.resources.get(r as usize).map_or("?", |x| x.name.as_str())
    }
}

/// The trace's last position: its steps, or further if its schedule or
/// events go further.
fn last_position(trace: &Trace) -> u64 {
    let last_event = trace.events.last().map_or(0, |e| e.step);
    trace.meta.steps.max(trace.schedule.len() as u64).max(last_event)
}

/// The virtual time of each position of `trace` (index = position), as
/// [`Model::time`] gives it, without building the model: the time of a
/// step that made no event, for a listing of the run's steps.
///
/// ```
/// let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
/// assert_eq!(visualizer::model::step_times(&trace)[2], 200);
/// ```
pub fn step_times(trace: &Trace) -> Vec<u64> {
    boundary_times(trace, last_position(trace)).0
}

/// Virtual time at every step boundary, and where the clock jumped. A
/// step's time is that of its first event: the step's own events all have
/// it. Events of the step with a later time are wakes after a clock jump
/// (no task could run, so the engine moved the clock to the next sleeper's
/// deadline), which is when the next step starts. Between steps with
/// events the times are interpolated linearly (steps cost the same), from
/// the time the clock jumped to where it did, and never go back.
fn boundary_times(trace: &Trace, end: u64) -> (Vec<u64>, Vec<(u64, u64)>) {
    let n = end as usize + 1;
    // Known where a step has events: `None` elsewhere (any u64 is a time a
    // trace may give, u64::MAX too, so none can stand for "unknown").
    let mut known: Vec<Option<u64>> = vec![None; n];
    let mut jumps: BTreeMap<u64, u64> = BTreeMap::new();
    for e in &trace.events {
        if let Some(slot) = known.get_mut(e.step as usize) {
            match *slot {
                None => *slot = Some(e.time),
                Some(first) if e.time > first => {
                    let j = jumps.entry(e.step).or_insert(e.time);
                    *j = (*j).max(e.time);
                }
                Some(_) => {}
            }
        }
    }
    if known[0].is_none() {
        known[0] = Some(0);
    }
    if trace.meta.steps == end && known[n - 1].is_none() {
        known[n - 1] = Some(trace.meta.time_ns);
    }
    let mut t: Vec<u64> = known.iter().map(|k| k.unwrap_or(0)).collect();
    // Where the step after position `i` starts.
    let resume = |t: &[u64], i: usize| jumps.get(&(i as u64)).map_or(t[i], |&j| j.max(t[i]));
    // Interpolate between known anchors; extend past the last one with the
    // last known cost per step.
    let mut prev = 0usize;
    let mut slope_num = sim::DEFAULT_STEP_NS as u128;
    let mut slope_den = 1u128;
    for i in 1..n {
        if known[i].is_none() {
            continue;
        }
        let from = resume(&t, prev);
        if t[i] < from {
            t[i] = from;
        }
        let (a, b) = (from as u128, t[i] as u128);
        let span = (i - prev) as u128;
        for (k, slot) in t.iter_mut().enumerate().take(i).skip(prev + 1) {
            *slot = (a + (b - a) * (k - prev) as u128 / span) as u64;
        }
        slope_num = b - a;
        slope_den = span;
        prev = i;
    }
    let from = resume(&t, prev) as u128;
    for (k, slot) in t.iter_mut().enumerate().skip(prev + 1) {
        // Past the end of u64 (a clock at its end, extended): it stays there.
        *slot = (from + slope_num * (k - prev) as u128 / slope_den).min(u64::MAX as u128) as u64;
    }
    let jumps = jumps.into_iter().filter(|&(p, j)| j > t[p as usize]).collect();
    (t, jumps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_state_merges() {
        let mut v = Vec::new();
        push_state(&mut v, 0, State::Ready);
        push_state(&mut v, 1, State::Running);
        push_state(&mut v, 2, State::Ready);
        push_state(&mut v, 2, State::Running); // the next run starts where the last ended
        push_state(&mut v, 3, State::Ready);
        assert_eq!(v, vec![(0, State::Ready), (1, State::Running), (3, State::Ready)]);
        push_state(&mut v, 3, State::Running);
        push_state(&mut v, 3, State::Ready);
        assert_eq!(v, vec![(0, State::Ready), (1, State::Running), (3, State::Ready)]);
    }
}
