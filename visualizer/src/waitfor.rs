//! The wait-for graph at the deadlock.
//!
//! Tasks (boxes, in their task colour) and resources (grey hexagons) are
//! nodes; a task points to the resource it waits for ("waits for"), a
//! resource to the tasks that could release it ("held by" for a lock,
//! "behind queued writer" for an RWMutex whose releasers are writers queued
//! for it, holding none of it, as the report says, "released by" for a
//! channel or pipe, whose other end they hold; "closed by" for one declared
//! only to close the waiter's own side). A task
//! in a monitor's `wait()` "waits for a notify" on it, "notified by" the
//! tasks that could. The
//! cycle is laid out on a circle and drawn in red; tasks blocked behind it,
//! and holders outside it, sit further out in grey.
//!
//! Without a deadlock report, the graph is built from the tasks still
//! blocked at the end of the trace, and the locks held then, and drawn in
//! layers: each task just before what it waits for, and that just before
//! its holder, in columns from the left or, when they do not fit, in rows.
//!
//! ```
//! let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let m = visualizer::Model::new(&trace).unwrap();
//! let g = visualizer::waitfor::Graph::new(&m);
//! // T1 -> B -> T2 -> A -> T1
//! assert_eq!(g.nodes.len(), 4);
//! assert_eq!(g.edges.iter().filter(|e| e.cycle).count(), 4);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::fonts;
use crate::layout::{self, Swatch, MARGIN, SMALL, TEXT, TINY};
use crate::model::Model;
use crate::palette::{self, Rgb};
use crate::scene::{Anchor, Scene};
use crate::{Error, Header, Options};
use sim::outcome::{BlockedTask, Deadlock};

/// What a node stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A task, by id.
    Task(u32),
    /// A resource, by id.
    Resource(u32),
    /// What a `select` or a `join` waits on, by its description.
    Other(String),
    /// Tasks that wait alike (for one thing, at one frame) and that nothing
    /// waits for, drawn as one row of the chart, by id.
    Group(Vec<u32>),
}

/// A node of the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub kind: NodeKind,
    /// The name.
    pub label: String,
    /// A second line: the frame of a task, the kind of a resource.
    pub detail: String,
    /// In the deadlock cycle.
    pub cycle: bool,
}

/// An edge: `from` waits for `to` (task -> resource), or `to` can release
/// `from` (resource -> task).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    /// `waits for`, `held by`, `released by`.
    pub label: &'static str,
    /// An edge of the deadlock cycle.
    pub cycle: bool,
}

/// The wait-for graph of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// The cycle's nodes, in order (tasks and what they wait for).
    pub ring: Vec<usize>,
    /// What the graph shows, for the chart.
    pub caption: String,
}

fn short_site(site: &str) -> &str {
    site.rsplit('/').next().unwrap_or(site)
}

fn frame_text(name: &str, site: &str) -> String {
    if site.is_empty() {
        format!("at {name}")
    } else {
        format!("at {name} ({})", short_site(site))
    }
}

