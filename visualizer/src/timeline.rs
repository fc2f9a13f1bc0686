//! The timeline: one lane per task alive in the window.
//!
//! Each lane shows the task's state over time (running, ready, blocked,
//! finished), the frame it is in (above the bar, where there is room), the
//! pipe and channel operations it does (marks on the bar), and the locks it
//! holds (one thin bar per lock under the state bar, in the task's colour).
//! Blocked stretches say what they wait for when there is room. At a
//! deadlock, the lanes of the cycle are tinted, a dashed line marks the step,
//! and arrows on the right go from each waiting task to the task holding
//! what it waits for. Tasks that finished before the window or were spawned
//! after it get no lane (a server that runs a goroutine per request has
//! thousands), and the picture says how many were left out.
//!
//! ```
//! let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let m = visualizer::Model::new(&trace).unwrap();
//! let scene = visualizer::timeline::scene(&m, &visualizer::Options::default()).unwrap();
//! assert!(scene.height > 200);
//! ```

use crate::columns::{boundaries, runs, XMap, SUB};
use crate::fonts;
use crate::layout::{self, Swatch, MARGIN, SMALL, TEXT, TINY};
use crate::model::{MarkKind, Mode, Model, State};
use crate::palette::{self, Rgb};
use crate::scene::{alpha, Anchor, Scene};
use crate::{align, Chart, Error, Frame, Options};

/// Heights of the parts of a lane.
struct Dims {
    pad: i32,
    frame_row: i32,
    bar: i32,
    hold: i32,
    hold_gap: i32,
    max_holds: usize,
    /// Lock rows too thin for a label each (`hold + hold_gap` under 12 px):
    /// one line per lane names them.
    one_label: bool,
}

const ROOMY: Dims = Dims { pad: 8, frame_row: 19, bar: 24, hold: 12, hold_gap: 4, max_holds: 6, one_label: false };
const COMPACT: Dims = Dims { pad: 4, frame_row: 0, bar: 16, hold: 6, hold_gap: 2, max_holds: 2, one_label: true };

/// Lanes above this count use the compact layout (no frame row, two lock rows).
const COMPACT_ABOVE: usize = 24;

struct Lane {
    task: u32,
    top: i32,
    frame_y: Option<i32>,
    bar: (i32, i32),
    /// `(resource, mode, y0, y1)`; the last row may gather several locks.
    rows: Vec<(u32, Mode, i32, i32, String)>,
    /// How many locks the last row gathers (0: every lock has a row).
    shared: usize,
    bottom: i32,
    /// A low lane: a background task that finished in the window, held no
    /// lock in it and is not in the story (see [`MINOR_BAR`]).
    minor: bool,
}

/// The bar of a low lane. A server's one-request goroutines (ttrpc's
/// serverConn.run.func2#N) came and went long before the deadlock: in a
/// full lane each took as much height as a task of the cycle, 6 of the
/// 17 lanes of the README's ttrpc figure.
const MINOR_BAR: i32 = 14;

/// An arrow of the right-hand strip: `from` waits for `what`, held by `to`.
struct Arrow {
    from: u32,
    to: u32,
    what: String,
    cycle: bool,
    col: usize,
}

/// Lays out the timeline of `m`.
pub fn scene(m: &Model, opts: &Options) -> Result<Scene, Error> {
    laid_out(m, opts).map(|(s, _)| s)
}

