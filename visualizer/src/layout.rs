//! Pieces every chart shares: the title block, the x axis, the deadlock
//! line, the legend, and the note drawn when a chart has nothing to show.

use crate::columns::{self, XMap};
use crate::fonts;
use crate::model::Model;
use crate::palette::{self, Rgb};
use crate::scene::{alpha, Anchor, Paint, Scene};
use crate::{Header, Options};

/// Outer margin.
pub const MARGIN: i32 = 20;
/// Font sizes (ab_glyph pixel sizes: the em is about 0.73 of it).
pub const TITLE: f64 = 24.0;
pub const TEXT: f64 = 17.0;
pub const SMALL: f64 = 15.0;
pub const TINY: f64 = 14.0;

/// "seed N", or "schedule" for a run that a schedule string fixed (a replayed
/// schedule, `explore`'s failing schedule (strategy `dfs`), a shrunk one): its
/// seed means nothing.
pub fn run_name(meta: &sim::trace::Meta) -> String {
    if named_by_schedule(meta) {
        // Where the schedule came from, as the header's next line gives it.
        match meta.strategy.as_str() {
            "shrink" => "shrunk schedule",
            "dfs" => "explored schedule",
            _ => "replayed schedule",
        }
        .to_string()
    } else {
        format!("seed {}", meta.seed)
    }
}

/// True for a run a schedule string fixed (a replay, `explore`'s failing
/// schedule, a shrunk run), which no seed reproduces.
pub fn named_by_schedule(meta: &sim::trace::Meta) -> bool {
    matches!(meta.strategy.as_str(), "replay" | "shrink" | "dfs")
}

/// Draws the title block from `y` and returns the y below it.
///
/// Line 1: chart, model, seed and verdict, or the caller's custom title
/// (`--title`), wrapped over up to two lines. Line 2: (under a custom
/// title, first the chart, model and seed), parameters, strategy, length,
/// deadsim version; for a run named by its schedule,
/// then the schedule string. Last: the outcome message. With
/// [`Header::Title`] line 1 alone; with [`Header::None`] nothing.
pub fn title(s: &mut Scene, m: &Model, what: &str, opts: &Options, y: i32) -> i32 {
    let (custom, header) = (opts.title.as_deref(), opts.header);
    if header == Header::None {
        return y;
    }
    let meta = &m.trace.meta;
    let x = MARGIN;
    let right = s.width as i32 - MARGIN;
    let mut y1 = y + 24;
    if let Some(custom) = custom {
        for (i, t) in wrap(custom, TITLE, true, right - x, 2).iter().enumerate() {
            if i > 0 {
                y1 += 30;
            }
            s.text(x, y1, t, TITLE, true, palette::INK, Anchor::Left);
        }
    } else {
        let head = format!("{what} · {} · {}", meta.model, run_name(meta));
        s.text(x, y1, &head, TITLE, true, palette::INK, Anchor::Left);
        let verdict_color = if meta.verdict == "no-deadlock" { palette::INK } else { palette::DEADLOCK };
        let hx = x + fonts::width(&head, TITLE, true);
        // No leading space in the text itself: SVG viewers collapse it.
        let gap = fonts::width("x", TITLE, true) / 2;
        s.text(
            hx + gap,
            y1,
            &format!("· {}", sim::outcome::verdict_words(&meta.verdict)),
            TITLE,
            true,
            verdict_color,
            Anchor::Left,
        );
    }
    if header == Header::Title {
        return y1 + 20;
    }

    let params: Vec<String> = meta.params.iter().map(|p| format!("{}={}", p.name, p.value)).collect();
    let mut parts = Vec::new();
    // No-break spaces inside each part: a wrapped line breaks between the
    // parameters and at the dots, not inside "deadsim 0.1.0".
    let keep = |t: String| t.replace(' ', "\u{a0}");
    if custom.is_some() {
        // What the own first line said, but for its verdict (the outcome
        // line below gives it): without the seed the figure could not be
        // made again, and the charts of one `--chart all` would look alike.
        parts.push(keep(format!("{what} · {} · {}", meta.model, run_name(meta))));
    }
    if !params.is_empty() {
        parts.push(params.join(" "));
    }
    // Where the run's facts start: a line too long for the picture breaks
    // there first, so the facts stay together, not one left alone.
    let facts = parts.len();
    parts.push(keep(format!("strategy {}", meta.strategy)));
    parts.push(keep(columns::steps(meta.steps)));
    parts.push(keep(format!("{} virtual", columns::duration(meta.time_ns))));
    parts.push(keep(format!("{} events", columns::group(m.trace.events.len() as u64))));
    parts.push(keep(format!("deadsim {}", meta.deadsim)));
    let line2 = parts.join("  ·  ");
    let lines = if fonts::width(&line2, SMALL, false) <= right - x || facts == 0 {
        wrap(&line2, SMALL, false, right - x, 3)
    } else {
        // Three lines at most, as one wrapped line had: the facts' (one,
        // but at the narrowest widths), the rest the parameters'.
        let tail = wrap(&parts[facts..].join("  ·  "), SMALL, false, right - x, 2);
        let mut lines = wrap(&parts[..facts].join("  ·  "), SMALL, false, right - x, 3 - tail.len());
        lines.extend(tail);
        lines
    };
    // The run's description and its outcome, each wrapped rather than cut:
    // the outcome names every task of the cycle.
    let mut y = y1 + 2;
    for t in lines {
        y += 22;
        // A line broken after a separator does not end in it.
        let t = t.trim_end_matches('·').trim_end();
        s.text(x, y, t, SMALL, false, palette::MUTED, Anchor::Left);
    }
    if named_by_schedule(meta) {
        // A run named by its schedule, not a seed: the string that replays
        // it, so a reader of the figure can run it (cut, it would replay
        // nothing: too long for the line, the figure says where it is).
        // Over up to three lines, broken anywhere (it has no spaces);
        // longer, its length, and where it is: a figure made with its run
        // has no trace file beside it, so the run's own output is named too.
        let line = format!("schedule {}", meta.replay);
        let lines = break_anywhere(&line, SMALL, right - x, 3).unwrap_or_else(|| {
            vec![format!(
                "schedule: {} characters, printed with the run (and in its trace's meta.replay)",
                meta.replay.chars().count()
            )]
        });
        for line in lines {
            y += 22;
            s.text(x, y, &line, SMALL, false, palette::MUTED, Anchor::Left);
        }
    }
    let message = outcome_lines(&meta.message, SMALL, right - x, 4);
    if message.is_empty() {
        y += 22;
    }
    for t in message {
        y += 22;
        s.text(x, y, &t, SMALL, false, palette::INK, Anchor::Left);
    }
    y + 14
}

