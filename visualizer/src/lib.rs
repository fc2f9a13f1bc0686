//! # visualizer: charts of deadsim traces
//!
//! Turns a [`Trace`] (see `traces/README.md`) into pictures for bug reports
//! and documentation, as PNG or SVG, drawn with `plotters` and an embedded
//! font (no system fonts needed):
//!
//! - [`Chart::Timeline`]: one lane per task with its state over time
//!   (running, ready, blocked, finished), the locks it holds, its frame,
//!   pipe and channel marks; at a deadlock the cycle is highlighted and
//!   arrows show who waits for whom.
//! - [`Chart::Locks`]: one lane per lock, monitor or RWMutex: who holds it
//!   when (readers stacked) and how many tasks wait for it.
//! - [`Chart::Pipes`]: bytes buffered in each pipe over time against its
//!   capacity, with the writes, the reads and the blocked writers.
//! - [`Chart::WaitFor`]: the wait-for graph at the deadlock, cycle in red.
//!
//! [`perfetto::export`] writes the trace as Chrome Trace Event JSON instead.
//!
//! The same trace and options always give the same bytes. Long traces are
//! windowed ([`Window`]) and aggregated per pixel column, so a million events
//! still give a readable picture of bounded size.
//!
//! ```
//! use visualizer::{Chart, Format, Options};
//!
//! let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let png = visualizer::render(&trace, Chart::Timeline, Format::Png, &Options::default()).unwrap();
//! assert_eq!(&png[1..4], b"PNG");
//! let svg = visualizer::render(&trace, Chart::WaitFor, Format::Svg, &Options::default()).unwrap();
//! assert!(String::from_utf8(svg).unwrap().contains("<svg"));
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

pub use sim::trace::Trace;

pub mod align;
mod columns;
mod fonts;
mod glyphs;
mod layout;
pub mod locks;
pub mod model;
pub mod palette;
pub mod perfetto;
pub mod pipes;
mod scene;
pub mod timeline;
pub mod waitfor;

pub use align::Frame;
pub use model::Model;
pub use scene::{Anchor, Item, Scene};

/// Why a chart could not be made. Displays as one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The start of the error of a `--tasks` selection ([`Options::tasks`])
    /// none of whose tasks is alive in the window.
    pub(crate) const NONE_SELECTED_ALIVE: &'static str = "no task selected is alive in the window";

    /// True if nothing [`Options::tasks`] selects is alive in the window:
    /// the selection, not the trace, is what to change.
    ///
    /// ```
    /// let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
    /// let opts = visualizer::Options {
    ///     tasks: vec!["T1".into()],
    ///     window: visualizer::Window::Steps(1, 1),
    ///     ..Default::default()
    /// };
    /// let e = visualizer::render(&trace, visualizer::Chart::Timeline, visualizer::Format::Svg, &opts).unwrap_err();
    /// assert!(e.none_selected_alive(), "{e}");
    /// ```
    pub fn none_selected_alive(&self) -> bool {
        self.0.starts_with(Error::NONE_SELECTED_ALIVE)
    }

    /// The start of the error of a frame [`Options::align`] gives that
    /// cannot be shared (see [`Frame::union`]).
    pub(crate) const NOT_ALIGNED: &'static str = "the charts cannot share an axis";

    /// True if the frame to align with cannot be shared: the other trace,
    /// or the flags the two are drawn with, are what to change.
    pub fn not_aligned(&self) -> bool {
        self.0.starts_with(Error::NOT_ALIGNED)
    }
}

/// A chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Chart {
    Timeline,
    Locks,
    Pipes,
    WaitFor,
}

impl Chart {
    /// Every chart, in the order `--chart all` writes them.
    pub const ALL: [Chart; 4] = [Chart::Timeline, Chart::Locks, Chart::Pipes, Chart::WaitFor];

    /// `timeline`, `locks`, `pipes`, `waitfor`: the CLI name, also used in file names.
    pub fn name(self) -> &'static str {
        match self {
            Chart::Timeline => "timeline",
            Chart::Locks => "locks",
            Chart::Pipes => "pipes",
            Chart::WaitFor => "waitfor",
        }
    }

    /// True when the trace has something for this chart to show: always for
    /// the timeline; a lock or pipe some event used, or a deadlock or blocked
    /// tasks otherwise.
    /// A chart without content still renders (it says so).
    pub fn applies(self, m: &Model) -> bool {
        match self {
            Chart::Timeline => true,
            // A lock or pipe that nothing used has no chart to show.
            Chart::Locks => m.has_events_on(&m.locks()),
            Chart::Pipes => m.has_events_on(&m.pipes()),
            Chart::WaitFor => waitfor::Graph::new(m).has_edges(),
        }
    }
}

