//! An SVG chart shows what its PNG shows, letters included, in any viewer:
//! each SVG is rasterized (resvg, built without text support, so it draws
//! the glyph outlines and nothing of the `<text>` elements) and compared
//! with the PNG pixel by pixel.

use std::path::Path;

use visualizer::{Chart, Format, Options};

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
    /// Within the text boxes: inked pixels of the PNG (darker than mid
    /// grey) and pixels differing by 64 or more.
    text_ink: usize,
    text_far: usize,
}

fn diff(png: &[u8], svg: &[u8]) -> Diff {
    let (w, h, a) = decode_png(png);
    let (sw, sh, b) = rasterize(svg);
    assert_eq!((w, h), (sw, sh));
    let far_at = |i: usize| (0..3).any(|c| a[3 * i + c].abs_diff(b[3 * i + c]) >= 64);
    let far = (0..(w * h) as usize).filter(|&i| far_at(i)).count();
    let mut inside = vec![false; (w * h) as usize];
    for (x0, y0, x1, y1) in text_boxes(svg) {
        for y in y0.max(0)..y1.min(h as i64) {
            for x in x0.max(0)..x1.min(w as i64) {
                inside[(y * w as i64 + x) as usize] = true;
            }
        }
    }
    let ink = |i: usize| (a[3 * i] as u32 + a[3 * i + 1] as u32 + a[3 * i + 2] as u32) < 3 * 128;
    let text_ink = (0..inside.len()).filter(|&i| inside[i] && ink(i)).count();
    let text_far = (0..inside.len()).filter(|&i| inside[i] && far_at(i)).count();
    Diff { far, pixels: (w * h) as usize, text_ink, text_far }
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
        for &chart in charts {
            let opts = Options::default();
            let png = visualizer::render(&trace, chart, Format::Png, &opts).unwrap();
            let svg = visualizer::render(&trace, chart, Format::Svg, &opts).unwrap();
            let d = diff(&png, &svg);
            let what = format!("{name} {}", chart.name());
            // Letters: where the PNG inks text, the SVG inks the same
            // pixels (measured: at most 0.3% of them differ; letters one
            // pixel off differ in about all).
            assert!(d.text_ink > 500, "{what}: {} inked text pixels", d.text_ink);
            assert!(d.text_far * 50 <= d.text_ink, "{what}: {} of {} inked text pixels differ", d.text_far, d.text_ink);
            // Lines and shapes: the two backends' edges differ by a pixel
            // here and there (measured: at most 0.5% of the picture).
            assert!(d.far * 100 <= d.pixels, "{what}: {} of {} pixels differ", d.far, d.pixels);
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
    assert!(d.text_far * 2 > d.text_ink, "{} of {} inked text pixels differ", d.text_far, d.text_ink);
}
