//! How an execution ends, and the deadlock report.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::trace::FrameInfo;

/// The end of one execution.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every foreground task returned.
    Completed,
    /// A set of tasks that can never be released.
    Deadlock(Box<Deadlock>),
    /// The run reached its step limit (a livelock, a limit set too low, or a
    /// deadlock no check could prove: see `blocked`).
    StepLimit {
        steps: u64,
        /// The tasks blocked at the limit, each as a deadlock report gives
        /// it (what it waits for, who could release it, its stack and locks).
        blocked: Vec<BlockedTask>,
        /// The tasks able to run at the limit, in task order: those that
        /// used up the steps (a busy loop, a ticker), or were left waiting
        /// to run (see [`RunningTask::started`]).
        /// (Boxed slices, here and below: an outcome is moved at the end of
        /// every run, and a wider one costs every run.)
        running: Box<[RunningTask]>,
        /// The task names two or more tasks of the run have, sorted (as
        /// [`Deadlock::shared`]): the report gives such a task's id.
        shared: Box<[String]>,
    },
    /// `sim::check` failed.
    Invariant { task: String, message: String, frames: Vec<FrameInfo> },
    /// A task panicked.
    Panic { task: String, message: String, frames: Vec<FrameInfo> },
    /// The strategy stopped the run: a replayed schedule diverged from the
    /// model, or an exhaustive search pruned a redundant run.
    Stopped { step: u64, halt: crate::scheduler::Halt },
}

/// A task able to run when a run stopped at its step limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunningTask {
    pub task: u32,
    pub name: String,
    /// False for a task spawned but never scheduled: a strategy that always
    /// picks others while they can run (PCT, beside tasks that never block)
    /// starves it, and whatever it would have done never happens.
    pub started: bool,
    /// Asleep (`sleep`, a timer), not runnable until its deadline.
    pub asleep: bool,
    /// For a task never scheduled, the step it was spawned in.
    pub spawned_at: u64,
}

/// The verdicts of a failure, as [`Outcome::verdict`] names them.
pub const FAILURE_VERDICTS: [&str; 4] = ["deadlock", "step-limit", "invariant", "panic"];

/// Every verdict [`Outcome::verdict`] gives: no failure, a failure, or a
/// run a replaying or exploring strategy stopped.
pub const VERDICTS: [&str; 7] = ["no-deadlock", "deadlock", "step-limit", "invariant", "panic", "diverged", "pruned"];

/// A verdict code (a trace's `meta.verdict`, a report's `verdict`) in the
/// words headlines and chart titles use: "invariant violation" for
/// `invariant`, "step limit" for `step-limit`, the others as they are.
///
/// ```
/// assert_eq!(sim::outcome::verdict_words("invariant"), "invariant violation");
/// assert_eq!(sim::outcome::verdict_words("deadlock"), "deadlock");
/// ```
pub fn verdict_words(code: &str) -> &str {
    match code {
        "invariant" => "invariant violation",
        "step-limit" => "step limit",
        other => other,
    }
}

/// What a step limit may mean under `strategy` (a trace's `meta.strategy`)
/// when that strategy need not be fair: PCT, which runs the
/// highest-priority task that can run, and an exhaustive search, which
/// tries the unfair schedules too. A task that never blocks (a loop around
/// a select with a default case, a busy wait, a ticker and its reader) can
/// then run alone until the limit, in a program Go's scheduler would end.
/// `None` for random search, which is fair in the long run.
///
/// ```
/// assert!(sim::outcome::unfair_limit_note("pct:3").unwrap().starts_with("PCT runs"));
/// assert_eq!(sim::outcome::unfair_limit_note("random"), None);
/// ```
pub fn unfair_limit_note(strategy: &str) -> Option<&'static str> {
    if strategy.starts_with("pct") {
        Some(
            "PCT runs the highest-priority task whenever it can: a task that never blocks (a loop that \
             locks a mutex to read a flag not declared with sim::observe, or that does not yield, a ticker and its \
             reader) may have run alone to the limit, where a fair \
             scheduler such as Go's would have let the others end it (a loop around a select with a default case, \
             an atomic operation, or a read such as len(ch) or ctx.Err() followed by a yield, yields as it spins, not \
             this). If random \
             search passes, that is the likely cause.",
        )
    } else if strategy == "dfs" {
        Some(
            "An exhaustive search tries unfair schedules too: in this one a task that never blocks (a loop \
             around a select with a default case, a busy wait, a ticker and its reader) may have run alone to \
             the limit, where a fair scheduler such as Go's would have let the others end it.",
        )
    } else {
        None
    }
}

