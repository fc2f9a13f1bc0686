//! An SVG's text drawn with the embedded font's glyph outlines, so that it
//! looks the same in every viewer, whatever fonts that viewer has.
//!
//! Each glyph a chart uses is one `<path>` in the SVG's `<defs>`, in font
//! units; a text run is a group placed at the run's start and scaled to its
//! size, holding one `<use>` per glyph at its pen position. The positions
//! are the PNG's: the same advances from the same font (see
//! [`fonts::draw`]; Noto Sans keeps its kerning in its GPOS table, which
//! ab_glyph does not read, so neither format kerns). The run's `<text>`
//! stays, over the outlines, with no ink, so the words can still be found,
//! selected, copied and read aloud.
//!
//! A run with a character the font has no glyph for (a task named in
//! Chinese) stays visible text: a viewer's own fonts then draw it, which
//! beats the empty boxes the PNG shows.

use std::collections::BTreeMap;
use std::fmt::Write;

use ab_glyph::{Font, GlyphId, OutlineCurve, ScaleFont};

use crate::fonts;
use crate::scene::{Anchor, Item};

/// `svg` (as plotters wrote `items`) with each text run outlined, or `svg`
/// unchanged if plotters' output is not what is expected (one `<text ` per
/// text item with any opacity, in order).
pub fn outline_text(svg: &str, items: &[Item]) -> String {
    let runs: Vec<Run> = items
        .iter()
        .filter_map(|i| match i {
            // plotters writes nothing for a text of opacity 0.
            Item::Text { paint, .. } if paint.alpha == 0 => None,
            Item::Text { x, y, text, size, bold, paint, anchor } => Some(Run {
                x: *x,
                y: *y,
                text,
                size: *size,
                bold: *bold,
                fill: format!("#{:02X}{:02X}{:02X}", paint.rgb.0, paint.rgb.1, paint.rgb.2),
                opacity: paint.alpha,
                anchor: *anchor,
            }),
            _ => None,
        })
        .collect();
    let pieces: Vec<&str> = svg.split("<text ").collect();
    let Some(head_end) = pieces[0].find('>') else { return svg.to_string() };
    if pieces.len() != runs.len() + 1 || !pieces[0].starts_with("<svg ") {
        return svg.to_string();
    }
    let mut defs = Defs::default();
    let mut body = String::with_capacity(svg.len() * 4);
    body.push_str(&pieces[0][head_end + 1..]);
    for (piece, run) in pieces[1..].iter().zip(&runs) {
        let width = fonts::width(run.text, run.size, run.bold);
        let outlined = fonts::missing(run.text).is_empty() && run.draw(width, &mut defs, &mut body);
        // The words themselves, fitted to the width they were laid out
        // with: without ink behind outlines, or drawn by a viewer's font.
        body.push_str("<text ");
        if width > 0 {
            let _ = write!(body, "textLength=\"{width}\" lengthAdjust=\"spacingAndGlyphs\" ");
        }
        if outlined {
            body.push_str("fill-opacity=\"0\" ");
        }
        body.push_str(piece);
    }
    let mut out = String::with_capacity(body.len() + defs.text.len() + 200);
    // `xlink:href` rather than SVG 2's `href`: older renderers (librsvg
    // before 2.52, Inkscape 0.92) know only the former.
    out.push_str(&pieces[0][..head_end]);
    out.push_str(" xmlns:xlink=\"http://www.w3.org/1999/xlink\">");
    if !defs.text.is_empty() {
        out.push_str("\n<defs>\n");
        out.push_str(&defs.text);
        out.push_str("</defs>");
    }
    out.push_str(&body);
    out
}

/// One text item, as the SVG draws it.
struct Run<'a> {
    x: i32,
    y: i32,
    text: &'a str,
    size: f64,
    bold: bool,
    fill: String,
    opacity: u8,
    anchor: Anchor,
}

