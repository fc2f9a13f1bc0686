//! The lock chart: one lane per mutex, RWMutex or monitor.
//!
//! A lane shows who holds the lock over time, in the holder's task colour
//! and with its name where there is room. An RWMutex lane has one row per
//! concurrent reader (readers stacked); a write lock covers every row. Under
//! the holders, a row shows how many tasks wait to acquire the lock (one
//! shade per count up to 4, darker: more). A tail after the axis shows the
//! holders and waiters at the end, and the locks of a deadlock cycle have
//! their names in red.
//!
//! ```
//! let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let m = visualizer::Model::new(&trace).unwrap();
//! let scene = visualizer::locks::scene(&m, &visualizer::Options::default()).unwrap();
//! assert!(scene.height > 150);
//! ```

use std::collections::BTreeSet;

use crate::columns::{boundaries, runs, Dominant, XMap, SUB};
use crate::fonts;
use crate::layout::{self, Swatch, MARGIN, SMALL, TEXT, TINY};
use crate::model::{Hold, Mode, Model};
use crate::palette;
use crate::scene::{alpha, Anchor, Scene};
use crate::{align, Chart, Error, Frame, Options};

/// Most reader rows drawn for one RWMutex; more readers share the last row.
const MAX_READER_ROWS: usize = 4;
const TAIL: i32 = 76;
const PALE: u8 = 110;
/// Opacity of the inside of a read hold's box (its frame is opaque).
const READ_FILL: u8 = 60;
/// The least width of a read hold's box: a 2-pixel frame around pale
/// fill. Narrower, the frame fills it, and a reader reads a write hold.
const READ_MIN_W: i32 = 8;

/// What the lanes drew, for the legend: it lists only that.
#[derive(Default)]
struct Drawn {
    /// Tasks drawn holding a lock: filled boxes (a write hold, a mutex's).
    holders: BTreeSet<u32>,
    /// Tasks drawn read-holding an RWMutex: pale outlined boxes.
    readers: BTreeSet<u32>,
    /// A hold drawn pale (held part of a column).
    pale: bool,
    read_held: bool,
    /// A waiting row's shade: without one, the ramp of shades explains
    /// nothing in the chart.
    waited: bool,
}

struct Lane {
    resource: u32,
    top: i32,
    /// Holder rows: `(y0, y1)`.
    rows: Vec<(i32, i32)>,
    /// Row of each hold of the resource (index into `Model::resources[r].holds`);
    /// `None` for write holds (every row).
    slot: Vec<Option<usize>>,
    wait: (i32, i32),
    bottom: i32,
}

/// Lays out the lock chart of `m`.
pub fn scene(m: &Model, opts: &Options) -> Result<Scene, Error> {
    laid_out(m, opts).map(|(s, _)| s)
}

