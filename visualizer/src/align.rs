//! Two figures on one x axis: a bug's and its fix's timelines stacked in a
//! paper, with one microsecond (or step) the same width in both.
//!
//! A chart's plot starts after its label column (as wide as its longest
//! name) and ends before its final column and arrow strip (as wide as what
//! they say), and its axis spans its own window: two traces drawn alone get
//! two scales. Each chart therefore reports its [`Frame`], what it needs,
//! and takes another's through [`Options::align`](crate::Options::align):
//! it is then drawn in the union of the two, the wider label column, final
//! column and strip, and the axis from the earlier start to the later end.
//! The union is the same whichever trace is drawn with the other's frame, so
//! `render A --align-with B` and `render B --align-with A` make a matching
//! pair.
//!
//! ```
//! use visualizer::{frame, load, Chart, Model, Options};
//! let a = load("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let b = load("../traces/philosophers-deadlock.json".as_ref()).unwrap();
//! let (a, b) = (Model::new(&a).unwrap(), Model::new(&b).unwrap());
//! let opts = Options::default();
//! // Each alone: its own plot and axis (`None` for a chart with no axis).
//! let fa = frame(&a, Chart::Timeline, &opts).unwrap().unwrap();
//! let fb = frame(&b, Chart::Timeline, &opts).unwrap().unwrap();
//! assert_ne!(fa, fb);
//! // Each with the other's: one plot, one axis.
//! let both_a = frame(&a, Chart::Timeline, &Options { align: Some(fb), ..opts.clone() }).unwrap();
//! let both_b = frame(&b, Chart::Timeline, &Options { align: Some(fa), ..opts }).unwrap();
//! assert_eq!(both_a, both_b);
//! ```

use crate::columns::XMap;
use crate::model::Model;
use crate::{Chart, Error, Options, XAxis};

/// Where a chart's plot lies across the picture, and what its x axis spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The chart it is the frame of: a timeline's is no frame for a locks chart.
    pub chart: Chart,
    /// The picture's width (layout pixels).
    pub width: i32,
    /// The plot's left edge, after the label column.
    pub left: i32,
    /// The right edge of the final column (the plot's, when there is none);
    /// the arrow strip, if any, is to the right of it.
    pub right: i32,
    /// The final column's width (0: the window ends before the run does).
    pub tail: i32,
    /// The axis's first and last value: nanoseconds or steps.
    pub x0: u64,
    pub x1: u64,
    /// True: a virtual time axis; false: steps.
    pub time: bool,
}

impl Frame {
    /// The plot's width: what is left between the label and final columns.
    pub fn plot_width(&self) -> i32 {
        self.right - self.left - self.tail
    }

    /// The union of this frame and `other`: room for what either needs, and
    /// the axis from the earlier start to the later end. The same whichever
    /// is `self`.
    pub fn union(self, other: Frame) -> Result<Frame, Error> {
        if self.chart != other.chart {
            return Err(Error(format!(
                "{}: the frame to align with is of a {} chart, not a {}",
                Error::NOT_ALIGNED,
                other.chart.name(),
                self.chart.name()
            )));
        }
        if self.width != other.width {
            return Err(Error(format!(
                "{}: the other is {} pixels wide, this one {}; give both the same --width",
                Error::NOT_ALIGNED,
                other.width,
                self.width
            )));
        }
        if self.time != other.time {
            let (mine, theirs) = if self.time { ("virtual time", "steps") } else { ("steps", "virtual time") };
            return Err(Error(format!(
                "{}: the other's axis is {theirs}, this one's {mine} (a window in which the clock never moves is \
                 drawn over steps); draw both with --x steps",
                Error::NOT_ALIGNED
            )));
        }
        let mut u = Frame {
            left: self.left.max(other.left),
            right: self.right.min(other.right),
            tail: self.tail.max(other.tail),
            x0: self.x0.min(other.x0),
            x1: self.x1.max(other.x1),
            ..self
        };
        // Labels, final columns and strips wider than the picture allows
        // together: the plot keeps a fifth of the picture, the final column
        // gives way first (its text is cut to fit, as in a narrow picture).
        let min_plot = self.width / 5;
        if u.plot_width() < min_plot {
            u.tail = (u.right - u.left - min_plot).max(0);
            if u.plot_width() < min_plot {
                return Err(Error(format!(
                    "{}: the two charts' label columns and arrow strips leave no room for a plot at width {}; give \
                     a larger --width",
                    Error::NOT_ALIGNED,
                    self.width
                )));
            }
        }
        Ok(u)
    }
}