impl Outcome {
    /// `no-deadlock`, a failure's (`deadlock`, `step-limit`, `invariant`,
    /// `panic`), or a stopped run's (`diverged`, `pruned`): see [`VERDICTS`].
    pub fn verdict(&self) -> &'static str {
        match self {
            Outcome::Completed => "no-deadlock",
            Outcome::Deadlock(_) => "deadlock",
            Outcome::StepLimit { .. } => "step-limit",
            Outcome::Invariant { .. } => "invariant",
            Outcome::Panic { .. } => "panic",
            Outcome::Stopped { halt: crate::scheduler::Halt::Diverged(_), .. } => "diverged",
            Outcome::Stopped { .. } => "pruned",
        }
    }

    /// The verdict as a report's headline words it: [`Outcome::verdict`]
    /// in words ("invariant violation", not the JSON's `invariant`).
    pub fn verdict_text(&self) -> &'static str {
        verdict_words(self.verdict())
    }

    /// True for a deadlock, a step limit, a broken invariant or a panic.
    pub fn is_failure(&self) -> bool {
        !matches!(self, Outcome::Completed | Outcome::Stopped { .. })
    }

    /// The deadlock report, if this is a deadlock.
    pub fn deadlock(&self) -> Option<&Deadlock> {
        match self {
            Outcome::Deadlock(d) => Some(d),
            _ => None,
        }
    }

    /// What happened, in a line, but for a panic's or an invariant's
    /// message, which keeps its own newlines (a trace's `meta.message` is
    /// the one-line form).
    pub fn summary(&self) -> String {
        match self {
            Outcome::Completed => "completed: every foreground task returned".to_string(),
            Outcome::Deadlock(d) => d.summary(),
            Outcome::StepLimit { steps, .. } => {
                format!("step limit: still running after {steps} step{}", if *steps == 1 { "" } else { "s" })
            }
            Outcome::Invariant { task, message, .. } => format!("invariant violated in \"{task}\": {message}"),
            Outcome::Panic { task, message, .. } => format!("panic in \"{task}\": {message}"),
            Outcome::Stopped { step, halt: crate::scheduler::Halt::Diverged(m) } => {
                format!("the schedule diverges from the model at step {step}: {m}")
            }
            Outcome::Stopped { step, .. } => format!("pruned at step {step} (a redundant schedule)"),
        }
    }
}

fn write_stack(f: &mut fmt::Formatter<'_>, frames: &[FrameInfo]) -> fmt::Result {
    if frames.is_empty() {
        writeln!(f, "    at <task body>")?;
    }
    for fr in frames {
        writeln!(f, "    at {fr}")?;
    }
    Ok(())
}

impl fmt::Display for Outcome {
    /// The full report: a thread dump for a deadlock, the message and stack otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Deadlock(d) => write!(f, "{d}"),
            Outcome::StepLimit { blocked, running, shared: names, .. } => {
                writeln!(f, "{}", self.summary())?;
                let mut shared = shared_among(blocked);
                shared.extend(names.iter().map(String::as_str));
                // Two tasks able to run may share a name too (a pool of `worker`s).
                let mut seen = BTreeSet::new();
                for r in running {
                    if !seen.insert(r.name.as_str()) {
                        shared.insert(r.name.as_str());
                    }
                }
                if !blocked.is_empty() {
                    writeln!(f)?;
                    writeln!(f, "Blocked at the limit:")?;
                    for b in blocked {
                        write_task(f, &[], blocked, b, &shared)?;
                    }
                }
                let names = |keep: &dyn Fn(&RunningTask) -> bool| -> Vec<String> {
                    running.iter().filter(|r| keep(r)).map(|r| who(&shared, &r.name, r.task)).collect()
                };
                let ran = names(&|r| r.started && !r.asleep);
                let asleep = names(&|r| r.started && r.asleep);
                // Starved: a task that could run from its spawn on, and never
                // did, did none of what the blocked ones wait for; the step
                // it was spawned in tells a long wait from a late spawn.
                let never: Vec<String> = running
                    .iter()
                    .filter(|r| !r.started)
                    .map(|r| format!("{} (spawned at step {})", who(&shared, &r.name, r.task), r.spawned_at))
                    .collect();
                if !ran.is_empty() || !asleep.is_empty() || !never.is_empty() {
                    writeln!(f)?;
                }
                if !ran.is_empty() {
                    writeln!(f, "Still running at the limit: {}", ran.join(", "))?;
                }
                if !asleep.is_empty() {
                    writeln!(f, "Asleep at the limit: {}", asleep.join(", "))?;
                }
                if !never.is_empty() {
                    writeln!(f, "Never scheduled, though able to run since spawned: {}", never.join(", "))?;
                }
                Ok(())
            }
            Outcome::Invariant { frames, .. } | Outcome::Panic { frames, .. } => {
                writeln!(f, "{}", self.summary())?;
                write_stack(f, frames)
            }
            _ => writeln!(f, "{}", self.summary()),
        }
    }
}

