//! The wait-for graph, deadlock detection and the deadlock report.
//!
//! A blocked task has edges to the tasks that could release it:
//! - a lock or monitor entry: its holder; a writer waiting for readers to
//!   leave: the readers; a reader behind a writer (held or waiting): that
//!   writer;
//! - `Object.wait()`: every other live task (any of them could notify), or
//!   once the model declared the monitor's notifiers, those still alive;
//! - a channel send or receive, a pipe write or read: every task holding the
//!   other end, once the model declared who holds it (a task holds an end once
//!   it used or declared it; a task yet to use an end is not known otherwise),
//!   and the live tasks declared to close a pipe end, either end (closing
//!   its own end fails the waiter's read or write too; not an illustrated
//!   cycle's edges where the users give one); with none left, the live
//!   users of its own side, which may close it (see `own_side`), and with
//!   none of those either, the wait is dead by itself; a `select`: the
//!   union over its cases;
//! - a join: the joined task.
//!
//! A deadlock is a set of blocked tasks closed under these edges: none of them
//! reaches a task that can run. A background task (a server's loop) dead by
//! itself is parked, not deadlocked, as at the end of a run, unless a
//! foreground task is blocked for good behind it: found when that task
//! blocks, or when the last declared holder of the channel or pipe end the
//! parked task waits on, or the last declared notifier of the monitor it
//! waits in, finishes. Waits whose releasers are not known (a channel
//! end nobody has declared, a task not yet started that might hold it) are
//! never part of a partial deadlock, so a report is a real one as long as the
//! model declares every holder of an end it declares (a task that uses an end
//! declared without it fails the run, see `State::undeclared_use`). A wait
//! that could not be judged only because a spawned task had not run yet is
//! judged again after the step in which the last such task first ran (see
//! `State::judge_after_step`): later blocks need not come to find it.

use crate::outcome::{BlockedTask, Deadlock, Held, LastNotify, Notify};
use crate::rt::{Dir, Hold, Holders, ResState, State, Status, TaskId, Wait};
use crate::trace::FrameInfo;

/// Buffers reused by every detection, so blocking does not allocate.
#[derive(Default)]
pub(crate) struct Scratch {
    mark: Vec<u32>,
    epoch: u32,
    stack: Vec<TaskId>,
    edges: Vec<TaskId>,
    /// Tasks whose channel or pipe wait could not be judged when they
    /// blocked, because a spawned task had not run yet (it may declare
    /// itself a holder of the other end): judged again once every spawned
    /// task has run (see `State::judge_after_step`).
    pub undecided: Vec<TaskId>,
    /// Set by `State::judge_after_step`: the step limit it stood in for.
    pub judge_due: Option<u64>,
    /// Timer tasks a step stopped (`execution::stop_timer_task`): finished
    /// in that step, but the waits they could have served are judged once
    /// it is over, as a finish at the end of a task's own step is.
    pub stopped: Vec<TaskId>,
}

/// Appends the tasks that could release blocked task `t` to `out`.
/// Returns false when they are not known (the wait can never be proved dead).
pub(crate) fn edges(s: &State, t: TaskId, out: &mut Vec<TaskId>) -> bool {
    edges_of(s, t, out, false, true)
}

/// [`edges`] but the declared closers of the waiter's own side (see
/// [`own_closers`]): the tasks that serve the wait. Whether a closed set is
/// only parked background tasks is judged by these: a closer that is itself
/// parked closes nothing, and a lock cycle between the writer and the
/// reader it would have cancelled is still a deadlock.
fn serving_edges(s: &State, t: TaskId, out: &mut Vec<TaskId>) -> bool {
    edges_of(s, t, out, false, false)
}