impl FromStr for Chart {
    type Err = Error;
    fn from_str(s: &str) -> Result<Chart, Error> {
        // `Timeline` is the timeline, as `--format PNG` is png.
        Chart::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error(format!("unknown chart `{s}` (expected timeline, locks, pipes or waitfor)")))
    }
}

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    Png,
    Svg,
}

impl Format {
    /// `png` or `svg`: the file extension.
    pub fn ext(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
        }
    }
}

impl FromStr for Format {
    type Err = Error;
    fn from_str(s: &str) -> Result<Format, Error> {
        // `SVG` is svg, as `fig.SVG` is an SVG file.
        match s.to_ascii_lowercase().as_str() {
            "png" => Ok(Format::Png),
            "svg" => Ok(Format::Svg),
            _ => Err(Error(format!("unknown format `{s}` (expected png or svg)"))),
        }
    }
}

/// What the x axis of the timeline, lock and pipe charts measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XAxis {
    /// Virtual time (the default).
    #[default]
    Time,
    /// Scheduler steps.
    Steps,
}

impl FromStr for XAxis {
    type Err = Error;
    fn from_str(s: &str) -> Result<XAxis, Error> {
        match s.to_ascii_lowercase().as_str() {
            "time" => Ok(XAxis::Time),
            "steps" => Ok(XAxis::Steps),
            _ => Err(Error(format!("unknown x axis `{s}` (expected time or steps)"))),
        }
    }
}

/// What a chart says above its plot.
///
/// ```
/// assert_eq!("none".parse::<visualizer::Header>().unwrap(), visualizer::Header::None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Header {
    /// The title line, then the run's parameters and facts, the schedule
    /// of a run named by one, and the outcome: what makes the figure
    /// again (the default).
    #[default]
    Full,
    /// The title line alone, for a figure whose caption says the rest.
    Title,
    /// Nothing: the plot starts at the top.
    None,
}

impl FromStr for Header {
    type Err = Error;
    fn from_str(s: &str) -> Result<Header, Error> {
        match s.to_ascii_lowercase().as_str() {
            "full" => Ok(Header::Full),
            "title" => Ok(Header::Title),
            "none" => Ok(Header::None),
            _ => Err(Error(format!("unknown header `{s}` (expected full, title or none)"))),
        }
    }
}

/// The part of a trace the timeline, lock and pipe charts show.
///
/// Written on the command line as `auto`, `all`, `cycle`, `last:N`, `steps:A..B` or
/// `time:A..B` (times in ns, or with a unit: `1.5us`, `20ms`, `2s`); `A..=B`
/// includes B, as in seed ranges.
///
/// ```
/// use visualizer::Window;
/// assert_eq!("last:200".parse::<Window>().unwrap(), Window::Last(200));
/// assert_eq!("time:1us..2.5us".parse::<Window>().unwrap(), Window::Time(1_000, 2_500));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Window {
    /// The whole trace when it has at most [`Window::AUTO_STEPS`] steps.
    /// Otherwise the end of the run: at a deadlock, twice the steps since
    /// the cycle's tasks took the locks they still hold and blocked (at
    /// least [`Window::AUTO_MIN`], at most [`Window::AUTO_LAST`] steps);
    /// without one, the last [`Window::AUTO_LAST`] steps. So a deadlock at
    /// the end of a long run stays readable.
    #[default]
    Auto,
    /// The whole trace.
    All,
    /// The deadlock's story, whatever the trace's length: twice the steps
    /// since the cycle's tasks took the locks they still hold and blocked
    /// (at least [`Window::AUTO_MIN`]), ending at the deadlock. What
    /// [`Window::Auto`] draws of a long trace, for a short one too (for a
    /// deadlock with no cycle, its blocked tasks' story). An error for a
    /// trace without a deadlock.
    Cycle,
    /// The last N steps before the deadlock (or the end of the trace).
    Last(u64),
    /// Steps A to B, both included, as traces and `replay` number them
    /// (`steps:A..B` is `Steps(A, B - 1)`, `steps:A..=B` is `Steps(A, B)`).
    Steps(u64, u64),
    /// Virtual time A..B, in nanoseconds.
    Time(u64, u64),
}

impl Window {
    /// Traces up to this many steps are shown whole by [`Window::Auto`].
    pub const AUTO_STEPS: u64 = 1000;
    /// Most steps shown by [`Window::Auto`] in a longer trace.
    pub const AUTO_LAST: u64 = 400;
    /// Fewest steps shown by [`Window::Auto`] in a longer trace.
    pub const AUTO_MIN: u64 = 60;