impl Run<'_> {
    /// Writes the run's glyphs (a group of `<use>`) to `body`, adding the
    /// glyphs not yet defined to `defs`. `width` is the run's laid-out
    /// width. False if the run has no ink (spaces only): nothing written.
    fn draw(&self, width: i32, defs: &mut Defs, body: &mut String) -> bool {
        let face = fonts::face(self.bold);
        let scale = face.as_scaled(self.size as f32).h_scale_factor();
        // Where the PNG starts the run and puts its baseline (`fonts::draw`
        // from `Scene::draw`): the layout box moved by the anchor, and the
        // baseline at top + size / 2, both in whole pixels.
        let left = match self.anchor {
            Anchor::Left => self.x,
            Anchor::Center => self.x - width / 2,
            Anchor::Right => self.x - width,
        };
        let baseline = self.y - (self.size / 2.0).round() as i32 + (self.size as f32 / 2.0).floor() as i32;
        let mut uses = String::new();
        // The pen in font units: whole numbers, exact.
        let mut pen = 0f32;
        let mut prev: Option<GlyphId> = None;
        for c in self.text.chars() {
            let id = face.glyph_id(c);
            if let Some(p) = prev {
                pen += face.kern_unscaled(p, id);
            }
            prev = Some(id);
            if let Some(name) = defs.glyph(self.bold, id) {
                let _ = write!(uses, "<use xlink:href=\"#{name}\" x=\"{}\"/>", num(pen));
            }
            pen += face.h_advance_unscaled(id);
        }
        if uses.is_empty() {
            return false;
        }
        let _ = writeln!(
            body,
            "<g aria-hidden=\"true\" fill=\"{}\" fill-opacity=\"{}\" transform=\"translate({left} {baseline}) scale({})\">{uses}</g>",
            self.fill,
            num(self.opacity as f32 / 255.0),
            num(scale)
        );
        true
    }
}

/// The glyph outlines defined so far, by face and glyph, and their
/// `<path>` elements in the order first used (so the same chart gives the
/// same bytes).
#[derive(Default)]
struct Defs {
    names: BTreeMap<(bool, u16), Option<String>>,
    text: String,
}

impl Defs {
    /// The name of glyph `id`'s outline (`ds-r72`, `ds-b72` in bold), defined on
    /// first use; `None` for a glyph with no outline (a space).
    fn glyph(&mut self, bold: bool, id: GlyphId) -> Option<&str> {
        let text = &mut self.text;
        self.names
            .entry((bold, id.0))
            .or_insert_with(|| {
                let d = path_data(fonts::face(bold).outline(id)?.curves.as_slice())?;
                // Prefixed: an SVG inlined in a page shares its ids.
                let name = format!("ds-{}{}", if bold { 'b' } else { 'r' }, id.0);
                let _ = writeln!(text, "<path id=\"{name}\" d=\"{d}\"/>");
                Some(name)
            })
            .as_deref()
    }
}

/// SVG path data for a glyph's outline, in font units with y pointing down
/// (the font's y points up). Each contour is one closed subpath; `None`
/// for an empty outline.
fn path_data(curves: &[OutlineCurve]) -> Option<String> {
    let mut d = String::new();
    let mut start = None;
    let mut at = None;
    let pt = |d: &mut String, p: ab_glyph::Point| {
        let _ = write!(d, "{} {}", num(p.x), num(-p.y));
    };
    for curve in curves {
        let (p0, end) = match *curve {
            OutlineCurve::Line(p0, p1) => (p0, p1),
            OutlineCurve::Quad(p0, _, p2) => (p0, p2),
            OutlineCurve::Cubic(p0, _, _, p3) => (p0, p3),
        };
        if matches!(*curve, OutlineCurve::Line(a, b) if a == b) {
            // A contour drawn back to its start and then closed ends with
            // a line of no length.
            continue;
        }
        if start.is_none() || at != Some(p0) {
            if start.is_some() {
                d.push('Z');
            }
            d.push('M');
            pt(&mut d, p0);
            start = Some(p0);
        }
        match *curve {
            // The line back to the contour's start is its close.
            OutlineCurve::Line(_, p1) if Some(p1) == start => {
                d.push('Z');
                start = None;
                continue;
            }
            OutlineCurve::Line(_, p1) => {
                d.push('L');
                pt(&mut d, p1);
            }
            OutlineCurve::Quad(_, p1, p2) => {
                d.push('Q');
                pt(&mut d, p1);
                d.push(' ');
                pt(&mut d, p2);
            }
            OutlineCurve::Cubic(_, p1, p2, p3) => {
                d.push('C');
                pt(&mut d, p1);
                d.push(' ');
                pt(&mut d, p2);
                d.push(' ');
                pt(&mut d, p3);
            }
        }
        at = Some(end);
    }
    if start.is_some() {
        d.push('Z');
    }
    (!d.is_empty()).then_some(d)
}