/// The lock chart of `m`, and the frame it is drawn in (see [`crate::align`]);
/// none when the trace has nothing for it.
pub(crate) fn laid_out(m: &Model, opts: &Options) -> Result<(Scene, Option<Frame>), Error> {
    let locks = m.locks();
    if locks.is_empty() {
        return Ok((layout::empty(m, "Locks", "This trace has no mutex, RWMutex or monitor.", opts), None));
    }
    let (a, b, note) = opts.window.resolve(m)?;
    let width = opts.width as i32;
    let mut s = Scene::new(opts.width, 0);
    let mut y = layout::title(&mut s, m, "Locks", opts, MARGIN);

    let cycle_res = if m.deadlock_in(a, b) { m.cycle_resources() } else { Default::default() };
    // Lanes for the locks held or waited for in the window (a lock of the
    // cycle always): a lock nobody used would be a blank lane. If none was
    // used, every lane, and the chart says nothing happened.
    let all_locks = locks.len();
    let used: Vec<u32> = locks.iter().copied().filter(|&r| used_in(m, r, a, b) || cycle_res.contains(&r)).collect();
    let nothing = used.is_empty();
    let locks = if nothing { locks } else { used };
    let label_w = locks
        .iter()
        .map(|&r| fonts::width(m.resource_name(r), TEXT, true).max(fonts::width(&kind_label(m, r), TINY, false)))
        .max()
        .unwrap_or(0)
        .clamp(110, width / 4)
        + 12;
    let left = MARGIN + label_w + 12;
    let right = width - MARGIN;
    // The tail names the holders at the end: as wide as the longest of
    // those names needs (at most a quarter of the plot), so they can be read;
    // a name too long for that is written smaller, in up to a third.
    let names = || locks.iter().flat_map(|&r| m.resources[r as usize].holds.iter().filter(|h| h.open));
    let widest = |size| names().map(|h| fonts::width(m.task_name(h.task), size, false) + 14).max().unwrap_or(0);
    let tail = match (b >= m.end, widest(SMALL)) {
        (false, _) => 0,
        (true, w) if w <= (right - left) / 4 => w.max(TAIL),
        (true, _) => widest(TINY).clamp(TAIL, (right - left) / 3),
    };
    let align::Placed { xm, right, tail, frame, note } =
        align::place(m, Chart::Locks, opts, (a, b), (left, right, tail), note)?;

    y += 30;
    let plot_top = y;
    let mut lanes = Vec::new();
    for &r in &locks {
        let holds = &m.resources[r as usize].holds;
        let rw = m.trace.resources[r as usize].kind == "rwmutex";
        let (slot, nslots) = if rw { reader_slots(holds, xm.a, xm.b) } else { (vec![None; holds.len()], 1) };
        let top = y;
        let mut yy = top + 8;
        let mut rows = Vec::new();
        if nslots <= 1 {
            rows.push((yy, yy + 24));
            yy += 24;
        } else {
            for _ in 0..nslots {
                rows.push((yy, yy + 15));
                yy += 17;
            }
            yy -= 2;
        }
        yy += 4;
        let wait = (yy, yy + 16);
        yy += 16 + 8;
        lanes.push(Lane { resource: r, top, rows, slot, wait, bottom: yy });
        y = yy;
    }
    let plot_bottom = y;

    let bands = lanes.iter().map(|l| (l.top, l.bottom, cycle_res.contains(&l.resource)));
    layout::lane_backgrounds(&mut s, &xm, bands, plot_top, plot_bottom);

    let mut drawn = Drawn::default();
    for lane in &lanes {
        let in_cycle = cycle_res.contains(&lane.resource);
        draw_lane(&mut s, m, &xm, lane, label_w, in_cycle, &mut drawn);
        if tail > 0 {
            draw_tail(&mut s, m, &xm, lane, right, &mut drawn);
        }
    }
    if tail > 0 {
        s.text(right - tail / 2 + 2, plot_bottom + 22, "final", SMALL, false, palette::MUTED, Anchor::Center);
    }
    if nothing {
        // Empty lanes would read as missing data: say that nothing happened,
        // once, in the middle of the plot on a box of its own. Written in
        // the first lane, it read as that lock's note, and the lanes under
        // it as locks the chart had failed to draw.
        let what = "no lock is held or waited for in this window";
        let half = (fonts::width(what, SMALL, false) + 32) / 2;
        let mid = xm.window_mid(half);
        let cy = (plot_top + plot_bottom) / 2;
        s.rect(mid - half, cy - 16, mid + half, cy + 16, palette::WHITE);
        s.frame(mid - half, cy - 16, mid + half, cy + 16, palette::GRID, 1);
        s.text_mid(mid, cy, what, SMALL, false, palette::MUTED, Anchor::Center);
    }
    layout::deadlock_line(&mut s, m, &xm, plot_top, plot_bottom);
    let mut y = layout::x_axis(&mut s, &xm, plot_bottom, &note);
    if locks.len() < all_locks {
        let left_out = all_locks - locks.len();
        let what = format!(
            "{left_out} of {all_locks} locks not drawn: not held or waited for in this window{}",
            if a == 0 && b >= m.end { "" } else { " (--window all shows the whole run)" }
        );
        y = layout::note_lines(&mut s, &what, xm.left, y, width - MARGIN - xm.left);
    }
    let notes = last_step_notes(m, &locks, &xm);
    y = layout::last_step_line(&mut s, m, &xm, &notes, y);

    // Each holder as it is drawn: a task that only read-locks (ttrpc
    // v1.2.3's Client.run on streamLock) has no filled box to match a
    // filled swatch, so its entry is a pale one in its colour's frame.
    let mut items: Vec<(Swatch, String)> = drawn
        .holders
        .union(&drawn.readers)
        .map(|&t| {
            let (c, name) = (m.task_colour(t), m.task_name(t));
            if drawn.holders.contains(&t) {
                (Swatch::Fill(c.into()), format!("held by {name}"))
            } else {
                (Swatch::Framed(c.into(), alpha(c, READ_FILL)), format!("read-locked by {name}"))
            }
        })
        .collect();
    if drawn.pale {
        items.push((Swatch::Fill(alpha(palette::AXIS, PALE)), "held part of the time".into()));
    }
    // Said once for all where a task that holds one lock read-locks
    // another: its entry shows the filled box only.
    if drawn.read_held && drawn.readers.iter().any(|t| drawn.holders.contains(t)) {
        items.push((Swatch::Outline(palette::AXIS.into()), "read-locked (RWMutex)".into()));
    }
    // Every shade the bars take, labelled with its count (see `waiting_shade`).
    let cells = [1, 2, 3, 4].map(|n| (alpha(palette::WAITING, waiting_shade(n)), waiting_ink(waiting_shade(n))));
    if drawn.waited {
        items.push((Swatch::Counts(cells), "tasks waiting to acquire".to_string()));
    }
    items.extend(layout::end_mark_legend(m, a, b));
    // The cycle's resources may all be pipes or channels, which have no lane here.
    if lanes.iter().any(|l| cycle_res.contains(&l.resource)) {
        items.push((Swatch::Fill(palette::CYCLE_TINT.into()), "lock in the deadlock cycle".into()));
    }
    y = layout::legend(&mut s, &items, MARGIN, width - MARGIN, y + 4);
    s.height = (y + MARGIN) as u32;
    Ok((s, Some(frame)))
}