    /// The positions `a..b` this window covers in `m`, and a description.
    pub fn resolve(self, m: &Model) -> Result<(u64, u64, String), Error> {
        let (a, b, note) = self.resolve_steps(m)?;
        // A window that stops short of the deadlock, or of the panic or
        // violated invariant, says where it is.
        let failed = m.failure.map(|f| (f.pos, if f.what == "panic" { "the panic" } else { "the invariant fails" }));
        match m.deadlock.map(|d| (d, "the deadlock")).or(failed) {
            Some((d, what)) if d > b => {
                let is = if what == "the invariant fails" { "" } else { " is" };
                Ok((a, b, format!("{note}; {what}{is} at step {}, after it", columns::group(d))))
            }
            _ => Ok((a, b, note)),
        }
    }

    /// What of this window lies past the end of `m`'s trace, for a note
    /// (the window is drawn up to the end); `None` if it lies within it,
    /// or wholly outside it (which [`Window::resolve`] refuses).
    ///
    /// ```
    /// let trace = visualizer::load(std::path::Path::new("../traces/abba-deadlock.json")).unwrap();
    /// let m = visualizer::Model::new(&trace).unwrap();
    /// assert_eq!(visualizer::Window::Last(3).past_end(&m), None);
    /// assert_eq!(visualizer::Window::Last(50).past_end(&m).unwrap(), "the trace has 5 steps: all are drawn");
    /// ```
    pub fn past_end(self, m: &Model) -> Option<String> {
        // A window wholly outside is refused, not drawn: nothing to note.
        self.resolve(m).ok()?;
        let end = m.end.max(1);
        match self {
            // `last:N` counts back from the deadlock (or the end).
            Window::Last(n) if n > m.stop().max(1) => {
                Some(format!("the trace has {}: all are drawn", columns::steps(m.stop().max(1))))
            }
            Window::Steps(_, last) if last > end => {
                Some(format!("the trace ends at step {}: the window is drawn up to it", columns::group(end)))
            }
            // `t1` is the end left out (`time:0..=500` is `Time(0, 501)`).
            Window::Time(_, t1) if t1 > m.time(end).saturating_add(1) => {
                Some(format!("the trace ends at {} ns: the window is drawn up to it", columns::group(m.time(end))))
            }
            _ => None,
        }
    }

    fn resolve_steps(self, m: &Model) -> Result<(u64, u64, String), Error> {
        let end = m.end.max(1);
        let stop = m.stop().max(1);
        let of = format!("of {}", columns::steps(m.end));
        let at = match (m.deadlock, m.trace.meta.verdict.as_str()) {
            (Some(_), _) => "ending at the deadlock",
            (None, "step-limit") => "ending at the step limit",
            (None, "panic") => "ending at the panic",
            (None, "invariant") => "ending where the invariant fails",
            _ => "ending at the last step",
        };
        let last = |n: u64, what: &str| {
            let a = stop.saturating_sub(n.max(1));
            (a, stop, format!("{what}: {} {of}, {at}", steps_between(a, stop)))
        };
        Ok(match self {
            Window::Auto if m.end <= Window::AUTO_STEPS => (0, end, format!("all {}", columns::steps(m.end))),
            Window::Auto => {
                let n = match m.story_start() {
                    Some(s) => (2 * (stop - s.min(stop))).clamp(Window::AUTO_MIN, Window::AUTO_LAST),
                    None => Window::AUTO_LAST,
                };
                last(n, &format!("window auto (last {n})"))
            }
            Window::All => (0, end, format!("all {}", columns::steps(m.end))),
            Window::Cycle => {
                let Some(s) = m.story_start().filter(|_| m.deadlock.is_some()) else {
                    return Err(Error(
                        "window cycle: the trace has no deadlock to draw (give all, last:N or steps:A..B)".into(),
                    ));
                };
                let n = (2 * (stop - s.min(stop))).max(Window::AUTO_MIN);
                last(n, &format!("window cycle (last {n})"))
            }
            Window::Last(n) => last(n, &format!("window last:{n}")),
            Window::Steps(first, last) => {
                // Step s runs from position s - 1 to s (see `model`); step 0
                // is what happens before the first step, at position 0.
                if last == 0 {
                    return Err(Error(
                        "window steps 0 to 0: step 0 is only what happens before the first step; \
                         a window must reach step 1 (for example steps:1..=1)"
                            .into(),
                    ));
                }
                if first > last || first > m.end {
                    return Err(Error(format!(
                        "window steps {first} to {last} is empty or outside the trace (steps 1 to {})",
                        m.end
                    )));
                }
                let (a, b) = (first.saturating_sub(1), last.min(end));
                (a, b, format!("window {} {of}", steps_between(a, b)))
            }
            Window::Time(t0, t1) => {
                let (mut a, b) = (m.pos_at_or_before(t0), m.pos_at_or_after(t1).min(end));
                // The trace's last instant (`time:500..=500` of a 500 ns
                // trace) is the end of its last step: that step is drawn, as
                // `time:0..=0` draws the first.
                if t0 < t1 && t0 == m.time(end) && end > 0 && a == end {
                    a = end - 1;
                }
                if t0 >= t1 || t0 > m.time(end) || b <= a {
                    return Err(Error(format!(
                        "window time {t0} ns to {t1} ns is empty or outside the trace (0 to {} ns)",
                        m.time(end)
                    )));
                }
                // Drawn in whole steps: the caption gives the times drawn when they differ.
                let (d0, d1) = (m.time(a), m.time(b));
                let drawn = if (d0, d1) == (t0, t1) { String::new() } else { format!(", {d0}..{d1} ns") };
                (a, b, format!("window time {}..{} ns: {}{drawn} {of}", t0, t1, steps_between(a, b)))
            }
        })
    }
}

