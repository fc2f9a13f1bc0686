//! The pipe chart: bytes buffered in each pipe over time, against its
//! capacity.
//!
//! One panel per pipe: the buffered bytes as an area under a step line (per
//! pixel column, the line spans the lowest and highest level of the column),
//! the capacity as a dashed line, and a band where the buffer is full. Under
//! the panel, a row for the writes and one for the reads, in the colour of
//! the task doing them, with the stretches where a writer (or reader) is
//! blocked on the pipe, banded in its colour. A tail after the axis gives
//! the level at the end.
//!
//! ```
//! let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let m = visualizer::Model::new(&trace).unwrap();
//! // abba has no pipes: the chart says so.
//! let scene = visualizer::pipes::scene(&m, &visualizer::Options::default()).unwrap();
//! assert!(scene.height > 100);
//! ```

use std::collections::BTreeSet;

use crate::columns::{group, runs, Dominant, XMap};
use crate::fonts;
use crate::layout::{self, Swatch, MARGIN, SMALL, TEXT, TINY};
use crate::model::Model;
use crate::palette;
use crate::scene::{alpha, Anchor, Scene};
use crate::{align, Chart, Error, Frame, Options};

const PANEL: i32 = 120;
/// The panel of an unbuffered pipe: its bars are the bytes each read takes
/// (in ttrpc, one message each, alike), so height says little; the rows of
/// writes, reads and blocked tasks under it say more.
const UNBUFFERED_PANEL: i32 = 48;
const ROW: i32 = 16;
const TAIL: i32 = 76;

/// An unbuffered pipe (Go net.Pipe) holds nothing: its panel shows the
/// bytes each read takes from a writer instead, per column.
fn is_unbuffered(m: &Model, r: u32) -> bool {
    let cap = m.trace.resources[r as usize].capacity.unwrap_or(0);
    cap == 0 && m.resources[r as usize].pipe_ops.iter().all(|o| o.buffered == 0)
}

/// Per column, the bytes read (an unbuffered pipe's hand-overs).
fn handed_over(ops: &[crate::model::PipeOp], xm: &XMap) -> Vec<u64> {
    let mut v = vec![0u64; xm.width as usize];
    for o in ops.iter().filter(|o| !o.write) {
        if let Some(c) = xm.column(o.pos) {
            v[c] += o.amount;
        }
    }
    v
}

/// Who is still blocked in a `op` ("write" or "read") on pipe `r` at the
/// end of the run, as the final column names them: the task, or "N tasks".
fn blocked_label(m: &Model, r: u32, op: &str) -> Option<String> {
    match blocked_at_end(m, r, op).as_slice() {
        [] => None,
        [t] => Some(m.task_name(*t).to_string()),
        more => Some(format!("{} tasks", more.len())),
    }
}

/// The tasks still blocked in `op` (write or read) on pipe `r` at the end.
fn blocked_at_end(m: &Model, r: u32, op: &str) -> Vec<u32> {
    m.tasks
        .iter()
        .filter_map(|tt| tt.blocks.last())
        .filter(|blk| blk.open && blk.resource == Some(r) && blk.op == op)
        .map(|blk| blk.task)
        .collect()
}

/// What the window's last step does on the pipes (bytes written or read,
/// writers and readers that block), which happens at the window's right
/// edge with no width to draw it in, for [`layout::last_step_line`].
fn last_step_notes(m: &Model, pipes: &[u32], xm: &XMap) -> Vec<String> {
    let mut notes = Vec::new();
    for &r in pipes {
        let name = m.resource_name(r);
        for o in m.resources[r as usize].pipe_ops.iter().filter(|o| o.pos == xm.b && o.amount > 0) {
            let (verb, dir) = if o.write { ("writes", "to") } else { ("reads", "from") };
            notes.push(format!("{} {verb} {} B {dir} {name}", m.task_name(o.task), group(o.amount)));
        }
        for (t, tt) in m.tasks.iter().enumerate() {
            for blk in tt.blocks.iter().filter(|b| b.start == xm.b && b.resource == Some(r)) {
                let how = if blk.op == "write" { "writing to" } else { "reading from" };
                notes.push(format!("{} blocks {how} {name}", m.task_name(t as u32)));
            }
        }
    }
    notes
}