fn kind_label(m: &Model, r: u32) -> String {
    let res = &m.trace.resources[r as usize];
    let kind = match res.kind.as_str() {
        "rwmutex" => "RWMutex",
        k => k,
    };
    match &res.class {
        Some(c) => format!("{kind} · class {c}"),
        None => kind.to_string(),
    }
}

/// Reader rows for the read holds of an RWMutex overlapping `a..b`: each
/// read hold goes to the lowest row free at its start.
fn reader_slots(holds: &[Hold], a: u64, b: u64) -> (Vec<Option<usize>>, usize) {
    let mut ends: Vec<u64> = Vec::new();
    let mut slot = vec![None; holds.len()];
    for (i, h) in holds.iter().enumerate() {
        if h.mode != Mode::Read || h.end < a || h.start > b {
            continue;
        }
        let k = match ends.iter().position(|&e| e <= h.start) {
            Some(k) => k,
            None if ends.len() < MAX_READER_ROWS => {
                ends.push(0);
                ends.len() - 1
            }
            None => ends.len() - 1,
        };
        ends[k] = ends[k].max(h.end);
        slot[i] = Some(k);
    }
    let n = ends.len().max(1);
    (slot, n)
}

/// Per column, the average number of tasks waiting (rounded up).
fn waiting(m: &Model, r: u32, xm: &XMap) -> Vec<u32> {
    let mut cov = vec![0u64; xm.width as usize];
    for w in &m.resources[r as usize].waits {
        if w.end < xm.a || w.start > xm.b {
            continue;
        }
        xm.cover(w.start, w.end, |c, amt| cov[c] += amt as u64);
    }
    cov.iter().map(|&c| c.div_ceil(SUB as u64) as u32).collect()
}

