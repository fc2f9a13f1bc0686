//! The x axis of the time-based charts, and per-pixel-column aggregation.
//!
//! A window of positions is mapped to a band of pixel columns. Intervals are
//! measured in 1/256 pixel in integer arithmetic, so that the aggregation is
//! exact and the same on every machine and build. An interval narrower than
//! a column adds its share of that column; each column then shows what
//! covers most of it. A million events thus cost a million additions, and
//! the picture has at most one shape per column and lane.

use crate::model::Model;

/// Sub-pixel resolution of [`XMap::fx`].
pub const SUB: i64 = 256;

/// Positions `a..=b` mapped to pixel columns `left..left + width`.
pub struct XMap<'m> {
    times: &'m [u64],
    /// Where the clock jumped (see [`Model::resume`]).
    jumps: &'m [(u64, u64)],
    /// First and last position of the window.
    pub a: u64,
    pub b: u64,
    /// Axis values at `a` and `b` (time in ns, or steps).
    pub x0: u64,
    pub x1: u64,
    pub left: i32,
    pub width: i32,
    /// true: the axis is virtual time; false: steps.
    pub time: bool,
    /// The window's band, in 1/256 pixel from `left`: what is drawn is
    /// clamped to it. The whole band, unless the axis runs on past the
    /// window (see [`XMap::spanning`]), where nothing is known.
    clip: (i64, i64),
}

impl<'m> XMap<'m> {
    /// The map for window `a..=b`. Falls back to steps when the window spans
    /// no virtual time.
    pub fn new(m: &'m Model, a: u64, b: u64, time: bool, left: i32, width: i32) -> XMap<'m> {
        let b = b.max(a + 1).min(m.end.max(1));
        let a = a.min(b.saturating_sub(1));
        let time = time && m.time(b) > m.time(a);
        let (x0, x1) = if time { (m.time(a), m.time(b)) } else { (a, b) };
        let width = width.max(1);
        XMap { times: &m.times, jumps: &m.jumps, a, b, x0, x1, left, width, time, clip: (0, width as i64 * SUB) }
    }

    /// The same map with its axis run on over `x0..=x1` (a window drawn on
    /// an axis it shares with another trace's, see [`crate::align`]): the
    /// window's positions keep their values, and the axis beyond them is
    /// empty.
    pub fn spanning(mut self, x0: u64, x1: u64) -> XMap<'m> {
        let own = (self.x0, self.x1);
        self.x0 = self.x0.min(x0);
        self.x1 = self.x1.max(x1);
        let lim = self.width as i64 * SUB;
        self.clip = (self.fx_value(own.0).clamp(0, lim), self.fx_value(own.1).clamp(0, lim));
        self
    }

    /// The frame of a `chart` drawn with this map in a picture `width`
    /// wide, its final column `tail` wide ending at `right`.
    pub fn frame(&self, chart: crate::Chart, width: i32, right: i32, tail: i32) -> crate::Frame {
        crate::Frame { chart, width, left: self.left, right, tail, x0: self.x0, x1: self.x1, time: self.time }
    }

    /// The x of the window's first position: the plot's left edge, unless
    /// the axis starts before the window (see [`XMap::spanning`]).
    pub fn start_px(&self) -> i32 {
        self.px(self.a)
    }

    /// The x of the window's last position: the plot's right edge, unless
    /// the axis runs on past the window (see [`XMap::spanning`]).
    pub fn end_px(&self) -> i32 {
        self.px(self.b)
    }

    /// The x of the middle of the window, for something `2 * half` wide
    /// centred there, kept inside the plot: a narrow window at one end of
    /// an axis shared with another trace's (see [`XMap::spanning`]) would
    /// put it over the label column or past the picture's edge.
    pub fn window_mid(&self, half: i32) -> i32 {
        ((self.start_px() + self.end_px()) / 2)
            .clamp(self.left + half, (self.left + self.width - half).max(self.left + half))
    }

    /// The axis value at the point `(pos, late)` (see [`Model::time_at`]):
    /// on a time axis, after the clock jump at `pos` when `late`.
    pub fn value_at(&self, (pos, late): (u64, bool)) -> u64 {
        if self.time && late {
            if let Ok(i) = self.jumps.binary_search_by_key(&pos, |j| j.0) {
                return self.jumps[i].1;
            }
        }
        self.value(pos)
    }

    /// The point `(pos, late)` as an absolute pixel x, clamped to the window's band.
    pub fn px_at(&self, at: (u64, bool)) -> i32 {
        let f = self.fx_value(self.value_at(at)).clamp(self.clip.0, self.clip.1);
        self.left + ((f + SUB / 2) / SUB) as i32
    }