/// The timeline of `m`, and the frame it is drawn in (see [`crate::align`]).
pub(crate) fn laid_out(m: &Model, opts: &Options) -> Result<(Scene, Option<Frame>), Error> {
    let (a, b, note) = opts.window.resolve(m)?;
    let width = opts.width as i32;
    let mut s = Scene::new(opts.width, 0);
    let mut y = layout::title(&mut s, m, "Timeline", opts, MARGIN);
    let cycle = if m.deadlock_in(a, b) { m.cycle_tasks() } else { Vec::new() };
    let tinted = tinted(m, (a, b), &cycle);
    let Lanes { dead, over_cap, shown } = choose_lanes(m, opts, (a, b), &note, &tinted)?;
    let dims = if shown.len() > COMPACT_ABOVE { &COMPACT } else { &ROOMY };

    // Arrows of the deadlock strip, between lanes that are drawn.
    let mut lane_index = vec![usize::MAX; m.tasks.len()];
    for (i, &t) in shown.iter().enumerate() {
        lane_index[t as usize] = i;
    }
    let mut arrows = if cycle.is_empty() { Vec::new() } else { deadlock_arrows(m) };
    arrows.retain(|a| lane_index[a.from as usize] != usize::MAX && lane_index[a.to as usize] != usize::MAX);

    // Lanes (positions only; drawn below, once the plot's height is known).
    y += 30; // room for the deadlock label above the plot
    let plot_top = y;
    let mut lanes = Vec::with_capacity(shown.len());
    // Tasks the arrows of the deadlock strip start or end at.
    let arrowed: Vec<u32> = arrows.iter().flat_map(|a| [a.from, a.to]).collect();
    for &t in &shown {
        let tt = &m.tasks[t as usize];
        let top = y;
        let holds_in_window = tt.holds.iter().any(|h| h.start <= b && h.end > a);
        // (Tasks --tasks names are drawn in full: the user asked for them.)
        let minor = dims.frame_row > 0
            && opts.tasks.is_empty()
            && m.trace.tasks[t as usize].background
            && !tinted.contains(&t)
            && !arrowed.contains(&t)
            && !holds_in_window
            && m.state_at(t, b) == Some(State::Finished);
        if minor {
            let bar = (top + 4, top + 4 + MINOR_BAR);
            y = bar.1 + 4;
            lanes.push(Lane { task: t, top, frame_y: None, bar, rows: Vec::new(), shared: 0, bottom: y, minor });
            continue;
        }
        let mut yy = top + dims.pad;
        // The frame row; a background task without frames keeps it too, for
        // its "background task" caption (drawn there, above the name).
        let caption = m.trace.tasks[t as usize].background;
        let frame_y = if dims.frame_row > 0 && (!tt.frames.is_empty() || caption) {
            let fy = yy;
            yy += dims.frame_row;
            Some(fy)
        } else {
            None
        };
        let bar = (yy, yy + dims.bar);
        yy += dims.bar + dims.hold_gap;
        // One row per lock held in the window (up to `max_holds`), in one
        // order in every lane: the order the trace lists the locks in, a
        // write hold above a read hold of one RWMutex. In order of first
        // taking, ttrpc's callers had streamLock's row above sendLock's in
        // one lane and under it in the next, and a compact lane, whose one
        // label names its rows, could not say which was which.
        let mut keys: Vec<(u32, Mode)> = Vec::new();
        // A hold that ends where the window starts has no width in it: no row,
        // as the locks chart gives it no lane. (One taken where the window
        // ends has a row, to show what is held there.)
        for h in &tt.holds {
            if h.start <= b && h.end > a && !keys.contains(&(h.resource, h.mode)) {
                keys.push((h.resource, h.mode));
            }
        }
        let at_end =
            |k: &(u32, Mode)| tt.holds.iter().any(|h| (h.resource, h.mode) == *k && h.start <= b && h.end >= b);
        // Rows come in one order in every lane (the trace's order of the
        // locks), so that a reader can follow a row from lane to lane. But
        // in a compact lane, whose one label names its rows, in a window
        // that ends at the deadlock the locks still held there, those the
        // cycle is about, come first: the names the label keeps when it has
        // no room for all ("holds streamLock +1 more" hid sendLock, the lock
        // a ttrpc caller held in the cycle). Not in a figure aligned with
        // another (a bug's beside its fix's): the two keep one order.
        let first = |k: &(u32, Mode)| {
            dims.one_label
                && opts.align.is_none()
                && m.deadlock.is_some_and(|d| d <= b)
                && tt.holds.iter().any(|h| (h.resource, h.mode) == *k && h.open)
        };
        if keys.len() > dims.max_holds {
            // Too many for a row each: the rows go first to the locks still
            // held at the window's end, then to the first taken; the rest
            // share the last row.
            let own = dims.max_holds - 1;
            let mut chosen: Vec<usize> = (0..keys.len()).filter(|&i| at_end(&keys[i])).take(own).collect();
            chosen.extend((0..keys.len()).filter(|&i| !at_end(&keys[i])).take(own - chosen.len()));
            chosen.sort_unstable_by_key(|&i| (!first(&keys[i]), keys[i]));
            let rest = (0..keys.len()).filter(|i| !chosen.contains(i));
            keys = chosen.iter().copied().chain(rest).map(|i| keys[i]).collect();
        } else {
            keys.sort_unstable_by_key(|k| (!first(k), *k));
        }
        let mut rows = Vec::new();
        let shown = keys.len().min(dims.max_holds);
        for (i, &(r, mode)) in keys.iter().take(shown).enumerate() {
            let mut name = match mode {
                Mode::Exclusive => format!("holds {}", m.resource_name(r)),
                Mode::Read => format!("reads {}", m.resource_name(r)),
            };
            if i + 1 == shown && keys.len() > shown {
                name = format!("{} more locks", keys.len() - shown + 1);
            }
            rows.push((r, mode, yy, yy + dims.hold, name));
            yy += dims.hold + dims.hold_gap;
        }
        let bottom = yy + dims.pad;
        y = bottom;
        let shared = if keys.len() > shown { keys.len() - shown + 1 } else { 0 };
        lanes.push(Lane { task: t, top, frame_y, bar, rows, shared, bottom, minor });
    }
    let plot_bottom = y;

    // The label column fits the longest task name and the longest label of
    // the lock rows drawn ("holds channel-1.bufferQueue", or a compact
    // lane's "holds streamLock, sendLock": sized to the names alone, names
    // shortened with --rename cut them), within limits.
    let name_w = shown.iter().map(|&t| fonts::width(m.task_name(t), TEXT, true)).max().unwrap_or(0);
    let hold_w = |lane: &Lane| match dims.one_label {
        false => lane.rows.iter().map(|r| fonts::width(&r.4, TINY, false)).max().unwrap_or(0),
        true if lane.rows.is_empty() => 0,
        true => fonts::width(&held_names(&row_groups(m, lane), lane.shared, i32::MAX), TINY, false),
    };
    let hold_w = lanes.iter().map(hold_w).max().unwrap_or(0);
    // In a narrow picture the names take less (they are cut in the middle,
    // keeping the end that tells them apart), and the plot more.
    let label_w = (name_w + 22).max(hold_w + 24).clamp(110, if width < NARROW { width / 5 } else { width / 4 });
    let left = MARGIN + label_w + 12;

    // Arrow columns: arrows whose vertical spans overlap get different columns.
    let lane_of = |t: u32| &lanes[lane_index[t as usize]];
    let span = |a: &Arrow| {
        let (y0, y1) = (mid(lane_of(a.from).bar), mid(lane_of(a.to).bar));
        (y0.min(y1) - 6, y0.max(y1) + 6)
    };
    let mut taken: Vec<Vec<(i32, i32)>> = Vec::new();
    for arrow in arrows.iter_mut() {
        let sp = span(arrow);
        let col = (0..)
            .find(|&c| taken.get(c).is_none_or(|v: &Vec<(i32, i32)>| v.iter().all(|o| sp.1 < o.0 || sp.0 > o.1)))
            .unwrap_or(0);
        if taken.len() <= col {
            taken.resize(col + 1, Vec::new());
        }
        taken[col].push(sp);
        arrow.col = col;
    }
    // The final column's width: as wide as the longest "what it waits for"
    // there needs, up to a fifth of the plot (`right` is the plot's right).
    let widest = lanes.iter().filter_map(|l| final_wait(m, l.task)).map(|w| fonts::width(&w, TINY, true) + 16).max();
    let tail_for = |right: i32| widest.unwrap_or(0).clamp(TAIL, ((right - left) / 5).max(TAIL));
    // Arrow columns closer together in a narrow picture.
    let arrow_gap = if width < NARROW { 10 } else { 16 };
    let any_arrow = !arrows.is_empty();
    let strip_for = |label_w: i32| if any_arrow { 14 + label_w + 12 + taken.len() as i32 * arrow_gap + 8 } else { 0 };
    // In a narrow picture the arrows go unlabelled if the final column (which
    // a window with the deadlock always has) names in full what each task of
    // an arrow waits for: the plot needs the room more.
    // The final column's text has its width less 14 px (see `wait_texts`).
    let said_in =
        |a: &Arrow, tail: i32| final_wait(m, a.from).is_some_and(|w| fonts::width(&w, TINY, true) <= tail - 14);
    let label_w_of = |ws: &mut dyn Iterator<Item = &Arrow>| {
        ws.map(|a| fonts::width(&a.what, TINY, true)).max().unwrap_or(0).min(120).min(width / 10)
    };
    // Each arrow the final column names in full goes unlabelled there; the
    // others keep theirs. The labels kept narrow the column, which may then
    // cut a name it held whole: settled by raising the labels' width until
    // it no longer changes (it only grows, to at most 120 px).
    let mut arrow_label_w = 0;
    if width < NARROW {
        loop {
            let tail = tail_for(width - MARGIN - strip_for(arrow_label_w));
            let w = label_w_of(&mut arrows.iter().filter(|a| !said_in(a, tail)));
            if w <= arrow_label_w {
                for a in arrows.iter_mut().filter(|a| said_in(a, tail)) {
                    a.what.clear();
                }
                break;
            }
            arrow_label_w = w;
        }
    } else {
        arrow_label_w = label_w_of(&mut arrows.iter());
    }
    let right = width - MARGIN - strip_for(arrow_label_w);
    // When the window reaches the end of the trace, a short tail after the
    // axis shows the final state of every task (a task that blocks in the
    // last step has no time left to show it in).
    let tail = if b >= m.end { tail_for(right) } else { 0 };
    let align::Placed { xm, right, tail, frame, note } =
        align::place(m, Chart::Timeline, opts, (a, b), (left, right, tail), note)?;

    // Backgrounds: cycle tint, lane separators, grid.
    layout::lane_backgrounds(
        &mut s,
        &xm,
        lanes.iter().map(|l| (l.top, l.bottom, tinted.contains(&l.task))),
        plot_top,
        plot_bottom,
    );

    // What each blocked task still waits for, in the final column, cut so
    // that two different waits stay apart (`channel-0.b…`, `channel-1.b…`).
    let waits: Vec<String> = lanes
        .iter()
        .map(|l| match m.state_at(l.task, m.end) {
            Some(State::Blocked) => final_wait(m, l.task).unwrap_or_default(),
            _ => String::new(),
        })
        .collect();
    let waits: Vec<&str> = waits.iter().map(String::as_str).collect();
    let wait_texts = layout::fit_distinct(&waits, TINY, true, right - (xm.left + xm.width + 6) - 8);
    let mut flags = Flags::default();
    for (lane, wait_text) in lanes.iter().zip(&wait_texts) {
        draw_lane(&mut s, m, &xm, lane, dims, tinted.contains(&lane.task), label_w, &mut flags);
        if tail > 0 {
            draw_tail(&mut s, m, &xm, lane, right, wait_text, &mut flags);
        }
    }
    if tail > 0 {
        s.text(right - tail / 2 + 2, plot_bottom + 22, "final", SMALL, false, palette::MUTED, Anchor::Center);
    }

    layout::deadlock_line(&mut s, m, &xm, plot_top, plot_bottom);
    // An arrow whose task's wait the final column names in full may lose
    // its label where another arrow's line runs through it (see `draw_arrows`).
    let said: Vec<bool> = arrows.iter().map(|a| tail > 0 && said_in(a, tail)).collect();
    draw_arrows(&mut s, &arrows, &said, &lanes, &lane_index, right, right + 14 + arrow_label_w + 12, arrow_gap);

    let mut y = layout::x_axis(&mut s, &xm, plot_bottom, &note);
    let g = |n: usize| crate::columns::group(n as u64);
    if !opts.tasks.is_empty() {
        let mut left_out = format!("{} of {} tasks drawn, the ones selected", g(shown.len()), g(m.tasks.len()));
        if dead > 0 {
            left_out += &format!("; {} of them not alive in the window", g(dead));
        }
        if over_cap > 0 {
            left_out +=
                &format!("; {} more alive, over {MAX_LANES}: the first {MAX_LANES} named are drawn", g(over_cap));
        }
        y = layout::note_lines(&mut s, &left_out, xm.left, y, width - MARGIN - xm.left);
    } else if dead + over_cap > 0 {
        let left_out = match (dead, over_cap) {
            (d, 0) => format!("{} of {} tasks not drawn: finished before the window, or spawned in its last step or after it", g(d), g(m.tasks.len())),
            (0, o) => format!(
                "{} of {} tasks not drawn: over {MAX_LANES} alive in the window, so only the longest-lived (a narrower --window shows them)",
                g(o),
                g(m.tasks.len())
            ),
            (d, o) => format!(
                "{} of {} tasks not drawn: {} not alive in the window, and of the {} alive only the longest-lived (a narrower --window shows them)",
                g(d + o),
                g(m.tasks.len()),
                g(d),
                g(m.tasks.len() - d)
            ),
        };
        y = layout::note_lines(&mut s, &left_out, xm.left, y, width - MARGIN - xm.left);
    }
    // Low lanes have no room for their "background task" caption: one note says it.
    let low = lanes.iter().filter(|l| l.minor).count();
    if low > 0 {
        let (tasks, are) = if low == 1 { ("task", "is") } else { ("tasks", "are") };
        let what =
            format!("{} background {tasks} that finished in the window, holding no lock, {are} drawn low", g(low));
        y = layout::note_lines(&mut s, &what, xm.left, y, width - MARGIN - xm.left);
    }
    // The notify a report names as a monitor's last explains the deadlock:
    // where its mark is not drawn, a note says so.
    for (t, tt) in m.tasks.iter().enumerate() {
        for mk in tt.marks.iter().filter(|mk| matches!(mk.kind, MarkKind::Notify | MarkKind::LostNotify)) {
            let lane_drawn = lanes.iter().any(|l| l.task as usize == t);
            if lane_drawn && xm.shows_event(mk.pos) {
                continue;
            }
            let why = if lane_drawn { "outside the window" } else { "on a lane not drawn" };
            let lost = if mk.kind == MarkKind::LostNotify { ", lost: nobody waited" } else { "" };
            let what = format!(
                "The report's last notify of \"{}\" (step {}, by {}{lost}) is {why}",
                m.resource_name(mk.resource),
                g(mk.pos as usize),
                m.task_name(t as u32)
            );
            y = layout::note_lines(&mut s, &what, xm.left, y, width - MARGIN - xm.left);
        }
    }
    let notes = last_step_notes(m, &shown, &xm);
    y = layout::last_step_line(&mut s, m, &xm, &notes, y);

    // Legend: only what this picture shows.
    let mut items: Vec<(Swatch, String)> = [
        (State::Running, Swatch::Fill(palette::RUNNING.into()), "running"),
        (State::Ready, Swatch::Fill(palette::READY.into()), "ready"),
        (State::Blocked, Swatch::Fill(palette::BLOCKED.into()), "blocked"),
        (State::Finished, Swatch::Thin(palette::FINISHED.into()), "finished"),
    ]
    .into_iter()
    .filter(|(st, _, _)| flags.states[st.index()])
    .map(|(_, sw, name)| (sw, name.to_string()))
    .collect();
    if lanes.iter().any(|l| !l.rows.is_empty()) {
        // Rows too thin for a label each share one line, which names them
        // top first: the legend says so, as nothing else on the lane does.
        let shared_line = dims.one_label && lanes.iter().any(|l| l.rows.len() > 1);
        let what = if shared_line {
            "lock held (task's colour; rows top to bottom as named)"
        } else {
            "lock held (task's colour)"
        };
        items.push((Swatch::Fill(palette::AXIS.into()), what.into()));
    }
    if flags.pale {
        items.push((Swatch::Fill(alpha(palette::AXIS, PALE)), "read-locked, or held part of the time".into()));
    }
    for k in MarkKind::ALL {
        // Marks of the lanes drawn only.
        let present = lanes
            .iter()
            .any(|l| m.tasks[l.task as usize].marks.iter().any(|mk| mk.kind == k && xm.shows_event(mk.pos)));
        if present {
            let sw = match k {
                MarkKind::PipeWrite => Swatch::Up,
                MarkKind::PipeRead => Swatch::Down,
                MarkKind::Send => Swatch::Dot,
                MarkKind::Recv => Swatch::Ring,
                MarkKind::Notify => Swatch::Diamond,
                MarkKind::LostNotify => Swatch::LostDiamond,
            };
            items.push((sw, k.name().into()));
        }
    }
    items.extend(layout::end_mark_legend(m, a, b));
    // What the lanes drawn show (`--tasks` may leave out the cycle's).
    let drawn = |t: u32| lanes.iter().any(|l| l.task == t);
    if cycle.iter().any(|&t| drawn(t)) {
        items.push((Swatch::Fill(palette::CYCLE_TINT.into()), "task in the deadlock cycle".into()));
    }
    if arrows.iter().any(|a| a.cycle) {
        items.push((Swatch::Arrow(palette::DEADLOCK.into()), arrow_legend(m)));
    }
    if let Some(f) = m.failure.filter(|f| f.pos >= a && f.pos <= b && drawn(f.task)) {
        let who = if f.what == "panic" { "task that panicked" } else { "task that violated the invariant" };
        items.push((Swatch::Fill(palette::CYCLE_TINT.into()), who.into()));
    }
    if arrows.iter().any(|a| !a.cycle) {
        items.push((Swatch::Arrow(palette::EDGE.into()), "blocked behind the cycle".into()));
    }
    y = layout::legend(&mut s, &items, MARGIN, width - MARGIN, y + 4);
    s.height = (y + MARGIN) as u32;
    Ok((s, Some(frame)))
}