/// True if lock `r` is held or waited for within the window `a..=b` (`a <
/// b`): taken by its end and let go after its start. A lock taken in the
/// window's last step counts, though it shows only at the end (see
/// [`last_step_notes`]); one let go at `a`, before the window, does not.
fn used_in(m: &Model, r: u32, a: u64, b: u64) -> bool {
    let res = &m.resources[r as usize];
    res.holds.iter().any(|h| h.start <= b && h.end > a) || res.waits.iter().any(|w| w.start <= b && w.end > a)
}

/// What the window's last step does to the locks drawn: it happens at the
/// window's right edge, with no width to draw it in, so it is said in words
/// under the axis by [`layout::last_step_line`] ("T2 takes B, T1 starts
/// waiting for A").
fn last_step_notes(m: &Model, locks: &[u32], xm: &XMap) -> Vec<String> {
    let mut notes = Vec::new();
    for &r in locks {
        let res = &m.resources[r as usize];
        let name = m.resource_name(r);
        for h in res.holds.iter().filter(|h| !h.open && h.end == xm.b && h.start < xm.b) {
            notes.push(format!("{} {} {name}", m.task_name(h.task), layout::releases(h.mode)));
        }
        for w in res.waits.iter().filter(|w| !w.open && w.end == xm.b && w.start < xm.b) {
            notes.push(format!("{} stops waiting for {name}", m.task_name(w.task)));
        }
        for h in res.holds.iter().filter(|h| h.start == xm.b) {
            let how = layout::takes(h.mode);
            notes.push(format!("{} {how} {name}", m.task_name(h.task)));
        }
        for w in res.waits.iter().filter(|w| w.start == xm.b) {
            notes.push(format!("{} starts waiting for {name}", m.task_name(w.task)));
        }
    }
    notes
}

/// The opacity of a waiting row where `n` tasks wait: one shade per count
/// up to [`WAIT_SHADES`] or more, darker for more, the same in every chart
/// (a scale per chart made "1 waiting" dark in one figure and pale in the
/// next, and 1 and 2 all but alike where 6 waited somewhere).
fn waiting_shade(n: u32) -> u8 {
    SHADES[(n as usize).min(SHADES.len() - 1)]
}

/// The opacity of the waiting row by count: none, then 1, 2, 3, 4 or more.
const SHADES: [u8; 5] = [0, 110, 160, 205, 255];

/// The count from which the waiting row takes its darkest shade.
const WAIT_SHADES: u32 = SHADES.len() as u32 - 1;
// The legend labels the shades 1, 2, 3 and 4+ (`Swatch::Counts`).
const _: () = assert!(WAIT_SHADES == 4);

/// The text colour on a waiting row of opacity `a` (over white): ink on the
/// lighter shades, black on the darkest (see [`palette::text_on`]).
fn waiting_ink(a: u8) -> palette::Rgb {
    let palette::Rgb(r, g, b) = palette::WAITING;
    let over_white = |c: u8| ((c as u32 * a as u32 + 255 * (255 - a as u32) + 127) / 255) as u8;
    palette::text_on(palette::Rgb(over_white(r), over_white(g), over_white(b)))
}

