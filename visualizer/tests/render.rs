//! Charts of real traces: the committed one, traces the engine makes here,
//! a long one; PNGs decoded and checked, SVGs parsed, outputs compared.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use visualizer::{Chart, Format, Header, Model, Options, Trace, Window, XAxis};

fn committed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/abba-deadlock.json")
}

/// A committed trace, by its file name in `traces/`.
fn committed_trace(name: &str) -> Trace {
    visualizer::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces").join(name)).unwrap()
}

/// The recorded trace of a ttrpc run with these parameters and seed.
fn ttrpc_trace(params: &[(&str, &str)], seed: u64) -> Trace {
    let params: Vec<(String, String)> = params.iter().map(|&(k, v)| (k.into(), v.into())).collect();
    *sim::models::find("ttrpc").unwrap().configure(&params).unwrap().run(seed, true).trace.unwrap()
}

/// The colours a trace of more tasks than the palette has gives before they
/// repeat: the cycle's, and those that do not pass for one of them.
fn colours_before_repeats(m: &Model, cycle: &[u32]) -> usize {
    use visualizer::palette::{self, difference, DISTINCT};
    let cycle: Vec<palette::Rgb> = cycle.iter().map(|&t| m.task_colour(t)).collect();
    let clear = |c: palette::Rgb| cycle.contains(&c) || cycle.iter().all(|&k| difference(c, k) >= DISTINCT);
    (0..palette::TASK_COLOURS).map(palette::task).filter(|&c| clear(c)).count()
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// A fresh, empty directory for this test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("deadsim-vis-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Png {
    width: u32,
    height: u32,
    colours: usize,
    /// Share of pixels that are not white, in percent.
    inked: usize,
}

fn decode_png(bytes: &[u8]) -> Png {
    let dec = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = dec.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let px = &buf[..info.buffer_size()];
    // Every third pixel is plenty to count colours and ink (tests run unoptimised).
    let mut colours: Vec<u32> = Vec::with_capacity(px.len() / 9 + 1);
    let mut inked = 0usize;
    for p in px.chunks_exact(3).step_by(3) {
        let c = (p[0] as u32) << 16 | (p[1] as u32) << 8 | p[2] as u32;
        if c != 0xFF_FF_FF {
            inked += 1;
        }
        colours.push(c);
    }
    let n = colours.len();
    colours.sort_unstable();
    colours.dedup();
    Png { width: info.width, height: info.height, colours: colours.len(), inked: inked * 100 / n.max(1) }
}

/// Checks a PNG: the size asked for, not blank, several colours.
fn check_png(bytes: &[u8], width: u32) -> Png {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let p = decode_png(bytes);
    assert_eq!(p.width, width);
    assert!(p.height >= 150 && p.height < 20_000, "height {}", p.height);
    assert!(p.colours >= 8, "only {} colours", p.colours);
    assert!(p.inked >= 2, "only {}% of the pixels are inked", p.inked);
    p
}

/// Parses an SVG and returns its texts.
fn check_svg(bytes: &[u8], width: u32) -> Vec<String> {
    let text = std::str::from_utf8(bytes).expect("UTF-8");
    let doc = roxmltree::Document::parse(text).expect("well-formed SVG");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("width"), Some(width.to_string().as_str()));
    let rects = root.descendants().filter(|n| n.has_tag_name("rect")).count();
    assert!(rects >= 2, "{rects} rects");
    let texts: Vec<String> = root
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or("").trim().to_string())
        .collect();
    assert!(texts.len() >= 5);
    // Letters are drawn with glyph outlines, each defined once.
    let defined: BTreeSet<&str> =
        root.descendants().filter(|n| n.has_tag_name("path")).filter_map(|n| n.attribute("id")).collect();
    let uses: Vec<_> = root.descendants().filter(|n| n.has_tag_name("use")).collect();
    assert!(uses.len() >= 20 && defined.len() >= 10, "{} uses of {} glyphs", uses.len(), defined.len());
    for u in uses {
        let href = u.attribute(("http://www.w3.org/1999/xlink", "href")).expect("xlink:href");
        assert!(defined.contains(href.strip_prefix('#').unwrap()), "{href} not defined");
    }
    for t in root.descendants().filter(|n| n.has_tag_name("text")) {
        assert!(t.attribute("font-family").unwrap().starts_with("Noto Sans"));
        // Each text keeps its laid-out width in a fallback font.
        if !t.text().unwrap_or("").trim().is_empty() {
            let w: i32 = t.attribute("textLength").expect("textLength").parse().unwrap();
            assert!(w > 0 && t.attribute("lengthAdjust") == Some("spacingAndGlyphs"), "{t:?}");
        }
    }
    texts
}

fn render(trace: &Trace, chart: Chart, format: Format, opts: &Options) -> Vec<u8> {
    visualizer::render(trace, chart, format, opts).unwrap_or_else(|e| panic!("{}: {e}", chart.name()))
}

#[test]
fn committed_trace_every_chart() {
    let trace = visualizer::load(&committed()).unwrap();
    let opts = Options::default();
    for chart in Chart::ALL {
        let png = render(&trace, chart, Format::Png, &opts);
        check_png(&png, opts.width);
        let texts = check_svg(&render(&trace, chart, Format::Svg, &opts), opts.width);
        assert!(texts.iter().any(|t| t.contains("abba")), "{chart:?}: {texts:?}");
        match chart {
            Chart::Timeline => {
                for want in ["T1", "T2", "main", "holds A", "holds B", "deadlock, step 5", "running", "blocked"] {
                    assert!(texts.iter().any(|t| t == want), "timeline lacks {want:?}: {texts:?}");
                }
            }
            Chart::Locks => {
                for want in ["A", "B", "held by T1", "held by T2", "1 waiting"] {
                    assert!(texts.iter().any(|t| t == want), "locks lacks {want:?}: {texts:?}");
                }
            }
            Chart::Pipes => assert!(texts.iter().any(|t| t == "This trace has no pipes.")),
            Chart::WaitFor => {
                for want in ["T1", "T2", "A", "B", "waits for", "held by"] {
                    assert!(texts.iter().any(|t| t == want), "waitfor lacks {want:?}: {texts:?}");
                }
            }
        }
    }
}

#[test]
fn same_trace_same_bytes() {
    let trace = visualizer::load(&committed()).unwrap();
    // Read back from its JSON: a different allocation, the same trace.
    let again = Trace::from_json(&trace.to_json()).unwrap();
    let pipes = common::pipes_deadlock();
    for t in [&trace, &pipes] {
        for chart in Chart::ALL {
            for format in [Format::Png, Format::Svg] {
                let opts = Options::default();
                let a = render(t, chart, format, &opts);
                let b = render(t, chart, format, &opts);
                assert!(a == b, "{chart:?} {format:?} differs between two renders");
                if std::ptr::eq(t, &trace) {
                    assert!(a == render(&again, chart, format, &opts), "{chart:?} {format:?}");
                }
            }
        }
    }
    // And from another thread (font registration is per process, not per thread).
    let t2 = trace.clone();
    let other = std::thread::spawn(move || render(&t2, Chart::Timeline, Format::Png, &Options::default()));
    assert!(other.join().unwrap() == render(&trace, Chart::Timeline, Format::Png, &Options::default()));
}

/// The figures in `tests/golden` were made by a release build of the CLI:
///
/// ```text
/// cargo run --release -- render traces/abba-deadlock.json --chart all -o visualizer/tests/golden/
/// cargo run --release -- render traces/abba-deadlock.json --chart all -o visualizer/tests/golden/ --format svg
/// ```
///
/// This debug build must make the same bytes. There is no switch to rewrite them from here: a
/// golden made by this build could not show that the two builds agree.
/// The pipes chart has no golden of its own: the committed figures of the
/// ttrpc traces are made by the release CLI (`traces/generate.sh`, default
/// options), and this debug build must make the same bytes.
#[test]
fn debug_build_matches_the_committed_pipes_figures() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let mut checked = 0;
    let mut names: Vec<_> = std::fs::read_dir(&traces).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    for name in names.iter().filter_map(|n| n.to_str()?.strip_suffix(".json").map(str::to_string)) {
        let figure = traces.join("figures").join(format!("{name}-pipes.png"));
        if !figure.exists() {
            continue;
        }
        let trace = visualizer::load(&traces.join(format!("{name}.json"))).unwrap();
        let bytes = render(&trace, Chart::Pipes, Format::Png, &Options::default());
        assert!(bytes == std::fs::read(&figure).unwrap(), "{} differs from this build's output", figure.display());
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} pipes figures found");
}

#[test]
fn debug_build_matches_release_figures() {
    let trace = visualizer::load(&committed()).unwrap();
    let m = Model::new(&trace).unwrap();
    for chart in [Chart::Timeline, Chart::Locks, Chart::WaitFor] {
        for format in [Format::Png, Format::Svg] {
            let bytes = visualizer::render_model(&m, chart, format, &Options::default()).unwrap();
            let path = golden_dir().join(format!("abba-deadlock-{}.{}", chart.name(), format.ext()));
            let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(
                bytes == want,
                "{} differs from this build's output; if the change is meant, regenerate (see this test's doc)",
                path.display()
            );
        }
    }
}

#[test]
fn engine_traces_through_files() {
    let dir = scratch("engine");
    let mut cases: Vec<(String, Trace)> = Vec::new();
    for (model, params, seeds) in [
        ("abba", vec![], 0..4u64),
        ("abba", vec![("fixed".to_string(), "true".to_string())], 0..1),
        ("philosophers", vec![], 0..2),
        ("philosophers", vec![("ordered".to_string(), "true".to_string())], 0..1),
    ] {
        let cfg = sim::models::find(model).unwrap().configure(&params).unwrap();
        for seed in seeds {
            let run = cfg.run(seed, true);
            let path = dir.join(format!("{model}-{}-{seed}.json", params.len()));
            run.trace.unwrap().write_file(&path).unwrap();
            cases.push((path.display().to_string(), visualizer::load(&path).unwrap()));
        }
    }
    for (name, trace) in &cases {
        let m = Model::new(trace).unwrap();
        for chart in Chart::ALL {
            for (format, x) in [(Format::Png, XAxis::Time), (Format::Svg, XAxis::Steps)] {
                let opts = Options { x, ..Options::default() };
                let bytes =
                    visualizer::render_model(&m, chart, format, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
                match format {
                    Format::Png => {
                        check_png(&bytes, opts.width);
                    }
                    Format::Svg => {
                        let texts = check_svg(&bytes, opts.width);
                        if chart == Chart::Timeline {
                            assert!(texts.iter().any(|t| t == "scheduler step"), "{name}");
                        }
                    }
                }
                // Whole files, through the atomic writer.
                let out = dir.join(format!("out.{}", format.ext()));
                visualizer::write_file(&out, &bytes).unwrap();
                assert_eq!(std::fs::read(&out).unwrap(), bytes);
            }
        }
        // Deadlocked runs have a cycle in their wait-for graph; the others say so in words.
        let g = visualizer::waitfor::Graph::new(&m);
        assert_eq!(g.edges.iter().any(|e| e.cycle), trace.meta.verdict == "deadlock", "{name}");
    }
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().contains(".tmp")), "temporary files left: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_select_still_blocked_at_the_end_is_drawn_with_its_cases() {
    // ttrpc v1.2.4 completes with the server loop parked in its select.
    let params = [("server".to_string(), "v1.2.4".to_string()), ("client".to_string(), "v1.2.4".to_string())];
    let run = sim::models::find("ttrpc").unwrap().configure(&params).unwrap().run(0, true);
    let trace = run.trace.unwrap();
    assert_eq!(trace.meta.verdict, "no-deadlock");
    let m = Model::new(&trace).unwrap();
    let g = visualizer::waitfor::Graph::new(&m);
    let server = g.nodes.iter().position(|n| n.label == "serverConn.run").expect("the parked server is drawn");
    let waits: Vec<&str> = g.edges.iter().filter(|e| e.from == server).map(|e| g.nodes[e.to].label.as_str()).collect();
    // The model's serverConn.run parks in its select at server.go:508, on
    // `responses` and then `recvErr`: the node names both cases, in that order.
    assert_eq!(waits, vec!["recv responses | recv recvErr"]);
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &Options::default()), Options::default().width);
    assert!(texts.iter().any(|t| t.starts_with("recv responses")), "{texts:?}");
}

#[test]
fn tasks_that_share_a_name_are_drawn_apart() {
    // abba's T2 renamed T1: a pool of two workers of one name.
    let mut trace = committed_trace("abba-deadlock.json");
    trace.tasks[2].name = "T1".into();
    let d = trace.deadlock.as_mut().unwrap();
    d.cycle[1].name = "T1".into();
    d.cycle[0].released_by = vec!["T1".into()];
    assert_eq!((d.cycle[0].released_by_ids.clone(), d.cycle[1].released_by_ids.clone()), (vec![2], vec![1]));
    let graph = |trace: &Trace| {
        let g = visualizer::waitfor::Graph::new(&Model::new(trace).unwrap());
        let edges: Vec<(String, String, bool)> =
            g.edges.iter().map(|e| (g.nodes[e.from].label.clone(), g.nodes[e.to].label.clone(), e.cycle)).collect();
        edges
    };
    let cycle = |edges: &[(&str, &str)]| -> Vec<(String, String, bool)> {
        edges.iter().map(|&(a, b)| (a.to_string(), b.to_string(), true)).collect()
    };
    // Only the cycle: each worker waits for the lock the other holds. (By
    // name alone, B was also drawn held by the first T1.)
    assert_eq!(
        graph(&trace),
        cycle(&[("T1 (task 1)", "B"), ("B", "T1 (task 2)"), ("T1 (task 2)", "A"), ("A", "T1 (task 1)")])
    );
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), Options::default().width);
    assert!(texts.iter().any(|t| t == "T1 (task 1)") && texts.iter().any(|t| t == "T1 (task 2)"), "{texts:?}");
    // Perfetto's lanes are named alike, and `--tasks` takes the name as drawn.
    let json = visualizer::perfetto::export(&trace).unwrap();
    assert!(json.contains(r#""name":"T1 (task 2)""#) && json.contains(r#""name":"T1 (task 2) · locks""#), "{json}");
    assert_eq!(visualizer::select_tasks(&trace, &["T1 (task 2)".to_string()]).unwrap(), vec![2]);
    assert_eq!(visualizer::select_tasks(&trace, &["T1".to_string()]).unwrap(), vec![1, 2]);
    // A trace from before the ids were kept is drawn by name, as it was.
    for b in &mut trace.deadlock.as_mut().unwrap().cycle {
        b.released_by_ids.clear();
    }
    assert_eq!(graph(&trace).len(), 5);
}

#[test]
fn a_read_hold_at_the_end_is_drawn_as_a_read_hold_in_the_final_column() {
    // reader holds `cache` for reading when the run deadlocks (a second
    // read lock behind a waiting writer). The plot outlines a read hold;
    // the final column filled it, as a write hold. Both now name the
    // holder in ink on a pale fill.
    let run = (0..100)
        .map(|seed| {
            sim::Sim::new(seed).record(true).run(|| async {
                let rw = sim::sync::RwMutex::new("cache");
                sim::spawn("reader", async move {
                    let outer = rw.rlock().await;
                    let inner = rw.rlock().await;
                    inner.runlock().await;
                    outer.runlock().await;
                });
                sim::spawn("writer", async move {
                    let w = rw.lock().await;
                    w.unlock().await;
                });
            })
        })
        .find(|r| r.outcome.is_failure())
        .expect("a deadlock");
    let trace = *run.trace.unwrap();
    let opts = Options { window: Window::All, ..Options::default() };
    let svg = render(&trace, Chart::Locks, Format::Svg, &opts);
    let doc = roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap()).unwrap();
    let fills: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text") && n.text().unwrap_or("").trim() == "reader")
        .map(|n| n.attribute("fill").unwrap())
        .collect();
    assert!(fills.len() >= 2, "the plot and the final column name the reader: {fills:?}");
    assert!(fills.iter().all(|&f| f == fills[0] && f != "#FFFFFF"), "{fills:?}");
}

#[test]
fn a_task_behind_the_cycle_is_not_listed_among_its_own_notifiers() {
    // A nested monitor lockout: A waits on `inner` holding `outer`, B waits
    // to enter `outer`: the cycle. C waits on `inner` too, behind it. Its
    // row lists who could notify it: A and B (it had listed itself, from
    // the monitor's edges).
    let run = sim::Sim::new(0).record(true).run(|| async {
        let (outer, inner) = (sim::sync::Monitor::new("outer"), sim::sync::Monitor::new("inner"));
        sim::spawn("A", async move {
            let o = outer.enter().await;
            let i = inner.enter().await;
            i.wait().await;
            i.exit().await;
            o.exit().await;
        });
        sim::spawn("B", async move {
            sim::time::sleep(1_000).await;
            let _o = outer.enter().await;
        });
        sim::spawn("C", async move {
            let i = inner.enter().await;
            i.wait().await;
            i.exit().await;
        });
    });
    let trace = *run.trace.unwrap();
    let d = trace.deadlock.as_ref().expect("a deadlock");
    assert_eq!(d.cycle.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(), vec!["A", "B"]);
    assert_eq!(d.behind.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(), vec!["C"]);
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &Options::default()), Options::default().width);
    let at = texts.iter().rposition(|t| t == "notified by:").expect("a row lists its notifiers");
    let mut listed: Vec<&str> = texts[at + 1..at + 3].iter().map(String::as_str).collect();
    listed.sort();
    assert_eq!(listed, ["A", "B"], "{texts:?}");
    assert!(!texts[at + 1..].iter().any(|t| t == "C"), "{texts:?}");
}

#[test]
fn waiters_with_nobody_left_to_notify_are_drawn_without_a_cycle() {
    // Three tasks in wait() on one monitor, nobody left to notify: no cycle
    // (waiters on one another's notify explain nothing), each one edge to
    // the monitor, none back, and the caption says it was never notified.
    let run = sim::Sim::new(0).record(true).run(|| async {
        let m = sim::sync::Monitor::new("lock");
        for name in ["W1", "W2", "W3"] {
            sim::spawn(name, async move {
                let g = m.enter().await;
                g.wait().await;
                g.exit().await;
            });
        }
    });
    let trace = *run.trace.unwrap();
    let d = trace.deadlock.as_ref().expect("a deadlock");
    assert!(d.cycle.is_empty());
    assert_eq!(d.behind.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(), vec!["W1", "W2", "W3"]);
    let g = visualizer::waitfor::Graph::new(&Model::new(&trace).unwrap());
    let edges: Vec<(&str, &str, &str)> =
        g.edges.iter().map(|e| (g.nodes[e.from].label.as_str(), e.label, g.nodes[e.to].label.as_str())).collect();
    assert_eq!(edges, ["W1", "W2", "W3"].map(|w| (w, "waits for a notify", "lock")), "{g:?}");
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &Options::default()), Options::default().width);
    let caption = "At the deadlock, step 10 (1 µs): no cycle, 3 tasks blocked, none able to run (global deadlock). Monitor \"lock\" was never notified.";
    assert!(texts.iter().any(|t| t == caption), "{texts:?}");
}

#[test]
fn a_note_of_other_releasers_keeps_clear_of_the_edges_at_every_width() {
    // ttrpc's receiver.run is also released by main: the note under its
    // select sat on the cycle's edge below it in a picture 800 px wide.
    fn crosses((ax, ay): (f64, f64), (bx, by): (f64, f64), r: [f64; 4]) -> bool {
        // Sampled finely enough for a text's height.
        (0..=400).any(|i| {
            let t = i as f64 / 400.0;
            let (x, y) = (ax + (bx - ax) * t, ay + (by - ay) * t);
            x >= r[0] && x <= r[2] && y >= r[1] && y <= r[3]
        })
    }
    let trace = committed_trace("ttrpc-s1.1.0-c1.0.2-deadlock.json");
    for width in [700, 800, 900, 1000, 1200, 1600] {
        let opts = Options { width, ..Options::default() };
        let svg = render(&trace, Chart::WaitFor, Format::Svg, &opts);
        let doc = roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap()).unwrap();
        let num = |n: &roxmltree::Node, a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
        let note = doc
            .descendants()
            .find(|n| n.has_tag_name("text") && n.text().unwrap_or("").trim().starts_with("also released by"))
            .unwrap_or_else(|| panic!("width {width}: no note"));
        let (x, y, len, size) = (num(&note, "x"), num(&note, "y"), num(&note, "textLength"), num(&note, "font-size"));
        let x0 = match note.attribute("text-anchor") {
            Some("middle") => x - len / 2.0,
            Some("end") => x - len,
            _ => x,
        };
        let r = [x0, y, x0 + len, y + size];
        for line in doc.descendants().filter(|n| n.has_tag_name("polyline")) {
            let pts: Vec<(f64, f64)> = line
                .attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|p| p.split_once(',').map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap())).unwrap())
                .collect();
            for w in pts.windows(2) {
                assert!(!crosses(w[0], w[1], r), "width {width}: the note {r:?} is on the edge {w:?}");
            }
        }
    }
}

