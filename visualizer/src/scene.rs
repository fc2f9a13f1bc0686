//! A chart as a list of shapes in pixel coordinates, and its rendering to PNG
//! and SVG through plotters.
//!
//! Charts lay themselves out into a [`Scene`]; the same scene is drawn on
//! plotters' bitmap backend (then encoded as PNG) or its SVG backend, so the
//! two formats show the same picture. Everything is integer pixels, and
//! nothing depends on time or hash order: the same scene gives the same bytes.

use plotters::backend::{BitMapBackend, DrawingBackend, SVGBackend};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{RGBAColor, ShapeStyle, TextStyle};

use crate::fonts;
use crate::glyphs;
use crate::palette::{Rgb, WHITE};
use crate::Error;

/// Horizontal anchor of a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    Left,
    Center,
    Right,
}

/// A colour with opacity (0..=255).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paint {
    pub rgb: Rgb,
    pub alpha: u8,
}

impl From<Rgb> for Paint {
    fn from(rgb: Rgb) -> Paint {
        Paint { rgb, alpha: 255 }
    }
}

impl Paint {
    fn rgba(self) -> RGBAColor {
        RGBAColor(self.rgb.0, self.rgb.1, self.rgb.2, self.alpha as f64 / 255.0)
    }
}

/// `rgb` at opacity `alpha` (0..=255).
pub fn alpha(rgb: Rgb, alpha: u8) -> Paint {
    Paint { rgb, alpha }
}

/// One shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A filled rectangle covering pixels x0..x1, y0..y1 (ends excluded).
    Rect { x0: i32, y0: i32, x1: i32, y1: i32, paint: Paint },
    /// A polyline.
    Path { points: Vec<(i32, i32)>, paint: Paint, width: u32 },
    /// A filled polygon.
    Polygon { points: Vec<(i32, i32)>, paint: Paint },
    /// A circle, filled or outlined (a line `stroke` pixels wide).
    Circle { x: i32, y: i32, r: u32, paint: Paint, filled: bool, stroke: u32 },
    /// Text with its baseline at `y`.
    Text { x: i32, y: i32, text: String, size: f64, bold: bool, paint: Paint, anchor: Anchor },
}

/// A chart ready to render.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub width: u32,
    pub height: u32,
    pub items: Vec<Item>,
}

impl Scene {
    /// An empty scene (white background).
    pub fn new(width: u32, height: u32) -> Scene {
        Scene { width, height, items: Vec::new() }
    }

    pub fn rect(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, paint: impl Into<Paint>) {
        if x1 > x0 && y1 > y0 {
            self.items.push(Item::Rect { x0, y0, x1, y1, paint: paint.into() });
        }
    }

    /// A 1-pixel (or `w`-pixel) outline of a rectangle.
    pub fn frame(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, paint: impl Into<Paint>, w: i32) {
        let p = paint.into();
        self.rect(x0, y0, x1, y0 + w, p);
        self.rect(x0, y1 - w, x1, y1, p);
        self.rect(x0, y0 + w, x0 + w, y1 - w, p);
        self.rect(x1 - w, y0 + w, x1, y1 - w, p);
    }

    pub fn path(&mut self, points: Vec<(i32, i32)>, paint: impl Into<Paint>, width: u32) {
        if points.len() >= 2 {
            self.items.push(Item::Path { points, paint: paint.into(), width });
        }
    }

    pub fn line(&mut self, a: (i32, i32), b: (i32, i32), paint: impl Into<Paint>, width: u32) {
        self.path(vec![a, b], paint, width);
    }

    /// A horizontal or vertical dashed line (dash and gap in pixels).
    pub fn dashed(&mut self, a: (i32, i32), b: (i32, i32), paint: impl Into<Paint>, width: u32, dash: i32, gap: i32) {
        let p = paint.into();
        let (dx, dy) = ((b.0 - a.0).signum(), (b.1 - a.1).signum());
        let len = (b.0 - a.0).abs().max((b.1 - a.1).abs());
        let mut s = 0;
        while s < len {
            let e = (s + dash).min(len);
            self.line((a.0 + dx * s, a.1 + dy * s), (a.0 + dx * e, a.1 + dy * e), p, width);
            s = e + gap;
        }
    }