fn draw_lane(s: &mut Scene, m: &Model, xm: &XMap, lane: &Lane, label_w: i32, in_cycle: bool, drawn: &mut Drawn) {
    let r = lane.resource;
    let w = xm.width as usize;
    let (y0, y1) = (lane.rows[0].0, lane.rows[lane.rows.len() - 1].1);
    let name_color = if in_cycle { palette::DEADLOCK } else { palette::INK };
    let name = layout::fit_or_cut(m.resource_name(r), TEXT, true, label_w);
    s.text_mid(MARGIN + 2, (y0 + y1) / 2 - 6, &name, TEXT, true, name_color, Anchor::Left);
    let kind = layout::fit_or_cut(&kind_label(m, r), TINY, false, label_w);
    s.text_mid(MARGIN + 2, (y0 + y1) / 2 + 12, &kind, TINY, false, palette::MUTED, Anchor::Left);
    s.text_mid(xm.left - 8, (lane.wait.0 + lane.wait.1) / 2, "waiting", TINY, false, palette::MUTED, Anchor::Right);
    // The window's band only: on an axis shared with a longer trace's, the
    // rest is not known free.
    s.rect(xm.start_px(), y0, xm.end_px(), y1, alpha(palette::GRID, 90));

    // Holders, row by row: the task holding most of each column.
    let holds = &m.resources[r as usize].holds;
    for (row, &(ry0, ry1)) in lane.rows.iter().enumerate() {
        let mut dom = Dominant::new(w);
        for (i, h) in holds.iter().enumerate() {
            if h.end < xm.a || h.start > xm.b {
                continue;
            }
            let here = match lane.slot[i] {
                None => h.mode == Mode::Exclusive,
                Some(k) => k == row,
            };
            if here {
                xm.cover(h.start, h.end, |c, amt| dom.add(c, h.task, amt));
            }
        }
        // Columns held for reading for most of the time they are held in
        // this row (a column of a zoomed-out window may see both kinds).
        let (mut read_amt, mut all_amt) = (vec![0u64; w], vec![0u64; w]);
        for (i, h) in holds.iter().enumerate() {
            let here = match lane.slot[i] {
                None => h.mode == Mode::Exclusive,
                Some(k) => k == row,
            };
            if here && h.end >= xm.a && h.start <= xm.b {
                let is_read = h.mode == Mode::Read;
                xm.cover(h.start, h.end, |c, amt| {
                    all_amt[c] += amt as u64;
                    if is_read {
                        read_amt[c] += amt as u64;
                    }
                });
            }
        }
        let read: Vec<bool> = read_amt.iter().zip(&all_amt).map(|(&r, &a)| r > 0 && r * 2 >= a).collect();
        let busy = boundaries(xm, holds.iter().map(|h| (h.start, h.end)));
        let cols: Vec<Option<(u32, bool, bool)>> = dom
            .result()
            .into_iter()
            .zip(&busy)
            .zip(&read)
            .map(|((x, &n), &rd)| x.map(|(t, share)| (t, share * 2 >= SUB as u32 || n < 2, rd)))
            .collect();
        for (c0, c1, (t, full, rd)) in runs(&cols) {
            let color = m.task_colour(t);
            let (x0, x1) = (xm.col_x(c0), xm.col_x(c1));
            // A read hold is outlined in the holder's colour, a write hold
            // (or a mutex's) filled: who holds an RWMutex for reading is
            // what a read-lock deadlock turns on.
            let ink = if rd {
                // A short hold's box widened about its middle, inside the plot.
                let (x0, x1) = if x1 - x0 >= READ_MIN_W {
                    (x0, x1)
                } else {
                    let a = ((x0 + x1 - READ_MIN_W) / 2).clamp(xm.left, xm.left + xm.width - READ_MIN_W);
                    (a, a + READ_MIN_W)
                };
                s.rect(x0, ry0, x1, ry1, alpha(color, READ_FILL));
                s.frame(x0, ry0, x1, ry1, color, 2);
                drawn.read_held = true;
                drawn.readers.insert(t);
                palette::INK
            } else {
                s.rect(x0, ry0, x1, ry1, alpha(color, if full { 255 } else { PALE }));
                // A sliver of a pixel or two is not worth a legend entry.
                drawn.pale |= !full && x1 - x0 >= 3;
                drawn.holders.insert(t);
                palette::text_on(color)
            };
            let size = if ry1 - ry0 >= 20 { SMALL } else { TINY };
            if full && x1 - x0 >= 30 {
                let text = layout::fit_or_cut(m.task_name(t), size, false, x1 - x0 - 8);
                if !text.is_empty() {
                    s.text_mid(x0 + 4, (ry0 + ry1) / 2, &text, size, false, ink, Anchor::Left);
                }
            }
        }
    }

    // Waiting tasks.
    let wait = waiting(m, r, xm);
    // Stretches of one shade; the darkest, 4 or more, says how many at
    // most ("4–19 waiting"), as its shade cannot.
    let cols: Vec<Option<u32>> = wait.iter().map(|&n| (n > 0).then_some(n.min(WAIT_SHADES))).collect();
    for (c0, c1, shade) in runs(&cols) {
        let a = waiting_shade(shade);
        let (x0, x1) = (xm.col_x(c0), xm.col_x(c1));
        s.rect(x0, lane.wait.0, x1, lane.wait.1, alpha(palette::WAITING, a));
        drawn.waited = true;
        let (least, most) = wait[c0..c1].iter().fold((u32::MAX, 0), |(lo, hi), &n| (lo.min(n), hi.max(n)));
        let text = if least == most { format!("{most} waiting") } else { format!("{least}–{most} waiting") };
        if x1 - x0 >= fonts::width(&text, TINY, true) + 10 {
            let ink = waiting_ink(a);
            s.text_mid(x0 + 4, (lane.wait.0 + lane.wait.1) / 2, &text, TINY, true, ink, Anchor::Left);
        }
    }
}