impl Graph {
    /// The graph at the deadlock of `m`, or at the end of the trace.
    /// The tasks drawn, each its own node, in node order.
    pub fn tasks(&self) -> Vec<u32> {
        self.nodes
            .iter()
            .filter_map(|n| match n.kind {
                NodeKind::Task(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    pub fn new(m: &Model) -> Graph {
        let mut g = Builder {
            g: Graph { nodes: Vec::new(), edges: Vec::new(), ring: Vec::new(), caption: String::new() },
            tasks: vec![usize::MAX; m.trace.tasks.len()],
            waited: BTreeMap::new(),
            edges: BTreeSet::new(),
        };
        // Tasks by name (the first of a name), for a trace from before the
        // report kept its releasers' ids.
        let mut by_name: BTreeMap<&str, u32> = BTreeMap::new();
        for t in &m.trace.tasks {
            by_name.entry(t.name.as_str()).or_insert(t.id);
        }
        let releasers = |bt: &BlockedTask| -> Vec<u32> {
            if bt.released_by_ids.len() == bt.released_by.len() {
                bt.released_by_ids.clone()
            } else {
                bt.released_by.iter().filter_map(|n| by_name.get(n.as_str()).copied()).collect()
            }
        };
        match &m.trace.deadlock {
            Some(d) => {
                let n = d.cycle.len();
                let scope = if d.global { "global" } else { "partial" };
                let (step, time) = (crate::columns::group(d.step), crate::columns::duration(d.time));
                let plural = |k: usize| if k == 1 { "" } else { "s" };
                g.g.caption = if n == 0 {
                    // Waits no cycle explains (a receive nobody will send
                    // to, tasks in wait() with nobody left to notify).
                    let k = d.behind.len();
                    let how = if d.global { ", none able to run" } else { " for good" };
                    format!(
                        "At the deadlock, step {step} ({time}): no cycle, {k} task{} blocked{how} ({scope} deadlock).",
                        plural(k)
                    )
                } else {
                    format!(
                        "At the deadlock, step {step} ({time}): {n} task{} in the cycle, {} blocked behind it ({scope} deadlock).",
                        plural(n),
                        d.behind.len()
                    )
                };
                // How the waits in wait() came to last, as the report ends.
                for n in &d.notifies {
                    g.g.caption.push(' ');
                    let line = d.notify_line(n);
                    g.g.caption.push_str(&line);
                    if !line.ends_with('.') {
                        g.g.caption.push('.');
                    }
                }
                let cycle_ids: Vec<u32> = d.cycle.iter().map(|b| b.task).collect();
                // Task nodes of the cycle first, so that ring order is fixed.
                let tnodes: Vec<usize> = d
                    .cycle
                    .iter()
                    .map(|bt| {
                        let detail = bt.stack.first().map(|f| frame_text(&f.name, &f.site)).unwrap_or_default();
                        g.task_node(m, bt.task, detail, true)
                    })
                    .collect();
                for (i, bt) in d.cycle.iter().enumerate() {
                    let next = tnodes[(i + 1) % n];
                    g.g.ring.push(tnodes[i]);
                    if bt.op == "join" {
                        g.edge(tnodes[i], next, "waits for", true);
                        continue;
                    }
                    let r = g.wait_node(m, bt.resource, &bt.waits_for, &bt.kind, &bt.op, true);
                    g.g.ring.push(r);
                    g.edge(tnodes[i], r, blocked_label(bt), true);
                    let rel = release_label(d, bt, &releasers(bt));
                    g.edge(r, next, closed_or(bt, cycle_ids[(i + 1) % n], rel), true);
                    for t in releasers(bt) {
                        if t != cycle_ids[(i + 1) % n] {
                            let tn = g.task_node(m, t, String::new(), cycle_ids.contains(&t));
                            g.edge(r, tn, closed_or(bt, t, rel), false);
                        }
                    }
                }
                for bt in &d.behind {
                    let detail = bt.stack.first().map(|f| frame_text(&f.name, &f.site)).unwrap_or_default();
                    let tn = g.task_node(m, bt.task, detail, false);
                    if bt.op == "join" {
                        // The joined task is its one releaser.
                        if let Some(t) =
                            releasers(bt).first().copied().or_else(|| by_name.get(bt.waits_for.as_str()).copied())
                        {
                            let to = g.task_node(m, t, String::new(), cycle_ids.contains(&t));
                            g.edge(tn, to, "waits for", false);
                        }
                        continue;
                    }
                    let r = g.wait_node(m, bt.resource, &bt.waits_for, &bt.kind, &bt.op, false);
                    g.edge(tn, r, blocked_label(bt), false);
                    if bt.op == "wait" && d.cycle.is_empty() {
                        // With no cycle, those who could notify are the
                        // other waiters: edges back to them would only
                        // tangle the picture (the caption says who notified last).
                        continue;
                    }
                    let rel = release_label(d, bt, &releasers(bt));
                    for t in releasers(bt) {
                        let to = g.task_node(m, t, String::new(), cycle_ids.contains(&t));
                        g.edge(r, to, closed_or(bt, t, rel), false);
                    }
                }
            }
            None => {
                // No report: who is still blocked at the end, and who holds what they wait for.
                let mut blocked = 0;
                for (t, tt) in m.tasks.iter().enumerate() {
                    let Some(blk) = tt.blocks.last().filter(|b| b.open && b.op != "sleep") else {
                        continue;
                    };
                    blocked += 1;
                    let detail = blk
                        .frame
                        .map(|f| &m.trace.frames[f as usize])
                        .map(|f| frame_text(&f.name, &f.site))
                        .unwrap_or_default();
                    let tn = g.task_node(m, t as u32, detail, false);
                    if let (Some(u), "join") = (blk.peer, blk.op.as_str()) {
                        // A join waits for the joined task itself.
                        let un = g.task_node(m, u, end_state(m, u, "finished"), false);
                        g.edge(tn, un, "waits for", false);
                        continue;
                    }
                    if !blk.cases.is_empty() {
                        // A select waits on its cases, named as the deadlock report names them.
                        let wn = g.wait_node(m, None, &m.trace.cases_label(&blk.cases), "", &blk.op, false);
                        g.edge(tn, wn, "waits for", false);
                        continue;
                    }
                    let Some(r) = blk.resource else {
                        // A join from a trace without its peer, or a select from one without its cases.
                        let what = format!("{} of task {t}", blk.op);
                        g.g.nodes.push(Node {
                            kind: NodeKind::Other(what.clone()),
                            label: blk.op.clone(),
                            detail: String::new(),
                            cycle: false,
                        });
                        let wn = g.g.nodes.len() - 1;
                        g.waited.entry(Waited::Other(what)).or_insert(wn);
                        g.edge(tn, wn, "waits for", false);
                        continue;
                    };
                    let kind = m.trace.resources[r as usize].kind.clone();
                    let rn = g.wait_node(m, Some(r), m.resource_name(r), &kind, &blk.op, false);
                    g.edge(tn, rn, wait_label(&blk.op), false);
                    // In Object.wait() a holder of the monitor is not what the task waits for.
                    let holders = if blk.op == "wait" { &[][..] } else { &m.resources[r as usize].holds[..] };
                    for h in holders.iter().filter(|h| h.open) {
                        // A lock a task never let go: Go's classic leak.
                        let hn = g.task_node(m, h.task, end_state(m, h.task, "finished, still holding it"), false);
                        let how = if h.mode == crate::model::Mode::Read { "read-held by" } else { "held by" };
                        g.edge(rn, hn, how, false);
                    }
                }
                g.g.caption = if blocked == 0 {
                    format!(
                        "No deadlock, and no task blocked at the end of the run (verdict {}).",
                        m.trace.meta.verdict
                    )
                } else {
                    format!(
                        "No deadlock report: {blocked} task{} still blocked at the end of the run (verdict {}).",
                        if blocked == 1 { "" } else { "s" },
                        m.trace.meta.verdict
                    )
                };
            }
        }
        let mut g = g.g;
        g.group_alike(m);
        g
    }

    /// Puts the tasks that wait for the same thing at the same frame, and
    /// that no task waits for, in one node when there are at least
    /// [`GROUP_MIN`] of them: a ttrpc client with 200 callers queued on
    /// `sendLock` gives one box, not 200. A task another waits for (a
    /// holder, a joined task) keeps its own node, since edges name it.
    fn group_alike(&mut self, m: &Model) {
        let n = self.nodes.len();
        // Each node's edges in and out, counted once (100,000 blocked tasks
        // made a search of every edge for every node take most of a minute).
        let (mut into, mut out, mut first_out) = (vec![0usize; n], vec![0usize; n], vec![usize::MAX; n]);
        for (k, e) in self.edges.iter().enumerate() {
            into[e.to] += 1;
            out[e.from] += 1;
            if first_out[e.from] == usize::MAX {
                first_out[e.from] = k;
            }
        }
        let alone = |g: &Graph, i: usize| {
            matches!(g.nodes[i].kind, NodeKind::Task(_))
                && !g.nodes[i].cycle
                && into[i] == 0
                && out[i] == 1
                && is_wait(g.edges[first_out[i]].label)
        };
        let mut groups: Vec<((usize, String), Vec<usize>)> = Vec::new();
        let mut group_of: BTreeMap<(usize, String), usize> = BTreeMap::new();
        for i in (0..n).filter(|&i| alone(self, i)) {
            let key = (self.edges[first_out[i]].to, self.nodes[i].detail.clone());
            match group_of.get(&key) {
                Some(&g) => groups[g].1.push(i),
                None => {
                    group_of.insert(key.clone(), groups.len());
                    groups.push((key, vec![i]));
                }
            }
        }
        groups.retain(|(_, v)| v.len() >= GROUP_MIN);
        if groups.is_empty() {
            return;
        }
        // Each group's first member becomes the group; the others go.
        let mut gone = vec![false; n];
        for (_, members) in &groups {
            let ids: Vec<u32> = members
                .iter()
                .filter_map(|&i| if let NodeKind::Task(t) = self.nodes[i].kind { Some(t) } else { None })
                .collect();
            let names: Vec<&str> = ids.iter().map(|&t| m.task_name(t)).collect();
            // Not "first, …, last": that reads as a range, and tasks between
            // may have rows of their own.
            let label = format!("{} tasks: {}, {} and {} more", names.len(), names[0], names[1], names.len() - 2);
            let first = &mut self.nodes[members[0]];
            first.label = label;
            first.kind = NodeKind::Group(ids);
            for &i in &members[1..] {
                gone[i] = true;
            }
        }
        let mut new_index = vec![usize::MAX; n];
        let mut next = 0;
        for i in 0..n {
            if !gone[i] {
                new_index[i] = next;
                next += 1;
            }
        }
        let mut i = 0;
        self.nodes.retain(|_| {
            i += 1;
            !gone[i - 1]
        });
        self.edges.retain(|e| !gone[e.from]);
        for e in &mut self.edges {
            e.from = new_index[e.from];
            e.to = new_index[e.to];
        }
        for r in &mut self.ring {
            *r = new_index[*r];
        }
    }

    /// True when there is anything to draw.
    pub fn has_edges(&self) -> bool {
        !self.edges.is_empty()
    }
}

/// A [`Graph`] being made, with its nodes and edges indexed: a graph of
/// 100,000 blocked tasks looked each one up among all the others.
struct Builder {
    g: Graph,
    /// Each task's node, by task id (`usize::MAX`: none yet).
    tasks: Vec<usize>,
    /// The node of each thing waited for.
    waited: BTreeMap<Waited, usize>,
    edges: BTreeSet<(usize, usize)>,
}

/// What a wait node stands for: a resource, or what names it (a select's cases).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Waited {
    Resource(u32),
    Other(String),
}

impl Builder {
    fn task_node(&mut self, m: &Model, t: u32, detail: String, cycle: bool) -> usize {
        if let Some(&i) = self.tasks.get(t as usize).filter(|&&i| i != usize::MAX) {
            if self.g.nodes[i].detail.is_empty() {
                self.g.nodes[i].detail = detail;
            }
            return i;
        }
        self.g.nodes.push(Node { kind: NodeKind::Task(t), label: m.task_name(t).to_string(), detail, cycle });
        let i = self.g.nodes.len() - 1;
        if let Some(slot) = self.tasks.get_mut(t as usize) {
            *slot = i;
        }
        i
    }

    fn wait_node(&mut self, m: &Model, r: Option<u32>, what: &str, kind: &str, op: &str, cycle: bool) -> usize {
        let key = match r {
            Some(r) => NodeKind::Resource(r),
            None => NodeKind::Other(what.to_string()),
        };
        let index_key = match r {
            Some(r) => Waited::Resource(r),
            None => Waited::Other(what.to_string()),
        };
        if let Some(&i) = self.waited.get(&index_key) {
            self.g.nodes[i].cycle |= cycle;
            return i;
        }
        let label = match r {
            Some(r) => m.resource_name(r).to_string(),
            None => what.to_string(),
        };
        let detail = match (r, kind) {
            (Some(r), _) => {
                let res = &m.trace.resources[r as usize];
                match (res.kind.as_str(), res.class.as_deref()) {
                    ("rwmutex", _) => "RWMutex".to_string(),
                    // A monitor inside, a WaitGroup to the model's reader.
                    ("monitor", Some(sim::sync::WAITGROUP_CLASS)) => "WaitGroup".to_string(),
                    ("monitor", Some(sim::sync::COND_CLASS)) => "Cond".to_string(),
                    (k, _) => k.to_string(),
                }
            }
            (None, "") => op.to_string(),
            (None, k) => k.to_string(),
        };
        self.g.nodes.push(Node { kind: key, label, detail, cycle });
        let i = self.g.nodes.len() - 1;
        self.waited.insert(index_key, i);
        i
    }

    fn edge(&mut self, from: usize, to: usize, label: &'static str, cycle: bool) {
        if self.edges.insert((from, to)) {
            self.g.edges.push(Edge { from, to, label, cycle });
        }
    }
}

/// Fewest tasks that share one node (see [`Graph::group_alike`]).
const GROUP_MIN: usize = 4;

/// The second line of a task that is not blocked at the end (a holder, a
/// joined task), which has no frame to show: its state then says why it
/// has not released what it holds or returned ("ready at the end"), and
/// `finished` for one that returned, or the failure the run ended in if it
/// failed there. "" for a blocked task, whose own node gives its frame.
fn end_state(m: &Model, t: u32, finished: &str) -> String {
    // The task the run failed in: that is what stopped it.
    if let Some(f) = m.failure.filter(|f| f.task == t) {
        return format!("{} here", f.what);
    }
    let sleeping = m.tasks[t as usize].blocks.last().is_some_and(|b| b.open && b.op == "sleep");
    match m.state_at(t, m.end) {
        Some(crate::model::State::Running) => "running at the end".into(),
        Some(crate::model::State::Ready) => "ready at the end".into(),
        Some(crate::model::State::Finished) => finished.into(),
        _ if sleeping => "sleeping at the end".into(),
        _ => String::new(),
    }
}

/// The label of the edges from what `bt` waits for to the tasks that could
/// release it, `releasers` (as the chart resolves them). As the deadlock
/// report has it (`write_task` in `sim::outcome`): a lock or read lock of
/// an RWMutex whose releasers all wait to write-lock it, holding none of
/// it, waits behind a queued writer (Go lets no reader in past one), which
/// does not hold the lock.
fn release_label(d: &Deadlock, bt: &BlockedTask, releasers: &[u32]) -> &'static str {
    let queued = bt.kind == "rwmutex"
        && !releasers.is_empty()
        && releasers.iter().all(|&id| {
            d.cycle.iter().chain(&d.behind).find(|x| x.task == id).is_some_and(|x| {
                x.op == "lock" && x.resource == bt.resource && !x.holds.iter().any(|h| h.resource == bt.waits_for)
            })
        });
    match (bt.kind.as_str(), bt.op.as_str()) {
        (_, "lock" | "rlock") if queued => "behind queued writer",
        // A WaitGroup's Wait: the Done that brings the counter to zero.
        (_, "wait") if bt.in_wait_group() => "Done by",
        (_, "wait") if bt.in_cond() => "signalled by",
        // Object.wait(): the monitor is let go; a notify ends the wait.
        (_, "wait") => "notified by",
        ("mutex" | "rwmutex" | "monitor", _) => "held by",
        _ => "released by",
    }
}

/// The label of the edge from `bt`'s wait to releaser `t`: "closed by"
/// for one declared only to close the waiter's own side (a running
/// `conn.Close()`), which ends the wait by failing it, as the report says.
fn closed_or(bt: &BlockedTask, t: u32, rel: &'static str) -> &'static str {
    if bt.closing.contains(&t) {
        "closed by"
    } else {
        rel
    }
}

/// `edges` by label, each label once, in the order they first come.
fn by_label<'e>(edges: &[&'e Edge]) -> Vec<(&'static str, Vec<&'e Edge>)> {
    let mut out: Vec<(&'static str, Vec<&'e Edge>)> = Vec::new();
    for &e in edges {
        match out.iter_mut().find(|(l, _)| *l == e.label) {
            Some((_, es)) => es.push(e),
            None => out.push((e.label, vec![e])),
        }
    }
    out
}

/// True for the label of a task's edge to what it waits on ([`wait_label`]).
fn is_wait(label: &str) -> bool {
    label.starts_with("waits for")
}

/// The label of a task's edge to what it waits on: a task in
/// `Object.wait()` does not wait for its monitor (it let it go) but for a
/// notify on it, as the deadlock report says.
/// [`wait_label`] of a report's task: a WaitGroup's Wait waits for Done.
fn blocked_label(bt: &BlockedTask) -> &'static str {
    if bt.in_wait_group() {
        "waits for Done"
    } else if bt.in_cond() {
        "waits for a signal"
    } else {
        wait_label(&bt.op)
    }
}