/// In a narrow picture a cycle snakes down one column: a grey edge between
/// nodes that are not neighbours (ttrpc's "released by" from
/// `client->server` up to `serverConn.run`) ran straight up it, under the
/// cycle's edges and nodes, its label alone by another edge. It goes round
/// the right, clear of every node, its label beside it.
#[test]
fn a_grey_edge_of_a_snaking_cycle_goes_round_its_nodes_labelled() {
    let traces = [
        "ttrpc-s1.0.2-c1.2.3-deadlock.json",
        "ttrpc-s1.0.2-c1.0.2-deadlock.json",
        "ttrpc-s1.1.0-c1.0.2-deadlock.json",
        "ttrpc-s1.1.0-c1.2.3-deadlock.json",
        "ttrpc-s1.0.2-c1.2.3-deadlock-shrunk.json",
    ];
    let mut edges = 0;
    for name in traces {
        let trace = committed_trace(name);
        let opts = Options { width: 600, ..Options::default() };
        let svg = render(&trace, Chart::WaitFor, Format::Svg, &opts);
        let doc = roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap()).unwrap();
        let num = |n: &roxmltree::Node, a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
        let points = |n: &roxmltree::Node| -> Vec<(f64, f64)> {
            let pts = n.attribute("points").unwrap().split_whitespace();
            pts.map(|p| p.split_once(',').map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap())).unwrap()).collect()
        };
        let texts = || doc.descendants().filter(|n| n.has_tag_name("text"));
        // The ring is drawn above the list of the tasks blocked behind it.
        let heading = texts().find(|n| n.text().unwrap_or("").trim() == "Blocked behind the cycle").unwrap();
        let ring_bottom = num(&heading, "y") - 30.0;
        // Node boxes: a task's white box, a resource's hexagon (its extent).
        let mut boxes: Vec<[f64; 4]> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#FFFFFF") && num(n, "x") > 0.0)
            .map(|n| [num(&n, "x"), num(&n, "y"), num(&n, "x") + num(&n, "width"), num(&n, "y") + num(&n, "height")])
            .collect();
        for n in doc.descendants().filter(|n| n.has_tag_name("polygon") && n.attribute("fill") == Some("#F2F2F2")) {
            let p = points(&n);
            let (xs, ys) = (p.iter().map(|p| p.0), p.iter().map(|p| p.1));
            boxes.push([
                xs.clone().fold(f64::MAX, f64::min),
                ys.clone().fold(f64::MAX, f64::min),
                xs.fold(0.0, f64::max),
                ys.fold(0.0, f64::max),
            ]);
        }
        boxes.retain(|b| b[3] < ring_bottom);
        let inside = |(x, y): (f64, f64), b: &[f64; 4], pad: f64| {
            x > b[0] - pad && x < b[2] + pad && y > b[1] - pad && y < b[3] + pad
        };
        let samples = |(a, b): ((f64, f64), (f64, f64))| {
            (0..=200).map(move |i| {
                let t = i as f64 / 200.0;
                (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
            })
        };
        let grey: Vec<(f64, f64)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#707070"))
            .map(|n| points(&n))
            .filter(|p| p.iter().all(|q| q.1 < ring_bottom))
            .flat_map(|p| p.windows(2).flat_map(|w| samples((w[0], w[1]))).collect::<Vec<_>>())
            .collect();
        let mut labels = 0;
        for t in texts().filter(|n| {
            n.attribute("fill") == Some("#707070")
                && matches!(n.text().map(str::trim), Some("released by" | "closed by"))
        }) {
            let (x, y, len, size) = (num(&t, "x"), num(&t, "y"), num(&t, "textLength"), num(&t, "font-size"));
            if y >= ring_bottom {
                continue;
            }
            let x0 = match t.attribute("text-anchor") {
                Some("middle") => x - len / 2.0,
                Some("end") => x - len,
                _ => x,
            };
            // (`y` is the text's top: the SVG moves it down by `dy`.)
            let label = [x0, y, x0 + len, y + size];
            assert!(
                !boxes.iter().any(|b| b[0] < label[2] && b[2] > label[0] && b[1] < label[3] && b[3] > label[1]),
                "{name}: the label {label:?} is on a node"
            );
            assert!(grey.iter().any(|&p| inside(p, &label, 16.0)), "{name}: the label {label:?} is away from its edge");
            labels += 1;
        }
        for &p in &grey {
            assert!(!boxes.iter().any(|b| inside(p, b, -1.0)), "{name}: a grey edge runs through a node at {p:?}");
        }
        assert!(!grey.is_empty() && labels > 0, "{name}: no grey edge in the ring");
        edges += labels;
    }
    assert!(edges >= 6, "{edges}");
}

/// The centre of each node's name in the wait-for chart of `trace`, by the
/// node's label (its first line, for a select that wraps).
fn waitfor_name_positions(trace: &Trace) -> impl Fn(&str) -> (f64, f64) {
    let svg = render(trace, Chart::WaitFor, Format::Svg, &Options::default());
    let doc = roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap()).unwrap();
    let texts: Vec<(String, f64, f64)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            let num = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
            (n.text().unwrap_or("").trim().to_string(), num("x"), num("y"))
        })
        .collect();
    move |label: &str| {
        let first = label.split(" | ").next().unwrap();
        let found = texts.iter().find(|(t, _, _)| t.starts_with(first));
        found.map(|&(_, x, y)| (x, y)).unwrap_or_else(|| panic!("{label} is not drawn"))
    }
}

#[test]
fn without_a_cycle_every_wait_points_one_way_down_or_across_the_picture() {
    let params = |callers: &str| {
        [("server", "v1.2.4"), ("client", "v1.2.4"), ("callers", callers)].map(|(k, v)| (k.to_string(), v.to_string()))
    };
    // ttrpc v1.2.4 stopped at step 60: main joins caller-0, four callers wait
    // for sendLock, which caller-2 holds while it writes to the full pipe.
    // Five layers do not fit across: they go down the picture, in rows.
    let model = sim::models::find("ttrpc").unwrap().configure(&params("6")).unwrap();
    let trace = model.run_with(sim::Sim::new(0).record(true).max_steps(60)).trace.unwrap();
    assert_eq!(trace.meta.verdict, "step-limit");
    let g = visualizer::waitfor::Graph::new(&Model::new(&trace).unwrap());
    assert!(g.ring.is_empty() && g.edges.len() >= 8, "{g:?}");
    let at = waitfor_name_positions(&trace);
    for e in &g.edges {
        let (from, to) = (&g.nodes[e.from].label, &g.nodes[e.to].label);
        assert!(at(to).1 > at(from).1, "{from} {} {to}, drawn above it", e.label);
    }
    let chain = ["main", "caller-0", "sendLock", "caller-2", "client->server"];
    assert!(chain.windows(2).all(|w| at(w[0]).1 < at(w[1]).1), "{chain:?}");
    // With 12 callers at step 150, four layers fit across: columns from the
    // left, what waits for sendLock stacked in one: caller-0 (which main
    // joins) and one box for the callers that wait for it at one frame.
    let model = sim::models::find("ttrpc").unwrap().configure(&params("12")).unwrap();
    let trace = model.run_with(sim::Sim::new(0).record(true).max_steps(150)).trace.unwrap();
    let g = visualizer::waitfor::Graph::new(&Model::new(&trace).unwrap());
    let at = waitfor_name_positions(&trace);
    let lock = g.nodes.iter().position(|n| n.label == "sendLock").unwrap();
    let queued: Vec<usize> = g.edges.iter().filter(|e| e.to == lock).map(|e| e.from).collect();
    assert!(queued.len() >= 2, "{g:?}");
    let grouped: usize = queued
        .iter()
        .map(|&q| match &g.nodes[q].kind {
            visualizer::waitfor::NodeKind::Group(ids) => ids.len(),
            _ => 0,
        })
        .sum();
    assert!(grouped >= 4, "{g:?}");
    assert!(queued.iter().all(|&q| at(&g.nodes[q].label).0 == at(&g.nodes[queued[0]].label).0), "one column");
    for e in &g.edges {
        let (from, to) = (&g.nodes[e.from].label, &g.nodes[e.to].label);
        assert!(at(to).0 > at(from).0, "{from} {} {to}, drawn left of it", e.label);
    }
}

#[test]
fn pipes_locks_monitors_channels() {
    let trace = common::pipes_deadlock();
    assert_eq!(trace.meta.verdict, "deadlock");
    let opts = Options::default();
    let texts = check_svg(&render(&trace, Chart::Pipes, Format::Svg, &opts), opts.width);
    for want in ["client->server", "server->client", "buffer full", "capacity 256 B", "writes", "reads"] {
        assert!(texts.iter().any(|t| t == want), "pipes lacks {want:?}: {texts:?}");
    }
    let texts = check_svg(&render(&trace, Chart::Locks, Format::Svg, &opts), opts.width);
    for want in ["sendLock", "streamLock", "RWMutex", "bufferQueue", "monitor"] {
        assert!(texts.iter().any(|t| t == want), "locks lacks {want:?}: {texts:?}");
    }
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), opts.width);
    for want in ["pipe write", "pipe read", "channel send", "channel receive", "background task", "reads streamLock"] {
        assert!(texts.iter().any(|t| t == want), "timeline lacks {want:?}: {texts:?}");
    }
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &opts), opts.width);
    let d = trace.deadlock.as_ref().unwrap();
    assert!(!d.behind.is_empty(), "the test model leaves a task behind the cycle");
    let behind: Vec<&str> = d.behind.iter().map(|b| b.name.as_str()).collect();
    for want in ["Blocked behind the cycle"].into_iter().chain(behind) {
        assert!(texts.iter().any(|t| t == want), "waitfor lacks {want:?}: {texts:?}");
    }
    for chart in Chart::ALL {
        check_png(&render(&trace, chart, Format::Png, &opts), opts.width);
    }
}

#[test]
fn a_window_draws_the_events_of_its_own_steps_only() {
    // ttrpc v1.0.2 x v1.2.3, seed 7: caller-3 writes to the pipe in step
    // 226, the step before the deadlock. A window of the last step alone
    // (227) must not show that write, nor name it in the legend.
    let trace = visualizer::load(&committed().with_file_name("ttrpc-s1.0.2-c1.2.3-deadlock.json")).unwrap();
    let m = Model::new(&trace).unwrap();
    let end = trace.meta.steps;
    let writers = |step: u64| -> std::collections::BTreeSet<u32> {
        trace
            .events
            .iter()
            .filter(|e| e.step == step && e.kind == sim::trace::EventKind::Write)
            .map(|e| e.task)
            .collect()
    };
    assert!(!writers(end - 1).is_empty(), "the test needs a write in step {}", end - 1);
    let ups = |window: Window| {
        let opts = Options { window, ..Options::default() };
        let scene = visualizer::scene(&m, Chart::Timeline, &opts).unwrap();
        // A ▲ is (x, top), (x - 5, mid), (x + 5, mid) (arrow heads are other triangles).
        let polygons = scene.items.iter().filter(|i| {
            matches!(i, visualizer::Item::Polygon { points: p, .. } if p.len() == 3
                && p[0].1 < p[1].1 && p[1].1 == p[2].1 && p[1].0 == p[0].0 - 5 && p[2].0 == p[0].0 + 5)
        });
        polygons.count()
    };
    // One ▲ per lane that writes in the window, and one in the legend.
    let want = |n: usize| n + usize::from(n > 0);
    assert_eq!(ups(Window::Last(1)), want(writers(end).len()));
    assert_eq!(ups(Window::Last(2)), want(writers(end).union(&writers(end - 1)).count()));
}

#[test]
fn compact_lanes_say_reads_for_a_read_lock() {
    // ttrpc v1.2.3 x v1.2.3, 100 calls, seed 0: 17,127 steps, lanes compact
    // in the auto window. Client.run only ever read-locks streamLock.
    let params =
        [("server", "v1.2.3"), ("client", "v1.2.3"), ("calls", "100")].map(|(k, v)| (k.to_string(), v.to_string()));
    let trace = sim::models::find("ttrpc").unwrap().configure(&params).unwrap().run(0, true).trace.unwrap();
    let m = Model::new(&trace).unwrap();
    let scene = visualizer::scene(&m, Chart::Timeline, &Options::default()).unwrap();
    let texts = scene_texts(&scene);
    assert!(texts.contains(&"reads streamLock"), "{texts:?}");
    assert!(texts.contains(&"holds streamLock, sendLock"), "{texts:?}");
}

#[test]
fn the_locks_tail_names_every_final_holder_in_full() {
    // philosophers seed 0: each of the five forks is held at the deadlock,
    // by a philosopher whose name (13 letters) did not fit the fixed tail.
    let trace = visualizer::load(&committed().with_file_name("philosophers-deadlock.json")).unwrap();
    let texts = check_svg(&render(&trace, Chart::Locks, Format::Svg, &Options::default()), Options::WIDTH);
    for p in 0..5 {
        let name = format!("philosopher-{p}");
        let n = texts.iter().filter(|t| **t == name).count();
        assert!(n >= 2, "{name} drawn {n} times (in the plot and in the tail): {texts:?}");
    }
    assert!(!texts.iter().any(|t| t.starts_with("philoso") && t.ends_with('…')), "{texts:?}");
    // abba's locks have no part-time holds wider than a pixel or two: the
    // legend does not name them.
    let abba = visualizer::load(&committed()).unwrap();
    let texts = check_svg(&render(&abba, Chart::Locks, Format::Svg, &Options::default()), Options::WIDTH);
    assert!(!texts.iter().any(|t| t == "held part of the time"), "{texts:?}");
}

#[test]
fn the_pipes_line_never_turns_back_on_itself() {
    // ttrpc v1.0.2 x v1.0.2 with 6,000-byte pipes, seed 0: at step 166 a
    // write and a read in one column take client->server from 4,000 bytes
    // down to 1,904 and back. Drawn as a path that turns back on itself,
    // the PNG showed a gap and a stray dot where the SVG had the dip.
    let params = [("server", "v1.0.2"), ("client", "v1.0.2"), ("pipe-buffer", "6000")]
        .map(|(k, v)| (k.to_string(), v.to_string()));
    let trace = sim::models::find("ttrpc").unwrap().configure(&params).unwrap().run(0, true).trace.unwrap();
    assert_eq!(trace.meta.verdict, "deadlock");
    let m = Model::new(&trace).unwrap();
    let opts = Options { window: Window::Last(30), x: XAxis::Steps, ..Options::default() };
    let scene = visualizer::scene(&m, Chart::Pipes, &opts).unwrap();
    let mut paths = 0;
    for item in &scene.items {
        if let visualizer::Item::Path { points, .. } = item {
            paths += 1;
            for w in points.windows(3) {
                let turns = w[0].0 == w[1].0 && w[1].0 == w[2].0 && (w[1].1 - w[0].1) * (w[2].1 - w[1].1) < 0;
                assert!(!turns, "the path turns back at {w:?}");
            }
        }
    }
    assert!(paths >= 2, "one line per pipe");
    check_png(&visualizer::render_model(&m, Chart::Pipes, Format::Png, &opts).unwrap(), opts.width);
}

#[test]
fn windows_and_widths() {
    let trace = common::pipes_deadlock();
    let m = Model::new(&trace).unwrap();
    for window in [Window::All, Window::Last(10), Window::Steps(20, 40), Window::Time(1_000, 2_500)] {
        for chart in [Chart::Timeline, Chart::Locks, Chart::Pipes] {
            for width in [600, 1200, 2400] {
                let opts = Options { window, width, ..Options::default() };
                let png = visualizer::render_model(&m, chart, Format::Png, &opts).unwrap();
                check_png(&png, width);
            }
        }
    }
    // Step numbers as traces give them: step s runs from position s - 1 to s.
    let (a, b, note) = Window::Steps(2, 2).resolve(&m).unwrap();
    assert_eq!((a, b), (1, 2), "one step wide");
    assert!(note.starts_with("window step 2 of "), "{note}");
    let (a, b, note) = "steps:20..40".parse::<Window>().unwrap().resolve(&m).unwrap();
    assert_eq!((a, b), (19, 39), "steps 20 to 39");
    assert!(note.starts_with("window steps 20–39 of "), "{note}");
    // The trace's last instant is the end of its last step, as its first
    // instant is the start of its first (abba seed 0: 5 steps, 500 ns).
    let abba = visualizer::load(&committed()).unwrap();
    let am = Model::new(&abba).unwrap();
    let at = |w: &str| w.parse::<Window>().unwrap().resolve(&am).map(|(a, b, _)| (a, b)).map_err(|e| e.to_string());
    assert_eq!(at("time:500..=500"), Ok((4, 5)));
    assert_eq!(at("time:500..=500"), at("steps:5..=5"));
    assert_eq!(at("time:0..=0"), Ok((0, 1)));
    assert!(at("time:501..=600").unwrap_err().contains("outside the trace (0 to 500 ns)"));
    // A time window is drawn in whole steps, and its caption says so.
    let (a, b, note) = "time:150..250".parse::<Window>().unwrap().resolve(&am).unwrap();
    assert_eq!((a, b), (1, 3));
    assert!(note.starts_with("window time 150..250 ns: steps 2–3, 100..300 ns of 5 steps"), "{note}");
    let (_, _, note) = "time:100..300".parse::<Window>().unwrap().resolve(&am).unwrap();
    assert!(note.starts_with("window time 100..300 ns: steps 2–3 of 5 steps"), "{note}");
    let (a, b, note) = Window::Last(10).resolve(&m).unwrap();
    assert_eq!(b - a, 10);
    assert!(note.contains(&format!("steps {}–{b}", a + 1)), "ten steps named as ten: {note}");
    let outside = Options { window: Window::Steps(10_000, 20_000), ..Options::default() };
    let err = visualizer::render_model(&m, Chart::Timeline, Format::Png, &outside).unwrap_err();
    assert!(err.0.contains("outside the trace"), "{err}");
    let narrow = Options { width: 100, ..Options::default() };
    assert!(visualizer::render_model(&m, Chart::Timeline, Format::Png, &narrow).is_err());
}

#[test]
fn bad_inputs_name_the_file_and_leave_nothing() {
    let dir = scratch("bad");
    let good = std::fs::read_to_string(committed()).unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let mut empty: serde_json::Value = serde_json::from_str(&good).unwrap();
    empty["events"] = serde_json::json!([]);
    empty["schedule"] = serde_json::json!([]);
    empty["deadlock"] = serde_json::Value::Null;
    empty["meta"]["verdict"] = serde_json::json!("no-deadlock");
    empty["meta"]["steps"] = serde_json::json!(0);
    let mut short: serde_json::Value = serde_json::from_str(&good).unwrap();
    short["schedule"] = serde_json::json!([]);
    let cases = [
        (write("short.json", &short.to_string()), "schedule: 0 entries, but meta.steps is"),
        (dir.join("missing.json"), "cannot read"),
        (write("text.json", "this is not json"), "not JSON"),
        (write("other.json", "{\"format\":\"something-else\",\"version\":1}"), "not a deadsim trace"),
        (write("array.json", "[1, 2, 3]"), "not a deadsim trace"),
        (write("v2.json", &good.replace("\"version\":1", "\"version\":2")), "version 2 is not supported"),
        (write("empty.json", &empty.to_string()), "no events"),
    ];
    for (path, want) in &cases {
        let err = visualizer::load(path).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains(want), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
    }
    // An empty trace passed directly fails to render, and writes nothing.
    let empty: Trace = serde_json::from_value(empty).unwrap();
    let out = dir.join("empty.png");
    let err = visualizer::render_file(&empty, Chart::Timeline, Format::Png, &Options::default(), &out).unwrap_err();
    assert!(err.0.contains("no events"), "{err}");
    assert!(!out.exists());
    // A path that cannot be written: an error naming it, and no file.
    let trace = visualizer::load(&committed()).unwrap();
    let bad = dir.join("no-such-dir").join("x.png");
    let err = visualizer::render_file(&trace, Chart::Timeline, Format::Png, &Options::default(), &bad).unwrap_err();
    assert!(err.0.contains("x.png"), "{err}");
    assert!(!bad.exists());
    let left: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(left.iter().all(|n| n.ends_with(".json")), "left behind: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn perfetto_export() {
    for trace in [visualizer::load(&committed()).unwrap(), common::pipes_deadlock()] {
        let json = visualizer::perfetto::export(&trace).unwrap();
        assert_eq!(json, visualizer::perfetto::export(&trace).unwrap());
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let names: BTreeSet<&str> = ev
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        for t in &trace.tasks {
            assert!(names.contains(t.name.as_str()), "no lane for {}", t.name);
        }
        for e in ev.iter().filter(|e| e["ph"] == "X") {
            assert!(e["ts"].is_number() && e["dur"].as_f64().unwrap() >= 0.0, "{e}");
        }
        let holds = ev.iter().filter(|e| e["ph"] == "X" && e["cat"] == "lock").count();
        let waits = ev.iter().filter(|e| e["ph"] == "X" && e["cat"] == "wait").count();
        assert!(holds > 0 && waits > 0);
        // Every flow start has its end.
        let starts: BTreeSet<u64> = ev.iter().filter(|e| e["ph"] == "s").map(|e| e["id"].as_u64().unwrap()).collect();
        let ends: BTreeSet<u64> = ev.iter().filter(|e| e["ph"] == "f").map(|e| e["id"].as_u64().unwrap()).collect();
        assert_eq!(starts, ends);
        assert!(ev.iter().any(|e| e["ph"] == "i" && e["name"] == "deadlock"));
        if trace.meta.model == "abba" {
            // T2 waits for A from step 5 (500 ns), the step the deadlock
            // forms and the run ends: the wait, and the hold of A taken in
            // that step, last no time; B, taken at 400 ns, 100 ns. Each
            // open one has a tail past the end, a twentieth of the run
            // (25 ns), in its own lane.
            let slice = |name: &str| {
                let w = ev.iter().find(|e| e["name"] == name).unwrap_or_else(|| panic!("no {name}"));
                (w["ts"].as_f64().unwrap(), w["dur"].as_f64().unwrap(), w["tid"].as_u64().unwrap())
            };
            for (name, ts, dur) in [("wait A", 0.5, 0.0), ("hold A", 0.5, 0.0), ("hold B", 0.4, 0.1)] {
                let (t, d, lane) = slice(name);
                assert_eq!((t, d), (ts, dur), "{name}");
                let tail = if name.starts_with("wait") { "still blocked: " } else { "still held: " };
                assert_eq!(slice(&format!("{tail}{name}")), (0.5, 0.025, lane), "{name}");
            }
        } else {
            assert!(starts.len() >= 5);
            assert!(ev.iter().any(|e| e["ph"] == "C" && e["name"] == "pipe client->server"));
        }
    }
}

#[test]
fn long_trace_renders_bounded() {
    // A million events in release builds; fewer in debug builds, where this
    // crate is not optimised (the aggregation is the same).
    let events = if cfg!(debug_assertions) { 150_000 } else { 1_000_000 };
    let trace = common::trace_with_events(events);
    assert!(trace.events.len() >= events);
    let m = Model::new(&trace).unwrap();
    for window in [Window::All, Window::Auto] {
        let opts = Options { window, ..Options::default() };
        for chart in Chart::ALL {
            let png = visualizer::render_model(&m, chart, Format::Png, &opts).unwrap();
            let p = check_png(&png, opts.width);
            assert!(p.height < 2000, "{chart:?}: {} px high", p.height);
            assert!(png.len() < 400_000, "{chart:?}: PNG of {} bytes", png.len());
            let svg = visualizer::render_model(&m, chart, Format::Svg, &opts).unwrap();
            check_svg(&svg, opts.width);
            assert!(svg.len() < 1_500_000, "{chart:?}: SVG of {} bytes", svg.len());
        }
    }
    // The default window ends at the deadlock and shows its story.
    let (a, b, _) = Window::Auto.resolve(&m).unwrap();
    assert_eq!(b, m.deadlock.unwrap());
    assert!(b - a >= Window::AUTO_MIN && b - a <= Window::AUTO_LAST, "{a}..{b}");
}

#[test]
fn timeline_draws_only_the_tasks_alive_in_its_window() {
    // A ttrpc server runs a goroutine per request: hundreds of short tasks.
    let params: Vec<(String, String)> =
        [("server", "v1.2.4"), ("client", "v1.2.4"), ("calls", "20")].map(|(k, v)| (k.into(), v.into())).to_vec();
    let run = sim::models::find("ttrpc").unwrap().configure(&params).unwrap().run(0, true);
    let trace = run.trace.unwrap();
    let m = Model::new(&trace).unwrap();
    let names: BTreeSet<&str> = trace.tasks.iter().map(|t| t.name.as_str()).collect();
    assert!(names.len() > 100, "{} tasks", names.len());
    let drawn = |window| {
        let opts = Options { window, ..Options::default() };
        let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), opts.width);
        // Distinct names: a frame label can repeat a task's name.
        let lanes = texts.iter().filter(|t| names.contains(t.as_str())).collect::<BTreeSet<_>>().len();
        let note = texts.iter().find(|t| t.contains("tasks not drawn")).cloned();
        (lanes, note)
    };
    // The whole run: more tasks than lanes, so the foreground ones and the
    // long-lived background ones, not a lane per one-request goroutine.
    let (all, note) = drawn(Window::All);
    assert!(all < visualizer::timeline::MAX_LANES && all * 3 < names.len(), "{all} lanes of {}", names.len());
    let want = format!("{} of {} tasks not drawn: over 100 alive in the window", names.len() - all, names.len());
    assert!(note.as_deref().is_some_and(|n| n.starts_with(&want)), "{note:?}, want {want}");
    let opts = Options { window: Window::All, ..Options::default() };
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), opts.width);
    for t in trace.tasks.iter().filter(|t| !t.background) {
        assert!(texts.contains(&t.name), "foreground task {} has no lane", t.name);
    }
    // The lanes of the last 100 steps: the tasks spawned by then and not yet finished.
    let (a, b, _) = Window::Last(100).resolve(&m).unwrap();
    let alive = m
        .tasks
        .iter()
        .filter(|t| {
            t.spawn.is_some_and(|s| s <= b)
                && t.states.iter().rev().find(|s| s.0 <= a).is_none_or(|s| s.1 != visualizer::model::State::Finished)
        })
        .count();
    let (lanes, note) = drawn(Window::Last(100));
    assert!(lanes < 40 && lanes == alive, "{lanes} lanes, {alive} alive");
    let want = format!("{} of {} tasks not drawn", names.len() - lanes, names.len());
    assert!(note.as_deref().is_some_and(|n| n.starts_with(&want)), "{note:?}, want {want}");
}