    pub fn polygon(&mut self, points: Vec<(i32, i32)>, paint: impl Into<Paint>) {
        if points.len() >= 3 {
            self.items.push(Item::Polygon { points, paint: paint.into() });
        }
    }

    pub fn circle(&mut self, x: i32, y: i32, r: u32, paint: impl Into<Paint>, filled: bool) {
        self.items.push(Item::Circle { x, y, r, paint: paint.into(), filled, stroke: 1 });
    }

    /// Text with its baseline at `y`.
    ///
    /// A control character (a tab or a bell in a name of a trace written
    /// by hand) is drawn as U+FFFD: it has no glyph, and XML, so an SVG,
    /// does not allow most of them.
    #[allow(clippy::too_many_arguments)]
    pub fn text(&mut self, x: i32, y: i32, text: &str, size: f64, bold: bool, paint: impl Into<Paint>, anchor: Anchor) {
        if !text.is_empty() {
            let text = if text.contains(char::is_control) {
                text.chars().map(|c| if c.is_control() { '\u{fffd}' } else { c }).collect()
            } else {
                text.to_string()
            };
            self.items.push(Item::Text { x, y, text, size, bold, paint: paint.into(), anchor });
        }
    }

    /// Text vertically centred (on its capital letters) at `cy`.
    #[allow(clippy::too_many_arguments)]
    pub fn text_mid(
        &mut self,
        x: i32,
        cy: i32,
        text: &str,
        size: f64,
        bold: bool,
        paint: impl Into<Paint>,
        anchor: Anchor,
    ) {
        let y = cy + (fonts::CAP * size / 2.0).round() as i32;
        self.text(x, y, text, size, bold, paint, anchor);
    }

    /// An arrow head at `tip`, pointing along `from -> tip`.
    pub fn arrow_head(&mut self, from: (i32, i32), tip: (i32, i32), size: i32, paint: impl Into<Paint>) {
        let (dx, dy) = ((tip.0 - from.0) as f64, (tip.1 - from.1) as f64);
        let len = (dx * dx + dy * dy).sqrt();
        if len == 0.0 {
            return;
        }
        let (ux, uy) = (dx / len, dy / len);
        let s = size as f64;
        let base = (tip.0 as f64 - ux * s, tip.1 as f64 - uy * s);
        let half = s * 0.45;
        let l = ((base.0 - uy * half).round() as i32, (base.1 + ux * half).round() as i32);
        let r = ((base.0 + uy * half).round() as i32, (base.1 - ux * half).round() as i32);
        self.polygon(vec![tip, l, r], paint);
    }

    /// The scene as PNG bytes (8-bit RGB).
    pub fn png(&self) -> Result<Vec<u8>, Error> {
        self.png_at(1)
    }

    /// The scene as PNG bytes at `scale` pixels per layout pixel: every
    /// length, line width and font size times `scale`, drawn at that size
    /// (letters are set at the larger size, not enlarged pixels). Over 1,
    /// the PNG says its density (96 dpi times `scale`), so a document that
    /// reads it shows the picture at the size of the scale-1 one.
    pub fn png_at(&self, scale: u32) -> Result<Vec<u8>, Error> {
        let scaled;
        let scene = if scale > 1 {
            scaled = self.scaled(scale);
            &scaled
        } else {
            self
        };
        let (w, h) = (scene.width, scene.height);
        let mut buf = vec![255u8; w as usize * h as usize * 3];
        {
            let mut be = BitMapBackend::with_buffer(&mut buf, (w, h));
            scene.draw(&mut be, false).map_err(|e| Error(format!("cannot draw the PNG: {e}")))?;
            be.present().map_err(|e| Error(format!("cannot draw the PNG: {e}")))?;
        }
        encode_png(&buf, w, h, scale)
    }

