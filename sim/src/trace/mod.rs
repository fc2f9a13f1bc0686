//! Traces: every visible operation of one execution, for reports, charts and
//! exchange. The JSON format is documented in `traces/README.md`.
//!
//! ```
//! let run = sim::Sim::new(1).record(true).run(|| async {
//!     let m = sim::sync::Mutex::new("m");
//!     let g = m.lock().await;
//!     g.unlock().await;
//! });
//! let trace = run.trace.unwrap();
//! let json = trace.to_json();
//! assert_eq!(sim::trace::Trace::from_json(&json).unwrap().to_json(), json);
//! ```

mod json;
mod recorder;

pub use json::TraceError;
pub(crate) use recorder::Recorder;

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::outcome::Deadlock;

/// The value of the `format` field.
pub const FORMAT: &str = "deadsim-trace";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;

/// One execution, as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`] for traces this build writes.
    pub version: u32,
    pub meta: Meta,
    /// Tasks by id (spawn order).
    pub tasks: Vec<TaskInfo>,
    /// Resources by id (creation order).
    pub resources: Vec<ResourceInfo>,
    /// Frames by id (first use order); events refer to them by index.
    pub frames: Vec<FrameInfo>,
    pub events: Vec<Event>,
    /// The task the scheduler ran at each step: `schedule[i]` ran step `i + 1`.
    pub schedule: Vec<u32>,
    /// The deadlock report, when the run ended in one.
    pub deadlock: Option<Deadlock>,
}

/// What was run and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Model name (`abba`), or `custom` for a closure run through the library.
    pub model: String,
    /// Model parameters, every one with its value (defaults filled in,
    /// values as the model normalizes them: `--rounds 03` is `3`), in the
    /// model's order; empty for a run a model did not label.
    pub params: Vec<Param>,
    /// The seed the strategy drew from. A run that a schedule string fixed
    /// (strategy `replay`: a replayed schedule; `dfs`: `explore`'s failing
    /// one, 0 for both; `shrink`: the seed shrunk from, or 0) draws nothing
    /// from it: `replay` says what ran.
    pub seed: u64,
    /// `random`, `pct:D`, `replay`, `dfs` (`explore`'s failing schedule) or `shrink`, or the name of a strategy of the caller's own.
    pub strategy: String,
    /// One of [`crate::outcome::VERDICTS`]: `no-deadlock`, `deadlock`,
    /// `step-limit`, `invariant` or `panic` for a run that ended, `diverged`
    /// or `pruned` for one a replay or the exhaustive search stopped.
    pub verdict: String,
    /// One line describing the outcome.
    pub message: String,
    pub steps: u64,
    /// Virtual time at the end, in nanoseconds.
    pub time_ns: u64,
    /// Version of deadsim that wrote the trace.
    pub deadsim: String,
    /// The schedule string that replays this run (`deadsim replay --schedule`).
    pub replay: String,
}

/// One model parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub name: String,
    pub value: String,
}

/// A task (virtual thread, goroutine).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskInfo {
    pub id: u32,
    pub name: String,
    /// Background tasks (server loops) do not keep a run alive.
    pub background: bool,
    pub parent: Option<u32>,
}

/// A lock, monitor, channel or pipe.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceInfo {
    pub id: u32,
    pub name: String,
    /// `mutex`, `rwmutex`, `monitor`, `chan`, `pipe` or `atomic`.
    pub kind: String,
    /// Channel capacity in messages, pipe capacity in bytes.
    pub capacity: Option<u64>,
    /// Lock class (all `bufferQueue` monitors of `BufferManager` share one).
    pub class: Option<String>,
}

/// A frame of the virtual call stack.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameInfo {
    pub name: String,
    /// `file:line` of the real source, or "".
    pub site: String,
}

impl From<crate::Frame> for FrameInfo {
    fn from(f: crate::Frame) -> FrameInfo {
        FrameInfo { name: f.name.to_string(), site: f.site.to_string() }
    }
}

