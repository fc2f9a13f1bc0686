//! The lock-order graph: "took B while holding A", across runs, and the
//! potential deadlocks it shows even when no run deadlocked (as lockdep,
//! TSan and go-deadlock report them).
//!
//! Every request for a mutex, RWMutex or monitor while the task holds
//! other locks (taken, or waited for: lockdep records the dependency before
//! the lock is granted) adds an edge from each held lock to the new one,
//! with both sites. A reentrant re-entry of a held monitor adds nothing. A cycle among
//! lock instances is a possible circular locking dependency; so is a cycle
//! among lock classes (all `bufferQueue` monitors of `BufferManager` are one
//! class), which catches two classes taken in both orders by different
//! instances. A read lock of an RWMutex waits only behind a writer: an
//! edge into one closes a cycle only if some run asked to write-lock that
//! RWMutex. Nesting two
//! instances of one lock class is reported apart, as information (lockdep
//! asks for a nesting annotation there). Channel and pipe waits are not
//! locks: a lock held while blocked in a channel send or a pipe write is
//! reported as information only, and so is one held in a monitor's
//! `wait()` besides the monitor itself (Java's nested monitor lockout).
//!
//! ```
//! let m = sim::models::find("abba").unwrap().configure(&[]).unwrap();
//! let mut graph = sim::lockorder::LockOrder::default();
//! for seed in 0..50 {
//!     graph.merge(&m.run(seed, false).lock_order);
//! }
//! let w = graph.warnings();
//! assert!(w.iter().any(|w| w.kind == sim::lockorder::WarningKind::CircularDependency));
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::frame::Frame;

/// "`task` took `to` at `to_at` while holding `from`, taken at `from_at`".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderEdge {
    pub from: Cow<'static, str>,
    pub to: Cow<'static, str>,
    pub class_from: Option<&'static str>,
    pub class_to: Option<&'static str>,
    pub from_at: Option<Frame>,
    pub to_at: Option<Frame>,
    pub task: Cow<'static, str>,
    /// The same lock (one object, not one name) read-locked again while
    /// held for reading: recursive read locking.
    pub recursive: bool,
    /// `from` is an RWMutex held for reading.
    pub from_read: bool,
    /// `to` is an RWMutex taken (or asked for) for reading: that waits
    /// only while a writer holds or waits for it, so with no writer in the
    /// runs the edge is no wait and closes no cycle.
    pub read: bool,
}

/// "`task` asked to write-lock RWMutex `lock` at `at`": with such a writer,
/// a read lock of it may wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteLocked {
    pub lock: Cow<'static, str>,
    pub class: Option<&'static str>,
    pub at: Option<Frame>,
    pub task: Cow<'static, str>,
}

/// "`task` blocked in `op` on `resource` (at `op_at`) while holding `lock`".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldAcross {
    pub lock: Cow<'static, str>,
    pub lock_at: Option<Frame>,
    pub op: &'static str,
    pub resource: Cow<'static, str>,
    pub op_at: Option<Frame>,
    pub task: Cow<'static, str>,
}

/// The lock-order facts of one run or of many (merged).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockOrder {
    /// One edge per (from, to), the first seen.
    pub edges: Vec<OrderEdge>,
    /// One entry per (lock, resource), the first seen.
    pub held_across: Vec<HeldAcross>,
    /// One entry per RWMutex a task asked to write-lock, the first seen.
    pub written: Vec<WriteLocked>,
}

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WarningKind {
    /// A cycle among lock instances: a potential deadlock.
    CircularDependency,
    /// A cycle among lock classes (two classes taken in both orders, by any
    /// instances): a potential deadlock that instance edges alone may not show.
    ClassCircularDependency,
    /// Two instances of one lock class nested (information).
    SameClassNesting,
    /// A lock held while blocked in a channel send, a pipe write or another
    /// monitor's `wait()` (information).
    HeldAcrossBlocking,
    /// A lock taken while holding another, where the one taken is held
    /// across a blocking send or write: whoever holds the first waits behind
    /// that send or write too (information).
    ChainIntoBlocking,
    /// An RWMutex read-locked again by a task that holds it for reading: a
    /// writer that comes in between holds off the second read lock, and
    /// waits for the first (Go's RWMutex forbids it).
    RecursiveReadLock,
}

