//! The embedded font (Noto Sans, see `FONT-LICENSE`) and text measurement.
//!
//! plotters' `ab_glyph` backend knows only the fonts registered in this
//! process. [`ensure`] registers ours once; every function that measures or
//! draws text calls it, so a library user never has to.

use std::sync::{Once, OnceLock};

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::backend::DrawingBackend;
use plotters::style::{register_font, Color, FontDesc, FontFamily, FontStyle, RGBAColor};

/// The family name under which the font is registered. plotters writes it
/// as is into SVG `font-family`, so it doubles as a CSS fallback list for
/// viewers of the SVG files.
pub const FAMILY: &str = "Noto Sans, DejaVu Sans, Arial, Helvetica, sans-serif";

/// Noto Sans metrics, as fractions of the ab_glyph pixel size (ascent minus
/// descent = 2789 font units, 2048 units per em).
pub const EM: f64 = 2048.0 / 2789.0;
/// Cap height (1462 units) as a fraction of the pixel size.
pub const CAP: f64 = 1462.0 / 2789.0;

static REGISTER: Once = Once::new();

/// Registers the embedded font with plotters (once per process).
pub fn ensure() {
    REGISTER.call_once(|| {
        // The font bytes are part of the binary and known to parse.
        let _ = register_font(FAMILY, FontStyle::Normal, notosans::REGULAR_TTF);
        let _ = register_font(FAMILY, FontStyle::Bold, notosans::BOLD_TTF);
    });
}

/// The plotters font for `size` (pixels) and weight.
pub fn desc(size: f64, bold: bool) -> FontDesc<'static> {
    ensure();
    let style = if bold { FontStyle::Bold } else { FontStyle::Normal };
    FontDesc::new(FontFamily::Name(FAMILY), size, style)
}

/// The characters of `text` the embedded font has no glyph for (Noto Sans
/// covers Latin, Greek and Cyrillic): a PNG draws each as an empty box,
/// while an SVG leaves a text with such a character to the viewer's fonts
/// (see [`crate::glyphs`]). In order, each once.
pub fn missing(text: &str) -> Vec<char> {
    let mut out: Vec<char> = Vec::new();
    for c in text.chars().filter(|c| !c.is_control()) {
        if face(false).glyph_id(c).0 == 0 && !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// The embedded font's regular or bold face, parsed once per process.
pub(crate) fn face(bold: bool) -> &'static FontRef<'static> {
    static FACES: OnceLock<(FontRef<'static>, FontRef<'static>)> = OnceLock::new();
    let (regular, b) = FACES.get_or_init(|| {
        // The font bytes are part of the binary and known to parse.
        let parse = |bytes| FontRef::try_from_slice(bytes).expect("the embedded Noto Sans parses");
        (parse(notosans::REGULAR_TTF), parse(notosans::BOLD_TTF))
    });
    if bold {
        b
    } else {
        regular
    }
}

/// Draws `text` on a bitmap as plotters' `draw_text` with a top-anchored
/// style would, `left` being where its layout box starts (already moved
/// for a centred or right anchor) and `top` its top: same size, same
/// baseline, same advances and kerning, the same coverage blending, but each
/// glyph placed at its own position. plotters 0.3.7 outlines every glyph at
/// the origin and shifts it by the whole-pixel part of the pen position,
/// dropping the glyph's left side bearing and the fraction, so that an `o`
/// after an `n` sits a pixel too far from it and the next one too close.
pub fn draw<DB: DrawingBackend>(
    be: &mut DB,
    text: &str,
    size: f64,
    bold: bool,
    color: RGBAColor,
    (left, top): (i32, i32),
) -> Result<(), String> {
    let font = face(bold).as_scaled(size as f32);
    let (w, h) = be.get_size();
    let mut pen = 0f32;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            pen += font.kern(p, id);
        }
        prev = Some(id);
        let glyph = id.with_scale_and_position(font.scale(), ab_glyph::point(pen, 0.0));
        if let Some(q) = font.outline_glyph(glyph) {
            let rect = q.px_bounds();
            // The baseline where plotters puts it, top + size / 2, in whole
            // pixels and the same for every glyph: plotters truncated
            // size / 2 + the glyph's top toward zero, which set `.` and `-`
            // a pixel off the letters.
            let y0 = top + (size as f32 / 2.0).floor() as i32 + rect.min.y as i32;
            let x0 = left + rect.min.x as i32;
            let mut err = Ok(());
            q.draw(|x, y, cov| {
                let (px, py) = (x0 + x as i32, y0 + y as i32);
                if err.is_ok() && px >= 0 && py >= 0 && (px as u32) < w && (py as u32) < h {
                    // As plotters blends a glyph's coverage: the colour's opacity times it.
                    err = be.draw_pixel((px, py), color.mix(cov as f64).to_backend_color()).map_err(|e| e.to_string());
                }
            });
            err?;
        }
        pen += font.h_advance(id);
    }
    Ok(())
}