/// `text` broken into at most `lines` lines of at most `max` pixels,
/// anywhere between characters (a schedule string, one long word); `None`
/// if it needs more.
fn break_anywhere(text: &str, size: f64, max: i32, lines: usize) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut line = String::new();
    for ch in text.chars() {
        line.push(ch);
        if fonts::width(&line, size, false) > max && line.chars().count() > 1 {
            line.pop();
            out.push(std::mem::take(&mut line));
            if out.len() == lines {
                return None;
            }
            line.push(ch);
        }
    }
    if !line.is_empty() {
        out.push(line);
    }
    Some(out)
}

/// The outcome `message` broken into at most `lines` lines of `max` pixels.
/// A deadlock's cycle too long for them gives up links from its middle
/// ("-> … (7 more) ->"), never its last, which closes the cycle; anything
/// else is cut at its end as [`wrap`] cuts.
pub fn outcome_lines(message: &str, size: f64, max: i32, lines: usize) -> Vec<String> {
    let all = wrap(message, size, false, max, usize::MAX);
    if all.len() <= lines {
        return all;
    }
    // A deadlock's cycle only: any other message is cut at its end.
    let links: Vec<&str> =
        if message.starts_with("deadlock (") { message.split(" -> ").collect() } else { vec![message] };
    let last = links.len().saturating_sub(1);
    for keep in (1..last).rev() {
        let t = format!("{} -> … ({} more) -> {}", links[..keep].join(" -> "), last - keep, links[last]);
        let w = wrap(&t, size, false, max, usize::MAX);
        if w.len() <= lines {
            return w;
        }
    }
    wrap(message, size, false, max, lines)
}

/// `text` broken at spaces into lines of at most `max` pixels, at most
/// `lines` of them (the last one cut with an ellipsis if the text goes on).
pub fn wrap(text: &str, size: f64, bold: bool, max: i32, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() && out.len() < lines {
        if out.len() + 1 == lines || fonts::width(rest, size, bold) <= max {
            out.extend(fonts::fit(rest, size, bold, max));
            break;
        }
        // The longest prefix that fits and ends before a space.
        let cut =
            rest.match_indices(' ').map(|(i, _)| i).take_while(|&i| fonts::width(&rest[..i], size, bold) <= max).last();
        match cut {
            Some(i) => {
                out.push(rest[..i].trim_end().to_string());
                rest = rest[i..].trim_start();
            }
            // One word wider than the line: cut it.
            None => {
                out.extend(fonts::fit(rest, size, bold, max));
                break;
            }
        }
    }
    out
}

/// Draws the backgrounds of a chart's lanes, each `(top, bottom, in the
/// cycle)`: the cycle tint, a separator under each lane, the line above the
/// plot and the grid.
pub fn lane_backgrounds(
    s: &mut Scene,
    xm: &XMap,
    lanes: impl IntoIterator<Item = (i32, i32, bool)>,
    plot_top: i32,
    plot_bottom: i32,
) {
    let right = s.width as i32 - MARGIN;
    for (top, bottom, in_cycle) in lanes {
        if in_cycle {
            s.rect(MARGIN, top + 1, right, bottom, palette::CYCLE_TINT);
        }
        s.rect(MARGIN, bottom, right, bottom + 1, palette::GRID);
    }
    s.rect(MARGIN, plot_top, right, plot_top + 1, palette::GRID);
    grid(s, xm, plot_top, plot_bottom);
}

/// Draws vertical grid lines at the ticks of `xm` from `top` to `bottom`.
pub fn grid(s: &mut Scene, xm: &XMap, top: i32, bottom: i32) {
    for t in axis_ticks(xm) {
        let x = xm.px_value(t);
        if x >= xm.left && x <= xm.left + xm.width {
            s.rect(x, top, x + 1, bottom, palette::GRID);
        }
    }
}

/// A tick of the x axis: its x, and its label with where the label spans,
/// if it has one.
type Tick = (i32, Option<(String, (i32, i32))>);

/// The ticks of `xm`'s axis, about 110 px apart; closer (80, then 60) where
/// at 110 the only round tick falls too near an end to be labelled (a
/// narrow chart of 22.7 µs: 0, 20 µs, 22.7 µs would read "0 µs ... 22.7 µs").
fn axis_ticks(xm: &XMap) -> Vec<u64> {
    let at = |spacing: i32| columns::ticks(xm.x0, xm.x1, xm.width, spacing);
    let inner = |ticks: &[u64]| {
        labelled_ticks(xm, ticks).iter().any(|(x, l)| l.is_some() && *x > xm.left && *x < xm.left + xm.width)
    };
    // Where no spacing gives one, the usual ticks: closer ones would only
    // add unlabelled grid lines.
    [110, 80, 60].into_iter().map(at).find(|t| inner(t)).unwrap_or_else(|| at(110))
}

/// The ends of the axis and `ticks`, left to right, each labelled unless
/// its label would crowd an end's.
fn labelled_ticks(xm: &XMap, ticks: &[u64]) -> Vec<Tick> {
    let right = xm.left + xm.width;
    // Both ends of the window are labelled, whatever the ticks: the time or
    // step of a deadlock at the run's end, or of a window's first and last
    // step, is what a reader looks for on the axis. An end is labelled as
    // exactly as the axis unit allows (`22.713 µs`); the right one ends at
    // its tick, clear of the final column's "final" ("100.000 msfinal"
    // otherwise).
    let step = if ticks.len() >= 2 { ticks[1] - ticks[0] } else { 1 };
    // The ends with the ticks' decimals, if there are ticks between them.
    let (first, last) = columns::end_labels(xm.x0, xm.x1, xm.time, if ticks.len() >= 2 { step } else { 0 });
    let first_span = {
        let w = fonts::width(&first, SMALL, false);
        let x0 = (xm.left - w / 2).max(MARGIN);
        (x0, x0 + w)
    };
    let last_span = (right - fonts::width(&last, SMALL, false), right);
    let mut drawn: Vec<Tick> = vec![(xm.left, Some((first, first_span))), (right, Some((last, last_span)))];
    // The span of the last round tick labelled: labels wider than the
    // ticks are apart (`100 000 000` steps) keep clear of each other too.
    let mut previous: Option<(i32, i32)> = None;
    for &t in ticks {
        let x = xm.px_value(t);
        if x <= xm.left || x >= right {
            // An end, labelled above (or outside the window).
            continue;
        }
        // A lone tick has no step to take its decimals from: as exact as
        // its own value needs (`2 µs` between `1.6 µs` and `2.4 µs`).
        let label = columns::label(t, xm.time, if ticks.len() >= 2 { step } else { t }, xm.x1);
        let w = fonts::width(&label, SMALL, false);
        // Centred on its tick, unless it would run past the right end.
        let span = if x + w / 2 > right { (right - w, right) } else { (x - w / 2, x - w / 2 + w) };
        // A tick label too close to an end's gives way to it (its tick and
        // grid line stay).
        let clear = |o: (i32, i32)| span.1 + 14 <= o.0 || o.1 + 14 <= span.0;
        let labelled = clear(first_span) && clear(last_span) && previous.is_none_or(clear);
        if labelled {
            previous = Some(span);
        }
        drawn.push((x, labelled.then_some((label, span))));
    }
    drawn.sort_by_key(|t| t.0);
    drawn
}