    /// This scene with every coordinate, length and size times `k`.
    pub fn scaled(&self, k: u32) -> Scene {
        let ki = k as i32;
        let p = |(x, y): (i32, i32)| (x * ki, y * ki);
        let items = self
            .items
            .iter()
            .map(|item| match item {
                Item::Rect { x0, y0, x1, y1, paint } => {
                    Item::Rect { x0: x0 * ki, y0: y0 * ki, x1: x1 * ki, y1: y1 * ki, paint: *paint }
                }
                Item::Path { points, paint, width } => {
                    Item::Path { points: points.iter().copied().map(p).collect(), paint: *paint, width: width * k }
                }
                Item::Polygon { points, paint } => {
                    Item::Polygon { points: points.iter().copied().map(p).collect(), paint: *paint }
                }
                Item::Circle { x, y, r, paint, filled, stroke } => {
                    Item::Circle { x: x * ki, y: y * ki, r: r * k, paint: *paint, filled: *filled, stroke: stroke * k }
                }
                Item::Text { x, y, text, size, bold, paint, anchor } => Item::Text {
                    x: x * ki,
                    y: y * ki,
                    text: text.clone(),
                    size: size * k as f64,
                    bold: *bold,
                    paint: *paint,
                    anchor: *anchor,
                },
            })
            .collect();
        Scene { width: self.width * k, height: self.height * k, items }
    }

    /// The scene as SVG text.
    pub fn svg(&self) -> Result<Vec<u8>, Error> {
        let mut out = String::with_capacity(64 * self.items.len() + 256);
        {
            let mut be = SVGBackend::with_string(&mut out, (self.width, self.height));
            self.draw(&mut be, true).map_err(|e| Error(format!("cannot draw the SVG: {e}")))?;
            be.present().map_err(|e| Error(format!("cannot draw the SVG: {e}")))?;
        }
        Ok(glyphs::outline_text(&out, &self.items).into_bytes())
    }

    fn draw<DB: DrawingBackend>(&self, be: &mut DB, svg: bool) -> Result<(), String> {
        fonts::ensure();
        let bg = ShapeStyle::from(Paint::from(WHITE).rgba()).filled();
        be.draw_rect((0, 0), (self.width as i32, self.height as i32), &bg, true).map_err(|e| e.to_string())?;
        for item in &self.items {
            match item {
                Item::Rect { x0, y0, x1, y1, paint } => {
                    let style = ShapeStyle::from(paint.rgba()).filled();
                    be.draw_rect((*x0, *y0), (*x1, *y1), &style, true).map_err(|e| e.to_string())?;
                }
                // A bitmap's thick line covers one pixel more than its width
                // (a 2-px arrow 3 px wide, the SVG's 2): an opaque path of
                // horizontal and vertical segments is filled as rectangles
                // instead, the pixels the SVG's stroke covers.
                Item::Path { points, paint, width }
                    if !svg && *width >= 2 && paint.alpha == 255 && axis_aligned(points) =>
                {
                    let style = ShapeStyle::from(paint.rgba()).filled();
                    for (x0, y0, x1, y1) in stroke_rects(points, *width as i32) {
                        be.draw_rect((x0, y0), (x1, y1), &style, true).map_err(|e| e.to_string())?;
                    }
                }
                Item::Path { points, paint, width } => {
                    let style = ShapeStyle::from(paint.rgba()).stroke_width(*width);
                    be.draw_path(points.iter().copied(), &style).map_err(|e| e.to_string())?;
                }
                Item::Polygon { points, paint } => {
                    let style = ShapeStyle::from(paint.rgba()).filled();
                    be.fill_polygon(points.iter().copied(), &style).map_err(|e| e.to_string())?;
                }
                Item::Circle { x, y, r, paint, filled, stroke } => {
                    let style = if *filled {
                        ShapeStyle::from(paint.rgba()).filled()
                    } else {
                        ShapeStyle::from(paint.rgba()).stroke_width(*stroke)
                    };
                    be.draw_circle((*x, *y), *r, &style, *filled).map_err(|e| e.to_string())?;
                }
                Item::Text { x, y, text, size, bold, paint, anchor } => {
                    let h = match anchor {
                        Anchor::Left => HPos::Left,
                        Anchor::Center => HPos::Center,
                        Anchor::Right => HPos::Right,
                    };
                    // plotters places a glyph run differently per backend:
                    // ab_glyph puts the baseline at top + size / 2; the SVG
                    // backend writes `dy="0.76em"` and a font-size of
                    // size / 1.24. Both are brought to the same baseline and
                    // the same em here.
                    let (size, top) = if svg {
                        let s = size * fonts::EM * 1.24;
                        (s, *y - (0.76 * fonts::EM * size).round() as i32)
                    } else {
                        (*size, *y - (size / 2.0).round() as i32)
                    };
                    let color = paint.rgba();
                    if svg {
                        let style = TextStyle::from(fonts::desc(size, *bold)).color(&color).pos(Pos::new(h, VPos::Top));
                        be.draw_text(text, &style, (*x, top)).map_err(|e| e.to_string())?;
                    } else {
                        // The anchor as plotters' `draw_text` applies it, from the same width.
                        let width = fonts::width(text, size, *bold);
                        let left = match anchor {
                            Anchor::Left => *x,
                            Anchor::Center => *x - width / 2,
                            Anchor::Right => *x - width,
                        };
                        fonts::draw(be, text, size, *bold, color, (left, top))?;
                    }
                }
            }
        }
        Ok(())
    }
}