/// The names of `tasks`, whole, the first `most` of them and a count of
/// the rest: "serverConn.run.func2#1, serverConn.run.func2#3 and 3 more".
fn names_listed(m: &Model, tasks: &[u32], most: usize) -> String {
    let names: Vec<&str> = tasks.iter().take(most).map(|&t| m.task_name(t)).collect();
    match tasks.len().saturating_sub(most) {
        0 => names.join(", "),
        more => format!("{} and {more} more", names.join(", ")),
    }
}

fn mid((y0, y1): (i32, i32)) -> i32 {
    (y0 + y1) / 2
}

fn deadlock_arrows(m: &Model) -> Vec<Arrow> {
    let Some(d) = &m.trace.deadlock else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let n = d.cycle.len();
    for (i, bt) in d.cycle.iter().enumerate() {
        let next = d.cycle[(i + 1) % n].task;
        // A monitor's wait() waits for a notify, as the final column says.
        let what = match bt.op.as_str() {
            "wait" => format!("wait {}", bt.waits_for),
            // A join waits for the next task itself, named as its lane is.
            "join" => m.task_name(next).to_string(),
            _ => bt.waits_for.clone(),
        };
        out.push(Arrow { from: bt.task, to: next, what, cycle: true, col: 0 });
    }
    // Tasks blocked behind the cycle are in the wait-for graph; arrows for
    // them here would crowd the strip.
    out.retain(|a| (a.from as usize) < m.tasks.len() && (a.to as usize) < m.tasks.len());
    out
}