/// Where a chart's plot is drawn (see [`place`]).
pub(crate) struct Placed<'m> {
    /// The window `a..=b` mapped onto the plot.
    pub xm: XMap<'m>,
    /// The right edge of the final column, and its width (0: none).
    pub right: i32,
    pub tail: i32,
    /// The frame drawn in: the chart's own, or the union with `opts.align`.
    pub frame: Frame,
    /// The note under the axis, which says when the axis is shared.
    pub note: String,
}

/// Places `chart`'s plot for window `a..=b` of `m`: from `left` to a final
/// column `tail` wide ending at `right`, as the chart needs it, or, with
/// `opts.align`, in the union of that and the other trace's frame. One
/// place for the timeline, locks and pipes charts alike.
pub(crate) fn place<'m>(
    m: &'m Model,
    chart: Chart,
    opts: &Options,
    (a, b): (u64, u64),
    (left, right, tail): (i32, i32, i32),
    note: String,
) -> Result<Placed<'m>, Error> {
    let time = opts.x == XAxis::Time;
    let own = XMap::new(m, a, b, time, left, right - left - tail).frame(chart, opts.width as i32, right, tail);
    let frame = match opts.align {
        Some(other) => own.union(other)?,
        None => own,
    };
    // Aligned with a trace that has a final column, this one may have none
    // (its window ends before its run): the room stays empty.
    let tail = if tail > 0 { frame.tail } else { 0 };
    let xm = XMap::new(m, a, b, time, frame.left, frame.plot_width()).spanning(frame.x0, frame.x1);
    Ok(Placed { xm, right: frame.right, tail, frame, note: note_of(note, opts.align.is_some()) })
}

/// The note under an aligned chart's axis says that its range is another's.
fn note_of(note: String, aligned: bool) -> String {
    match (aligned, note.is_empty()) {
        (false, _) => note,
        (true, true) => "x axis shared with another trace".to_string(),
        (true, false) => format!("{note}; x axis shared with another trace"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(left: i32, right: i32, tail: i32, x0: u64, x1: u64) -> Frame {
        Frame { chart: Chart::Timeline, width: 1200, left, right, tail, x0, x1, time: true }
    }

    #[test]
    fn the_union_is_the_same_either_way_and_holds_both() {
        let (a, b) = (frame(150, 1100, 80, 0, 2_000), frame(190, 1170, 60, 500, 9_000));
        let u = a.union(b).unwrap();
        assert_eq!(u, b.union(a).unwrap());
        assert_eq!((u.left, u.right, u.tail, u.x0, u.x1), (190, 1100, 80, 0, 9_000));
        assert_eq!(u.plot_width(), 830);
    }

    #[test]
    fn frames_that_cannot_share_an_axis_are_refused() {
        let a = frame(150, 1100, 80, 0, 2_000);
        let steps = Frame { time: false, ..a };
        assert!(a.union(steps).unwrap_err().0.contains("--x steps"), "{:?}", a.union(steps));
        let narrow = Frame { width: 1000, ..a };
        assert!(a.union(narrow).unwrap_err().0.contains("--width"));
        let locks = Frame { chart: Chart::Locks, ..a };
        assert!(a.union(locks).unwrap_err().0.contains("locks chart"));
        assert!([steps, narrow, locks].iter().all(|f| a.union(*f).unwrap_err().not_aligned()));
    }

    #[test]
    fn a_crowded_union_takes_room_from_the_final_column_first() {
        let a = frame(300, 1100, 100, 0, 10);
        let b = frame(150, 700, 300, 0, 10);
        let u = a.union(b).unwrap();
        assert_eq!(u.plot_width(), 240, "{u:?}");
        assert_eq!(u.tail, 160);
        let c = frame(300, 500, 0, 0, 10);
        assert!(a.union(c).unwrap_err().0.contains("larger --width"));
    }
}
