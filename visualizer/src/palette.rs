//! Colours: a colour-blind-safe palette shared by every chart.
//!
//! Task states use Okabe-Ito colours that differ in lightness as well as in
//! hue (blue running, pale yellow ready, vermillion blocked, grey finished),
//! so they stay apart for every kind of colour vision and in greyscale.
//! Tasks get Paul Tol's "muted" qualitative scheme, by task id in a trace of
//! up to 9 tasks, the deadlock cycle's first and then by id up to 27
//! (beyond, by a ranking of the tasks a figure shows, each the colour that
//! differs most from those ranked before it, see [`difference`] and
//! `Model::coloured_for`), so the same task has the same colour in the
//! timeline, the lock chart, the pipe chart and the wait-for graph drawn
//! of one trace with one window.
//!
//! ```
//! use visualizer::palette;
//! assert_eq!(palette::task(1), palette::task(1));
//! assert_ne!(palette::task(1), palette::task(2));
//! ```

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#RRGGBB`.
    pub fn hex(self) -> String {
        format!("#{:02X}{:02X}{:02X}", self.0, self.1, self.2)
    }

    /// Relative luminance (WCAG), in thousandths, computed in integers so
    /// that it is the same on every machine.
    fn luminance_milli(self) -> u32 {
        fn lin(c: u8) -> u32 {
            // sRGB -> linear, tabulated coarsely: enough to pick black or white text.
            let c = c as u32 * 1000 / 255;
            if c <= 40 {
                c * 1000 / 12920
            } else {
                // ((c + 55) / 1055)^2.4 approximated by a square and a cube mix.
                let x = (c + 55) * 1000 / 1055; // 0..1000
                let sq = x * x / 1000;
                let cu = sq * x / 1000;
                (sq * 6 + cu * 4) / 10
            }
        }
        (2126 * lin(self.0) + 7152 * lin(self.1) + 722 * lin(self.2)) / 10000
    }
}

/// The text colour that reads best on `bg`: [`INK`] on light fills, black
/// on mid ones (the blocked vermillion: white there is 3.9:1, ink 4.1:1),
/// white on dark ones. On every fill the charts write on it reads at 4.5:1
/// or more (WCAG AA for small text; tested), though not on every colour:
/// the luminance it compares is an integer approximation.
pub fn text_on(bg: Rgb) -> Rgb {
    // Contrast with white = 1.05 / (L + 0.05), with black = (L + 0.05) / 0.05,
    // with ink (L 0.016) = (L + 0.05) / 0.066. White and black are equal at
    // L ~ 0.179 (4.58:1 each); ink reaches 4.5:1 from L ~ 0.247.
    match bg.luminance_milli() {
        0..=179 => WHITE,
        180..=247 => BLACK,
        _ => INK,
    }
}

/// Text on a mid-tone fill (see [`text_on`]).
pub const BLACK: Rgb = Rgb(0, 0, 0);

/// Body text.
pub const INK: Rgb = Rgb(0x22, 0x22, 0x22);
/// Secondary text, axis labels.
pub const MUTED: Rgb = Rgb(0x5F, 0x5F, 0x5F);
/// Chart background.
pub const WHITE: Rgb = Rgb(0xFF, 0xFF, 0xFF);
/// Grid lines and lane separators.
pub const GRID: Rgb = Rgb(0xE4, 0xE4, 0xE4);
/// Axis lines.
pub const AXIS: Rgb = Rgb(0x88, 0x88, 0x88);

/// Task state: running (scheduled at this step). Okabe-Ito blue.
pub const RUNNING: Rgb = Rgb(0x00, 0x72, 0xB2);
/// Task state: ready but not scheduled. A pale Okabe-Ito yellow.
pub const READY: Rgb = Rgb(0xF3, 0xE3, 0x8C);
/// Task state: blocked (waiting for a resource, a join or a timer). Okabe-Ito vermillion.
pub const BLOCKED: Rgb = Rgb(0xD5, 0x5E, 0x00);
/// Task state: finished (drawn as a thin line).
pub const FINISHED: Rgb = Rgb(0x99, 0x99, 0x99);