/// Like [`edges`]; with `primary_only`, leaves out the edges a report should
/// not build its illustrated cycle from: waits on signal channels
/// (`ctx.Done()`), which are rarely the cause, and a channel or
/// pipe wait's edge to the waiting task itself (it holds the other end too,
/// but cannot serve itself while it waits: the cycle it makes explains
/// nothing where one through the other holders exists).
fn edges_of(s: &State, t: TaskId, out: &mut Vec<TaskId>, primary_only: bool, closers: bool) -> bool {
    let start = out.len();
    let Status::Blocked(wait) = s.tasks[t as usize].status else { return false };
    match wait {
        Wait::Lock(r) | Wait::RLock(r) | Wait::Drain(r) => match &s.resources[r as usize].st {
            // Handed to another task to unlock: any task might (Go's), so
            // the releasers are not known; the edge to the task that
            // locked stays for a report once no task can run.
            ResState::Mutex { holder: Some(h) } if h.handed => {
                out.push(h.task);
                return false;
            }
            ResState::Mutex { holder } => out.extend(holder.map(|h| h.task)),
            ResState::Monitor { owner, .. } => out.extend(owner.map(|h| h.task)),
            ResState::RwLock { writer, pending, readers } => {
                if let Some(w) = writer.filter(|w| w.handed) {
                    // Handed off, as a mutex's above.
                    out.push(w.task);
                    return false;
                } else if let Some(w) = writer {
                    out.push(w.task);
                } else if let (Some(p), false) = (pending, matches!(wait, Wait::Drain(_))) {
                    out.push(*p);
                } else if matches!(wait, Wait::Drain(_)) {
                    // A writer waits for every reader to leave, itself among
                    // them if it holds a read lock (an upgrade: Lock under
                    // RLock never returns).
                    out.extend(readers.iter().map(|h| h.task));
                } else {
                    out.extend(readers.iter().map(|h| h.task).filter(|&x| x != t));
                    // A reader waits only for writers; with none left it is not stuck.
                }
            }
            _ => {}
        },
        // Declared notifiers: those still alive (a task yet to run may
        // declare itself one). Else any live task could notify.
        Wait::Notify(r) if s.declares_notifiers(r) => {
            if s.unstarted > 0 {
                return false;
            }
            out.extend(
                s.notifiers
                    .iter()
                    .filter(|&&(m, u)| m == r && u != t && s.tasks[u as usize].status != Status::Finished)
                    .map(|&(_, u)| u),
            );
            out[start..].sort_unstable();
            // Known, if none: every declared notifier finished (or the
            // waiter is the only one). Nobody will notify: the wait is dead
            // by itself, found beside tasks that run on.
            return true;
        }
        Wait::Notify(_) => out
            .extend((0..s.tasks.len() as TaskId).filter(|&u| u != t && s.tasks[u as usize].status != Status::Finished)),
        Wait::Send(r) | Wait::Write(r) => {
            let skip = primary_only && is_signal(s, r);
            if !(skip || end_holders(s, t, r, Dir::Recv, out, !primary_only)) {
                return false;
            }
            if !skip && out.len() == start {
                return own_side(s, t, [(r, Dir::Send)], out, primary_only);
            }
            if !primary_only && closers {
                own_closers(s, t, [(r, Dir::Send)], out, start);
            }
        }
        Wait::Recv(r) | Wait::Read(r) => {
            let skip = primary_only && is_signal(s, r);
            if !(skip || end_holders(s, t, r, Dir::Send, out, !primary_only)) {
                return false;
            }
            if !skip && out.len() == start {
                return own_side(s, t, [(r, Dir::Recv)], out, primary_only);
            }
            if !primary_only && closers {
                own_closers(s, t, [(r, Dir::Recv)], out, start);
            }
        }
        Wait::Select => {
            let mut judged = false;
            for &(r, dir) in &s.tasks[t as usize].cases {
                if primary_only && is_signal(s, r) {
                    continue;
                }
                if !end_holders(s, t, r, other(dir), out, !primary_only) {
                    return false;
                }
                judged = true;
            }
            if judged && out.len() == start {
                return own_side(s, t, s.tasks[t as usize].cases.iter().copied(), out, primary_only);
            }
            if !primary_only && closers {
                own_closers(s, t, s.tasks[t as usize].cases.iter().copied(), out, start);
            }
            sort_dedup_from(out, start);
        }
        Wait::Join(u) => out.push(u),
    }
    if primary_only && !matches!(wait, Wait::Lock(_) | Wait::RLock(_) | Wait::Drain(_)) {
        let mut k = start;
        for i in start..out.len() {
            if out[i] != t {
                out[k] = out[i];
                k += 1;
            }
        }
        out.truncate(k);
    }
    out.len() > start
}

/// A wait of task `t` on these ends (resource, the waiter's side) of
/// channels or pipes, whose other ends' declared holders all finished:
/// nobody will serve it. A task on its own side may still close the end and
/// so wake it: another sender of a channel (`close` wakes a parked send,
/// which then panics), another reader or read closer of a pipe
/// (`close_read` fails a read), another writer or write closer of a pipe
/// (`close_write` fails the write in progress and those queued). Those
/// still alive are its edges, so it is blocked for good once they are (a
/// queued writer, a closer waiting for a lock the waiter holds), but not
/// primary ones: a report builds its cycle through them only when no other
/// is there. With none, it is known and dead by itself, as a `wait()` with
/// no notifier left. Unknown (`false`) where nobody declared that side: any
/// task may close it. A background task in such a wait (a server's loop) is
/// parked, not deadlocked, as it is when the run ends; but a foreground
/// task waiting for it is blocked for good (see [`detect_from`]).
fn own_side(
    s: &State,
    t: TaskId,
    ends: impl IntoIterator<Item = (u32, Dir)>,
    out: &mut Vec<TaskId>,
    primary_only: bool,
) -> bool {
    let start = out.len();
    for (r, dir) in ends {
        let Some(side) = own_end(s, r, dir) else { continue };
        if !side.known() {
            out.truncate(start);
            return false;
        }
        if !primary_only {
            out.extend(side.iter_all().filter(|&u| u != t && s.tasks[u as usize].status != Status::Finished));
        }
    }
    sort_dedup_from(out, start);
    true
}

/// The tasks on the `dir` side of channel or pipe `r` that may close it
/// under a waiter of that side: a channel's senders (a receiver may not
/// close a channel), a pipe's readers or writers. `None` for a channel's
/// receive side.
fn own_end(s: &State, r: u32, dir: Dir) -> Option<&Holders> {
    match (&s.resources[r as usize].st, dir) {
        (ResState::Chan { senders: h, .. }, Dir::Send)
        | (ResState::Pipe { readers: h, .. }, Dir::Recv)
        | (ResState::Pipe { writers: h, .. }, Dir::Send) => Some(h),
        _ => None,
    }
}

/// Adds to `out` (whose edges start at `start`) the live tasks declared
/// only to close the waiter's own side of these ends, where the other end
/// is still held: a running `conn.Close()` releases the wait however the
/// other end's holders stand (a reader that first needs a lock the writer
/// holds, the waiter holding both ends). Unlike a user of its own side,
/// which [`own_side`] counts only once the other end has nobody left (a
/// writer running on its way to write is no way out), a declared closer is
/// there to cancel. Not primary: a report's cycle goes through the other
/// end's holders.
fn own_closers(s: &State, t: TaskId, ends: impl IntoIterator<Item = (u32, Dir)>, out: &mut Vec<TaskId>, start: usize) {
    for (r, dir) in ends {
        let Some(side) = own_end(s, r, dir) else { continue };
        for &u in side.closers() {
            if u != t && s.tasks[u as usize].status != Status::Finished && !out[start..].contains(&u) {
                out.push(u);
            }
        }
    }
}

fn is_signal(s: &State, r: u32) -> bool {
    matches!(s.resources[r as usize].st, ResState::Chan { signal: true, .. })
}