/// The steps between positions `a` and `b` (`a < b`), as a label names
/// them: step `a + 1` to step `b`.
fn steps_between(a: u64, b: u64) -> String {
    if b <= a + 1 {
        format!("step {}", columns::group(b))
    } else {
        format!("steps {}–{}", columns::group(a + 1), columns::group(b))
    }
}

/// A time in ns: whole nanoseconds, or a number with ns, us, ms or s. The
/// error says whether it is no time at all or one past `u64` nanoseconds.
fn parse_time(s: &str) -> Result<u64, TimeError> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1u64)
    } else if let Some(n) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1_000_000)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1_000_000_000)
    } else {
        (s, 1)
    };
    let num = num.trim();
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty() || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) {
        return Err(TimeError::NotATime);
    }
    let mut v: u64 = if int.is_empty() {
        0
    } else {
        // Digits only, so the parse fails only by overflow.
        int.parse::<u64>().ok().and_then(|i| i.checked_mul(mult)).ok_or(TimeError::TooLarge)?
    };
    let mut scale = mult;
    for ch in frac.chars() {
        scale /= 10;
        if scale == 0 {
            return Err(TimeError::NotATime);
        }
        v = v.checked_add((ch as u64 - '0' as u64) * scale).ok_or(TimeError::TooLarge)?;
    }
    Ok(v)
}

/// Why [`parse_time`] refused its input.
#[derive(Debug, PartialEq, Eq)]
enum TimeError {
    NotATime,
    TooLarge,
}

impl FromStr for Window {
    type Err = Error;
    fn from_str(s: &str) -> Result<Window, Error> {
        let bad = |why: &str| Error(format!("window `{s}`: {why}"));
        let forms = "expected auto, all, cycle, last:N, steps:A..B or time:A..B (times in ns or with ns/us/ms/s)";
        // `ALL` and `Last:5` as `--x STEPS` and `--chart ALL`: the case of a
        // keyword is no part of it (a time's unit keeps its own).
        match s.to_ascii_lowercase().as_str() {
            "auto" => return Ok(Window::Auto),
            "all" => return Ok(Window::All),
            "cycle" => return Ok(Window::Cycle),
            _ => {}
        }
        let (kind, arg) = s.split_once(':').ok_or_else(|| bad(forms))?;
        let kind = kind.to_ascii_lowercase();
        // `A..B` or `A..=B` (as seed ranges), each side parsed by `one`; the
        // range must not be empty.
        let range = |one: &dyn Fn(&str) -> Result<u64, String>| -> Result<(u64, u64), Error> {
            let (a, b) = arg.split_once("..").ok_or_else(|| bad(&format!("expected {kind}:A..B or {kind}:A..=B")))?;
            let (b, inclusive) = match b.strip_prefix('=') {
                Some(b) => (b, true),
                None => (b, false),
            };
            let (a, b) = (one(a).map_err(|e| bad(&e))?, one(b).map_err(|e| bad(&e))?);
            // Said with the end as typed: `3..=2` is empty with its end 2.
            let empty = |cmp: &str| bad(&format!("the range is empty (its start {a} is not {cmp} its end {b})"));
            let b = if inclusive {
                if a > b {
                    return Err(empty("at or below"));
                }
                // `..=18446744073709551615` reaches as far as `..` to it
                // does (no trace has a step, or an event at a time, past
                // it): drawn to the trace's end, as that is.
                b.saturating_add(1)
            } else {
                if a >= b {
                    return Err(empty("below"));
                }
                b
            };
            Ok((a, b))
        };
        match kind.as_str() {
            "last" => match arg.parse::<u64>() {
                Ok(0) => Err(bad("N must be at least 1")),
                Ok(n) => Ok(Window::Last(n)),
                Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(bad("N is too large")),
                Err(_) => Err(bad("expected last:N, N a number of steps")),
            },
            "steps" => {
                let step = |x: &str| {
                    x.parse::<u64>().map_err(|e| match e.kind() {
                        std::num::IntErrorKind::PosOverflow => format!("`{x}` is too large"),
                        _ => format!("`{x}` is not a step number"),
                    })
                };
                // `range` gives the end excluded; a step window names its last step.
                range(&step).map(|(a, b)| Window::Steps(a, b - 1))
            }
            "time" => {
                let time = |x: &str| {
                    parse_time(x).map_err(|e| match e {
                        TimeError::TooLarge => format!("`{x}` is too large (at most {} ns)", u64::MAX),
                        TimeError::NotATime => {
                            format!("`{x}` is not a time (whole nanoseconds, or a number with ns, us, ms or s)")
                        }
                    })
                };
                range(&time).map(|(a, b)| Window::Time(a, b))
            }
            _ => Err(bad(forms)),
        }
    }
}