/// The deadlock: cycle edges, the deadlock line, names of tasks in the cycle.
pub const DEADLOCK: Rgb = Rgb(0xC0, 0x1C, 0x1C);
/// Background tint of a lane whose task is in the deadlock cycle.
pub const CYCLE_TINT: Rgb = Rgb(0xFB, 0xE4, 0xDC);
/// Waiting tasks (lock chart) and blocked writers/readers (pipe chart).
pub const WAITING: Rgb = BLOCKED;
/// [`WAITING`] darkened for text on white or on [`CYCLE_TINT`] (the
/// vermillion itself is 3.9:1 and 3.2:1 there; this is 5.8:1 and 4.7:1).
pub const WAITING_TEXT: Rgb = Rgb(0xA8, 0x4A, 0x00);
/// A pipe's capacity line (pipe chart): ink, not the deadlock's red, which
/// marks the deadlock's step in the same chart.
pub const CAPACITY: Rgb = INK;
/// Buffered bytes (pipe chart). Okabe-Ito sky blue, with a darker outline.
pub const BUFFER_FILL: Rgb = Rgb(0x56, 0xB4, 0xE9);
/// Outline of the buffered bytes.
pub const BUFFER_LINE: Rgb = Rgb(0x00, 0x5A, 0x8C);
/// Non-cycle edges of the wait-for graph.
pub const EDGE: Rgb = Rgb(0x70, 0x70, 0x70);
/// Fill of resource nodes in the wait-for graph.
pub const RESOURCE_FILL: Rgb = Rgb(0xF2, 0xF2, 0xF2);

/// Paul Tol's "muted" scheme, reordered so that neighbouring task ids differ
/// most in lightness, with its sand (#DDCC77) replaced by a brown: sand and
/// its lightened form were all but the pale yellow of [`READY`], so a held
/// lock of task 6 or 15 read as a ready stretch.
const TASKS: [Rgb; 9] = [
    Rgb(0x33, 0x22, 0x88), // indigo
    Rgb(0xCC, 0x66, 0x77), // rose
    Rgb(0x11, 0x77, 0x33), // green
    Rgb(0x88, 0xCC, 0xEE), // cyan
    Rgb(0x88, 0x22, 0x55), // wine
    Rgb(0x44, 0xAA, 0x99), // teal
    Rgb(0x99, 0x55, 0x22), // brown
    Rgb(0xAA, 0x44, 0x99), // purple
    Rgb(0x99, 0x99, 0x33), // olive
];

/// The full-strength colours (slots 0 to 8); later slots are lightened or
/// darkened forms of them.
pub const FULL_COLOURS: u32 = TASKS.len() as u32;

/// The distinct colours [`task`] gives before it repeats.
pub const TASK_COLOURS: u32 = 3 * TASKS.len() as u32;

/// The colour of slot `id` (a chart asks the model, `Model::task_colour`,
/// which slot a task has: the deadlock cycle's tasks first, then the others
/// by id in the colours clear of the cycle's first, in a trace of up to
/// [`TASK_COLOURS`] tasks). Slots 9 to 17 take the scheme's colours mixed 45% with white,
/// slots 18 to 26 mixed 35% with black, so that up to 27 tasks differ in
/// lightness where they share a hue; beyond that the cycle repeats. Charts
/// always label tasks by name as well.
pub fn task(id: u32) -> Rgb {
    let n = TASKS.len() as u32;
    let Rgb(r, g, b) = TASKS[(id % n) as usize];
    // Integer mixing: the same bytes on every machine.
    let mix = |c: u8, to: u32, pct: u32| ((c as u32 * (100 - pct) + to * pct + 50) / 100) as u8;
    match id / n % 3 {
        0 => Rgb(r, g, b),
        1 => Rgb(mix(r, 255, 45), mix(g, 255, 45), mix(b, 255, 45)),
        _ => Rgb(mix(r, 0, 35), mix(g, 0, 35), mix(b, 0, 35)),
    }
}