/// Most lanes a timeline draws: a window over thousands of live goroutines
/// would otherwise make a picture hundreds of thousands of pixels tall.
pub const MAX_LANES: usize = 100;

/// The tasks of `alive` that get a lane, in id order: all of them, or, over
/// [`MAX_LANES`], the cycle's, then the foreground ones, then background
/// ones by how long they live in the window (a server's connection loop
/// before a thousand one-request goroutines), then by id.
fn most_telling(m: &Model, alive: &[u32], cycle: &[u32], (a, b): (u64, u64)) -> Vec<u32> {
    if alive.len() <= MAX_LANES {
        return alive.to_vec();
    }
    let lived = |t: u32| {
        let tt = &m.tasks[t as usize];
        let from = tt.spawn.unwrap_or(a).max(a);
        let to = finished_at(tt).map_or(b, |f| f.min(b));
        to.saturating_sub(from)
    };
    let rank = |t: u32| (!cycle.contains(&t), m.trace.tasks[t as usize].background, std::cmp::Reverse(lived(t)), t);
    // A background task alive for under a hundredth of the window is a dot
    // on an empty lane at this scale: over the cap, those are left out.
    let span = (b - a).max(1);
    let mut keep: Vec<u32> = alive
        .iter()
        .copied()
        .filter(|&t| cycle.contains(&t) || !m.trace.tasks[t as usize].background || lived(t) * 100 >= span)
        .collect();
    keep.sort_by_key(|&t| rank(t));
    keep.truncate(MAX_LANES);
    keep.sort_unstable();
    keep
}

/// True if task `tt` exists for some time within the window `a..b` (`a <
/// b`, as `Window::resolve` gives it): spawned before `b`, and not finished
/// by `a`. A task spawned at `b`, in the window's last step, has no time in
/// it and gets no lane, unless the window reaches the run's `end`: the
/// final column then shows it.
fn alive_in(tt: &crate::model::TaskTrack, a: u64, b: u64, end: u64) -> bool {
    tt.spawn.is_some_and(|spawn| spawn < b || (spawn == b && b >= end)) && finished_at(tt).is_none_or(|f| f > a)
}

/// What the window's last step does to the tasks drawn, which happens at
/// the window's right edge with no width to draw it in: their wakes, the
/// locks they let go of and take, the waits they start, their finish ("T2
/// takes B, T1 blocks on A"), for [`layout::last_step_line`].
fn last_step_notes(m: &Model, shown: &[u32], xm: &XMap) -> Vec<String> {
    let mut notes = Vec::new();
    for &t in shown {
        let tt = &m.tasks[t as usize];
        let mut did: Vec<String> = Vec::new();
        // A wake and a release draw nothing either: the stretch or the row
        // just reaches the edge.
        if tt.blocks.iter().any(|blk| !blk.open && blk.end == xm.b && blk.start < xm.b) {
            did.push("wakes".to_string());
        }
        for h in tt.holds.iter().filter(|h| !h.open && h.end == xm.b && h.start < xm.b) {
            did.push(format!("{} {}", layout::releases(h.mode), m.resource_name(h.resource)));
        }
        for h in tt.holds.iter().filter(|h| h.start == xm.b) {
            let how = layout::takes(h.mode);
            did.push(format!("{how} {}", m.resource_name(h.resource)));
        }
        for blk in tt.blocks.iter().filter(|blk| blk.start == xm.b) {
            let on = match (blk.resource, blk.cases.is_empty()) {
                (Some(_), _) => format!("{} {}", blk.op, waits_for(m, blk)),
                (None, false) => format!("select on {}", waits_for(m, blk)),
                (None, true) => waits_for(m, blk),
            };
            did.push(format!("blocks ({on})"));
        }
        if finished_at(tt) == Some(xm.b) {
            did.push("returns".to_string());
        }
        if !did.is_empty() {
            notes.push(format!("{} {}", m.task_name(t), did.join(" and ")));
        }
    }
    notes
}

/// Where task `tt` finished (a finished task stays finished).
fn finished_at(tt: &crate::model::TaskTrack) -> Option<u64> {
    tt.states.iter().find(|s| s.1 == State::Finished).map(|s| s.0)
}

/// Draws the deadlock arrows right of the plot (from `right`), their
/// vertical runs in columns `gap` apart from `col0`, each labelled above
/// its start with what its task waits for. In lanes packed close (a chart
/// of many), the line into the lane above can run through a label: the
/// label is then left out if the final column (`said`, per arrow) names
/// the wait in full.
#[allow(clippy::too_many_arguments)]
fn draw_arrows(
    s: &mut Scene,
    arrows: &[Arrow],
    said: &[bool],
    lanes: &[Lane],
    lane_index: &[usize],
    right: i32,
    col0: i32,
    gap: i32,
) {
    let ys =
        |a: &Arrow| (mid(lanes[lane_index[a.from as usize]].bar) - 5, mid(lanes[lane_index[a.to as usize]].bar) + 5);
    for (i, a) in arrows.iter().enumerate() {
        let color = if a.cycle { palette::DEADLOCK } else { palette::EDGE };
        let (y0, y1) = ys(a);
        let xc = col0 + a.col as i32 * gap;
        s.path(vec![(right, y0), (xc, y0), (xc, y1), (right + 8, y1)], color, 2);
        s.arrow_head((xc, y1), (right + 1, y1), 10, color);
        let label = fonts::fit(&a.what, TINY, true, col0 - right - 10).filter(|t| !t.is_empty() && col0 - right > 26);
        if let Some(t) = label {
            // The label's band: from its capitals' top to its baseline and a pixel.
            let (top, bottom) = (y0 - 5 - (fonts::CAP * TINY).ceil() as i32 - 1, y0 - 5 + 2);
            // An arrow's start line (2 px), or its end line with the arrow
            // head on it (10 px tall, at the label's start): another's, or
            // this one's own into the lane just above.
            let crossed = arrows.iter().any(|o| {
                let (o0, o1) = ys(o);
                (o0 + 1 >= top && o0 - 1 <= bottom) || (o1 + 5 >= top && o1 - 5 <= bottom)
            });
            if !(crossed && said[i]) {
                s.text(right + 6, y0 - 5, &t, TINY, true, color, Anchor::Left);
            }
        }
    }
}

fn state_color(st: State) -> Rgb {
    match st {
        State::Running => palette::RUNNING,
        State::Ready => palette::READY,
        State::Blocked => palette::BLOCKED,
        State::Finished => palette::FINISHED,
    }
}

/// What the lanes drew, for the legend.
#[derive(Default)]
struct Flags {
    pale: bool,
    /// The states drawn, by [`State::index`]: the legend names those only.
    states: [bool; 4],
}