/// A number as short as it reads exactly: `12`, `-7`, `0.5`.
fn num(v: f32) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outline_is_closed_subpaths_in_font_units_with_y_down() {
        let face = fonts::face(false);
        // `o` has two contours: two subpaths, both closed.
        let d = path_data(&face.outline(face.glyph_id('o')).unwrap().curves).unwrap();
        assert_eq!(d.matches('M').count(), 2, "{d}");
        assert_eq!(d.matches('Z').count(), 2, "{d}");
        assert!(d.ends_with('Z'), "{d}");
        // `l` is one box standing on the baseline: y runs from 0 up to
        // minus the ascender, x inside the advance.
        let d = path_data(&face.outline(face.glyph_id('l')).unwrap().curves).unwrap();
        let nums: Vec<f32> =
            d.split(|c: char| c.is_ascii_alphabetic() || c == ' ').filter_map(|s| s.parse().ok()).collect();
        let ys: Vec<f32> = nums.iter().skip(1).step_by(2).copied().collect();
        let xs: Vec<f32> = nums.iter().step_by(2).copied().collect();
        assert_eq!(ys.iter().copied().fold(f32::MIN, f32::max), 0.0, "{d}");
        assert!(ys.iter().copied().fold(f32::MAX, f32::min) < -1400.0, "{d}");
        let adv = face.h_advance_unscaled(face.glyph_id('l'));
        assert!(xs.iter().all(|&x| x > 0.0 && x < adv), "{d}");
        // A space has no outline.
        assert!(face.outline(face.glyph_id(' ')).is_none_or(|o| path_data(&o.curves).is_none()));
    }

    #[test]
    fn a_run_the_font_covers_is_outlined_and_one_it_does_not_is_left_to_the_viewer() {
        use crate::palette::Rgb;
        let mut scene = crate::scene::Scene::new(400, 100);
        scene.text(10, 30, "T1 ll", 15.0, false, Rgb(1, 2, 3), Anchor::Left);
        scene.text(10, 60, "写线程-1", 15.0, true, Rgb(4, 5, 6), Anchor::Left);
        scene.text(390, 90, "ll", 15.0, true, crate::scene::alpha(Rgb(7, 8, 9), 51), Anchor::Right);
        let svg = String::from_utf8(scene.svg().unwrap()).unwrap();
        let texts: Vec<&str> = svg.split("<text ").skip(1).map(|t| t.split("</text>").next().unwrap()).collect();
        assert_eq!(texts.len(), 3, "{svg}");
        // Outlined: a group of the run's glyphs, then the words with no ink.
        assert!(texts[0].starts_with("textLength=") && texts[0].contains("fill-opacity=\"0\""), "{}", texts[0]);
        // Left to the viewer's fonts: visible, and no group drawn for it.
        assert!(!texts[1].contains("fill-opacity"), "{}", texts[1]);
        assert!(texts[1].ends_with(">\n写线程-1\n"), "{}", texts[1]);
        let groups: Vec<&str> = svg.match_indices("<g aria-hidden").map(|(i, _)| &svg[i..]).collect();
        assert_eq!(groups.len(), 2, "{svg}");
        // `T`, `1` and `l` regular (`l` defined once), `l` bold; the space has no outline.
        let uses: Vec<&str> = groups[0].split("</g>").next().unwrap().matches("<use").collect();
        assert_eq!(uses.len(), 4, "{}", groups[0]);
        assert_eq!(svg.matches("<path id=\"ds-r").count(), 3, "{svg}");
        assert_eq!(svg.matches("<path id=\"ds-b").count(), 1, "{svg}");
        // Colour and opacity of each run; a right-anchored run ends at its x.
        assert!(groups[0].starts_with("<g aria-hidden=\"true\" fill=\"#010203\" fill-opacity=\"1\" "), "{}", groups[0]);
        assert!(
            groups[1].starts_with("<g aria-hidden=\"true\" fill=\"#070809\" fill-opacity=\"0.2\" "),
            "{}",
            groups[1]
        );
        let w = fonts::width("ll", 15.0, true);
        assert!(groups[1].contains(&format!("translate({} ", 390 - w)), "{}", groups[1]);
        // The same scene, the same bytes.
        assert_eq!(scene.svg().unwrap(), svg.into_bytes());
        // A text of opacity 0 (plotters writes no `<text>` for it) leaves
        // the others outlined.
        let mut scene = crate::scene::Scene::new(400, 100);
        scene.text(10, 30, "unseen", 15.0, false, crate::scene::alpha(Rgb(1, 2, 3), 0), Anchor::Left);
        scene.text(10, 60, "seen", 15.0, false, Rgb(1, 2, 3), Anchor::Left);
        let svg = String::from_utf8(scene.svg().unwrap()).unwrap();
        assert_eq!(svg.matches("<text ").count(), 1, "{svg}");
        assert_eq!(svg.matches("<use ").count(), 4, "{svg}");
    }

    #[test]
    fn numbers_read_exactly() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(-7.0), "-7");
        assert_eq!(num(0.5), "0.5");
        assert_eq!(num(1.0), "1");
    }
}