/// Holders and waiters at the end of the trace.
fn draw_tail(s: &mut Scene, m: &Model, xm: &XMap, lane: &Lane, right: i32, drawn: &mut Drawn) {
    let x0 = xm.left + xm.width + 6;
    let r = lane.resource;
    let holds = &m.resources[r as usize].holds;
    let open: Vec<(usize, &Hold)> = holds.iter().enumerate().filter(|(_, h)| h.open).collect();
    for (row, &(ry0, ry1)) in lane.rows.iter().enumerate() {
        let h = open.iter().find(|(i, h)| match lane.slot[*i] {
            None => h.mode == Mode::Exclusive,
            Some(k) => k == row,
        });
        if let Some((_, h)) = h {
            let color = m.task_colour(h.task);
            // Drawn as the plot draws it: a read hold outlined, a write hold filled.
            let ink = if h.mode == Mode::Read {
                s.rect(x0, ry0, right, ry1, alpha(color, READ_FILL));
                s.frame(x0, ry0, right, ry1, color, 2);
                drawn.read_held = true;
                drawn.readers.insert(h.task);
                palette::INK
            } else {
                s.rect(x0, ry0, right, ry1, color);
                drawn.holders.insert(h.task);
                palette::text_on(color)
            };
            // A long name takes the smaller size before it is cut.
            let (name, room) = (m.task_name(h.task), right - x0 - 8);
            let size = if ry1 - ry0 >= 20 && fonts::width(name, SMALL, false) <= room { SMALL } else { TINY };
            // Cut, a name keeps its instance number (`#1`, `-3`).
            let text = layout::fit_or_cut(name, size, false, room);
            if !text.is_empty() {
                s.text_mid((x0 + right) / 2, (ry0 + ry1) / 2, &text, size, false, ink, Anchor::Center);
            }
        }
    }
    let n = m.resources[r as usize].waits.iter().filter(|w| w.open).count() as u32;
    if n > 0 {
        // The shade (and ink) of the plot's waiting row for the same count.
        let a = waiting_shade(n);
        s.rect(x0, lane.wait.0, right, lane.wait.1, alpha(palette::WAITING, a));
        drawn.waited = true;
        let text = format!("{n} waiting");
        if let Some(text) = fonts::fit(&text, TINY, true, right - x0 - 6) {
            let ink = waiting_ink(a);
            s.text_mid((x0 + right) / 2, (lane.wait.0 + lane.wait.1) / 2, &text, TINY, true, ink, Anchor::Center);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_waiting_tasks_has_one_shade_darker_than_the_last() {
        let shades: Vec<u8> = (1..=WAIT_SHADES + 2).map(waiting_shade).collect();
        assert!(shades.windows(2).take(WAIT_SHADES as usize - 1).all(|w| w[0] < w[1]), "{shades:?}");
        assert!(shades[WAIT_SHADES as usize - 1..].iter().all(|&a| a == 255), "{shades:?}");
        // Neighbouring counts differ by at least 45 of 255 in opacity (with a
        // scale per chart, by 36 where 4 waited somewhere, 24 where 6 did).
        assert!(shades.windows(2).take(3).all(|w| w[1] - w[0] >= 45), "{shades:?}");
    }
}