fn wait_label(op: &str) -> &'static str {
    if op == "wait" {
        "waits for a notify"
    } else {
        "waits for"
    }
}

/// sin and cos of `turns` full turns, with basic arithmetic only (the same
/// bits on every machine, unlike a platform libm).
fn sin_cos(turns: f64) -> (f64, f64) {
    let t = turns - turns.floor(); // 0..1
    let x = (t - 0.5) * std::f64::consts::TAU; // -pi..pi, angle - pi
                                               // Taylor series of sin and cos around 0; 20 terms are exact to f64 on -pi..pi.
    let (mut s, mut c) = (0.0, 0.0);
    let (mut ts, mut tc) = (x, 1.0);
    for k in 0..20 {
        s += ts;
        c += tc;
        let n = 2.0 * k as f64;
        ts *= -x * x / ((n + 2.0) * (n + 3.0));
        tc *= -x * x / ((n + 1.0) * (n + 2.0));
    }
    // sin(a) = -sin(a - pi), cos(a) = -cos(a - pi).
    (-s, -c)
}

struct Placed {
    x: f64,
    y: f64,
    w: i32,
    h: i32,
}

/// Widest a node's name may be before it wraps (at ` | ` between select cases).
const WRAP: i32 = 300;

/// A node's name in lines: a select's cases wrap between cases.
fn label_lines(label: &str) -> Vec<String> {
    if fonts::width(label, TEXT, true) <= WRAP || !label.contains(" | ") {
        return vec![layout::fit_or_cut(label, TEXT, true, WRAP + 60)];
    }
    let mut lines: Vec<String> = Vec::new();
    for part in label.split(" | ") {
        match lines.last_mut() {
            Some(l) if fonts::width(&format!("{l} | {part}"), TEXT, true) <= WRAP => {
                l.push_str(" | ");
                l.push_str(part);
            }
            // A line broken between cases ends in the separator, so that
            // three cases on two lines still read as three.
            Some(l) => {
                l.push_str(" |");
                lines.push(part.to_string());
            }
            None => lines.push(part.to_string()),
        }
    }
    lines.into_iter().map(|l| layout::fit_or_cut(&l, TEXT, true, WRAP + 60)).collect()
}

const LINE: i32 = 21;

/// Cycles with more nodes than this snake through rows when a ring would not fit.
const SNAKE_ABOVE: usize = 12;

/// Height of a node's detail line.
const DETAIL_LINE: i32 = 14;

/// A node's detail as drawn, under its name: a frame too long for the width
/// a name may take (see [`label_lines`]) goes on two lines, the function and
/// then its source file and line (`at ChannelStateWriteRequestExecutorImpl.loop`,
/// `(ChannelStateWriteRequestExecutorImpl.java:96)`), each cut only if it
/// still does not fit, keeping its end.
fn detail_lines(n: &Node) -> Vec<String> {
    let max = WRAP + 60;
    if fonts::width(&n.detail, TINY, false) > max {
        if let Some(i) = n.detail.rfind(" (").filter(|&i| i > 0) {
            let (call, file) = (&n.detail[..i], &n.detail[i + 1..]);
            return vec![layout::fit_or_cut(call, TINY, false, max), layout::fit_or_cut(file, TINY, false, max)];
        }
    }
    vec![layout::fit_or_cut(&n.detail, TINY, false, max)]
}

fn node_size(n: &Node) -> (i32, i32) {
    let lines = label_lines(&n.label);
    let details = detail_lines(n);
    let w = lines
        .iter()
        .map(|l| fonts::width(l, TEXT, true))
        .chain(details.iter().map(|d| fonts::width(d, TINY, false)))
        .max()
        .unwrap_or(0);
    let h = 33 + LINE * lines.len() as i32 + DETAIL_LINE * (details.len() as i32 - 1);
    match n.kind {
        NodeKind::Task(_) | NodeKind::Group(_) => (w + 28, h),
        _ => (w + 48, h - 4),
    }
}