    /// The axis value at position `pos`.
    pub fn value(&self, pos: u64) -> u64 {
        if self.time {
            self.times[(pos as usize).min(self.times.len() - 1)]
        } else {
            pos
        }
    }

    /// Position `pos` in 1/256 pixel from the left of the band (may lie
    /// outside `0..width * 256`).
    pub fn fx(&self, pos: u64) -> i64 {
        self.fx_value(self.value(pos))
    }

    /// An axis value in 1/256 pixel from the left of the band.
    pub fn fx_value(&self, v: u64) -> i64 {
        let span = (self.x1 - self.x0).max(1) as i128;
        let d = v as i128 - self.x0 as i128;
        let f = d * self.width as i128 * SUB as i128 / span;
        f.clamp(-(1 << 40), 1 << 40) as i64
    }

    /// Position `pos` as an absolute pixel x, clamped to the window's band.
    pub fn px(&self, pos: u64) -> i32 {
        let f = self.fx(pos).clamp(self.clip.0, self.clip.1);
        self.left + ((f + SUB / 2) / SUB) as i32
    }

    /// An axis value as an absolute pixel x (not clamped).
    pub fn px_value(&self, v: u64) -> i32 {
        self.left + ((self.fx_value(v) + SUB / 2).div_euclid(SUB)) as i32
    }

    /// True for an event at position `pos` that belongs before the window:
    /// an event takes effect at the end of its step, so one at position `a`
    /// is of step `a`, the step before the window (at 0, before the first
    /// step, it is the window's own).
    pub fn event_before(&self, pos: u64) -> bool {
        pos < self.a || (pos == self.a && self.a > 0)
    }

    /// True for an event at position `pos` that belongs to the window.
    pub fn shows_event(&self, pos: u64) -> bool {
        !self.event_before(pos) && pos <= self.b
    }

    /// True when positions `s..e` overlap the window.
    pub fn overlaps(&self, s: u64, e: u64) -> bool {
        e > self.a && s < self.b || (s == e && s >= self.a && s <= self.b)
    }

    /// Calls `f(column, amount)` for every column that `s..e` covers, with the
    /// covered amount in 1/256 pixel. A zero-length interval inside the window
    /// counts as one unit of its column, so instants are never lost.
    pub fn cover(&self, s: u64, e: u64, f: impl FnMut(usize, u32)) {
        self.cover_at((s, false), (e, false), f)
    }

    /// As [`XMap::cover`], between points `(pos, late)` (see
    /// [`Model::time_at`]). A clock jump alone (`(q, false)` to `(q, true)`)
    /// has no width on a step axis, and covers nothing there.
    pub fn cover_at(&self, (s, s_late): (u64, bool), (e, e_late): (u64, bool), mut f: impl FnMut(usize, u32)) {
        let (lo, hi) = self.clip;
        let f0 = self.fx_value(self.value_at((s, s_late))).clamp(lo, hi);
        let f1 = self.fx_value(self.value_at((e, e_late))).clamp(lo, hi);
        if f1 <= f0 {
            if s <= e && self.overlaps(s, e) && !(s == e && s_late != e_late) {
                let c = (f0 / SUB).min(self.width as i64 - 1);
                f(c as usize, 1);
            }
            return;
        }
        let (c0, c1) = (f0 / SUB, (f1 - 1) / SUB);
        for c in c0..=c1 {
            let lo = f0.max(c * SUB);
            let hi = f1.min((c + 1) * SUB);
            if hi > lo {
                f(c as usize, (hi - lo) as u32);
            }
        }
    }

    /// The column of an instant at `pos`, if it is inside the window.
    pub fn column(&self, pos: u64) -> Option<usize> {
        if pos < self.a || pos > self.b {
            return None;
        }
        let f = self.fx(pos).clamp(self.clip.0, (self.clip.1 - 1).max(self.clip.0));
        Some((f / SUB) as usize)
    }

    /// Absolute pixel x of the left edge of column `c`.
    pub fn col_x(&self, c: usize) -> i32 {
        self.left + c as i32
    }
}

/// Counts, per column, the interval ends (starts and ends) that fall in it.
/// A column with two or more is "busy": several things happened inside it,
/// and a partial cover there means "part of the time", not a sub-pixel edge.
pub fn boundaries(xm: &XMap, spans: impl Iterator<Item = (u64, u64)>) -> Vec<u8> {
    let mut n = vec![0u8; xm.width as usize];
    for (s, e) in spans {
        for p in [s, e] {
            if let Some(c) = xm.column(p) {
                n[c] = n[c].saturating_add(1);
            }
        }
    }
    n
}

