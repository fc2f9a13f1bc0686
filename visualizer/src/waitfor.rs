//! The wait-for graph at the deadlock.
//!
//! Tasks (boxes, in their task colour) and resources (grey hexagons) are
//! nodes; a task points to the resource it waits for ("waits for"), a
//! resource to the tasks that could release it ("held by" for a lock,
//! "released by" for a channel or pipe, whose other end they hold). The
//! cycle is laid out on a circle and drawn in red; tasks blocked behind it,
//! and holders outside it, sit further out in grey.
//!
//! Without a deadlock report, the graph is built from the tasks still
//! blocked at the end of the trace, and the locks held then.
//!
//! ```
//! let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let m = visualizer::Model::new(&trace).unwrap();
//! let g = visualizer::waitfor::Graph::new(&m);
//! // T1 -> B -> T2 -> A -> T1
//! assert_eq!(g.nodes.len(), 4);
//! assert_eq!(g.edges.iter().filter(|e| e.cycle).count(), 4);
//! ```

use crate::fonts;
use crate::layout::{self, Swatch, MARGIN, SMALL, TEXT, TINY};
use crate::model::Model;
use crate::palette::{self, Rgb};
use crate::scene::{Anchor, Scene};
use crate::{Error, Options};

/// What a node stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A task, by id.
    Task(u32),
    /// A resource, by id.
    Resource(u32),
    /// What a `select` or a `join` waits on, by its description.
    Other(String),
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
    pub fn new(m: &Model) -> Graph {
        let mut g = Graph { nodes: Vec::new(), edges: Vec::new(), ring: Vec::new(), caption: String::new() };
        match &m.trace.deadlock {
            Some(d) => {
                let n = d.cycle.len();
                let scope = if d.global { "global" } else { "partial" };
                g.caption = format!(
                    "At the deadlock, step {} ({}): {} task{} in the cycle, {} blocked behind it ({scope} deadlock).",
                    crate::columns::group(d.step),
                    crate::columns::duration(d.time),
                    n,
                    if n == 1 { "" } else { "s" },
                    d.behind.len()
                );
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
                    g.ring.push(tnodes[i]);
                    if bt.op == "join" {
                        g.edge(tnodes[i], next, "waits for", true);
                        continue;
                    }
                    let r = g.wait_node(m, bt.resource, &bt.waits_for, &bt.kind, &bt.op, true);
                    g.ring.push(r);
                    g.edge(tnodes[i], r, "waits for", true);
                    let rel = release_label(&bt.kind);
                    g.edge(r, next, rel, true);
                    for name in &bt.released_by {
                        if let Some(t) = m.trace.tasks.iter().find(|t| &t.name == name) {
                            if t.id != cycle_ids[(i + 1) % n] {
                                let tn = g.task_node(m, t.id, String::new(), cycle_ids.contains(&t.id));
                                g.edge(r, tn, rel, false);
                            }
                        }
                    }
                }
                for bt in &d.behind {
                    let detail = bt.stack.first().map(|f| frame_text(&f.name, &f.site)).unwrap_or_default();
                    let tn = g.task_node(m, bt.task, detail, false);
                    if bt.op == "join" {
                        if let Some(t) = m.trace.tasks.iter().find(|t| t.name == bt.waits_for) {
                            let to = g.task_node(m, t.id, String::new(), cycle_ids.contains(&t.id));
                            g.edge(tn, to, "waits for", false);
                        }
                        continue;
                    }
                    let r = g.wait_node(m, bt.resource, &bt.waits_for, &bt.kind, &bt.op, false);
                    g.edge(tn, r, "waits for", false);
                    for name in &bt.released_by {
                        if let Some(t) = m.trace.tasks.iter().find(|t| &t.name == name) {
                            let to = g.task_node(m, t.id, String::new(), cycle_ids.contains(&t.id));
                            g.edge(r, to, release_label(&bt.kind), false);
                        }
                    }
                }
            }
            None => {
                // No report: who is still blocked at the end, and who holds what they wait for.
                let mut blocked = 0;
                for (t, tt) in m.tasks.iter().enumerate() {
                    let Some(blk) = tt.blocks.last().filter(|b| b.open) else {
                        continue;
                    };
                    let Some(r) = blk.resource else { continue };
                    blocked += 1;
                    let detail = blk
                        .frame
                        .map(|f| &m.trace.frames[f as usize])
                        .map(|f| frame_text(&f.name, &f.site))
                        .unwrap_or_default();
                    let tn = g.task_node(m, t as u32, detail, false);
                    let kind = m.trace.resources[r as usize].kind.clone();
                    let rn = g.wait_node(m, Some(r), m.resource_name(r), &kind, &blk.op, false);
                    g.edge(tn, rn, "waits for", false);
                    for h in m.resources[r as usize].holds.iter().filter(|h| h.open) {
                        let hn = g.task_node(m, h.task, String::new(), false);
                        g.edge(rn, hn, "held by", false);
                    }
                }
                g.caption = if blocked == 0 {
                    format!(
                        "No deadlock, and no task blocked at the end of the run (verdict {}).",
                        m.trace.meta.verdict
                    )
                } else {
                    format!(
                        "No deadlock report: the {blocked} task{} still blocked at the end of the run (verdict {}).",
                        if blocked == 1 { "" } else { "s" },
                        m.trace.meta.verdict
                    )
                };
            }
        }
        g
    }

    /// True when there is anything to draw.
    pub fn has_edges(&self) -> bool {
        !self.edges.is_empty()
    }

    fn task_node(&mut self, m: &Model, t: u32, detail: String, cycle: bool) -> usize {
        if let Some(i) = self.nodes.iter().position(|n| n.kind == NodeKind::Task(t)) {
            if self.nodes[i].detail.is_empty() {
                self.nodes[i].detail = detail;
            }
            return i;
        }
        self.nodes.push(Node { kind: NodeKind::Task(t), label: m.task_name(t).to_string(), detail, cycle });
        self.nodes.len() - 1
    }

    fn wait_node(&mut self, m: &Model, r: Option<u32>, what: &str, kind: &str, op: &str, cycle: bool) -> usize {
        let key = match r {
            Some(r) => NodeKind::Resource(r),
            None => NodeKind::Other(what.to_string()),
        };
        if let Some(i) = self.nodes.iter().position(|n| n.kind == key) {
            self.nodes[i].cycle |= cycle;
            return i;
        }
        let label = match r {
            Some(r) => m.resource_name(r).to_string(),
            None => what.to_string(),
        };
        let detail = match (r, kind) {
            (Some(r), _) => {
                let k = m.trace.resources[r as usize].kind.as_str();
                if k == "rwmutex" {
                    "RWMutex".to_string()
                } else {
                    k.to_string()
                }
            }
            (None, "") => op.to_string(),
            (None, k) => k.to_string(),
        };
        self.nodes.push(Node { kind: key, label, detail, cycle });
        self.nodes.len() - 1
    }

    fn edge(&mut self, from: usize, to: usize, label: &'static str, cycle: bool) {
        if !self.edges.iter().any(|e| e.from == from && e.to == to) {
            self.edges.push(Edge { from, to, label, cycle });
        }
    }
}