/// Lays out the wait-for graph of `m`: the cycle on a ring (an ellipse when
/// it is too wide for the picture), then the tasks blocked behind it, one
/// row each. Without a cycle, every node in layers: columns from the left when they fit, else rows.
pub fn scene(m: &Model, opts: &Options) -> Result<Scene, Error> {
    let g = Graph::new(m);
    if !g.has_edges() {
        return Ok(layout::empty(m, "Wait-for graph", &g.caption, opts));
    }
    let width = opts.width as i32;
    let mut s = Scene::new(opts.width, 0);
    let mut y = layout::title(&mut s, m, "Wait-for graph", opts, MARGIN);
    // The caption is the header's outcome line here: `--header title` and
    // `none` leave it to the document's own caption.
    if opts.header == Header::Full {
        y = layout::note_lines(&mut s, &g.caption, MARGIN, y + 6, width - 2 * MARGIN) - 4;
    }

    let sizes: Vec<(i32, i32)> = g.nodes.iter().map(node_size).collect();
    // Without a cycle there is no ring to draw: every node goes in layers instead.
    let layered = g.ring.is_empty();
    // Layered rows that wrap run their edges through the boxes of the rows
    // between: such a graph is drawn as the list of waits instead, one row
    // each, as the tasks blocked behind a cycle are.
    let listed = layered && !layers_fit(&g, &sizes, width);
    let ring: Vec<usize> = match (layered, listed) {
        (false, _) => g.ring.clone(),
        (true, false) => (0..g.nodes.len()).collect(),
        (true, true) => Vec::new(),
    };
    let in_ring = |i: usize| ring.contains(&i);

    // The ring: clockwise from the top, on an ellipse that fits the width.
    let k = ring.len().max(1);
    let perimeter: i32 = ring.iter().map(|&i| sizes[i].0.max(sizes[i].1 * 2) + 80).sum();
    let r = (perimeter as f64 / std::f64::consts::TAU).max(if k <= 2 { 150.0 } else { 180.0 });
    let maxw = ring.iter().map(|&i| sizes[i].0).max().unwrap_or(0) as f64;
    let maxh = ring.iter().map(|&i| sizes[i].1).max().unwrap_or(0) as f64;
    let rx = r.min(((width - 2 * MARGIN) as f64 - maxw) / 2.0 - 20.0).max(60.0);
    let ry = if rx < r { (r * r / rx).min(1.6 * r) } else { r };
    let cx = width as f64 / 2.0;
    let cy = y as f64 + 40.0 + maxh / 2.0 + ry;
    let mut placed: Vec<Option<Placed>> = (0..g.nodes.len()).map(|_| None).collect();
    // A long cycle does not fit on a ring: it snakes through rows instead
    // (left to right, then right to left), and the edge that closes it runs
    // along the left margin.
    let on_ring = |j: usize| {
        let (sn, cs) = sin_cos(-0.25 + j as f64 / k as f64);
        ((cx + rx * cs).round(), (cy + ry * sn).round())
    };
    // Squeezed into a narrow picture, a ring can put two nodes on top of
    // each other: the cycle snakes then too, however short.
    let crowded = || {
        // Each node's centre on the ring, and its size.
        let at: Vec<((f64, f64), (i32, i32))> = ring.iter().enumerate().map(|(j, &i)| (on_ring(j), sizes[i])).collect();
        at.iter().enumerate().any(|(j, &((ax, ay), (aw, ah)))| {
            at[j + 1..].iter().any(|&((bx, by), (bw, bh))| {
                (ax - bx).abs() < ((aw + bw) / 2 + 8) as f64 && (ay - by).abs() < ((ah + bh) / 2 + 8) as f64
            })
        })
    };
    let snake = !layered && ((k > SNAKE_ABOVE && rx < r) || crowded());
    let (cell_w, cell_h) = (maxw as i32 + 70, maxh as i32 + 56);
    let cols = ((width - 2 * MARGIN - 40) / cell_w).clamp(1, k as i32);
    let columns = layered && !listed && place_in_layers(&g, &sizes, &mut placed, y + 40, width);
    for (j, &i) in ring.iter().enumerate().filter(|_| !layered) {
        let (x, yy) = if snake {
            let (row, c) = (j as i32 / cols, j as i32 % cols);
            let col = if row % 2 == 1 { cols - 1 - c } else { c };
            // The columns centred in the room right of the closing edge's lane.
            let spare = (width - 2 * MARGIN - 40 - cols * cell_w).max(0) / 2;
            ((MARGIN + 40 + spare + col * cell_w + cell_w / 2) as f64, (y + 40 + row * cell_h + cell_h / 2) as f64)
        } else {
            on_ring(j)
        };
        placed[i] = Some(Placed { x, y: yy, w: sizes[i].0, h: sizes[i].1 });
    }
    let ring_bottom =
        placed.iter().flatten().map(|p| p.y as i32 + p.h / 2).max().unwrap_or(y) + if snake { 24 } else { 0 };

    // Edges between ring nodes (grey ones first, the cycle on top), then the nodes.
    let mut order: Vec<&Edge> = g.edges.iter().filter(|e| in_ring(e.from) && in_ring(e.to)).collect();
    // What a label moved off a short edge must keep clear of.
    let nodes: Vec<&Placed> = placed.iter().flatten().collect();
    order.sort_by_key(|e| e.cycle);
    // What a note under a node must keep clear of: the edges drawn
    // straight (as lines between centres) and their labels.
    let mut lines: Vec<Segment> = Vec::new();
    let mut labels: Vec<Boxed> = Vec::new();
    // The grey edges a snake routes round its right, each in a lane of its
    // own: the one that spans most outermost, so that a route nested in
    // another's span does not cross it (two ttrpc v1.0.2 "released by"
    // edges crossed twice in the other order).
    let lane = |i: usize| width - MARGIN - 12 - 10 * i as i32;
    let mut detours: Vec<(&Edge, f64)> = order
        .iter()
        .filter(|e| snake && !e.cycle)
        .filter_map(|&e| {
            let (a, b) = (placed[e.from].as_ref()?, placed[e.to].as_ref()?);
            right_of_snake(a, b, &nodes, lane(0)).map(|_| (e, (a.y - b.y).abs()))
        })
        .collect();
    detours.sort_by(|p, q| q.1.total_cmp(&p.1));
    let routes: Vec<(&Edge, Vec<(i32, i32)>)> = detours
        .iter()
        .enumerate()
        .filter_map(|(i, &(e, _))| {
            let (a, b) = (placed[e.from].as_ref()?, placed[e.to].as_ref()?);
            right_of_snake(a, b, &nodes, lane(i)).map(|path| (e, path))
        })
        .collect();
    let route_lines: Vec<Segment> = routes.iter().flat_map(|(_, path)| segments(path)).collect();
    lines.extend(&route_lines);
    for e in order {
        let (Some(a), Some(b)) = (&placed[e.from], &placed[e.to]) else { continue };
        if let Some((_, path)) = routes.iter().find(|(r, _)| std::ptr::eq(*r, e)) {
            labels.extend(draw_routed(&mut s, path, e, &nodes, &labels, &route_lines));
            continue;
        }
        if !(snake && e.from == ring[k - 1] && e.to == ring[0]) {
            lines.push(((a.x, a.y), (b.x, b.y)));
        }
        if snake && e.from == ring[k - 1] && e.to == ring[0] {
            // Down from the last node, left to the margin, up, into the first.
            let (x0, y0) = (a.x as i32, a.y as i32 + a.h / 2 + 4);
            let lane = MARGIN + 12;
            let (x1, y1) = (b.x as i32 - b.w / 2 - 6, b.y as i32);
            s.path(vec![(x0, y0), (x0, y0 + 22), (lane, y0 + 22), (lane, y1), (x1 - 10, y1)], palette::DEADLOCK, 3);
            s.arrow_head((lane, y1), (x1, y1), 13, palette::DEADLOCK);
            // Labelled as every edge of the cycle, under its bottom run, clear of the nodes.
            s.text_mid((x0 + lane) / 2, y0 + 34, e.label, TINY, true, palette::DEADLOCK, Anchor::Center);
            continue;
        }
        let reverse = g.edges.iter().any(|o| o.from == e.to && o.to == e.from);
        let forward = |a: &Placed, b: &Placed| b.x - b.w as f64 / 2.0 > a.x + a.w as f64 / 2.0;
        if columns && forward(a, b) {
            // From the right side of the waiting node to the left side of
            // what it waits for: between the columns, clear of the nodes
            // stacked in them. Many edges into one node (tasks queued on one
            // lock) carry their common label once, on the middle one.
            let port = |p: &Placed, side: f64| Placed { x: p.x + side * p.w as f64 / 2.0, y: p.y, w: 0, h: 0 };
            let mut fan: Vec<&Edge> = g.edges.iter().filter(|o| o.to == e.to && o.label == e.label).collect();
            let y_of = |o: &Edge| placed[o.from].as_ref().map_or(0.0, |p| p.y);
            fan.sort_by(|o, q| y_of(o).total_cmp(&y_of(q)));
            let named = fan.len() < 3 || std::ptr::eq(fan[fan.len() / 2], e);
            let e = Edge { label: if named { e.label } else { "" }, ..e.clone() };
            labels.extend(draw_edge(&mut s, &port(a, 1.0), &port(b, -1.0), &e, reverse, &nodes));
            continue;
        }
        labels.extend(draw_edge(&mut s, a, b, e, reverse, &nodes));
    }
    for &i in &ring {
        if let Some(p) = &placed[i] {
            draw_node(&mut s, m, &g.nodes[i], p);
            // Who else could release a resource of the ring, by how: an
            // RWMutex's other readers hold it, a queued writer does not.
            let others: Vec<&Edge> = g.edges.iter().filter(|e| e.from == i && !e.cycle && !in_ring(e.to)).collect();
            if !others.is_empty() {
                let text = by_label(&others)
                    .iter()
                    .map(|(label, es)| {
                        let names: Vec<&str> = es.iter().map(|e| g.nodes[e.to].label.as_str()).collect();
                        format!("{label}: {}", names.join(", "))
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                let text = format!("also {text}");
                // Under the node, centred; where the cycle's edge leaves
                // straight down (a snake's column), beside it on the left,
                // clear of the edge and of its label on the right, and of
                // the picture's edge.
                let down = g
                    .edges
                    .iter()
                    .find(|e| e.from == i && e.cycle)
                    .and_then(|e| placed[e.to].as_ref())
                    .is_some_and(|b| b.y > p.y + p.h as f64 / 2.0 && (b.x - p.x).abs() < p.w as f64 / 2.0);
                let y = p.y as i32 + p.h / 2 + 18;
                if down {
                    let text = layout::fit_or_cut(&text, TINY, false, 320.min(p.x as i32 - 10 - MARGIN));
                    s.text(p.x as i32 - 10, y, &text, TINY, false, palette::EDGE, Anchor::Right);
                } else {
                    // Centred under the node; else, where an edge or its
                    // label would run through it there (a narrow picture
                    // steepens the edges), beside the centre on the right
                    // or on the left, or above the node.
                    let text = layout::fit_or_cut(&text, TINY, false, 320);
                    let w = fonts::width(&text, TINY, false);
                    let (cx, above) = (p.x as i32, p.y as i32 - p.h / 2 - 8);
                    let spots = [(cx - w / 2, y), (cx + 12, y), (cx - 12 - w, y), (cx - w / 2, above)];
                    let clear = |&(x0, y0): &(i32, i32)| {
                        let r = [x0 as f64 - 3.0, y0 as f64 - TINY - 2.0, (x0 + w) as f64 + 3.0, y0 as f64 + 4.0];
                        let apart = |q: &Boxed| r[2] < q[0] || r[0] > q[2] || r[3] < q[1] || r[1] > q[3];
                        x0 >= MARGIN
                            && x0 + w <= width - MARGIN
                            && !lines.iter().any(|&line| crosses(line, r))
                            && labels.iter().all(apart)
                            && nodes.iter().all(|n| {
                                let (hw, hh) = (n.w as f64 / 2.0, n.h as f64 / 2.0);
                                apart(&[n.x - hw, n.y - hh, n.x + hw, n.y + hh])
                            })
                    };
                    match spots.iter().position(clear) {
                        // As it was always drawn: centred.
                        None | Some(0) => s.text(cx, y, &text, TINY, false, palette::EDGE, Anchor::Center),
                        Some(i) => s.text(spots[i].0, spots[i].1, &text, TINY, false, palette::EDGE, Anchor::Left),
                    }
                }
            }
        }
    }

    // Tasks blocked behind the cycle (or outside it): one row each (a
    // group of tasks that wait alike is one).
    let rows: Vec<&Edge> = g
        .edges
        .iter()
        .filter(|e| {
            !in_ring(e.from)
                && matches!(g.nodes[e.from].kind, NodeKind::Task(_) | NodeKind::Group(_))
                && is_wait(e.label)
        })
        .collect();
    let mut y = ring_bottom + 34;
    if !rows.is_empty() {
        s.rect(MARGIN, y, width - MARGIN, y + 1, palette::GRID);
        y += 26;
        let heading = if listed { "Blocked at the end of the run" } else { "Blocked behind the cycle" };
        s.text(MARGIN, y, heading, TEXT, true, palette::INK, Anchor::Left);
        y += 18;
        let task_w = rows.iter().map(|e| sizes[e.from].0).max().unwrap_or(0);
        let wait_w = rows.iter().map(|e| sizes[e.to].0).max().unwrap_or(0);
        // Task, what it waits for, who could release it, on one line when
        // the picture is wide enough; in a narrow one the list goes under
        // the resource, and then the resource under the task (44 px under:
        // room for the edge's label beside it, clear of both boxes).
        let right = width - MARGIN;
        // Between task and resource: room for the edge's label.
        let gap = 90 + label_excess(&g);
        let side_by_side = MARGIN + 10 + task_w + gap + wait_w <= right;
        let list_beside = side_by_side && MARGIN + 10 + task_w + gap + wait_w + 40 + 160 <= right;
        for e in rows {
            let (wa, ha) = sizes[e.from];
            let (wb, hb) = sizes[e.to];
            let top = y + 10;
            let (a, b, mut bottom) = if side_by_side {
                let (h, x) = (ha.max(hb), MARGIN + 10 + task_w + gap + wait_w / 2);
                let a = Placed { x: (MARGIN + 10 + task_w / 2) as f64, y: (top + h / 2) as f64, w: wa, h: ha };
                (a, Placed { x: x as f64, y: (top + h / 2) as f64, w: wb, h: hb }, top + h)
            } else {
                let x = (MARGIN + 50 + wb / 2).min(right - wb / 2 - 4);
                let a = Placed { x: (MARGIN + 10 + wa / 2) as f64, y: (top + ha / 2) as f64, w: wa, h: ha };
                (a, Placed { x: x as f64, y: (top + ha + 44 + hb / 2) as f64, w: wb, h: hb }, top + ha + 44 + hb)
            };
            draw_edge(&mut s, &a, &b, e, false, &[&a, &b]);
            draw_node(&mut s, m, &g.nodes[e.from], &a);
            draw_node(&mut s, m, &g.nodes[e.to], &b);
            let (bx, by) = (b.x as i32, b.y as i32);
            // Who could release it, as names in their colours.
            // (A join waits for a task: its own waits are in its own row.)
            let joined = matches!(g.nodes[e.to].kind, NodeKind::Task(_));
            // The row's own task is left out: the resource's edges are every
            // waiter's, and a task in `wait()` is not notified by itself.
            let rel: Vec<&Edge> = g.edges.iter().filter(|r| r.from == e.to && r.to != e.from && !joined).collect();
            // Each label leads its names (an RWMutex's readers hold it, its
            // queued writer does not).
            let rel: Vec<&Edge> = by_label(&rel).into_iter().flat_map(|(_, es)| es).collect();
            if !rel.is_empty() {
                let (mut x, cy) = if list_beside {
                    (bx + wait_w / 2 + 40, by)
                } else {
                    bottom += 22;
                    (bx - wb / 2, bottom - 8)
                };
                let lead_of =
                    |k: usize| (k == 0 || rel[k - 1].label != rel[k].label).then(|| format!("{}:", rel[k].label));
                let more = |left: usize| format!("and {left} more");
                for (k, r) in rel.iter().enumerate() {
                    let n = &g.nodes[r.to];
                    let lead = lead_of(k);
                    let lead_w = lead.as_ref().map_or(0, |l| fonts::width(l, SMALL, false) + 10);
                    let w =
                        fonts::width(&n.label, SMALL, true) + if matches!(n.kind, NodeKind::Task(_)) { 17 } else { 0 };
                    // The names that fit, each leaving room to count the
                    // ones after it; those that do not fit are counted.
                    let after = rel.len() - k - 1;
                    let room = if after == 0 { 0 } else { 16 + fonts::width(&more(after), SMALL, false) };
                    if x + lead_w + w + room > right && k > 0 {
                        s.text_mid(x, cy, &more(rel.len() - k), SMALL, false, palette::EDGE, Anchor::Left);
                        break;
                    }
                    if let Some(lead) = lead {
                        s.text_mid(x, cy, &lead, SMALL, false, palette::EDGE, Anchor::Left);
                        x += lead_w;
                    }
                    if let NodeKind::Task(t) = n.kind {
                        s.rect(x, cy - 6, x + 12, cy + 6, m.task_colour(t));
                        x += 17;
                    }
                    let color = if n.cycle { palette::DEADLOCK } else { palette::INK };
                    s.text_mid(x, cy, &n.label, SMALL, true, color, Anchor::Left);
                    x += fonts::width(&n.label, SMALL, true) + 16;
                }
            }
            y = bottom + 4;
        }
    }

    let mut items: Vec<(Swatch, String)> = vec![
        (Swatch::Outline(palette::AXIS.into()), "task, in its colour in every chart".into()),
        (Swatch::Hex(palette::EDGE.into(), palette::RESOURCE_FILL.into()), "lock, channel or pipe".into()),
    ];
    if g.nodes.iter().any(|n| matches!(n.kind, NodeKind::Group(_))) {
        items.push((Swatch::Outline(palette::MUTED.into()), "tasks that wait alike, in one box".into()));
    }
    // Only name what is drawn: a trace without a deadlock has no cycle edges.
    let has_cycle = g.edges.iter().any(|e| e.cycle);
    if has_cycle {
        items.push((Swatch::Arrow(palette::DEADLOCK.into()), "deadlock cycle".into()));
    }
    if g.edges.iter().any(|e| !e.cycle) {
        let notify = g.edges.iter().any(|e| e.label == wait_label("wait"));
        let label = match (has_cycle, notify) {
            (true, _) => "outside the cycle",
            (false, true) => "waits for (or for a notify) / held by",
            (false, false) => "waits for / held by",
        };
        items.push((Swatch::Arrow(palette::EDGE.into()), label.into()));
    }
    let y = layout::legend(&mut s, &items, MARGIN, width - MARGIN, y + 20);
    s.height = (y + MARGIN) as u32;
    Ok(s)
}

/// Gaps between nodes laid out in layers: side by side, and between layers.
const LAYER_GAP_X: i32 = 60;
const LAYER_GAP_Y: i32 = 90;
/// Between two columns (room for an edge's label; see [`column_gap`]).
const COLUMN_GAP: i32 = 80;
/// Between two nodes stacked in one column.
const STACK_GAP: i32 = 22;

/// What a wait label longer than "waits for" ("waits for a notify") needs
/// beyond the room left for "waits for", to be read along a horizontal edge.
/// (The room was made for "waits for"; the other labels fit it.)
fn label_excess(g: &Graph) -> i32 {
    let excess = |e: &Edge| fonts::width(e.label, TINY, e.cycle) - fonts::width("waits for", TINY, e.cycle);
    g.edges.iter().filter(|e| is_wait(e.label)).map(excess).max().unwrap_or(0).max(0)
}

/// The room between two columns of layers.
fn column_gap(g: &Graph) -> i32 {
    COLUMN_GAP + label_excess(g)
}

/// Each node's layer in a graph without a cycle: its height above the sinks,
/// the longest path to a node that waits for nothing. A node is then one
/// layer past the deepest node it points to, so that a task sits right
/// before what it waits for, and that right before whoever holds it.
/// Relaxed `n` times, so that a cycle (not expected without a deadlock
/// report) still ends, with its nodes at most `n` high.
fn layers_of(g: &Graph) -> Vec<usize> {
    let n = g.nodes.len();
    let mut height = vec![0usize; n];
    for _ in 0..n {
        let mut changed = false;
        for e in &g.edges {
            if e.from != e.to && height[e.from] < height[e.to] + 1 && height[e.to] < n {
                height[e.from] = height[e.to] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    height
}

/// A graph without a cycle in layers ([`layers_of`]), with its node sizes
/// and the y its layout starts at: what the two ways of placing the layers
/// (columns and rows) share.
struct Layers<'a> {
    g: &'a Graph,
    sizes: &'a [(i32, i32)],
    height: Vec<usize>,
    top: i32,
}

impl Layers<'_> {
    /// The layers, highest first (the order they are placed in).
    fn highest_first(&self) -> impl Iterator<Item = usize> {
        (0..=self.height.iter().copied().max().unwrap_or(0)).rev()
    }

    /// The nodes of `layer`, in the order to draw them, each with where it
    /// wants to be (`pos` of a placed node): level with the nodes already
    /// placed that point to it (their mean); a node nothing placed points to,
    /// level with what it points to in the `first` pass, if there was one
    /// (so that tasks waiting for one thing end up next to each other); else
    /// after the others, in graph order.
    fn members(
        &self,
        layer: usize,
        placed: &[Option<Placed>],
        first: &[Option<Placed>],
        pos: fn(&Placed) -> f64,
    ) -> Vec<(f64, usize)> {
        let g = self.g;
        let mean = |xs: Vec<f64>| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
        let mut members: Vec<(f64, usize)> = (0..g.nodes.len())
            .filter(|&i| self.height[i] == layer)
            .map(|i| {
                let from = g.edges.iter().filter(|e| e.to == i).filter_map(|e| placed[e.from].as_ref().map(pos));
                let to = g.edges.iter().filter(|e| e.from == i).filter_map(|e| first[e.to].as_ref().map(pos));
                (mean(from.collect()).or_else(|| mean(to.collect())).unwrap_or(f64::INFINITY), i)
            })
            .collect();
        members.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        members
    }

    /// Columns from `left`, the highest layer first. In a column a node sits
    /// level with the nodes that point to it (their mean y) as far as the
    /// nodes above it allow; the first column keeps the graph's own order.
    fn columns(&self, placed: &mut [Option<Placed>], first: &[Option<Placed>], left: i32) {
        let sizes = self.sizes;
        let mut x = left;
        for layer in self.highest_first() {
            let members = self.members(layer, placed, first, |p| p.y);
            let Some(w) = members.iter().map(|&(_, i)| sizes[i].0).max() else { continue };
            let mut next = self.top as f64;
            for (want, i) in members {
                let half = sizes[i].1 as f64 / 2.0;
                let y = if want.is_finite() { want.max(next + half) } else { next + half }.round();
                placed[i] = Some(Placed { x: (x + w / 2) as f64, y, w: sizes[i].0, h: sizes[i].1 });
                next = y + half + STACK_GAP as f64;
            }
            x += w + column_gap(self.g);
        }
    }

    /// Rows from the top, the highest layer first, for layers too many or
    /// too wide for columns. In a row a node sits under the nodes that point
    /// to it (their mean x) as far as its neighbours allow; the first row
    /// keeps the graph's own order. A row too wide for the picture wraps.
    fn rows(&self, placed: &mut [Option<Placed>], first: &[Option<Placed>], left: i32, right: i32) {
        let sizes = self.sizes;
        let mut y = self.top;
        for layer in self.highest_first() {
            let members = self.members(layer, placed, first, |p| p.x);
            if members.is_empty() {
                continue;
            }
            // Rows of the layer: as many nodes as fit across the picture.
            let mut rows: Vec<Vec<(f64, usize)>> = vec![Vec::new()];
            let mut used = 0;
            for m in members {
                let w = sizes[m.1].0 + LAYER_GAP_X;
                if used + w > right - left + LAYER_GAP_X && !rows.last().unwrap().is_empty() {
                    rows.push(Vec::new());
                    used = 0;
                }
                used += w;
                rows.last_mut().unwrap().push(m);
            }
            for row in rows {
                let h = row.iter().map(|&(_, i)| sizes[i].1).max().unwrap_or(0);
                let total: i32 =
                    row.iter().map(|&(_, i)| sizes[i].0).sum::<i32>() + LAYER_GAP_X * (row.len() as i32 - 1);
                // Each node at its wanted x as far as its neighbours allow (left
                // to right, then back from the right edge); a row that wants
                // nowhere (the top one) packed and centred.
                let mut xs: Vec<f64> = Vec::with_capacity(row.len());
                let centred = row.iter().all(|m| !m.0.is_finite());
                let mut edge = if centred { ((left + right - total) / 2).max(left) } else { left } as f64;
                for &(want, i) in &row {
                    let half = sizes[i].0 as f64 / 2.0;
                    let packed = edge + half;
                    xs.push(if want.is_finite() { want.max(packed) } else { packed });
                    edge = xs.last().unwrap() + half + LAYER_GAP_X as f64;
                }
                let mut limit = right as f64;
                for (j, &(_, i)) in row.iter().enumerate().rev() {
                    let half = sizes[i].0 as f64 / 2.0;
                    // A node wider than the picture starts at its left edge.
                    xs[j] = xs[j].min(limit - half).max(left as f64 + half).round();
                    limit = xs[j] - half - LAYER_GAP_X as f64;
                }
                for (j, &(_, i)) in row.iter().enumerate() {
                    placed[i] = Some(Placed { x: xs[j], y: (y + h / 2) as f64, w: sizes[i].0, h: sizes[i].1 });
                }
                y += h + LAYER_GAP_Y;
            }
        }
    }
}

/// True if a graph without a cycle can be drawn in layers: as columns, or
/// as rows that each fit across the picture (see [`place_in_layers`]).
fn layers_fit(g: &Graph, sizes: &[(i32, i32)], width: i32) -> bool {
    let height = layers_of(g);
    let room = width - 2 * MARGIN - 20;
    let width_of = |l: usize| {
        let ws: Vec<i32> = (0..g.nodes.len()).filter(|&i| height[i] == l).map(|i| sizes[i].0).collect();
        ws.iter().sum::<i32>() + LAYER_GAP_X * (ws.len() as i32 - 1).max(0)
    };
    let layers = height.iter().copied().max().map_or(0, |h| h + 1);
    let columns =
        (0..layers).map(|l| (0..g.nodes.len()).filter(|&i| height[i] == l).map(|i| sizes[i].0).max().unwrap_or(0));
    let across = columns.sum::<i32>() + column_gap(g) * (layers as i32 - 1).max(0);
    across <= room || (0..layers).all(|l| width_of(l) <= room)
}

/// Places every node of a graph without a cycle in layers: columns from the
/// left when they fit across the picture (a chain of waits reads like a
/// sentence, and many tasks waiting for one lock stack up in one column),
/// else rows from the top. Returns true for columns.
fn place_in_layers(g: &Graph, sizes: &[(i32, i32)], placed: &mut [Option<Placed>], top: i32, width: i32) -> bool {
    let layers = Layers { g, sizes, height: layers_of(g), top };
    let (left, right) = (MARGIN + 10, width - MARGIN - 10);
    // The columns: each as wide as its widest node.
    let col_w: Vec<i32> = layers
        .highest_first()
        .map(|l| (0..g.nodes.len()).filter(|&i| layers.height[i] == l).map(|i| sizes[i].0).max().unwrap_or(0))
        .filter(|&w| w > 0)
        .collect();
    let total = col_w.iter().sum::<i32>() + column_gap(g) * (col_w.len() as i32 - 1);
    let columns = total <= right - left;
    // Twice: the second pass puts the nodes nothing points to (the first
    // layer's, above all) by where the first put what they point to.
    let pass = |out: &mut [Option<Placed>], hint: &[Option<Placed>]| {
        if columns {
            layers.columns(out, hint, left + (right - left - total) / 2);
        } else {
            layers.rows(out, hint, left, right);
        }
    };
    let none: Vec<Option<Placed>> = (0..g.nodes.len()).map(|_| None).collect();
    let mut first: Vec<Option<Placed>> = (0..g.nodes.len()).map(|_| None).collect();
    pass(&mut first, &none);
    pass(placed, &first);
    columns
}

/// The point where the segment from the centre of `p` towards `(dx, dy)`
/// leaves its box, plus a gap.
fn exit(p: &Placed, dx: f64, dy: f64, gap: f64) -> (f64, f64) {
    let (hw, hh) = (p.w as f64 / 2.0 + gap, p.h as f64 / 2.0 + gap);
    let tx = if dx.abs() > 1e-9 { hw / dx.abs() } else { f64::INFINITY };
    let ty = if dy.abs() > 1e-9 { hh / dy.abs() } else { f64::INFINITY };
    let t = tx.min(ty);
    (p.x + dx * t, p.y + dy * t)
}

/// Draws edge `e` from `a` to `b` with its label; `nodes` are the boxes a
/// label that does not fit along a short edge must keep clear of.
/// Draws edge `e` from `a` to `b` with its label; returns the box the
/// label takes (left, top, right, bottom), if it has one.
fn draw_edge(s: &mut Scene, a: &Placed, b: &Placed, e: &Edge, reverse: bool, nodes: &[&Placed]) -> Option<Boxed> {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 1.0 {
        return None;
    }
    let (ux, uy) = (dx / len, dy / len);
    // Two edges between the same nodes: move each to its own side.
    let off = if reverse { 7.0 } else { 0.0 };
    let (ox, oy) = (-uy * off, ux * off);
    let p0 = exit(a, ux, uy, 4.0);
    let p1 = exit(b, -ux, -uy, 5.0);
    let (x0, y0) = ((p0.0 + ox).round() as i32, (p0.1 + oy).round() as i32);
    let (x1, y1) = ((p1.0 + ox).round() as i32, (p1.1 + oy).round() as i32);
    let color = if e.cycle { palette::DEADLOCK } else { palette::EDGE };
    let wide = if e.cycle { 3 } else { 2 };
    // Stop the line at the arrow head's base.
    let head = 13.0;
    let seg = (((x1 - x0) as f64).powi(2) + ((y1 - y0) as f64).powi(2)).sqrt().max(1.0);
    let k = ((seg - head + 2.0) / seg).max(0.0);
    let xb = x0 + ((x1 - x0) as f64 * k).round() as i32;
    let yb = y0 + ((y1 - y0) as f64 * k).round() as i32;
    s.line((x0, y0), (xb, yb), color, wide);
    s.arrow_head((x0, y0), (x1, y1), head as i32, color);
    // The label beside the middle, on the left of the direction of travel
    // (outside a clockwise ring). An edge too short to carry it there takes
    // it on whichever side keeps clear of every node, so that no edge of a
    // cycle goes unnamed; only when neither side is clear is it left off.
    if e.label.is_empty() {
        return None;
    }
    let w = fonts::width(e.label, TINY, e.cycle) as f64;
    let (mx, my) = ((x0 + x1) as f64 / 2.0, (y0 + y1) as f64 / 2.0);
    let at = |side: f64| {
        let (lx, ly) = (mx + uy * 12.0 * side, my - ux * 12.0 * side);
        let anchor = if uy * side.signum() > 0.3 {
            Anchor::Left
        } else if uy * side.signum() < -0.3 {
            Anchor::Right
        } else {
            Anchor::Center
        };
        (lx.round() as i32, ly.round() as i32, anchor)
    };
    let side = if reverse { 2.2 } else { 1.0 };
    let spot = if seg >= w * (ux.abs() * 0.6 + 0.4) + 40.0 {
        Some(at(side))
    } else {
        [at(side), at(-side)].into_iter().find(|&(lx, ly, anchor)| {
            let x0 = match anchor {
                Anchor::Left => lx as f64,
                Anchor::Right => lx as f64 - w,
                Anchor::Center => lx as f64 - w / 2.0,
            };
            let (y0, y1) = (ly as f64 - TINY * 0.6, ly as f64 + TINY * 0.6);
            nodes.iter().all(|n| {
                let (hw, hh) = (n.w as f64 / 2.0 + 4.0, n.h as f64 / 2.0 + 4.0);
                x0 + w < n.x - hw || x0 > n.x + hw || y1 < n.y - hh || y0 > n.y + hh
            })
        })
    };
    let (lx, ly, anchor) = spot?;
    s.text_mid(lx, ly, e.label, TINY, e.cycle, color, anchor);
    let x0 = match anchor {
        Anchor::Left => lx as f64,
        Anchor::Right => lx as f64 - w,
        Anchor::Center => lx as f64 - w / 2.0,
    };
    Some([x0, ly as f64 - TINY * 0.6, x0 + w, ly as f64 + TINY * 0.6])
}

/// The route round the right of a snake of an edge from `a` to `b` whose
/// straight line would run through other nodes (`nodes`): out of `a`'s
/// right side, along a lane at `lane`, into `b`'s right side, as the edge
/// closing the cycle goes round the left. In a narrow picture the snake is
/// one column, and ttrpc's grey "released by" from `client->server` up to
/// `serverConn.run` ran straight up it, under the cycle's edges and nodes:
/// only its arrowhead showed, and its label floated by another edge's.
/// `None` where the straight line is clear, or where the route is not (a
/// horizontal run across a node of the same row).
fn right_of_snake(a: &Placed, b: &Placed, nodes: &[&Placed], lane: i32) -> Option<Vec<(i32, i32)>> {
    let others: Vec<Boxed> = nodes
        .iter()
        .filter(|n| !std::ptr::eq(**n, a) && !std::ptr::eq(**n, b))
        .map(|n| [n.x - n.w as f64 / 2.0, n.y - n.h as f64 / 2.0, n.x + n.w as f64 / 2.0, n.y + n.h as f64 / 2.0])
        .collect();
    if !others.iter().any(|&r| crosses(((a.x, a.y), (b.x, b.y)), r)) {
        return None;
    }
    let ((ax, ay), (bx, by)) = ((a.x as i32 + a.w / 2 + 4, a.y as i32), (b.x as i32 + b.w / 2 + 5, b.y as i32));
    let path = vec![(ax, ay), (lane, ay), (lane, by), (bx, by)];
    let clear = lane > ax.max(bx) + 10 && segments(&path).all(|line| others.iter().all(|&r| !crosses(line, r)));
    clear.then_some(path)
}

/// The straight pieces of a path.
fn segments(path: &[(i32, i32)]) -> impl Iterator<Item = Segment> + '_ {
    path.windows(2).map(|w| ((w[0].0 as f64, w[0].1 as f64), (w[1].0 as f64, w[1].1 as f64)))
}

/// Draws edge `e` along `path` (from [`right_of_snake`]), its label beside
/// the lane, left of it, else above the run into the node it points to,
/// else above the run out of the other, wherever it keeps clear of the
/// `nodes`, of the `labels` drawn and of the routes' `lines`; returns the
/// label's box.
fn draw_routed(
    s: &mut Scene,
    path: &[(i32, i32)],
    e: &Edge,
    nodes: &[&Placed],
    labels: &[Boxed],
    lines: &[Segment],
) -> Option<Boxed> {
    let color = if e.cycle { palette::DEADLOCK } else { palette::EDGE };
    let [from, (lane, y0), (_, y1), tip] = path else { return None };
    // Stopped at the arrow head's base, as `draw_edge` stops a line.
    s.path(vec![*from, (*lane, *y0), (*lane, *y1), (tip.0 + 11, tip.1)], color, 2);
    s.arrow_head((*lane, *y1), *tip, 13, color);
    if e.label.is_empty() {
        return None;
    }
    let w = fonts::width(e.label, TINY, e.cycle) as f64;
    let h = TINY * 0.6;
    let beside = (*lane as f64 - 8.0 - w, ((y0 + y1) / 2) as f64);
    let above = |x0: i32, x1: i32, y: i32| ((x0 + x1) as f64 / 2.0 - w / 2.0, (y - 12) as f64);
    let spots = [beside, above(tip.0 + 14, *lane, tip.1), above(from.0, *lane, from.1)];
    let clear = |&(x, y): &(f64, f64)| {
        let r = [x - 3.0, y - h - 2.0, x + w + 3.0, y + h + 2.0];
        let apart = |q: &Boxed| r[2] < q[0] || r[0] > q[2] || r[3] < q[1] || r[1] > q[3];
        let node_box = |n: &&Placed| {
            [n.x - n.w as f64 / 2.0, n.y - n.h as f64 / 2.0, n.x + n.w as f64 / 2.0, n.y + n.h as f64 / 2.0]
        };
        nodes.iter().map(node_box).all(|q| apart(&q))
            && labels.iter().all(apart)
            && !lines.iter().any(|&line| crosses(line, r))
    };
    let &(x, y) = spots.iter().find(|p| clear(p))?;
    s.text_mid(x.round() as i32, y.round() as i32, e.label, TINY, e.cycle, color, Anchor::Left);
    Some([x, y - h, x + w, y + h])
}

/// A box on the picture: left, top, right, bottom.
type Boxed = [f64; 4];

/// A straight line between two points of the picture.
type Segment = ((f64, f64), (f64, f64));

/// True if the segment from `a` to `b` passes through box `r`
/// (Liang-Barsky clipping).
fn crosses((a, b): Segment, r: Boxed) -> bool {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [(-dx, a.0 - r[0]), (dx, r[2] - a.0), (-dy, a.1 - r[1]), (dy, r[3] - a.1)] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
            continue;
        }
        let t = q / p;
        if p < 0.0 {
            t0 = t0.max(t);
        } else {
            t1 = t1.min(t);
        }
        if t0 > t1 {
            return false;
        }
    }
    true
}