/// The width in pixels of `text` drawn at `size`.
pub fn width(text: &str, size: f64, bold: bool) -> i32 {
    if text.is_empty() {
        return 0;
    }
    match desc(size, bold).box_size(text) {
        Ok((w, _)) => w as i32,
        // Not reached with the embedded font; a fair guess keeps layout sane.
        Err(_) => (text.chars().count() as f64 * size * 0.55) as i32,
    }
}

/// `text`, shortened with an ellipsis to fit in `max` pixels; `None` when
/// not even one character and the ellipsis fit.
pub fn fit(text: &str, size: f64, bold: bool, max: i32) -> Option<String> {
    if width(text, size, bold) <= max {
        return Some(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    // Binary search on the number of characters kept.
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let s: String = chars[..mid].iter().collect::<String>() + "…";
        if width(&s, size, bold) <= max {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return None;
    }
    Some(chars[..lo].iter().collect::<String>() + "…")
}

/// `text` cut in the middle to fit `max` pixels (`serverC…func2`): the
/// start and the end, for names that share a long start and differ at the
/// end. `None` if it cannot keep two characters before the cut and three
/// after it (the caller then cuts at the end, or draws nothing).
pub fn fit_middle(text: &str, size: f64, bold: bool, max: i32) -> Option<String> {
    if width(text, size, bold) <= max {
        return Some(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    if chars.len() < 3 {
        // Nothing to keep on both sides of a cut.
        return None;
    }
    let cut = |n: usize| {
        let head = n / 2;
        let (h, t): (String, String) =
            (chars[..head].iter().collect(), chars[chars.len() - (n - head)..].iter().collect());
        // A dot beside the ellipsis would read as a fourth one.
        format!("{}…{}", h.trim_end_matches('.'), t.trim_start_matches('.'))
    };
    // Binary search on the number of characters kept.
    let (mut lo, mut hi) = (0usize, chars.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if width(&cut(mid), size, bold) <= max {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    // Two characters before the cut and three after, or the cut says nothing.
    (lo >= 5).then(|| cut(lo))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_middle_cut_keeps_both_ends_or_gives_up() {
        for short in ["", "a", "ab"] {
            assert_eq!(fit_middle(short, 12.0, false, -5), None, "{short:?}");
        }
        assert_eq!(fit_middle("ab", 12.0, false, 100).as_deref(), Some("ab"));
        let cut = fit_middle("serverConn.run.func2", 12.0, false, width("server…func2", 12.0, false)).unwrap();
        assert!(cut.starts_with("serv") && cut.ends_with("func2") && cut.contains('…'), "{cut}");
        assert_eq!(fit_middle("serverConn.run.func2", 12.0, false, 1), None);
        // No dot beside the ellipsis, at any room.
        for room in 20..120 {
            if let Some(cut) = fit_middle("serverConn.run.func2", 12.0, false, room) {
                assert!(!cut.contains(".…") && !cut.contains("….") && width(&cut, 12.0, false) <= room, "{cut}");
            }
        }
    }

    #[test]
    fn measures_and_fits() {
        let w = width("philosopher-0", 15.0, false);
        assert!(w > 60 && w < 140, "{w}");
        assert!(width("philosopher-0", 15.0, true) >= w);
        assert_eq!(fit("abc", 15.0, false, 1000).unwrap(), "abc");
        let f = fit("Client.createStream", 15.0, false, 60).unwrap();
        assert!(f.ends_with('…') && width(&f, 15.0, false) <= 60, "{f}");
        assert_eq!(fit("Client", 15.0, false, 2), None);
    }

    /// The inked columns of `text` drawn at `size` from x = 0.
    fn inked_columns(text: &str, size: f64) -> Vec<u32> {
        let (w, h) = (40 * size as u32, 2 * size as u32);
        let mut buf = vec![255u8; (w * h * 3) as usize];
        {
            let mut be = plotters::backend::BitMapBackend::with_buffer(&mut buf, (w, h));
            draw(&mut be, text, size, false, RGBAColor(0, 0, 0, 1.0), (0, 0)).unwrap();
            be.present().unwrap();
        }
        (0..w).filter(|&x| (0..h).any(|y| buf[((y * w + x) * 3) as usize] < 128)).collect()
    }

    #[test]
    fn glyphs_sit_at_their_own_positions() {
        let font = face(false).as_scaled(100.0);
        let l = font.glyph_id('l');
        // An `l` starts at its left side bearing, not at the pen (plotters 0.3.7 drew it at 0).
        let lsb = font.h_side_bearing(l);
        assert!(lsb > 3.0, "{lsb}");
        let cols = inked_columns("l", 100.0);
        assert!((cols[0] as f32 - lsb).abs() <= 1.0, "first inked column {} for a bearing of {lsb}", cols[0]);
        // The second `l` of "ll" starts one advance after the first, to the pixel.
        let cols = inked_columns("ll", 100.0);
        let second = cols.windows(2).find(|p| p[1] > p[0] + 1).map(|p| p[1]).unwrap();
        let want = font.h_advance(l) + lsb;
        assert!((second as f32 - want).abs() <= 1.0, "second stem at {second}, want {want}");
    }
}