/// Who can release a wait on the `want` end of channel or pipe `r`: the
/// tasks holding that end, or, for a pipe writer queued behind another
/// write, that writer. `None` when `r` has no such end.
enum Releasers<'a> {
    Holders(&'a Holders),
    ActiveWriter(TaskId),
}

fn releasers(s: &State, t: TaskId, r: u32, want: Dir) -> Option<Releasers<'_>> {
    match end_users(s, t, r, want)? {
        // An end nobody declared may yet be used by a task that has not
        // touched it: its holders are not known, unless no task can run at
        // all (then none will touch it: the ones that did are all there is).
        Releasers::Holders(h) if !(h.known() || s.enabled.is_empty() && s.timers.is_empty()) => None,
        users => Some(users),
    }
}

/// [`releasers`], declared or not: an undeclared end's holders are the
/// tasks seen using it so far.
fn end_users(s: &State, t: TaskId, r: u32, want: Dir) -> Option<Releasers<'_>> {
    Some(match (&s.resources[r as usize].st, want) {
        // A writer queued behind another write waits for that writer first.
        (ResState::Pipe { active_writer: Some(w), .. }, Dir::Recv) if *w != t => Releasers::ActiveWriter(*w),
        (ResState::Chan { receivers: h, .. }, Dir::Recv)
        | (ResState::Chan { senders: h, .. }, Dir::Send)
        | (ResState::Pipe { readers: h, .. }, Dir::Recv)
        | (ResState::Pipe { writers: h, .. }, Dir::Send) => Releasers::Holders(h),
        _ => return None,
    })
}

/// Sorts `out[start..]` and drops its repeats.
fn sort_dedup_from(out: &mut Vec<TaskId>, start: usize) {
    out[start..].sort_unstable();
    let mut k = start;
    for i in start..out.len() {
        if k == start || out[k - 1] != out[i] {
            out[k] = out[i];
            k += 1;
        }
    }
    out.truncate(k);
}

/// The end a task on the `dir` end of a channel waits for.
fn other(dir: Dir) -> Dir {
    if dir == Dir::Send {
        Dir::Recv
    } else {
        Dir::Send
    }
}

/// The live holders of the `want` end of channel or pipe `r`, and, `with_closers`,
/// the live tasks declared only to close it (see [`Holders::declare_closer`]).
fn end_holders(s: &State, t: TaskId, r: u32, want: Dir, out: &mut Vec<TaskId>, with_closers: bool) -> bool {
    if s.unstarted > 0 {
        // A task that has not run yet may hold any end.
        return false;
    }
    match releasers(s, t, r, want) {
        Some(Releasers::ActiveWriter(w)) => {
            out.push(w);
            true
        }
        Some(Releasers::Holders(set)) => {
            let start = out.len();
            let live = |u: &TaskId| s.tasks[*u as usize].status != Status::Finished;
            if with_closers {
                out.extend(set.iter_all().filter(live));
            } else {
                out.extend(set.iter().filter(live));
            }
            out.len() > start || set.known()
        }
        None => false,
    }
}

/// What the in-place look at a channel or pipe wait tells, before the search.
enum Quick {
    /// A task that could release it can run: no deadlock.
    Runs,
    /// None of its releasers runs, but a spawned task has not run yet and
    /// may hold the other end: not decidable until it has.
    Unknown,
    /// Not a channel or pipe wait, or none of its releasers runs: search.
    Search,
}

/// Whether a task that could release the channel or pipe wait of blocked
/// task `t` can run. Looked up in place (the same releasers as
/// [`end_holders`]), before the search builds, sorts and walks edge lists:
/// most blocks of a channel or pipe have such a releaser.
fn quick_look(s: &State, t: TaskId) -> Quick {
    let runs = |u: TaskId| matches!(s.tasks[u as usize].status, Status::Ready | Status::Sleeping);
    let end_runs = |r: u32, want: Dir| match releasers(s, t, r, want) {
        Some(Releasers::ActiveWriter(w)) => runs(w),
        Some(Releasers::Holders(set)) => set.iter_all().any(runs),
        None => false,
    };
    // A declared closer of the waiter's own side (see `own_closers`).
    let closer_runs = |r: u32, dir: Dir| own_end(s, r, dir).is_some_and(|h| h.closers().iter().any(|&u| runs(u)));
    let releaser_runs = match s.tasks[t as usize].status {
        Status::Blocked(Wait::Send(r) | Wait::Write(r)) => end_runs(r, Dir::Recv) || closer_runs(r, Dir::Send),
        Status::Blocked(Wait::Recv(r) | Wait::Read(r)) => end_runs(r, Dir::Send) || closer_runs(r, Dir::Recv),
        Status::Blocked(Wait::Select) => {
            s.tasks[t as usize].cases.iter().any(|&(r, dir)| end_runs(r, other(dir)) || closer_runs(r, dir))
        }
        _ => return Quick::Search,
    };
    if releaser_runs {
        Quick::Runs
    } else if s.unstarted > 0 {
        // A task that has not run yet may hold any end (see `end_holders`).
        Quick::Unknown
    } else {
        Quick::Search
    }
}

/// The answer of [`detect_from`].
pub(crate) enum Verdict {
    /// The wait closed this deadlock.
    Dead(Box<Deadlock>),
    /// No deadlock through this wait now.
    Alive,
    /// Not decidable while a spawned task has not run (it may declare
    /// itself a holder of an end a wait of the set is on): judge again once
    /// every spawned task has run.
    Undecided,
}

/// How the set reachable from a blocked task stands.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Closure {
    /// All blocked, all edges known: a deadlock.
    Closed,
    /// A task that can run releases it.
    Open,
    /// A wait whose releasers are not known yet (a spawned task has not run).
    Unknown,
}