/// A deadlock: the cycle, with what each task waits for and holds, and the
/// tasks blocked behind it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deadlock {
    /// True when no task at all could run (the Go runtime's "all goroutines
    /// are asleep"); false when found while other tasks still ran.
    pub global: bool,
    /// Step at which the deadlock formed.
    pub step: u64,
    /// Virtual time in nanoseconds.
    pub time: u64,
    /// The tasks of the cycle, each waiting for the next one, starting at the
    /// task spawned first. Empty when the tasks blocked for good form no
    /// cycle (for example, a receive on a channel whose senders all returned
    /// without sending, and the tasks that wait for that receiver), global
    /// or partial.
    pub cycle: Vec<BlockedTask>,
    /// The other tasks blocked for good, in task order: those that wait on
    /// the cycle or, without a cycle, all of them (among them the ones dead
    /// by themselves, with no `released_by`).
    pub behind: Vec<BlockedTask>,
    /// Tasks still able to run when a partial deadlock was found, by name.
    pub running: Vec<String>,
    /// The same tasks by id, in the same order (names can be shared). Left
    /// out of a trace when empty; absent from traces written before deadsim
    /// kept it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub running_ids: Vec<u32>,
    /// Tasks blocked when a partial deadlock was found but not in it (a
    /// running task may yet release them: a loop waiting on a ticker that
    /// the deadlock leaves running for good; or parked in the background),
    /// by name, in task order. Left out of a trace when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<String>,
    /// The same tasks by id, in the same order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting_ids: Vec<u32>,
    /// The task names two or more tasks of the run have (a pool of
    /// `worker`s), sorted: the report gives such a task's id beside its
    /// name. Left out of a trace when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
    /// For each monitor a task of the report waits on in `wait()`, in
    /// resource order: its last notify, the end of the story of a lost
    /// wakeup. Left out of a trace when no task of the report waits so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notifies: Vec<LastNotify>,
}

/// The last notify of a monitor that tasks of a deadlock wait on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LastNotify {
    /// The monitor's name and resource id.
    pub monitor: String,
    pub resource: u32,
    /// Its last `notify()` or `notifyAll()`; none if nothing ever notified it.
    pub last: Option<Notify>,
}

/// One `notify()` or `notifyAll()`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Notify {
    /// `notify` or `notify_all`, as the trace's event kinds.
    pub op: String,
    pub step: u64,
    /// The notifying task, by id and name.
    pub task: u32,
    pub name: String,
    /// The frame it notified from.
    pub at: Option<FrameInfo>,
    /// The tasks it woke, by name and id, in the order it woke them: none
    /// when nobody waited (the notify was lost).
    pub woke: Vec<String>,
    pub woke_ids: Vec<u32>,
}

/// One blocked task in a deadlock report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockedTask {
    pub task: u32,
    pub name: String,
    /// The operation it is blocked in: `lock`, `rlock`, `send`, `recv`,
    /// `select`, `write`, `read`, `wait`, `join`.
    pub op: String,
    /// What it waits for: a resource name, the joined task's name, or for a
    /// select its cases (`recv calls | recv incoming`).
    pub waits_for: String,
    /// The resource id, when the wait is on one resource.
    pub resource: Option<u32>,
    /// The kind of that resource (`mutex`, `chan`, ...), or "" for a join or select.
    pub kind: String,
    /// The tasks that could release it (edges of the wait-for graph), by name.
    pub released_by: Vec<String>,
    /// The same tasks by id, in the same order: two tasks may share a name
    /// (a pool of `worker`s), and a reader of the trace must know which.
    /// Empty in a trace written before deadsim kept it.
    #[serde(default)]
    pub released_by_ids: Vec<u32>,
    /// The virtual call stack, innermost frame first.
    pub stack: Vec<FrameInfo>,
    /// Locks and monitors it holds, with the frame where each was taken.
    pub holds: Vec<Held>,
    /// A channel or pipe wait (a select: any of its cases) whose other
    /// end's holders the model never declared: `released_by` names only the
    /// tasks seen using that end so far, and a task that would use it later
    /// is not known. Left out of the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undeclared: bool,
    /// For a lock wait: those of `released_by_ids` that had returned still
    /// holding the lock (a Go mutex left locked on an error path), each with
    /// where it took it. Left out of the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub returned: Vec<ReturnedHolder>,
    /// For a channel or pipe wait: nobody is left on the other end, and
    /// `released_by` are tasks on the waiter's own side, which may only
    /// close the end (and so fail the wait). Left out of the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closers_only: bool,
    /// For a channel or pipe wait with no releaser: the waiter itself is
    /// the one task left that may serve it or close it (Go's `<-stopCh`
    /// before its own `defer close(stopCh)`), which it cannot while it
    /// waits. Left out of the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only_itself: bool,
    /// For a channel or pipe wait whose other end is still held: those of
    /// `released_by_ids` declared only to close the waiter's own side (a
    /// running `conn.Close()`). They end the wait by closing the end, which
    /// fails it; the others serve it. Left out of the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub closing: Vec<u32>,
    /// For a `wait` in a `WaitGroup` (a monitor of class `sync.WaitGroup`):
    /// its counter, which `Done` never brought to zero. Left out of the
    /// JSON for any other wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<u64>,
    /// For a `wait` in a `WaitGroup` whose declared callers of `Done` have
    /// all returned: those that returned without calling it on this
    /// WaitGroup in the run (ids, ascending), the Done forgotten on an
    /// error path. A declared task that spawned another declared one is
    /// taken for a spawner, which calls none, and is not named. Left out
    /// of the JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forgot_done: Vec<u32>,
    /// Their names, as [`BlockedTask::forgot_done`] lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forgot_done_names: Vec<String>,
    /// A `wait` in a Go `sync.Cond` (a monitor of class `sync.Cond`): a
    /// report says Wait, Signal and Broadcast. Left out of the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cond: bool,
    /// A `send` on a buffered channel: its capacity, every slot of which
    /// is taken (a report says "buffer full, 6 of 6"). Left out of the JSON
    /// for any other wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<u64>,
}

