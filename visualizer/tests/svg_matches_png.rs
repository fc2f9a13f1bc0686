//! An SVG chart shows what its PNG shows, letters included, in any viewer:
//! each SVG is rasterized (resvg, built without text support, so it draws
//! the glyph outlines and nothing of the `<text>` elements) and compared
//! with the PNG pixel by pixel.

use std::path::Path;

use visualizer::palette::Rgb;
use visualizer::{Chart, Format, Item, Options};

/// The ground of the letters-only pictures: dark ink and white both show.
const GREY: Rgb = Rgb(120, 120, 120);

/// RGB pixels of a PNG.
fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(bytes).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// RGB pixels of an SVG drawn over white.
fn rasterize(svg: &[u8]) -> (u32, u32, Vec<u8>) {
    let tree = resvg::usvg::Tree::from_data(svg, &resvg::usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(&tree, resvg::tiny_skia::Transform::default(), &mut pixmap.as_mut());
    // Opaque everywhere (a white ground), so premultiplied is plain RGB.
    let rgb = pixmap.data().chunks(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    (size.width(), size.height(), rgb)
}

/// The boxes (x0, y0, x1, y1) the SVG's texts are laid out in, from their
/// `<text>` elements: `x` at the anchor, `y` at the top, `textLength` wide.
fn text_boxes(svg: &[u8]) -> Vec<(i64, i64, i64, i64)> {
    let doc = roxmltree::Document::parse(std::str::from_utf8(svg).unwrap()).unwrap();
    let num = |n: &roxmltree::Node, a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text") && n.attribute("textLength").is_some())
        .map(|t| {
            let (x, y, w, size) = (num(&t, "x"), num(&t, "y"), num(&t, "textLength"), num(&t, "font-size"));
            let left = match t.attribute("text-anchor") {
                Some("middle") => x - w / 2.0,
                Some("end") => x - w,
                _ => x,
            };
            (left as i64 - 1, y as i64 - 1, (left + w) as i64 + 2, (y + size * 1.3) as i64 + 2)
        })
        .collect()
}

/// How a chart's SVG differs from its PNG.
struct Diff {
    /// Pixels of the whole picture differing by 64 or more in a channel.
    far: usize,
    pixels: usize,
    /// For each text box: the PNG's inked pixels there (darker than mid
    /// grey), and the pixels differing by 64 or more.
    texts: Vec<(usize, usize)>,
}

impl Diff {
    fn text_ink(&self) -> usize {
        self.texts.iter().map(|t| t.0).sum()
    }
    fn text_far(&self) -> usize {
        self.texts.iter().map(|t| t.1).sum()
    }
}

fn diff(png: &[u8], svg: &[u8]) -> Diff {
    let (w, h, a) = decode_png(png);
    let (sw, sh, b) = rasterize(svg);
    assert_eq!((w, h), (sw, sh));
    let far_at = |i: usize| (0..3).any(|c| a[3 * i + c].abs_diff(b[3 * i + c]) >= 64);
    let far = (0..(w * h) as usize).filter(|&i| far_at(i)).count();
    let ink = |i: usize| (a[3 * i] as u32 + a[3 * i + 1] as u32 + a[3 * i + 2] as u32) < 3 * 128;
    let texts = text_boxes(svg)
        .into_iter()
        .map(|(x0, y0, x1, y1)| {
            let inside: Vec<usize> = (y0.max(0)..y1.min(h as i64))
                .flat_map(|y| (x0.max(0)..x1.min(w as i64)).map(move |x| (y * w as i64 + x) as usize))
                .collect();
            (inside.iter().filter(|&&i| ink(i)).count(), inside.iter().filter(|&&i| far_at(i)).count())
        })
        .collect();
    Diff { far, pixels: (w * h) as usize, texts }
}

#[test]
fn every_chart_of_the_committed_traces_looks_the_same_in_svg() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let mut checked = 0;
    for (name, charts) in [
        ("abba-deadlock", &[Chart::Timeline, Chart::Locks, Chart::WaitFor][..]),
        ("ttrpc-s1.0.2-c1.2.3-deadlock", &[Chart::Timeline, Chart::Locks, Chart::Pipes, Chart::WaitFor][..]),
    ] {
        let trace = visualizer::load(&traces.join(format!("{name}.json"))).unwrap();
        let model = visualizer::Model::new(&trace).unwrap();
        for &chart in charts {
            let opts = Options::default();
            let png = visualizer::render(&trace, chart, Format::Png, &opts).unwrap();
            let svg = visualizer::render(&trace, chart, Format::Svg, &opts).unwrap();
            let d = diff(&png, &svg);
            let what = format!("{name} {}", chart.name());
            // Letters: where the PNG inks text, the SVG inks the same
            // pixels (measured: at most 0.3% of them differ; letters one
            // pixel off differ in about all).
            assert!(d.text_ink() > 500, "{what}: {} inked text pixels", d.text_ink());
            assert!(
                d.text_far() * 50 <= d.text_ink(),
                "{what}: {} of {} inked text pixels differ",
                d.text_far(),
                d.text_ink()
            );
            // Lines and shapes: the two backends' edges differ by a pixel
            // here and there (measured: at most 0.5% of the picture).
            assert!(d.far * 100 <= d.pixels, "{what}: {} of {} pixels differ", d.far, d.pixels);
            // Text by text, with nothing else drawn (a line beside a label
            // is not the label's), on grey so that white letters show too:
            // a glyph missing or misplaced in one text is seen.
            let mut letters = visualizer::scene(&model, chart, &opts).unwrap();
            letters.items.retain(|i| matches!(i, Item::Text { .. }));
            letters.items.insert(
                0,
                Item::Rect { x0: 0, y0: 0, x1: letters.width as i32, y1: letters.height as i32, paint: GREY.into() },
            );
            let d = diff(&letters.png().unwrap(), &letters.svg().unwrap());
            let worst = d.texts.iter().map(|t| t.1).max().unwrap();
            // (Measured: 0 in every text.)
            assert!(worst <= 4, "{what}: a text with {worst} pixels differing");
            // One glyph left out of one text is seen.
            let svg = String::from_utf8(letters.svg().unwrap()).unwrap();
            let at = svg.find("<use ").unwrap();
            let one_less = svg[..at].to_string() + &svg[at + svg[at..].find("/>").unwrap() + 2..];
            let d = diff(&letters.png().unwrap(), one_less.as_bytes());
            assert!(d.texts.iter().any(|t| t.1 > 4), "{what}: a missing glyph not seen");
            checked += 1;
        }
    }
    assert_eq!(checked, 7);
}

#[test]
fn letters_a_pixel_off_are_seen() {
    // The comparison itself: the same chart with every text moved one
    // pixel right fails it.
    let trace = visualizer::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/abba-deadlock.json")).unwrap();
    let opts = Options::default();
    let png = visualizer::render(&trace, Chart::Locks, Format::Png, &opts).unwrap();
    let svg = String::from_utf8(visualizer::render(&trace, Chart::Locks, Format::Svg, &opts).unwrap()).unwrap();
    let moved = svg.replace(") scale(", ") translate(1 0) scale(");
    assert!(moved != svg);
    let d = diff(&png, moved.as_bytes());
    assert!(d.text_far() * 2 > d.text_ink(), "{} of {} inked text pixels differ", d.text_far(), d.text_ink());
}