impl WarningKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WarningKind::CircularDependency => "circular-locking-dependency",
            WarningKind::ClassCircularDependency => "circular-class-dependency",
            WarningKind::SameClassNesting => "same-class-nesting",
            WarningKind::HeldAcrossBlocking => "lock-held-across-blocking-operation",
            WarningKind::ChainIntoBlocking => "lock-chain-into-blocking-operation",
            WarningKind::RecursiveReadLock => "recursive-read-lock",
        }
    }
}

/// One warning: a one-line summary and a lockdep-style report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    pub kind: WarningKind,
    pub summary: String,
    pub report: String,
}

fn at(f: &Option<Frame>) -> String {
    match f {
        Some(f) => format!("{f}"),
        None => "<task body>".to_string(),
    }
}

impl LockOrder {
    /// Adds another run's facts (first-seen sites are kept).
    pub fn merge(&mut self, other: &LockOrder) {
        for e in &other.edges {
            if !self.edges.iter().any(|x| x.from == e.from && x.to == e.to) {
                self.edges.push(e.clone());
            }
        }
        for h in &other.held_across {
            if !self.held_across.iter().any(|x| x.lock == h.lock && x.resource == h.resource) {
                self.held_across.push(h.clone());
            }
        }
        for w in &other.written {
            if !self.written.iter().any(|x| x.lock == w.lock) {
                self.written.push(w.clone());
            }
        }
    }