/// A task that returned holding the lock a blocked task waits for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReturnedHolder {
    pub task: u32,
    /// Where it took the lock, if the model named the frame.
    pub at: Option<FrameInfo>,
    /// It holds an RWMutex's read lock (Go's `RLock` without `RUnlock`).
    /// Left out of the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read: bool,
}

/// A lock held by a blocked task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Held {
    pub resource: String,
    pub kind: String,
    /// `read` for an RWMutex read lock, `write` for its write lock, else "".
    pub mode: String,
    pub at: Option<FrameInfo>,
    /// The frame of the task's `stack` (an index, innermost first) that
    /// took it, while that frame is still on the stack: where the report
    /// prints it, as jstack prints `- locked` under the frame that entered
    /// the monitor. `None` (absent) when it was taken with no frame, by a
    /// frame that has returned since, or handed off (`MutexGuard::hand_off`):
    /// the hold is printed after the stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<usize>,
}

impl Deadlock {
    /// The report's line on a monitor's last notify: lost (nobody waited),
    /// never made, or the tasks it woke, marking those waiting on it again.
    ///
    /// ```
    /// use sim::outcome::{Deadlock, LastNotify};
    /// let d = Deadlock {
    ///     global: true, step: 3, time: 300, cycle: vec![], behind: vec![], running: vec![],
    ///     running_ids: vec![], waiting: vec![], waiting_ids: vec![], shared: vec![], notifies: vec![],
    /// };
    /// let n = LastNotify { monitor: "inner".into(), resource: 1, last: None };
    /// assert_eq!(d.notify_line(&n), "Monitor \"inner\" was never notified.");
    /// ```
    pub fn notify_line(&self, n: &LastNotify) -> String {
        // A WaitGroup's only notify is the Done that brings it to zero.
        let waiters = || self.cycle.iter().chain(&self.behind).filter(|b| b.resource == Some(n.resource));
        let wait_group = waiters().any(|b| b.in_wait_group());
        // A Cond's notifies are its Signals and Broadcasts.
        let cond = waiters().any(|b| b.in_cond());
        let Some(last) = &n.last else {
            return if wait_group {
                format!("Done never brought WaitGroup \"{}\" to zero.", n.monitor)
            } else if cond {
                format!("Cond \"{}\" was never signalled.", n.monitor)
            } else {
                format!("Monitor \"{}\" was never notified.", n.monitor)
            };
        };
        let shared = self.shared_names();
        let call = match (last.op == "notify_all", cond) {
            (true, false) => "notifyAll()",
            (false, false) => "notify()",
            (true, true) => "Broadcast()",
            (false, true) => "Signal()",
        };
        let at = last.at.as_ref().map(|a| format!(" at {a}")).unwrap_or_default();
        let head = if wait_group {
            format!(
                "WaitGroup \"{}\" last reached zero at step {}, in Done by {}{at}",
                n.monitor,
                last.step,
                who(&shared, &last.name, last.task)
            )
        } else {
            format!(
                "Last notify of \"{}\": {call} at step {} by {}{at}",
                n.monitor,
                last.step,
                who(&shared, &last.name, last.task)
            )
        };
        if last.woke.is_empty() {
            // A WaitGroup at zero with nobody in Wait is the usual case: a
            // later Wait returns at once. Nothing was lost.
            return if wait_group {
                format!("{head}, with no task in Wait then")
            } else {
                format!("{head}, with no task waiting: it was lost")
            };
        }
        let waiting_again = |id: u32| {
            self.cycle
                .iter()
                .chain(&self.behind)
                .any(|b| b.task == id && b.op == "wait" && b.resource == Some(n.resource))
        };
        let woke: Vec<String> = last
            .woke
            .iter()
            .zip(&last.woke_ids)
            .map(|(name, &id)| {
                let again = if waiting_again(id) { " (waiting again)" } else { "" };
                format!("{}{again}", who(&shared, name, id))
            })
            .collect();
        format!("{head}, which woke {}", woke.join(", "))
    }