/// Called when `t` has just blocked: the deadlock this wait closes, if any.
pub(crate) fn detect_from(s: &mut State, t: TaskId) -> Verdict {
    match quick_look(s, t) {
        Quick::Search => {}
        quick => {
            // The shortcut must answer as the search does (checked in debug builds, where the tests run).
            debug_assert!(
                {
                    let mut sc = std::mem::take(&mut s.scratch);
                    let c = closed_from(s, &mut sc, t);
                    s.scratch = sc;
                    c != Closure::Closed
                },
                "the quick look said no deadlock where the search finds one"
            );
            return if let Quick::Runs = quick { Verdict::Alive } else { Verdict::Undecided };
        }
    }
    let mut sc = std::mem::take(&mut s.scratch);
    let c = closed_from(s, &mut sc, t);
    let dead = match c {
        Closure::Closed if parked(s, &sc) => behind_parked(s),
        c => c == Closure::Closed,
    };
    s.scratch = sc;
    match c {
        _ if dead => Verdict::Dead(Box::new(report(s, false))),
        Closure::Unknown => Verdict::Undecided,
        _ => Verdict::Alive,
    }
}

/// Whether the closed set [`closed_from`] just marked is background tasks
/// only, each parked for good (see [`spread_parked`]). No failure by
/// itself, as at the end of a run. A cycle of background tasks' locks
/// still is one, even beside a parked task that could only have closed an
/// end for them.
#[cold]
fn parked(s: &State, sc: &Scratch) -> bool {
    let n = s.tasks.len();
    let members: Vec<bool> = (0..n).map(|u| sc.mark[u] == sc.epoch).collect();
    if (0..n).any(|u| members[u] && !s.tasks[u].background) {
        return false;
    }
    let parked = spread_parked(s, &members);
    (0..n).all(|u| !members[u] || parked[u])
}

/// Which of the `candidates` (by task id; blocked for good) are parked: in
/// a wait nobody is left to serve ([`waits_alone`]), or waiting for a task
/// that is, by [`serving_edges`]: idle server loops that could each serve
/// the other beside a parked feeder stay parked, as they always were. A
/// closer is no serving edge, so a writer and reader in a lock cycle beside
/// their parked closer are not parked through it. (A cycle beside a parked
/// second receiver of the writer's channel still is: telling it from idle
/// loops needs the lock waits in the cycle.) Linear in the edges.
fn spread_parked(s: &State, candidates: &[bool]) -> Vec<bool> {
    let n = s.tasks.len();
    let mut parked: Vec<bool> = (0..n).map(|u| candidates[u] && waits_alone(s, u as TaskId)).collect();
    // Who waits for each task, among the candidates not parked yet.
    let mut waiters: Vec<Vec<TaskId>> = vec![Vec::new(); n];
    let mut buf = Vec::new();
    for u in (0..n).filter(|&u| candidates[u] && !parked[u]) {
        buf.clear();
        serving_edges(s, u as TaskId, &mut buf);
        for &v in &buf {
            if v as usize != u {
                waiters[v as usize].push(u as TaskId);
            }
        }
    }
    let mut stack: Vec<TaskId> = (0..n as TaskId).filter(|&u| parked[u as usize]).collect();
    while let Some(v) = stack.pop() {
        for &u in &waiters[v as usize] {
            if !parked[u as usize] {
                parked[u as usize] = true;
                stack.push(u);
            }
        }
    }
    parked
}

/// A blocked task whose wait is known to have no releaser left but,
/// for a channel or pipe wait, itself (a loop that holds both ends of its
/// own channel cannot serve itself while it waits).
fn waits_alone(s: &State, t: TaskId) -> bool {
    let mut out = Vec::new();
    let lock = matches!(s.tasks[t as usize].status, Status::Blocked(Wait::Lock(_) | Wait::RLock(_) | Wait::Drain(_)));
    if !edges(s, t, &mut out) {
        return false;
    }
    // Edges to tasks on its own side only (see `own_side`): nobody is left
    // to serve it, and two loops that could each close the end for the
    // other are parked as one would be.
    out.is_empty() || (!lock && (out.iter().all(|&u| u == t) || !other_end_served(s, t)))
}

/// Whether a live task other than `t` holds the other end of the channel
/// or pipe `t` waits on (of any case, for a select), or is the write
/// ahead of its queued one.
fn other_end_served(s: &State, t: TaskId) -> bool {
    let ends = other_ends(s, t);
    if ends.is_empty() {
        return true;
    }
    let mut buf = Vec::new();
    for (r, want) in ends {
        end_holders(s, t, r, want, &mut buf, true);
    }
    buf.iter().any(|&u| u != t)
}

/// [`other_end_served`] for a report, also while a task has not run yet (at
/// a step limit), which `end_holders` leaves unjudged: the holders as they
/// stand.
fn other_end_held(s: &State, t: TaskId) -> bool {
    let ends = other_ends(s, t);
    let live = |u: TaskId| u != t && s.tasks[u as usize].status != Status::Finished;
    ends.is_empty()
        || ends.into_iter().any(|(r, want)| match releasers(s, t, r, want) {
            Some(Releasers::ActiveWriter(w)) => live(w),
            Some(Releasers::Holders(h)) => h.iter_all().any(live),
            None => false,
        })
}

/// The ends that could serve blocked task `t`'s channel or pipe wait (each
/// case's, for a select), as (resource, the end wanted); none for another wait.
fn other_ends(s: &State, t: TaskId) -> Vec<(u32, Dir)> {
    match s.tasks[t as usize].status {
        Status::Blocked(Wait::Send(r) | Wait::Write(r)) => vec![(r, Dir::Recv)],
        Status::Blocked(Wait::Recv(r) | Wait::Read(r)) => vec![(r, Dir::Send)],
        Status::Blocked(Wait::Select) => s.tasks[t as usize].cases.iter().map(|&(r, dir)| (r, other(dir))).collect(),
        _ => Vec::new(),
    }
}