    /// True if the runs showed no fact (a write lock alone is one: it
    /// makes another run's read lock a wait).
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty() && self.held_across.is_empty() && self.written.is_empty()
    }

    /// The write lock asked for on `lock`, if any task asked for one.
    fn writer(&self, lock: &str) -> Option<&WriteLocked> {
        self.written.iter().find(|w| w.lock == lock)
    }

    /// True if taking `e.to` may wait: any lock but a read lock of an
    /// RWMutex that no task asked to write-lock.
    fn waits(&self, e: &OrderEdge) -> bool {
        !e.read || self.writer(&e.to).is_some()
    }

    /// [`LockOrder::waits`] among lock classes: a read lock of a class
    /// may wait if a task asked to write-lock any lock of that class (a
    /// class cycle takes its locks for one another).
    fn class_waits(&self, e: &OrderEdge) -> bool {
        !e.read
            || match e.class_to {
                Some(c) => self.written.iter().any(|w| w.class == Some(c)),
                None => self.writer(&e.to).is_some(),
            }
    }

    /// Every distinct warning, potential deadlocks first, in a fixed order.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut out = Vec::new();
        // Cycles among instances: each strongly connected component once.
        let mut adj: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        // An edge from a name to itself is apart: a read lock taken again
        // (below), or two locks of one name nested (with the class nesting).
        // A read lock of an RWMutex nobody writes never waits: no edge.
        for e in self.edges.iter().filter(|e| e.from != e.to && self.waits(e)) {
            adj.entry(&e.from).or_default().insert(&e.to);
            adj.entry(&e.to).or_default();
        }
        let mut reported: BTreeSet<BTreeSet<&str>> = BTreeSet::new();
        for &start in adj.keys() {
            if let Some(cycle) = shortest_cycle(&adj, start) {
                let set: BTreeSet<&str> = cycle.iter().copied().collect();
                if reported.insert(set) {
                    out.push(self.circular(&cycle));
                }
            }
        }
        for e in self.edges.iter().filter(|e| e.recursive) {
            // The columns: the task seen read-locking twice, and the task
            // seen asking to write-lock it (if another), else any writer.
            let w = e.task.chars().count().max(6) + 4;
            let writer = self.writer(&e.to).map(|x| x.task.as_ref()).filter(|&x| x != e.task).unwrap_or("a writer");
            out.push(Warning {
                kind: WarningKind::RecursiveReadLock,
                summary: format!("possible recursive locking: \"{}\" read-locked again while held for reading", e.to),
                report: format!(
                    "WARNING: possible recursive locking detected\n\
                     \"{task}\" is trying to acquire lock \"{lock}\" (read) at {}\n\
                     but task is already holding lock \"{lock}\" (read), taken at {}\n\n \
                     Possible unsafe locking scenario:\n\n       \
                     {t0:<w$}{writer}\n       {:<w$}----\n  rlock({lock});\n       {:<w$}lock({lock});\n  rlock({lock});\n\n \
                     *** DEADLOCK ***\n\n\
                     (a Go RWMutex's Lock, waiting for the readers to leave, holds off new readers: \
                     the second read lock waits for the writer, which waits for the first)\n{}",
                    at(&e.to_at),
                    at(&e.from_at),
                    "----",
                    "",
                    self.writer_line(&e.to),
                    task = e.task,
                    lock = e.to,
                    t0 = e.task,
                ),
            });
        }
        // Cycles among classes (a lock without a class is its own class),
        // other than the instance cycles already reported.
        let class_of =
            |name: &str, class: Option<&'static str>| class.map(str::to_string).unwrap_or_else(|| name.to_string());
        let mut cadj: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for e in self.edges.iter().filter(|e| self.class_waits(e)) {
            let (a, b) = (class_of(&e.from, e.class_from), class_of(&e.to, e.class_to));
            cadj.entry(b.clone()).or_default();
            if a != b {
                cadj.entry(a).or_default().insert(b);
            }
        }
        let cadj_ref: BTreeMap<&str, BTreeSet<&str>> =
            cadj.iter().map(|(k, v)| (k.as_str(), v.iter().map(|x| x.as_str()).collect())).collect();
        let mut reported_classes: BTreeSet<BTreeSet<&str>> = BTreeSet::new();
        for &start in cadj_ref.keys() {
            if let Some(cycle) = shortest_cycle(&cadj_ref, start) {
                let set: BTreeSet<&str> = cycle.iter().copied().collect();
                if reported.contains(&set) || !reported_classes.insert(set) {
                    continue;
                }
                let names: Vec<String> = cycle.iter().map(|c| c.to_string()).collect();
                let mut report = String::from(
                    "WARNING: possible circular locking dependency between lock classes
",
                );
                for w in cycle.windows(2).chain(std::iter::once([cycle[cycle.len() - 1], cycle[0]].as_slice())) {
                    if let Some(e) = self.edges.iter().find(|e| {
                        self.class_waits(e)
                            && class_of(&e.from, e.class_from) == w[0]
                            && class_of(&e.to, e.class_to) == w[1]
                    }) {
                        report.push_str(&format!(
                            "-> {} then {}: \"{}\" took \"{}\"{} at {} while holding \"{}\"{}, taken at {}\n",
                            w[0],
                            w[1],
                            e.task,
                            e.to,
                            if e.read { " (read)" } else { "" },
                            at(&e.to_at),
                            e.from,
                            if e.from_read { " (read)" } else { "" },
                            at(&e.from_at)
                        ));
                    }
                }
                out.push(Warning {
                    kind: WarningKind::ClassCircularDependency,
                    summary: format!(
                        "possible circular dependency between lock classes: {} -> {}",
                        names.join(" -> "),
                        names[0]
                    ),
                    report,
                });
            }
        }
        let mut seen_class = BTreeSet::new();
        for e in &self.edges {
            // Two locks of one name and no class are one class by name
            // (`transfer(a, b)` over two "account" mutexes).
            let by_name = (e.from == e.to && e.class_from.is_none() && e.class_to.is_none()).then_some(e.from.as_ref());
            if let Some((a, b)) = by_name.map(|n| (n, n)).or(e.class_from.zip(e.class_to)) {
                // (Two Onces, one's function calling the other's Do, is
                // Go's lazy initialisation, not a nesting to annotate.)
                if a == b && !e.recursive && a != crate::sync::ONCE_CLASS && seen_class.insert(a) {
                    out.push(Warning {
                        kind: WarningKind::SameClassNesting,
                        summary: format!("two instances of lock class {a} nested: \"{}\" then \"{}\"", e.from, e.to),
                        report: format!(
                            "INFO: nested locking of two instances of lock class {a}\n\"{}\" took \"{}\" at {}\n  while holding \"{}\", taken at {}\n(lockdep would ask for a nesting annotation; the same class in two orders is a deadlock)\n",
                            e.task,
                            e.to,
                            at(&e.to_at),
                            e.from,
                            at(&e.from_at)
                        ),
                    });
                }
            }
        }
        for h in &self.held_across {
            for e in self.edges.iter().filter(|e| e.to == h.lock && !e.recursive && self.waits(e)) {
                out.push(Warning {
                    kind: WarningKind::ChainIntoBlocking,
                    summary: format!(
                        "\"{}\" held while taking \"{}\", which is held across a blocking {} on \"{}\"",
                        e.from, h.lock, h.op, h.resource
                    ),
                    report: format!(
                        "INFO: lock chain into a blocking {op}\n\"{}\" took (or waited for) \"{}\" at {}\n  while holding \"{}\", taken at {}\nand \"{}\" blocked in {op} on \"{}\" at {} while holding \"{}\":\nwhile that {op} waits, \"{}\" cannot be taken either\n",
                        e.task,
                        e.to,
                        at(&e.to_at),
                        e.from,
                        at(&e.from_at),
                        h.task,
                        h.resource,
                        at(&h.op_at),
                        h.lock,
                        e.from,
                        op = h.op
                    ),
                });
            }
        }
        for h in &self.held_across {
            out.push(Warning {
                kind: WarningKind::HeldAcrossBlocking,
                summary: format!("\"{}\" held across a blocking {} on \"{}\"", h.lock, h.op, h.resource),
                report: format!(
                    "INFO: lock held across a blocking {op}\n\"{}\" blocked in {op} on \"{}\" at {}\n  while holding \"{}\", taken at {}\n",
                    h.task,
                    h.resource,
                    at(&h.op_at),
                    h.lock,
                    at(&h.lock_at),
                    op = h.op
                ),
            });
        }
        out
    }

    fn edge(&self, from: &str, to: &str) -> &OrderEdge {
        self.edges.iter().find(|e| e.from == from && e.to == to && self.waits(e)).expect("edge of the cycle")
    }

    /// Who writes `lock`, for a report that needs a writer to deadlock.
    fn writer_line(&self, lock: &str) -> String {
        match self.writer(lock) {
            Some(w) => format!("(\"{}\" asks to write-lock \"{lock}\" at {})\n", w.task, at(&w.at)),
            None => format!("(no task asked to write-lock \"{lock}\" in these runs: one that does deadlocks this)\n"),
        }
    }

    /// The lockdep-style report of a cycle `a -> b -> ... -> a`.
    fn circular(&self, cycle: &[&str]) -> Warning {
        let n = cycle.len();
        let closing = self.edge(cycle[n - 1], cycle[0]);
        let names: Vec<String> = cycle.iter().map(|c| format!("\"{c}\"")).collect();
        let summary = format!("possible circular locking dependency: {} -> {}", names.join(" -> "), names[0]);
        let mode = |read: bool| if read { " (read)" } else { "" };
        let mut r = String::from("WARNING: possible circular locking dependency detected\n");
        r.push_str(&format!(
            "\"{}\" is trying to acquire lock \"{}\"{} at {}\nbut task is already holding lock \"{}\"{}, taken at {}\nwhich lock already depends on the new lock.\n\n",
            closing.task,
            closing.to,
            mode(closing.read),
            at(&closing.to_at),
            closing.from,
            mode(closing.from_read),
            at(&closing.from_at)
        ));
        r.push_str("the existing dependency chain (in reverse order) is:\n");
        for i in (0..n - 1).rev() {
            let e = self.edge(cycle[i], cycle[i + 1]);
            r.push_str(&format!(
                "-> #{} (\"{}\"): \"{}\" asked for it{} at {} while holding \"{}\"{}, taken at {}\n",
                n - 2 - i,
                e.to,
                e.task,
                mode(e.read),
                at(&e.to_at),
                e.from,
                mode(e.from_read),
                at(&e.from_at)
            ));
        }
        // A lock read-locked by the task that holds it and by the one that
        // asks for it: the second waits only because a writer waits between.
        let mut writers = String::new();
        let mut writer_tasks: Vec<&str> = Vec::new();
        for i in 0..n {
            let into = self.edge(cycle[(i + n - 1) % n], cycle[i]);
            let out_of = self.edge(cycle[i], cycle[(i + 1) % n]);
            if into.read && out_of.from_read {
                writers.push_str(&format!(
                    "\"{}\" is read-locked on both sides: the second read lock waits only behind a writer, which waits for the first\n{}",
                    cycle[i],
                    self.writer_line(cycle[i])
                ));
                writer_tasks.extend(self.writer(cycle[i]).map(|w| w.task.as_ref()));
            }
        }
        // Each such lock needs a writer of its own waiting at the same
        // time: one task seen writing two of them stands for two running
        // its code, as a task seen taking both orders does.
        let mut seen = BTreeSet::new();
        for t in &writer_tasks {
            if !seen.insert(*t) {
                writers.push_str(&format!(
                    "(\"{t}\" is seen writing more than one of them; each needs a writer of its own waiting at the same time: two tasks running its code)\n"
                ));
                break;
            }
        }
        if n == 2 {
            let first = self.edge(cycle[0], cycle[1]);
            // One task seen taking both orders: the columns are two tasks
            // running its code, as lockdep's CPU0 and CPU1 are.
            let same = first.task == closing.task;
            let (t0, t1) = if same { ("CPU0", "CPU1") } else { (first.task.as_ref(), closing.task.as_ref()) };
            let w = t0.chars().count().max(6) + 4;
            r.push_str("\n Possible unsafe locking scenario:\n\n");
            r.push_str(&format!("       {t0:<w$}{t1}\n       {:<w$}{}\n", "----", "----"));
            let op = |read: bool| if read { "rlock" } else { "lock" };
            r.push_str(&format!("  {}({});\n", op(first.from_read), cycle[0]));
            r.push_str(&format!("       {:<w$}{}({});\n", "", op(closing.from_read), cycle[1]));
            r.push_str(&format!("       {:<w$}{}({});\n", "", op(closing.read), cycle[0]));
            r.push_str(&format!("  {}({});\n", op(first.read), cycle[1]));
            r.push_str("\n *** DEADLOCK ***\n");
            if same {
                let with = if writers.is_empty() { "" } else { ", with the writer below" };
                r.push_str(&format!(
                    "\n(\"{}\" took the locks in both orders: two tasks running this code deadlock{with})\n",
                    first.task
                ));
            }
        }
        if !writers.is_empty() {
            r.push('\n');
            r.push_str(&writers);
        }
        Warning { kind: WarningKind::CircularDependency, summary, report: r }
    }
}