#[test]
fn a_window_that_ends_before_the_deadlock_draws_no_cycle_and_says_where_it_is() {
    let trace = visualizer::load(&committed()).unwrap();
    let m = Model::new(&trace).unwrap();
    let d = m.deadlock.expect("the committed abba trace deadlocks");
    let opts = |window| Options { window, ..Options::default() };
    // Each chart's own legend entry for the cycle's tint.
    for (chart, tint) in [(Chart::Timeline, "task in the deadlock cycle"), (Chart::Locks, "lock in the deadlock cycle")]
    {
        let whole = check_svg(&render(&trace, chart, Format::Svg, &opts(Window::All)), 1200);
        let early = check_svg(&render(&trace, chart, Format::Svg, &opts(Window::Steps(0, d - 2))), 1200);
        assert!(whole.iter().any(|t| t == tint), "{chart:?}: {whole:?}");
        assert!(!whole.iter().any(|t| t.contains("after it")), "{chart:?}: {whole:?}");
        assert!(
            early.iter().any(|t| t.contains(&format!("the deadlock is at step {d}, after it"))),
            "{chart:?}: {early:?}"
        );
        assert!(!early.iter().any(|t| t == tint || t == "waits for (held by)"), "{chart:?}: {early:?}");
    }
}

/// As for a deadlock: a window that ends before the violated invariant (or
/// a panic) says where it is. It said only "window steps 335–390 of 680
/// steps".
#[test]
fn a_window_that_ends_before_the_failure_says_where_it_is() {
    let trace = committed_trace("flink-1.13.1-self-assign-clear-failure.json");
    let m = Model::new(&trace).unwrap();
    let f = m.failure.expect("the committed trace violates an invariant");
    assert_eq!(f.what, "invariant violated");
    let (_, _, note) = Window::Steps(0, f.pos - 2).resolve(&m).unwrap();
    assert!(note.ends_with(&format!("; the invariant fails at step {}, after it", f.pos)), "{note}");
    let (_, _, note) = Window::All.resolve(&m).unwrap();
    assert!(!note.contains("after it"), "{note}");
}

/// Every edge of a deadlock cycle carries its label ("waits for", "held
/// by", "released by"), even where the ring is squeezed into an ellipse and
/// an edge is too short to carry it along its side: the labels in the
/// cycle's colour are as many as the cycle's edges (two per task).
#[test]
fn every_cycle_edge_of_the_committed_wait_for_graphs_is_labelled() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let trace = visualizer::load(&path).unwrap();
        let m = Model::new(&trace).unwrap();
        let Some(cycle) = trace.deadlock.as_ref().map(|d| d.cycle.len()).filter(|&n| n > 0) else {
            continue;
        };
        let svg = render(&trace, Chart::WaitFor, Format::Svg, &Options::default());
        let text = String::from_utf8(svg).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let red = visualizer::palette::DEADLOCK.hex();
        let labels = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("fill").is_some_and(|f| f.eq_ignore_ascii_case(&red)))
            .filter(|n| matches!(n.text().map(str::trim), Some("waits for" | "held by" | "released by")))
            .count();
        assert!(m.deadlock.is_some(), "{}", path.display());
        assert_eq!(labels, 2 * cycle, "{}: {cycle} tasks in the cycle", path.display());
        checked += 1;
    }
    assert!(checked >= 6, "{checked} deadlock traces checked");
}

/// A lane with more locks than rows folds the rest into "N more locks", but
/// never a lock still held at the window's end: at a deadlock, the locks the
/// cycle is about keep their own named rows, in any window.
#[test]
fn locks_held_at_the_deadlock_keep_their_own_rows() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/flink-1.13.1-pipeline-deadlock.json");
    let trace = visualizer::load(&path).unwrap();
    for window in [Window::Last(50), Window::Last(100), Window::All] {
        let opts = Options { window, ..Options::default() };
        let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), 1200);
        let rows: Vec<&String> =
            texts.iter().filter(|t| t.starts_with("holds ") || t.ends_with(" more locks")).collect();
        // Each cycle task holds one of the two bufferQueue locks at the end.
        for held in ["holds channel-0.bufferQueue", "holds channel-1.bufferQueue"] {
            assert!(rows.iter().any(|t| *t == held), "{window:?}: no row {held:?} in {rows:?}");
        }
        assert!(rows.iter().any(|t| t.ends_with(" more locks")), "{window:?}: a lane folds some: {rows:?}");
    }
}

/// The dashed line at a deadlock (or a failure) hides nothing drawn: a
/// lock let go of just before it is drawn in the plot's last columns, and
/// the line, drawn on them, left of a short hold only what its dash gaps
/// showed; what the deadlock's own step did ends a pixel right of the plot
/// (a pipe chart's 2-px write tick from the last column, a frame's tick, a
/// blocked stretch begun then), and the line, a pixel right of the plot,
/// covered that pixel: of ttrpc's blocking write one pixel was left.
#[test]
fn the_deadlock_line_hides_nothing_drawn_at_or_before_its_step() {
    let traces = [
        "abba-deadlock.json",
        "philosophers-deadlock.json",
        "flink-1.13.1-minimal-deadlock.json",
        "flink-1.13.1-pipeline-deadlock.json",
        "flink-1.13.1-self-assign-clear-failure.json",
        "ttrpc-s1.0.2-c1.2.3-deadlock.json",
        "ttrpc-s1.0.2-c1.0.2-deadlock.json",
        "ttrpc-s1.0.2-c1.2.3-deadlock-shrunk.json",
    ];
    let (mut lines, mut beside) = (0, 0);
    for name in traces {
        let trace = committed_trace(name);
        let m = Model::new(&trace).unwrap();
        let charts = [Chart::Locks, Chart::Timeline, Chart::Pipes].into_iter().filter(|c| c.applies(&m));
        for (chart, width) in charts.flat_map(|c| [(c, 1200), (c, 600)]) {
            let opts = Options { width, ..Options::default() };
            let scene = visualizer::scene(&m, chart, &opts).unwrap();
            // The dashes: vertical strokes, 2 px wide, in the deadlock's red.
            let mut dashes: Vec<&Vec<(i32, i32)>> = scene
                .items
                .iter()
                .filter_map(|i| match i {
                    visualizer::Item::Path { points, paint, width: 2 }
                        if paint.rgb == visualizer::palette::DEADLOCK
                            && points.len() == 2
                            && points[0].0 == points[1].0 =>
                    {
                        Some(points)
                    }
                    _ => None,
                })
                .collect();
            // The line's, not the legend's swatch (drawn after it).
            let x = dashes[0][0].0;
            dashes.retain(|d| d[0].0 == x);
            let (top, bottom) = (dashes[0][0].1, dashes.iter().map(|d| d[1].1).max().unwrap());
            lines += 1;
            // A PNG draws a 2-px line at x on columns x - 1 to x + 1: no
            // shape of the plot may reach into them. (The lane tints, grid
            // lines and separators run under the line, across the picture.)
            let background = [visualizer::palette::GRID, visualizer::palette::CYCLE_TINT];
            let mut touching = 0;
            let hidden: Vec<&visualizer::Item> = scene
                .items
                .iter()
                .filter(|i| {
                    let (x0, x1, y0, y1) = match i {
                        visualizer::Item::Rect { x0, y0, x1, y1, paint } if !background.contains(&paint.rgb) => {
                            (*x0, *x1, *y0, *y1)
                        }
                        visualizer::Item::Polygon { points, .. } => {
                            let xs = points.iter().map(|p| p.0);
                            let ys = points.iter().map(|p| p.1);
                            (
                                xs.clone().min().unwrap(),
                                xs.max().unwrap() + 1,
                                ys.clone().min().unwrap(),
                                ys.max().unwrap(),
                            )
                        }
                        _ => return false,
                    };
                    if y0 < top || y1 > bottom {
                        return false;
                    }
                    // What ends just left of the line, at the plot's edge.
                    touching += usize::from(x1 == x - 2);
                    x0 < x + 2 && x1 > x - 1
                })
                .collect();
            assert!(hidden.is_empty(), "{name} {chart:?} at {width} px: under the line at x {x}: {hidden:?}");
            beside += touching;
        }
    }
    assert_eq!(lines, 36);
    // The shapes the line used to cover are there, beside it.
    assert!(beside > 0);
}

/// A run that ends in an invariant violation is marked as a deadlock is: a
/// dashed line at its step in each time chart, and the task that failed
/// tinted in the timeline, with legend entries for both.
#[test]
fn an_invariant_violation_is_marked_where_and_in_which_task() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/flink-1.13.1-self-assign-clear-failure.json");
    let trace = visualizer::load(&path).unwrap();
    let m = Model::new(&trace).unwrap();
    let f = m.failure.expect("the committed self-assign-clear trace violates an invariant");
    assert_eq!((f.what, m.deadlock), ("invariant violated", None));
    assert_eq!(m.task_name(f.task), "Join(xxxxxx) (34/256)#1");
    let mark = format!("invariant violated, step {}", f.pos);
    for chart in [Chart::Timeline, Chart::Locks] {
        let texts = check_svg(&render(&trace, chart, Format::Svg, &Options::default()), 1200);
        assert!(texts.contains(&mark), "{chart:?}: no {mark:?} in {texts:?}");
        assert!(texts.iter().any(|t| t == "invariant violated"), "{chart:?}: legend");
    }
    let svg = render(&trace, Chart::Timeline, Format::Svg, &Options::default());
    let texts = check_svg(&svg, 1200);
    assert!(texts.iter().any(|t| t == "task that violated the invariant"), "{texts:?}");
    // Its final column says so, in white on the failure's red, not "ready".
    let doc = roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap()).unwrap();
    let in_white = doc
        .descendants()
        .filter(|n| n.has_tag_name("text") && n.text().unwrap_or("").trim() == "invariant violated")
        .filter(|n| n.attribute("fill") == Some("#FFFFFF"))
        .count();
    assert_eq!(in_white, 1, "the failing task's final column");
    // A window before it shows neither.
    let early = Options { window: Window::Steps(1, f.pos - 10), ..Options::default() };
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &early), 1200);
    assert!(
        !texts
            .iter()
            .any(|t| t.starts_with("invariant violated,") || t == "invariant violated" || t.starts_with("task that")),
        "{texts:?}"
    );
}

/// Two tasks that each hold locks A and B, nested in opposite orders one
/// after the other (`ab` takes A and, inside it, B; `ba` B and then A), and
/// `idle` more tasks that only sleep, for a timeline of many lanes.
fn nested_both_ways(idle: usize) -> Trace {
    let run = sim::Sim::new(0).record(true).run(move || async move {
        let (a, b) = (sim::sync::Mutex::new("A"), sim::sync::Mutex::new("B"));
        let nest = |name: &'static str, first: sim::sync::Mutex, second: sim::sync::Mutex, start: u64| {
            sim::spawn(name, async move {
                if start > 0 {
                    sim::time::sleep(start).await;
                }
                let outer = first.lock().await;
                sim::time::sleep(100).await;
                let inner = second.lock().await;
                sim::time::sleep(100).await;
                inner.unlock().await;
                sim::time::sleep(100).await;
                outer.unlock().await;
            });
        };
        nest("ab", a, b, 0);
        nest("ba", b, a, 1_000);
        for i in 0..idle {
            sim::spawn(format!("idle-{i}"), async move { sim::time::sleep(2_000).await });
        }
    });
    *run.trace.unwrap()
}

/// A task's lock rows under its bar come in one order in every lane (the
/// order the trace lists the locks in), and the one line of a compact
/// lane names them in that order: in order of first taking, the rows of a
/// lane that took B first were the other way round, under one label.
#[test]
fn lock_rows_are_in_one_order_in_every_lane_and_named_in_it() {
    // Roomy lanes: a label per row, in drawing order, two rows a lane.
    let trace = nested_both_ways(0);
    let m = Model::new(&trace).unwrap();
    let scene = visualizer::scene(&m, Chart::Timeline, &Options::default()).unwrap();
    let rows: Vec<&str> = scene_texts(&scene).into_iter().filter(|t| t.starts_with("holds ")).collect();
    assert_eq!(rows, ["holds A", "holds B", "holds A", "holds B"]);
    // Compact lanes (over 24): one line a lane, and rows too thin for words.
    let trace = nested_both_ways(24);
    let m = Model::new(&trace).unwrap();
    let scene = visualizer::scene(&m, Chart::Timeline, &Options::default()).unwrap();
    let texts = scene_texts(&scene);
    assert_eq!(texts.iter().filter(|t| t.starts_with("holds ")).collect::<Vec<_>>(), [&"holds A, B"; 2]);
    assert!(texts.contains(&"lock held (task's colour; rows top to bottom as named)"), "{texts:?}");
    // Each task's outer lock is held longest: its widest bar. `ab`'s is A,
    // on the top row; `ba`'s is B, on the bottom one.
    for (task, outer_on_top) in [("ab", true), ("ba", false)] {
        let t = trace.tasks.iter().position(|x| x.name == task).unwrap() as u32;
        let colour = m.task_colour(t);
        let bars: Vec<(i32, i32, i32)> = scene
            .items
            .iter()
            .filter_map(|i| match i {
                visualizer::Item::Rect { x0, y0, x1, y1, paint } if paint.rgb == colour && y1 - y0 <= 8 => {
                    Some((x1 - x0, *y0, *x0))
                }
                _ => None,
            })
            .collect();
        let rows: BTreeSet<i32> = bars.iter().map(|b| b.1).collect();
        assert_eq!(rows.len(), 2, "{task}: {bars:?}");
        let widest = bars.iter().max().unwrap();
        let top = *rows.iter().next().unwrap();
        assert_eq!(widest.1 == top, outer_on_top, "{task}: widest bar {widest:?}, rows {rows:?}");
    }
}

#[test]
fn a_locks_window_where_nothing_happens_says_so() {
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let note = "no lock is held or waited for in this window";
    let svg = |window: Window| {
        let opts = Options { window, x: XAxis::Steps, ..Options::default() };
        String::from_utf8(render(&trace, Chart::Locks, Format::Svg, &opts)).unwrap()
    };
    assert!(svg(Window::Steps(7, 7)).contains(note), "step 7 takes no lock");
    assert!(!svg(Window::All).contains(note), "the whole run does");
}

#[test]
fn a_locks_legend_lists_only_what_the_chart_draws() {
    let waiting = "tasks waiting to acquire";
    let texts = |trace: &Trace, window| {
        let opts = Options { window, x: XAxis::Steps, ..Options::default() };
        check_svg(&render(trace, Chart::Locks, Format::Svg, &opts), opts.width)
    };
    // ttrpc v1.2.3 at step 7: no lock held or waited for, so no shade of
    // waiting either (the legend still explained one).
    let ttrpc = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let idle = texts(&ttrpc, Window::Steps(7, 7));
    assert!(idle.iter().any(|t| t == "no lock is held or waited for in this window"), "{idle:?}");
    assert!(!idle.iter().any(|t| t == waiting || t.starts_with("held by")), "{idle:?}");
    // Up to step 11: caller-0 holds a lock, nobody waits for one yet.
    let held = texts(&ttrpc, Window::Steps(0, 11));
    assert!(held.iter().any(|t| t == "held by caller-0"), "{held:?}");
    assert!(!held.iter().any(|t| t == waiting), "{held:?}");
    // Two steps more, caller-5 waits.
    let waited = texts(&ttrpc, Window::Steps(0, 13));
    assert!(waited.iter().any(|t| t == "1 waiting") && waited.iter().any(|t| t == waiting), "{waited:?}");
}

/// A locks window with nothing held says so once, in the middle of the plot:
/// written in its first lane, the note read as that lock's alone, and the
/// lanes under it as missing data.
#[test]
fn a_locks_window_where_nothing_happens_says_so_once_across_the_plot() {
    let note = "no lock is held or waited for in this window";
    // ttrpc v1.2.3's two locks at step 7; Flink minimal's seven monitors at its first step.
    for (name, window) in [
        ("ttrpc-s1.0.2-c1.2.3-deadlock.json", Window::Steps(7, 7)),
        ("flink-1.13.1-minimal-deadlock.json", Window::Steps(1, 1)),
    ] {
        let trace = committed_trace(name);
        let m = Model::new(&trace).unwrap();
        let opts = Options { window, x: XAxis::Steps, ..Options::default() };
        let scene = visualizer::scene(&m, Chart::Locks, &opts).unwrap();
        let notes: Vec<i32> = scene
            .items
            .iter()
            .filter_map(|i| match i {
                visualizer::Item::Text { y, text, .. } if text == note => Some(*y),
                _ => None,
            })
            .collect();
        assert_eq!(notes.len(), 1, "{name}: {notes:?}");
        // Every lock's lane is drawn, its name bold at the left.
        let lanes = lane_names(&scene);
        let locks = trace.resources.iter().filter(|r| ["mutex", "rwmutex", "monitor"].contains(&r.kind.as_str()));
        assert_eq!(lanes.len(), locks.count(), "{name}: {lanes:?}");
        // The note halfway between the first lane's name and the last's
        // (the plot's middle), not beside the first.
        let (first, last) = (lanes[0].0, lanes[lanes.len() - 1].0);
        let mid = (first + last) / 2;
        assert!((notes[0] - mid).abs() <= 16, "{name}: note at y {}, lanes from {first} to {last}", notes[0]);
        assert!(notes[0] > first + 20, "{name}: note at y {} by the first lane's name at {first}", notes[0]);
    }
}

#[test]
fn a_pipe_nobody_uses_in_the_window_says_so() {
    let trace = committed_trace("ttrpc-s1.0.2-c1.0.2-deadlock.json");
    let note = "no write or read in this window";
    let svg = |window: Window| {
        let opts = Options { window, x: XAxis::Steps, ..Options::default() };
        String::from_utf8(render(&trace, Chart::Pipes, Format::Svg, &opts)).unwrap()
    };
    // Two pipes, neither used before the client's first write.
    assert_eq!(svg(Window::Steps(1, 3)).matches(note).count(), 2);
    assert!(!svg(Window::All).contains(note), "the whole run uses both");
}

#[test]
fn tasks_that_wait_alike_share_one_row_of_the_wait_for_graph() {
    // 200 callers: most queue on streamLock at one frame.
    let params = [("client", "v1.2.3"), ("callers", "200")].map(|(k, v)| (k.to_string(), v.to_string()));
    let model = sim::models::find("ttrpc").unwrap().configure(&params).unwrap();
    let run = (0..20)
        .map(|seed| model.run_with(sim::Sim::new(seed).record(true)))
        .find(|r| r.outcome.verdict() == "deadlock")
        .expect("a deadlock within 20 seeds");
    let trace = run.trace.unwrap();
    let behind = trace.deadlock.as_ref().unwrap().behind.len();
    let opts = Options::default();
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &opts), opts.width);
    let grouped: Vec<usize> =
        texts.iter().filter_map(|t| t.split_once(" tasks: caller-").and_then(|(n, _)| n.parse().ok())).collect();
    assert!(!grouped.is_empty(), "no grouped row: {texts:?}");
    assert!(grouped.iter().all(|&n| n >= 4), "{grouped:?}");
    assert!(
        grouped.iter().sum::<usize>() <= behind && grouped.iter().sum::<usize>() > behind / 2,
        "{grouped:?} of {behind}"
    );
    // One row per waiting task made this picture 14,780 px tall.
    let png = check_png(&render(&trace, Chart::WaitFor, Format::Png, &opts), opts.width);
    assert!(png.height < 2_500, "height {}", png.height);
    // Without a deadlock report (the layered graph), the same: v1.2.4 cut
    // short with 179 callers queued on sendLock was a column 20,656 px tall.
    let params = [("client", "v1.2.4"), ("callers", "200")].map(|(k, v)| (k.to_string(), v.to_string()));
    let model = sim::models::find("ttrpc").unwrap().configure(&params).unwrap();
    let trace = model.run_with(sim::Sim::new(0).record(true).max_steps(3_000)).trace.unwrap();
    assert_eq!(trace.meta.verdict, "step-limit");
    let png = check_png(&render(&trace, Chart::WaitFor, Format::Png, &opts), opts.width);
    assert!(png.height < 1_500, "height {}", png.height);
}

#[test]
fn the_final_column_names_a_long_holder_in_full() {
    // "Channel state writer Join(xxxxxx) (34/256)#1" holds channel-1's
    // bufferQueue at the deadlock: too long for a quarter of the plot at
    // the usual size, so it is written smaller in a wider column, not cut.
    let trace = committed_trace("flink-1.13.1-pipeline-deadlock.json");
    let opts = Options::default();
    let texts = check_svg(&render(&trace, Chart::Locks, Format::Svg, &opts), opts.width);
    let holder = "Channel state writer Join(xxxxxx) (34/256)#1";
    assert!(texts.iter().any(|t| t == holder), "{texts:?}");
    assert!(!texts.iter().any(|t| t.starts_with("Channel state writer") && t.ends_with('…')), "{texts:?}");
}

#[test]
fn a_run_named_by_its_schedule_shows_the_schedule_string() {
    // A shrunk, explored or replayed run has no seed to give: the chart
    // gives the string that replays it.
    let mut trace = visualizer::load(&committed()).unwrap();
    let opts = Options::default();
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), opts.width);
    assert!(!texts.iter().any(|t| t.starts_with("schedule")), "a seed's run: {texts:?}");
    trace.meta.strategy = "shrink".into();
    let want = format!("schedule {}", trace.meta.replay);
    for chart in Chart::ALL.into_iter().filter(|&c| c != Chart::Pipes) {
        let texts = check_svg(&render(&trace, chart, Format::Svg, &opts), opts.width);
        assert!(texts.contains(&want), "{chart:?}: {texts:?}");
    }
}