/// Whether, now that a background task parked, some task is blocked for
/// good and not parked: a foreground task behind the parked one (a lock it
/// holds, a join of it), or background tasks in a cycle that only the
/// parked one could have broken (a conn's closer left waiting). The same
/// sets a report gives, computed once over every blocked task.
#[cold]
fn behind_parked(s: &State) -> bool {
    let mut dead = blocked_for_good(s, false);
    leave_out_parked(s, &mut dead);
    dead.contains(&true)
}

/// Is the set reachable from `t` closed (all blocked, all edges known)?
fn closed_from(s: &State, sc: &mut Scratch, t: TaskId) -> Closure {
    let n = s.tasks.len();
    if sc.mark.len() < n {
        sc.mark.resize(n, 0);
    }
    sc.epoch = sc.epoch.wrapping_add(1);
    if sc.epoch == 0 {
        sc.mark.iter_mut().for_each(|m| *m = 0);
        sc.epoch = 1;
    }
    sc.stack.clear();
    sc.stack.push(t);
    sc.mark[t as usize] = sc.epoch;
    while let Some(u) = sc.stack.pop() {
        if !matches!(s.tasks[u as usize].status, Status::Blocked(_)) {
            return Closure::Open;
        }
        sc.edges.clear();
        if !edges(s, u, &mut sc.edges) {
            // Releasers not known: a spawned task that has not run may
            // hold the end (then worth judging again once it has), or an
            // end nobody declared (known only when nothing runs at all).
            return if s.unstarted > 0 { Closure::Unknown } else { Closure::Open };
        }
        for i in 0..sc.edges.len() {
            let v = sc.edges[i];
            // A releaser that can run ends the search here rather than when
            // popped: the answer is the same (the set is not closed), and
            // most waits have one, found without walking the rest.
            if !matches!(s.tasks[v as usize].status, Status::Blocked(_)) {
                return Closure::Open;
            }
            if sc.mark[v as usize] != sc.epoch {
                sc.mark[v as usize] = sc.epoch;
                sc.stack.push(v);
            }
        }
    }
    Closure::Closed
}

/// Called when no task can run and no timer is pending.
pub(crate) fn detect_global(s: &mut State) -> Deadlock {
    // Tasks blocked for good, with a cycle among them, if some blocked
    // task's reachable set is closed.
    let mut sc = std::mem::take(&mut s.scratch);
    let closed = (0..s.tasks.len() as TaskId).any(|t| {
        matches!(s.tasks[t as usize].status, Status::Blocked(_)) && closed_from(s, &mut sc, t) == Closure::Closed
    });
    s.scratch = sc;
    if closed {
        report(s, true)
    } else {
        let blocked = (0..s.tasks.len() as TaskId)
            .filter(|&t| matches!(s.tasks[t as usize].status, Status::Blocked(_)))
            .map(|t| blocked_task(s, t))
            .collect();
        let mut d = Deadlock {
            global: true,
            step: s.step,
            time: s.clock,
            cycle: Vec::new(),
            behind: blocked,
            running: Vec::new(),
            running_ids: Vec::new(),
            waiting: Vec::new(),
            waiting_ids: Vec::new(),
            shared: shared_names(s),
            notifies: Vec::new(),
        };
        d.notifies = notifies(s, &d);
        d
    }
}

/// Builds the report of the tasks blocked for good, once the closed set
/// reachable from some task showed there are some.
fn report(s: &State, global: bool) -> Deadlock {
    let n = s.tasks.len();
    let running_ids: Vec<u32> =
        (0..n as TaskId).filter(|&u| matches!(s.tasks[u as usize].status, Status::Ready | Status::Sleeping)).collect();
    let running: Vec<String> = running_ids.iter().map(|&u| s.tasks[u as usize].name.to_string()).collect();
    // Found as a task blocked, but global all the same if that left no task
    // able to run (Go's "all goroutines are asleep"): then no one is left to
    // release a wait with unknown releasers either, and the report names
    // every blocked task.
    let global = global || running.is_empty();
    let mut dead = blocked_for_good(s, global);
    if !global {
        leave_out_parked(s, &mut dead);
    }
    let cycle = pick_cycle(s, &dead, global);
    let behind =
        (0..n as TaskId).filter(|&u| dead[u as usize] && !cycle.contains(&u)).map(|u| blocked_task(s, u)).collect();
    let waiting_ids: Vec<u32> = (0..n as TaskId)
        .filter(|&u| !dead[u as usize] && matches!(s.tasks[u as usize].status, Status::Blocked(_)))
        .collect();
    let waiting = waiting_ids.iter().map(|&u| s.tasks[u as usize].name.to_string()).collect();
    let mut d = Deadlock {
        global,
        step: s.step,
        time: s.clock,
        cycle: cycle.iter().map(|&u| blocked_task(s, u)).collect(),
        behind,
        running,
        running_ids,
        waiting,
        waiting_ids,
        shared: shared_names(s),
        notifies: Vec::new(),
    };
    d.notifies = notifies(s, &d);
    d
}