/// Draws the x axis at `y` (ticks, labels, axis title and the window note)
/// and returns the y below it.
pub fn x_axis(s: &mut Scene, xm: &XMap, y: i32, note: &str) -> i32 {
    s.rect(xm.left, y, xm.left + xm.width + 1, y + 1, palette::AXIS);
    let ticks_drawn = labelled_ticks(xm, &axis_ticks(xm));
    // Ticks and labels left to right, so that the scene (and the SVG) reads
    // in axis order.
    for (x, label) in &ticks_drawn {
        s.rect(*x, y, *x + 1, y + 6, palette::AXIS);
        if let Some((label, (x0, _))) = label {
            s.text(*x0, y + 22, label, SMALL, false, palette::MUTED, Anchor::Left);
        }
    }
    let what = if xm.time { "virtual time" } else { "scheduler step" };
    s.text(xm.left, y + 46, what, SMALL, true, palette::INK, Anchor::Left);
    let wx = xm.left + fonts::width(what, SMALL, true) + 16;
    if fonts::width(note, SMALL, false) <= xm.left + xm.width - wx {
        s.text(xm.left + xm.width, y + 46, note, SMALL, false, palette::MUTED, Anchor::Right);
        return y + 58;
    }
    // A note too long for the room beside the axis title (a narrow picture
    // of a long run: "window last:77: steps 4 131–4 207 of 4 207 steps,
    // ending at the deadlock") goes under it, as wide as the picture allows.
    note_lines(s, note, xm.left, y + 62, s.width as i32 - MARGIN - xm.left)
}

/// Writes `text` from (`x`, `y`) in small muted type, over up to three
/// lines of `max` pixels (cut only on the last), and returns the y below:
/// the notes under a chart ("3 of 17 tasks not drawn: ...").
pub fn note_lines(s: &mut Scene, text: &str, x: i32, mut y: i32, max: i32) -> i32 {
    for t in wrap(text, SMALL, false, max, 3) {
        s.text(x, y + 2, &t, SMALL, false, palette::MUTED, Anchor::Left);
        y += 22;
    }
    y
}

/// Draws the dashed deadlock line from `top` to `bottom` (labelled above
/// `top`) when the deadlock is inside the window.
pub fn deadlock_line(s: &mut Scene, m: &Model, xm: &XMap, top: i32, bottom: i32) {
    let (Some((d, what)), Some(x)) = (end_mark(m), end_mark_x(m, xm)) else { return };
    s.dashed((x, top), (x, bottom), palette::DEADLOCK, 2, 6, 4);
    let label = format!("{what}, step {}", columns::group(d));
    let w = fonts::width(&label, SMALL, true);
    // Right-aligned on the line when it is near the right edge.
    let (lx, anchor) = if x + w / 2 > xm.left + xm.width { (x, Anchor::Right) } else { (x, Anchor::Center) };
    s.text(lx, top - 6, &label, SMALL, true, palette::DEADLOCK, anchor);
}

/// Under the x axis (from `y`), what the window's last step did, given as
/// `notes` by the chart ("T2 takes B"): it happens at the window's right
/// edge, with no width to draw it in. Nothing when the window reaches the
/// run's end: the final column shows the state then. Returns the y below.
pub fn last_step_line(s: &mut Scene, m: &Model, xm: &XMap, notes: &[String], mut y: i32) -> i32 {
    if notes.is_empty() || xm.b >= m.end || xm.b <= xm.a {
        return y;
    }
    let what = format!("At the end of step {}, the window's last: {}.", columns::group(xm.b), notes.join(", "));
    for t in wrap(&what, SMALL, false, s.width as i32 - MARGIN - xm.left, 3) {
        s.text(xm.left, y + 2, &t, SMALL, false, palette::INK, Anchor::Left);
        y += 22;
    }
    y
}

/// How a last-step note says a lock is taken: "takes", or "read-locks".
pub fn takes(mode: crate::model::Mode) -> &'static str {
    match mode {
        crate::model::Mode::Read => "read-locks",
        crate::model::Mode::Exclusive => "takes",
    }
}

/// How a last-step note says a lock is let go of: "lets go of", or "read-unlocks".
pub fn releases(mode: crate::model::Mode) -> &'static str {
    match mode {
        crate::model::Mode::Read => "read-unlocks",
        crate::model::Mode::Exclusive => "lets go of",
    }
}

/// The x of the line [`deadlock_line`] draws, if the window shows it: text
/// laid across the plot stops short of it.
///
/// The line goes right of the deadlock's position, on no column before
/// it: a lock let go of just before (Flink's pipeline, 585 steps in 935 px:
/// `LocalBufferPool`'s last hold) was drawn in the plot's last two columns,
/// which the line, drawn on them, hid. At the window's right edge (a
/// deadlock ends the run) that puts it in the 6-px gap before the final
/// column, in its middle: a PNG draws its 2 px on 3 columns, and at one
/// pixel right of the edge it covered the edge's own column, where what
/// the deadlock's step did ends (ttrpc's blocking write, a pipe chart's
/// 2-px tick from the last column; a frame's tick; a blocked stretch
/// begun then), leaving a pixel of it.
pub fn end_mark_x(m: &Model, xm: &XMap) -> Option<i32> {
    let (d, _) = end_mark(m)?;
    (xm.a..=xm.b).contains(&d).then(|| xm.px(d) + 3)
}

/// Where the run ended in a failure and what it was: the deadlock, else an
/// invariant violation or a panic. The charts mark it with a dashed line.
pub fn end_mark(m: &Model) -> Option<(u64, &'static str)> {
    m.deadlock.map(|d| (d, "deadlock")).or(m.failure.map(|f| (f.pos, f.what)))
}

/// The legend entry of the line [`deadlock_line`] draws in window `a..=b`, if any.
pub fn end_mark_legend(m: &Model, a: u64, b: u64) -> Option<(Swatch, String)> {
    end_mark(m)
        .filter(|&(d, _)| d >= a && d <= b)
        .map(|(_, what)| (Swatch::Dash(palette::DEADLOCK.into()), what.into()))
}