/// Lays out the pipe chart of `m`.
pub fn scene(m: &Model, opts: &Options) -> Result<Scene, Error> {
    laid_out(m, opts).map(|(s, _)| s)
}

/// The pipe chart of `m`, and the frame it is drawn in (see [`crate::align`]);
/// none when the trace has nothing for it.
pub(crate) fn laid_out(m: &Model, opts: &Options) -> Result<(Scene, Option<Frame>), Error> {
    let pipes = m.pipes();
    if pipes.is_empty() {
        return Ok((layout::empty(m, "Pipes", "This trace has no pipes.", opts), None));
    }
    let (a, b, note) = opts.window.resolve(m)?;
    let width = opts.width as i32;
    let mut s = Scene::new(opts.width, 0);
    let mut y = layout::title(&mut s, m, "Pipes", opts, MARGIN);

    let cycle_res = if m.deadlock_in(a, b) { m.cycle_resources() } else { Default::default() };
    let label_w =
        pipes.iter().map(|&r| fonts::width(m.resource_name(r), TEXT, true)).max().unwrap_or(0).clamp(120, width / 4)
            + 12;
    let left = MARGIN + label_w + 12;
    let right = width - MARGIN;
    // The tail gives the level at the end and names who is blocked on each
    // pipe then: as wide as the longest such name needs, up to a quarter.
    let widest = pipes
        .iter()
        .flat_map(|&r| ["write", "read"].map(|op| blocked_label(m, r, op)))
        .flatten()
        .map(|who| fonts::width(&who, TINY, false) + 12)
        .max()
        .unwrap_or(0);
    let tail = if b >= m.end { widest.clamp(TAIL, ((right - left) / 4).max(TAIL)) } else { 0 };
    let align::Placed { xm, right, tail, frame, note } =
        align::place(m, Chart::Pipes, opts, (a, b), (left, right, tail), note)?;

    y += 30;
    let plot_top = y;
    let mut tasks: BTreeSet<u32> = BTreeSet::new();
    let mut any_full = false;
    let mut any_blocked = false;
    let mut panels = Vec::new();
    for &r in &pipes {
        let top = y;
        let name_y = top + 22;
        let p0 = name_y + 14;
        let p1 = p0 + if is_unbuffered(m, r) { UNBUFFERED_PANEL } else { PANEL };
        let wr = (p1 + 6, p1 + 6 + ROW);
        let rd = (wr.1 + 4, wr.1 + 4 + ROW);
        let bottom = rd.1 + 10;
        panels.push((r, top, name_y, (p0, p1), wr, rd, bottom));
        y = bottom;
    }
    let plot_bottom = y;
    let bands = panels.iter().map(|&(r, top, _, _, _, _, bottom)| (top, bottom, cycle_res.contains(&r)));
    layout::lane_backgrounds(&mut s, &xm, bands, plot_top, plot_bottom);

    for &(r, _, name_y, (p0, p1), wr, rd, _) in &panels {
        let res = &m.trace.resources[r as usize];
        let ops = &m.resources[r as usize].pipe_ops;
        let cap = res.capacity.unwrap_or(0);
        let peak = ops.iter().map(|o| o.buffered).max().unwrap_or(0);
        let unbuffered = is_unbuffered(m, r);
        let handed = if unbuffered { handed_over(ops, &xm) } else { Vec::new() };
        let scale = if unbuffered { handed.iter().copied().max().unwrap_or(0).max(1) } else { cap.max(peak).max(1) };
        let yv = |v: u64| p1 - (v.min(scale) as i64 * (p1 - p0) as i64 / scale as i64) as i32;

        // Name and scale.
        let name_color = if cycle_res.contains(&r) { palette::DEADLOCK } else { palette::INK };
        let name = layout::fit_or_cut(&res.name, TEXT, true, label_w);
        s.text(MARGIN + 2, name_y, &name, TEXT, true, name_color, Anchor::Left);
        let cap_text = if unbuffered {
            "unbuffered (capacity 0): bars are the bytes each read takes from the writer".to_string()
        } else {
            format!("capacity {} B", group(cap))
        };
        // Stopping short of the deadlock line, which would strike it through.
        let cap_x = MARGIN + 2 + fonts::width(&name, TEXT, true) + 12;
        let room = layout::end_mark_x(m, &xm).filter(|&x| x > cap_x).map_or(right, |x| x - 8) - cap_x;
        // Where the header line ends: the "buffer full" label starts after it.
        let mut header_end = cap_x;
        if let Some(cap_text) = fonts::fit(&cap_text, SMALL, false, room) {
            s.text(cap_x, name_y, &cap_text, SMALL, false, palette::MUTED, Anchor::Left);
            header_end += fonts::width(&cap_text, SMALL, false);
        }
        s.rect(xm.start_px(), p0, xm.end_px(), p1, alpha(palette::GRID, 90));
        s.rect(xm.left - 1, p0, xm.left, p1 + 1, palette::AXIS);
        s.rect(xm.left - 5, p1, xm.left, p1 + 1, palette::AXIS);
        s.text_mid(xm.left - 8, p1, "0", TINY, false, palette::MUTED, Anchor::Right);
        // An unbuffered pipe with nothing handed over in the window has no
        // scale to give: its axis says 0 alone (not a made-up "1 B").
        if !(unbuffered && handed.iter().all(|&h| h == 0)) {
            s.rect(xm.left - 5, yv(scale), xm.left, yv(scale) + 1, palette::AXIS);
            s.text_mid(
                xm.left - 8,
                yv(scale),
                &format!("{} B", group(scale)),
                TINY,
                false,
                palette::MUTED,
                Anchor::Right,
            );
        }
        s.text_mid(xm.left - 8, (wr.0 + wr.1) / 2, "writes", TINY, false, palette::MUTED, Anchor::Right);
        s.text_mid(xm.left - 8, (rd.0 + rd.1) / 2, "reads", TINY, false, palette::MUTED, Anchor::Right);

        // Per column: lowest, highest and last level.
        let w = xm.width as usize;
        // Operations before the window give the level it starts from.
        let first = ops.partition_point(|o| xm.event_before(o.pos));
        let mut level = if first > 0 { ops[first - 1].buffered } else { 0 };
        let mut cols: Vec<Option<(u64, u64, u64)>> = vec![None; w];
        let mut writes = Dominant::new(w);
        let mut reads = Dominant::new(w);
        for o in &ops[first..] {
            if o.pos > xm.b {
                break;
            }
            let Some(c) = xm.column(o.pos) else { continue };
            let e = cols[c].get_or_insert((o.buffered, o.buffered, o.buffered));
            e.0 = e.0.min(o.buffered);
            e.1 = e.1.max(o.buffered);
            e.2 = o.buffered;
            if o.amount > 0 || o.write {
                let d = if o.write { &mut writes } else { &mut reads };
                d.add(c, o.task, o.amount.clamp(1, u32::MAX as u64) as u32);
            }
        }

        // Area (per column, the highest level) and the step line.
        let mut area: Vec<Option<u64>> = Vec::with_capacity(w);
        // The window's ends: the plot's, unless the axis is shared with a
        // longer trace's (see `crate::align`), beyond which nothing is known.
        let (start_x, end_x) = (xm.start_px(), xm.end_px());
        let mut line: Vec<(i32, i32)> = vec![(start_x, yv(level))];
        // The range a column's operations went through, drawn apart from the
        // line: within the path, a dip and back (down to `lo`, up to `hi`)
        // turns it on itself, which the PNG backend draws with a gap.
        let mut spans: Vec<(i32, i32, i32)> = Vec::new();
        for (c, col) in cols.iter().enumerate() {
            let x = xm.col_x(c);
            if x < start_x || x >= end_x && col.is_none() {
                area.push(None);
                continue;
            }
            match col {
                Some((lo, hi, last)) => {
                    for v in [level, *last] {
                        let p = (x, yv(v));
                        if line.last() != Some(&p) {
                            line.push(p);
                        }
                    }
                    let (top, bottom) = (yv(*hi.max(&level)), yv(*lo.min(&level)));
                    if bottom > top {
                        spans.push((x, top, bottom));
                    }
                    area.push(Some(*hi.max(&level)));
                    level = *last;
                }
                None => area.push(Some(level)),
            }
        }
        line.push((end_x, yv(level)));
        for (c0, c1, v) in runs(&area) {
            if v > 0 {
                s.rect(xm.col_x(c0), yv(v), xm.col_x(c1), p1, alpha(palette::BUFFER_FILL, 120));
            }
        }
        // Buffer full: a band above the capacity line.
        if cap > 0 {
            let full: Vec<Option<()>> = area.iter().map(|v| (v.unwrap_or(0) >= cap).then_some(())).collect();
            let full_runs = runs(&full);
            let mut labelled = false;
            for &(c0, c1, ()) in &full_runs {
                let (x0, x1) = (xm.col_x(c0), xm.col_x(c1).max(xm.col_x(c0) + 2));
                s.rect(x0, p0 - 7, x1, p0 - 1, palette::WAITING);
                // Over the first stretch that starts clear of the header
                // ("capacity 1 B") on the same line, within the plot; the
                // legend names the band where none does.
                let label_x = x0.max(header_end + 10);
                if !labelled && label_x <= x1 && label_x + fonts::width("buffer full", TINY, true) <= xm.left + xm.width
                {
                    s.text(label_x, p0 - 10, "buffer full", TINY, true, palette::WAITING_TEXT, Anchor::Left);
                    labelled = true;
                }
                any_full = true;
            }
        }
        if unbuffered {
            for (c, &v) in handed.iter().enumerate() {
                if v > 0 {
                    let x = xm.col_x(c);
                    s.rect(x - 2, yv(v), x + 3, p1, palette::BUFFER_LINE);
                }
            }
        } else {
            s.path(line, palette::BUFFER_LINE, 2);
            for (x, top, bottom) in spans {
                s.rect(x - 1, top, x + 1, bottom + 1, palette::BUFFER_LINE);
            }
        }
        if cap > 0 {
            s.dashed((start_x, yv(cap)), (end_x, yv(cap)), palette::CAPACITY, 1, 6, 4);
        }

        // Writes and reads, and blocked writers and readers.
        let mut any_op = false;
        let (writes, reads) = (writes.result(), reads.result());
        for (dom, (r0, r1)) in [(&writes, wr), (&reads, rd)] {
            for (c0, c1, (t, _)) in runs(dom) {
                s.rect(xm.col_x(c0), r0, xm.col_x(c1).max(xm.col_x(c0) + 2), r1 - 5, m.task_colour(t));
                tasks.insert(t);
                any_op = true;
            }
        }
        // Where each row's names already are: a name that would overlap one
        // (two tasks blocked in the same operation at once) is left out.
        let mut named: [Vec<(i32, i32)>; 2] = [Vec::new(), Vec::new()];
        for tt in m.tasks.iter() {
            for blk in &tt.blocks {
                if blk.resource != Some(r) || blk.end < xm.a || blk.start > xm.b {
                    continue;
                }
                let (row, marks, k) = match blk.op.as_str() {
                    "write" => (wr, &writes, 0),
                    "read" => (rd, &reads, 1),
                    _ => continue,
                };
                let (x0, x1) = (xm.px(blk.start.max(xm.a)), xm.px(blk.end.min(xm.b)));
                // Blocked, and who: the whole stretch is a band in the task's
                // colour over the blocked line, so that stretches of several
                // tasks tell apart where no name fits (the legend names them).
                s.rect(x0, row.1 - 4, x1.max(x0 + 1), row.1, palette::WAITING);
                s.rect(x0, row.1 - 8, x1.max(x0 + 1), row.1 - 4, m.task_colour(blk.task));
                tasks.insert(blk.task);
                any_blocked = true;
                any_op = true;
                // Named in the first stretch of the row without marks that
                // holds the name (over marks it could not be read): "caller-3
                // blocked", or the name alone where only that fits.
                let col = |x: i32| ((x - xm.left).max(0) as usize).min(marks.len());
                let (c0, c1) = (col(x0), col(x1));
                let free: Vec<Option<()>> = marks[c0..c1].iter().map(|k| k.is_none().then_some(())).collect();
                let name = m.task_name(blk.task);
                for who in [format!("{name} blocked"), name.to_string()] {
                    let need = fonts::width(&who, TINY, false) + 8;
                    if let Some((g0, _, ())) = runs(&free).into_iter().find(|&(g0, g1, ())| (g1 - g0) as i32 >= need) {
                        let x = (xm.col_x(c0 + g0) + 2).max(x0 + 3);
                        let span = (x, x + need);
                        if named[k].iter().all(|o| span.1 <= o.0 || o.1 <= span.0) {
                            s.text(x, row.1 - 10, &who, TINY, false, palette::INK, Anchor::Left);
                            named[k].push(span);
                        }
                        break;
                    }
                }
            }
        }

        if !any_op {
            // Empty rows would read as missing data: say that nothing
            // happened (the level line above still gives the level kept).
            let what = "no write or read in this window";
            let mid = xm.window_mid(fonts::width(what, SMALL, false) / 2);
            s.text_mid(mid, (wr.0 + rd.1) / 2, what, SMALL, false, palette::MUTED, Anchor::Center);
        }

        // Tail: the level at the end.
        if tail > 0 {
            let x0 = xm.left + xm.width + 6;
            let end_level = if unbuffered { 0 } else { ops.last().map_or(0, |o| o.buffered) };
            s.rect(x0, p0, right, p1, alpha(palette::GRID, 90));
            if end_level > 0 {
                s.rect(x0, yv(end_level), right, p1, alpha(palette::BUFFER_FILL, 120));
                s.rect(x0, yv(end_level), right, yv(end_level) + 2, palette::BUFFER_LINE);
            }
            let text = if cap > 0 && end_level >= cap { "full".to_string() } else { format!("{} B", group(end_level)) };
            s.text_mid((x0 + right) / 2, (p0 + p1) / 2, &text, SMALL, true, palette::INK, Anchor::Center);
            if cap > 0 {
                s.dashed((x0, yv(cap)), (right, yv(cap)), palette::CAPACITY, 1, 6, 4);
            }
            for (row, op) in [(wr, "write"), (rd, "read")] {
                // Who is stuck on the pipe at the end: at a deadlock, a task
                // of the cycle, which the stretches before do not always
                // have the room to name.
                if let Some(who) = blocked_label(m, r, op) {
                    s.rect(x0, row.1 - 4, right, row.1, palette::WAITING);
                    // In its colour, as its stretch in the plot (several: none).
                    if let [t] = blocked_at_end(m, r, op)[..] {
                        s.rect(x0, row.1 - 8, right, row.1 - 4, m.task_colour(t));
                    }
                    let who = layout::fit_or_cut(&who, TINY, false, right - x0 - 4);
                    s.text(x0 + 2, row.1 - 10, &who, TINY, false, palette::INK, Anchor::Left);
                }
            }
        }
    }
    if tail > 0 {
        s.text(right - tail / 2 + 2, plot_bottom + 22, "final", SMALL, false, palette::MUTED, Anchor::Center);
    }
    layout::deadlock_line(&mut s, m, &xm, plot_top, plot_bottom);
    let mut y = layout::x_axis(&mut s, &xm, plot_bottom, &note);
    let notes = last_step_notes(m, &pipes, &xm);
    y = layout::last_step_line(&mut s, m, &xm, &notes, y);

    let mut items: Vec<(Swatch, String)> = Vec::new();
    if pipes.iter().any(|&r| m.trace.resources[r as usize].capacity != Some(0)) {
        items.push((Swatch::Fill(alpha(palette::BUFFER_FILL, 120)), "bytes buffered".into()));
        // The line, and in a busy column the range the level went through.
        items.push((Swatch::Thin(palette::BUFFER_LINE.into()), "level (a column's range, where it moved)".into()));
        items.push((Swatch::HDash(palette::CAPACITY.into()), "capacity".into()));
    }
    if pipes.iter().any(|&r| m.trace.resources[r as usize].capacity == Some(0)) {
        items.push((Swatch::Fill(palette::BUFFER_LINE.into()), "bytes read from an unbuffered pipe".into()));
    }
    if any_full {
        items.push((Swatch::Fill(palette::WAITING.into()), "buffer full".into()));
    }
    if any_blocked {
        items.push((
            Swatch::Thin(palette::WAITING.into()),
            "writer / reader blocked on the pipe (over it, the task's colour)".into(),
        ));
    }
    for &t in &tasks {
        items.push((Swatch::Fill(m.task_colour(t).into()), m.task_name(t).to_string()));
    }
    items.extend(layout::end_mark_legend(m, a, b));
    y = layout::legend(&mut s, &items, MARGIN, width - MARGIN, y + 4);
    s.height = (y + MARGIN) as u32;
    Ok((s, Some(frame)))
}