/// Everything that can never run, by task id: the blocked tasks not
/// (transitively) releasable by a task that can run or by a wait with
/// unknown releasers (`global`: no task can run, so none of those).
fn blocked_for_good(s: &State, global: bool) -> Vec<bool> {
    let n = s.tasks.len();
    let mut releasable: Vec<bool> =
        s.tasks.iter().map(|t| !matches!(t.status, Status::Blocked(_) | Status::Finished)).collect();
    let mut buf = Vec::new();
    let mut changed = true;
    while changed {
        changed = false;
        for u in 0..n as TaskId {
            if releasable[u as usize] || !matches!(s.tasks[u as usize].status, Status::Blocked(_)) {
                continue;
            }
            buf.clear();
            let known = edges(s, u, &mut buf);
            // A lock held by a task that returned may yet be unlocked by any
            // other (a Go mutex): open while tasks run, as `closed_from` has it.
            let returned_holder = |v: &TaskId| s.tasks[*v as usize].status == Status::Finished;
            if (!known && !global) || buf.iter().any(|&v| releasable[v as usize] || (!global && returned_holder(&v))) {
                releasable[u as usize] = true;
                changed = true;
            }
        }
    }
    (0..n).map(|u| matches!(s.tasks[u].status, Status::Blocked(_)) && !releasable[u]).collect()
}

/// Leaves out of a partial deadlock's tasks the background ones parked
/// (see [`parked`]) that no foreground task blocked for good waits for,
/// directly or not: a server loop left waiting for requests is no part of
/// the failure.
fn leave_out_parked(s: &State, dead: &mut [bool]) {
    let n = dead.len();
    let mut buf = Vec::new();
    // Waited for by a dead foreground task.
    let mut needed: Vec<bool> = (0..n).map(|u| dead[u] && !s.tasks[u].background).collect();
    let mut stack: Vec<TaskId> = (0..n as TaskId).filter(|&u| needed[u as usize]).collect();
    while let Some(u) = stack.pop() {
        buf.clear();
        edges(s, u, &mut buf);
        for &v in &buf {
            if dead[v as usize] && !needed[v as usize] {
                needed[v as usize] = true;
                stack.push(v);
            }
        }
    }
    // Parked: in a wait nobody is left to serve, or waiting only for such.
    let candidates: Vec<bool> = (0..n).map(|u| dead[u] && !needed[u]).collect();
    let parked = spread_parked(s, &candidates);
    for u in 0..n {
        dead[u] &= !parked[u];
    }
}

/// The last notify of each monitor a task of report `d` waits on in
/// `wait()`, in resource order.
fn notifies(s: &State, d: &Deadlock) -> Vec<LastNotify> {
    let name = |t: TaskId| s.tasks[t as usize].name.to_string();
    d.monitors_waited_in()
        .into_iter()
        .map(|r| {
            let res = &s.resources[r as usize];
            let last = s.notes.of(r).map(|n| Notify {
                op: if n.all { "notify_all" } else { "notify" }.to_string(),
                step: n.step,
                task: n.by.task,
                name: name(n.by.task),
                at: n.by.at.map(FrameInfo::from),
                woke: n.woken.iter().map(|&t| name(t)).collect(),
                woke_ids: n.woken.clone(),
            });
            LastNotify { monitor: res.name.to_string(), resource: r, last }
        })
        .collect()
}

/// The names two or more tasks have, sorted.
pub(crate) fn shared_names(s: &State) -> Vec<String> {
    let mut count: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for t in 0..s.tasks.len() {
        *count.entry(&s.tasks[t].name).or_default() += 1;
    }
    count.into_iter().filter(|&(_, n)| n > 1).map(|(name, _)| name.to_string()).collect()
}

/// The cycle that illustrates a deadlock: the shortest one among the dead
/// tasks (ties go to the one whose tasks, from its lowest, come first in
/// task order); built from primary edges when possible (see [`edges_of`]),
/// and never of `wait()`s (and joins) alone in a global report. Rotated to
/// start at the task spawned first.
///
/// Not the shortest through the task whose wait closed it: which of two
/// independent waits came last is chance, and one deadlock would get two
/// reports (and two signatures in a hunt) as the order of unrelated steps
/// went.
fn pick_cycle(s: &State, dead: &[bool], global: bool) -> Vec<TaskId> {
    let shortest = |from: &mut dyn Iterator<Item = TaskId>, primary_only: bool| {
        let mut best: Option<Vec<TaskId>> = None;
        for u in from {
            if let Some(mut c) = shortest_cycle_through(s, dead, u, primary_only) {
                rotate_to_first(&mut c);
                if best.as_ref().is_none_or(|b| (c.len(), &c) < (b.len(), b)) {
                    best = Some(c);
                }
            }
        }
        best
    };
    let dead_tasks = || (0..dead.len() as TaskId).filter(|&u| dead[u as usize]);
    // Preferred edges first, then any edges: a cycle through a signal
    // channel's wait explains less than one through the locks and pipes
    // behind it.
    let mut found = shortest(&mut dead_tasks(), true).or_else(|| shortest(&mut dead_tasks(), false));
    // Tasks that each wait in wait() for another of them to notify are a
    // cycle only in name: it says no more than that nobody is left to
    // notify (the report's last-notify lines say how that came about), and
    // which waiters it picks is chance. A cycle through a lock or channel
    // wait (a nested monitor lockout) does explain; else a global report
    // has none, and lists every blocked task.
    // A join on a waiter explains no more (main joining its workers: "main
    // could notify" closes the cycle). A cycle without a wait() stays.
    let wait = |u: &TaskId| s.tasks[*u as usize].status;
    let in_wait = |u: &TaskId| matches!(wait(u), Status::Blocked(Wait::Notify(_)));
    let holds_up = |u: &TaskId| !matches!(wait(u), Status::Blocked(Wait::Notify(_) | Wait::Join(_)));
    if global && found.as_ref().is_some_and(|c| c.iter().any(in_wait) && !c.iter().any(holds_up)) {
        found = shortest(&mut dead_tasks().filter(holds_up), false);
    }
    found.unwrap_or_default()
}

/// Rotates a cycle to start at its lowest task id (the task spawned first).
fn rotate_to_first(cycle: &mut [TaskId]) {
    if let Some(first) = cycle.iter().enumerate().min_by_key(|(_, &x)| x).map(|(i, _)| i) {
        cycle.rotate_left(first);
    }
}