/// The lock-order facts of a hunt's runs, gathered in any order (parallel
/// workers finish seeds out of order) and read back as if the seeds had run
/// one by one: each fact keeps the lowest seed that showed it, and
/// [`SeedGraph::up_to`] drops seeds past the point where a one-job hunt
/// would have stopped. So the findings, and the sites and tasks they name, do
/// not depend on `--jobs`.
///
/// ```
/// let m = sim::models::find("abba").unwrap().configure(&[]).unwrap();
/// let mut g = sim::lockorder::SeedGraph::default();
/// for seed in (0..20).rev() {
///     g.add(seed, &m.run(seed, false).lock_order);
/// }
/// let mut one_by_one = sim::lockorder::LockOrder::default();
/// for seed in 0..20 {
///     one_by_one.merge(&m.run(seed, false).lock_order);
/// }
/// assert_eq!(g.up_to(u64::MAX), one_by_one);
/// ```
#[derive(Clone, Debug, Default)]
pub struct SeedGraph {
    /// (from, to) -> (seed, position in that run, edge).
    edges: LowestSeed<OrderEdge>,
    /// (lock, resource) -> (seed, position in that run, entry).
    held_across: LowestSeed<HeldAcross>,
    /// (rwmutex, "") -> (seed, position in that run, write lock asked for).
    written: LowestSeed<WriteLocked>,
}