/// The colour difference below which two task colours read as one: ΔE 15
/// ([`difference`]). Under it are each of indigo, cyan, wine and teal and
/// their own lightened or darkened forms (ΔE 11) and wine and a darkened
/// purple (10): side by side in a figure, one task passes for the other.
pub const DISTINCT: u32 = 15;

/// The colour difference ΔE*94 of `a` and `b` (CIELAB, D65; graphic-arts
/// weights, on the two colours' mean chroma, so that it is symmetric), in
/// whole units, rounded down: 0 for one colour, 100 from black to white.
/// CIE76's plain distance in Lab put indigo and its darkened form 22 apart
/// and a teal and its tint 16 (ΔE2000: 8 and 10); ΔE*94 puts them 10 and 11.
/// Computed in integers (square roots only, no trigonometry), so that a
/// choice made by it is the same on every machine.
pub fn difference(a: Rgb, b: Rgb) -> u32 {
    let (p, q) = (lab(a), lab(b));
    let one = LAB_ONE as u128;
    let chroma = |l: [i128; 3]| (l[1].unsigned_abs().pow(2) + l[2].unsigned_abs().pow(2)).isqrt();
    let (c1, c2) = (chroma(p), chroma(q));
    let c = (c1 * c2).isqrt();
    let dl = (p[0] - q[0]).unsigned_abs();
    let dc = c1.abs_diff(c2);
    let dab = (p[1] - q[1]).unsigned_abs().pow(2) + (p[2] - q[2]).unsigned_abs().pow(2);
    let dh2 = dab.saturating_sub(dc * dc);
    // S_C = 1 + 0.045 C, S_H = 1 + 0.015 C, in thousandths.
    let (sc, sh) = (1000 + 45 * c / one, 1000 + 15 * c / one);
    let sq = dl * dl + (dc * 1000 / sc).pow(2) + dh2 * 1000 / sh * 1000 / sh;
    (sq.isqrt() / one) as u32
}

/// `LAB_ONE` is 1 in the fixed point of [`lab`].
const LAB_ONE: i128 = 1_000_000;