fn draw_node(s: &mut Scene, m: &Model, n: &Node, p: &Placed) {
    let (x, y) = (p.x as i32, p.y as i32);
    let (x0, y0, x1, y1) = (x - p.w / 2, y - p.h / 2, x + p.w / 2, y + p.h / 2);
    let name_color = if n.cycle { palette::DEADLOCK } else { palette::INK };
    let lines = label_lines(&n.label);
    let text_top = y0 + 21;
    match n.kind {
        NodeKind::Task(_) | NodeKind::Group(_) => {
            // A group has no one task's colour.
            let c = if let NodeKind::Task(t) = n.kind { m.task_colour(t) } else { palette::MUTED };
            s.rect(x0, y0, x1, y1, palette::WHITE);
            s.frame(x0, y0, x1, y1, c, 3);
            s.rect(x0, y0, x0 + 8, y1, c);
            for (i, l) in lines.iter().enumerate() {
                s.text(x + 4, text_top + 2 + i as i32 * LINE, l, TEXT, true, name_color, Anchor::Center);
            }
            draw_details(s, n, x + 4, y1 - 11);
        }
        _ => {
            let tip = 18;
            let border: Rgb = if n.cycle { palette::DEADLOCK } else { palette::EDGE };
            let hex = |d: i32| {
                vec![
                    (x0 - d, y),
                    (x0 + tip - d, y0 - d),
                    (x1 - tip + d, y0 - d),
                    (x1 + d, y),
                    (x1 - tip + d, y1 + d),
                    (x0 + tip - d, y1 + d),
                ]
            };
            s.polygon(hex(2), border);
            s.polygon(hex(0), palette::RESOURCE_FILL);
            for (i, l) in lines.iter().enumerate() {
                s.text(x, text_top + i as i32 * LINE, l, TEXT, true, name_color, Anchor::Center);
            }
            draw_details(s, n, x, y1 - 9);
        }
    }
}