fn encode_png(rgb: &[u8], w: u32, h: u32, scale: u32) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        if scale > 1 {
            // 96 dpi (the CSS pixel) times the scale, in pixels per metre.
            let ppm = (96.0 * scale as f64 / 0.0254).round() as u32;
            enc.set_pixel_dims(Some(png::PixelDimensions { xppu: ppm, yppu: ppm, unit: png::Unit::Meter }));
        }
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Best);
        enc.set_filter(png::FilterType::Paeth);
        enc.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
        let mut wr = enc.write_header().map_err(|e| Error(format!("cannot encode the PNG: {e}")))?;
        wr.write_image_data(rgb).map_err(|e| Error(format!("cannot encode the PNG: {e}")))?;
        wr.finish().map_err(|e| Error(format!("cannot encode the PNG: {e}")))?;
    }
    Ok(out)
}

/// True if every segment of `points` is horizontal or vertical.
fn axis_aligned(points: &[(i32, i32)]) -> bool {
    points.windows(2).all(|w| w[0].0 == w[1].0 || w[0].1 == w[1].1)
}

/// The rectangles (x0, y0, x1, y1, ends excluded) a `width`-pixel stroke
/// of the axis-aligned polyline `points` covers, as an SVG renderer fills
/// it: across a segment from its line less half the width, along it from
/// end to end, and at each inner corner on past it by half the width (a
/// miter join), at the path's two ends not at all (butt caps).
fn stroke_rects(points: &[(i32, i32)], width: i32) -> Vec<(i32, i32, i32, i32)> {
    let (before, after) = (width / 2, width - width / 2);
    let last = points.len().saturating_sub(2);
    points
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let ((ax, ay), (bx, by)) = (w[0], w[1]);
            // How far each end goes on: half the width at an inner corner.
            let (ea, eb) = (if i > 0 { before } else { 0 }, if i < last { after } else { 0 });
            if ax == bx {
                let (y0, y1) = if ay <= by { (ay - ea, by + eb) } else { (by - eb, ay + ea) };
                (ax - before, y0, ax + after, y1)
            } else {
                let (x0, x1) = if ax <= bx { (ax - ea, bx + eb) } else { (bx - eb, ax + ea) };
                (x0, ay - before, x1, ay + after)
            }
        })
        .collect()
}