/// Breadth-first search for the shortest path from `t` back to `t` within the dead set.
fn shortest_cycle_through(s: &State, dead: &[bool], t: TaskId, primary_only: bool) -> Option<Vec<TaskId>> {
    if !dead[t as usize] {
        return None;
    }
    let n = dead.len();
    let mut parent: Vec<Option<TaskId>> = vec![None; n];
    let mut queue = std::collections::VecDeque::new();
    let mut buf = Vec::new();
    queue.push_back(t);
    let mut seen = vec![false; n];
    seen[t as usize] = true;
    while let Some(u) = queue.pop_front() {
        buf.clear();
        edges_of(s, u, &mut buf, primary_only, true);
        // In task order, not in the order of a lock's readers or a queue's
        // waiters, which the schedule set: one state, one shortest cycle.
        buf.sort_unstable();
        for &v in &buf {
            if v == t {
                let mut path = vec![u];
                let mut x = u;
                while let Some(p) = parent[x as usize] {
                    path.push(p);
                    x = p;
                }
                path.reverse();
                return Some(path);
            }
            if dead[v as usize] && !seen[v as usize] {
                seen[v as usize] = true;
                parent[v as usize] = Some(u);
                queue.push_back(v);
            }
        }
    }
    None
}

/// Every blocked task, in task order, as a report gives it (for a run
/// stopped at its step limit).
pub(crate) fn blocked_tasks(s: &State) -> Vec<BlockedTask> {
    (0..s.tasks.len() as TaskId)
        .filter(|&t| matches!(s.tasks[t as usize].status, Status::Blocked(_)))
        .map(|t| blocked_task(s, t))
        .collect()
}

/// The tasks able to run, in task order (for a run stopped at its step limit).
pub(crate) fn running_tasks(s: &State) -> Vec<crate::outcome::RunningTask> {
    s.tasks
        .iter()
        .enumerate()
        .filter(|(_, x)| matches!(x.status, Status::Ready | Status::Sleeping))
        .map(|(u, x)| crate::outcome::RunningTask {
            task: u as u32,
            name: x.name.to_string(),
            started: x.started,
            asleep: x.status == Status::Sleeping,
            spawned_at: x.first_step,
        })
        .collect()
}

/// For a report made while a task has not run yet (at a step limit, where
/// PCT starved it): the live declared holders of the other ends of `t`'s
/// channel or pipe wait, or the live declared notifiers of its `wait()`.
/// The search leaves such a wait unjudged, as a task yet to run may declare
/// itself one, and its edges empty; but "no task left" would be false.
fn declared_releasers(s: &State, t: TaskId, out: &mut Vec<TaskId>) {
    let live = |u: &TaskId| *u != t && s.tasks[*u as usize].status != Status::Finished;
    match s.tasks[t as usize].status {
        Status::Blocked(Wait::Notify(r)) if s.declares_notifiers(r) => {
            out.extend(s.notifiers.iter().filter(|&&(m, u)| m == r && live(&u)).map(|&(_, u)| u));
        }
        _ => {
            for (r, want) in other_ends(s, t) {
                match releasers(s, t, r, want) {
                    Some(Releasers::ActiveWriter(w)) => out.push(w),
                    Some(Releasers::Holders(h)) if h.known() => out.extend(h.iter_all().filter(live)),
                    _ => {}
                }
            }
            // Nobody left on the other end: those of its own side may still
            // close it, as `own_side` counts them.
            if out.is_empty() {
                for (r, want) in other_ends(s, t) {
                    if let Some(h) = own_end(s, r, other(want)).filter(|h| h.known()) {
                        out.extend(h.iter_all().filter(live));
                    }
                }
            }
        }
    }
    sort_dedup_from(out, 0);
}