/// A legend entry's symbol.
#[derive(Clone, Copy, Debug)]
pub enum Swatch {
    /// A filled box.
    Fill(Paint),
    /// Boxes side by side labelled 1, 2, 3 and 4+, each in its shade with
    /// its ink: how many a shade stands for (the locks chart's waiting row).
    Counts([(Paint, Rgb); 4]),
    /// A thin horizontal line.
    Thin(Paint),
    /// A dashed vertical line.
    Dash(Paint),
    /// A dashed horizontal line.
    HDash(Paint),
    /// An outlined box (white inside).
    Outline(Paint),
    /// A box in a 2-px frame of the first paint, filled with the second:
    /// the locks chart's read hold.
    Framed(Paint, Paint),
    /// An outlined hexagon.
    Hex(Paint, Paint),
    /// Up and down triangles, circles, diamonds: the marks of
    /// [`crate::model::MarkKind`].
    Up,
    Down,
    Dot,
    Ring,
    Diamond,
    LostDiamond,
    /// An arrow.
    Arrow(Paint),
}

const SWATCH_W: i32 = 22;
/// The width of one box of [`Swatch::Counts`].
const COUNT_W: i32 = 22;

impl Swatch {
    fn width(&self) -> i32 {
        match self {
            Swatch::Counts(cells) => COUNT_W * cells.len() as i32,
            _ => SWATCH_W,
        }
    }
}

fn draw_swatch(s: &mut Scene, sw: Swatch, x: i32, cy: i32) {
    match sw {
        Swatch::Fill(p) => {
            s.rect(x, cy - 7, x + SWATCH_W, cy + 7, p);
        }
        Swatch::Counts(cells) => {
            for (i, (paint, ink)) in cells.iter().enumerate() {
                let x0 = x + COUNT_W * i as i32;
                s.rect(x0, cy - 9, x0 + COUNT_W, cy + 9, *paint);
                let label = if i + 1 == cells.len() { format!("{}+", i + 1) } else { (i + 1).to_string() };
                s.text_mid(x0 + COUNT_W / 2, cy, &label, TINY, true, *ink, Anchor::Center);
            }
        }
        Swatch::Thin(p) => s.rect(x, cy - 1, x + SWATCH_W, cy + 2, p),
        Swatch::Dash(p) => s.dashed((x + SWATCH_W / 2, cy - 9), (x + SWATCH_W / 2, cy + 9), p, 2, 5, 3),
        Swatch::HDash(p) => s.dashed((x, cy), (x + SWATCH_W, cy), p, 2, 6, 4),
        Swatch::Outline(p) => {
            s.frame(x, cy - 8, x + SWATCH_W, cy + 8, p, 2);
            s.rect(x, cy - 8, x + 5, cy + 8, p);
        }
        Swatch::Framed(border, fill) => {
            s.rect(x, cy - 7, x + SWATCH_W, cy + 7, fill);
            s.frame(x, cy - 7, x + SWATCH_W, cy + 7, border, 2);
        }
        Swatch::Hex(border, fill) => {
            let hex = |d: i32| {
                vec![
                    (x - d, cy),
                    (x + 6 - d, cy - 8 - d),
                    (x + SWATCH_W - 6 + d, cy - 8 - d),
                    (x + SWATCH_W + d, cy),
                    (x + SWATCH_W - 6 + d, cy + 8 + d),
                    (x + 6 - d, cy + 8 + d),
                ]
            };
            s.polygon(hex(0), border);
            s.polygon(hex(-2), fill);
        }
        Swatch::Up => mark(s, crate::model::MarkKind::PipeWrite, x + SWATCH_W / 2, cy - 5, cy + 5),
        Swatch::Down => mark(s, crate::model::MarkKind::PipeRead, x + SWATCH_W / 2, cy - 5, cy + 5),
        Swatch::Dot => mark(s, crate::model::MarkKind::Send, x + SWATCH_W / 2, cy - 5, cy + 5),
        Swatch::Ring => mark(s, crate::model::MarkKind::Recv, x + SWATCH_W / 2, cy - 5, cy + 5),
        Swatch::Diamond => mark(s, crate::model::MarkKind::Notify, x + SWATCH_W / 2, cy - 7, cy + 7),
        Swatch::LostDiamond => mark(s, crate::model::MarkKind::LostNotify, x + SWATCH_W / 2, cy - 7, cy + 7),
        Swatch::Arrow(p) => {
            s.line((x, cy), (x + SWATCH_W - 4, cy), p, 2);
            s.arrow_head((x, cy), (x + SWATCH_W, cy), 9, p);
        }
    }
}

/// Draws a mark at column centre `x` on a bar spanning `top..bottom`:
/// pipe write = triangle up in the upper half, read = triangle down in the
/// lower half, channel send = dot (upper), receive = ring (lower), a
/// report's last notify = diamond (white in red where it was lost).
pub fn mark(s: &mut Scene, kind: crate::model::MarkKind, x: i32, top: i32, bottom: i32) {
    use crate::model::MarkKind::*;
    let ink = Rgb(0x11, 0x11, 0x11);
    let mid = (top + bottom) / 2;
    match kind {
        PipeWrite => s.polygon(vec![(x, top + 1), (x - 5, mid), (x + 5, mid)], ink),
        PipeRead => s.polygon(vec![(x - 5, mid), (x + 5, mid), (x, bottom - 1)], ink),
        Send => s.circle(x, top + (mid - top) / 2 + 1, 3, ink, true),
        Recv => {
            s.circle(x, mid + (bottom - mid) / 2, 3, palette::WHITE, true);
            s.circle(x, mid + (bottom - mid) / 2, 3, ink, false);
        }
        // A diamond the bar's height: ink, or for the lost one white in
        // the deadlock's red.
        Notify => s.polygon(vec![(x, top), (x + 5, mid), (x, bottom), (x - 5, mid)], ink),
        LostNotify => {
            s.polygon(vec![(x, top), (x + 6, mid), (x, bottom), (x - 6, mid)], palette::DEADLOCK);
            s.polygon(vec![(x, top + 3), (x + 3, mid), (x, bottom - 3), (x - 3, mid)], palette::WHITE);
        }
    }
}

/// Draws a legend (symbols and labels, wrapped to the width) from `y` and
/// returns the y below it.
pub fn legend(s: &mut Scene, items: &[(Swatch, String)], x0: i32, x1: i32, y: i32) -> i32 {
    let row = 26;
    let (mut x, mut cy) = (x0, y + row / 2);
    for (sw, label) in items {
        // An entry wider than a whole row ("held by" a very long name) is
        // cut to it, keeping the name's end.
        let label = fit_or_cut(label, SMALL, false, x1 - x0 - sw.width() - 8);
        let w = sw.width() + 8 + fonts::width(&label, SMALL, false);
        if x > x0 && x + w > x1 {
            x = x0;
            cy += row;
        }
        draw_swatch(s, *sw, x, cy);
        s.text_mid(x + sw.width() + 8, cy, &label, SMALL, false, palette::INK, Anchor::Left);
        x += w + 26;
    }
    cy + row / 2 + 4
}