/// Pictures narrower than this leave the deadlock arrows unlabelled.
const NARROW: i32 = 900;
/// Width of the final-state tail.
const TAIL: i32 = 76;
/// Opacity of read locks and partly held columns.
const PALE: u8 = 110;

/// What the cycle's arrows point at, as the legend names it: the holder
/// of a lock, and for the cycle's other waits the task that could release
/// a channel or pipe wait, notify a `wait()`, or is joined. An arrow
/// between two pipe writers is not "held by" (a ttrpc cycle of writes,
/// selects and locks).
fn arrow_legend(m: &Model) -> String {
    let ops: Vec<&str> = m.trace.deadlock.iter().flat_map(|d| &d.cycle).map(|b| b.op.as_str()).collect();
    let has = |names: &[&str]| ops.iter().any(|op| names.contains(op));
    let mut parts = Vec::new();
    if has(&["lock", "rlock"]) {
        parts.push("held by");
    }
    if has(&["send", "recv", "write", "read", "select"]) {
        parts.push(if parts.is_empty() { "released by" } else { "for a channel or pipe: released by" });
    }
    let waits: Vec<&sim::BlockedTask> =
        m.trace.deadlock.iter().flat_map(|d| &d.cycle).filter(|b| b.op == "wait").collect();
    let wait_groups = waits.iter().any(|b| b.in_wait_group());
    if waits.iter().any(|b| !b.in_wait_group() && !b.in_cond()) {
        parts.push(if parts.is_empty() { "notified by" } else { "for a wait: notified by" });
    }
    if waits.iter().any(|b| b.in_cond()) {
        parts.push(if parts.is_empty() { "signalled by" } else { "for a Cond: signalled by" });
    }
    // A WaitGroup's Wait, as the wait-for graph labels it.
    if wait_groups {
        parts.push(if parts.is_empty() { "Done by" } else { "for a WaitGroup: Done by" });
    }
    if has(&["join"]) {
        parts.push(if parts.is_empty() { "the task joined" } else { "for a join: the task joined" });
    }
    match parts.len() {
        0 => "waits for".to_string(),
        _ => format!("waits for ({})", parts.join(", or ")),
    }
}

/// What task `t` still waits for when the run ends (a lock, a pipe, a
/// select's cases, or the operation: `join`), as the final column names it.
/// A monitor it `wait()`s on says so: the task does not hold it, nor waits
/// to, but waits for a notify.
fn final_wait(m: &Model, t: u32) -> Option<String> {
    m.tasks[t as usize].blocks.last().filter(|b| b.open).map(|blk| match blk.op.as_str() {
        "wait" if blk.resource.is_some() => format!("wait {}", waits_for(m, blk)),
        _ => waits_for(m, blk),
    })
}

/// What blocked stretch `blk` waits for: a lock or a pipe by name, a select
/// by its cases (as the report names them), a join by the task it waits
/// for (`join T1`), else the operation.
fn waits_for(m: &Model, blk: &crate::model::Block) -> String {
    match (blk.resource, blk.peer) {
        (Some(r), _) => m.resource_name(r).to_string(),
        (None, _) if !blk.cases.is_empty() => m.trace.cases_label(&blk.cases),
        (None, Some(t)) if blk.op == "join" => format!("join {}", m.task_name(t)),
        (None, _) => blk.op.clone(),
    }
}

