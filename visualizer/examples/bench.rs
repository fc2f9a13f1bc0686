//! Times the charts of a long trace (default one million events) in PNG and
//! SVG, and the Perfetto export, and prints time and output size:
//!
//! ```text
//! cargo run --release -p visualizer --example bench [EVENTS]
//! ```
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use visualizer::{Chart, Format, Model, Options, Window};

fn main() {
    let events: usize = std::env::args().nth(1).map(|s| s.parse().expect("EVENTS: a number")).unwrap_or(1_000_000);
    let t0 = Instant::now();
    let trace = common::trace_with_events(events);
    println!(
        "trace: {} events, {} steps, {} tasks, verdict {} (recorded in {:.2} s)",
        trace.events.len(),
        trace.meta.steps,
        trace.tasks.len(),
        trace.meta.verdict,
        t0.elapsed().as_secs_f64()
    );
    let t0 = Instant::now();
    let m = Model::new(&trace).unwrap();
    println!("model: {:.3} s", t0.elapsed().as_secs_f64());
    println!("{:<10} {:<7} {:<6} {:>9} {:>12}", "chart", "window", "format", "seconds", "bytes");
    for window in [Window::All, Window::Auto] {
        let opts = Options { window, ..Options::default() };
        for chart in Chart::ALL {
            for format in [Format::Png, Format::Svg] {
                let t0 = Instant::now();
                let bytes = visualizer::render_model(&m, chart, format, &opts).unwrap();
                let name = if window == Window::All { "all" } else { "auto" };
                println!(
                    "{:<10} {:<7} {:<6} {:>9.3} {:>12}",
                    chart.name(),
                    name,
                    format.ext(),
                    t0.elapsed().as_secs_f64(),
                    bytes.len()
                );
            }
        }
    }
    let opts = Options { window: Window::All, ..Options::default() };
    let t0 = Instant::now();
    let png = visualizer::render(&trace, Chart::Timeline, Format::Png, &opts).unwrap();
    println!("end to end, model + whole-trace timeline PNG: {:.3} s, {} bytes", t0.elapsed().as_secs_f64(), png.len());
    let t0 = Instant::now();
    let svg = visualizer::render(&trace, Chart::Timeline, Format::Svg, &opts).unwrap();
    println!("end to end, model + whole-trace timeline SVG: {:.3} s, {} bytes", t0.elapsed().as_secs_f64(), svg.len());
    let t0 = Instant::now();
    let json = visualizer::perfetto::export_model(&m);
    println!("perfetto export: {:.3} s, {} bytes", t0.elapsed().as_secs_f64(), json.len());
    if let Some(dir) = std::env::var_os("BENCH_OUT") {
        let dir = std::path::PathBuf::from(dir);
        for chart in Chart::ALL {
            for (window, name) in [(Window::All, "all"), (Window::Auto, "auto")] {
                let opts = Options { window, ..Options::default() };
                let png = visualizer::render_model(&m, chart, Format::Png, &opts).unwrap();
                std::fs::write(dir.join(format!("big-{}-{name}.png", chart.name())), png).unwrap();
            }
        }
    }
}