/// The scene of a chart with nothing to draw: the title and one sentence.
pub fn empty(m: &Model, what: &str, sentence: &str, opts: &Options) -> Scene {
    let width = opts.width;
    let mut s = Scene::new(width, 0);
    let y = title(&mut s, m, what, opts, MARGIN);
    s.rect(MARGIN, y, width as i32 - MARGIN, y + 80, alpha(palette::GRID, 110));
    s.text_mid(width as i32 / 2, y + 40, sentence, TEXT, false, palette::MUTED, Anchor::Center);
    s.height = (y + 80 + MARGIN) as u32;
    s
}

/// Task names as they fit in `max` pixels. A name cut short is cut in the
/// middle and keeps its instance number (`serviceS…func1#2371`,
/// `Join(…256)-3`): names of one kind share their start, and what tells
/// `serverConn.run.func1` from `serverConn.run.func2#5` is at the end.
pub fn fit_or_cut(text: &str, size: f64, bold: bool, max: i32) -> String {
    if fonts::width(text, size, bold) <= max {
        return text.to_string();
    }
    // The id after a name two tasks share (`worker (task 2)`) is what
    // tells them apart: it stays whole, and the name is cut as names are.
    let id_at = text.rfind(" (task ").filter(|&i| {
        let digits = &text[i + " (task ".len()..];
        digits.strip_suffix(')').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    });
    if let Some(i) = id_at {
        let (head, tail) = text.split_at(i);
        let room = max - fonts::width(tail, size, bold);
        if room >= fonts::width("ab…", size, bold) {
            return fit_or_cut(head, size, bold, room) + tail;
        }
    }
    // A select's cases ("send requests | recv done"): each keeps its
    // operation and the start of its channel, so that the cut shows every
    // case, not the first case's start and the last case's end.
    if text.contains(" | ") {
        if let Some(t) = fit_cases(text, size, bold, max) {
            return t;
        }
        if let Some(t) = fit_first_cases(text, size, bold, max) {
            return t;
        }
    }
    if let Some(i) = numbered_at(text, '#').or_else(|| numbered_at(text, '-')) {
        let (head, tail) = text.split_at(i);
        // Cut in the middle (`serverC…func2#3`), else from its end (`ca…-1`,
        // where `call…` would not say which caller).
        let room = max - fonts::width(tail, size, bold);
        let cut = |room| fonts::fit_middle(head, size, bold, room).or_else(|| fonts::fit(head, size, bold, room));
        if let Some(t) = joined_to_fit(max, size, bold, room, |room| cut(room).map(|h| h + tail)) {
            return t;
        }
    }
    // An instance's field (`channel-1.bufferQueue`, `holds stream#3.recv`):
    // the instance, a word with a number, is what tells it from its
    // siblings, so the field gives way from its end while the instance and
    // the dot fit.
    // The dotted word must be numbered as instances are (`channel-1`,
    // `stream#3`), not a version or a protocol (`v1.2.3`, `http2.conn`).
    let instance = |d: usize| {
        let word = &text[text[..d].rfind(' ').map_or(0, |i| i + 1)..d];
        numbered_at(word, '-').or_else(|| numbered_at(word, '#')).is_some()
    };
    if let Some(dot) = text.find('.').filter(|&d| instance(d)) {
        if let Some(t) =
            fonts::fit(text, size, bold, max).filter(|t| t.chars().count() > text[..=dot].chars().count() + 1)
        {
            return t;
        }
    }
    // Too narrow for that: the instance's number is kept and its name
    // gives way before it (`recv s…#13.recv`, then `recv …#13…`), as three
    // selects on streams 11, 13 and 15 are told apart by nothing else.
    // (Not for a select: its cases are cut as cases, above.)
    if let Some(t) = keep_inner_number(text, size, bold, max).filter(|_| !text.contains(" | ")) {
        return t;
    }
    fonts::fit_middle(text, size, bold, max).or_else(|| fonts::fit(text, size, bold, max)).unwrap_or_default()
}

/// For a text whose last numbered instance is followed by a field
/// (`recv stream#13.recv`): the text with the instance's name cut before
/// its number, keeping the first word whole (`recv s…#13.recv`), else with
/// the field dropped too (`recv …#13…`). `None` without such an instance,
/// or if not even that fits.
fn keep_inner_number(text: &str, size: f64, bold: bool, max: i32) -> Option<String> {
    // In the text's last word, the last `#N` or `-N` a dot follows
    // (`pkg.chan-1.buf`: `-1`).
    let last_word = text.rfind(' ').map_or(0, |i| i + 1);
    let word = &text[last_word..];
    let (dot, at) = word
        .match_indices('.')
        .rev()
        .find_map(|(d, _)| numbered_at(&word[..d], '#').or_else(|| numbered_at(&word[..d], '-')).map(|at| (d, at)))?;
    let (dot, at) = (last_word + dot, last_word + at);
    let (head, number, field) = (&text[..at], &text[at..dot], &text[dot..]);
    // The first word (a select case's operation) stays whole.
    let op_end = head.find(' ').map_or(0, |i| i + 1);
    let (op, name) = head.split_at(op_end);
    for tail in [format!("{number}{field}"), format!("{number}…")] {
        let room = max - fonts::width(op, size, bold) - fonts::width(&tail, size, bold);
        let cut = |room| {
            fonts::fit(name, size, bold, room).or_else(|| (fonts::width("…", size, bold) <= room).then(|| "…".into()))
        };
        if let Some(t) = joined_to_fit(max, size, bold, room, |room| cut(room).map(|c| format!("{op}{c}{tail}"))) {
            return Some(t);
        }
    }
    None
}

/// A select with too many cases to keep something of each (see
/// [`fit_cases`]): the first cases that fit whole, else the first one cut,
/// and how many more there are (`recv stream#13.recv | +2`), so that no
/// case is lost without a word. `None` if not even the first case's
/// operation and a character of its channel fit beside the count.
fn fit_first_cases(text: &str, size: f64, bold: bool, max: i32) -> Option<String> {
    let cases: Vec<&str> = text.split(" | ").collect();
    let with_more = |k: usize, cut: Option<i32>| {
        let more = format!(" | +{}", cases.len() - k);
        let head = match cut {
            None => cases[..k].join(" | "),
            Some(room) => {
                let (c, room) = (cases[0], room - fonts::width(&more, size, bold));
                // Enough to read: its operation and a start of its channel
                // (`recv s…`: the count says more than a cut of the whole would).
                let enough = |h: &String| h.chars().count() > c.find(' ').map_or(1, |sp| sp + 2);
                // A numbered instance (`stream#13.recv`) is what tells it
                // from another select's first case: cut as a name is, to
                // keep the number; else from its end.
                let numbered = c.split(['#', '-']).skip(1).any(|w| w.starts_with(|ch: char| ch.is_ascii_digit()));
                let kept = Some(fit_or_cut(c, size, bold, room)).filter(|h| numbered && enough(h));
                kept.or_else(|| fonts::fit(c, size, bold, room).filter(enough))?
            }
        };
        // Measured whole: widths rounded per piece add up past `max`.
        Some(head + &more).filter(|t| fonts::width(t, size, bold) <= max)
    };
    let whole = (1..cases.len()).rev().find_map(|k| with_more(k, None));
    // Narrower still, the first case's operation alone (`send… | +1`):
    // a cut across the cases (`send …one()`) would read as one operation.
    let op_only = || {
        let op = cases[0].split(' ').next().unwrap_or_default();
        Some(format!("{op}… | +{}", cases.len() - 1)).filter(|t| fonts::width(t, size, bold) <= max)
    };
    whole.or_else(|| (max - 2..=max).rev().find_map(|room| with_more(1, Some(room)))).or_else(op_only)
}