/// A node's detail lines, centred on `x`, the last at `y`.
fn draw_details(s: &mut Scene, n: &Node, x: i32, y: i32) {
    let details = detail_lines(n);
    let top = y - DETAIL_LINE * (details.len() as i32 - 1);
    for (i, d) in details.iter().enumerate() {
        s.text(x, top + DETAIL_LINE * i as i32, d, TINY, false, palette::MUTED, Anchor::Center);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs cut short by a step limit leave many tasks blocked without a
    /// deadlock report: their graphs go in layers, which must keep every
    /// node clear of every other and inside the picture.
    #[test]
    fn layers_never_put_two_nodes_on_top_of_each_other() {
        let configs: &[(&str, &[(&str, &str)])] = &[
            ("ttrpc", &[("server", "v1.2.4"), ("client", "v1.2.4")]),
            ("ttrpc", &[("server", "v1.0.2"), ("client", "v1.0.2"), ("callers", "12")]),
            ("ttrpc", &[("server", "v1.1.0"), ("client", "v1.2.3"), ("pipe-buffer", "6000")]),
            ("philosophers", &[("philosophers", "6"), ("ordered", "true")]),
            ("flink", &[("flink-version", "1.13.2"), ("scenario", "pipeline")]),
        ];
        let mut layered = 0;
        for (model, params) in configs {
            let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let model = sim::models::find(model).unwrap().configure(&params).unwrap();
            for seed in 0..8 {
                for max_steps in [20, 45, 90, 200] {
                    let run = model.run_with(sim::Sim::new(seed).record(true).max_steps(max_steps));
                    let trace = run.trace.unwrap();
                    let m = Model::new(&trace).unwrap();
                    let g = Graph::new(&m);
                    if !g.ring.is_empty() || g.nodes.len() < 2 {
                        continue;
                    }
                    layered += 1;
                    let sizes: Vec<(i32, i32)> = g.nodes.iter().map(node_size).collect();
                    for width in [600, 1200] {
                        let mut placed: Vec<Option<Placed>> = (0..g.nodes.len()).map(|_| None).collect();
                        place_in_layers(&g, &sizes, &mut placed, 100, width);
                        let boxes: Vec<&Placed> =
                            placed.iter().map(|p| p.as_ref().expect("every node placed")).collect();
                        for (i, a) in boxes.iter().enumerate() {
                            let fits = a.w <= width - 2 * MARGIN - 20;
                            let (x0, x1) = (a.x - a.w as f64 / 2.0, a.x + a.w as f64 / 2.0);
                            assert!(
                                !fits || (x0 >= 0.0 && x1 <= width as f64),
                                "seed {seed}: {} off the picture",
                                g.nodes[i].label
                            );
                            for (j, b) in boxes.iter().enumerate().skip(i + 1) {
                                let apart = (a.x - b.x).abs() >= (a.w + b.w) as f64 / 2.0
                                    || (a.y - b.y).abs() >= (a.h + b.h) as f64 / 2.0;
                                assert!(
                                    apart,
                                    "seed {seed} width {width}: {} and {} overlap",
                                    g.nodes[i].label, g.nodes[j].label
                                );
                            }
                        }
                    }
                }
            }
        }
        assert!(layered >= 50, "only {layered} layered graphs");
    }

    #[test]
    fn trig() {
        for i in 0..16 {
            let t = i as f64 / 16.0;
            let (s, c) = sin_cos(t);
            let a = t * std::f64::consts::TAU;
            assert!((s - a.sin()).abs() < 1e-12 && (c - a.cos()).abs() < 1e-12, "{t}");
        }
    }
}