impl std::fmt::Display for FrameInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.site.is_empty() {
            write!(f, "{}", self.name)
        } else {
            write!(f, "{} ({})", self.name, self.site)
        }
    }
}

/// What an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `task` was spawned by `peer`.
    Spawn,
    /// `task` returned.
    Finish,
    Lock,
    Unlock,
    #[serde(rename = "rlock")]
    RLock,
    #[serde(rename = "runlock")]
    RUnlock,
    /// Monitor entry (`synchronized`), `amount` = entry count after it.
    Enter,
    /// Monitor exit, `amount` = entry count after it.
    Exit,
    /// `Object.wait()`: the monitor is released until a notify.
    Wait,
    Notify,
    NotifyAll,
    Send,
    Recv,
    Close,
    /// A `select` took case `amount` (the default case is the number of cases).
    Select,
    /// Pipe write of `amount` bytes (the bytes moved in this step), `buffered` after it.
    Write,
    /// Pipe read of `amount` bytes, `buffered` after it.
    Read,
    Sleep,
    /// The task could not go on: `op` on `resource`.
    Block,
    /// The task became ready again; `peer` is the task whose step woke it.
    Wake,
    /// A model invariant failed.
    Check,
    /// The task panicked.
    Panic,
    /// The deadlock was detected in this step.
    Deadlock,
    /// An atomic operation; `amount` is the value after it.
    Atomic,
    /// A model's state value changed: `op` names it, `amount` is the new
    /// value, `resource` the object it belongs to (see [`crate::note`]).
    Value,
}

impl EventKind {
    /// The kind as the JSON names it (`lock`, `rlock`, `notify_all`).
    ///
    /// ```
    /// use sim::trace::EventKind;
    /// assert_eq!(EventKind::NotifyAll.as_str(), "notify_all");
    /// assert_eq!(serde_json::to_value(EventKind::RLock).unwrap(), EventKind::RLock.as_str());
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Spawn => "spawn",
            EventKind::Finish => "finish",
            EventKind::Lock => "lock",
            EventKind::Unlock => "unlock",
            EventKind::RLock => "rlock",
            EventKind::RUnlock => "runlock",
            EventKind::Enter => "enter",
            EventKind::Exit => "exit",
            EventKind::Wait => "wait",
            EventKind::Notify => "notify",
            EventKind::NotifyAll => "notify_all",
            EventKind::Send => "send",
            EventKind::Recv => "recv",
            EventKind::Close => "close",
            EventKind::Select => "select",
            EventKind::Write => "write",
            EventKind::Read => "read",
            EventKind::Sleep => "sleep",
            EventKind::Block => "block",
            EventKind::Wake => "wake",
            EventKind::Check => "check",
            EventKind::Panic => "panic",
            EventKind::Deadlock => "deadlock",
            EventKind::Atomic => "atomic",
            EventKind::Value => "value",
        }
    }
}

/// One visible operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    pub step: u64,
    /// Virtual time in nanoseconds.
    pub time: u64,
    pub task: u32,
    pub kind: EventKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<u32>,
    /// Bytes (pipes), messages, entry counts, case index: see [`EventKind`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<u64>,
    /// Bytes buffered in the pipe after this event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffered: Option<u64>,
    /// Index into `frames` of the task's innermost frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<u32>,
    /// The other task involved (spawner, waker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<u32>,
    /// The operation a `block` event waits in (`lock`, `send`, `write`, ...),
    /// or the name of the value of a `value` event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<Cow<'static, str>>,
    /// For a `block` in a `select`: its cases, in the order the select lists
    /// them (a select waits on no one resource, so `resource` is empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<Case>,
}