#[test]
fn a_task_spawned_in_the_windows_last_step_gets_no_lane() {
    // Step 1 of ttrpc: main spawns the server, the client and six callers at
    // its end. Those have no time in the window: no empty lanes for them.
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let opts = Options { window: Window::Steps(1, 1), x: XAxis::Steps, ..Options::default() };
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), opts.width);
    assert!(texts.iter().any(|t| t.starts_with("16 of 17 tasks not drawn")), "{texts:?}");
    assert!(!texts.iter().any(|t| t == "caller-0"), "{texts:?}");
    // From step 2 on, they run: their lanes are back.
    let opts = Options { window: Window::Steps(1, 2), ..opts };
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), opts.width);
    assert!(texts.iter().any(|t| t == "caller-0"), "{texts:?}");
}

#[test]
fn the_pipes_final_column_names_who_is_blocked_at_the_end() {
    // ttrpc #72 (v1.0.2 on both sides): Client.run blocks writing to
    // client->server and serverConn.run writing to server->client.
    let trace = committed_trace("ttrpc-s1.0.2-c1.0.2-deadlock.json");
    let opts = Options::default();
    let texts = check_svg(&render(&trace, Chart::Pipes, Format::Svg, &opts), opts.width);
    // Once in the legend, once in the final column.
    for name in ["Client.run", "serverConn.run"] {
        assert_eq!(texts.iter().filter(|t| *t == name).count(), 2, "{name}: {texts:?}");
    }
}

#[test]
fn a_graph_whose_layers_do_not_fit_across_is_listed_one_wait_a_row() {
    // ttrpc #72 with 12 callers cut short at step 90: no deadlock report,
    // 14 tasks blocked. In 1200 px its three layers are columns; in 600 px
    // neither columns nor one row per layer fit, so the waits are listed.
    let params =
        [("server", "v1.0.2"), ("client", "v1.0.2"), ("callers", "12")].map(|(k, v)| (k.to_string(), v.to_string()));
    let model = sim::models::find("ttrpc").unwrap().configure(&params).unwrap();
    let trace = model.run_with(sim::Sim::new(0).record(true).max_steps(90)).trace.unwrap();
    assert_eq!(trace.meta.verdict, "step-limit");
    let heading = "Blocked at the end of the run".to_string();
    let wide = Options::default();
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &wide), wide.width);
    assert!(!texts.contains(&heading), "{texts:?}");
    let narrow = Options { width: 600, ..Options::default() };
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &narrow), narrow.width);
    assert!(texts.contains(&heading), "{texts:?}");
    // Every blocked task (or its group) has its row: each is drawn once.
    let g = visualizer::waitfor::Graph::new(&Model::new(&trace).unwrap());
    for n in g.nodes.iter().filter(|n| matches!(n.kind, visualizer::waitfor::NodeKind::Group(_))) {
        assert_eq!(texts.iter().filter(|t| **t == n.label).count(), 1, "{}", n.label);
    }
    assert!(texts.iter().filter(|t| *t == "waits for").count() >= 2, "{texts:?}");
}

#[test]
fn times_near_the_end_of_u64_draw_and_export() {
    // A trace may give times up to u64::MAX: the axis ticks once wrapped
    // around there and looped, eating memory; the Perfetto tail overflowed.
    let mut trace = visualizer::load(&committed()).unwrap();
    let shift = u64::MAX - trace.meta.time_ns;
    for e in &mut trace.events {
        e.time += shift;
    }
    trace.meta.time_ns = u64::MAX;
    if let Some(d) = trace.deadlock.as_mut() {
        d.time += shift;
    }
    for x in [XAxis::Time, XAxis::Steps] {
        let opts = Options { x, ..Options::default() };
        for chart in Chart::ALL {
            check_png(&render(&trace, chart, Format::Png, &opts), opts.width);
        }
    }
    let json = visualizer::perfetto::export(&trace).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == "wait A"));
}

#[test]
fn perfetto_lock_lanes_never_overlap() {
    // Open holds are drawn past the end: a hold taken at the end goes to
    // another lane, never inside one still open. T1 of abba, made to take a
    // third lock C at step 2, holds C when it takes A in the last step.
    let mut with_c = visualizer::load(&committed()).unwrap();
    let mut c = with_c.resources[0].clone();
    (c.id, c.name) = (2, "C".into());
    with_c.resources.push(c);
    let at = with_c.events.iter().position(|e| e.step > 2).unwrap();
    let mut take = with_c.events[at].clone();
    (take.step, take.time, take.task, take.kind, take.resource) = (2, 200, 1, sim::trace::EventKind::Lock, Some(2));
    (take.peer, take.amount, take.buffered, take.op) = (None, None, None, None);
    with_c.events.insert(at, take);
    for trace in [visualizer::load(&committed()).unwrap(), common::pipes_deadlock(), with_c] {
        let json = visualizer::perfetto::export(&trace).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut lanes: std::collections::BTreeMap<u64, Vec<(f64, f64)>> = Default::default();
        for e in v["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "lock" && e["ph"] == "X") {
            let (ts, dur) = (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap());
            lanes.entry(e["tid"].as_u64().unwrap()).or_default().push((ts, ts + dur));
        }
        for (tid, mut slices) in lanes {
            slices.sort_by(|a, b| a.0.total_cmp(&b.0));
            for w in slices.windows(2) {
                assert!(w[1].0 >= w[0].1 - 1e-9, "{}: lane {tid}: {:?} overlaps {:?}", trace.meta.model, w[0], w[1]);
            }
        }
    }
}

#[test]
fn locks_chart_draws_the_locks_used_and_says_what_the_last_step_did() {
    let texts_of =
        |trace: &Trace, opts: &Options| check_svg(&render(trace, Chart::Locks, Format::Svg, opts), opts.width);
    // Flink minimal: seven monitors, three of them ever held or waited for.
    let flink = committed_trace("flink-1.13.1-minimal-deadlock.json");
    let texts = texts_of(&flink, &Options::default());
    let note = texts.iter().find(|t| t.contains("locks not drawn: not held or waited for in this window"));
    assert!(note.is_some_and(|n| n.starts_with("4 of 7")), "{texts:?}");
    assert!(!texts.iter().any(|t| t == "SingleInputGate.inputChannelsWithData"), "{texts:?}");
    // abba, step 4 alone: T2 takes B at its end, with no width to draw it.
    let abba = visualizer::load(&committed()).unwrap();
    let opts = Options { window: Window::Steps(4, 4), x: XAxis::Steps, ..Options::default() };
    let texts = texts_of(&abba, &opts);
    assert!(texts.iter().any(|t| t == "At the end of step 4, the window's last: T2 takes B."), "{texts:?}");
    assert!(!texts.iter().any(|t| t.starts_with("no lock is held")), "{texts:?}");
    // A window that starts just after a release draws no lane for it.
    let opts = Options { window: Window::Steps(2, 3), ..opts };
    let texts = texts_of(&abba, &opts);
    assert!(texts.iter().any(|t| t == "no lock is held or waited for in this window"), "{texts:?}");
    // ttrpc v1.2.3's client read-locks streamLock, and nothing else: drawn
    // and named as such, its legend entry a pale box in its colour's frame
    // as its holds are (a filled swatch "held by Client.run" matched no box
    // of the chart), and no entry for read holds in general left to say.
    let ttrpc = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let texts = texts_of(&ttrpc, &Options::default());
    assert!(texts.iter().any(|t| t == "read-locked by Client.run"), "{texts:?}");
    assert!(!texts.iter().any(|t| t == "held by Client.run" || t == "read-locked (RWMutex)"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "held by caller-2"), "{texts:?}");
    let m = Model::new(&ttrpc).unwrap();
    let client = (0..m.tasks.len() as u32).find(|&t| m.task_name(t) == "Client.run").unwrap();
    let scene = visualizer::scene(&m, Chart::Locks, &Options::default()).unwrap();
    let legend_y = scene
        .items
        .iter()
        .find_map(|i| match i {
            visualizer::Item::Text { text, y, .. } if text == "read-locked by Client.run" => Some(*y),
            _ => None,
        })
        .unwrap();
    // The swatch's shapes, on the entry's line: Client.run's colour, pale
    // inside and opaque around; none of them a box filled opaque.
    let colour = m.task_colour(client);
    let swatch: Vec<u8> = scene
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Rect { y0, y1, paint, .. }
                if paint.rgb == colour && *y0 <= legend_y && *y1 >= legend_y - 10 =>
            {
                Some(paint.alpha)
            }
            _ => None,
        })
        .collect();
    assert!(swatch.iter().any(|&a| a < 255) && swatch.contains(&255), "{swatch:?}");
    assert!(!texts_of(&flink, &Options::default()).iter().any(|t| t.starts_with("read-locked")));
}

#[test]
fn a_wrapped_select_keeps_its_separators() {
    // "recv stream#N.recv | recv stream#N.recvClose | recv c.ctx.Done()"
    // takes two lines: the first ends in the separator, so three cases
    // still read as three.
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let opts = Options::default();
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &opts), opts.width);
    let first = texts.iter().position(|t| t.starts_with("recv stream#") && t.contains(".recvClose")).expect("a select");
    assert!(texts[first].ends_with(" |"), "{texts:?}");
    assert_eq!(texts[first + 1], "recv c.ctx.Done()", "{texts:?}");
}

#[test]
fn the_timelines_final_column_names_what_each_task_waits_for_in_full() {
    // ttrpc v1.2.3: serverConn.run waits for server->client, caller-3 for
    // client->server; the column was 76 px and cut both at every width.
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    for width in [1200, 2400] {
        let opts = Options { width, ..Options::default() };
        let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), width);
        // No pipe name cut: no text is the start and the end of one.
        let cut_of = |t: &str, name: &str| {
            // (A frame cut at its end, "server…", is not one.)
            t.split_once('…').is_some_and(|(h, e)| !e.is_empty() && name.starts_with(h) && name.ends_with(e))
        };
        let cut = texts.iter().find(|t| ["server->client", "client->server"].iter().any(|n| cut_of(t, n)));
        assert!(cut.is_none(), "{width}: {cut:?}");
        for pipe in ["server->client", "client->server"] {
            // In the final column and beside its deadlock arrow.
            assert!(texts.iter().filter(|t| *t == pipe).count() >= 2, "{width} {pipe}: {texts:?}");
        }
    }
}

#[test]
fn a_pipe_caption_stops_short_of_the_deadlock_line() {
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let caption = "unbuffered (capacity 0): bars are the bytes each read takes from the writer";
    let texts_at = |width: u32| {
        let opts = Options { width, ..Options::default() };
        check_svg(&render(&trace, Chart::Pipes, Format::Svg, &opts), width)
    };
    assert_eq!(texts_at(1200).iter().filter(|t| *t == caption).count(), 2);
    // At 600 px the line falls inside the caption: it is cut before it.
    let narrow = texts_at(600);
    assert!(!narrow.iter().any(|t| t == caption), "{narrow:?}");
    assert_eq!(narrow.iter().filter(|t| t.starts_with("unbuffered (capacity 0)") && t.ends_with('…')).count(), 2);
}

#[test]
fn a_holder_that_is_not_blocked_says_its_state_and_how_it_holds() {
    // ttrpc v1.2.3 cut short at step 200: caller-2 waits for streamLock,
    // which Client.run (ready, not blocked) holds for reading.
    let params = [("client", "v1.2.3")].map(|(k, v)| (k.to_string(), v.to_string()));
    let model = sim::models::find("ttrpc").unwrap().configure(&params).unwrap();
    let trace = model.run_with(sim::Sim::new(7).record(true).max_steps(200)).trace.unwrap();
    let g = visualizer::waitfor::Graph::new(&Model::new(&trace).unwrap());
    let holder = g.nodes.iter().position(|n| n.label == "Client.run").expect("Client.run in the graph");
    assert_eq!(g.nodes[holder].detail, "ready at the end");
    let edge = g.edges.iter().find(|e| e.to == holder).expect("an edge to it");
    assert_eq!((g.nodes[edge.from].label.as_str(), edge.label), ("streamLock", "read-held by"));
}

#[test]
fn a_narrow_timeline_leaves_its_deadlock_arrows_unlabelled() {
    // Below 900 px an arrow's label goes when the final column names in
    // full what its task waits for: the plot needs the room. abba: "B", "A".
    let texts_at = |trace: &Trace, width: u32| {
        let opts = Options { width, ..Options::default() };
        check_svg(&render(trace, Chart::Timeline, Format::Svg, &opts), width)
    };
    let count = |texts: &[String], what: &str| texts.iter().filter(|t| *t == what).count();
    let abba = visualizer::load(&committed()).unwrap();
    assert_eq!((count(&texts_at(&abba, 1200), "B"), count(&texts_at(&abba, 600), "B")), (2, 1));
    // ttrpc v1.2.3 at 600 px: the final column cuts the pipes' names, so
    // those arrows keep theirs; it names the locks in full, so the lock
    // arrows lose theirs (each arrow on its own).
    let ttrpc = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let narrow = texts_at(&ttrpc, 600);
    assert_eq!(count(&narrow, "server->client"), 1, "{narrow:?}");
    // The arrows' labels, in the deadlock's red (the final column and the
    // bars name locks in black).
    let red_at = |width: u32| {
        let opts = Options { width, ..Options::default() };
        let svg = render(&ttrpc, Chart::Timeline, Format::Svg, &opts);
        let doc = roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap()).unwrap();
        doc.descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("fill") == Some("#C01C1C"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect::<Vec<_>>()
    };
    let (wide, narrow) = (red_at(1200), red_at(600));
    for lock in ["streamLock", "sendLock"] {
        // The final column names it in full at both widths; the arrow's
        // label is there only in the wide picture.
        assert_eq!((count(&wide, lock), count(&narrow, lock)), (1, 0), "{lock}: {wide:?} {narrow:?}");
        assert!(texts_at(&ttrpc, 600).contains(&lock.to_string()));
    }
}

/// The "At the end of step N, the window's last: ..." line of `chart` over
/// `window` (steps on the x axis), if it has one.
fn last_step_line(trace: &visualizer::Trace, chart: Chart, window: Window) -> Option<String> {
    let opts = Options { window, x: XAxis::Steps, ..Options::default() };
    let texts = check_svg(&render(trace, chart, Format::Svg, &opts), opts.width);
    texts.into_iter().find(|t| t.starts_with("At the end of step"))
}

#[test]
fn a_timeline_says_what_the_windows_last_step_did() {
    // Step 15 of the committed philosophers run: philosopher-2 takes fork2
    // and blocks on fork3, at the window's right edge.
    let trace = committed_trace("philosophers-deadlock.json");
    let line = |window: Window| last_step_line(&trace, Chart::Timeline, window);
    let last = line(Window::Steps(15, 15)).expect("a line for step 15");
    assert!(last.starts_with("At the end of step 15, the window's last: "), "{last}");
    let took = trace.events.iter().find(|e| e.step == 15 && e.kind == sim::trace::EventKind::Lock).unwrap();
    let who = &trace.tasks[took.task as usize].name;
    let what = &trace.resources[took.resource.unwrap() as usize].name;
    assert!(last.contains(&format!("{who} takes {what}")), "{last}");
    // A step that only lets go of a lock and wakes its waiter draws nothing
    // at the edge either: both are said, in the timeline and the locks chart.
    let unlock = trace
        .events
        .iter()
        .find(|e| {
            e.kind == sim::trace::EventKind::Unlock
                && trace.events.iter().any(|w| w.step == e.step && w.kind == sim::trace::EventKind::Wake)
        })
        .expect("an unlock that wakes a waiter");
    let wake = trace.events.iter().find(|w| w.step == unlock.step && w.kind == sim::trace::EventKind::Wake).unwrap();
    let (who, woken) = (&trace.tasks[unlock.task as usize].name, &trace.tasks[wake.task as usize].name);
    let what = &trace.resources[unlock.resource.unwrap() as usize].name;
    let window = Window::Steps(unlock.step - 1, unlock.step);
    let last = line(window).expect("a line for the unlock's step");
    assert!(last.contains(&format!("{who} lets go of {what}")) && last.contains(&format!("{woken} wakes")), "{last}");
    let locks = last_step_line(&trace, Chart::Locks, window).expect("a locks chart line");
    assert!(locks.contains(&format!("{who} lets go of {what}")), "{locks}");
    assert!(locks.contains(&format!("{woken} stops waiting for {what}")), "{locks}");
    // A window to the end of the run says nothing: its final column shows it.
    assert_eq!(line(Window::All), None);
}

#[test]
fn a_pipes_chart_says_what_the_windows_last_step_did() {
    // Step 50 of ttrpc #72 (v1.0.2 on both sides): Client.run blocks
    // writing to the unbuffered client->server pipe, at the window's edge.
    let trace = committed_trace("ttrpc-s1.0.2-c1.0.2-deadlock.json");
    let line = |window: Window| last_step_line(&trace, Chart::Pipes, window);
    let blocked = trace
        .events
        .iter()
        .find(|e| e.kind == sim::trace::EventKind::Block && e.op.as_deref() == Some("write"))
        .expect("a writer blocks");
    let last = line(Window::Steps(blocked.step, blocked.step)).expect("a line for that step");
    let who = &trace.tasks[blocked.task as usize].name;
    let pipe = &trace.resources[blocked.resource.unwrap() as usize].name;
    assert!(last.contains(&format!("{who} blocks writing to {pipe}")), "{last}");
    assert_eq!(line(Window::All), None);
}

#[test]
fn a_legend_entry_never_runs_past_the_picture() {
    // A holder with a very long name: its "held by" entry is cut to a row.
    let mut trace = visualizer::load(&committed()).unwrap();
    let long = format!("T1-{}", "worker".repeat(30));
    trace.tasks[1].name = long.clone();
    if let Some(d) = trace.deadlock.as_mut() {
        for b in d.cycle.iter_mut().chain(d.behind.iter_mut()) {
            if b.task == 1 {
                b.name = long.clone();
            }
        }
    }
    for width in [600, 1200] {
        let opts = Options { width, ..Options::default() };
        let svg = String::from_utf8(render(&trace, Chart::Locks, Format::Svg, &opts)).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let held: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.text().is_some_and(|t| t.trim().starts_with("held by")))
            .collect();
        assert!(!held.is_empty());
        for t in held {
            let x: f64 = t.attribute("x").unwrap().parse().unwrap();
            let w: f64 = t.attribute("textLength").unwrap().parse().unwrap();
            assert!(x + w <= width as f64, "{width}: {:?} ends at {}", t.text(), x + w);
        }
    }
}

#[test]
fn a_joined_task_that_is_not_blocked_says_its_state() {
    // Flink with the self-assign-clear fix: main joins the task the invariant
    // failed in; its box says so instead of an empty second line.
    let trace = committed_trace("flink-1.13.1-self-assign-clear-failure.json");
    let g = visualizer::waitfor::Graph::new(&Model::new(&trace).unwrap());
    let main = g.nodes.iter().position(|n| n.label == "main").unwrap();
    let joined = g.edges.iter().find(|e| e.from == main).map(|e| &g.nodes[e.to]).expect("main waits for a task");
    assert_eq!(joined.detail, "invariant violated here", "{g:?}");
}

#[test]
fn in_a_trace_of_many_tasks_the_cycle_the_graphs_tasks_the_late_lock_holders_and_the_last_to_act_differ_in_colour() {
    use visualizer::palette;
    let p = |k: &str, v: &str| (k.to_string(), v.to_string());
    let ttrpc = sim::models::find("ttrpc").unwrap();
    let cfg = ttrpc.configure(&[p("client", "v1.2.3"), p("callers", "200")]).unwrap();
    let trace = *cfg.run(7, true).trace.unwrap();
    let m = Model::new(&trace).unwrap();
    let n = trace.tasks.len() as u32;
    assert!(n > palette::TASK_COLOURS, "{n} tasks");
    // By id, Client.run (task 2) and caller-161 (task 164), both in the
    // cycle, would share a colour.
    let cycle: Vec<u32> = trace.deadlock.as_ref().expect("seed 7 deadlocks").cycle.iter().map(|b| b.task).collect();
    assert!(cycle.contains(&2) && cycle.contains(&164), "{cycle:?}");
    assert_eq!(palette::task(2), palette::task(164));
    // The distinct colours of `tasks`.
    let colours_of = |tasks: &[u32]| -> BTreeSet<(u8, u8, u8)> {
        tasks
            .iter()
            .map(|&t| {
                let c = m.task_colour(t);
                (c.0, c.1, c.2)
            })
            .collect()
    };
    let colours = colours_of(&cycle);
    assert_eq!(colours.len(), cycle.len(), "the cycle's tasks differ in colour");
    // The tasks that held a lock in the last 400 steps (a default locks
    // chart's lanes and legend), then those that acted last (what a figure
    // of the end shows), take the next colours, each its own.
    let mut last = vec![0u64; n as usize];
    for e in &trace.events {
        last[e.task as usize] = e.step;
    }
    // The tasks the wait-for graph draws, each its own node, differ in colour.
    let drawn = visualizer::waitfor::Graph::new(&m).tasks();
    assert_eq!(colours_of(&drawn).len(), drawn.len(), "the wait-for graph's tasks differ in colour");
    let since = m.end.saturating_sub(400);
    let held_late = |t: u32| m.tasks[t as usize].holds.iter().any(|h| h.end > since);
    let late: Vec<u32> = (0..n).filter(|&t| !cycle.contains(&t) && held_late(t)).collect();
    assert!(!late.is_empty(), "some task outside the cycle held a lock late");
    let colours = colours_of(&cycle.iter().copied().chain(late.iter().copied()).collect::<Vec<_>>());
    assert_eq!(colours.len(), cycle.len() + late.len(), "the cycle and the late holders differ in colour");
    let mut by_last: Vec<u32> = (0..n).filter(|t| !cycle.contains(t)).collect();
    by_last.sort_by_key(|&t| (!drawn.contains(&t), !held_late(t), std::cmp::Reverse(last[t as usize]), t));
    let shown: Vec<u32> = cycle.iter().copied().chain(by_last).take(colours_before_repeats(&m, &cycle)).collect();
    let colours = colours_of(&shown);
    assert_eq!(colours.len(), shown.len());
    // Seed 0 of 200 callers making 3 calls: the graph draws main and
    // callers behind the cycle too (by their last events, main would wear a
    // cycle task's colour).
    let cfg = ttrpc.configure(&[p("client", "v1.2.3"), p("callers", "200"), p("calls", "3")]).unwrap();
    let trace = *cfg.run(0, true).trace.unwrap();
    let m = Model::new(&trace).unwrap();
    let drawn = visualizer::waitfor::Graph::new(&m).tasks();
    let cycle = trace.deadlock.as_ref().expect("seed 0 deadlocks").cycle.len();
    assert!(drawn.len() > cycle && drawn.contains(&0), "{drawn:?}");
    let colours: BTreeSet<String> = drawn.iter().map(|&t| m.task_colour(t).hex()).collect();
    assert_eq!(colours.len(), drawn.len(), "{drawn:?}");
    // In a trace of a few tasks too the cycle takes the first colours,
    // whatever its tasks' ids: Flink's two threads have ids 1 and 2 in the
    // minimal trace, 2 and 3 in the pipeline one, and the same colours in
    // both, so that the figures of one deadlock agree.
    let cycle_colours = |file: &str| {
        let trace = committed_trace(file);
        let m = Model::new(&trace).unwrap();
        let cycle = trace.deadlock.as_ref().expect("a deadlock").cycle.iter().map(|b| b.task);
        cycle.map(|t| (trace.tasks[t as usize].name.clone(), m.task_colour(t).hex())).collect::<Vec<_>>()
    };
    let minimal = cycle_colours("flink-1.13.1-minimal-deadlock.json");
    assert_eq!(minimal, cycle_colours("flink-1.13.1-pipeline-deadlock.json"));
    assert_eq!(
        minimal.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>(),
        [palette::task(0).hex(), palette::task(1).hex()]
    );
}

