//! The embedded font (Noto Sans, see `FONT-LICENSE`) and text measurement.
//!
//! plotters' `ab_glyph` backend knows only the fonts registered in this
//! process. [`ensure`] registers ours once; every function that measures or
//! draws text calls it, so a library user never has to.

use std::sync::Once;

use plotters::style::{register_font, FontDesc, FontFamily, FontStyle};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