/// How to draw a chart.
///
/// ```
/// use visualizer::{Chart, Format, Options};
///
/// let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
/// // A figure for a slide: its own title, only T1's and T2's lanes, drawn at twice the pixels.
/// let opts = Options {
///     title: Some("AB/BA: each thread holds the lock the other waits for".into()),
///     tasks: vec!["T1".into(), "T2".into()],
///     scale: 2,
///     ..Options::default()
/// };
/// let png = visualizer::render(&trace, Chart::Timeline, Format::Png, &opts).unwrap();
/// assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 2 * Options::WIDTH);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The x axis of the timeline, lock and pipe charts.
    pub x: XAxis,
    /// The part of the trace to show.
    pub window: Window,
    /// Picture width in pixels (the height follows from the content).
    pub width: u32,
    /// PNG pixels per layout pixel (1..=[`Options::MAX_SCALE`]): the same
    /// picture with every length, line and letter this many times larger,
    /// for high-density screens and print; from 2 the PNG records 96 dpi
    /// times the scale. An SVG is drawn at any size, the same at every
    /// scale; the range (and `width * scale` at most [`Options::MAX_WIDTH`])
    /// is checked for both formats.
    pub scale: u32,
    /// The title line's text, in place of "Timeline · abba · seed 3 ·
    /// deadlock". The lines under it stay, the first opening with the
    /// chart, model and seed: with the parameters, strategy and outcome,
    /// they say how to reproduce the figure.
    pub title: Option<String>,
    /// The timeline's lanes: task names, or patterns with `*` (any run of
    /// characters), drawn in the order given (a pattern's tasks in trace
    /// order), those alive in the window, the first
    /// [`timeline::MAX_LANES`] of them. Empty: every task alive in the
    /// window. See [`select_tasks`].
    pub tasks: Vec<String>,
    /// What is said above the plot.
    pub header: Header,
    /// Draw the timeline, locks or pipes chart in the union of its own
    /// frame and this one (another trace's, from [`frame`]): the two
    /// figures then share their plot's place and their x axis. See
    /// [`align`]. The wait-for graph has no axis and takes none.
    pub align: Option<Frame>,
}

impl Options {
    /// The default width: readable at 100 %, and still when a README scales it down.
    pub const WIDTH: u32 = 1200;
    /// Narrowest and widest picture accepted.
    pub const MIN_WIDTH: u32 = 600;
    pub const MAX_WIDTH: u32 = 8000;
    /// Largest [`Options::scale`]; the PNG's width (`width * scale`) is at
    /// most [`Options::MAX_WIDTH`] as well.
    pub const MAX_SCALE: u32 = 4;
}

impl Default for Options {
    fn default() -> Options {
        Options {
            x: XAxis::Time,
            window: Window::Auto,
            width: Options::WIDTH,
            scale: 1,
            title: None,
            tasks: Vec::new(),
            header: Header::Full,
            align: None,
        }
    }
}