#[test]
fn an_unbuffered_pipe_with_nothing_handed_over_in_the_window_has_no_made_up_scale() {
    // ttrpc #72, the first steps: the net.Pipes exist, no read has taken
    // bytes from a writer yet.
    let trace = committed_trace("ttrpc-s1.0.2-c1.0.2-deadlock.json");
    let first_read = trace.events.iter().find(|e| e.kind == sim::trace::EventKind::Read).expect("a read").step;
    let opts = Options { window: Window::Steps(1, first_read - 1), x: XAxis::Steps, ..Options::default() };
    let texts = check_svg(&render(&trace, Chart::Pipes, Format::Svg, &opts), opts.width);
    assert!(!texts.iter().any(|t| t.ends_with(" B")), "{texts:?}");
    // The whole run has a scale: the bytes each read took.
    let texts = check_svg(&render(&trace, Chart::Pipes, Format::Svg, &Options::default()), 1200);
    assert!(texts.iter().any(|t| t.ends_with("010 B")), "{texts:?}");
}

#[test]
fn both_ends_of_the_axis_are_labelled() {
    // ttrpc seed 7 (server v1.0.2, client v1.2.3): a deadlock at step 227,
    // 22.7 µs of virtual time, which no round tick falls on.
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let end_ns = *trace.events.last().map(|e| &e.time).unwrap();
    assert!(end_ns % 1000 != 0, "the end falls on a round tick: {end_ns} ns");
    let end_us = format!("{} µs", end_ns as f64 / 1000.0);
    for chart in [Chart::Timeline, Chart::Locks, Chart::Pipes] {
        let texts = check_svg(&render(&trace, chart, Format::Svg, &Options::default()), Options::WIDTH);
        assert!(texts.contains(&"0 µs".to_string()), "{chart:?}: {texts:?}");
        assert!(texts.contains(&end_us), "{chart:?} has no {end_us}: {texts:?}");
        // A window of steps: its first and last tick, neither a multiple of 5.
        let steps = Options { x: XAxis::Steps, window: Window::Last(19), ..Options::default() };
        let texts = check_svg(&render(&trace, chart, Format::Svg, &steps), Options::WIDTH);
        for end in ["208", "227"] {
            assert!(texts.contains(&end.to_string()), "{chart:?} has no {end}: {texts:?}");
        }
    }
}

#[test]
fn a_select_too_long_for_the_final_column_counts_the_cases_it_leaves_out() {
    // Three callers of the same trace end blocked in a select of three
    // cases (`recv stream#13.recv | recv stream#13.recvClose | recv
    // c.ctx.Done()`), too long for the final column at 1,200 px.
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), Options::WIDTH);
    for n in [11, 13, 15] {
        let want = format!("recv stream#{n}.recv | +2");
        assert!(texts.contains(&want), "no {want}: {texts:?}");
    }
    // At every width the count stays, however the first case is cut (where
    // three cuts of it would read alike, one of the three kept whole once
    // dropped the count).
    for width in (600..=1200).step_by(50) {
        let opts = Options { width, ..Options::default() };
        let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), width);
        let counted: BTreeSet<&String> =
            texts.iter().filter(|t| t.starts_with("recv ") && t.ends_with(" | +2")).collect();
        // From 900 px the three stay apart: the stream number outlasts the
        // name before it ("recv …#13… | +2").
        let apart = if width >= 900 { 3 } else { 1 };
        assert!(
            texts.iter().filter(|t| counted.contains(t)).count() == 3 && counted.len() >= apart,
            "{width}: {counted:?}"
        );
    }
}

#[test]
fn a_blocked_stretch_too_narrow_for_its_words_keeps_the_resource_name() {
    // ttrpc c1.2.3's callers block on streamLock and on sendLock: cut with
    // their verb, both read `lock s…`. The name goes on alone instead.
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    for width in [900, 1200, 1600] {
        let opts = Options { width, ..Options::default() };
        let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), width);
        let cut_verbs: Vec<&String> = texts
            .iter()
            .filter(|t| t.ends_with('…') && ["lock ", "rlock ", "write ", "read "].iter().any(|v| t.starts_with(v)))
            .collect();
        assert!(cut_verbs.is_empty(), "{width}: {cut_verbs:?}");
        assert!(texts.iter().any(|t| t.starts_with("strea") && t.ends_with('…')), "{width}: {texts:?}");
    }
    // A numbered resource keeps its number: Flink's two bufferQueue
    // monitors. (The bars' labels start at their left; the final column's
    // are centred, and name the monitors in full.)
    let trace = committed_trace("flink-1.13.1-minimal-deadlock.json");
    let svg = render(&trace, Chart::Timeline, Format::Svg, &Options::default());
    let doc = roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap()).unwrap();
    let on_bars: Vec<&str> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("text")
                && n.attribute("fill") == Some("#000000")
                && n.attribute("text-anchor") == Some("start")
        })
        .map(|n| n.text().unwrap_or("").trim())
        .collect();
    assert!(on_bars.contains(&"ch…-1…"), "{on_bars:?}");
    assert!(on_bars.iter().all(|t| !t.starts_with("lock c")), "{on_bars:?}");
}

#[test]
fn a_narrow_time_axis_labels_a_round_tick_between_its_ends() {
    // At 600 px the ttrpc timeline's plot is about 260 px: ticks 110 px
    // apart gave 0 and 20 µs, and 20 µs gave way to the end's 22.7 µs, so
    // the axis read "0 µs ... 22.7 µs". Closer ticks label one between.
    // The axis labels (muted, below the plot, left-anchored): (x, width, text).
    let axis = |svg: &[u8]| -> Vec<(i32, i32, String)> {
        let doc = roxmltree::Document::parse(std::str::from_utf8(svg).unwrap()).unwrap();
        let mut v: Vec<(i32, i32, String)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text") && n.attribute("fill") == Some("#5F5F5F"))
            .map(|n| {
                let num = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap() as i32;
                (num("x"), num("textLength"), n.text().unwrap_or("").trim().to_string())
            })
            .filter(|(_, _, t)| t.ends_with(" µs") || t.ends_with(" ns") || t.chars().all(|c| c.is_ascii_digit()))
            .collect();
        v.sort();
        v
    };
    for name in ["ttrpc-s1.0.2-c1.2.3-deadlock.json", "abba-deadlock.json", "flink-1.13.1-minimal-deadlock.json"] {
        let trace = committed_trace(name);
        for width in (600..=1200).step_by(50) {
            for chart in [Chart::Timeline, Chart::Locks] {
                let opts = Options { width, ..Options::default() };
                let svg = render(&trace, chart, Format::Svg, &opts);
                check_svg(&svg, width);
                let labels = axis(&svg);
                let at = format!("{name} {chart:?} at {width}: {labels:?}");
                // Two ends and one between, none running into the next.
                assert!(labels.len() >= 3, "{at}");
                assert!(labels.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0), "{at}");
            }
        }
    }
}

#[test]
fn a_frame_name_too_long_for_its_stretch_keeps_what_the_frame_does() {
    // Flink's minimal run: LocalBufferPool.recycle and
    // AbstractReferenceCountedByteBuf.release in stretches too short for
    // their names read `…recycle` and `…release`, not `LocalBu…`, `Abs…`.
    let trace = committed_trace("flink-1.13.1-minimal-deadlock.json");
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), Options::WIDTH);
    for want in ["…recycle", "…release"] {
        assert!(texts.contains(&want.to_string()), "no {want}: {texts:?}");
    }
    assert!(!texts.iter().any(|t| t.starts_with("Abs") && t.ends_with('…')), "{texts:?}");
}

#[test]
fn a_cycle_through_a_monitor_wait_is_drawn_as_a_wait_for_a_notify() {
    // T1 holds lock A and waits on monitor M; T2 needs A before it can
    // notify M. The cycle runs through the wait: T1 waits for a notify
    // that only T2 could give, T2 for the lock T1 holds.
    let model = sim::models::Configured::new("notify-cycle", Vec::new(), |sim: sim::Sim| {
        sim.run(|| async {
            let (a, m) = (sim::sync::Mutex::new("A"), sim::sync::Monitor::new("M"));
            sim::spawn("T1", async move {
                let _a = a.lock().await;
                let g = m.enter().await;
                g.wait().await;
            });
            sim::spawn("T2", async move {
                sim::task::yield_now().await;
                let _a = a.lock().await;
                let g = m.enter().await;
                g.notify();
            });
        })
    });
    let trace = (0..50)
        .map(|seed| model.run_with(sim::Sim::new(seed).record(true)).trace.unwrap())
        .find(|t| t.deadlock.as_ref().is_some_and(|d| d.cycle.iter().any(|b| b.op == "wait")))
        .map(|t| *t)
        .expect("a seed where T1 waits before T2 takes A");
    let graph = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &Options::default()), Options::WIDTH);
    for label in ["waits for a notify", "notified by", "waits for", "held by"] {
        assert!(graph.contains(&label.to_string()), "no {label}: {graph:?}");
    }
    let timeline = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), Options::WIDTH);
    assert!(timeline.contains(&"waits for (held by, or for a wait: notified by)".to_string()), "{timeline:?}");
    // Below 900 px the arrows go unlabelled where the final column names
    // the wait in full: "wait M" is then the final column's.
    let opts = Options { width: 800, ..Options::default() };
    let narrow = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), 800);
    assert_eq!(narrow.iter().filter(|t| *t == "wait M").count(), 1, "{narrow:?}");
}

#[test]
fn a_waiting_row_of_four_or_more_says_how_many_at_most() {
    // 40 ttrpc callers, seed 7: up to 38 queue on streamLock, in one shade.
    let trace = ttrpc_trace(&[("client", "v1.2.3"), ("callers", "40")], 7);
    let texts = check_svg(&render(&trace, Chart::Locks, Format::Svg, &Options::default()), Options::WIDTH);
    let ranges: Vec<(u32, u32)> = texts
        .iter()
        .filter_map(|t| t.strip_suffix(" waiting")?.split_once('–'))
        .map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap()))
        .collect();
    assert!(ranges.iter().any(|&(lo, hi)| lo == 4 && hi > 20), "{texts:?}");
    // The key shows every shade, each labelled with its count.
    let key = texts.iter().position(|t| t == "tasks waiting to acquire").expect("the waiting key");
    assert_eq!(texts[key - 4..key], ["1", "2", "3", "4+"], "{texts:?}");
}

#[test]
fn a_task_in_a_monitor_wait_waits_for_a_notify_not_for_the_monitor() {
    // At the end of the self-assign-clear run the channel state writer is
    // in `deque.wait()`: it holds no lock and waits for none, but for a notify.
    let trace = committed_trace("flink-1.13.1-self-assign-clear-failure.json");
    let deque = "ChannelStateWriteRequestExecutorImpl.deque";
    for width in [600, 1200] {
        let opts = Options { width, ..Options::default() };
        let graph = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &opts), width);
        assert!(graph.contains(&"waits for a notify".to_string()), "{width}: {graph:?}");
        assert!(graph.contains(&"waits for (or for a notify) / held by".to_string()), "{width}: {graph:?}");
    }
    let opts = Options { width: 2400, ..Options::default() };
    let timeline = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), 2400);
    // The final column says which wait it is, as the stretches on the bar do.
    assert!(timeline.contains(&format!("wait {deque}")), "{timeline:?}");
    assert!(!timeline.contains(&deque.to_string()), "{timeline:?}");
}

#[test]
fn the_tasks_of_a_cycle_have_full_strength_colours_of_distinct_hues() {
    use visualizer::palette;
    let full: BTreeSet<String> = (0..palette::FULL_COLOURS).map(|i| palette::task(i).hex()).collect();
    for name in [
        "ttrpc-s1.0.2-c1.0.2-deadlock.json",
        "ttrpc-s1.0.2-c1.2.3-deadlock.json",
        "ttrpc-s1.1.0-c1.0.2-deadlock.json",
        "ttrpc-s1.1.0-c1.2.3-deadlock.json",
    ] {
        let trace = committed_trace(name);
        // 10 to 27 tasks: past the nine full-strength colours.
        assert!((10..=27).contains(&trace.tasks.len()), "{name}: {} tasks", trace.tasks.len());
        let m = Model::new(&trace).unwrap();
        let cycle: Vec<u32> = trace.deadlock.as_ref().unwrap().cycle.iter().map(|b| b.task).collect();
        let colours: BTreeSet<String> = cycle.iter().map(|&t| m.task_colour(t).hex()).collect();
        assert_eq!(colours.len(), cycle.len(), "{name}");
        assert!(colours.is_subset(&full), "{name}: {colours:?}");
        // Every task keeps a colour of its own.
        let all: BTreeSet<String> = (0..trace.tasks.len() as u32).map(|t| m.task_colour(t).hex()).collect();
        assert_eq!(all.len(), trace.tasks.len(), "{name}");
        // And no other task has a pale or dark form of a cycle task's
        // colour while a tint of another hue clear of the cycle's colours
        // is left (see `up_to_27_tasks_no_task_passes_for_one_of_the_cycle`).
        let k = cycle.len() as u32;
        let tints: BTreeSet<String> =
            (0..k).flat_map(|i| [palette::task(9 + i).hex(), palette::task(18 + i).hex()]).collect();
        let cycle_rgb: Vec<palette::Rgb> = cycle.iter().map(|&t| m.task_colour(t)).collect();
        let clear = |c: palette::Rgb| cycle_rgb.iter().all(|&h| palette::difference(c, h) >= palette::DISTINCT);
        let others: BTreeSet<String> =
            (0..trace.tasks.len() as u32).filter(|t| !cycle.contains(t)).map(|t| m.task_colour(t).hex()).collect();
        let left = (0..palette::TASK_COLOURS)
            .map(palette::task)
            .filter(|&c| !full.contains(&c.hex()) && !tints.contains(&c.hex()) && clear(c))
            .filter(|c| !others.contains(&c.hex()))
            .count();
        if others.iter().any(|c| tints.contains(c)) {
            assert_eq!(left, 0, "{name}: a tint of a cycle task's colour while {left} others are left");
        }
    }
}

/// Up to 27 tasks every task keeps a colour of its own, and none outside
/// the cycle has one within ΔE 15 of a cycle task's while such colours are
/// left. In slot order, a ttrpc server goroutine took a dark purple by the
/// cycle's wine (ΔE 9), and main beside a cycle of 12 philosophers the pale
/// form of philosopher-3's cyan (ΔE 11); repeating the clear colours
/// instead gave 25 ttrpc tasks (14 callers, seed 16) two of one colour.
#[test]
fn up_to_27_tasks_no_task_passes_for_one_of_the_cycle() {
    use visualizer::palette::{difference, DISTINCT};
    let philosophers = (0..)
        .map(|seed| {
            let p = sim::models::find("philosophers").unwrap();
            *p.configure(&[("philosophers".into(), "12".into())]).unwrap().run(seed, true).trace.unwrap()
        })
        .find(|t| t.deadlock.is_some())
        .unwrap();
    let crowded = (0..)
        .map(|seed| ttrpc_trace(&[("server", "v1.0.2"), ("client", "v1.2.3"), ("callers", "14")], seed))
        .find(|t| t.deadlock.is_some() && (24..=27).contains(&t.tasks.len()))
        .unwrap();
    let traces = [
        ("14 callers", crowded),
        ("ttrpc-s1.0.2-c1.0.2-deadlock.json", committed_trace("ttrpc-s1.0.2-c1.0.2-deadlock.json")),
        ("ttrpc-s1.0.2-c1.2.3-deadlock.json", committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json")),
        ("ttrpc-s1.1.0-c1.2.3-deadlock.json", committed_trace("ttrpc-s1.1.0-c1.2.3-deadlock.json")),
        ("12 philosophers", philosophers),
    ];
    for (name, trace) in &traces {
        let m = Model::new(trace).unwrap();
        let cycle = m.cycle_tasks();
        let n = trace.tasks.len() as u32;
        assert!(n <= visualizer::palette::TASK_COLOURS && cycle.len() < n as usize, "{name}");
        let colours: BTreeSet<String> = (0..n).map(|t| m.task_colour(t).hex()).collect();
        assert_eq!(colours.len(), n as usize, "{name}: every task a colour of its own");
        // Colours clear of the cycle's, and how many of the others have one.
        let near = |c: visualizer::palette::Rgb| cycle.iter().any(|&k| difference(c, m.task_colour(k)) < DISTINCT);
        let clear_left = (0..visualizer::palette::TASK_COLOURS)
            .map(visualizer::palette::task)
            .filter(|&c| !near(c) && !colours.contains(&c.hex()))
            .count();
        for t in (0..n).filter(|t| !cycle.contains(t)) {
            if near(m.task_colour(t)) {
                assert_eq!(
                    clear_left, 0,
                    "{name}: task {t} passes for a cycle task while {clear_left} clear colours are left"
                );
            }
        }
    }
}

#[test]
fn past_27_tasks_no_task_passes_for_one_of_the_cycle_nor_the_graphs_tasks_for_one_another() {
    use visualizer::palette::{self, difference, DISTINCT};
    // 30 callers, seed 0: 42 tasks, 5 in the cycle, 8 more blocked behind it
    // in the wait-for graph. By rank, main (blocked behind it) had a pale
    // cyan beside caller-24's cyan in the cycle, ΔE 11.
    let trace = ttrpc_trace(&[("server", "v1.0.2"), ("client", "v1.2.3"), ("callers", "30")], 0);
    let m = Model::new(&trace).unwrap();
    let n = trace.tasks.len() as u32;
    assert!(n > palette::TASK_COLOURS, "{n} tasks");
    let cycle = m.cycle_tasks();
    let drawn = visualizer::waitfor::Graph::new(&m).tasks();
    assert!(drawn.len() > cycle.len() && drawn.contains(&0), "{drawn:?}");
    let (a, b, _) = Window::Auto.resolve(&m).unwrap();
    let windows = [m.coloured_for(a, b), m.coloured_for(0, m.end)];
    let name = |t: u32| &trace.tasks[t as usize].name;
    for model in std::iter::once(&m).chain(windows.iter().flatten()) {
        let delta = |s: u32, t: u32| difference(model.task_colour(s), model.task_colour(t));
        for (i, &s) in drawn.iter().enumerate() {
            for &t in &drawn[i + 1..] {
                assert!(delta(s, t) >= DISTINCT, "graph: {} and {}: ΔE {}", name(s), name(t), delta(s, t));
            }
        }
        // Every task is drawn in the timeline, and the cycle's are the
        // ones it is about.
        for t in (0..n).filter(|t| !cycle.contains(t)) {
            for &c in &cycle {
                assert!(delta(t, c) >= DISTINCT, "{} and {} of the cycle: ΔE {}", name(t), name(c), delta(t, c));
            }
        }
    }
}

/// Past 27 tasks colours repeat, but not between neighbours of a cycle
/// (one lane, one box of the ring apart): 30 philosophers (seed 35, the
/// first `hunt` finds deadlocking) gave philosopher-26 and philosopher-27
/// one colour, and philosopher-29 a dark indigo beside philosopher-0's
/// indigo, which it waits for (ΔE 11).
#[test]
fn past_27_tasks_no_two_neighbours_of_a_cycle_share_a_colour() {
    use visualizer::palette::{difference, DISTINCT};
    let params = [("philosophers".to_string(), "30".to_string())];
    let model = sim::models::find("philosophers").unwrap().configure(&params).unwrap();
    let trace = model.run(35, true).trace.unwrap();
    assert_eq!(trace.meta.verdict, "deadlock");
    let m = Model::new(&trace).unwrap();
    let cycle = m.cycle_tasks();
    assert_eq!(cycle.len(), 30);
    let (a, b, _) = Window::Auto.resolve(&m).unwrap();
    let windows = [m.coloured_for(a, b), m.coloured_for(0, m.end)];
    for model in std::iter::once(&m).chain(windows.iter().flatten()) {
        for (i, &t) in cycle.iter().enumerate() {
            let next = cycle[(i + 1) % cycle.len()];
            let delta = difference(model.task_colour(t), model.task_colour(next));
            let names = (m.task_name(t), m.task_name(next));
            assert!(delta >= DISTINCT, "{names:?}, neighbours in the cycle: ΔE {delta}");
        }
    }
}

#[test]
fn a_window_of_a_trace_of_many_tasks_gives_its_longest_lock_holders_their_own_colours() {
    let trace = ttrpc_trace(&[("client", "v1.2.3"), ("callers", "200")], 7);
    let m = Model::new(&trace).unwrap();
    let drawn = visualizer::waitfor::Graph::new(&m).tasks();
    let cycle: Vec<u32> = trace.deadlock.as_ref().expect("seed 7 deadlocks").cycle.iter().map(|b| b.task).collect();
    // The whole run (`--window all`): the tasks that held locks longest,
    // most of them long before the end, are what a locks chart draws.
    let all = m.coloured_for(0, m.end).expect("other colours than the end's");
    let held = |t: u32| -> u64 { m.tasks[t as usize].holds.iter().map(|h| h.end - h.start + 1).sum() };
    let mut holders: Vec<u32> =
        (0..trace.tasks.len() as u32).filter(|t| !drawn.contains(t) && !cycle.contains(t)).collect();
    holders.sort_by_key(|&t| (std::cmp::Reverse(held(t)), t));
    let room = colours_before_repeats(&m, &cycle) - drawn.iter().chain(&cycle).collect::<BTreeSet<_>>().len();
    let top = &holders[..room];
    assert!(held(top[room - 1]) > 0, "fewer holders than colours: {top:?}");
    let colours = |m: &Model, ts: &[u32]| ts.iter().map(|&t| m.task_colour(t).hex()).collect::<BTreeSet<_>>();
    assert_eq!(colours(&all, top).len(), room, "the longest holders of the run differ in colour");
    // Colours given for the end repeat among them; the wait-for graph's
    // tasks (and the cycle's) keep their colours in every window.
    assert!(colours(&m, top).len() < room, "{top:?}");
    for &t in drawn.iter().chain(&cycle) {
        assert_eq!(all.task_colour(t), m.task_colour(t), "task {t}");
    }
    // Past 27 the colours repeat, but never the cycle's: no other task of
    // the 200-odd passes for one of it, in any window.
    for model in [&m, &all] {
        let cycle_colours = colours(model, &cycle);
        assert_eq!(cycle_colours.len(), cycle.len());
        for t in (0..trace.tasks.len() as u32).filter(|t| !cycle.contains(t)) {
            assert!(!cycle_colours.contains(&model.task_colour(t).hex()), "task {t} has a colour of the cycle");
        }
    }
    // A trace of few tasks has one set of colours.
    let abba = committed_trace("abba-deadlock.json");
    assert!(Model::new(&abba).unwrap().coloured_for(0, 1).is_none());
}

#[test]
fn notes_under_a_narrow_chart_go_on_over_lines_instead_of_being_cut() {
    // 200 callers, seed 7: a long run (the auto window is its last steps)
    // with more tasks alive than lanes, drawn at the narrowest width.
    let trace = ttrpc_trace(&[("client", "v1.2.3"), ("callers", "200")], 7);
    let opts = Options { width: Options::MIN_WIDTH, ..Options::default() };
    for chart in [Chart::Timeline, Chart::Locks] {
        let texts = check_svg(&render(&trace, chart, Format::Svg, &opts), opts.width);
        let at = texts.iter().position(|t| t.starts_with("window auto")).unwrap_or_else(|| panic!("{texts:?}"));
        let notes = texts[at..].iter().take_while(|t| !["running", "ready", "blocked"].contains(&t.as_str()));
        let notes: Vec<&String> = notes.collect();
        assert!(notes.iter().all(|t| !t.ends_with('…')), "{chart:?}: {notes:?}");
        let joined = notes.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(" ");
        assert!(joined.contains("ending at the deadlock"), "{chart:?}: {joined}");
    }
}

#[test]
fn a_frame_too_long_for_a_wait_for_node_goes_on_two_lines_whole() {
    // Flink's channel state writer waits in a frame whose function and file
    // are 90 characters together: once cut to "…eWriteRequestExecutorImpl.java:96)",
    // which dropped the function.
    let trace = committed_trace("flink-1.13.1-self-assign-clear-failure.json");
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &Options::default()), Options::WIDTH);
    for line in ["at ChannelStateWriteRequestExecutorImpl.loop", "(ChannelStateWriteRequestExecutorImpl.java:96)"] {
        assert!(texts.iter().any(|t| t == line), "no {line}: {texts:?}");
    }
    // The title words the verdict as the reports do.
    assert!(texts.iter().any(|t| t == "· invariant violation"), "{texts:?}");
}