    /// The monitors the report's tasks wait on in `wait()`, ascending, each
    /// once: the ones [`Deadlock::notifies`] gives the last notify of.
    pub fn monitors_waited_in(&self) -> Vec<u32> {
        let mut monitors: Vec<u32> =
            self.cycle.iter().chain(&self.behind).filter(|b| b.op == "wait").filter_map(|b| b.resource).collect();
        monitors.sort_unstable();
        monitors.dedup();
        monitors
    }

    /// One line: who is in the cycle and what they wait for.
    pub fn summary(&self) -> String {
        let scope = if self.global { "global" } else { "partial" };
        if self.cycle.is_empty() {
            let shared = self.shared_names();
            let names: Vec<String> = self
                .behind
                .iter()
                .map(|b| {
                    if shared.contains(b.name.as_str()) {
                        format!("{} (task {})", b.name, b.task)
                    } else {
                        b.name.clone()
                    }
                })
                .collect();
            let what = if self.global { self.all_blocked() } else { "blocked for good" };
            return format!("deadlock ({scope}): {what}: {}", names.join(", "));
        }
        let shared = self.shared_names();
        let parts: Vec<String> = self
            .cycle
            .iter()
            .map(|b| format!("{} {} {}", who(&shared, &b.name, b.task), b.phrase(), b.target_among(&shared)))
            .collect();
        format!("deadlock ({scope}, {} in the cycle): {}", tasks(self.cycle.len()), parts.join(" -> "))
    }

    /// A global deadlock without a cycle: "every task is blocked", unless
    /// one task is left (the others returned), which that would overstate.
    fn all_blocked(&self) -> &'static str {
        if self.behind.len() == 1 {
            "the one task left is blocked"
        } else {
            "every task is blocked"
        }
    }

    /// The task names more than one task has (a pool of `worker`s): a
    /// report names those with their ids too, so that "held by" says which.
    /// [`Deadlock::shared`], and (for a report read from a trace written
    /// before it was kept) the names the report itself gives two tasks.
    pub fn shared_names(&self) -> BTreeSet<&str> {
        let mut shared = shared_among(self.cycle.iter().chain(&self.behind));
        shared.extend(self.shared.iter().map(String::as_str));
        shared
    }
}

/// The names that entries (or their releasers) give two different tasks.
fn shared_among<'a>(entries: impl IntoIterator<Item = &'a BlockedTask>) -> BTreeSet<&'a str> {
    let mut first: BTreeMap<&str, u32> = BTreeMap::new();
    let mut shared = BTreeSet::new();
    for b in entries {
        for (name, id) in
            std::iter::once((&b.name, b.task)).chain(b.released_by.iter().zip(b.released_by_ids.iter().copied()))
        {
            if *first.entry(name).or_insert(id) != id {
                shared.insert(name.as_str());
            }
        }
    }
    shared
}

/// "1 task", "2 tasks".
fn tasks(n: usize) -> String {
    if n == 1 {
        "1 task".to_string()
    } else {
        format!("{n} tasks")
    }
}

/// A task as a report names it: quoted, and with its id when its name is shared.
fn who(shared: &BTreeSet<&str>, name: &str, id: u32) -> String {
    if shared.contains(name) {
        format!("\"{name}\" (task {id})")
    } else {
        format!("\"{name}\"")
    }
}

impl BlockedTask {
    /// True for a `Wait` on a `WaitGroup` (see [`BlockedTask::counter`]).
    pub fn in_wait_group(&self) -> bool {
        self.op == "wait" && self.counter.is_some()
    }

    /// True for a `Wait` on a `Cond` (see [`BlockedTask::cond`]).
    pub fn in_cond(&self) -> bool {
        self.op == "wait" && self.cond
    }