/// CIELAB (D65) of `c` in millionths, in integers.
fn lab(c: Rgb) -> [i128; 3] {
    const S: u128 = LAB_ONE as u128;
    // The largest r with r^n <= v.
    fn root(v: u128, n: u32) -> u128 {
        let (mut lo, mut hi) = (0u128, 1u128 << (128 / n));
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            match mid.checked_pow(n) {
                Some(p) if p <= v => lo = mid,
                _ => hi = mid - 1,
            }
        }
        lo
    }
    // sRGB -> linear: ((v + 0.055) / 1.055)^2.4, as x^2 times the fifth root of x^2.
    let lin = |v: u8| -> u128 {
        let v = v as u128 * S / 255;
        if v <= 40_450 {
            v * 1000 / 12_920
        } else {
            let x = (v + 55_000) * 1000 / 1055;
            x * x / S * root(x * x * S * S * S, 5) / S
        }
    };
    let (r, g, b) = (lin(c.0), lin(c.1), lin(c.2));
    // XYZ over the white point's.
    let x = (4124 * r + 3576 * g + 1805 * b) * 10 / 95_047;
    let y = (2126 * r + 7152 * g + 722 * b) / 10_000;
    let z = (193 * r + 1192 * g + 9505 * b) * 10 / 108_883;
    let f = |t: u128| -> i128 {
        if t > 8856 {
            root(t * S * S, 3) as i128
        } else {
            (t * 7787 / 1000 + 137_931) as i128
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116 * fy - 16 * LAB_ONE, 500 * (fx - fy), 200 * (fy - fz)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "redmean" colour distance, in integers.
    fn distance(a: Rgb, b: Rgb) -> i64 {
        let (Rgb(r1, g1, b1), Rgb(r2, g2, b2)) = (a, b);
        let rm = (r1 as i64 + r2 as i64) / 2;
        let (dr, dg, db) = (r1 as i64 - r2 as i64, g1 as i64 - g2 as i64, b1 as i64 - b2 as i64);
        ((((512 + rm) * dr * dr) >> 8) + 4 * dg * dg + (((767 - rm) * db * db) >> 8)).isqrt()
    }

    #[test]
    fn no_task_colour_passes_for_a_task_state() {
        // A held-lock row in a task's colour sits under the state bar: it
        // must not read as running, ready or blocked. (The old sand slot was
        // 67 from ready, its lightened form 59.)
        for id in 0..TASK_COLOURS {
            for (state, c) in [("running", RUNNING), ("ready", READY), ("blocked", BLOCKED)] {
                let d = distance(task(id), c);
                assert!(d >= 90, "task colour {id} {:?} is {d} from {state}", task(id));
            }
        }
    }

    #[test]
    fn text_contrast() {
        assert_eq!(text_on(WHITE), INK);
        assert_eq!(text_on(Rgb(0, 0, 0)), WHITE);
        assert_eq!(text_on(RUNNING), WHITE);
        assert_eq!(text_on(READY), INK);
        assert_eq!(text_on(task(0)), WHITE);
        assert_eq!(text_on(task(3)), INK);
        assert_eq!(text_on(BLOCKED), BLACK);
    }

    /// Every fill a chart writes on gets text at 4.5:1 or more, by WCAG's
    /// formula in floats (the integer luminance only picks the colour).
    #[test]
    fn text_on_every_fill_reads_at_aa_contrast() {
        fn lum(c: Rgb) -> f64 {
            let lin = |v: u8| {
                let v = v as f64 / 255.0;
                if v <= 0.04045 {
                    v / 12.92
                } else {
                    ((v + 0.055) / 1.055).powf(2.4)
                }
            };
            0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
        }
        let contrast = |a: Rgb, b: Rgb| {
            let (x, y) = (lum(a) + 0.05, lum(b) + 0.05);
            x.max(y) / x.min(y)
        };
        // The waiting shades of the locks chart: the vermillion at these
        // opacities over white.
        let shade = |a: u32| {
            let over = |c: u8| ((c as u32 * a + 255 * (255 - a) + 127) / 255) as u8;
            Rgb(over(WAITING.0), over(WAITING.1), over(WAITING.2))
        };
        let fills = (0..TASK_COLOURS)
            .map(task)
            .chain([RUNNING, READY, BLOCKED, DEADLOCK, FINISHED, RESOURCE_FILL])
            .chain([110, 160, 205, 255].map(shade));
        for bg in fills {
            let c = contrast(text_on(bg), bg);
            assert!(c >= 4.5, "{} on {}: {c:.2}:1", text_on(bg).hex(), bg.hex());
        }
        // Coloured text on the chart's backgrounds.
        for (text, bg) in [(WAITING_TEXT, WHITE), (WAITING_TEXT, CYCLE_TINT), (DEADLOCK, WHITE), (DEADLOCK, CYCLE_TINT)]
        {
            let c = contrast(text, bg);
            assert!(c >= 4.5, "{} on {}: {c:.2}:1", text.hex(), bg.hex());
        }
    }

    #[test]
    fn difference_is_cie94() {
        // Python's colour maths, in floats: 11.1, 11.3, 25.6, 100.0, 10.8, 16.2.
        for (a, b, want) in [
            (task(3), task(12), 11),
            (task(5), task(11), 11),
            (task(1), task(4), 25),
            (WHITE, Rgb(0, 0, 0), 100),
            (task(0), task(18), 10),
            (task(6), task(24), 16),
        ] {
            assert_eq!(difference(a, b), want, "{} {}", a.hex(), b.hex());
            assert_eq!(difference(b, a), want);
        }
        assert_eq!(difference(task(5), task(5)), 0);
    }

    #[test]
    fn the_first_27_tasks_have_27_colours() {
        let colours: std::collections::BTreeSet<String> = (0..27).map(|t| task(t).hex()).collect();
        assert_eq!(colours.len(), 27);
        assert_eq!(task(9), Rgb(0x8F, 0x85, 0xBE), "indigo, lightened");
        assert_eq!(task(27), task(0), "then the cycle repeats");
    }
}