/// A fact by its two names, with the seed and position it was first seen at.
type LowestSeed<T> = BTreeMap<(Cow<'static, str>, Cow<'static, str>), (u64, usize, T)>;

impl SeedGraph {
    /// Adds the facts of the run of `seed`.
    pub fn add(&mut self, seed: u64, run: &LockOrder) {
        for (i, e) in run.edges.iter().enumerate() {
            keep_lowest(&mut self.edges, (e.from.clone(), e.to.clone()), (seed, i, e));
        }
        for (i, h) in run.held_across.iter().enumerate() {
            keep_lowest(&mut self.held_across, (h.lock.clone(), h.resource.clone()), (seed, i, h));
        }
        for (i, w) in run.written.iter().enumerate() {
            keep_lowest(&mut self.written, (w.lock.clone(), Cow::Borrowed("")), (seed, i, w));
        }
    }

    /// The facts of seeds up to `last` (inclusive), in the order a one-by-one
    /// [`LockOrder::merge`] of those seeds gives.
    pub fn up_to(&self, last: u64) -> LockOrder {
        fn ordered<T: Clone>(m: &LowestSeed<T>, last: u64) -> Vec<T> {
            let mut v: Vec<&(u64, usize, T)> = m.values().filter(|(seed, _, _)| *seed <= last).collect();
            v.sort_by_key(|(seed, i, _)| (*seed, *i));
            v.into_iter().map(|(_, _, x)| x.clone()).collect()
        }
        LockOrder {
            edges: ordered(&self.edges, last),
            held_across: ordered(&self.held_across, last),
            written: ordered(&self.written, last),
        }
    }
}