/// The final state of a lane, in the tail after the axis; `wait_text`, what
/// a blocked task waits for, cut to the tail.
fn draw_tail(s: &mut Scene, m: &Model, xm: &XMap, lane: &Lane, right: i32, wait_text: &str, flags: &mut Flags) {
    let t = lane.task;
    let x0 = xm.left + xm.width + 6;
    let x1 = right;
    let (bar0, bar1) = lane.bar;
    let cy = mid(lane.bar);
    // The task that failed stopped the run in its step: it ends neither
    // ready nor running, but as the failure ("panic", "invariant violated").
    let end = match m.failure.filter(|f| f.task == t) {
        Some(f) => {
            s.rect(x0, bar0, x1, bar1, palette::DEADLOCK);
            let what = layout::fit_or_cut(f.what, TINY, true, x1 - x0 - 4);
            s.text_mid((x0 + x1) / 2, cy, &what, TINY, true, palette::text_on(palette::DEADLOCK), Anchor::Center);
            None
        }
        None => m.state_at(t, m.end),
    };
    if let Some(st) = end {
        flags.states[st.index()] = true;
    }
    match end {
        None => {}
        Some(State::Finished) => s.rect(x0, cy - 1, x1, cy + 2, palette::FINISHED),
        Some(st) => {
            s.rect(x0, bar0, x1, bar1, state_color(st));
            if st == State::Blocked && !wait_text.is_empty() {
                s.text_mid((x0 + x1) / 2, cy, wait_text, TINY, true, palette::text_on(state_color(st)), Anchor::Center);
            }
        }
    }
    let color = m.task_colour(t);
    for (r, mode, y0, y1, _) in &lane.rows {
        let held = m.tasks[t as usize].holds.iter().any(|h| h.open && h.resource == *r && h.mode == *mode);
        if held {
            let a = if *mode == Mode::Read { PALE } else { 255 };
            s.rect(x0, *y0, x1, *y1, alpha(color, a));
            flags.pale |= a == PALE;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_lane(
    s: &mut Scene,
    m: &Model,
    xm: &XMap,
    lane: &Lane,
    dims: &Dims,
    in_cycle: bool,
    label_w: i32,
    flags: &mut Flags,
) {
    let t = lane.task;
    let tt = &m.tasks[t as usize];
    let info = &m.trace.tasks[t as usize];
    let (bar0, bar1) = lane.bar;
    let w = xm.width as usize;

    // Label column: colour swatch and name; lock names beside their rows.
    let cy = mid(lane.bar);
    s.rect(MARGIN + 2, cy - 6, MARGIN + 14, cy + 6, m.task_colour(t));
    let name_color = if in_cycle { palette::DEADLOCK } else { palette::INK };
    let name = layout::fit_or_cut(m.task_name(t), TEXT, true, label_w - 20);
    s.text_mid(MARGIN + 20, cy, &name, TEXT, true, name_color, Anchor::Left);
    if info.background && dims.frame_row > 0 && !lane.minor {
        // Above the name, level with the frame row.
        s.text_mid(MARGIN + 20, bar0 - 10, "background task", TINY, false, palette::MUTED, Anchor::Left);
    }

    // State bar: per column, the state that covers most of it. On a time
    // axis a clock jump takes its time: the spans keep the sleep before it
    // and the step after it apart (see `Model::spans`).
    let mut cov = vec![[0u32; 4]; w];
    for sp in m.spans(t, xm.a) {
        if sp.start.0 >= xm.b {
            break;
        }
        if sp.end.0 < xm.a || sp.end == (xm.a, false) {
            continue;
        }
        xm.cover_at(sp.start, sp.end, |c, amt| cov[c][sp.state.index()] += amt);
    }
    let cols: Vec<Option<State>> = cov
        .iter()
        .map(|c| {
            // Most coverage wins; ties go to blocked, then running, ready, finished.
            let order = [State::Blocked, State::Running, State::Ready, State::Finished];
            let best = order.iter().copied().max_by_key(|s| (c[s.index()], 4 - order_pos(*s)))?;
            (c[best.index()] > 0).then_some(best)
        })
        .collect();
    for (c0, c1, state) in runs(&cols) {
        flags.states[state.index()] = true;
        let (x0, x1) = (xm.col_x(c0), xm.col_x(c1));
        if state == State::Finished {
            s.rect(x0, cy - 1, x1, cy + 2, palette::FINISHED);
        } else {
            s.rect(x0, bar0, x1, bar1, state_color(state));
        }
    }

    // Marks, merged per column (and kept apart by a few pixels), inside the
    // plot: a mark at the window's first or last column is drawn whole.
    let mut marks: Vec<(MarkKind, i32)> = Vec::new();
    for kind in MarkKind::ALL {
        let mut last = -1_000_000;
        let from = tt.marks.partition_point(|mk| xm.event_before(mk.pos));
        for mk in &tt.marks[from..] {
            if mk.pos > xm.b {
                break;
            }
            if mk.kind != kind {
                continue;
            }
            if let Some(c) = xm.column(mk.pos) {
                let x = xm.col_x(c).clamp(xm.left + MARK_HALF, xm.left + xm.width - MARK_HALF);
                if x - last >= 6 {
                    marks.push((kind, x));
                    last = x;
                }
            }
        }
    }

    // What a long enough blocked stretch waits for, inside the bar, in the
    // first stretch between marks that holds it whole (over marks it could
    // not be read), else in the widest.
    let mut mark_xs: Vec<i32> = marks.iter().map(|&(_, x)| x).collect();
    mark_xs.sort_unstable();
    for blk in &tt.blocks {
        if blk.end < xm.a || blk.start >= xm.b {
            continue;
        }
        // A wake comes after a clock jump at its step (a sleeper's, when no
        // task could run): the stretch lasts until then.
        let end = if blk.end <= xm.b { (blk.end, !blk.open) } else { (xm.b, false) };
        let (x0, x1) = (xm.px(blk.start.max(xm.a)), xm.px_at(end));
        if x1 - x0 < 44 {
            continue;
        }
        let what = match (blk.resource, blk.peer) {
            (Some(r), _) => format!("{} {}", blk.op, m.resource_name(r)),
            (None, Some(_)) if blk.op == "join" => waits_for(m, blk),
            (None, _) => blk.op.clone(),
        };
        // Where the words do not fit, the resource's name goes on alone
        // (`strea…` and `sendL…`, not `lock s…` for both): the stretch's
        // colour says blocked, the name says on what. (A read lock and a
        // lock of one RWMutex then read alike; the final column and the
        // locks chart tell them apart.) A monitor wait keeps its `wait`,
        // which is not a wait for the monitor (`wait …deque`).
        let placed = match blk.resource.map(|r| m.resource_name(r)) {
            Some(name) if blk.op == "wait" => in_gaps(&mark_xs, x0, x1, &what, |max| {
                let room = max - fonts::width("wait ", TINY, true);
                layout::joined_to_fit(max, TINY, true, room, |room| Some(format!("wait {}", cut_name(name, room)?)))
            }),
            Some(name) => label_gap(&mark_xs, x0, x1, &what)
                .filter(|(_, t)| *t == what)
                .or_else(|| name_gap(&mark_xs, x0, x1, name)),
            None => label_gap(&mark_xs, x0, x1, &what),
        };
        if let Some((gx, text)) = placed {
            s.text_mid(gx + 5, cy, &text, TINY, true, palette::text_on(palette::BLOCKED), Anchor::Left);
        }
    }
    for (kind, x) in marks {
        layout::mark(s, kind, x, bar0, bar1);
    }

    // Frame names above the bar where there is room; ticks where it changes.
    if let Some(fy) = lane.frame_y {
        let fr = &tt.frames;
        let mut segs: Vec<(u64, u64, &str)> = Vec::new();
        for (i, &(p, f)) in fr.iter().enumerate() {
            let e = fr.get(i + 1).map_or(m.end, |x| x.0);
            let name = m.trace.frames[f as usize].name.as_str();
            match segs.last_mut() {
                Some(last) if last.2 == name => last.1 = e,
                _ => segs.push((p, e, name)),
            }
        }
        let mut last_tick = -1_000_000;
        for (p, e, name) in segs {
            if e < xm.a || p > xm.b {
                continue;
            }
            let (x0, x1) = (xm.px(p.max(xm.a)), xm.px(e.min(xm.b)));
            if p >= xm.a && x0 - last_tick >= 4 {
                s.rect(x0, fy + 4, x0 + 1, fy + dims.frame_row, palette::AXIS);
                last_tick = x0;
            }
            if x1 - x0 >= 36 {
                if let Some(text) = frame_label(name, x1 - x0 - 8) {
                    s.text(x0 + 4, fy + dims.frame_row - 5, &text, TINY, false, palette::MUTED, Anchor::Left);
                }
            }
        }
    }

    // Locks held: one row each; full colour where held most of a column,
    // pale where held part of it (or read-locked).
    let color = m.task_colour(t);
    let labels: Vec<&str> = lane.rows.iter().map(|r| r.4.as_str()).collect();
    let texts = layout::fit_distinct(&labels, TINY, false, label_w - 24);
    for (i, (r, mode, y0, y1, _)) in lane.rows.iter().enumerate() {
        let last_row = i + 1 == lane.rows.len();
        let mut cov = vec![0u32; w];
        for h in &tt.holds {
            let in_row = (h.resource, h.mode) == (*r, *mode)
                || (last_row && !lane.rows[..i].iter().any(|x| (x.0, x.1) == (h.resource, h.mode)));
            if !in_row || h.end < xm.a || h.start > xm.b {
                continue;
            }
            xm.cover(h.start, h.end, |c, amt| cov[c] = (cov[c] + amt).min(SUB as u32));
        }
        let busy = boundaries(xm, tt.holds.iter().filter(|h| h.resource == *r).map(|h| (h.start, h.end)));
        let cols: Vec<Option<u8>> = cov
            .iter()
            .zip(&busy)
            .map(|(&c, &n)| match c {
                0 => None,
                _ if *mode == Mode::Read => Some(PALE),
                c if c * 2 >= SUB as u32 || n < 2 => Some(255),
                _ => Some(PALE),
            })
            .collect();
        for (c0, c1, a) in runs(&cols) {
            // A sliver of a pixel or two is not worth a legend entry (as in
            // the locks chart): abba's T1 takes A in the deadlock's step, a
            // 1-px pale column at the plot's edge, and the legend explained
            // "read-locked, or held part of the time" for it alone. The
            // final column shows the hold in full.
            flags.pale |= a == PALE && c1 - c0 >= 3;
            s.rect(xm.col_x(c0), *y0, xm.col_x(c1).max(xm.col_x(c0) + 1), *y1, alpha(color, a));
        }
        // Rows too thin for a label each (compact lanes) share one line.
        if !dims.one_label {
            s.text_mid(xm.left - 8, (y0 + y1) / 2, &texts[i], TINY, false, palette::MUTED, Anchor::Right);
        } else if i == 0 {
            // The rows named in their order, top first ("holds streamLock,
            // sendLock": streamLock's row above sendLock's), held and
            // read-locked apart as a roomy lane's rows say; the locks of a
            // shared last row only counted, as it cannot be told apart.
            let text = held_names(&row_groups(m, lane), lane.shared, label_w - 24);
            s.text_mid(xm.left - 8, lane.rows[0].2 + 3, &text, TINY, false, palette::MUTED, Anchor::Right);
        }
    }
}

/// The tasks of the deadlock's cycle and the one that failed, in window
/// `(a, b)`: tinted, and given a lane first.
fn tinted(m: &Model, (a, b): (u64, u64), cycle: &[u32]) -> Vec<u32> {
    // The task that failed an invariant or panicked, tinted as a cycle's tasks are.
    let failed: Option<u32> = m.failure.filter(|f| f.pos >= a && f.pos <= b).map(|f| f.task);
    cycle.iter().copied().chain(failed).collect()
}

/// The tasks that get a lane, and how many of those that may have one do not.
struct Lanes {
    /// Not alive in the window.
    dead: usize,
    /// Alive, over the cap.
    over_cap: usize,
    /// In lane order.
    shown: Vec<u32>,
}

/// The lanes of a timeline of window `(a, b)` (`note` names the window).
fn choose_lanes(m: &Model, opts: &Options, (a, b): (u64, u64), note: &str, tinted: &[u32]) -> Result<Lanes, Error> {
    // The tasks that may get a lane: every one, or those `--tasks` names.
    let selected = if opts.tasks.is_empty() { None } else { Some(crate::select_tasks(m.trace, &opts.tasks)?) };
    let candidates: Vec<u32> = match &selected {
        Some(sel) => {
            let mut c = sel.clone();
            c.sort_unstable();
            c
        }
        None => (0..m.tasks.len() as u32).collect(),
    };
    let alive: Vec<u32> = candidates
        .iter()
        .copied()
        .filter(|&t| alive_in(&m.tasks[t as usize], a, b, m.end) || tinted.contains(&t))
        .collect();
    let shown = match &selected {
        None => most_telling(m, &alive, tinted, (a, b)),
        // The first alive in the order named, up to the cap: a task named
        // first is not left out for one a pattern brought in after it.
        Some(sel) => {
            let shown: Vec<u32> = sel.iter().copied().filter(|t| alive.contains(t)).take(MAX_LANES).collect();
            if shown.is_empty() {
                return Err(Error(format!("{} ({note}): {}", Error::NONE_SELECTED_ALIVE, names_listed(m, sel, 4))));
            }
            shown
        }
    };
    Ok(Lanes { dead: candidates.len() - alive.len(), over_cap: alive.len() - shown.len(), shown })
}

/// The tasks the timeline of `m` gives a lane, in lane order, as
/// [`scene`] draws it with `opts`.
///
/// ```
/// let t = sim::trace::Trace::from_json(&std::fs::read_to_string("../traces/abba-deadlock.json").unwrap()).unwrap();
/// let m = visualizer::Model::new(&t).unwrap();
/// let opts = visualizer::Options { tasks: vec!["T1".into()], ..Default::default() };
/// assert_eq!(visualizer::timeline::lanes(&m, &opts).unwrap(), [1]);
/// ```
pub fn lanes(m: &Model, opts: &Options) -> Result<Vec<u32>, Error> {
    let (a, b, note) = opts.window.resolve(m)?;
    let cycle = if m.deadlock_in(a, b) { m.cycle_tasks() } else { Vec::new() };
    choose_lanes(m, opts, (a, b), &note, &tinted(m, (a, b), &cycle)).map(|l| l.shown)
}

/// Half a mark's width: a mark's centre stays this far inside the plot.
const MARK_HALF: i32 = 5;

/// A frame's name in `max` pixels: whole, else its last part after a dot
/// (`…recycle` for `BufferManager.recycle`, `…Flush` for
/// `bufio.(*Writer).Flush`, `…run`: what the frame does, where `Buffer…`
/// said little), else that part cut (`…createStr…`), else the name cut
/// from its end (`Clien…`). A cut keeps four letters at least (`…cre…`
/// would not say which frame); `None` where none does.
fn frame_label(name: &str, max: i32) -> Option<String> {
    let fits = |t: &str| fonts::width(t, TINY, false) <= max;
    let letters = |t: &str| t.chars().filter(|c| c.is_alphanumeric()).count();
    if fits(name) {
        return Some(name.to_string());
    }
    let method = name.rsplit_once('.').map(|(_, m)| m).filter(|m| m.chars().count() >= 3);
    if let Some(method) = method {
        let whole = format!("…{method}");
        if fits(&whole) {
            return Some(whole);
        }
        let room = max - fonts::width("…", TINY, false);
        if let Some(cut) = fonts::fit(method, TINY, false, room).map(|c| format!("…{c}")) {
            if letters(&cut) >= 4 && fits(&cut) {
                return Some(cut);
            }
        }
    }
    fonts::fit(name, TINY, false, max).filter(|c| letters(c) >= 4 && fits(c))
}

/// The stretches of `x0..x1` between the marks at `mark_xs`.
fn gaps(mark_xs: &[i32], x0: i32, x1: i32) -> Vec<(i32, i32)> {
    let inside = mark_xs.iter().copied().filter(|&x| x > x0 - MARK_HALF && x < x1 + MARK_HALF);
    let mut gaps: Vec<(i32, i32)> = Vec::new();
    let mut from = x0;
    for x in inside {
        gaps.push((from, x - MARK_HALF - 1));
        from = x + MARK_HALF + 1;
    }
    gaps.push((from, x1));
    gaps
}

/// Where in the bar stretch `x0..x1` a label `what` goes, clear of the marks
/// at `mark_xs` (sorted): the first gap between marks that holds it whole,
/// else the widest gap, the text cut to it; `None` if no gap holds even a
/// cut text. With no marks, the gap is the whole stretch.
fn label_gap(mark_xs: &[i32], x0: i32, x1: i32, what: &str) -> Option<(i32, String)> {
    in_gaps(mark_xs, x0, x1, what, |max| fonts::fit(what, TINY, true, max))
}

/// [`label_gap`] for a resource's name alone, cut by [`cut_name`].
fn name_gap(mark_xs: &[i32], x0: i32, x1: i32, name: &str) -> Option<(i32, String)> {
    in_gaps(mark_xs, x0, x1, name, |max| cut_name(name, max))
}

/// A resource's name in `max` pixels, keeping what tells it from its
/// siblings: a numbered name (`channel-1.bufferQueue`, `stream#3.recv`) its
/// number (`ch…-1…`, `…-1…`), a dotted one its last part (`…deque` for
/// `ChannelStateWriteRequestExecutorImpl.deque`), another its start, where
/// names of one model differ (`strea…`, `sendL…`). `None` where that does
/// not fit, or leaves under two letters.
fn cut_name(name: &str, max: i32) -> Option<String> {
    if fonts::width(name, TINY, true) <= max {
        return Some(name.to_string());
    }
    // The last number, as fit_or_cut keeps (`pool-2.buf-7`: `-7`).
    let number = name.char_indices().rev().find_map(|(i, c)| {
        let rest = &name[i + c.len_utf8()..];
        let digits = rest.len() - rest.trim_start_matches(|d: char| d.is_ascii_digit()).len();
        (matches!(c, '-' | '#') && digits > 0).then(|| &name[i..i + 1 + digits])
    });
    let cut = match (number, name.rsplit_once('.')) {
        (Some(n), _) => Some(layout::fit_or_cut(name, TINY, true, max)).filter(|c| c.contains(n)),
        (None, Some((_, last))) if last.chars().count() >= 3 => {
            Some(format!("…{last}")).filter(|c| fonts::width(c, TINY, true) <= max)
        }
        _ => fonts::fit(name, TINY, true, max),
    }?;
    // A lone "…" or one letter and it says nothing.
    (cut.chars().filter(|c| c.is_alphanumeric()).count() >= 2 && fonts::width(&cut, TINY, true) <= max).then_some(cut)
}

/// `text` in the first gap of `x0..x1` between the marks that holds it
/// whole, else `cut` to the widest gap's room.
fn in_gaps(
    mark_xs: &[i32],
    x0: i32,
    x1: i32,
    text: &str,
    cut: impl Fn(i32) -> Option<String>,
) -> Option<(i32, String)> {
    let gaps = gaps(mark_xs, x0, x1);
    let whole = fonts::width(text, TINY, true) + 10;
    if let Some(&(g0, _)) = gaps.iter().find(|(g0, g1)| g1 - g0 >= whole) {
        return Some((g0, text.to_string()));
    }
    let &(g0, g1) = gaps.iter().max_by_key(|(g0, g1)| (g1 - g0, -g0))?;
    cut(g1 - g0 - 10).map(|t| (g0, t))
}

/// "holds A, B; reads C" in `max` pixels, cut by whole names: the last
/// names give way to a count ("holds A, B +1 more", or "holds A +2" where
/// that is what fits), which `more` locks named nowhere always join; only
/// a first name too long alone is cut inside.
/// A compact lane's lock rows for its one label, in their order: those
/// held and those read-locked apart, as a roomy lane's rows say; the locks
/// of a shared last row left to the count.
fn row_groups<'m>(m: &'m Model, lane: &Lane) -> Vec<(&'static str, Vec<&'m str>)> {
    let own = lane.rows.len() - usize::from(lane.shared > 0);
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for &(r, mode, ..) in &lane.rows[..own] {
        let verb = if mode == Mode::Read { "reads" } else { "holds" };
        match groups.last_mut() {
            Some((v, names)) if *v == verb => names.push(m.resource_name(r)),
            _ => groups.push((verb, vec![m.resource_name(r)])),
        }
    }
    groups
}

fn held_names(groups: &[(&str, Vec<&str>)], more: usize, max: i32) -> String {
    let named: usize = groups.iter().map(|(_, n)| n.len()).sum();
    let total = named + more;
    let first_names = |keep: usize, long: bool| {
        let mut left = keep;
        let mut parts = Vec::new();
        for (verb, names) in groups {
            let take = names.len().min(left);
            left -= take;
            if take > 0 {
                parts.push(format!("{verb} {}", names[..take].join(", ")));
            }
        }
        let count = match (keep < total, long) {
            (false, _) => String::new(),
            (true, true) => format!(" +{} more", total - keep),
            (true, false) => format!(" +{}", total - keep),
        };
        parts.join("; ") + &count
    };
    // As many names as fit, each count said long ("+1 more") where it fits.
    (1..=named)
        .rev()
        .flat_map(|keep| [(keep, true), (keep, false)])
        .map(|(keep, long)| first_names(keep, long))
        .find(|t| fonts::width(t, TINY, false) <= max)
        .unwrap_or_else(|| layout::fit_or_cut(&first_names(1, false), TINY, false, max))
}

fn order_pos(s: State) -> u32 {
    match s {
        State::Blocked => 0,
        State::Running => 1,
        State::Ready => 2,
        State::Finished => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_label_goes_in_the_first_gap_between_marks_that_holds_it() {
        let w = fonts::width("lock B", TINY, true) + 10;
        // No marks: the whole stretch, as before marks were looked at.
        assert_eq!(label_gap(&[], 100, 400, "lock B"), Some((100, "lock B".into())));
        // A mark at the start: the label starts after it.
        let after = 100 + MARK_HALF + 1;
        assert_eq!(label_gap(&[100], 100, 400, "lock B"), Some((after, "lock B".into())));
        // The first gap too small, the second holds it.
        assert_eq!(label_gap(&[100, 100 + w / 2], 100, 400, "lock B").unwrap().0, 100 + w / 2 + MARK_HALF + 1);
        // No gap holds it whole: the widest, the text cut to it (or nothing).
        let dense: Vec<i32> = (100..=400).step_by(12).collect();
        assert!(label_gap(&dense, 100, 400, "lock B").is_none_or(|(_, t)| t.contains('…')));
        // Marks outside the stretch do not count.
        assert_eq!(label_gap(&[50, 450], 100, 400, "lock B"), Some((100, "lock B".into())));
    }

    #[test]
    fn held_names_give_way_whole_from_the_last() {
        let w = |t: &str| fonts::width(t, TINY, false);
        let groups = [("holds", vec!["fork10", "fork11"]), ("reads", vec!["rw"])];
        let full = "holds fork10, fork11; reads rw";
        assert_eq!(held_names(&groups, 0, w(full)), full);
        assert_eq!(held_names(&groups, 0, w(full) - 1), "holds fork10, fork11 +1 more");
        // A name more with a short count before a long count with a name less.
        assert_eq!(held_names(&groups, 0, w("holds fork10, fork11 +1")), "holds fork10, fork11 +1");
        assert_eq!(held_names(&groups, 0, w("holds fork10, fork11 +1") - 1), "holds fork10 +2 more");
        assert_eq!(held_names(&groups, 0, w("holds fork10 +2")), "holds fork10 +2");
        // Not even one whole name: the first is cut inside, never dropped.
        let cut = held_names(&groups, 0, w("holds fork10 +2") - 4);
        assert!(cut.starts_with("holds") && cut.contains('…') && w(&cut) <= w("holds fork10 +2") - 4, "{cut}");
        // Locks of a shared row are counted, however wide the room.
        assert_eq!(held_names(&[("holds", vec!["fork10"])], 2, 1000), "holds fork10 +2 more");
    }

    #[test]
    fn a_cut_resource_name_keeps_what_tells_it_apart() {
        let w = |t: &str| fonts::width(t, TINY, true);
        // A numbered name its number, at any width that holds it.
        for max in w("…-1…")..w("channel-1.receivedBuffers") {
            let cut = cut_name("channel-1.receivedBuffers", max);
            if max >= w("ch…-1…") {
                assert!(cut.is_some(), "{max}");
            }
            if let Some(cut) = cut {
                assert!(cut.contains("-1") && w(&cut) <= max, "{max}: {cut}");
            }
        }
        // Two numbers: the last, as fit_or_cut keeps.
        let cut = cut_name("pool-2.buf-7", w("p…-7")).unwrap();
        assert!(cut.ends_with("-7"), "{cut}");
        assert_eq!(cut_name("stream#13.recv", w("…#13…")).as_deref(), Some("…#13…"));
        // A dotted name its last part; another its start.
        let deque = "ChannelStateWriteRequestExecutorImpl.deque";
        assert_eq!(cut_name(deque, w("…deque")).as_deref(), Some("…deque"));
        assert_eq!(cut_name("streamLock", w("strea…")).as_deref(), Some("strea…"));
        assert_eq!(cut_name("sendLock", w("sendL…")).as_deref(), Some("sendL…"));
        // Under two letters it says nothing.
        assert_eq!(cut_name("streamLock", w("s…")), None);
    }

    #[test]
    fn a_cut_frame_name_keeps_what_the_frame_does() {
        let w = |t: &str| fonts::width(t, TINY, false);
        assert_eq!(frame_label("LocalBufferPool.recycle", w("…recycle")).as_deref(), Some("…recycle"));
        assert_eq!(frame_label("bufio.(*Writer).Flush", 200).as_deref(), Some("bufio.(*Writer).Flush"));
        let cut = frame_label("Client.createStream", w("…createSt…")).unwrap();
        assert!(cut.starts_with("…create") && cut.ends_with('…') && w(&cut) <= w("…createSt…"), "{cut}");
        // Three letters of a cut method do not say which (the name's start
        // then, four letters at least); a whole method does.
        assert_eq!(frame_label("Client.createStream", w("…cre…")).as_deref(), Some("Clie…"));
        assert_eq!(frame_label("Client.createStream", w("Cl…")), None);
        assert_eq!(frame_label("Client.run", w("…run")).as_deref(), Some("…run"));
        assert_eq!(frame_label("main", 200).as_deref(), Some("main"));
    }
}