/// Runs of equal values: `(first column, end column (excluded), value)`.
pub fn runs<T: Copy + PartialEq>(cols: &[Option<T>]) -> Vec<(usize, usize, T)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cols.len() {
        if let Some(v) = cols[i] {
            let mut j = i + 1;
            while j < cols.len() && cols[j] == Some(v) {
                j += 1;
            }
            out.push((i, j, v));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Per column, the key that covers most of it. Ties go to the smaller key.
pub struct Dominant {
    cols: Vec<Vec<(u32, u32)>>,
}

impl Dominant {
    pub fn new(width: usize) -> Dominant {
        Dominant { cols: vec![Vec::new(); width] }
    }

    pub fn add(&mut self, col: usize, key: u32, amount: u32) {
        let c = &mut self.cols[col];
        match c.iter_mut().find(|(k, _)| *k == key) {
            Some(e) => e.1 += amount,
            None => c.push((key, amount)),
        }
    }

    /// `(key, share of the column covered by anything, 0..=256)` per column.
    pub fn result(&self) -> Vec<Option<(u32, u32)>> {
        self.cols
            .iter()
            .map(|c| {
                let total: u32 = c.iter().map(|x| x.1).sum();
                c.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map(|&(k, _)| (k, total.min(SUB as u32)))
            })
            .collect()
    }
}

/// "Nice" tick values (1, 2, 5 times a power of ten) for `x0..=x1`, about
/// one per `spacing` pixels of `width`.
pub fn ticks(x0: u64, x1: u64, width: i32, spacing: i32) -> Vec<u64> {
    if x1 <= x0 {
        return vec![x0];
    }
    let want = (width / spacing.max(1)).max(2) as u64;
    let raw = (x1 - x0) / want;
    let mut step = 1u64;
    'outer: loop {
        for m in [1u64, 2, 5] {
            if step.saturating_mul(m) >= raw.max(1) {
                step = step.saturating_mul(m);
                break 'outer;
            }
        }
        step = step.saturating_mul(10);
    }
    let mut v = Vec::new();
    // Checked: near u64::MAX (a trace's times may go that far) the next
    // tick does not exist, and a wrapped one would loop for ever.
    let mut t = x0.div_ceil(step).checked_mul(step);
    while let Some(x) = t.filter(|&x| x <= x1) {
        v.push(x);
        t = x.checked_add(step);
    }
    v
}

/// An axis value as a label: `1.5 µs`, `20 ms`; steps as plain numbers with
/// thin separators (`12 000`). The unit follows `max` (the largest value on
/// the axis), the decimals the tick `step`.
pub fn label(v: u64, time: bool, step: u64, max: u64) -> String {
    if !time {
        return group(v);
    }
    let units = [(1_000_000_000u64, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns")];
    let (div, unit) = units.iter().copied().find(|(d, _)| max >= *d).unwrap_or((1, "ns"));
    with_decimals(v, div, unit, decimals(step, div))
}

/// The decimals (at most 3) that show `x` ns exactly in a unit of `div` ns.
fn decimals(x: u64, div: u64) -> u32 {
    let mut decimals = 0;
    let mut d = div;
    while d > 1 && x % d != 0 && decimals < 3 {
        d /= 10;
        decimals += 1;
    }
    decimals
}

/// `v` ns in `unit` (`div` ns) with `decimals` decimals.
fn with_decimals(v: u64, div: u64, unit: &str, decimals: u32) -> String {
    if decimals == 0 {
        format!("{} {unit}", group(v / div))
    } else {
        let scale = 10u64.pow(decimals);
        // In u128: a trace's times may go up to u64::MAX.
        let q = (v as u128 * scale as u128 / div as u128) as u64;
        format!("{}.{:0w$} {unit}", group(q / scale), q % scale, w = decimals as usize)
    }
}

/// The labels of an axis's two ends, `a` and `b` (`a < b`), each as exact
/// as the axis unit allows ([`label`] to three decimals) and with at least
/// the decimals of the ticks `step` apart between them (`0.0 µs`, `0.5 µs`
/// … `2.0 µs`), and with more decimals when those read alike: a one-step
/// window of 100 ns at 1.5 ms is `1.5004 ms` to `1.5005 ms`, not `1.500 ms`
/// twice.
pub fn end_labels(a: u64, b: u64, time: bool, step: u64) -> (String, String) {
    if !time {
        return (group(a), group(b));
    }
    let units = [(1_000_000_000u64, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns")];
    let (div, unit) = units.iter().copied().find(|(d, _)| b >= *d).unwrap_or((1, "ns"));
    let end = |v: u64| with_decimals(v, div, unit, decimals(v, div).max(decimals(step, div)));
    let (first, last) = (end(a), end(b));
    // Compared at three decimals: "1.5 ms" and "1.500 ms" differ as text,
    // not as values.
    if with_decimals(a, div, unit, 3) != with_decimals(b, div, unit, 3) {
        return (first, last);
    }
    (4..=div.ilog10())
        .map(|d| (with_decimals(a, div, unit, d), with_decimals(b, div, unit, d)))
        .find(|(x, y)| x != y)
        .unwrap_or((first, last))
}

/// A duration for text: `700 ns`, `8.9 µs`, `1.25 ms` (at most 3 decimals,
/// trailing zeros dropped).
pub fn duration(ns: u64) -> String {
    let units = [(1_000_000_000u64, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns")];
    let (div, unit) = units.iter().copied().find(|(d, _)| ns >= *d).unwrap_or((1, "ns"));
    if div == 1 {
        return format!("{} ns", group(ns));
    }
    let milli = (ns as u128 * 1000 / div as u128) as u64;
    let (int, mut frac) = (milli / 1000, format!("{:03}", milli % 1000));
    while frac.ends_with('0') {
        frac.pop();
    }
    if frac.is_empty() {
        format!("{} {unit}", group(int))
    } else {
        format!("{}.{frac} {unit}", group(int))
    }
}

/// "1 step", "1 200 steps": a count of steps, grouped.
pub fn steps(n: u64) -> String {
    format!("{} {}", group(n), if n == 1 { "step" } else { "steps" })
}

/// Digits grouped by three with a thin space.
pub fn group(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push('\u{2009}');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks() {
        assert_eq!(ticks(0, 700, 1000, 100), vec![0, 100, 200, 300, 400, 500, 600, 700]);
        assert_eq!(ticks(0, 7, 1000, 120), vec![0, 1, 2, 3, 4, 5, 6, 7]);
        let t = ticks(999_500, 1_000_000, 1200, 120);
        assert_eq!(t.first(), Some(&999_500));
        assert!(t.len() >= 5 && t.len() <= 11, "{t:?}");
    }

    #[test]
    fn labels() {
        assert_eq!(label(700, true, 100, 700), "700 ns");
        assert_eq!(label(1_500, true, 500, 3_000), "1.5 µs");
        assert_eq!(label(500, true, 500, 3_000), "0.5 µs");
        assert_eq!(label(2_000_000, true, 1_000_000, 9_000_000), "2 ms");
        assert_eq!(label(12_000, false, 1000, 20_000), "12\u{2009}000");
        assert_eq!(duration(700), "700 ns");
        assert_eq!(duration(8_900), "8.9 µs");
        assert_eq!(duration(1_250_000), "1.25 ms");
        assert_eq!(duration(3_000_000_000), "3 s");
    }

    #[test]
    fn the_ends_of_an_axis_read_apart() {
        // As exact as the unit allows when that tells them apart.
        assert_eq!(end_labels(0, 22_713, true, 5_000), ("0 µs".into(), "22.713 µs".into()));
        assert_eq!(end_labels(1_500_000, 1_600_000, true, 100_000), ("1.5 ms".into(), "1.6 ms".into()));
        // With the ticks' decimals: ticks at 0.5, 1.0 and 1.5 µs end at
        // 0.0 and 2.0 µs, ticks at 1.52 ms… at 1.50 and 1.60 ms.
        assert_eq!(end_labels(0, 2_000, true, 500), ("0.0 µs".into(), "2.0 µs".into()));
        assert_eq!(end_labels(1_500_000, 1_600_000, true, 20_000), ("1.50 ms".into(), "1.60 ms".into()));
        // No ticks between the ends (step 0): each as exact as it needs.
        assert_eq!(end_labels(0, 2_000, true, 0), ("0 µs".into(), "2 µs".into()));
        // One step of 100 ns at 1.5 ms, and at 2 s: more decimals.
        assert_eq!(end_labels(1_500_400, 1_500_500, true, 1), ("1.5004 ms".into(), "1.5005 ms".into()));
        assert_eq!(end_labels(2_000_000_100, 2_000_000_200, true, 1), ("2.0000001 s".into(), "2.0000002 s".into()));
        assert_eq!(end_labels(2_000_000_001, 2_000_000_002, true, 1), ("2.000000001 s".into(), "2.000000002 s".into()));
        // One end a round value: its label has fewer decimals, the same value.
        assert_eq!(end_labels(1_500_000, 1_500_400, true, 100), ("1.5000 ms".into(), "1.5004 ms".into()));
        assert_eq!(end_labels(2_000_000_000, 2_000_000_100, true, 10), ("2.0000000 s".into(), "2.0000001 s".into()));
        // Steps are whole numbers: they always differ.
        assert_eq!(end_labels(6, 7, false, 1), ("6".into(), "7".into()));
    }

    #[test]
    fn runs_merge() {
        let cols = [None, Some(1), Some(1), Some(2), None, Some(2)];
        assert_eq!(runs(&cols), vec![(1, 3, 1), (3, 4, 2), (5, 6, 2)]);
    }
}