impl SeedGraph {
    /// Adds every fact of `other`, each with the seed it was first seen at
    /// there: the graph of a hunt over both graphs' seeds (the shards of one
    /// hunt, for `deadsim merge`).
    pub fn merge(&mut self, other: &SeedGraph) {
        for (k, (seed, i, e)) in &other.edges {
            keep_lowest(&mut self.edges, k.clone(), (*seed, *i, e));
        }
        for (k, (seed, i, h)) in &other.held_across {
            keep_lowest(&mut self.held_across, k.clone(), (*seed, *i, h));
        }
        for (k, (seed, i, w)) in &other.written {
            keep_lowest(&mut self.written, k.clone(), (*seed, *i, w));
        }
    }

    /// The facts of seeds up to `last` as JSON, each with its seed, for
    /// [`SeedGraph::from_json`] (a shard's result carries them to the merge).
    pub fn to_json(&self, last: u64) -> serde_json::Value {
        use serde_json::json;
        let frame = |f: &Option<Frame>| f.map(|f| json!({"name": f.name, "site": f.site}));
        let edges: Vec<_> = self
            .edges
            .values()
            .filter(|(seed, _, _)| *seed <= last)
            .map(|(seed, i, e)| {
                json!({"seed": seed, "i": i, "from": e.from, "to": e.to, "class_from": e.class_from,
                       "class_to": e.class_to, "from_at": frame(&e.from_at), "to_at": frame(&e.to_at), "task": e.task,
                       "recursive": e.recursive, "from_read": e.from_read, "read": e.read})
            })
            .collect();
        let held: Vec<_> = self
            .held_across
            .values()
            .filter(|(seed, _, _)| *seed <= last)
            .map(|(seed, i, h)| {
                json!({"seed": seed, "i": i, "lock": h.lock, "lock_at": frame(&h.lock_at), "op": h.op,
                       "resource": h.resource, "op_at": frame(&h.op_at), "task": h.task})
            })
            .collect();
        let written: Vec<_> = self
            .written
            .values()
            .filter(|(seed, _, _)| *seed <= last)
            .map(|(seed, i, w)| {
                json!({"seed": seed, "i": i, "lock": w.lock, "class": w.class, "at": frame(&w.at), "task": w.task})
            })
            .collect();
        json!({"edges": edges, "held_across": held, "written": written})
    }