#[test]
fn a_join_names_the_task_it_waits_for() {
    // ttrpc seed 7: main joins caller-0 (the first caller, still blocked) at the end.
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let joined =
        trace.events.iter().rev().find(|e| e.task == 0 && e.op.as_deref() == Some("join")).and_then(|e| e.peer);
    let name = &trace.tasks[joined.expect("main blocks in a join") as usize].name;
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), Options::WIDTH);
    let want = format!("join {name}");
    // In the final column and on the blocked stretch.
    assert_eq!(texts.iter().filter(|t| **t == want).count(), 2, "no {want} twice: {texts:?}");
}

#[test]
fn every_grid_line_has_its_tick_on_the_axis() {
    // At 600 px the Flink pipeline's locks chart ends at 58.5 µs, and the
    // label of the round tick at 50 µs gives way to the end's: the tick's
    // mark on the axis stays with its grid line.
    let trace = committed_trace("flink-1.13.1-pipeline-deadlock.json");
    for chart in [Chart::Timeline, Chart::Locks] {
        for width in [600, 1200] {
            let opts = Options { width, ..Options::default() };
            let svg = String::from_utf8(render(&trace, chart, Format::Svg, &opts)).unwrap();
            let xs = |pred: &dyn Fn(&str) -> bool| -> BTreeSet<String> {
                svg.split("<rect ")
                    .skip(1)
                    .filter(|r| r.contains("width=\"1\"") && pred(r))
                    .map(|r| r.split('"').nth(1).unwrap().to_string())
                    .collect()
            };
            let grid = xs(&|r| r.contains("#E4E4E4") && !r.contains("height=\"6\""));
            let marks = xs(&|r| r.contains("height=\"6\""));
            assert!(!grid.is_empty() && grid.is_subset(&marks), "{chart:?} {width}: grid {grid:?}, marks {marks:?}");
        }
    }
}

#[test]
fn a_blocked_stretch_in_the_pipes_chart_is_banded_in_its_tasks_colour() {
    // ttrpc #72 (server v1.1.0, client v1.0.2, seed 0): Client.run ends
    // blocked writing to client->server.
    let trace = committed_trace("ttrpc-s1.1.0-c1.0.2-deadlock.json");
    let m = Model::new(&trace).unwrap();
    let client = trace.tasks.iter().position(|t| t.name == "Client.run").unwrap() as u32;
    let colour = m.task_colour(client).hex();
    let svg = String::from_utf8(render(&trace, Chart::Pipes, Format::Svg, &Options::default())).unwrap();
    // A band is 4 px high, along the whole stretch (writes and reads marks
    // in the same colour are taller); the final column has one more for
    // the write Client.run is still blocked in.
    let bands =
        svg.split("<rect ").filter(|r| r.contains("height=\"4\"") && r.contains(&format!("fill=\"{colour}\""))).count();
    let all = &m.tasks[client as usize].blocks;
    let blocks = all.iter().filter(|b| b.op == "write").count();
    assert!(all.last().is_some_and(|b| b.open && b.op == "write"));
    assert!(blocks > 0 && bands == blocks + 1, "{bands} bands for {blocks} blocked writes of Client.run");
}

/// Every text of a scene, in drawing order.
fn scene_texts(scene: &visualizer::Scene) -> Vec<&str> {
    let texts = scene.items.iter().filter_map(|i| match i {
        visualizer::Item::Text { text, .. } => Some(text.as_str()),
        _ => None,
    });
    texts.collect()
}

/// The y of each lane's name in a timeline scene (bold, at the left), by name.
fn lane_names(scene: &visualizer::Scene) -> Vec<(i32, String)> {
    let mut out: Vec<(i32, String)> = scene
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Text { x, y, text, bold: true, .. } if *x < 120 && *y > 150 => Some((*y, text.clone())),
            _ => None,
        })
        .collect();
    out.sort();
    out
}

#[test]
fn background_tasks_done_before_the_end_get_low_lanes() {
    // ttrpc v1.2.3, seed 7: six serverConn.run.func2 goroutines (#1 to
    // #11) served a request each and finished before the deadlock; #13 is
    // still alive at the end. Full lanes gave the six a third of the
    // figure's height.
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let m = Model::new(&trace).unwrap();
    let scene = visualizer::scene(&m, Chart::Timeline, &Options::default()).unwrap();
    let lanes = lane_names(&scene);
    let gap = |name: &str| {
        let i = lanes.iter().position(|(_, n)| n == name).unwrap_or_else(|| panic!("no lane {name}: {lanes:?}"));
        lanes[i + 1].0 - lanes[i].0
    };
    // Lane to lane, 22 px (the bar's 14 and 4 above and below it).
    for n in [1, 3, 5, 7, 9] {
        assert_eq!(gap(&format!("serverConn.run.func2#{n}")), 22, "{lanes:?}");
    }
    assert!(gap("caller-4") > 80, "{lanes:?}");
    // Tasks of the story keep full lanes, with their caption: the cycle's
    // background tasks, and #13, still alive at the end.
    let texts = scene_texts(&scene);
    let note = "6 background tasks that finished in the window, holding no lock, are drawn low";
    assert!(texts.contains(&note), "{texts:?}");
    assert_eq!(texts.iter().filter(|t| **t == "background task").count(), 4, "{texts:?}");
}

#[test]
fn tasks_select_the_timelines_lanes_in_the_order_named() {
    // ttrpc #72, server v1.0.2 and client v1.0.2: 16 tasks, the cycle
    // serverConn.run -> receiver.run -> Client.run -> serverConn.run.func1.
    let trace = committed_trace("ttrpc-s1.0.2-c1.0.2-deadlock.json");
    let m = Model::new(&trace).unwrap();
    let lanes = |tasks: &[&str]| {
        let opts = Options { tasks: tasks.iter().map(|t| t.to_string()).collect(), ..Options::default() };
        visualizer::scene(&m, Chart::Timeline, &opts)
    };
    let all = lane_names(&lanes(&[]).unwrap());
    assert!(all.len() > 10 && all.iter().any(|(_, n)| n == "serverConn.run"), "{all:?}");

    // Named first, then a pattern's tasks in trace order; one named twice comes once.
    let s = lanes(&["caller-3", "Client.*", "caller-*"]).unwrap();
    let names: Vec<String> = lane_names(&s).into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["caller-3", "Client.run", "caller-0", "caller-1", "caller-2", "caller-4", "caller-5"]);
    let texts: Vec<&str> = s
        .items
        .iter()
        .filter_map(|i| if let visualizer::Item::Text { text, .. } = i { Some(text.as_str()) } else { None })
        .collect();
    assert!(texts.contains(&"7 of 16 tasks drawn, the ones selected"), "{texts:?}");
    // One task of the cycle is drawn: its tint, but no arrow (its peers have no lane).
    assert!(texts.contains(&"task in the deadlock cycle") && !texts.contains(&"waits for (held by)"), "{texts:?}");
    // Every task selected ('*'): still a selection, and the note says so.
    let s = lanes(&["*"]).unwrap();
    assert!(
        s.items.iter().any(
            |i| matches!(i, visualizer::Item::Text { text, .. } if text == "16 of 16 tasks drawn, the ones selected")
        ),
        "no note of the selection"
    );
    let s = lanes(&["caller-0"]).unwrap();
    let texts: Vec<&str> = s
        .items
        .iter()
        .filter_map(|i| if let visualizer::Item::Text { text, .. } = i { Some(text.as_str()) } else { None })
        .collect();
    assert!(!texts.contains(&"task in the deadlock cycle"), "no cycle task drawn, no cycle legend: {texts:?}");

    // The whole cycle, in the order of the report: its arrows too.
    let cycle = ["serverConn.run", "receiver.run", "Client.run", "serverConn.run.func1"];
    let s = lanes(&cycle).unwrap();
    assert_eq!(lane_names(&s).into_iter().map(|(_, n)| n).collect::<Vec<_>>(), cycle);
    // Pipe writes and selects: the arrows point at no holder.
    let legend = "waits for (released by)";
    assert!(s.items.iter().any(|i| matches!(i, visualizer::Item::Text { text, .. } if text == legend)));

    // Names no task has, and tasks not alive in the window.
    let e = lanes(&["caller-9"]).unwrap_err().0;
    assert!(
        e.starts_with("no task is named `caller-9` (the trace has main, serverConn.run, Client.run, caller-0"),
        "{e}"
    );
    assert!(e.ends_with(" and 4 more)"), "{e}");
    let e = lanes(&["worker-*"]).unwrap_err().0;
    assert!(e.starts_with("no task matches `worker-*`"), "{e}");
    // Task 11 runs in steps 27 to 33, task 13 in steps 68 to 81.
    let (t11, t13) = (&trace.tasks[11].name, &trace.tasks[13].name);
    let opts = Options { tasks: vec![t11.clone(), t13.clone()], window: Window::Last(20), ..Options::default() };
    let e = visualizer::scene(&m, Chart::Timeline, &opts).unwrap_err().0;
    assert!(
        e.starts_with("no task selected is alive in the window (") && e.ends_with(&format!("): {t11}, {t13}")),
        "{e}"
    );
    let opts = Options { window: Window::Steps(20, 40), ..opts };
    let s = visualizer::scene(&m, Chart::Timeline, &opts).unwrap();
    assert_eq!(lane_names(&s).into_iter().map(|(_, n)| n).collect::<Vec<_>>(), std::slice::from_ref(t11));
    assert!(s.items.iter().any(|i| matches!(i, visualizer::Item::Text { text, .. }
        if text == "1 of 16 tasks drawn, the ones selected; 1 of them not alive in the window")));
}

#[test]
fn a_title_replaces_the_first_line_and_keeps_how_to_reproduce_the_figure() {
    let trace = visualizer::load(&committed()).unwrap();
    let texts = |title: Option<&str>, chart: Chart| {
        let opts = Options { title: title.map(str::to_string), ..Options::default() };
        check_svg(&render(&trace, chart, Format::Svg, &opts), opts.width)
    };
    for chart in Chart::ALL.into_iter().filter(|c| *c != Chart::Pipes) {
        let own = texts(None, chart);
        let mine = texts(Some("Figure 3: AB/BA"), chart);
        assert!(own.iter().any(|t| t.ends_with("abba · seed 0")), "{chart:?}: {own:?}");
        assert!(mine.contains(&"Figure 3: AB/BA".to_string()), "{chart:?}: {mine:?}");
        assert!(!mine.iter().any(|t| t.contains("abba · seed 0") || t == "· deadlock"), "{chart:?}: {mine:?}");
        let what = match chart {
            Chart::Timeline => "Timeline",
            Chart::Locks => "Locks",
            _ => "Wait-for graph",
        };
        // The chart, model and seed (what makes the figure again) open the
        // second line; the parameters and the outcome stay.
        let kept = format!("{what} · abba · seed 0").replace(' ', "\u{a0}") + "  ·  fixed=false rounds=3";
        assert!(mine.iter().any(|t| t.starts_with(&kept)), "{chart:?}: {kept:?} in {mine:?}");
        assert!(mine.iter().any(|t| t.starts_with("deadlock (global, 2 tasks in the cycle)")), "{chart:?}: {mine:?}");
    }
    // A long title wraps over two lines, then is cut.
    let long = "word ".repeat(60);
    let lines: Vec<String> =
        texts(Some(&long), Chart::Timeline).into_iter().filter(|t| t.starts_with("word")).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[1].ends_with('…') && lines[0].split(' ').count() > 10, "{lines:?}");
    let opts = Options { title: Some(" ".into()), ..Options::default() };
    assert!(visualizer::render(&trace, Chart::Timeline, Format::Png, &opts).unwrap_err().0.contains("title is empty"));
    // A control character is no text to draw, nor allowed in XML.
    let opts = Options { title: Some("bell\u{7}".into()), ..Options::default() };
    let e = visualizer::render(&trace, Chart::Timeline, Format::Svg, &opts).unwrap_err().0;
    assert_eq!(e, "the title has a control character (U+0007); it is plain text");
}

#[test]
fn scale_draws_the_same_picture_with_more_pixels() {
    let trace = visualizer::load(&committed()).unwrap();
    let m = Model::new(&trace).unwrap();
    for chart in [Chart::Timeline, Chart::Locks, Chart::WaitFor] {
        let one = visualizer::scene(&m, chart, &Options::default()).unwrap();
        let two = one.scaled(2);
        assert_eq!((two.width, two.height), (2 * one.width, 2 * one.height));
        assert_eq!(two.items.len(), one.items.len());

        let png1 = render(&trace, chart, Format::Png, &Options::default());
        let opts = Options { scale: 2, ..Options::default() };
        let png2 = render(&trace, chart, Format::Png, &opts);
        let (p1, p2) = (check_png(&png1, one.width), check_png(&png2, two.width));
        assert_eq!(p2.height, 2 * p1.height);
        // The same share of the picture is inked, give or take anti-aliasing.
        assert!(p1.inked.abs_diff(p2.inked) <= 2, "{chart:?}: {}% against {}%", p1.inked, p2.inked);
        assert_eq!(png2, render(&trace, chart, Format::Png, &opts), "{chart:?}: not deterministic");
        // The density says 192 dpi (7559 pixels a metre); at scale 1 there is none.
        let dims = png::Decoder::new(std::io::Cursor::new(&png2)).read_info().unwrap().info().pixel_dims;
        assert_eq!(dims.map(|d| (d.xppu, d.yppu, d.unit)), Some((7559, 7559, png::Unit::Meter)));
        assert!(png::Decoder::new(std::io::Cursor::new(&png1)).read_info().unwrap().info().pixel_dims.is_none());
    }
    // An SVG takes no scale: the same bytes.
    let opts = Options { scale: 3, ..Options::default() };
    assert_eq!(
        render(&trace, Chart::Timeline, Format::Svg, &opts),
        render(&trace, Chart::Timeline, Format::Svg, &Options::default())
    );
    for (scale, width, why) in [
        (0, 1200, "scale 0 is out of range (1..=4)"),
        (5, 1200, "scale 5 is out of range (1..=4)"),
        (2, 4001, "width 4001 at scale 2 makes a picture 8002 pixels wide, more than 8000"),
    ] {
        let opts = Options { scale, width, ..Options::default() };
        assert_eq!(visualizer::render(&trace, Chart::Timeline, Format::Png, &opts).unwrap_err().0, why);
    }
}

#[test]
fn the_timeline_legend_names_the_states_drawn_only() {
    let legend = |trace: &Trace, tasks: &[&str]| {
        let opts = Options { tasks: tasks.iter().map(|t| t.to_string()).collect(), ..Options::default() };
        let texts = check_svg(&render(trace, Chart::Timeline, Format::Svg, &opts), opts.width);
        ["running", "ready", "blocked", "finished"]
            .into_iter()
            .filter(|s| texts.iter().any(|t| t == s))
            .collect::<Vec<_>>()
    };
    // FLINK-22946: nobody finishes before the deadlock.
    assert_eq!(legend(&committed_trace("flink-1.13.1-minimal-deadlock.json"), &[]), ["running", "ready", "blocked"]);
    // ttrpc #72: three callers of six finish their calls, the cycle's four goroutines do not.
    let ttrpc = committed_trace("ttrpc-s1.0.2-c1.0.2-deadlock.json");
    assert_eq!(legend(&ttrpc, &[]), ["running", "ready", "blocked", "finished"]);
    assert_eq!(
        legend(&ttrpc, &["serverConn.run", "receiver.run", "Client.run", "serverConn.run.func1"]),
        ["running", "ready", "blocked"]
    );
}

/// The timeline's legend explains pale lock rows only where one shows
/// wider than a sliver, as the locks chart's does: abba's T1 takes A in the
/// deadlock's step, a 1-px pale column at the plot's edge (the final column
/// shows the hold), which "read-locked, or held part of the time" explained
/// alone.
#[test]
fn the_timeline_legend_explains_pale_lock_rows_only_where_they_show() {
    let pale = "read-locked, or held part of the time";
    let legend = |trace: &Trace| {
        let opts = Options::default();
        check_svg(&render(trace, Chart::Timeline, Format::Svg, &opts), opts.width).iter().any(|t| t == pale)
    };
    let abba = visualizer::load(&committed()).unwrap();
    let m = Model::new(&abba).unwrap();
    let scene = visualizer::scene(&m, Chart::Timeline, &Options::default()).unwrap();
    let slivers = scene
        .items
        .iter()
        .filter(|i| matches!(i, visualizer::Item::Rect { x0, x1, paint, .. } if paint.alpha == 110 && x1 - x0 < 3));
    assert_eq!(slivers.count(), 1, "abba's pale sliver");
    assert!(!legend(&abba));
    // ttrpc v1.2.3's Client.run read-locks streamLock over many steps.
    assert!(legend(&committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json")));
}

#[test]
fn over_a_hundred_tasks_selected_the_first_named_get_the_lanes() {
    let trace = ttrpc_trace(&[("client", "v1.2.3"), ("callers", "200")], 7);
    let m = Model::new(&trace).unwrap();
    let opts = Options {
        tasks: vec!["caller-199".into(), "caller-198".into(), "caller-*".into()],
        window: Window::All,
        ..Options::default()
    };
    let s = visualizer::scene(&m, Chart::Timeline, &opts).unwrap();
    let names: Vec<String> = lane_names(&s).into_iter().map(|(_, n)| n).collect();
    let mut want = vec!["caller-199".to_string(), "caller-198".to_string()];
    want.extend((0..98).map(|i| format!("caller-{i}")));
    assert_eq!(names, want);
    let note = format!(
        "100 of {} tasks drawn, the ones selected; 100 more alive, over 100: the first 100 named are drawn",
        trace.tasks.len()
    );
    assert!(s.items.iter().any(|i| matches!(i, visualizer::Item::Text { text, .. } if *text == note)), "{note}");
}

#[test]
fn who_else_releases_a_resource_of_the_cycle_is_written_clear_of_its_edges() {
    // At 600 px the ttrpc #72 cycle snakes down one column: the edge out of
    // the select runs straight down from its middle.
    let trace = committed_trace("ttrpc-s1.0.2-c1.0.2-deadlock.json");
    let m = Model::new(&trace).unwrap();
    for width in [600, 700, 1200] {
        let s = visualizer::scene(&m, Chart::WaitFor, &Options { width, ..Options::default() }).unwrap();
        let (x, y, anchor, n) = s
            .items
            .iter()
            .find_map(|i| match i {
                visualizer::Item::Text { x, y, text, anchor, .. } if text == "also released by: main" => {
                    Some((*x, *y, *anchor, text.chars().count() as i32))
                }
                _ => None,
            })
            .expect("the note");
        // Its span, generously: 7 px a character at this size.
        let span = match anchor {
            visualizer::Anchor::Left => (x, x + 7 * n),
            visualizer::Anchor::Right => (x - 7 * n, x),
            visualizer::Anchor::Center => (x - 7 * n / 2, x + 7 * n / 2),
        };
        for i in &s.items {
            let visualizer::Item::Path { points, .. } = i else { continue };
            for w in points.windows(2) {
                let ((x0, y0), (x1, y1)) = (w[0], w[1]);
                // A vertical run through the text's line.
                let crosses = x0 == x1 && y0.min(y1) <= y && y0.max(y1) >= y - 10;
                assert!(
                    !(crosses && x0 > span.0 && x0 < span.1),
                    "{width} px: an edge at x {x0} runs through {span:?}"
                );
            }
        }
    }
}

#[test]
fn a_control_character_in_a_name_still_gives_a_well_formed_svg() {
    // A trace written by hand or by another tool may carry a tab or a bell
    // in a name; XML allows neither (but the tab) in a document.
    let mut trace = visualizer::load(&committed()).unwrap();
    trace.tasks[1].name = "T\u{7}1\tx".into();
    if let Some(d) = trace.deadlock.as_mut() {
        for b in d.cycle.iter_mut().filter(|b| b.task == 1) {
            b.name = trace.tasks[1].name.clone();
        }
    }
    for chart in [Chart::Timeline, Chart::Locks, Chart::WaitFor] {
        // check_svg parses the document.
        let texts = check_svg(&render(&trace, chart, Format::Svg, &Options::default()), Options::WIDTH);
        assert!(texts.iter().any(|t| t.contains("T\u{fffd}1\u{fffd}x")), "{chart:?}: {texts:?}");
    }
}

#[test]
fn no_arrow_runs_through_a_label_of_the_deadlock_strip() {
    // 200 ttrpc callers: a chart of many lanes, packed close, with the
    // cycle's lanes at the top and the bottom.
    let trace = ttrpc_trace(&[("callers", "200")], 3);
    let m = Model::new(&trace).unwrap();
    let s = visualizer::scene(&m, Chart::Timeline, &Options::default()).unwrap();
    let red = visualizer::palette::DEADLOCK;
    // The arrows: paths of 4 points, red, 2 px.
    let arrows: Vec<&Vec<(i32, i32)>> = s
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Path { points, paint, width: 2 } if points.len() == 4 && paint.rgb == red => Some(points),
            _ => None,
        })
        .collect();
    assert_eq!(arrows.len(), 4, "the cycle's four arrows");
    let start = arrows[0][0].0;
    // Their labels: red texts from 6 px right of where the arrows start.
    let labels: Vec<(i32, &str)> = s
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Text { x, y, text, paint, .. } if *x == start + 6 && paint.rgb == red => {
                Some((*y, text.as_str()))
            }
            _ => None,
        })
        .collect();
    assert!(!labels.is_empty());
    for (y, text) in &labels {
        // A label's band, from above its capitals to its baseline.
        let (top, bottom) = (y - 9, y + 1);
        for a in &arrows {
            let (out_y, in_y) = (a[0].1, a[3].1);
            assert!(!(out_y + 1 >= top && out_y <= bottom), "{text:?} at {y}: a start line at {out_y}");
            assert!(!(in_y + 5 >= top && in_y - 5 <= bottom), "{text:?} at {y}: an arrow head at {in_y}");
        }
    }
}