    /// The call that declares a task that will serve this wait, in that
    /// task: for a receive, `declare_sender()`; for a WaitGroup's Wait,
    /// `declare_done()`; and so on.
    pub fn declaration(&self) -> &'static str {
        if self.in_wait_group() {
            return "declare_done()";
        }
        if self.in_cond() {
            return "declare_signaler()";
        }
        match self.op.as_str() {
            "wait" => "declare_notifier()",
            "send" => "declare_receiver()",
            "recv" => "declare_sender()",
            "write" => "declare_reader()",
            "read" => "declare_writer()",
            _ => "declare_sender() or declare_receiver()",
        }
    }

    /// True for a wait the report calls dead because no other task is left
    /// that may serve it ("no task left that may send on it or close it",
    /// "only these may still close it", "which only these may close"): beside
    /// tasks still running, that rests on the model's declarations (of an
    /// end's holders, a WaitGroup's callers of Done, a monitor's notifiers),
    /// which hold only if they name every task that will.
    pub fn dead_as_declared(&self) -> bool {
        // "which only these may close": every releaser left is a closer.
        let only_closers = !self.closing.is_empty() && self.released_by_ids.iter().all(|id| self.closing.contains(id));
        (self.released_by.is_empty() || self.closers_only || only_closers)
            && !self.undeclared
            // "No task but itself": a runtime task still running (a
            // ticker's) would make the note noise, and the waiter is the
            // declared one.
            && !self.only_itself
            && (dead_by_itself(&self.op).is_some() || self.in_wait_group() || self.in_cond())
    }

    /// For a lock wait on the monitor a `WaitGroup` or `Cond` is built on
    /// (a step limit can cut a `Done` or `Signal` while another task is
    /// inside it): the type and the method it is in, from its innermost
    /// frame (`sync.(*WaitGroup).Done`).
    pub fn internal_lock(&self) -> Option<(&str, &str)> {
        if self.op != "lock" || self.kind != "monitor" {
            return None;
        }
        let inner = self.stack.first()?.name.strip_prefix("sync.(*")?;
        let (ty, method) = inner.split_once(").")?;
        matches!(ty, "WaitGroup" | "Cond").then_some((ty, method))
    }

    /// How a report says what it is doing: "waiting to lock", "waiting in
    /// Wait on" (a WaitGroup or Cond), ...
    pub fn phrase(&self) -> &'static str {
        if self.in_wait_group() || self.in_cond() {
            "waiting in Wait on"
        } else {
            op_phrase(&self.op)
        }
    }

    /// What it waits for, quoted as reports print it.
    pub fn target(&self) -> String {
        self.target_among(&BTreeSet::new())
    }

    /// [`BlockedTask::target`], with the joined task's id when its name is
    /// one of `shared` (see [`Deadlock::shared_names`]).
    fn target_among(&self, shared: &BTreeSet<&str>) -> String {
        match (self.op.as_str(), self.released_by_ids.as_slice()) {
            ("select", _) => format!("{{{}}}", self.waits_for),
            ("join", &[id]) => who(shared, &self.waits_for, id),
            _ => format!("\"{}\"", self.waits_for),
        }
    }

    /// Who could release it, as a report names them.
    fn releasers(&self, shared: &BTreeSet<&str>) -> Vec<String> {
        if self.released_by_ids.len() == self.released_by.len() {
            self.released_by.iter().zip(&self.released_by_ids).map(|(n, &id)| who(shared, n, id)).collect()
        } else {
            // A trace from before the ids were kept.
            self.released_by.iter().map(|n| format!("\"{n}\"")).collect()
        }
    }
}

/// What nobody is left to do, for a wait of `op` with no releaser (a
/// join's task has always finished or is in the report).
pub(crate) fn dead_by_itself(op: &str) -> Option<&'static str> {
    Some(match op {
        "wait" => "notify it",
        "send" => "receive from it or close it",
        "recv" => "send on it or close it",
        "write" => "read from it or close it",
        "read" => "write to it or close it",
        "select" => "serve any of its cases",
        _ => return None,
    })
}

/// Why a report cannot name who serves a wait on an undeclared end.
fn undeclared_note(op: &str) -> &'static str {
    match op {
        "send" => "its receivers are not declared",
        "recv" => "its senders are not declared",
        "write" => "its readers are not declared",
        "read" => "its writers are not declared",
        _ => "not every case's other end has its holders declared",
    }
}

fn op_phrase(op: &str) -> &'static str {
    match op {
        "lock" => "waiting to lock",
        "rlock" => "waiting to read-lock",
        "send" => "waiting to send on",
        "recv" => "waiting to receive from",
        "select" => "waiting in select on",
        "write" => "waiting to write to",
        "read" => "waiting to read from",
        "wait" => "waiting for a notify on",
        "join" => "waiting for",
        _ => "waiting on",
    }
}