    /// The graph [`SeedGraph::to_json`] wrote. Frame names, sites and lock
    /// classes are `&'static str` in the engine, so the ones read here are
    /// leaked: this is for a command that reads a few shard files and ends.
    pub fn from_json(v: &serde_json::Value) -> Result<SeedGraph, String> {
        fn leak(s: &str) -> &'static str {
            Box::leak(s.to_string().into_boxed_str())
        }
        fn kind(v: &serde_json::Value) -> &'static str {
            match v {
                serde_json::Value::Null => "null",
                serde_json::Value::Bool(_) => "true or false",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::String(_) => "text",
                serde_json::Value::Array(_) => "a list",
                serde_json::Value::Object(_) => "an object",
            }
        }
        // Each field checked for its type, the error naming it by its path
        // (`lock_order.edges[0].from_at`): a field of the wrong type taken
        // for an absent one would change the merged findings' wording.
        let at = |list: &str, i: usize, k: &str| format!("lock_order.{list}[{i}].{k}");
        let text = |x: &serde_json::Value, list: &str, i: usize, k: &str| -> Result<Cow<'static, str>, String> {
            x[k].as_str()
                .map(|s| Cow::Owned(s.to_string()))
                .ok_or_else(|| format!("{}: is {}, not text", at(list, i, k), kind(&x[k])))
        };
        let num = |x: &serde_json::Value, list: &str, i: usize, k: &str| {
            x[k].as_u64().ok_or_else(|| format!("{}: is {}, not a whole number", at(list, i, k), kind(&x[k])))
        };
        // Absent from a shard of a deadsim before they were kept: false.
        let flag = |x: &serde_json::Value, list: &str, i: usize, k: &str| match &x[k] {
            serde_json::Value::Null => Ok(false),
            serde_json::Value::Bool(b) => Ok(*b),
            other => Err(format!("{}: is {}, not true or false", at(list, i, k), kind(other))),
        };
        let class = |x: &serde_json::Value, list: &str, i: usize, k: &str| match &x[k] {
            serde_json::Value::Null => Ok(None),
            serde_json::Value::String(c) => Ok(Some(leak(c))),
            other => Err(format!("{}: is {}, not text (a lock class) or null", at(list, i, k), kind(other))),
        };
        let frame = |x: &serde_json::Value, list: &str, i: usize, k: &str| -> Result<Option<Frame>, String> {
            match &x[k] {
                serde_json::Value::Null => Ok(None),
                f => match (f["name"].as_str(), f["site"].as_str()) {
                    (Some(name), Some(site)) => Ok(Some(Frame { name: leak(name), site: leak(site) })),
                    _ => Err(format!(
                        "{}: is {}, not a frame or null",
                        at(list, i, k),
                        match f {
                            serde_json::Value::Object(_) => "an object without text `name` and `site`",
                            other => kind(other),
                        }
                    )),
                },
            }
        };
        let list = |k: &str| v[k].as_array().ok_or_else(|| format!("lock_order.{k}: is {}, not a list", kind(&v[k])));
        if !v.is_object() {
            return Err(format!("lock_order: is {}, not an object (with `edges`, `held_across`, `written`)", kind(v)));
        }
        let mut g = SeedGraph::default();
        for (i, e) in list("edges")?.iter().enumerate() {
            let l = "edges";
            let edge = OrderEdge {
                from: text(e, l, i, "from")?,
                to: text(e, l, i, "to")?,
                class_from: class(e, l, i, "class_from")?,
                class_to: class(e, l, i, "class_to")?,
                from_at: frame(e, l, i, "from_at")?,
                to_at: frame(e, l, i, "to_at")?,
                task: text(e, l, i, "task")?,
                recursive: flag(e, l, i, "recursive")?,
                // Absent, a lock taken for writing: the edge is a wait.
                from_read: flag(e, l, i, "from_read")?,
                read: flag(e, l, i, "read")?,
            };
            let key = (edge.from.clone(), edge.to.clone());
            keep_lowest(&mut g.edges, key, (num(e, l, i, "seed")?, num(e, l, i, "i")? as usize, &edge));
        }
        for (i, h) in list("held_across")?.iter().enumerate() {
            let l = "held_across";
            let op = match text(h, l, i, "op")?.as_ref() {
                "pipe write" => "pipe write",
                "channel send" => "channel send",
                "wait()" => "wait()",
                other => leak(other),
            };
            let fact = HeldAcross {
                lock: text(h, l, i, "lock")?,
                lock_at: frame(h, l, i, "lock_at")?,
                op,
                resource: text(h, l, i, "resource")?,
                op_at: frame(h, l, i, "op_at")?,
                task: text(h, l, i, "task")?,
            };
            let key = (fact.lock.clone(), fact.resource.clone());
            keep_lowest(&mut g.held_across, key, (num(h, l, i, "seed")?, num(h, l, i, "i")? as usize, &fact));
        }
        // Without it, an older shard's writers would be taken for none,
        // and another shard's read locks of those RWMutexes for no waits.
        if v.get("written").is_none() {
            return Err("lock_order: `written` is missing: made by an older deadsim; run the shard again".into());
        }
        for (i, w) in list("written")?.iter().enumerate() {
            let l = "written";
            let fact = WriteLocked {
                lock: text(w, l, i, "lock")?,
                class: class(w, l, i, "class")?,
                at: frame(w, l, i, "at")?,
                task: text(w, l, i, "task")?,
            };
            let key = (fact.lock.clone(), Cow::Borrowed(""));
            keep_lowest(&mut g.written, key, (num(w, l, i, "seed")?, num(w, l, i, "i")? as usize, &fact));
        }
        Ok(g)
    }
}