impl Trace {
    /// Each task's name as reports and charts give it: with the task's id
    /// after it, `worker (task 2)`, where two tasks share the name.
    ///
    /// ```
    /// let mut t = sim::trace::Trace::from_json(&std::fs::read_to_string("../traces/abba-deadlock.json").unwrap()).unwrap();
    /// t.tasks[2].name = "T1".into();
    /// assert_eq!(t.task_labels(), ["main", "T1 (task 1)", "T1 (task 2)"]);
    /// ```
    pub fn task_labels(&self) -> Vec<String> {
        let shared = self.shared_names();
        self.tasks
            .iter()
            .map(
                |t| {
                    if shared.contains(&t.name.as_str()) {
                        format!("{} (task {})", t.name, t.id)
                    } else {
                        t.name.clone()
                    }
                },
            )
            .collect()
    }

    /// The task names two or more tasks have, sorted (a deadlock report's `shared`).
    pub fn shared_names(&self) -> Vec<&str> {
        let mut count: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
        for t in &self.tasks {
            *count.entry(t.name.as_str()).or_default() += 1;
        }
        count.into_iter().filter(|&(_, n)| n > 1).map(|(name, _)| name).collect()
    }

    /// A select's cases as reports name them: `send requests | recv done`.
    ///
    /// ```
    /// use sim::trace::{Case, CaseDir, Trace};
    /// let t = Trace::from_json(&std::fs::read_to_string("../traces/abba-deadlock.json").unwrap()).unwrap();
    /// let cases = [Case { resource: 0, dir: CaseDir::Recv }, Case { resource: 1, dir: CaseDir::Send }];
    /// assert_eq!(t.cases_label(&cases), "recv A | send B");
    /// ```
    pub fn cases_label(&self, cases: &[Case]) -> String {
        let names: Vec<String> =
            cases.iter().map(|c| format!("{} {}", c.dir.as_str(), self.resources[c.resource as usize].name)).collect();
        names.join(" | ")
    }

    /// One event as `deadsim replay` lists it: step, time, task (one of
    /// `labels`, from [`Trace::task_labels`]), the event's kind as the JSON
    /// names it, its operation or a select's cases, its resource, amount,
    /// and the frame it was made at.
    ///
    /// ```
    /// let t = sim::trace::Trace::from_json(&std::fs::read_to_string("../traces/abba-deadlock.json").unwrap()).unwrap();
    /// let labels = t.task_labels();
    /// let lock = t.events.iter().find(|e| e.kind == sim::trace::EventKind::Lock).unwrap();
    /// assert_eq!(
    ///     t.event_line(&labels, lock),
    ///     "step      4 t=      400ns  T2                   lock \"B\"  at abba::worker (sim/src/models/abba.rs:27)"
    /// );
    /// ```
    pub fn event_line(&self, labels: &[String], e: &Event) -> String {
        let task = &labels[e.task as usize];
        let res = e.resource.map(|r| format!(" \"{}\"", self.resources[r as usize].name)).unwrap_or_default();
        let amount = e.amount.map(|a| format!(" {a}")).unwrap_or_default();
        let mut op = e.op.as_ref().map(|o| format!(" {o}")).unwrap_or_default();
        if !e.cases.is_empty() {
            // As the deadlock report prints a select: `{send requests | recv done}`.
            op.push_str(&format!(" {{{}}}", self.cases_label(&e.cases)));
        }
        let frame = e.frame.map(|f| format!("  at {}", self.frames[f as usize])).unwrap_or_default();
        format!("step {:>6} t={:>9}ns  {task:<20} {}{op}{res}{amount}{frame}", e.step, e.time, e.kind.as_str())
    }
}

/// One case of a blocked `select`: a send on, or a receive from, a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub resource: u32,
    pub dir: CaseDir,
}

/// Which way a select case goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseDir {
    Send,
    Recv,
}

impl CaseDir {
    /// `send` or `recv`, as reports print a case.
    pub fn as_str(self) -> &'static str {
        match self {
            CaseDir::Send => "send",
            CaseDir::Recv => "recv",
        }
    }
}