/// One task of a report; `cycle` and `behind` are the report's entries (an
/// RWMutex waiter's releasers are looked up among them).
fn write_task(
    f: &mut fmt::Formatter<'_>,
    cycle: &[BlockedTask],
    behind: &[BlockedTask],
    b: &BlockedTask,
    shared: &BTreeSet<&str>,
) -> fmt::Result {
    // A WaitGroup is a monitor inside; a report speaks of it as Go does.
    let wait_group = b.in_wait_group();
    let kind = match b.kind.as_str() {
        _ if wait_group => "WaitGroup ".to_string(),
        _ if b.in_cond() => "Cond ".to_string(),
        "" => String::new(),
        k => format!("{k} "),
    };
    if let Some((ty, method)) = b.internal_lock() {
        // The monitor a WaitGroup or Cond is built on, which Go's atomics
        // and runtime locks stand for: not a lock of the model's.
        write!(
            f,
            "\"{}\" (task {}): in {method} on {ty} {}, waiting for the lock deadsim keeps its state under",
            b.name,
            b.task,
            b.target_among(shared)
        )?;
    } else {
        write!(f, "\"{}\" (task {}): {} {}{}", b.name, b.task, b.phrase(), kind, b.target_among(shared))?;
    }
    if let (Some(n), true) = (b.counter, wait_group) {
        write!(f, " (counter {n})")?;
    }
    if let (Some(n), "send") = (b.full, b.op.as_str()) {
        write!(f, " (buffer full, {n} of {n})")?;
    }
    if !b.released_by.is_empty() {
        let who = b.releasers(shared);
        // An RWMutex waiter can be held up by a writer that does not hold
        // it yet, but waits for the readers to leave (Go's RWMutex lets no
        // reader in past a waiting writer): that one is queued, not holding.
        let queued = b.kind == "rwmutex"
            && b.released_by_ids.iter().all(|&id| {
                let entry = cycle.iter().chain(behind).find(|x| x.task == id);
                entry.is_some_and(|x| {
                    x.op == "lock" && x.resource == b.resource && !x.holds.iter().any(|h| h.resource == b.waits_for)
                })
            });
        let verb = match b.op.as_str() {
            "lock" | "rlock" if queued && !b.released_by_ids.is_empty() => "behind the writer waiting for it:",
            "lock" | "rlock" => "held by",
            "wait" if wait_group => "which any of these could call Done on:",
            "wait" if b.in_cond() => "which any of these could signal:",
            "wait" => "which any of these could notify:",
            "join" => "",
            _ => "which only these could serve:",
        };
        if !b.returned.is_empty() {
            // A holder that returned is in no entry of the report: say so,
            // and where it locked, or the report points at a task it never
            // shows.
            let names: Vec<String> =
                b.returned
                    .iter()
                    .map(|r| {
                        let name = b.released_by_ids.iter().position(|&id| id == r.task).map_or_else(
                            || format!("task {}", r.task),
                            |i| self::who(shared, &b.released_by[i], r.task),
                        );
                        // A Java monitor is exited, not unlocked.
                        let (undo, did) = if b.kind == "monitor" {
                            ("exiting", "entered")
                        } else if r.read {
                            ("read-unlocking", "read-locked")
                        } else {
                            ("unlocking", "locked")
                        };
                        match &r.at {
                            Some(at) => format!("{name} returned without {undo} it, {did} at {at}"),
                            None => format!("{name} returned without {undo} it"),
                        }
                    })
                    .collect();
            write!(f, ", {verb} {} ({})", who.join(", "), names.join("; "))?;
        } else if b.closers_only {
            write!(f, ", and no task left to serve it; only these may still close it: {}", who.join(", "))?;
        } else if b.undeclared {
            // Only those seen on the other end so far: not "only these".
            write!(f, ", which these live tasks have used so far: {} ({})", who.join(", "), undeclared_note(&b.op))?;
        } else if !b.closing.is_empty() && !verb.is_empty() {
            // A closer ends the wait by failing it: not one who serves it.
            let (close, serve): (Vec<_>, Vec<_>) =
                b.released_by_ids.iter().zip(&who).partition(|(id, _)| b.closing.contains(id));
            let names = |v: Vec<(&u32, &String)>| v.into_iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>().join(", ");
            if serve.is_empty() {
                write!(f, ", which only these may close: {}", names(close))?;
            } else {
                write!(f, ", {verb} {}; or close it: {}", names(serve), names(close))?;
            }
        } else if !verb.is_empty() {
            write!(f, ", {verb} {}", who.join(", "))?;
        }
    } else if let (Some(what), true) = (dead_by_itself(&b.op), b.undeclared) {
        // Nobody used the other end yet, which says nothing of who will:
        // not "no task left".
        write!(f, ", which no live task has used so far ({}; a task may yet {what})", undeclared_note(&b.op))?;
    } else if wait_group {
        // Every task declared to call Done (or every other task) returned.
        write!(f, ", and no task left that may call Done on it")?;
        if !b.forgot_done.is_empty() {
            let names: Vec<String> =
                b.forgot_done.iter().zip(&b.forgot_done_names).map(|(&id, n)| self::who(shared, n, id)).collect();
            write!(f, " ({} returned without calling it)", names.join(", "))?;
        }
    } else if b.in_cond() {
        write!(f, ", and no task left that may signal it")?;
    } else if let (Some(what), true) = (dead_by_itself(&b.op), b.only_itself) {
        // Not "no task left": the waiter is left, and is the one.
        write!(f, ", and no task but itself may {what}, which it cannot while it waits")?;
    } else if let Some(what) = dead_by_itself(&b.op) {
        // Dead by itself: every task that may notify it (every live task,
        // or the notifiers the model declared), or every declared holder of
        // the channel's or pipe's other end, is gone. That holds only if the
        // model declared every task that will notify or use the end, or
        // spawn one that does.
        write!(f, ", and no task left that may {what}")?;
    }
    writeln!(f)?;
    write_stack_holding(f, &b.stack, &b.holds)
}