/// The lock-order facts one worker of a parallel hunt has passed on to the
/// shared [`SeedGraph`]. A worker takes its seeds in increasing order, so a
/// fact it has passed on once can only come back with a higher seed, which
/// the graph would drop anyway; checking here first keeps most runs away
/// from the shared graph's lock.
///
/// ```
/// let m = sim::models::find("abba").unwrap().configure(&[("fixed".into(), "true".into())]).unwrap();
/// let mut seen = sim::lockorder::SeenFacts::default();
/// assert!(seen.any_new(&m.run(0, false).lock_order)); // "took B while holding A"
/// assert!(!seen.any_new(&m.run(1, false).lock_order)); // the same fact again
/// ```
#[derive(Clone, Debug, Default)]
pub struct SeenFacts {
    /// (first name, second name, kind: 0 an edge, 1 held across, 2 written).
    keys: BTreeSet<(Cow<'static, str>, Cow<'static, str>, u8)>,
}

impl SeenFacts {
    /// Marks the run's facts as seen; true if any was not seen before.
    pub fn any_new(&mut self, run: &LockOrder) -> bool {
        let mut new = false;
        for e in &run.edges {
            let key = (e.from.clone(), e.to.clone(), 0);
            if !self.keys.contains(&key) {
                self.keys.insert(key);
                new = true;
            }
        }
        for h in &run.held_across {
            let key = (h.lock.clone(), h.resource.clone(), 1);
            if !self.keys.contains(&key) {
                self.keys.insert(key);
                new = true;
            }
        }
        for w in &run.written {
            let key = (w.lock.clone(), Cow::Borrowed(""), 2);
            if !self.keys.contains(&key) {
                self.keys.insert(key);
                new = true;
            }
        }
        new
    }
}

fn keep_lowest<T: Clone>(
    m: &mut LowestSeed<T>,
    key: (Cow<'static, str>, Cow<'static, str>),
    (seed, i, x): (u64, usize, &T),
) {
    match m.get_mut(&key) {
        Some(cur) if (cur.0, cur.1) <= (seed, i) => {}
        Some(cur) => *cur = (seed, i, x.clone()),
        None => {
            m.insert(key, (seed, i, x.clone()));
        }
    }
}

/// The shortest cycle through `start` (breadth-first), as its node list.
fn shortest_cycle<'a>(adj: &BTreeMap<&'a str, BTreeSet<&'a str>>, start: &'a str) -> Option<Vec<&'a str>> {
    let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(u) = queue.pop_front() {
        for &v in adj.get(u).into_iter().flatten() {
            if v == start {
                let mut path = vec![u];
                let mut x = u;
                while x != start {
                    x = parent[x];
                    path.push(x);
                }
                path.reverse();
                return Some(path);
            }
            if v != start && !parent.contains_key(v) {
                parent.insert(v, u);
                queue.push_back(v);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(from: &'static str, to: &'static str, cf: Option<&'static str>, ct: Option<&'static str>) -> OrderEdge {
        OrderEdge {
            from: Cow::Borrowed(from),
            to: Cow::Borrowed(to),
            class_from: cf,
            class_to: ct,
            from_at: None,
            to_at: None,
            task: Cow::Borrowed("t"),
            recursive: false,
            from_read: false,
            read: false,
        }
    }

    #[test]
    fn class_cycles_are_found_where_instances_do_not_cycle() {
        // x1 (class X) -> y1 (class Y) in one place, y2 (Y) -> x2 (X) in another:
        // no instance cycle, but the classes are taken in both orders.
        let g = LockOrder {
            edges: vec![edge("x1", "y1", Some("X"), Some("Y")), edge("y2", "x2", Some("Y"), Some("X"))],
            held_across: vec![],
            written: vec![],
        };
        let kinds: Vec<WarningKind> = g.warnings().iter().map(|w| w.kind).collect();
        assert_eq!(kinds, vec![WarningKind::ClassCircularDependency]);
        // Nesting within one class is information, not a class cycle.
        let g = LockOrder { edges: vec![edge("x1", "x2", Some("X"), Some("X"))], held_across: vec![], written: vec![] };
        let kinds: Vec<WarningKind> = g.warnings().iter().map(|w| w.kind).collect();
        assert_eq!(kinds, vec![WarningKind::SameClassNesting]);
        // An instance cycle of unclassed locks is reported once, not again per class.
        let g = LockOrder {
            edges: vec![edge("a", "b", None, None), edge("b", "a", None, None)],
            held_across: vec![],
            written: vec![],
        };
        let kinds: Vec<WarningKind> = g.warnings().iter().map(|w| w.kind).collect();
        assert_eq!(kinds, vec![WarningKind::CircularDependency]);
    }
}