/// The tasks `patterns` name, in their order: each pattern is a task name,
/// or has `*` for any run of characters (`caller-*`) and gives its tasks in
/// trace order; a task named twice comes once, where first named. A
/// pattern that names no task is an error that lists the trace's tasks.
///
/// ```
/// let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
/// let pick = |p: &[&str]| visualizer::select_tasks(&trace, &p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
/// assert_eq!(pick(&["T2", "T*"]).unwrap(), vec![2, 1]);
/// assert!(pick(&["T3"]).unwrap_err().0.contains("no task is named `T3` (the trace has main, T1, T2)"));
/// ```
pub fn select_tasks(trace: &Trace, patterns: &[String]) -> Result<Vec<u32>, Error> {
    let labels = trace.task_labels();
    let mut out: Vec<u32> = Vec::new();
    for p in patterns {
        // A task by its name, or by its name as the charts give it
        // (`worker (task 2)`, for a name two tasks share).
        let matched: Vec<u32> = (0..trace.tasks.len())
            .filter(|&t| glob_match(p, &trace.tasks[t].name) || glob_match(p, &labels[t]))
            .map(|t| t as u32)
            .collect();
        if matched.is_empty() {
            const LISTED: usize = 12;
            let mut names: Vec<&str> = labels.iter().take(LISTED).map(String::as_str).collect();
            let more = trace.tasks.len().saturating_sub(LISTED);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            if names.is_empty() {
                names.push("none");
            }
            let what = if p.contains('*') { "matches" } else { "is named" };
            return Err(Error(format!("no task {what} `{p}` (the trace has {}{more})", names.join(", "))));
        }
        for t in matched {
            if !out.contains(&t) {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// `trace` with tasks given other names in its charts: each `(pattern,
/// name)` renames the tasks `pattern` selects (as [`select_tasks`] reads
/// it: a name, a chart label such as `worker (task 2)`, `*` for any run
/// of characters) to `name`, in order. For figures: a long name
/// (`Channel state writer Join(xxxxxx) (34/256)#1`) cut to fit becomes
/// what the caption calls it. The outcome message the header shows names
/// them so too, where a quoted name is one task's, or every task of that
/// name was given one new name. An error names a pattern no task matches.
///
/// ```
/// let trace = visualizer::load(std::path::Path::new("../traces/abba-deadlock.json")).unwrap();
/// let t = visualizer::rename_tasks(&trace, &[("T*".into(), "thread".into())]).unwrap();
/// assert_eq!(t.task_labels(), ["main", "thread (task 1)", "thread (task 2)"]);
/// let t = visualizer::rename_tasks(&trace, &[("T1".into(), "writer".into())]).unwrap();
/// assert!(t.meta.message.contains("\"writer\" waiting to lock \"B\""), "{}", t.meta.message);
/// assert!(visualizer::rename_tasks(&trace, &[("T3".into(), "x".into())]).is_err());
/// ```
pub fn rename_tasks(trace: &Trace, renames: &[(String, String)]) -> Result<Trace, Error> {
    let mut out = trace.clone();
    for (pattern, name) in renames {
        // Matched against the names as they are by now (a later rename sees an earlier one).
        for t in select_tasks(&out, std::slice::from_ref(pattern))? {
            out.tasks[t as usize].name = name.clone();
        }
    }
    out.meta.message = renamed_message(trace, &out);
    Ok(out)
}

/// The outcome message of `before` with its tasks named as in `after`,
/// the same trace with tasks renamed ([`rename_tasks`], once or rename by
/// rename). A deadlock's is made again from its report, renamed task by
/// task (a name now shared says which task: `"thread" (task 2)`); a
/// panic's or a broken invariant's names its task anew where one task had
/// that name. Lock and channel names stay as they are.
pub fn renamed_message(before: &Trace, after: &Trace) -> String {
    if before.tasks.iter().zip(&after.tasks).all(|(b, a)| b.name == a.name) {
        return before.meta.message.clone();
    }
    let name_of = |t: u32| after.tasks.get(t as usize).map(|x| x.name.clone());
    if let Some(d) = &before.deadlock {
        let mut d = d.clone();
        for b in d.cycle.iter_mut().chain(d.behind.iter_mut()) {
            b.name = name_of(b.task).unwrap_or_else(|| b.name.clone());
            if b.released_by_ids.len() == b.released_by.len() {
                for (n, &t) in b.released_by.iter_mut().zip(&b.released_by_ids) {
                    *n = name_of(t).unwrap_or_else(|| n.clone());
                }
                if let ("join", &[t]) = (b.op.as_str(), b.released_by_ids.as_slice()) {
                    b.waits_for = name_of(t).unwrap_or_else(|| b.waits_for.clone());
                }
            }
        }
        // The names two tasks of the run now have.
        let mut seen = BTreeMap::new();
        for t in &after.tasks {
            *seen.entry(t.name.as_str()).or_insert(0) += 1;
        }
        d.shared = seen.into_iter().filter(|&(_, n)| n > 1).map(|(name, _)| name.to_string()).collect();
        return d.summary();
    }
    let message = &before.meta.message;
    for head in ["panic in \"", "invariant violated in \""] {
        let Some(rest) = message.strip_prefix(head) else { continue };
        let Some((old, tail)) = rest.split_once("\": ") else { continue };
        let mut ids = before.tasks.iter().filter(|t| t.name == old).map(|t| t.id);
        if let (Some(t), None) = (ids.next(), ids.next()) {
            if let Some(new) = name_of(t) {
                return format!("{head}{new}\": {tail}");
            }
        }
    }
    message.clone()
}

/// True if `name` matches `pattern`, where `*` stands for any run of
/// characters (none included) and everything else for itself.
fn glob_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The names in `trace` (tasks, resources, frames) with characters the
/// embedded font has no glyph for, each with those characters. A PNG draws
/// such a character as an empty box; an SVG leaves it to the viewer's
/// fonts. Noto Sans covers Latin, Greek and Cyrillic.
///
/// ```
/// let mut trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
/// assert!(visualizer::missing_glyphs(&trace).is_empty());
/// trace.tasks[1].name = "写线程-1".into();
/// assert_eq!(visualizer::missing_glyphs(&trace), vec![("task \"写线程-1\"".to_string(), vec!['写', '线', '程'])]);
/// ```
pub fn missing_glyphs(trace: &Trace) -> Vec<(String, Vec<char>)> {
    let tasks = trace.tasks.iter().map(|t| ("task", t.name.as_str()));
    let resources = trace.resources.iter().map(|r| (r.kind.as_str(), r.name.as_str()));
    let frames = trace.frames.iter().map(|f| ("frame", f.name.as_str()));
    tasks
        .chain(resources)
        .chain(frames)
        .filter_map(|(what, name)| {
            let missing = fonts::missing(name);
            (!missing.is_empty()).then(|| (format!("{what} {name:?}"), missing))
        })
        .collect()
}

/// The characters of `text` the embedded font has no glyph for (see
/// [`missing_glyphs`]), each once, in order: for a title given apart from the trace.
///
/// ```
/// assert_eq!(visualizer::missing_chars("图 1: AB/BA"), vec!['图']);
/// ```
pub fn missing_chars(text: &str) -> Vec<char> {
    fonts::missing(text)
}

/// Checks that a trace can be drawn: it has events. `origin` names it (a file).
pub fn check(trace: &Trace, origin: &str) -> Result<(), Error> {
    if trace.events.is_empty() {
        return Err(Error(format!("{origin}: the trace has no events (a run records at least the spawn of main)")));
    }
    Ok(())
}

/// Reads a trace file and checks that it can be drawn. Errors are one line
/// naming the file: missing, not JSON, not a trace, another format version,
/// no events.
pub fn load(path: &Path) -> Result<Trace, Error> {
    let trace = Trace::read_file(path).map_err(|e| Error(e.to_string()))?;
    check(&trace, &path.display().to_string())?;
    Ok(trace)
}

/// Lays out one chart of a derived model.
pub fn scene(m: &Model, chart: Chart, opts: &Options) -> Result<Scene, Error> {
    laid_out(m, chart, opts).map(|(s, _)| s)
}

/// The frame `chart` of `m` is drawn in (with `opts.align`, the union of the
/// two): give it as another trace's [`Options::align`] to draw both on one
/// axis. `None` for a chart without an axis: the wait-for graph, and a
/// locks or pipes chart of a trace with no lock or pipe.
pub fn frame(m: &Model, chart: Chart, opts: &Options) -> Result<Option<Frame>, Error> {
    laid_out(m, chart, opts).map(|(_, f)| f)
}

fn laid_out(m: &Model, chart: Chart, opts: &Options) -> Result<(Scene, Option<Frame>), Error> {
    if opts.width < Options::MIN_WIDTH || opts.width > Options::MAX_WIDTH {
        return Err(Error(format!(
            "width {} is out of range ({}..={} pixels)",
            opts.width,
            Options::MIN_WIDTH,
            Options::MAX_WIDTH
        )));
    }
    if opts.scale == 0 || opts.scale > Options::MAX_SCALE {
        return Err(Error(format!("scale {} is out of range (1..={})", opts.scale, Options::MAX_SCALE)));
    }
    if opts.width * opts.scale > Options::MAX_WIDTH {
        return Err(Error(format!(
            "width {} at scale {} makes a picture {} pixels wide, more than {}",
            opts.width,
            opts.scale,
            opts.width * opts.scale,
            Options::MAX_WIDTH
        )));
    }
    if let Some(t) = &opts.title {
        if t.trim().is_empty() {
            return Err(Error("the title is empty (leave it out for the chart's own)".into()));
        }
        // A control character would draw as a box, and is not allowed in an SVG's XML.
        if let Some(c) = t.chars().find(|c| c.is_control()) {
            return Err(Error(format!("the title has a control character (U+{:04X}); it is plain text", c as u32)));
        }
    }
    // A chart of a window colours the tasks for it (see `Model::coloured_for`).
    let windowed;
    let m = match chart {
        Chart::WaitFor => m,
        _ => {
            let (a, b, _) = opts.window.resolve(m)?;
            match m.coloured_for(a, b) {
                Some(w) => {
                    windowed = w;
                    &windowed
                }
                None => m,
            }
        }
    };
    match chart {
        Chart::Timeline => timeline::laid_out(m, opts),
        Chart::Locks => locks::laid_out(m, opts),
        Chart::Pipes => pipes::laid_out(m, opts),
        Chart::WaitFor => waitfor::scene(m, opts).map(|s| (s, None)),
    }
}

/// Renders one chart of a derived model (derive once, render several charts).
pub fn render_model(m: &Model, chart: Chart, format: Format, opts: &Options) -> Result<Vec<u8>, Error> {
    let s = scene(m, chart, opts)?;
    match format {
        Format::Png => s.png_at(opts.scale),
        Format::Svg => s.svg(),
    }
}

/// Renders one chart of a trace as PNG or SVG bytes.
pub fn render(trace: &Trace, chart: Chart, format: Format, opts: &Options) -> Result<Vec<u8>, Error> {
    let m = Model::new(trace)?;
    render_model(&m, chart, format, opts)
}

/// Renders one chart into `path`, written whole or not at all.
pub fn render_file(trace: &Trace, chart: Chart, format: Format, opts: &Options, path: &Path) -> Result<(), Error> {
    let bytes = render(trace, chart, format, opts)?;
    write_file(path, &bytes)
}

/// Writes `bytes` to `path` whole or not at all (a temporary file renamed).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    sim::write_atomic(path, bytes).map_err(|e| Error(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_stands_for_any_run_of_characters() {
        for (pattern, name, want) in [
            ("T1", "T1", true),
            ("T1", "T10", false),
            ("T*", "T", true),
            ("T*", "T10", true),
            ("*", "", true),
            ("*.recv", "stream#5.recv", true),
            ("*.recv", "stream#5.send", false),
            ("a*b*c", "axbyc", true),
            ("a*b*c", "acb", false),
            ("a*a", "a", false),
            ("a*a", "aa", true),
            ("Join(*)*#1", "Join(xxxxxx) (34/256)#1", true),
            ("serverConn.run.func2#*", "serverConn.run.func2#13", true),
            ("serverConn.run.func2#*", "serverConn.run.func1", false),
        ] {
            assert_eq!(glob_match(pattern, name), want, "{pattern} on {name}");
        }
    }

    #[test]
    fn windows_parse() {
        assert_eq!("auto".parse::<Window>().unwrap(), Window::Auto);
        assert_eq!("ALL".parse::<Window>().unwrap(), Window::All);
        assert_eq!("Cycle".parse::<Window>().unwrap(), Window::Cycle);
        assert_eq!("LAST:5".parse::<Window>().unwrap(), Window::Last(5));
        assert_eq!("Steps:10..20".parse::<Window>().unwrap(), Window::Steps(10, 19));
        assert_eq!("all".parse::<Window>().unwrap(), Window::All);
        assert_eq!("steps:10..20".parse::<Window>().unwrap(), Window::Steps(10, 19));
        assert_eq!("steps:10..=20".parse::<Window>().unwrap(), Window::Steps(10, 20));
        assert_eq!("steps:2..=2".parse::<Window>().unwrap(), Window::Steps(2, 2));
        // To the end of u64, included or not, is as far as any trace goes.
        let max = u64::MAX;
        assert_eq!(format!("steps:1..={max}").parse::<Window>(), format!("steps:1..{max}").parse::<Window>());
        assert_eq!(format!("time:1..={max}").parse::<Window>(), format!("time:1..{max}").parse::<Window>());
        assert_eq!("time:1us..=2us".parse::<Window>().unwrap(), Window::Time(1_000, 2_001));
        assert_eq!("time:100..2000".parse::<Window>().unwrap(), Window::Time(100, 2000));
        assert_eq!("time:0.5us..1ms".parse::<Window>().unwrap(), Window::Time(500, 1_000_000));
        assert_eq!("time:1s..2s".parse::<Window>().unwrap(), Window::Time(1_000_000_000, 2_000_000_000));
        for (bad, why) in [
            ("", "expected auto, all"),
            ("last:0", "N must be at least 1"),
            ("last:x", "expected last:N"),
            ("steps:5", "expected steps:A..B or steps:A..=B"),
            ("steps:5..5", "the range is empty (its start 5 is not below its end 5)"),
            ("steps:9..2", "the range is empty"),
            ("steps:a..2", "`a` is not a step number"),
            ("time:2us..1us", "the range is empty (its start 2000 is not below its end 1000)"),
            ("time:1.5ns..2", "`1.5ns` is not a time"),
            ("time:1us..99999999999s", "`99999999999s` is too large"),
            ("foo:1", "expected auto, all"),
            ("last:99999999999999999999", "N is too large"),
            ("steps:1..99999999999999999999", "is too large"),
            ("steps:3..=2", "the range is empty (its start 3 is not at or below its end 2)"),
        ] {
            let e = bad.parse::<Window>().unwrap_err().0;
            assert!(e.starts_with(&format!("window `{bad}`: ")) && e.contains(why), "{bad}: {e}");
        }
    }
}