fn release_label(kind: &str) -> &'static str {
    match kind {
        "mutex" | "rwmutex" | "monitor" => "held by",
        _ => "released by",
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

fn node_size(n: &Node) -> (i32, i32) {
    let w = fonts::width(&n.label, TEXT, true).max(fonts::width(&n.detail, TINY, false));
    match n.kind {
        NodeKind::Task(_) => (w + 28, 54),
        _ => (w + 48, 50),
    }
}

/// Lays out the wait-for graph of `m`.
pub fn scene(m: &Model, opts: &Options) -> Result<Scene, Error> {
    let g = Graph::new(m);
    if !g.has_edges() {
        return Ok(layout::empty(m, "Wait-for graph", &g.caption, opts.width));
    }
    let width = opts.width as i32;
    let mut s = Scene::new(opts.width, 0);
    let mut y = layout::title(&mut s, m, "Wait-for graph", MARGIN);
    if let Some(t) = fonts::fit(&g.caption, SMALL, false, width - 2 * MARGIN) {
        s.text(MARGIN, y + 8, &t, SMALL, false, palette::MUTED, Anchor::Left);
    }
    y += 24;

    // Ring: the cycle on a circle, starting at the top, clockwise.
    let sizes: Vec<(i32, i32)> = g.nodes.iter().map(node_size).collect();
    let mut pos: Vec<Option<(f64, f64)>> = vec![None; g.nodes.len()];
    let ring: Vec<usize> = if g.ring.is_empty() {
        // No cycle: every node on the circle, in creation order.
        (0..g.nodes.len()).collect()
    } else {
        g.ring.clone()
    };
    let k = ring.len().max(1);
    let perimeter: i32 = ring.iter().map(|&i| sizes[i].0.max(sizes[i].1 * 2) + 70).sum();
    let radius = (perimeter as f64 / std::f64::consts::TAU).max(if k <= 2 { 140.0 } else { 170.0 });
    let angle = |i: usize| -0.25 + i as f64 / k as f64;
    for (j, &i) in ring.iter().enumerate() {
        let (sn, cs) = sin_cos(angle(j));
        pos[i] = Some((radius * cs, radius * sn));
    }
    // Everything else further out, beside the node it is linked to.
    let mut depth = 1;
    while pos.iter().any(|p| p.is_none()) && depth < 8 {
        let mut placed_now: Vec<(usize, f64)> = Vec::new();
        for (i, p) in pos.iter().enumerate() {
            if p.is_some() {
                continue;
            }
            let anchor = g.edges.iter().find_map(|e| {
                let other = if e.from == i {
                    e.to
                } else if e.to == i {
                    e.from
                } else {
                    return None;
                };
                pos[other]
            });
            if let Some((ax, ay)) = anchor {
                let r = (ax * ax + ay * ay).sqrt().max(1.0);
                placed_now.push((i, turns_of(ax / r, ay / r)));
            }
        }
        if placed_now.is_empty() {
            // Unlinked leftovers: a row at the bottom.
            for (i, p) in pos.iter_mut().enumerate() {
                if p.is_none() {
                    *p = Some((-radius + 180.0 * (i % 6) as f64, radius + 180.0 * depth as f64));
                }
            }
            break;
        }
        // Spread nodes sharing an angle.
        let rr = radius + 175.0 * depth as f64;
        placed_now.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let min_sep = 190.0 / (rr * std::f64::consts::TAU);
        let mut last = f64::NEG_INFINITY;
        for (i, t) in placed_now {
            let t = if t - last < min_sep { last + min_sep } else { t };
            last = t;
            let (sn, cs) = sin_cos(t);
            pos[i] = Some((rr * cs, rr * sn));
        }
        depth += 1;
    }

    // Fit into the width: scale positions (not node sizes) if needed.
    let pts: Vec<(f64, f64)> = pos.iter().map(|p| p.unwrap_or((0.0, 0.0))).collect();
    let minx = pts.iter().zip(&sizes).map(|(p, s)| p.0 - s.0 as f64 / 2.0).fold(f64::INFINITY, f64::min);
    let maxx = pts.iter().zip(&sizes).map(|(p, s)| p.0 + s.0 as f64 / 2.0).fold(f64::NEG_INFINITY, f64::max);
    let miny = pts.iter().zip(&sizes).map(|(p, s)| p.1 - s.1 as f64 / 2.0).fold(f64::INFINITY, f64::min);
    let _maxy = pts.iter().zip(&sizes).map(|(p, s)| p.1 + s.1 as f64 / 2.0).fold(f64::NEG_INFINITY, f64::max);
    let avail = (width - 2 * MARGIN - 40) as f64;
    let maxw = sizes.iter().map(|s| s.0).max().unwrap_or(0) as f64;
    let scale = if maxx - minx > avail { ((avail - maxw) / (maxx - minx - maxw)).max(0.2) } else { 1.0 };
    let cx = width as f64 / 2.0 - (minx + maxx) / 2.0 * scale;
    let top = y as f64 + 40.0;
    let cy = top - miny * scale + (sizes.iter().map(|s| s.1).max().unwrap_or(0) as f64 / 2.0) * (1.0 - scale);
    let placed: Vec<Placed> = pts
        .iter()
        .zip(&sizes)
        .map(|(p, sz)| Placed { x: (cx + p.0 * scale).round(), y: (cy + p.1 * scale).round(), w: sz.0, h: sz.1 })
        .collect();
    let bottom = placed.iter().map(|p| p.y as i32 + p.h / 2).max().unwrap_or(y);

    // Edges under the nodes; grey ones first, the cycle on top.
    let mut order: Vec<&Edge> = g.edges.iter().collect();
    order.sort_by_key(|e| e.cycle);
    for e in order {
        let (a, b) = (&placed[e.from], &placed[e.to]);
        let reverse = g.edges.iter().any(|o| o.from == e.to && o.to == e.from);
        draw_edge(&mut s, a, b, e, reverse);
    }
    for (n, p) in g.nodes.iter().zip(&placed) {
        draw_node(&mut s, n, p);
    }

    let mut items: Vec<(Swatch, String)> = vec![
        (Swatch::Outline(palette::AXIS.into()), "task, in its colour in every chart".into()),
        (Swatch::Hex(palette::EDGE.into(), palette::RESOURCE_FILL.into()), "lock, channel or pipe".into()),
        (Swatch::Arrow(palette::DEADLOCK.into()), "deadlock cycle".into()),
    ];
    if g.edges.iter().any(|e| !e.cycle) {
        items.push((Swatch::Arrow(palette::EDGE.into()), "waits for / held by, outside the cycle".into()));
    }
    let y = layout::legend(&mut s, &items, MARGIN, width - MARGIN, bottom + 28);
    s.height = (y + MARGIN) as u32;
    Ok(s)
}

/// The direction (cos, sin) as turns, for placing outer nodes.
fn turns_of(c: f64, sn: f64) -> f64 {
    // Coarse but deterministic: search the turn whose sin_cos is closest.
    let mut best = (f64::INFINITY, 0.0);
    for i in 0..720 {
        let t = i as f64 / 720.0;
        let (s2, c2) = sin_cos(t);
        let d = (s2 - sn) * (s2 - sn) + (c2 - c) * (c2 - c);
        if d < best.0 {
            best = (d, t);
        }
    }
    best.1
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

fn draw_edge(s: &mut Scene, a: &Placed, b: &Placed, e: &Edge, reverse: bool) {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len = (dx * dx + dy * dy).sqrt();
    if len < 1.0 {
        return;
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
    // The label beside the middle, on the left of the direction of travel.
    let (mx, my) = ((x0 + x1) as f64 / 2.0, (y0 + y1) as f64 / 2.0);
    let side = if reverse { 2.2 } else { 1.0 };
    let (lx, ly) = (mx + uy * 14.0 * side, my - ux * 14.0 * side);
    let anchor = if uy > 0.3 {
        Anchor::Left
    } else if uy < -0.3 {
        Anchor::Right
    } else {
        Anchor::Center
    };
    s.text_mid(lx.round() as i32, ly.round() as i32, e.label, TINY, e.cycle, color, anchor);
}

fn draw_node(s: &mut Scene, n: &Node, p: &Placed) {
    let (x, y) = (p.x as i32, p.y as i32);
    let (x0, y0, x1, y1) = (x - p.w / 2, y - p.h / 2, x + p.w / 2, y + p.h / 2);
    let name_color = if n.cycle { palette::DEADLOCK } else { palette::INK };
    match n.kind {
        NodeKind::Task(t) => {
            let c = palette::task(t);
            s.rect(x0, y0, x1, y1, palette::WHITE);
            s.frame(x0, y0, x1, y1, c, 3);
            s.rect(x0, y0, x0 + 8, y1, c);
            s.text_mid(x + 4, y - 8, &n.label, TEXT, true, name_color, Anchor::Center);
            s.text_mid(x + 4, y + 13, &n.detail, TINY, false, palette::MUTED, Anchor::Center);
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
            s.text_mid(x, y - 7, &n.label, TEXT, true, name_color, Anchor::Center);
            s.text_mid(x, y + 13, &n.detail, TINY, false, palette::MUTED, Anchor::Center);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