fn blocked_task(s: &State, t: TaskId) -> BlockedTask {
    let task = &s.tasks[t as usize];
    let Status::Blocked(wait) = task.status else { unreachable!("report on a task that is not blocked") };
    let mut released = Vec::new();
    edges(s, t, &mut released);
    if released.is_empty() && s.unstarted > 0 {
        declared_releasers(s, t, &mut released);
    }
    // A task holding both ends of the channel or pipe it waits on cannot
    // release itself while it waits: the report leaves it out (the search
    // keeps the edge). A lock it holds itself is the deadlock, and stays.
    let mut only_itself = false;
    if !matches!(wait, Wait::Lock(_) | Wait::RLock(_) | Wait::Drain(_)) {
        only_itself = released.contains(&t);
        released.retain(|&u| u != t);
    }
    let (waits_for, resource, kind) = match wait {
        Wait::Join(u) => (s.tasks[u as usize].name.to_string(), None, String::new()),
        Wait::Select => {
            let names: Vec<String> = task
                .cases
                .iter()
                .map(|&(r, d)| format!("{} {}", crate::trace::CaseDir::from(d).as_str(), s.resources[r as usize].name))
                .collect();
            (names.join(" | "), None, String::new())
        }
        w => {
            let r = w.resource().unwrap();
            let res = &s.resources[r as usize];
            (res.name.to_string(), Some(r), res.kind.as_str().to_string())
        }
    };
    // The other end's holders, for a channel or pipe wait, if never declared.
    let ends = other_ends(s, t);
    let undeclared =
        ends.iter().any(|&(r, want)| matches!(end_users(s, t, r, want), Some(Releasers::Holders(h)) if !h.known()));
    if undeclared {
        // While some task can run, the graph leaves an undeclared end's
        // users out (any task may yet use it), and stops at the first such
        // case of a select: the report names, for every end, those alive
        // that hold it or used it so far, as it says.
        released.clear();
        for &(r, want) in &ends {
            match end_users(s, t, r, want) {
                Some(Releasers::ActiveWriter(w)) => released.push(w),
                Some(Releasers::Holders(h)) => {
                    released.extend(h.iter_all().filter(|&u| u != t && s.tasks[u as usize].status != Status::Finished))
                }
                None => {}
            }
        }
        sort_dedup_from(&mut released, 0);
    }
    // A lock's holder that returned holding it (a Go mutex can be unlocked
    // by any task, so while others run it is not judged; the report says so).
    let returned = match wait {
        Wait::Lock(r) | Wait::RLock(r) | Wait::Drain(r) => {
            let mut out = Vec::new();
            let mut note = |h: &crate::rt::Hold, read: bool| {
                if s.tasks[h.task as usize].status == Status::Finished && released.contains(&h.task) {
                    out.push(crate::outcome::ReturnedHolder { task: h.task, at: h.at.map(FrameInfo::from), read });
                }
            };
            match &s.resources[r as usize].st {
                ResState::Mutex { holder: Some(h) } | ResState::Monitor { owner: Some(h), .. } => note(h, false),
                ResState::RwLock { writer, readers, .. } => {
                    writer.iter().for_each(|h| note(h, false));
                    readers.iter().for_each(|h| note(h, true));
                }
                _ => {}
            }
            out.sort_by_key(|h| h.task);
            out.dedup_by_key(|h| h.task);
            out
        }
        _ => Vec::new(),
    };
    let closers_only = !ends.is_empty() && !undeclared && !released.is_empty() && !other_end_held(s, t);
    // The releasers that only close the waiter's own side (see `own_closers`;
    // while a task has not run yet, the edges, and so they, are not known).
    let mut closing = Vec::new();
    if !undeclared && !closers_only && s.unstarted == 0 {
        let mut serving = Vec::new();
        serving_edges(s, t, &mut serving);
        // A task declared only to close the other end (a pipe's read end,
        // closed by `conn.Close()`) ends the wait by failing it, as a closer
        // of the waiter's own side does: not one who serves it.
        let (mut users, mut other_closers) = (Vec::new(), Vec::new());
        for (r, want) in other_ends(s, t) {
            if let Some(Releasers::Holders(set)) = releasers(s, t, r, want) {
                users.extend(set.iter());
                other_closers.extend(set.closers().iter().copied());
            }
        }
        serving.retain(|u| !other_closers.contains(u) || users.contains(u));
        closing.extend(released.iter().copied().filter(|u| !serving.contains(u)));
    }
    let counter = match wait {
        Wait::Notify(r) => s.counter(r),
        _ => None,
    };
    // The declared callers of Done that returned without calling it in the
    // run, by id (not a spawner declared for the workers it started, which
    // calls none; one that was also to call Done itself is not named).
    let mut forgot_done: Vec<TaskId> = match wait {
        Wait::Notify(r) if counter.is_some() && released.is_empty() => s
            .notifiers
            .iter()
            .filter(|&&(m, u)| {
                m == r
                    && s.tasks[u as usize].status == Status::Finished
                    && !s.done_by.contains(&(r, u))
                    && !s.notifiers.iter().any(|&(m2, v)| m2 == r && s.tasks[v as usize].parent == Some(u))
            })
            .map(|&(_, u)| u)
            .collect(),
        _ => Vec::new(),
    };
    forgot_done.sort_unstable();
    let cond = matches!(wait, Wait::Notify(r) if s.resources[r as usize].class == Some(crate::sync::COND_CLASS));
    // A send blocked on a buffered channel: its buffer is full.
    let full = match wait {
        Wait::Send(r) => s.resources[r as usize].capacity.filter(|&c| c > 0),
        _ => None,
    };
    // Itself the one left: "no task left" would leave out the waiter.
    let only_itself = only_itself && released.is_empty() && !undeclared;
    BlockedTask {
        only_itself,
        full,
        cond,
        counter,
        forgot_done_names: forgot_done.iter().map(|&u| s.tasks[u as usize].name.to_string()).collect(),
        forgot_done,
        closers_only,
        closing,
        returned,
        undeclared,
        task: t,
        name: task.name.to_string(),
        op: wait.op().to_string(),
        waits_for,
        resource,
        kind,
        released_by: released.iter().map(|&u| s.tasks[u as usize].name.to_string()).collect(),
        released_by_ids: released,
        stack: task.frames.iter().rev().map(|&f| FrameInfo::from(f)).collect(),
        holds: holds_of(s, t),
    }
}

/// Locks and monitors held by `t`, in resource order.
pub(crate) fn holds_of(s: &State, t: TaskId) -> Vec<Held> {
    let mut out = Vec::new();
    let frames = &s.tasks[t as usize].frames;
    // The frame that took `h`, while it is on the stack (`Hold::depth`; 0
    // once it returned, or the hold was handed off). The name is checked
    // too, as a guard.
    let frame_of = |h: &Hold| {
        let d = h.depth as usize;
        let at = h.at?;
        (d >= 1 && frames.get(d - 1).is_some_and(|f| f.name == at.name)).then(|| frames.len() - d)
    };
    for res in s.resources.iter() {
        let mut push = |mode: &str, h: &Hold| {
            out.push(Held {
                resource: res.name.to_string(),
                kind: res.kind.as_str().to_string(),
                mode: mode.to_string(),
                at: h.at.map(FrameInfo::from),
                frame: frame_of(h),
            })
        };
        match &res.st {
            ResState::Mutex { holder: Some(h) } if h.task == t => push("", h),
            ResState::Monitor { owner: Some(h), .. } if h.task == t => push("", h),
            ResState::RwLock { writer, readers, .. } => {
                if let Some(h) = writer.filter(|h| h.task == t) {
                    push("write", &h);
                }
                for h in readers.iter().filter(|h| h.task == t) {
                    push("read", h);
                }
            }
            _ => {}
        }
    }
    out
}