/// The cases of a select (`text` split at " | ") cut to share `max` pixels:
/// every case is cut to one widest width, the largest that lets them all
/// fit, so the short ones stay whole and the long ones give way (from
/// their ends, or before a `#N` they end with). `None` if a case would keep
/// less than its operation and two characters of its channel.
fn fit_cases(text: &str, size: f64, bold: bool, max: i32) -> Option<String> {
    const SEP: &str = " | ";
    let cases: Vec<&str> = text.split(SEP).collect();
    if cases.iter().any(|c| c.trim().is_empty()) {
        return None;
    }
    let cut = |c: &str, cap: i32| -> Option<String> {
        if fonts::width(c, size, bold) <= cap {
            return Some(c.to_string());
        }
        match numbered_at(c, '#') {
            Some(i) => fonts::fit(&c[..i], size, bold, cap - fonts::width(&c[i..], size, bold)).map(|h| h + &c[i..]),
            None => fonts::fit(c, size, bold, cap),
        }
    };
    let cut_all = |cap: i32| -> Option<Vec<String>> { cases.iter().map(|c| cut(c, cap)).collect() };
    // The largest cap whose joined cut fits, measured whole (widths rounded
    // per piece would add up past `max`). The joined width grows with the
    // cap, so the search is sound; the rule on what each case keeps is
    // applied once, after.
    let fits = |cap: i32| cut_all(cap).is_some_and(|v| fonts::width(&v.join(SEP), size, bold) <= max);
    let (mut lo, mut hi) = (0, max.max(0));
    while lo < hi {
        let mid = (lo + hi + 1) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if !fits(lo) {
        return None;
    }
    let pieces = cut_all(lo)?;
    let enough = cases.iter().zip(&pieces).all(|(c, p)| {
        let keep = c.find(' ').map_or(2, |sp| c[..sp].chars().count() + 3);
        *p == *c || p.chars().count() > keep && instances(c).iter().all(|n| p.contains(n.as_str()))
    });
    // Two cases cut to one text say less than the first case and a count:
    // `recv stre… | recv stre…` for `stream#3.recv` and `stream#3.recvClose`.
    let distinct = (1..pieces.len()).all(|i| (0..i).all(|j| pieces[i] != pieces[j] || cases[i] == cases[j]));
    (enough && distinct).then(|| pieces.join(SEP))
}

/// The numbered instances in a select case (`#13` of `recv stream#13.recv`,
/// `-1` of `send channel-1.events`): a cut of the case keeps them, as they
/// tell one select from another.
fn instances(case: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, ch) in case.char_indices().filter(|&(i, ch)| (ch == '#' || ch == '-') && i > 0) {
        let digits: String = case[i + 1..].chars().take_while(|c| c.is_ascii_digit()).collect();
        let ends = case[i + 1 + digits.len()..].chars().next().is_none_or(|c| c == '.' || c == ' ');
        if !digits.is_empty() && ends {
            out.push(format!("{ch}{digits}"));
        }
    }
    out
}

/// Where a `#N` (or `-N`, with `sep` '-') that `text` ends with starts.
/// A text made of a part cut to `room` pixels and fixed parts, in `max`
/// pixels: `make(room)` builds it, and where the whole comes out over
/// `max` (the parts' widths need not add up to the whole's: rounding),
/// the cut part gives way by what it is over, a few times at most.
pub fn joined_to_fit(
    max: i32,
    size: f64,
    bold: bool,
    mut room: i32,
    make: impl Fn(i32) -> Option<String>,
) -> Option<String> {
    for _ in 0..3 {
        let t = make(room)?;
        let over = fonts::width(&t, size, bold) - max;
        if over <= 0 {
            return Some(t);
        }
        room -= over;
    }
    None
}

fn numbered_at(text: &str, sep: char) -> Option<usize> {
    text.rfind(sep).filter(|&i| i > 0 && text.len() > i + 1 && text[i + 1..].bytes().all(|b| b.is_ascii_digit()))
}