#[test]
fn the_timeline_marks_the_notify_a_report_names() {
    use sim::sync::Monitor;
    // A notify before the wait: the report's last notify woke nobody, and
    // the notifier's lane has the lost mark at it, with its legend entry.
    let lost = sim::Sim::new(0).record(true).run(|| async {
        let ready = Monitor::new("ready");
        sim::spawn("waiter", async move {
            sim::time::sleep(1_000).await;
            let g = ready.enter().await;
            g.wait().await;
            g.exit().await;
        });
        sim::spawn("notifier", async move {
            let g = ready.enter().await;
            g.notify();
            g.exit().await;
        });
    });
    let trace = *lost.trace.unwrap();
    let m = Model::new(&trace).unwrap();
    let names = &trace.tasks;
    let marks: Vec<(&str, visualizer::model::MarkKind)> = m
        .tasks
        .iter()
        .enumerate()
        .flat_map(|(t, tt)| tt.marks.iter().map(move |mk| (names[t].name.as_str(), mk.kind)))
        .collect();
    assert_eq!(marks, vec![("notifier", visualizer::model::MarkKind::LostNotify)]);
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), Options::default().width);
    assert!(texts.iter().any(|t| t == "last notify, lost (nobody waited)"), "{texts:?}");
    assert!(!texts.iter().any(|t| t == "last notify of a monitor waited on"), "{texts:?}");
    // Its lane left out: a note says where the mark went.
    let opts = Options { tasks: vec!["waiter".to_string()], ..Options::default() };
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), opts.width);
    assert!(
        texts.iter().any(|t| t.starts_with("The report's last notify of \"ready\"")
            && t.contains("lost: nobody waited) is on a lane not drawn")),
        "{texts:?}"
    );
    // A notify that woke a waiter which then waited again: the plain mark.
    let woke = sim::Sim::new(0).record(true).run(|| async {
        let m = Monitor::new("m");
        sim::spawn("W", async move {
            let g = m.enter().await;
            g.wait().await; // woken by main's notify, then waits again
            g.wait().await;
            g.exit().await;
        });
        sim::time::sleep(1_000).await;
        let g = m.enter().await;
        g.notify();
        g.exit().await;
    });
    let trace = *woke.trace.unwrap();
    let d = trace.deadlock.as_ref().expect("W waits for good");
    assert_eq!(d.notifies[0].last.as_ref().map(|l| l.woke.clone()), Some(vec!["W".to_string()]));
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), Options::default().width);
    assert!(texts.iter().any(|t| t == "last notify of a monitor waited on"), "{texts:?}");
    // Two notifies in one step (the first wakes W, the second nobody):
    // only the last is the report's, and marked.
    let twice = sim::Sim::new(0).record(true).run(|| async {
        let m = Monitor::new("m");
        sim::spawn("W", async move {
            let g = m.enter().await;
            g.wait().await;
            g.wait().await;
            g.exit().await;
        });
        sim::time::sleep(1_000).await;
        let g = m.enter().await;
        g.notify();
        g.notify();
        g.exit().await;
    });
    let trace = *twice.trace.unwrap();
    let m = Model::new(&trace).unwrap();
    let kinds: Vec<visualizer::model::MarkKind> =
        m.tasks.iter().flat_map(|t| t.marks.iter().map(|mk| mk.kind)).collect();
    assert_eq!(kinds, vec![visualizer::model::MarkKind::LostNotify]);
}

/// A timeline's state bars on a time axis from `t0` to `t1` ns: `x(t)`, and
/// each lane's colour (running, ready or blocked) at each pixel column of
/// the plot, by the lane's task name.
struct Bars {
    left: i32,
    right: i32,
    t0: u64,
    t1: u64,
    lanes: std::collections::BTreeMap<String, Vec<Option<visualizer::palette::Rgb>>>,
}

impl Bars {
    fn new(scene: &visualizer::Scene, names: &[&str], (t0, t1): (u64, u64)) -> Bars {
        use visualizer::palette::{BLOCKED, READY, RUNNING};
        let (left, right) = axis_band(scene);
        let mut lanes = std::collections::BTreeMap::new();
        for &name in names {
            let ty = scene
                .items
                .iter()
                .find_map(|i| match i {
                    visualizer::Item::Text { y, text, .. } if text == name => Some(*y),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("no lane for {name}"));
            let mut cols = vec![None; (right - left) as usize];
            for i in &scene.items {
                if let visualizer::Item::Rect { x0, y0, x1, y1, paint } = i {
                    if [RUNNING, READY, BLOCKED].contains(&paint.rgb) && *y0 < ty && ty < *y1 && *x1 <= right {
                        for c in (*x0).max(left)..*x1 {
                            cols[(c - left) as usize] = Some(paint.rgb);
                        }
                    }
                }
            }
            lanes.insert(name.to_string(), cols);
        }
        Bars { left, right, t0, t1, lanes }
    }

    fn x(&self, t: u64) -> i32 {
        let (w, span) = ((self.right - self.left) as i64, (self.t1 - self.t0) as i64);
        self.left + (((t - self.t0) as i64 * w + span / 2) / span) as i32
    }

    /// The lane's columns strictly inside `a..b` ns (a pixel off each end).
    fn inside(&self, name: &str, a: u64, b: u64) -> &[Option<visualizer::palette::Rgb>] {
        &self.lanes[name][(self.x(a) + 1 - self.left) as usize..(self.x(b) - 1 - self.left) as usize]
    }
}

#[test]
fn the_timeline_draws_clock_jumps_in_virtual_time() {
    // When no task can run, the engine moves the clock to the next
    // sleeper's deadline and wakes it in the same step. The timeline put a
    // step at its first event's time and the wake at its step: a timer's
    // 800 ns sleep was drawn as the 100 ns to its step's end, a task ran
    // across the jump, and a sleep alone in its step was not drawn at all.
    // All from the trace's events here: each step from the end of the one
    // before (or its clock jump) to its own time, and each sleep to its
    // deadline.
    use visualizer::palette::{BLOCKED, READY, RUNNING};
    let trace = common::clock_jump_trace();
    let step_ns = 100;
    let mut steps: Vec<(u64, u64)> = Vec::new(); // each step's start and end
    let mut jumps: Vec<(u64, u64)> = Vec::new(); // from, to
    let mut resume = 0;
    for s in 1..=trace.meta.steps {
        let end = resume + step_ns;
        let events: Vec<_> = trace.events.iter().filter(|e| e.step == s).collect();
        assert!(events.iter().all(|e| e.time >= end), "step {s}");
        steps.push((resume, end));
        resume = events.iter().map(|e| e.time).max().unwrap_or(end);
        if resume > end {
            assert!(events.iter().filter(|e| e.time > end).all(|e| e.kind == sim::trace::EventKind::Wake));
            jumps.push((end, resume));
        }
    }
    assert_eq!(jumps, [(700, 1100), (1300, 1500), (2000, 2200)]);
    let sleeps: Vec<(u32, u64, u64)> = trace
        .events
        .iter()
        .filter(|e| e.kind == sim::trace::EventKind::Sleep)
        .map(|e| (e.task, e.time, e.time + e.amount.unwrap()))
        .collect();
    assert_eq!(sleeps.len(), 4);

    let m = Model::new(&trace).unwrap();
    let names: Vec<&str> = trace.tasks.iter().map(|t| t.name.as_str()).collect();
    let opts = Options { window: Window::All, ..Options::default() };
    let bars = Bars::new(&visualizer::timeline::scene(&m, &opts).unwrap(), &names, (0, trace.meta.time_ns));
    for (t, &name) in names.iter().enumerate() {
        // It runs in each of its steps, and nowhere else.
        let mine: Vec<(u64, u64)> =
            steps.iter().zip(&trace.schedule).filter(|(_, &k)| k as usize == t).map(|(s, _)| *s).collect();
        for &(s0, s1) in &mine {
            assert!(bars.inside(name, s0, s1).iter().all(|c| *c == Some(RUNNING)), "{name}: step {s0}..{s1}");
        }
        for (c, col) in bars.lanes[name].iter().enumerate() {
            let cx = bars.left + c as i32;
            if *col == Some(RUNNING) {
                let near = mine.iter().any(|&(s0, s1)| cx >= bars.x(s0) - 1 && cx <= bars.x(s1) + 1);
                assert!(near, "{name} running at x {cx}, in none of its steps {mine:?}");
            }
        }
        // Nothing runs or is ready while the clock jumps.
        for &(j0, j1) in &jumps {
            let during = bars.inside(name, j0, j1);
            assert!(during.iter().all(|c| !matches!(c, Some(RUNNING | READY))), "{name} during {j0}..{j1}");
        }
        // A sleep lasts until its deadline.
        for &(_, s0, s1) in sleeps.iter().filter(|s| s.0 as usize == t) {
            assert!(bars.inside(name, s0, s1).iter().all(|c| *c == Some(BLOCKED)), "{name} asleep {s0}..{s1}");
        }
    }
    // A window from the end of step 7, where the clock jumped (700 ns),
    // to step 9 (1300 ns): the worker sleeps until 1100 ns, then runs;
    // the timer sleeps throughout (its sleep began before the window).
    let opts = Options { window: Window::Steps(8, 9), ..Options::default() };
    let bars = Bars::new(&visualizer::timeline::scene(&m, &opts).unwrap(), &["worker", "timer"], (700, 1300));
    assert!(bars.inside("worker", 700, 1100).iter().all(|c| *c == Some(BLOCKED)));
    assert!(bars.inside("worker", 1100, 1300).iter().all(|c| *c == Some(RUNNING)));
    assert!(bars.inside("timer", 700, 1300).iter().all(|c| *c == Some(BLOCKED)));
}

#[test]
fn perfetto_keeps_clock_jumps() {
    // The same trace exported: each sleep lasts until its deadline, and no
    // running slice reaches into a clock jump (nor, from a sleep alone in
    // its step, over the sleep).
    let trace = common::clock_jump_trace();
    let json: serde_json::Value = serde_json::from_str(&visualizer::perfetto::export(&trace).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let worker = events
        .iter()
        .find(|e| e["name"] == "thread_name" && e["args"]["name"] == "worker")
        .map(|e| e["tid"].clone())
        .unwrap();
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1000.0).round() as u64;
    let slices = |name: &str| -> Vec<(u64, u64)> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["name"] == name && e["tid"] == worker)
            .map(|e| (ns(&e["ts"]), ns(&e["ts"]) + ns(&e["dur"])))
            .collect()
    };
    // Its sleeps of 500, 300 and 200 ns; the last alone in step 14.
    assert_eq!(slices("wait (sleep)"), [(600, 1100), (1300, 1600), (2000, 2200)]);
    assert_eq!(slices("running"), [(200, 300), (500, 600), (1100, 1300), (1700, 1800), (1900, 2000), (2200, 2400)]);
}

/// The first deadlock of seeds from 0 of Go's recursive read lock: `reader`
/// read-locks `Store.mu` and, once `writer` has queued its write lock,
/// read-locks it again, behind the writer. With `others`, `other-reader`
/// also holds a read lock, waiting on a channel nobody will send on, and
/// `late-reader` comes to read-lock it after the writer queued.
fn recursive_rlock(others: bool) -> Trace {
    let run = (0..200)
        .map(|seed| {
            sim::Sim::new(seed).record(true).run(move || async move {
                let rw = sim::sync::RwMutex::new("Store.mu");
                sim::spawn("reader", async move {
                    let outer = rw.rlock().await;
                    sim::time::sleep(1_000).await;
                    let inner = rw.rlock().await;
                    inner.runlock().await;
                    outer.runlock().await;
                });
                if others {
                    let gate: sim::sync::Chan<()> = sim::sync::Chan::new("gate", 0);
                    let g = gate.clone();
                    sim::spawn("other-reader", async move {
                        let r = rw.rlock().await;
                        g.declare_receiver();
                        g.recv().await;
                        r.runlock().await;
                    });
                    sim::spawn("gatekeeper", async move {
                        gate.declare_sender();
                        sim::time::sleep(100_000).await;
                    });
                    sim::spawn("late-reader", async move {
                        sim::time::sleep(700).await;
                        let r = rw.rlock().await;
                        r.runlock().await;
                    });
                }
                sim::spawn("writer", async move {
                    sim::time::sleep(500).await;
                    let w = rw.lock().await;
                    w.unlock().await;
                });
            })
        })
        .find(|r| {
            r.trace.as_ref().and_then(|t| t.deadlock.as_ref()).is_some_and(|d| {
                d.cycle.len() == 2 && d.behind.len() == if others { 2 } else { 0 } && d.cycle[0].name == "reader"
            })
        })
        .expect("a deadlock");
    *run.trace.unwrap()
}