/// A blocked task's stack with the locks it holds, each under the frame
/// that took it (as jstack prints `- locked`), or after the stack when
/// that frame has returned.
fn write_stack_holding(f: &mut fmt::Formatter<'_>, stack: &[FrameInfo], holds: &[Held]) -> fmt::Result {
    let write_held = |f: &mut fmt::Formatter<'_>, h: &Held| {
        let mode = if h.mode.is_empty() { String::new() } else { format!(" ({})", h.mode) };
        match &h.at {
            Some(at) => writeln!(f, "    - locked {} \"{}\"{} at {}", h.kind, h.resource, mode, at),
            None => writeln!(f, "    - locked {} \"{}\"{}", h.kind, h.resource, mode),
        }
    };
    if stack.is_empty() {
        writeln!(f, "    at <task body>")?;
    }
    for (i, fr) in stack.iter().enumerate() {
        writeln!(f, "    at {fr}")?;
        for h in holds.iter().filter(|h| h.frame == Some(i)) {
            write_held(f, h)?;
        }
    }
    for h in holds.iter().filter(|h| h.frame.is_none_or(|i| i >= stack.len())) {
        write_held(f, h)?;
    }
    Ok(())
}

impl fmt::Display for Deadlock {
    /// A report in the spirit of a Java thread dump's "Found one Java-level deadlock".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scope = if self.global {
            "no task can run".to_string()
        } else {
            format!(
                "partial: {} other {} still running",
                self.running.len(),
                if self.running.len() == 1 { "task" } else { "tasks" }
            )
        };
        if self.cycle.is_empty() {
            let what = if self.global {
                self.all_blocked().to_string()
            } else {
                format!("{} blocked for good, in no cycle", tasks(self.behind.len()))
            };
            writeln!(f, "Found a deadlock ({scope}) at step {}, t={}ns: {what}", self.step, self.time)?;
        } else {
            writeln!(
                f,
                "Found a deadlock ({scope}) at step {}, t={}ns: {} in a wait-for cycle",
                self.step,
                self.time,
                tasks(self.cycle.len())
            )?;
        }
        writeln!(f)?;
        let shared = self.shared_names();
        for b in &self.cycle {
            write_task(f, &self.cycle, &self.behind, b, &shared)?;
        }
        if !self.behind.is_empty() {
            // With no cycle, these are the blocked tasks the headline means.
            if !self.cycle.is_empty() {
                writeln!(f)?;
                writeln!(f, "Blocked behind the cycle:")?;
            }
            for b in &self.behind {
                write_task(f, &self.cycle, &self.behind, b, &shared)?;
            }
        }
        if !self.notifies.is_empty() {
            writeln!(f)?;
            for n in &self.notifies {
                writeln!(f, "{}", self.notify_line(n))?;
            }
        }
        // Names with the ids kept beside them (a trace from before the ids
        // were kept has none).
        let named = |names: &[String], ids: &[u32]| -> String {
            let names: Vec<String> = if ids.len() == names.len() {
                names.iter().zip(ids).map(|(n, &id)| who(&shared, n, id)).collect()
            } else {
                names.iter().map(|n| format!("\"{n}\"")).collect()
            };
            names.join(", ")
        };
        if !self.running.is_empty() {
            // As a thread dump lists the threads that are not stuck.
            writeln!(f)?;
            writeln!(f, "Still running: {}", named(&self.running, &self.running_ids))?;
        }
        if !self.waiting.is_empty() {
            // Not stuck for good, but not running either: a thread dump
            // names them too (a leaked loop on a ticker is one).
            writeln!(f, "Blocked too, outside the deadlock: {}", named(&self.waiting, &self.waiting_ids))?;
        }
        if !self.running.is_empty() {
            // "No task left" with tasks still running rests on the model's
            // declarations; a task left out of them (a spawner that starts a
            // sender later) makes the report wrong, so say what it rests on.
            let mut calls: Vec<&str> = Vec::new();
            for call in self.cycle.iter().chain(&self.behind).filter(|b| b.dead_as_declared()).map(|b| b.declaration())
            {
                if !calls.contains(&call) {
                    calls.push(call);
                }
            }
            if !calls.is_empty() {
                writeln!(
                    f,
                    "(\"No task left\" rests on the model's declarations: a task still running that will serve such \
                     a wait, or start one that does, must be declared as well: {} in that task, or the _for(id) form \
                     where there is one.)",
                    calls.join(", ")
                )?;
            }
        }
        Ok(())
    }
}