/// [`fit_or_cut`] for labels shown side by side: two labels that would cut
/// to one text ("holds ch…ferQueue" for `channel-0.bufferQueue` and
/// `channel-1.bufferQueue`) are cut from the end instead, which keeps the
/// part where they differ when it comes early ("holds channel-0.b…").
pub fn fit_distinct(labels: &[&str], size: f64, bold: bool, max: i32) -> Vec<String> {
    let mut out: Vec<String> = labels.iter().map(|l| fit_or_cut(l, size, bold, max)).collect();
    let clashes: Vec<bool> = (0..out.len())
        .map(|i| out.iter().enumerate().any(|(j, t)| j != i && *t == out[i] && labels[j] != labels[i]))
        .collect();
    for (i, clash) in clashes.into_iter().enumerate() {
        if !clash {
            continue;
        }
        // A select cut to its first case and a count keeps the count.
        let t = match out[i].rfind(" | +").filter(|_| labels[i].contains(" | ")) {
            Some(k) => {
                let more = out[i][k..].to_string();
                let first = labels[i].split(" | ").next().unwrap_or_default();
                fonts::fit(first, size, bold, max - fonts::width(&more, size, bold)).map(|h| h + &more)
            }
            None => fonts::fit(labels[i], size, bold, max),
        };
        if let Some(t) = t {
            out[i] = t;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_side_by_side_are_cut_where_they_differ() {
        let labels = [
            "holds channel-0.bufferQueue",
            "holds channel-1.bufferQueue",
            "holds LocalBufferPool.availableMemorySegments",
        ];
        let max = fonts::width("holds channel-0.b…", TINY, false) + 2;
        let cut = fit_distinct(&labels, TINY, false, max);
        assert_ne!(cut[0], cut[1], "{cut:?}");
        assert!(cut[0].starts_with("holds channel-0") && cut[1].starts_with("holds channel-1"), "{cut:?}");
        // A label that clashes with none keeps the middle cut.
        assert_eq!(cut[2], fit_or_cut(labels[2], TINY, false, max));
        // Labels that fit are left whole.
        assert_eq!(fit_distinct(&["holds A", "holds B"], TINY, false, 500), ["holds A", "holds B"]);
    }

    #[test]
    fn an_instance_number_before_a_field_outlasts_the_name_before_it() {
        let text = "recv stream#13.recv";
        let at = |probe: &str| fit_or_cut(text, TINY, true, fonts::width(probe, TINY, true));
        assert_eq!(at("recv stream#13.r…"), "recv stream#13.r…");
        assert_eq!(at("recv str…#13.recv"), "recv str…#13.recv");
        assert_eq!(at("recv st…#13…"), "recv st…#13…");
        assert_eq!(at("recv …#13…"), "recv …#13…");
        // Narrower, the number cannot stay: the middle cut as before.
        let narrow = fonts::width("recv …#13…", TINY, true) - 1;
        assert_eq!(fit_or_cut(text, TINY, true, narrow), fonts::fit_middle(text, TINY, true, narrow).unwrap());
        // No number before the last field: nothing to keep.
        assert_eq!(keep_inner_number("recv c.ctx.Done()", TINY, true, 40), None);
        assert_eq!(keep_inner_number("holds channel-1", TINY, true, 40), None);
        // The instance may sit between two dots.
        let text = "holds pkg.chan-1.buf";
        let max = fonts::width("holds pk…-1.buf", TINY, true);
        assert_eq!(keep_inner_number(text, TINY, true, max).as_deref(), Some("holds pk…-1.buf"));
    }

    #[test]
    fn a_cut_field_of_a_numbered_instance_keeps_the_instance() {
        // Alone in its lane, the lock the Channel state writer holds at the
        // FLINK-22946 deadlock: which channel is the fact to keep.
        let max = fonts::width("holds channel-1.b…", TINY, false) + 2;
        let cut = fit_or_cut("holds channel-1.bufferQueue", TINY, false, max);
        assert!(cut.starts_with("holds channel-1.b") && cut.ends_with('…'), "{cut}");
        // Too narrow for the instance and its dot: its number stays, the
        // name and the field give way ("holds ch…Queue" said no channel).
        let narrow = fonts::width("holds ch…Queue", TINY, false);
        assert_eq!(fit_or_cut("holds channel-1.bufferQueue", TINY, false, narrow), "holds chan…-1…");
        // Narrower still: the middle cut.
        let narrower = fonts::width("holds …-1…", TINY, false) - 1;
        assert_eq!(
            fit_or_cut("holds channel-1.bufferQueue", TINY, false, narrower),
            fonts::fit_middle("holds channel-1.bufferQueue", TINY, false, narrower).unwrap()
        );
        // A version or a protocol is no instance: the middle cut.
        for text in ["v1.2.3 sendLock", "http2.serverConn.mu"] {
            let max = fonts::width(text, TINY, false) * 2 / 3;
            assert_eq!(
                fit_or_cut(text, TINY, false, max),
                fonts::fit_middle(text, TINY, false, max).unwrap(),
                "{text}"
            );
        }
        // A number elsewhere than in the dotted word changes nothing.
        let text = "errs#2 then c.ctx.Done()";
        let max = fonts::width("errs#2 then c.c", TINY, true);
        assert_eq!(fit_or_cut(text, TINY, true, max), fonts::fit_middle(text, TINY, true, max).unwrap());
    }

    #[test]
    fn a_cut_select_fits_at_every_width_and_keeps_instance_numbers() {
        for text in ["send incoming | recv c.ctx.Done()", "recv a | recv b | recv c | recv d | recv e"] {
            for max in 20..400 {
                let cut = fit_or_cut(text, TINY, true, max);
                assert!(fonts::width(&cut, TINY, true) <= max, "{max}: {cut}");
            }
        }
        // Widening never turns a case cut back into a middle cut.
        let text = "send incoming | recv c.ctx.Done()";
        let first = (20..400).find(|&w| fit_or_cut(text, TINY, true, w).contains(" | ")).unwrap();
        for w in first..400 {
            assert!(fit_or_cut(text, TINY, true, w).contains(" | "), "{w}");
        }
        // A case that ends with an instance number keeps it.
        let text = "recv errs#10 | recv c.ctx.Done()";
        let max = fonts::width(text, TINY, true) - 30;
        let cut = fit_or_cut(text, TINY, true, max);
        assert!(cut.contains(" | ") && cut.split(" | ").next().unwrap().ends_with("#10"), "{cut}");
    }

    #[test]
    fn a_select_cut_to_cases_keeps_their_instance_numbers_and_tells_them_apart() {
        // At 1200 px a ttrpc final column gave `recv stre… | recv stre… |
        // recv c.ct…` for stream#3's recv and recvClose: neither the stream
        // nor which case. Every width keeps the number in each case shown,
        // and no two cases read the same.
        let text = "recv stream#3.recv | recv stream#3.recvClose | recv c.ctx.Done()";
        for max in 20..500 {
            let cut = fit_or_cut(text, TINY, true, max);
            assert!(fonts::width(&cut, TINY, true) <= max, "{max}: {cut}");
            let shown: Vec<&str> = cut.split(" | ").collect();
            // Every case shown (not the first ones and a count).
            if shown.len() == 3 {
                assert!(shown[0].contains("#3") && shown[1].contains("#3"), "{max}: {cut}");
                let mut unique = shown.clone();
                unique.sort_unstable();
                unique.dedup();
                assert_eq!(unique.len(), shown.len(), "{max}: {cut}");
            }
        }
        let max = fonts::width("recv stre… | recv stre… | recv c.ct…", TINY, true);
        assert_eq!(fit_or_cut(text, TINY, true, max), "recv stream#3.recv | +2");
    }

    #[test]
    fn a_cut_select_keeps_each_case() {
        let text = "send requests | recv done";
        let max = fonts::width("send req… | recv d…", TINY, true);
        let cut = fit_or_cut(text, TINY, true, max);
        let cases: Vec<&str> = cut.split(" | ").collect();
        assert_eq!(cases.len(), 2, "{cut}");
        assert!(cases[0].starts_with("send re") && cases[1].starts_with("recv d"), "{cut}");
        assert!(fonts::width(&cut, TINY, true) <= max, "{cut}");
        // A short case stays whole and leaves its room to the long one.
        let text = "recv errs#2 | recv c.ctx.Done()";
        let max = fonts::width("recv errs#2 | recv c.ctx…", TINY, true);
        assert_eq!(fit_or_cut(text, TINY, true, max), "recv errs#2 | recv c.ctx…");
        // Too narrow for every case's operation and a start: the first
        // cases that fit, and a count of the others.
        let text = "recv stream#13.recv | recv stream#13.recvClose | recv c.ctx.Done()";
        let max = fonts::width("recv stream#13.recv | +2", TINY, true);
        assert_eq!(fit_or_cut(text, TINY, true, max), "recv stream#13.recv | +2");
        // The first case cut as a name is, keeping what tells it from
        // another select's (its instance's number); one with no number,
        // from its end.
        let max = fonts::width("recv stream… | +2", TINY, true);
        assert_eq!(fit_or_cut(text, TINY, true, max), "recv st…#13… | +2");
        let text3 = "send requests | recv done | recv errs";
        let max = fonts::width("send requ… | +2", TINY, true);
        assert_eq!(fit_or_cut(text3, TINY, true, max), "send requ… | +2");
        // Narrower, the operation alone (a 700-px ttrpc figure's final
        // column cut `send c.calls | recv c.ctx.Done()` to `send …one()`,
        // one operation to the eye); from that width on, always a select.
        let two = "send c.calls | recv c.ctx.Done()";
        let least = fonts::width("send… | +1", TINY, true);
        assert_eq!(fit_or_cut(two, TINY, true, least), "send… | +1");
        for max in least..400 {
            assert!(fit_or_cut(two, TINY, true, max).contains(" | "), "{max}");
            assert!(fit_or_cut(text3, TINY, true, max + 8).contains(" | "), "{max}");
        }
        for max in 20..400 {
            let cut = fit_or_cut(text, TINY, true, max);
            assert!(fonts::width(&cut, TINY, true) <= max, "{max}: {cut}");
            // Either every case shows, or the count says how many do not.
            let shown = cut.split(" | ").count();
            assert!(shown == 3 || cut.ends_with(&format!("+{}", 4 - shown)) || !cut.contains(" | "), "{max}: {cut}");
        }
        // Too narrow even for an operation and a count: the middle cut.
        let tiny = fonts::width("send… | +1", TINY, true) - 1;
        assert_eq!(
            fit_or_cut("send requests | recv done", TINY, true, tiny),
            fonts::fit_middle("send requests | recv done", TINY, true, tiny).unwrap()
        );
    }

    #[test]
    fn a_cycle_too_long_for_the_header_keeps_its_last_link() {
        let links: Vec<String> =
            (0..12).map(|i| format!("\"philosopher-{i}\" waiting to lock \"fork{}\"", (i + 1) % 12)).collect();
        let message = format!("deadlock (global, 12 tasks in the cycle): {}", links.join(" -> "));
        let max = 660;
        assert!(wrap(&message, SMALL, false, max, usize::MAX).len() > 4);
        let lines = outcome_lines(&message, SMALL, max, 4);
        assert!(lines.len() <= 4 && lines.iter().all(|l| fonts::width(l, SMALL, false) <= max), "{lines:?}");
        let text = lines.join(" ");
        assert!(text.ends_with("-> \"philosopher-11\" waiting to lock \"fork0\""), "{text}");
        assert!(text.starts_with("deadlock (global, 12 tasks in the cycle): \"philosopher-0\""), "{text}");
        // Dropped from the middle, and counted.
        let kept = text.matches(" waiting to lock ").count();
        assert!(text.contains(&format!("-> … ({} more) ->", 12 - kept)), "{text}");
        // Another message with arrows in it is no cycle: cut at its end.
        let panic = format!("panic in \"main\": {}", links.join(" -> "));
        let lines = outcome_lines(&panic, SMALL, max, 4);
        assert!(lines.len() == 4 && lines[3].ends_with('…') && !lines.join(" ").contains("more)"), "{lines:?}");
        // A message that fits is left as it is.
        let short =
            "deadlock (global, 2 tasks in the cycle): \"T1\" waiting to lock \"B\" -> \"T2\" waiting to lock \"A\"";
        assert_eq!(outcome_lines(short, SMALL, 1160, 4), [short]);
    }

    #[test]
    fn wrap_breaks_at_spaces_and_cuts_only_the_last_line() {
        let max = fonts::width("alpha beta gamma", SMALL, false);
        assert_eq!(wrap("alpha beta gamma delta epsilon", SMALL, false, max, 3), ["alpha beta gamma", "delta epsilon"]);
        assert_eq!(wrap("short", SMALL, false, max, 3), ["short"]);
        let two = wrap("alpha beta gamma delta epsilon zeta eta theta iota kappa", SMALL, false, max, 2);
        assert_eq!(two[0], "alpha beta gamma");
        assert!(two[1].ends_with('…') && fonts::width(&two[1], SMALL, false) <= max, "{two:?}");
    }

    #[test]
    fn an_instances_field_cut_to_any_width_keeps_the_instance_number() {
        // The parts' widths do not add up to the whole's: at 37 and 44 px
        // "ch…-1…" came out a pixel over and the middle cut "ch…ers" won.
        for max in 26..80 {
            let cut = fit_or_cut("channel-1.receivedBuffers", TINY, true, max);
            assert!(cut.contains("-1") && fonts::width(&cut, TINY, true) <= max, "{max}: {cut}");
        }
    }

    #[test]
    fn a_cut_task_name_keeps_its_instance_number() {
        let max = fonts::width("serviceSet.handle", TEXT, true);
        let cut = fit_or_cut("serviceSet.handle.func1#2371", TEXT, true, max);
        assert!(cut.ends_with("func1#2371") && cut.starts_with("serv") && cut.contains('…'), "{cut}");
        assert!(fonts::width(&cut, TEXT, true) <= max, "{cut}");
        let cut = fit_or_cut("a-very-long-caller-name-12", TEXT, true, max);
        assert!(cut.ends_with("name-12") && cut.contains('…'), "{cut}");
        // A shared name's id stays whole, and the name keeps its number.
        let max = fonts::width("serviceSet.handle (task 16)", TEXT, true);
        let cut = fit_or_cut("serviceSet.handle.func1#2371 (task 16)", TEXT, true, max);
        assert!(cut.ends_with("func1#2371 (task 16)") && cut.starts_with("serv") && cut.contains('…'), "{cut}");
        assert!(fonts::width(&cut, TEXT, true) <= max, "{cut}");
        let max = fonts::width("serviceSet.handle", TEXT, true);
        // A name that fits is as it is; one with no number is cut in the
        // middle too, so that two that differ at the end stay apart.
        assert_eq!(fit_or_cut("caller-2", TEXT, true, max), "caller-2");
        let (one, two) = (
            fit_or_cut("serverConn.run.func1.x", TEXT, true, max),
            fit_or_cut("serverConn.run.func2.x", TEXT, true, max),
        );
        assert!(
            one.starts_with("server") && one.ends_with("func1.x") && fonts::width(&one, TEXT, true) <= max,
            "{one}"
        );
        assert_ne!(one, two);
        // Too narrow to cut a short name in the middle: cut from its end,
        // the number kept (a locks chart's holders: `call…` for every caller).
        let narrow = fonts::width("ca…-1", TINY, false);
        let cuts: Vec<String> = (1..=5).map(|i| fit_or_cut(&format!("caller-{i}"), TINY, false, narrow)).collect();
        for (i, cut) in cuts.iter().enumerate() {
            assert!(cut.ends_with(&format!("…-{}", i + 1)) && fonts::width(cut, TINY, false) <= narrow, "{cut}");
        }
    }
}