#[test]
fn a_reader_behind_a_queued_writer_is_not_drawn_held_by_it() {
    // The writer holds nothing: it is queued, and Go lets no reader in
    // past it. The report says so ("behind the writer waiting for it");
    // the wait-for graph drew `Store.mu` "held by" the writer. Its edge
    // now says what the report says, by the report's rule.
    let trace = recursive_rlock(false);
    let report = trace.deadlock.as_ref().unwrap().to_string();
    assert!(report.contains(r#"waiting to read-lock rwmutex "Store.mu", behind the writer waiting for it: "writer""#));
    assert!(report.contains(r#""writer" (task 2): waiting to lock rwmutex "Store.mu", held by "reader""#), "{report}");
    let g = visualizer::waitfor::Graph::new(&Model::new(&trace).unwrap());
    let edges: Vec<(&str, &str, &str)> =
        g.edges.iter().map(|e| (g.nodes[e.from].label.as_str(), e.label, g.nodes[e.to].label.as_str())).collect();
    assert_eq!(
        edges,
        [
            ("reader", "waits for", "Store.mu"),
            ("Store.mu", "behind queued writer", "writer"),
            ("writer", "waits for", "Store.mu"),
            ("Store.mu", "held by", "reader")
        ]
    );
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &Options::default()), Options::default().width);
    assert_eq!(texts.iter().filter(|t| *t == "behind queued writer").count(), 1, "{texts:?}");
    assert_eq!(texts.iter().filter(|t| *t == "held by").count(), 1, "{texts:?}");

    // Another reader holding it too, and one more queued behind the writer:
    // the notes and rows that list a lock's other releasers give each its
    // own label (they gave all the first edge's).
    let trace = recursive_rlock(true);
    let report = trace.deadlock.as_ref().unwrap().to_string();
    let line = report.lines().find(|l| l.starts_with(r#""late-reader""#)).unwrap();
    assert!(line.ends_with(r#"read-lock rwmutex "Store.mu", behind the writer waiting for it: "writer""#), "{report}");
    let texts = check_svg(&render(&trace, Chart::WaitFor, Format::Svg, &Options::default()), Options::default().width);
    assert!(texts.iter().any(|t| t == "also held by: other-reader"), "{texts:?}");
    let row = texts.iter().position(|t| t == "late-reader").unwrap();
    let listed: Vec<&str> = texts[row..]
        .iter()
        .map(String::as_str)
        .filter(|t| t.ends_with(':') || t.contains("reader") || *t == "writer")
        .collect();
    assert_eq!(
        listed[..],
        ["late-reader", "behind queued writer:", "writer", "held by:", "reader", "other-reader"],
        "{texts:?}"
    );
}

#[test]
fn perfetto_marks_every_outcome_and_names_the_run() {
    let marks = |t: &Trace| -> (serde_json::Value, Vec<serde_json::Value>) {
        let v: serde_json::Value = serde_json::from_str(&visualizer::perfetto::export(t).unwrap()).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let marks = ev.iter().filter(|e| e["ph"] == "i" && e["cat"] == "outcome").cloned().collect();
        (v["otherData"].clone(), marks)
    };
    // A broken invariant: one mark (the trace's one check event), where the
    // check is, with the message; the run named as the title block names it.
    // (Seed 5 breaks two in one step.)
    let params = [("fix".to_string(), "self-assign-clear".to_string())];
    let t = *sim::models::find("flink").unwrap().configure(&params).unwrap().run(5, true).trace.unwrap();
    let checks: Vec<_> = t.events.iter().filter(|e| e.kind == sim::trace::EventKind::Check).collect();
    assert_eq!(checks.len(), 1, "a second broken invariant in the failing step is not recorded");
    let (other, m) = marks(&t);
    assert_eq!(m.len(), 1, "{m:?}");
    assert_eq!(m[0]["name"], "invariant violated");
    assert_eq!(m[0]["ts"].as_f64().unwrap(), checks[0].time as f64 / 1000.0);
    assert_eq!(m[0]["args"]["message"], t.meta.message.as_str());
    assert_eq!(other["seed"], t.meta.seed);
    assert_eq!(other["strategy"], t.meta.strategy.as_str());
    assert!(other["params"].as_str().unwrap().contains("fix=self-assign-clear"), "{other}");
    assert_eq!(other["schedule"], t.meta.replay.as_str());
    // A shrunk run is named by its schedule: no seed.
    let (other, m) = marks(&committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock-shrunk.json"));
    assert_eq!((other["seed"].clone(), other["strategy"].clone()), (serde_json::Value::Null, "shrink".into()));
    assert!(m.is_empty(), "a deadlock has its own mark: {m:?}");
    // A panic, and the step limit.
    let panicked = sim::Sim::new(0).record(true).run(|| async { panic!("boom") });
    let (_, m) = marks(panicked.trace.as_ref().unwrap());
    assert_eq!(m.iter().map(|e| e["name"].as_str().unwrap()).collect::<Vec<_>>(), ["panic"]);
    let busy = sim::Sim::new(0).record(true).max_steps(50).run(|| async {
        loop {
            sim::yield_now().await;
        }
    });
    let t = busy.trace.unwrap();
    let (_, m) = marks(&t);
    assert_eq!(m.iter().map(|e| e["name"].as_str().unwrap()).collect::<Vec<_>>(), ["step limit"]);
    assert_eq!(m[0]["ts"].as_f64().unwrap(), t.meta.time_ns as f64 / 1000.0);
}

#[test]
fn a_clock_at_the_end_of_u64_is_drawn_as_the_trace_gives_it() {
    // u64::MAX stood for "no event at this step" when the step times were
    // worked out: a trace whose last step is at that time was drawn with
    // the times of the steps before extended (0 to 500 ns), under a title
    // that said 18 446 744 073.709 s.
    let mut trace = visualizer::load(&committed()).unwrap();
    for e in trace.events.iter_mut().filter(|e| e.step == 5) {
        e.time = u64::MAX;
    }
    trace.meta.time_ns = u64::MAX;
    trace.deadlock.as_mut().unwrap().time = u64::MAX;
    let m = visualizer::Model::new(&trace).unwrap();
    assert_eq!((m.times[4], m.times[5]), (400, u64::MAX));
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), Options::WIDTH);
    assert!(texts.iter().any(|t| t == "18\u{2009}446\u{2009}744\u{2009}073.709 s"), "{texts:?}");
}

#[test]
fn a_window_note_says_where_a_run_without_a_deadlock_ends() {
    let run = |model: &str, params: &[(&str, &str)], limit: u64| {
        let params: Vec<(String, String)> = params.iter().map(|&(k, v)| (k.into(), v.into())).collect();
        let m = sim::models::find(model).unwrap().configure(&params).unwrap();
        *m.run_with(sim::Sim::new(0).record(true).max_steps(limit)).trace.unwrap()
    };
    for (trace, ends) in [
        (run("abba", &[("fixed", "true")], 1_000_000), "ending at the last step"),
        (run("abba", &[("fixed", "true")], 10), "ending at the step limit"),
        (committed_trace("flink-1.13.1-self-assign-clear-failure.json"), "ending where the invariant fails"),
        (committed_trace("abba-deadlock.json"), "ending at the deadlock"),
    ] {
        let m = Model::new(&trace).unwrap();
        let (_, _, note) = Window::Last(3).resolve(&m).unwrap();
        assert!(note.ends_with(ends), "{}: {note}", trace.meta.verdict);
    }
}

#[test]
fn a_header_too_long_for_one_line_breaks_between_parameters_and_facts() {
    // Flink's parameters and the run's facts do not fit one line at the
    // default width: the facts go on a line of their own, together, not
    // "deadsim 0.1.0" left alone under the rest.
    let trace = committed_trace("flink-1.13.1-self-assign-clear-failure.json");
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &Options::default()), 1200);
    let texts: Vec<String> = texts.iter().map(|t| t.replace('\u{a0}', " ")).collect();
    let facts = texts.iter().find(|t| t.starts_with("strategy random")).unwrap_or_else(|| panic!("{texts:?}"));
    assert!(facts.ends_with(&format!("deadsim {}", trace.meta.deadsim)), "{facts}");
    assert!(texts.iter().any(|t| t.starts_with("flink-version=1.13.1") && t.ends_with("max-backlog=4")), "{texts:?}");
}

#[test]
fn the_cycle_window_draws_a_deadlocks_story_at_any_length() {
    // The flink pipeline trace has 585 steps, so `auto` draws it whole;
    // `cycle` draws the end, as `auto` would past 1000 steps.
    let trace = committed_trace("flink-1.13.1-pipeline-deadlock.json");
    let m = Model::new(&trace).unwrap();
    assert_eq!("cycle".parse::<Window>().unwrap(), Window::Cycle);
    let (a, b, note) = Window::Cycle.resolve(&m).unwrap();
    let (stop, start) = (m.stop(), m.story_start().unwrap());
    assert_eq!(b, stop, "{note}");
    assert!(a < start && start < b, "{a} {start} {b}");
    assert_eq!(b - a, (2 * (b - start)).max(Window::AUTO_MIN), "{note}");
    assert!(note.starts_with(&format!("window cycle (last {})", b - a)), "{note}");
    assert_eq!(Window::Auto.resolve(&m).unwrap().0, 0, "auto draws this trace whole");
    // A trace without a deadlock has no cycle to draw.
    let fixed = sim::models::find("abba").unwrap().configure(&[("fixed".into(), "true".into())]).unwrap();
    let trace = fixed.run(0, true).trace.unwrap();
    let e = Window::Cycle.resolve(&Model::new(&trace).unwrap()).unwrap_err();
    assert!(e.to_string().contains("window cycle: the trace has no deadlock to draw"), "{e}");
    // A deadlock with no cycle (a Done never called): the story of its blocked tasks.
    let run = sim::Sim::new(0).record(true).run(|| async {
        let wg = sim::sync::WaitGroup::new("wg");
        wg.add(1).await;
        let w = wg.clone();
        sim::spawn("worker", async move {
            w.declare_done();
            sim::yield_now().await;
        });
        wg.wait().await;
    });
    let trace = run.trace.unwrap();
    assert!(trace.deadlock.as_ref().is_some_and(|d| d.cycle.is_empty()), "{}", run.outcome);
    let m = Model::new(&trace).unwrap();
    let (_, b, note) = Window::Cycle.resolve(&m).unwrap();
    assert_eq!(b, m.stop(), "{note}");
}

#[test]
fn a_header_can_be_the_title_line_alone_or_nothing() {
    let trace = committed_trace("ttrpc-s1.0.2-c1.2.3-deadlock.json");
    assert_eq!("TITLE".parse::<Header>().unwrap(), Header::Title);
    assert!("tiny".parse::<Header>().unwrap_err().to_string().contains("expected full, title or none"));
    for chart in [Chart::Timeline, Chart::Locks, Chart::Pipes, Chart::WaitFor] {
        let draw = |header| {
            let opts = Options { header, ..Options::default() };
            let svg = render(&trace, chart, Format::Svg, &opts);
            let png = decode_png(&render(&trace, chart, Format::Png, &opts));
            (check_svg(&svg, Options::WIDTH), png.height)
        };
        let (full, full_h) = draw(Header::Full);
        let (title, title_h) = draw(Header::Title);
        let (none, none_h) = draw(Header::None);
        let what = chart.name();
        // The title line in the first two; the run's facts and outcome in the full one only.
        let head = full[0].clone();
        assert!(head.ends_with("ttrpc · seed 7"), "{what}: {head}");
        assert_eq!(title[0], head, "{what}");
        assert!(!none.contains(&head), "{what}: {none:?}");
        let facts = |texts: &[String]| texts.iter().any(|t| t.contains("deadsim\u{a0}0.1.0"));
        assert!(facts(&full) && !facts(&title) && !facts(&none), "{what}");
        let outcome =
            |texts: &[String]| texts.iter().any(|t| t.starts_with("deadlock (partial, 5 tasks in the cycle)"));
        assert!(outcome(&full) && !outcome(&title) && !outcome(&none), "{what}");
        // What is left out is height saved; the plot below is the same.
        assert!(none_h < title_h && title_h < full_h, "{what}: {none_h} {title_h} {full_h}");
        assert_eq!(full[full.len() - 3..], none[none.len() - 3..], "{what}");
    }
}

#[test]
fn a_lone_tick_is_labelled_as_exactly_as_its_value_needs() {
    // 1.6 to 2.4 µs at 600 px: one round tick, 2 µs, between the ends (it
    // read "2.000 µs", from no step).
    let trace = committed_trace("flink-1.13.1-pipeline-deadlock.json");
    let opts = Options { window: Window::Time(1_600, 2_400), width: 600, ..Options::default() };
    let texts = check_svg(&render(&trace, Chart::Timeline, Format::Svg, &opts), 600);
    let axis: Vec<&str> = texts.iter().map(String::as_str).filter(|t| t.ends_with(" µs")).collect();
    assert_eq!(axis, ["1.6 µs", "2 µs", "2.4 µs"], "{texts:?}");
}

#[test]
fn a_deadlock_without_a_cycle_is_drawn_from_what_caused_it() {
    // A leaker locks and returns holding the lock at about step 1300; main
    // locks it 200 steps later. The window shows the leaker's lock, not
    // only main's last 60 steps (nor refuses `cycle`).
    let run = sim::Sim::new(0).record(true).run(|| async {
        let mu = sim::sync::Mutex::new("mu");
        for _ in 0..1300 {
            sim::yield_now().await;
        }
        sim::spawn("leaker", async move { mu.lock().await.leak() }).join().await;
        for _ in 0..200 {
            sim::yield_now().await;
        }
        let g = mu.lock().await;
        g.unlock().await;
    });
    let trace = run.trace.unwrap();
    let d = trace.deadlock.as_ref().unwrap_or_else(|| panic!("{}", run.outcome));
    assert!(d.cycle.is_empty(), "{}", run.outcome);
    let m = Model::new(&trace).unwrap();
    let lock = trace.events.iter().find(|e| e.kind == sim::trace::EventKind::Lock).unwrap().step;
    assert!(m.end > 1400 && lock > 1200, "{} {lock}", m.end);
    for w in [Window::Auto, Window::Cycle] {
        let (a, b, note) = w.resolve(&m).unwrap();
        assert!(a < lock && b == m.stop(), "{w:?}: {note}");
    }
}

/// A chart's axis line: from `left` to `right`, at `y`.
fn axis_line(scene: &visualizer::Scene) -> (i32, i32, i32) {
    scene
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Rect { x0, y0, x1, y1, paint }
                if paint.rgb == visualizer::palette::AXIS && y1 - y0 == 1 =>
            {
                Some((*x0, *x1 - 1, *y0))
            }
            _ => None,
        })
        .max_by_key(|(a, b, _)| b - a)
        .unwrap()
}

/// The plot's band of a chart: its axis line, from `left` to `right`.
fn axis_band(scene: &visualizer::Scene) -> (i32, i32) {
    let (left, right, _) = axis_line(scene);
    (left, right)
}

/// The axis's labels: the texts that end in a unit of time, with their x.
fn time_labels(scene: &visualizer::Scene) -> Vec<(i32, String)> {
    scene
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Text { x, text, .. } if text.ends_with(" µs") || text.ends_with(" ns") => {
                Some((*x, text.clone()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn figures_aligned_with_each_other_share_their_plot_and_axis() {
    // A bug's figure and its fix's, drawn alone, each have their own plot
    // edges (the label and final columns, the arrow strip) and their own
    // axis (the bug's run is 5 steps, the fix's 27): stacked, one
    // microsecond had two widths. Each drawn with the other's frame, they
    // have one plot and one axis, and the bug's lanes stop where its run did.
    let abba = |fixed: &str| {
        let params = [("fixed".to_string(), fixed.to_string())];
        *sim::models::find("abba").unwrap().configure(&params).unwrap().run(0, true).trace.unwrap()
    };
    let (bug, fix) = (abba("false"), abba("true"));
    let (mb, mf) = (Model::new(&bug).unwrap(), Model::new(&fix).unwrap());
    assert!(bug.meta.time_ns < fix.meta.time_ns);
    let opts = Options::default();
    let with = |f: visualizer::Frame| Options { align: Some(f), ..opts.clone() };
    let scene = |m: &Model, chart, opts: &Options| visualizer::scene(m, chart, opts).unwrap();
    for chart in [Chart::Timeline, Chart::Locks] {
        let fb = visualizer::frame(&mb, chart, &opts).unwrap().unwrap();
        let ff = visualizer::frame(&mf, chart, &opts).unwrap().unwrap();
        assert_ne!((fb.x1, fb.left, fb.right), (ff.x1, ff.left, ff.right), "{chart:?}: alike alone already");
        let (sb, sf) = (scene(&mb, chart, &with(ff)), scene(&mf, chart, &with(fb)));
        assert_eq!(axis_band(&sb), axis_band(&sf), "{chart:?}");
        assert_eq!(time_labels(&sb), time_labels(&sf), "{chart:?}");
        // The axis the longer run's: its end label is the fix's own.
        let last = |s: &visualizer::Scene| time_labels(s).pop().unwrap().1;
        assert_eq!(last(&sb), last(&scene(&mf, chart, &opts)), "{chart:?}");
        let (ab, af) =
            (visualizer::frame(&mb, chart, &with(ff)).unwrap(), visualizer::frame(&mf, chart, &with(fb)).unwrap());
        assert_eq!(ab, af, "{chart:?}");
        // Aligned with itself, a chart is drawn as it is alone, but for the note.
        let note = |s: &visualizer::Scene| -> Vec<visualizer::Item> {
            s.items
                .iter()
                .filter(|i| !matches!(i, visualizer::Item::Text { text, .. } if text.starts_with("all ")))
                .cloned()
                .collect()
        };
        let (alone, itself) = (scene(&mb, chart, &opts), scene(&mb, chart, &with(fb)));
        assert_eq!(note(&alone), note(&itself), "{chart:?}");
        assert!(itself.items.iter().any(|i| matches!(i, visualizer::Item::Text { text, .. } if text == "all 5 steps; x axis shared with another trace")));
    }

    let frame_of = |m: &Model| visualizer::frame(m, Chart::Timeline, &opts).unwrap().unwrap();
    let t1 = fix.meta.time_ns;
    let names = ["T1", "T2"];
    let bars_b = Bars::new(&scene(&mb, Chart::Timeline, &with(frame_of(&mf))), &names, (0, t1));
    let bars_f = Bars::new(&scene(&mf, Chart::Timeline, &with(frame_of(&mb))), &names, (0, t1));
    assert_eq!((bars_b.left, bars_b.right), (bars_f.left, bars_f.right));
    let end = bars_b.x(bug.meta.time_ns);
    for name in names {
        let cols = &bars_b.lanes[name];
        let split = (end + 1 - bars_b.left) as usize;
        assert!(cols[split..].iter().all(Option::is_none), "{name}: drawn past the bug's end");
        assert!(cols[..split].iter().filter(|c| c.is_some()).count() > (end - bars_b.left) as usize / 2, "{name}");
        // The fix's lanes run on to the axis's end.
        assert!(bars_f.lanes[name][split..].iter().any(Option::is_some), "{name}");
    }

    // A window shorter than the shared axis: nothing of the trace is drawn
    // before the window's start either (the fix's last 3 steps begin at
    // 2.4 us; T1 ran from 2.3 us, which alone is cut at the plot's edge).
    let last3 = Options { window: Window::Last(3), ..opts.clone() };
    let own = visualizer::frame(&mf, Chart::Timeline, &last3).unwrap().unwrap();
    let other = visualizer::frame(&mb, Chart::Timeline, &last3).unwrap().unwrap();
    let both = Options { align: Some(other), ..last3.clone() };
    let u = visualizer::frame(&mf, Chart::Timeline, &both).unwrap().unwrap();
    assert!(u.x0 < own.x0, "{u:?} {own:?}");
    let bars = Bars::new(&scene(&mf, Chart::Timeline, &both), &["T1"], (u.x0, u.x1));
    let start = (bars.x(own.x0) - bars.left) as usize;
    let cols = &bars.lanes["T1"];
    assert!(cols[..start].iter().all(Option::is_none), "T1 drawn before its window, which starts at column {start}");
    assert!(cols[start..].iter().any(Option::is_some));
    // Nor is a lock's hold or wait outside it, nor its free band: the
    // locks chart of the same window draws from the window's start.
    let other_locks = visualizer::frame(&mb, Chart::Locks, &last3).unwrap();
    let locks = scene(&mf, Chart::Locks, &Options { align: other_locks, ..last3.clone() });
    let start_x = bars.x(own.x0);
    let (left, _) = axis_band(&locks);
    // (The grid's lines and the axis's ticks are the axis's, drawn along all of it.)
    let axis = [visualizer::palette::GRID, visualizer::palette::AXIS];
    for item in &locks.items {
        if let visualizer::Item::Rect { x0, x1, y0, paint, .. } = item {
            if *x0 >= left && *x1 < start_x && *y0 > 150 && !axis.contains(&paint.rgb) {
                panic!("drawn before the window at {start_x}: {item:?}");
            }
        }
    }

    // A window of one step at an end of the shared axis: the locks chart's
    // 'nothing happened' box stays inside the plot, not over the label
    // column or past the picture's edge.
    let (one, other) =
        (ttrpc_trace(&[("client", "v1.2.4"), ("pipe-buffer", "8192")], 0), ttrpc_trace(&[("client", "v1.2.4")], 7));
    let (m1, m2) = (Model::new(&one).unwrap(), Model::new(&other).unwrap());
    let last1 = Options { window: Window::Last(1), ..opts.clone() };
    for (m, o) in [(&m1, &m2), (&m2, &m1)] {
        let f = visualizer::frame(o, Chart::Locks, &last1).unwrap();
        let s = scene(m, Chart::Locks, &Options { align: f, ..last1.clone() });
        let (left, right) = axis_band(&s);
        let boxes: Vec<(i32, i32)> = s
            .items
            .iter()
            .filter_map(|i| match i {
                visualizer::Item::Rect { x0, x1, paint, .. } if paint.rgb == visualizer::palette::WHITE => {
                    Some((*x0, *x1))
                }
                _ => None,
            })
            .filter(|(x0, x1)| x1 - x0 < right - left)
            .collect();
        assert!(!boxes.is_empty(), "no 'nothing happened' box");
        assert!(boxes.iter().all(|&(x0, x1)| x0 >= left && x1 <= right), "{boxes:?} outside {left}..{right}");
    }

    // Pipes: the buffer's level line ends where the shorter run does.
    // (Over buffered pipes: net.Pipe's hand-overs have no line.)
    let ttrpc = |calls| ttrpc_trace(&[("client", "v1.2.3"), ("pipe-buffer", "8192"), ("calls", calls)], 0);
    let (short, long) = (ttrpc("1"), ttrpc("3"));
    let (ms, ml) = (Model::new(&short).unwrap(), Model::new(&long).unwrap());
    let pipes = Options { window: Window::All, ..opts.clone() };
    let fl = visualizer::frame(&ml, Chart::Pipes, &pipes).unwrap().unwrap();
    let fs = visualizer::frame(&ms, Chart::Pipes, &pipes).unwrap().unwrap();
    assert!(fs.x1 < fl.x1, "{fs:?} {fl:?}");
    let s = scene(&ms, Chart::Pipes, &Options { align: Some(fl), ..pipes.clone() });
    let (left, right) = axis_band(&s);
    assert_eq!((left, right), axis_band(&scene(&ml, Chart::Pipes, &Options { align: Some(fs), ..pipes })));
    let u = fs.union(fl).unwrap();
    let end = left + ((fs.x1 - u.x0) as i64 * (right - left) as i64 / (u.x1 - u.x0) as i64) as i32;
    let lines: Vec<i32> = s
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Path { points, paint, .. } if paint.rgb == visualizer::palette::BUFFER_LINE => {
                points.iter().map(|p| p.0).max()
            }
            _ => None,
        })
        .collect();
    assert!(!lines.is_empty());
    assert!(
        lines.iter().all(|&x| (end - 1..=end + 1).contains(&x)),
        "{lines:?}, the run ends at {end} of {left}..{right}"
    );
    // Nor does the capacity's dashed line go on past the run (the key's
    // swatch, under the axis, and the final column's are no part of the plot).
    let (_, _, axis_y) = axis_line(&s);
    let dashes: Vec<i32> = s
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Path { points, paint, .. }
                if paint.rgb == visualizer::palette::CAPACITY
                    && points.iter().all(|p| p.1 < axis_y && p.0 <= right) =>
            {
                points.iter().map(|p| p.0).max()
            }
            _ => None,
        })
        .collect();
    assert!(!dashes.is_empty() && dashes.iter().all(|&x| x <= end + 1), "{dashes:?}, the run ends at {end}");
}

#[test]
fn a_short_read_hold_is_drawn_as_a_read_hold() {
    // ttrpc v1.0.2 x v1.2.4, seed 0: Client.run read-locks streamLock six
    // times for 100 ns in a 35 µs run, 3 px each at 1,200 px. The frame
    // filled such a box, and it read as a write hold: a read hold's box is
    // at least 8 px wide, its pale fill showing inside the frame.
    let params = [("server", "v1.0.2"), ("client", "v1.2.4")].map(|(k, v)| (k.to_string(), v.to_string()));
    let trace = sim::models::find("ttrpc").unwrap().configure(&params).unwrap().run(0, true).trace.unwrap();
    let m = Model::new(&trace).unwrap();
    let scene = visualizer::scene(&m, Chart::Locks, &Options::default()).unwrap();
    let client = trace.tasks.iter().position(|t| t.name == "Client.run").unwrap() as u32;
    let colour = m.task_colour(client);
    let pale: Vec<i32> = scene
        .items
        .iter()
        .filter_map(|i| match i {
            visualizer::Item::Rect { x0, x1, paint, .. } if paint.rgb == colour && paint.alpha < 255 => Some(x1 - x0),
            _ => None,
        })
        .collect();
    assert!(pale.len() >= 6, "{pale:?}");
    assert!(pale.iter().all(|&w| w >= 8), "{pale:?}");
}

#[test]
fn a_compact_lane_names_first_the_lock_it_holds_in_the_deadlock() {
    // ttrpc v1.2.3 client, 150 callers, seed 0: caller-3 took streamLock,
    // let it go, and holds sendLock in the cycle. Its compact lane's label,
    // room for one name, said "holds streamLock +1 more": at a deadlock
    // the rows of the locks held there come first, and their names.
    let params =
        [("client", "v1.2.3"), ("callers", "150"), ("calls", "2")].map(|(k, v)| (k.to_string(), v.to_string()));
    let trace = sim::models::find("ttrpc").unwrap().configure(&params).unwrap().run(0, true).trace.unwrap();
    let m = Model::new(&trace).unwrap();
    assert!(m.deadlock.is_some());
    // The label column fits the label whole, the lock held first.
    let scene = visualizer::scene(&m, Chart::Timeline, &Options::default()).unwrap();
    let held: Vec<&str> = scene_texts(&scene).into_iter().filter(|t| t.starts_with("holds ")).collect();
    assert!(held.contains(&"holds sendLock, streamLock"), "{held:?}");
    assert!(held.iter().all(|t| !t.contains('+')), "{held:?}");
    // Where the column is too narrow for both, the name kept is that one.
    let narrow = Options { width: 640, ..Options::default() };
    let scene = visualizer::scene(&m, Chart::Timeline, &narrow).unwrap();
    let held: Vec<&str> = scene_texts(&scene).into_iter().filter(|t| t.starts_with("holds ")).collect();
    assert!(held.iter().any(|t| t.starts_with("holds sendLock +1")), "{held:?}");
    assert!(held.iter().all(|t| !t.starts_with("holds streamLock +1")), "{held:?}");
}

#[test]
fn the_header_says_where_a_schedule_came_from_and_none_means_none() {
    let shrunk = visualizer::load(&committed().with_file_name("ttrpc-s1.0.2-c1.2.3-deadlock-shrunk.json")).unwrap();
    let m = Model::new(&shrunk).unwrap();
    let texts = |chart, header| {
        let opts = Options { header, ..Options::default() };
        scene_texts(&visualizer::scene(&m, chart, &opts).unwrap()).into_iter().map(String::from).collect::<Vec<_>>()
    };
    let full = texts(Chart::Timeline, Header::Full);
    assert!(full.contains(&"Timeline · ttrpc · shrunk schedule".to_string()), "{full:?}");
    // The schedule itself, whole, over as many lines as it takes (up to three).
    let i = full.iter().position(|t| t.starts_with("schedule ")).expect("a schedule line");
    let joined: String = full[i..].iter().take(3).cloned().collect();
    assert!(joined.starts_with(&format!("schedule {}", shrunk.meta.replay)), "{full:?}");
    // The wait-for graph's caption is its header's outcome line: gone with it.
    let caption = |t: &Vec<String>| t.iter().any(|t| t.starts_with("At the deadlock"));
    assert!(caption(&texts(Chart::WaitFor, Header::Full)));
    assert!(!caption(&texts(Chart::WaitFor, Header::Title)));
    assert!(!caption(&texts(Chart::WaitFor, Header::None)));
}

#[test]
fn a_renamed_outcome_names_its_tasks_anew_and_nothing_else() {
    let mut trace = committed_trace("abba-deadlock.json");
    // A lock named as a task is (time.After names its task and its channel alike).
    for b in &mut trace.deadlock.as_mut().unwrap().cycle {
        if b.waits_for == "B" {
            b.waits_for = "T2".into();
        }
    }
    trace.meta.message = trace.meta.message.replace("lock \"B\"", "lock \"T2\"");
    let renamed = |renames: &[(&str, &str)]| {
        let renames: Vec<(String, String)> = renames.iter().map(|&(p, n)| (p.into(), n.into())).collect();
        visualizer::rename_tasks(&trace, &renames).unwrap().meta.message
    };
    let head = "deadlock (global, 2 tasks in the cycle): ";
    assert_eq!(
        renamed(&[("T2", "second")]),
        format!("{head}\"T1\" waiting to lock \"T2\" -> \"second\" waiting to lock \"A\"")
    );
    // A name now shared says which task, as the engine's reports do.
    assert_eq!(
        renamed(&[("T*", "thread")]),
        format!("{head}\"thread\" (task 1) waiting to lock \"T2\" -> \"thread\" (task 2) waiting to lock \"A\"")
    );
    assert_eq!(renamed(&[]), trace.meta.message);
    // A panic names its task anew.
    let run = sim::Sim::new(0).record(true).run(|| async {
        sim::spawn("worker", async { panic!("boom") }).join().await;
    });
    let trace = *run.trace.unwrap();
    let t = visualizer::rename_tasks(&trace, &[("worker".into(), "the worker".into())]).unwrap();
    assert!(t.meta.message.starts_with("panic in \"the worker\": boom"), "{}", t.meta.message);
}

#[test]
fn lock_row_labels_are_whole_when_the_task_names_are_short() {
    // The label column was as wide as the task names: renamed for a
    // caption, Flink's two threads left "holds channel-1.buffer…". It fits
    // the lock rows' labels too, and only those drawn: a lock folded into
    // the last row ("2 more locks") does not widen it.
    let flink = committed_trace("flink-1.13.1-minimal-deadlock.json");
    let renames = [("Join*", "task thread"), ("Channel state writer*", "writer")].map(|(p, n)| (p.into(), n.into()));
    let t = visualizer::rename_tasks(&flink, &renames).unwrap();
    let m = Model::new(&t).unwrap();
    let scene = visualizer::scene(&m, Chart::Timeline, &Options::default()).unwrap();
    let held: Vec<&str> = scene_texts(&scene).into_iter().filter(|t| t.starts_with("holds ")).collect();
    for lock in ["channel-0.bufferQueue", "channel-1.bufferQueue", "LocalBufferPool.availableMemorySegments"] {
        assert!(held.contains(&format!("holds {lock}").as_str()), "{held:?}");
    }
    assert!(held.iter().all(|t| !t.contains('…')), "{held:?}");
}
