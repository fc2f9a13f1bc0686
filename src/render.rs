//! `deadsim render` (trace -> PNG/SVG charts) and `deadsim export` (trace ->
//! Perfetto JSON). Files only: the drawing is in the `visualizer` crate.
//!
//! Output names. One chart: `-o FILE` as given; `-o DIR` (an existing
//! directory) or no `-o`: `STEM-CHART.FORMAT` in DIR or beside the trace,
//! where STEM is the trace's file name without `.json`. `--chart all`:
//! `-o DIR` (an existing directory, or a path ending in `/`) gives
//! `DIR/STEM-CHART.FORMAT`; `-o PREFIX` gives `PREFIX-CHART.FORMAT` (an
//! extension `.png`/`.svg` on PREFIX is dropped and sets the format); no
//! `-o` gives `STEM-CHART.FORMAT` beside the trace. `all` writes the
//! timeline and each other chart that has something to show.

use std::path::{Path, PathBuf};

use clap::Args;
use visualizer::{Chart, Format, Header, Model, Options, Window, XAxis};

#[derive(Args)]
pub struct RenderArgs {
    /// The trace file (JSON, from `run`, `hunt`, `replay`, `explore` or `shrink --trace`)
    trace: PathBuf,
    /// Output file (`-` for stdout); with `--chart all` a directory or a
    /// file-name prefix [default: TRACE-CHART.FORMAT beside the trace]
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    out: Option<PathBuf>,
    /// timeline, locks, pipes, waitfor, or all
    #[arg(long, default_value = "timeline", value_name = "CHART")]
    chart: String,
    /// png or svg [default: from OUT's extension, else png]
    #[arg(long, value_name = "FORMAT")]
    format: Option<String>,
    /// Part of the trace to draw: auto (whole trace up to 1000 steps, else
    /// the end of the run: at a deadlock twice the steps since its tasks
    /// took what they hold, 60 to 400; otherwise the last 400), all, cycle
    /// (that deadlock window, at any length, from 60 steps), last:N,
    /// steps:A..B, time:A..B (ns, or with ns/us/ms/s); A..=B includes B
    #[arg(long, default_value = "auto", value_name = "WINDOW")]
    window: String,
    /// x axis: time (virtual time) or steps
    #[arg(long, default_value = "time", value_name = "AXIS")]
    x: String,
    /// What the chart says above its plot: full (the title line, the run's
    /// parameters and facts, the outcome: what makes the figure again),
    /// title (the title line alone, for a caption that says the rest), or
    /// none
    #[arg(long, default_value = "full", value_name = "HEADER")]
    header: String,
    /// Picture width in pixels (600..=8000)
    #[arg(long, default_value_t = Options::WIDTH.to_string(), value_name = "PX", allow_hyphen_values = true)]
    width: String,
    /// PNG pixels per picture pixel (1..=4): the same picture with every
    /// line and letter N times larger, for high-density screens and print
    /// (from 2, the PNG says 96*N dpi). SVG is drawn at any size and takes no scale
    #[arg(long, default_value = "1", value_name = "N", allow_hyphen_values = true)]
    scale: String,
    /// The title line's text, in place of "Timeline · MODEL · seed N ·
    /// VERDICT"; the lines under it (chart, model and seed, parameters, outcome) stay
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// The timeline's lanes, in this order: task names, comma-separated,
    /// `*` for any characters (`T1,caller-*`); at most 100 drawn, the first
    /// named [default: every task alive in the window]
    #[arg(long, value_name = "NAMES", allow_hyphen_values = true)]
    tasks: Option<String>,
    /// Draw tasks under another name: PATTERN (a task name, `*` for any
    /// characters) = the name to show (`--rename 'Join*=task thread'`);
    /// repeat for more
    #[arg(long, value_name = "PATTERN=NAME", allow_hyphen_values = true)]
    rename: Vec<String>,
    /// Give each task the colour it has in OTHER's charts (tasks matched by
    /// name): a figure of a fix then colours its threads as the bug's figure does
    #[arg(long = "colours-of", visible_alias = "colors-of", value_name = "OTHER")]
    colours_of: Option<PathBuf>,
    /// Draw on the x axis OTHER's chart has with the same flags: the same
    /// plot edges and one time (or step) range, so the two figures stack and
    /// compare. `render OTHER --align-with TRACE` draws its match
    #[arg(long = "align-with", value_name = "OTHER")]
    align_with: Option<PathBuf>,
}

#[derive(Args)]
pub struct ExportArgs {
    /// The trace file (JSON)
    trace: PathBuf,
    /// Write Chrome Trace Event JSON (opens in Perfetto) to FILE (`-` for stdout)
    #[arg(long, value_name = "FILE")]
    perfetto: PathBuf,
}

fn stem(trace: &Path) -> String {
    let name = trace.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "trace".into());
    // `ABBA.JSON` is a .json file as well.
    match name.len().checked_sub(5) {
        // A file named `.json` alone has no stem to name charts after.
        Some(0) if name.eq_ignore_ascii_case(".json") => "trace".to_string(),
        Some(i) if name.is_char_boundary(i) && name[i..].eq_ignore_ascii_case(".json") => name[..i].to_string(),
        _ => name,
    }
}

fn beside(trace: &Path) -> PathBuf {
    trace.parent().map(Path::to_path_buf).unwrap_or_default()
}

fn ext_format(p: &Path) -> Option<Format> {
    // `fig.PNG` is a PNG too.
    match p.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "png" => Some(Format::Png),
        "svg" => Some(Format::Svg),
        _ => None,
    }
}

/// The picture formats a user may name: the two deadsim draws, then others.
const OTHER: &[&str] = &["jpg", "jpeg", "gif", "bmp", "webp", "tif", "tiff", "pdf", "eps", "ps", "avif", "heic", "ico"];

/// Refuses an output whose file name is an extension alone (`-o .png`,
/// `--render out/.jpg`): to the file system that is a hidden file with no
/// extension, so the chart would be written as `.png` (or a PNG named
/// `.jpg`), or a prefix would give `.jpg-timeline.png`.
fn check_named(flag: &str, o: &Path) -> Result<(), String> {
    if o.is_dir() || o.to_string_lossy().ends_with('/') {
        return Ok(());
    }
    let Some(name) = o.file_name().and_then(|n| n.to_str()) else { return Ok(()) };
    let Some(ext) = name.strip_prefix('.') else { return Ok(()) };
    let ext = ext.to_ascii_lowercase();
    if ["png", "svg"].contains(&ext.as_str()) || OTHER.contains(&ext.as_str()) {
        return Err(format!(
            "{flag} {}: a name that is only an extension; put a name before it (fig.{ext}) or give a folder (DIR/)",
            o.display()
        ));
    }
    Ok(())
}

/// Refuses a chart prefix or folder that ends in another picture format's
/// extension (`--render fig.jpg`): it would give `fig.jpg-timeline.png`.
/// Any other ending is a prefix (`-o fig.run1` gives `fig.run1-timeline.png`).
/// A device, a pipe or a link (`--render /dev/stdout`) is refused too: the
/// charts are files beside a prefix, and would land in its folder (`/dev`).
pub fn check_not_other_picture(flag: &str, o: &Path) -> Result<(), String> {
    check_named(flag, o)?;
    // A folder, or a link to one, is a folder; anything else there but a
    // plain file (a device, a pipe, a link such as /dev/stdout) is refused.
    let folder = std::fs::metadata(o).is_ok_and(|m| m.is_dir());
    if let Ok(meta) = std::fs::symlink_metadata(o) {
        if !folder && !meta.is_file() {
            return Err(format!(
                "{flag} {}: not a folder or a plain file (a device, a pipe or a link), but the charts are \
                 files named PREFIX-CHART.png (or .svg) beside it; give a folder (DIR/) or a file-name prefix",
                o.display()
            ));
        }
    }
    let ext = o.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext {
        // A trace's name given where the charts go (`run --render run.json`
        // for `--trace run.json`) would give `run.json-timeline.png`.
        Some(e) if e == "json" && !o.to_string_lossy().ends_with('/') => Err(format!(
            "{flag} {}: .json names a trace, but the charts are pictures named PREFIX-CHART.png (or .svg); give \
             a folder (DIR/) or a prefix without .json",
            o.display()
        )),
        Some(e) if OTHER.contains(&e.as_str()) && !o.to_string_lossy().ends_with('/') => {
            // `render -o` and `run --render` both take --format.
            Err(format!(
                "{flag} {}: .{e} is not a chart format (deadsim draws .png and .svg); end the prefix in .png \
                 or .svg, or drop the .{e} (the charts are named PREFIX-CHART.png, or .svg with --format svg)",
                o.display()
            ))
        }
        _ => Ok(()),
    }
}

/// The files to write: `(chart, format, path)`.
fn plan(args: &RenderArgs, charts: &[Chart], all: bool) -> Result<Vec<(Chart, Format, PathBuf)>, String> {
    let given: Option<Format> = match &args.format {
        Some(f) => Some(f.parse().map_err(|e| format!("--format {f}: {e}"))?),
        None => None,
    };
    let stem = stem(&args.trace);
    // `-o fig-` and `-o fig_` already end in a separator.
    let named = |dir: &Path, prefix: &str, c: Chart, f: Format| {
        let sep = if prefix.ends_with(['-', '_', '.']) { "" } else { "-" };
        dir.join(format!("{prefix}{sep}{}.{}", c.name(), f.ext()))
    };
    let mut out = Vec::new();
    match &args.out {
        None => {
            let f = given.unwrap_or(Format::Png);
            for &c in charts {
                out.push((c, f, named(&beside(&args.trace), &stem, c, f)));
            }
        }
        Some(o) if o.as_os_str() == "-" => {
            if all {
                return Err("-o -: --chart all writes several files; give a folder (-o DIR/) or a prefix".into());
            }
            out.push((charts[0], given.unwrap_or(Format::Png), o.clone()));
        }
        Some(o) if o.is_dir() || o.to_string_lossy().ends_with('/') => {
            // `-o figures/` makes the folder when it writes (one level: a
            // typo in a longer path is an error, not a tree of folders).
            check_out_folder("-o", o)?;
            let f = given.unwrap_or(Format::Png);
            for &c in charts {
                out.push((c, f, named(o, &stem, c, f)));
            }
        }
        Some(o) => {
            // Only `-o DIR/` makes a folder: a file's must be there already.
            crate::check_output("-o", &Some(o.clone())).map_err(|e| e.0)?;
            check_named("-o", o)?;
            let from_ext = ext_format(o);
            if let (Some(g), Some(e)) = (given, from_ext) {
                if g != e {
                    return Err(format!(
                        "-o {}: the extension says {}, --format says {}",
                        o.display(),
                        e.ext(),
                        g.ext()
                    ));
                }
            }
            if all && from_ext.is_none() {
                check_not_other_picture("-o", o)?;
            }
            if !all && given.is_none() && from_ext.is_none() {
                if let Some(e) = o.extension() {
                    return Err(format!(
                        "-o {}: .{} is not a chart format; name it .png or .svg, or give --format",
                        o.display(),
                        e.to_string_lossy()
                    ));
                }
            }
            let f = given.or(from_ext).unwrap_or(Format::Png);
            if all {
                let prefix = if from_ext.is_some() { o.with_extension("") } else { o.clone() };
                let dir = prefix.parent().map(Path::to_path_buf).unwrap_or_default();
                let p = prefix.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                for &c in charts {
                    out.push((c, f, named(&dir, &p, c, f)));
                }
            } else {
                out.push((charts[0], f, o.clone()));
            }
        }
    }
    Ok(out)
}

/// Checks an output folder `o` (`-o DIR/`, `run --render DIR/`): it is a
/// folder, or its parent is and it will be made when the charts are written
/// (one level: a typo in a longer path is an error, not a tree of folders).
pub fn check_out_folder(flag: &str, o: &Path) -> Result<(), String> {
    // `afile/` names a folder, but a file is there.
    let bare = Path::new(o.to_str().map_or("", |s| s.trim_end_matches('/')));
    if o.to_string_lossy().ends_with('/') && bare.exists() && !bare.is_dir() {
        return Err(format!("{flag} {}: {} is a file, not a folder", o.display(), bare.display()));
    }
    let parent = o.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !o.is_dir() && !parent.is_dir() {
        return Err(format!(
            "{flag} {}: neither it nor its parent {} is a folder (only the last folder of the path is made)",
            o.display(),
            parent.display()
        ));
    }
    Ok(())
}

/// A trace is read from a file, not from stdin: `-` would otherwise be
/// taken as a file so named, and fail as a missing file.
fn refuse_stdin(trace: &Path) -> Result<(), String> {
    if trace.as_os_str() == "-" {
        return Err("-: a trace is read from a file, not from stdin; give the trace's path".into());
    }
    Ok(())
}

/// `deadsim render`.
pub fn render(args: RenderArgs) -> Result<(), String> {
    refuse_stdin(&args.trace)?;
    let all = args.chart.eq_ignore_ascii_case("all");
    let requested: Vec<Chart> = if all {
        Chart::ALL.to_vec()
    } else {
        vec![args.chart.parse().map_err(|_: visualizer::Error| {
            // `all` is this command's own, beside the library's charts.
            let names: Vec<&str> = Chart::ALL.iter().map(|c| c.name()).collect();
            format!("--chart {}: unknown chart `{}` (expected {} or all)", args.chart, args.chart, names.join(", "))
        })?]
    };
    let opts = options(&args.window, &args.x, &args.width, &args.scale, &args.title)?;
    let (x, scale) = (opts.x, opts.scale);
    let tasks: Vec<String> = match &args.tasks {
        None => Vec::new(),
        Some(list) => {
            let names: Vec<String> = list.split(',').map(|n| n.trim().to_string()).collect();
            if names.iter().any(String::is_empty) {
                return Err(format!("--tasks {list}: an empty name; give task names separated by commas"));
            }
            names
        }
    };
    if args.tasks.is_some() && !all && requested != [Chart::Timeline] {
        return Err(format!(
            "--tasks: selects the timeline's lanes; --chart {} has none (use --chart timeline or all)",
            args.chart
        ));
    }
    let mut renames: Vec<(String, String)> = Vec::new();
    for r in &args.rename {
        let Some((pattern, name)) = r.split_once('=') else {
            return Err(format!("--rename {r}: expected PATTERN=NAME (`--rename 'Join*=task thread'`)"));
        };
        let (pattern, name) = (pattern.trim(), name.trim());
        if pattern.is_empty() || name.is_empty() {
            return Err(format!("--rename {r}: an empty {}", if pattern.is_empty() { "pattern" } else { "name" }));
        }
        if name.contains(char::is_control) {
            return Err(format!("--rename {r}: a control character in the name; a name is plain text"));
        }
        if name.contains(',') {
            return Err(format!(
                "--rename {r}: a comma in the name, which --tasks could not name (it separates names)"
            ));
        }
        renames.push((pattern.to_string(), name.to_string()));
    }
    let header: Header = args.header.parse().map_err(|e| format!("--header {}: {e}", args.header))?;
    if header == Header::None && args.title.is_some() {
        return Err("--title: --header none draws no title (give --header title, or leave --title out)".into());
    }
    let opts = Options { tasks, header, ..opts };
    if requested == [Chart::WaitFor] && x != XAxis::Time {
        eprintln!("note: --x does not apply to the wait-for graph, which has no time axis");
    }
    // Check the output names before the (possibly long) work.
    let planned = plan(&args, &requested, all)?;
    if scale > 1 && planned.iter().all(|(_, f, _)| *f == Format::Svg) {
        return Err(format!("--scale {scale}: scales a PNG; an SVG is drawn at any size (leave --scale out)"));
    }

    let trace = visualizer::load(&args.trace).map_err(|e| e.to_string())?;
    // Escaped once here: notes print it as errors do (a name may hold a line break).
    let origin = crate::output::path_line(&args.trace);
    let other = match &args.colours_of {
        Some(p) => Some(visualizer::load(p).map_err(|e| format!("--colours-of {e}"))?),
        None => None,
    };
    let partner = match &args.align_with {
        Some(p) => Some(visualizer::load(p).map_err(|e| format!("--align-with {e}"))?),
        None => None,
    };
    beside_replay_check(&trace, &origin, "drawn", || {
        let m = Model::new(&trace).map_err(|e| format!("{origin}: {e}"))?;
        let m = match (&other, &args.colours_of) {
            (Some(other), Some(p)) => {
                let o = Model::new(other).map_err(|e| format!("--colours-of {}: {e}", p.display()))?;
                let (m, matched) = m.with_colours_of(&o);
                // Said, so that a trace of another model or run, given by
                // mistake, is not taken for the bug's colours.
                let (this_model, other_model) = (&trace.meta.model, &other.meta.model);
                let models = if this_model != other_model {
                    format!(" is a trace of {other_model}, {origin} of {this_model}:")
                } else {
                    ":".to_string()
                };
                let total = m.tasks.len();
                if matched == 0 {
                    eprintln!(
                        "note: --colours-of {}{models} no task there has the name of one in {origin}; the colours are {origin}'s own",
                        crate::output::path_line(p)
                    );
                } else if matched < total || this_model != other_model {
                    let theirs: std::collections::BTreeSet<&str> =
                        (0..o.tasks.len() as u32).map(|t| o.task_name(t)).collect();
                    let unmatched: Vec<String> = (0..total as u32)
                        .map(|t| m.task_name(t))
                        .filter(|n| !theirs.contains(n))
                        .map(|n| format!("\"{n}\""))
                        .collect();
                    let others = match unmatched.len() {
                        0 => String::new(),
                        n if n <= 3 => format!(
                            "; {} keep{} {origin}'s colours",
                            unmatched.join(", "),
                            if n == 1 { "s" } else { "" }
                        ),
                        n => format!("; {}, and {} more keep {origin}'s colours", unmatched[..2].join(", "), n - 2),
                    };
                    eprintln!(
                        "note: --colours-of {}{models} {matched} of {total} tasks matched by name{others}",
                        crate::output::path_line(p)
                    );
                }
                m
            }
            _ => m,
        };
        // Renamed for the charts only, once the colours are matched by the
        // names as read (a name two tasks come to share would pair tasks
        // by their ids): the trace as read is what its schedule is checked
        // against.
        // The other trace of a pair, renamed as this one is, rename by rename:
        // a later rename may name what an earlier one made there. (A rename
        // that names no task there is this trace's.)
        let mut theirs = partner.clone();
        let renamed;
        let (trace, m) = if renames.is_empty() {
            (&trace, m)
        } else {
            let mut t = trace.clone();
            for (pattern, name) in &renames {
                let rename = [(pattern.clone(), name.clone())];
                let there = match theirs.as_mut().map(|p| (visualizer::rename_tasks(p, &rename), p)) {
                    Some((Ok(r), p)) => {
                        *p = r;
                        true
                    }
                    _ => false,
                };
                match visualizer::rename_tasks(&t, &rename) {
                    Ok(r) => t = r,
                    // A pair is drawn with the same flags: a rename of a
                    // task only the other trace has leaves this one be.
                    Err(_) if there => {}
                    Err(e) => {
                        // With a pair, the other trace's names too.
                        let theirs = match (&theirs, &args.align_with) {
                            (Some(p), Some(path)) => format!(
                                "; --align-with {}: {}",
                                crate::output::path_line(path),
                                visualizer::select_tasks(p, std::slice::from_ref(pattern))
                                    .err()
                                    .map(|e| e.0)
                                    .unwrap_or_default()
                            ),
                            _ => String::new(),
                        };
                        return Err(format!("--rename {pattern}={name}: {origin}: {e}{theirs}"));
                    }
                }
            }
            // The header's outcome message, from the names as read: a
            // rename by rename would lose which task a shared name was.
            t.meta.message = visualizer::renamed_message(&trace, &t);
            renamed = t;
            let drawn = Model::new(&renamed).map_err(|e| format!("{origin}: {e}"))?.with_colours_from(&m);
            (&renamed, drawn)
        };
        // With --align-with, the names of --tasks either trace has: each
        // is drawn with those it has (a pair is drawn with the same flags,
        // and a task may be in one of the two only).
        // (The whole list, for the other trace's frame.)
        let all_tasks = opts.tasks.clone();
        let opts = match (&partner, &args.tasks) {
            (Some(_), Some(list)) => {
                let other = theirs.as_ref().unwrap_or(trace);
                let unknown: Vec<&str> = opts
                    .tasks
                    .iter()
                    .filter(|n| !names_a_task(trace, n) && !names_a_task(other, n))
                    .map(String::as_str)
                    .collect();
                if let Some(name) = unknown.first() {
                    // Every name neither has, and the names each has.
                    let partner = args.align_with.as_deref().unwrap_or(Path::new("")).display().to_string();
                    let has = |t: &sim::trace::Trace| {
                        let e = visualizer::select_tasks(t, &[name.to_string()]).err().map(|e| e.0).unwrap_or_default();
                        e.find(" (the trace has ").map(|i| e[i + 1..].to_string()).unwrap_or_default()
                    };
                    return Err(format!(
                        "--tasks {list}: neither trace has a task named `{}`: {origin} {}; --align-with {} {}",
                        unknown.join("`, `"),
                        has(trace),
                        crate::output::one_line(&partner),
                        has(other)
                    ));
                }
                let mine = tasks_in(trace, &opts.tasks);
                if mine.is_empty() {
                    return Err(format!(
                        "--tasks {list}: {origin} has none of these tasks (only the --align-with trace has)"
                    ));
                }
                Options { tasks: mine, ..opts }
            }
            (_, Some(list)) => {
                visualizer::select_tasks(trace, &opts.tasks).map_err(|e| format!("--tasks {list}: {origin}: {e}"))?;
                opts
            }
            _ => opts,
        };
        if requested == [Chart::WaitFor] {
            // Not drawn, but a window outside the trace is refused as the
            // other charts refuse it: the same flags, the same verdict.
            opts.window.resolve(&m).map_err(|e| format!("{origin}: {e}"))?;
            if opts.window != Window::Auto {
                eprintln!("note: --window does not apply to the wait-for graph, which shows the end of the run");
            }
            if args.align_with.is_some() {
                eprintln!("note: --align-with does not apply to the wait-for graph, which has no time axis");
            }
        }
        // Said once the charts are drawn (a window wholly outside the trace
        // is refused by the drawing, with no note before it).
        let past = match requested.iter().any(|&c| c != Chart::WaitFor) {
            true => opts.window.past_end(&m).map(|past| format!("note: --window {}: {past}", args.window)),
            false => None,
        };
        if let ([c], false) = (requested.as_slice(), all) {
            // A chart asked for by name that would be empty is an error, not a
            // placeholder image (`all` leaves it out and says so).
            if let Some(why) = why_skipped(*c, &m) {
                return Err(format!("--chart {}: {origin} has {why}; nothing to draw", c.name()));
            }
        }
        let charts: Vec<Chart> =
            if all { requested.into_iter().filter(|c| c.applies(&m)).collect() } else { requested };
        let files = plan(&args, &charts, all)?;
        for (_, _, path) in &files {
            // The traces read beside it are inputs too.
            for input in std::iter::once(&args.trace).chain(&args.colours_of).chain(&args.align_with) {
                refuse_overwriting_input(path, input)?;
            }
        }
        if files.iter().any(|(_, f, _)| *f == Format::Png) {
            note_missing_glyphs(trace);
            note_missing_title_glyphs(&opts);
        }
        let frames = match (&theirs, &args.align_with) {
            (Some(partner), Some(p)) => {
                frames_of(&m, partner, p, &args, &Options { tasks: all_tasks.clone(), ..opts.clone() }, &files)?
            }
            _ => Vec::new(),
        };
        // Render everything first: an error leaves no file behind.
        let mut rendered = Vec::with_capacity(files.len());
        for (c, f, path) in files {
            let align = frames.iter().find(|(fc, _)| *fc == c).map(|(_, frame)| *frame);
            let opts = Options { align, ..opts.clone() };
            let bytes =
                visualizer::render_model(&m, c, f, &opts).map_err(|e| match (&args.tasks, &args.align_with) {
                    // What --tasks selected has nothing in the window: the flag is the fix.
                    (Some(list), _) if e.none_selected_alive() => format!("--tasks {list}: {origin}: {e}"),
                    (_, Some(p)) if e.not_aligned() => {
                        format!("--align-with {}: {origin}: {e}", crate::output::path_line(p))
                    }
                    _ => format!("{origin}: {e}"),
                })?;
            rendered.push((path, bytes));
        }
        if let Some(note) = &past {
            eprintln!("{note}");
        }
        if charts.contains(&Chart::Timeline) {
            cycle_left_out(&m, &opts);
        }
        if let [(path, bytes)] = rendered.as_slice() {
            if path.as_os_str() == "-" {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                return out
                    .write_all(bytes)
                    .and_then(|()| out.flush())
                    .map_err(|e| format!("-o -: cannot write to stdout ({e})"));
            }
        }
        // Without -o the charts go beside the trace: an error there names
        // no flag the user gave.
        write_all(if args.out.is_some() { "-o" } else { "the default output (no -o)" }, &rendered)?;
        // On stderr, as `run --render` says it: stdout may be the chart itself (`-o /dev/stdout`).
        for (path, _) in &rendered {
            eprintln!("wrote {}", crate::output::path_line(path));
        }
        if all {
            for line in leave_out(&args, &m, &origin)? {
                // Paths in it as the notes have them (a line break escaped).
                eprintln!("{}", crate::output::one_line(&line));
            }
        }
        Ok(())
    })
}

/// True if `pattern` (a task name, `*` for any characters) names a task of `trace`.
fn names_a_task(trace: &sim::trace::Trace, pattern: &str) -> bool {
    visualizer::select_tasks(trace, &[pattern.to_string()]).is_ok()
}

/// The names of `--tasks` that name a task of `trace` (each of a pair is
/// drawn with those it has).
fn tasks_in(trace: &sim::trace::Trace, names: &[String]) -> Vec<String> {
    names.iter().filter(|n| names_a_task(trace, n)).cloned().collect()
}

/// The frame of each chart to draw, as `partner` (the trace `--align-with`
/// names, read from `path`, renamed as the drawn one is) is drawn with the
/// same flags: the charts of `m` are aligned with these. A chart `partner`
/// has no axis for (no lock, no pipe) is drawn on its own, and said so.
fn frames_of(
    m: &Model,
    partner: &sim::trace::Trace,
    path: &Path,
    args: &RenderArgs,
    opts: &Options,
    files: &[(Chart, Format, PathBuf)],
) -> Result<Vec<(Chart, visualizer::Frame)>, String> {
    let origin = crate::output::path_line(path);
    let model = &m.trace.meta.model;
    let pm = Model::new(partner).map_err(|e| format!("--align-with {origin}: {e}"))?;
    if partner.meta.model != *model {
        // Said, as --colours-of says it: a trace given by mistake would
        // otherwise stretch the axis without a word.
        eprintln!("note: --align-with {origin} is a trace of {}, the trace drawn of {model}", partner.meta.model);
    }
    // Its lanes: the names of --tasks it has.
    let theirs = tasks_in(partner, &opts.tasks);
    if !opts.tasks.is_empty() && theirs.is_empty() {
        let list = args.tasks.as_deref().unwrap_or_default();
        return Err(format!("--tasks {list}: --align-with {origin} has none of these tasks"));
    }
    let popts = Options { tasks: theirs, align: None, ..opts.clone() };
    // This trace's own frames, drawn alone, to tell whether the windows begin apart.
    let own_opts = Options { tasks: tasks_in(m.trace, &opts.tasks), align: None, ..opts.clone() };
    let mut frames = Vec::new();
    let mut starts_differ = false;
    for &(c, _, _) in files {
        if c == Chart::WaitFor || frames.iter().any(|(fc, _)| *fc == c) {
            continue;
        }
        let frame = visualizer::frame(&pm, c, &popts).map_err(|e| match &args.tasks {
            Some(list) if e.none_selected_alive() => format!("--tasks {list}: --align-with {origin}: {e}"),
            _ => format!("--align-with {origin}: {e}"),
        })?;
        match frame {
            Some(frame) => {
                let own = visualizer::frame(m, c, &own_opts).ok().flatten();
                starts_differ |= own.is_some_and(|o| o.x0 != frame.x0);
                frames.push((c, frame));
            }
            None => eprintln!(
                "note: --align-with {origin} has no {} to draw: the {} chart is drawn on its own axis",
                if c == Chart::Locks { "lock" } else { "pipe" },
                c.name()
            ),
        }
    }
    if starts_differ {
        // Two windows of the end of two long runs (`auto` over 1000
        // steps, `last:N`) begin at two times: the axis holds both, and
        // each figure fills only its own part of it.
        eprintln!(
            "note: --align-with {origin}: the two windows begin at different {}: the axis runs from the earlier to the \
             later end, each trace drawn in its own part; for one range in both, give --window all or time:A..B",
            if opts.x == XAxis::Steps { "steps" } else { "times" }
        );
    }
    Ok(frames)
}

/// The drawing options `render` takes, read from its flags' text (here,
/// not by clap, so that anything given, `-5` or `abc`, gets these messages).
fn options(window: &str, x: &str, width: &str, scale: &str, title: &Option<String>) -> Result<Options, String> {
    // The error names the window already: `--` in front makes it the flag.
    let window: Window = window.parse().map_err(|e: visualizer::Error| format!("--{e}"))?;
    let x: XAxis = x.parse().map_err(|e| format!("--x {x}: {e}"))?;
    let given_width = width;
    let width = width.trim().parse::<u32>().unwrap_or(0);
    if !(Options::MIN_WIDTH..=Options::MAX_WIDTH).contains(&width) {
        return Err(format!("--width {given_width}: expected {}..={} pixels", Options::MIN_WIDTH, Options::MAX_WIDTH));
    }
    let given_scale = scale;
    let scale = scale.trim().parse::<u32>().unwrap_or(0);
    if !(1..=Options::MAX_SCALE).contains(&scale) {
        return Err(format!("--scale {given_scale}: expected 1..={}", Options::MAX_SCALE));
    }
    if scale > 1 && width * scale > Options::MAX_WIDTH {
        return Err(format!(
            "--scale {scale}: at --width {width} the PNG would be {} pixels wide, more than {}; give a smaller --width",
            width * scale,
            Options::MAX_WIDTH
        ));
    }
    let title = match title {
        // Spaces and characters drawn as nothing alone draw a blank title band.
        Some(t) if t.chars().all(|c| c.is_whitespace() || default_ignorable(c)) => {
            return Err("--title: empty (nothing visible); leave it out for the chart's own title".into());
        }
        Some(t) if t.contains(['\n', '\r']) => {
            return Err("--title: a line break; the title is one line (a long one wraps)".into());
        }
        Some(t) if t.contains(char::is_control) => {
            let c = t.chars().find(|c| c.is_control()).unwrap_or_default();
            return Err(format!("--title: a control character (U+{:04X}); the title is plain text", c as u32));
        }
        t => t.clone(),
    };
    Ok(Options { x, window, width, scale, title, tasks: Vec::new(), header: Header::Full, align: None })
}

/// Unicode's Default_Ignorable_Code_Point characters (soft hyphen,
/// zero-width and direction marks, variation selectors, tags...), which a
/// viewer draws as nothing.
fn default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// How `run`, `replay` and `shrink` draw their `--render` charts: the
/// flags of `render` that apply to every chart of a run.
#[derive(Args, Clone, Debug, Default)]
pub struct FigureArgs {
    /// With --render: the part of the run to draw, as `render --window` takes it [default: auto]
    #[arg(long, value_name = "WINDOW")]
    window: Option<String>,
    /// With --render: the x axis, time or steps [default: time]
    #[arg(long, value_name = "AXIS")]
    x: Option<String>,
    /// With --render: picture width in pixels (600..=8000) [default: 1200]
    #[arg(long, value_name = "PX", allow_hyphen_values = true)]
    width: Option<String>,
    /// With --render: PNG pixels per picture pixel (1..=4) [default: 1]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    scale: Option<String>,
    /// With --render: the title line's text, as `render --title` takes it
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// With --render: png or svg [default: from OUT's extension, else png]
    #[arg(long, value_name = "FORMAT")]
    format: Option<String>,
}

/// How `run`, `replay` and `shrink` draw their `--render` charts.
#[derive(Clone, Debug, Default)]
pub struct Figure {
    pub opts: Options,
    /// `--format`, if given (else OUT's extension says, else PNG).
    pub format: Option<Format>,
    /// `--window` as given, for notes.
    pub window: String,
}

impl FigureArgs {
    /// The first of these flags given, if any.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.window.is_some(), "--window"),
            (self.x.is_some(), "--x"),
            (self.width.is_some(), "--width"),
            (self.scale.is_some(), "--scale"),
            (self.title.is_some(), "--title"),
            (self.format.is_some(), "--format"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }

    /// The figure these flags give (the defaults where one is left out).
    pub fn figure(&self) -> Result<Figure, String> {
        let width = self.width.clone().unwrap_or_else(|| Options::WIDTH.to_string());
        let opts = options(
            self.window.as_deref().unwrap_or("auto"),
            self.x.as_deref().unwrap_or("time"),
            &width,
            self.scale.as_deref().unwrap_or("1"),
            &self.title,
        )?;
        let format = match &self.format {
            Some(f) => Some(f.parse().map_err(|e| format!("--format {f}: {e}"))?),
            None => None,
        };
        Ok(Figure { opts, format, window: self.window.clone().unwrap_or_else(|| "auto".into()) })
    }
}

/// The first 8 of `chars`, then "…" and how many more ("图：两个线程以相… (+5)").
fn first_chars(chars: &[char]) -> String {
    let head: String = chars.iter().take(8).collect();
    match chars.len().saturating_sub(8) {
        0 => head,
        more => format!("{head}… (+{more})"),
    }
}

/// Says on stderr, in one line, which names a PNG draws with empty boxes
/// (characters the embedded font lacks), so a box is not taken for a bug.
/// Says which characters of `--title` the PNG font has no glyph for.
fn note_missing_title_glyphs(opts: &Options) {
    let missing = opts.title.as_deref().map(visualizer::missing_chars).unwrap_or_default();
    if !missing.is_empty() {
        let chars = first_chars(&missing);
        eprintln!(
            "note: the PNG font (Noto Sans: Latin, Greek, Cyrillic) has no glyph for \"{chars}\" in --title: \
             the PNG shows them as boxes; an SVG (--format svg) leaves them to the viewer's fonts"
        );
    }
}

/// `run`, `replay` and `shrink`'s figure flags against their `--render
/// OUT`, before the run: `--format` against OUT's extension, and a scale
/// for charts that are SVG.
pub fn check_figure(out: &Path, fig: &Figure) -> Result<(), String> {
    if let (Some(given), Some(ext)) = (fig.format, ext_format(out)) {
        if given != ext {
            return Err(format!(
                "--render {}: the extension says {}, --format says {}",
                out.display(),
                ext.ext(),
                given.ext()
            ));
        }
    }
    if fig.opts.scale > 1 && fig.format.or(ext_format(out)) == Some(Format::Svg) {
        return Err(format!(
            "--scale {}: scales a PNG; an SVG is drawn at any size (leave --scale out)",
            fig.opts.scale
        ));
    }
    Ok(())
}

pub fn note_missing_glyphs(trace: &visualizer::Trace) {
    let missing = visualizer::missing_glyphs(trace);
    let Some((first, chars)) = missing.first() else { return };
    let chars = first_chars(chars);
    let more = match missing.len() {
        1 => String::new(),
        2 => " and 1 more name".to_string(),
        n => format!(" and {} more names", n - 1),
    };
    eprintln!(
        "note: the PNG font (Noto Sans: Latin, Greek, Cyrillic) has no glyph for \"{chars}\" in {first}{more}: \
         PNG charts show them as boxes; SVG charts (--format svg) leave them to the viewer's fonts"
    );
}

/// For each chart that `--chart all` leaves out of `m` (from `source`, a
/// file name or "this trace"), a line that says so: "skipped pipes: no
/// pipes in t.json". A chart of that name that an earlier render left (of
/// another trace under the same name) would be taken for this one's: it is
/// removed, as `--trace` removes an older trace, and the line says so. Only
/// a file that is a chart (PNG or SVG) is removed.
fn leave_out(args: &RenderArgs, m: &Model, source: &str) -> Result<Vec<String>, String> {
    let mut lines = Vec::new();
    for c in Chart::ALL {
        let Some(why) = why_skipped(c, m) else { continue };
        let mut line = format!("skipped {}: {why} in {source}", c.name());
        for (_, _, path) in plan(args, &[c], true)? {
            let link = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
            if link && std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                // What a link names is not this command's to remove: said instead.
                line += &format!(
                    "; warning: {} is a link, left as it was, so what it names is not this trace's",
                    path.display()
                );
            } else if is_chart_file(&path) {
                match std::fs::remove_file(&path) {
                    Ok(()) => line += &format!(" (the older {} is removed)", path.display()),
                    Err(e) => {
                        line += &format!(
                            "; warning: the older {} could not be removed ({e}), so it is not this trace's",
                            path.display()
                        )
                    }
                }
            } else if std::fs::symlink_metadata(&path).is_ok() {
                // A file of the user's under a chart's name: theirs, but not this trace's chart.
                line += &format!("; {} is not a chart, left as it was", path.display());
            }
        }
        lines.push(line);
    }
    Ok(lines)
}

/// True if `path` is a regular file (not a link, a folder or a FIFO, which
/// would block a read) that starts as a PNG or an SVG does.
fn is_chart_file(path: &Path) -> bool {
    use std::io::Read;
    if !std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 8];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    let head = &head[..n];
    head == b"\x89PNG\r\n\x1a\n" || head.starts_with(b"<?xml") || head.starts_with(b"<svg")
}

/// Says when a timeline whose window shows the deadlock has no lane for
/// tasks of its cycle (`--tasks` left them out, or its 100-lane cap): the
/// arrows to and from them are not drawn, and with none of them a figure
/// of a deadlock shows no arrow at all, unexplained. Called once drawn.
fn cycle_left_out(m: &Model, opts: &Options) {
    let (Ok(lanes), Ok((a, b, _))) = (visualizer::timeline::lanes(m, opts), opts.window.resolve(m)) else {
        return;
    };
    if !m.deadlock_in(a, b) {
        return;
    }
    let cycle = m.cycle_tasks();
    let out: Vec<String> =
        cycle.iter().filter(|t| !lanes.contains(t)).map(|&t| format!("{:?}", m.task_name(t))).collect();
    let why = if opts.tasks.is_empty() { "the lanes drawn leave out" } else { "--tasks leaves out" };
    let (n, of) = (out.len(), cycle.len());
    let which = if n == of { format!("all {of}") } else { format!("{n} of the {of}") };
    if n > 0 {
        eprintln!(
            "note: {why} {which} tasks of the deadlock cycle ({}): no arrow goes to or from {}",
            out.join(", "),
            if n == 1 { "that task" } else { "those" }
        );
    }
}

/// Why chart `c` has nothing to show for `m`, or `None` if it has.
fn why_skipped(c: Chart, m: &Model) -> Option<&'static str> {
    (!c.applies(m)).then(|| match c {
        Chart::Locks if m.locks().is_empty() => "no locks",
        Chart::Locks => "no lock used",
        Chart::Pipes if m.pipes().is_empty() => "no pipes",
        Chart::Pipes => "no pipe used",
        _ => "no deadlock and no task blocked at the end",
    })
}

/// An output path that names the input trace is refused: a chart or an
/// export must never replace the trace it was made from.
fn refuse_overwriting_input(out: &Path, input: &Path) -> Result<(), String> {
    let mut same = match (std::fs::canonicalize(out), std::fs::canonicalize(input)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    // Another name of the same file (a hard link) is the input too.
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(out), std::fs::metadata(input)) {
            same |= (a.dev(), a.ino()) == (b.dev(), b.ino());
        }
    }
    if same {
        return Err(format!("{}: this is the input trace; choose another output name", out.display()));
    }
    Ok(())
}

/// Renders every chart that applies to `trace`, named as `render --chart all
/// -o OUT` names them (OUT a directory or a prefix; `.svg` on it selects SVG),
/// and returns the files written and a line for each chart left out
/// (`deadsim run ... --render OUT`). The names
/// carry the model, its parameters' fingerprint and the seed, so runs with
/// other parameters do not overwrite each other.
pub fn render_trace(trace: &visualizer::Trace, out: &Path, fig: &Figure) -> Result<StagedCharts, NotDrawn> {
    let opts = &fig.opts;
    let other = |msg: String| NotDrawn { msg, window: false };
    let m = Model::new(trace).map_err(|e| other(e.to_string()))?;
    // The window is the run's: one that misses it names the flag.
    opts.window.resolve(&m).map_err(|e| NotDrawn { msg: format!("--{e}"), window: true })?;
    if let Some(past) = opts.window.past_end(&m) {
        eprintln!("note: --window {}: {past}", fig.window);
    }
    let fingerprint = trace.meta.replay.split(':').nth(2).unwrap_or("").to_string();
    // A seed's charts under another strategy than random are another run's:
    // their names say which (`abba-a5167e82-seed0-pct3-timeline.png`). A
    // replayed schedule or a shrunk run is not a seed's: it is named by its
    // schedule (`abba-a5167e82-shrink-1c9e4b07-timeline.png`).
    let mut run = match trace.meta.strategy.as_str() {
        "random" => format!("seed{}", trace.meta.seed),
        s @ ("replay" | "shrink") => format!("{s}-{:08x}", fnv1a(trace.meta.replay.as_bytes())),
        s => format!("seed{}-{}", trace.meta.seed, s.replace(':', "")),
    };
    // A run stopped by --max-steps is another run than the whole one (a
    // limit it did not reach changes nothing): its charts must not replace
    // the whole run's (`abba-a5167e82-seed0-limit3-timeline.png`).
    if trace.meta.verdict == "step-limit" {
        run.push_str(&format!("-limit{}", trace.meta.steps));
    }
    let args = RenderArgs {
        trace: PathBuf::from(format!("{}-{fingerprint}-{run}.json", trace.meta.model)),
        out: Some(out.to_path_buf()),
        chart: "all".into(),
        format: fig.format.map(|f| f.ext().to_string()),
        window: "auto".into(),
        x: "time".into(),
        header: "full".into(),
        width: Options::WIDTH.to_string(),
        scale: "1".into(),
        title: None,
        tasks: None,
        rename: Vec::new(),
        colours_of: None,
        align_with: None,
    };
    let charts: Vec<Chart> = Chart::ALL.into_iter().filter(|c| c.applies(&m)).collect();
    // (A scale for SVG charts was refused before the run: `check_figure`.)
    let files = plan(&args, &charts, true).map_err(other)?;
    if files.iter().any(|(_, f, _)| *f == Format::Png) {
        note_missing_glyphs(trace);
        note_missing_title_glyphs(opts);
    }
    let mut rendered = Vec::with_capacity(files.len());
    for (c, f, path) in files {
        let bytes = visualizer::render_model(&m, c, f, opts).map_err(|e| other(e.to_string()))?;
        rendered.push((path, bytes));
    }
    let set = stage_all("--render", &rendered).map_err(other)?;
    Ok(StagedCharts { set, files: rendered.into_iter().map(|(p, _)| p).collect(), args })
}

/// Why [`render_trace`] drew no chart.
#[derive(Debug)]
pub struct NotDrawn {
    pub msg: String,
    /// The window misses the run: the flag's fault, not the files'.
    pub window: bool,
}

/// A run's charts written beside their places ([`render_trace`]), to be put
/// in place with [`StagedCharts::commit`]; dropped, they leave nothing.
pub struct StagedCharts {
    set: sim::fsutil::Staged,
    /// Where the charts go.
    pub files: Vec<PathBuf>,
    args: RenderArgs,
}

impl StagedCharts {
    /// The chart that `path` names too (the same name, or a link to it), if any.
    pub fn same_file_as(&self, path: &Path) -> Option<&Path> {
        let to = sim::fsutil::Staged::target(path)?;
        self.files.iter().find(|f| sim::fsutil::Staged::target(f).as_ref() == Some(&to)).map(PathBuf::as_path)
    }

    /// Puts the charts in place, and only then removes an older chart of a
    /// kind this trace has none of (under the same name, it would pass for
    /// this run's); gives a line for each chart left out.
    pub fn commit(self, trace: &visualizer::Trace) -> Result<Vec<String>, String> {
        commit("--render", self.set)?;
        let m = Model::new(trace).map_err(|e| e.to_string())?;
        leave_out(&self.args, &m, "this trace")
    }
}

/// FNV-1a, 32 bits: a short name for a schedule string, the same on every machine.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// Writes a set of charts as one unit: every name is checked first, then
/// each file is written beside its place, and only when all are written are
/// they put in place, so an error leaves every file that was there as it
/// was (see [`sim::fsutil::Staged`]).
/// `flag` is the option that named the output, for the messages.
fn write_all(flag: &str, files: &[(PathBuf, Vec<u8>)]) -> Result<(), String> {
    commit(flag, stage_all(flag, files)?)
}

/// Puts a staged set of charts in place.
pub fn commit(flag: &str, set: sim::fsutil::Staged) -> Result<(), String> {
    set.commit().map_err(|(path, e)| format!("{flag}: cannot put {} in place ({e})", path.display()))
}

/// [`write_all`] up to the commit: the charts written beside their places.
fn stage_all(flag: &str, files: &[(PathBuf, Vec<u8>)]) -> Result<sim::fsutil::Staged, String> {
    for (path, _) in files {
        if path.is_dir() {
            return Err(format!("{flag}: {}: cannot write there (it is a folder, not a file)", path.display()));
        }
    }
    let mut set = sim::fsutil::Staged::default();
    // The folder of `-o figures/`, made here rather than when planning.
    if let Some(d) = files.first().and_then(|(p, _)| p.parent()) {
        if !d.as_os_str().is_empty() && !d.exists() {
            set.make_folder(d).map_err(|e| format!("{flag}: cannot make the folder {} ({e})", d.display()))?;
        }
    }
    for (path, bytes) in files {
        set.stage(path, bytes).map_err(|e| format!("{flag}: {}: cannot write there ({e})", path.display()))?;
    }
    Ok(set)
}

/// Says so on stderr when a trace of a built-in model is not the run its
/// model makes again (from its seed and strategy, or its schedule string;
/// see [`not_replayed`]): the model changed since the trace was written, or
/// the file was edited. The trace checks see that its events tell one story, not that
/// the model tells it. The charts are drawn as the file has them: a trace
/// of an older deadsim still draws. A model a library user labelled is not
/// one this build can run, and is left alone.
///
/// Runs `work` (drawing or exporting the trace) while the check runs on
/// another thread, and says its note after: on a 930,342-step ttrpc trace
/// the check, run first, had tripled the time of `render`. A check that
/// panics (a model's bug) says nothing.
fn beside_replay_check<T>(trace: &sim::trace::Trace, origin: &str, done: &str, work: impl FnOnce() -> T) -> T {
    std::thread::scope(|scope| {
        let check = scope.spawn(|| sim::models::find(&trace.meta.model).ok().and_then(|m| not_replayed(trace, m)));
        let out = work();
        if let Ok(Some(why)) = check.join() {
            eprintln!("note: {}: {why}; {done} as the file has it", crate::output::one_line(origin));
        }
        out
    })
}

/// Why `trace` is not what its schedule string replays to with `model`, if it is not.
fn not_replayed(trace: &sim::trace::Trace, model: &dyn sim::models::Model) -> Option<String> {
    let name = model.name();
    let params: Vec<(String, String)> = trace.meta.params.iter().map(|p| (p.name.clone(), p.value.clone())).collect();
    let cfg = match model.configure(&params) {
        Ok(cfg) => cfg,
        Err(e) => {
            return Some(format!(
                "its meta.params do not configure this deadsim's {name} model ({e}), so it cannot be run again"
            ))
        }
    };
    let most = sim::scheduler::Schedule::choices_for(trace.meta.steps.saturating_add(1));
    let schedule = match sim::scheduler::Schedule::parse_within(&trace.meta.replay, most) {
        Ok(s) => s,
        Err(e) => {
            return Some(format!("its schedule string (meta.replay) cannot be read ({e}), so it cannot be run again"))
        }
    };
    // (The trace checks compared its fingerprint with meta.params already.)
    schedule.check_for(name, &cfg.params).ok()?;
    // A run stops at its step limit before it looks for a deadlock where
    // no task can run: one step more, but a step-limit run's own limit.
    let limit = if trace.meta.verdict == "step-limit" { trace.meta.steps } else { trace.meta.steps + 1 };
    // A seed's run (random, pct) is made again from its seed and strategy,
    // which the figure's title names; any other (replay, shrink, dfs) from
    // its schedule string.
    let by_seed = trace.meta.strategy.parse::<sim::scheduler::StrategyKind>().ok();
    let run = match by_seed {
        // PCT's first run (depth 1) sets the step bound its change points
        // are drawn within, and may take more steps than the run drawn: it
        // gets the default limit (a step-limit run's own), not one cut to
        // this run's length. A trace does not say the limit it was made
        // with: one made with `--max-steps` above the default, whose first
        // run went past the default, is drawn with the note.
        Some(kind @ sim::scheduler::StrategyKind::Pct(_)) => {
            let limit = if trace.meta.verdict == "step-limit" { limit } else { limit.max(sim::DEFAULT_MAX_STEPS) };
            kind.run(&cfg, trace.meta.seed, true, limit)
        }
        Some(kind) => kind.run(&cfg, trace.meta.seed, true, limit.max(1)),
        // A schedule that does not fit is said as such: compared, its run
        // would differ first at meta.verdict, which blames the wrong part.
        None => match cfg.replay_schedule(&schedule, limit.max(1)) {
            Ok(run) => run,
            // Stopped one step past the trace's end, the limit given here.
            Err(sim::models::NotReplayed::Unused { step_limit: true, used, given, .. })
                if trace.meta.verdict != "step-limit" =>
            {
                return Some(format!(
                    "its schedule string (meta.replay) goes on past the trace's {} steps, with {} of its {given} \
                     choices left (the file was edited, or the model changed since the trace was written)",
                    trace.meta.steps,
                    given - used
                ))
            }
            Err(e) => {
                return Some(format!(
                    "its schedule string (meta.replay) does not replay with this deadsim's {name} model: {e}; the \
                     model changed since the trace was written, or the file was edited"
                ))
            }
        },
    };
    let mut again = *run.trace?;
    // The version is not the run, nor, for a replay, what it is named.
    again.meta.deadsim.clone_from(&trace.meta.deadsim);
    if by_seed.is_none() {
        again.meta.strategy.clone_from(&trace.meta.strategy);
        again.meta.seed = trace.meta.seed;
    }
    // A trace written before deadlock reports kept `released_by_ids`, or
    // the frame of each held lock, is the same run without them.
    if let (Some(d), Some(a)) = (&trace.deadlock, again.deadlock.as_mut()) {
        let entries = || d.cycle.iter().chain(&d.behind);
        let no_ids = entries().all(|b| b.released_by_ids.is_empty());
        let no_frames = entries().flat_map(|b| &b.holds).all(|h| h.frame.is_none());
        for b in a.cycle.iter_mut().chain(a.behind.iter_mut()) {
            if no_ids {
                b.released_by_ids.clear();
            }
            if no_frames {
                b.holds.iter_mut().for_each(|h| h.frame = None);
            }
        }
    }
    let at = first_difference(trace, &again)?;
    let made = match by_seed {
        Some(_) => format!("seed {} under strategy {}", trace.meta.seed, trace.meta.strategy),
        None => "its schedule string (meta.replay)".to_string(),
    };
    Some(format!(
        "{made} makes another run with this deadsim's {name} model, first at {at} \
         (the model changed since the trace was written, or the file was edited)"
    ))
}

/// The first part of `a` that differs from `b`, if they differ, named as
/// the trace's JSON path (`meta.seed`, `events[12]`), in the order of the file.
fn first_difference(a: &sim::trace::Trace, b: &sim::trace::Trace) -> Option<String> {
    fn first<T: PartialEq>(what: &str, a: &[T], b: &[T]) -> Option<String> {
        let i = a.iter().zip(b).position(|(x, y)| x != y).or((a.len() != b.len()).then(|| a.len().min(b.len())))?;
        Some(format!("{what}[{i}]"))
    }
    if a == b {
        return None;
    }
    let (m, n) = (&a.meta, &b.meta);
    let meta = [
        ("model", m.model != n.model),
        ("params", m.params != n.params),
        ("seed", m.seed != n.seed),
        ("strategy", m.strategy != n.strategy),
        ("verdict", m.verdict != n.verdict),
        ("message", m.message != n.message),
        ("steps", m.steps != n.steps),
        ("time_ns", m.time_ns != n.time_ns),
        ("replay", m.replay != n.replay),
    ];
    if let Some((field, _)) = meta.iter().find(|(_, differs)| *differs) {
        return Some(format!("meta.{field}"));
    }
    first("tasks", &a.tasks, &b.tasks)
        .or_else(|| first("resources", &a.resources, &b.resources))
        .or_else(|| first("frames", &a.frames, &b.frames))
        .or_else(|| first("events", &a.events, &b.events))
        .or_else(|| first("schedule", &a.schedule, &b.schedule))
        .or_else(|| (a.deadlock != b.deadlock).then(|| "deadlock".to_string()))
        .or_else(|| Some("format".to_string()))
}

/// `deadsim export`.
pub fn export(args: ExportArgs) -> Result<(), String> {
    refuse_stdin(&args.trace)?;
    if args.perfetto.as_os_str() == "-" {
        // To stdout, as `render -o -` writes a chart.
        use std::io::Write;
        let trace = visualizer::load(&args.trace).map_err(|e| e.to_string())?;
        return beside_replay_check(&trace, &args.trace.display().to_string(), "exported", || {
            let m = visualizer::Model::new(&trace).map_err(|e| format!("{}: {e}", args.trace.display()))?;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            visualizer::perfetto::write_model(&m, &mut out)
                .and_then(|()| out.flush())
                .map_err(|e| format!("--perfetto -: cannot write to stdout ({e})"))
        });
    }
    refuse_overwriting_input(&args.perfetto, &args.trace)?;
    crate::check_output("--perfetto", &Some(args.perfetto.clone())).map_err(|e| e.0)?;
    if args.perfetto.is_dir() {
        return Err(format!("--perfetto {}: cannot write there (it is a folder, not a file)", args.perfetto.display()));
    }
    let trace = visualizer::load(&args.trace).map_err(|e| e.to_string())?;
    beside_replay_check(&trace, &args.trace.display().to_string(), "exported", || {
        let m = visualizer::Model::new(&trace).map_err(|e| format!("{}: {e}", args.trace.display()))?;
        // Written as it is made; worded as --trace's: the flag, the path, then why.
        sim::fsutil::write_atomic_with(&args.perfetto, |out| visualizer::perfetto::write_model(&m, out))
            .map_err(|e| format!("--perfetto {}: cannot write there ({e})", args.perfetto.display()))?;
        eprintln!("wrote {}", crate::output::path_line(&args.perfetto));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(out: Option<&str>, format: Option<&str>) -> RenderArgs {
        RenderArgs {
            trace: PathBuf::from("traces/abba-deadlock.json"),
            out: out.map(PathBuf::from),
            chart: "timeline".into(),
            format: format.map(str::to_string),
            window: "auto".into(),
            x: "time".into(),
            header: "full".into(),
            width: Options::WIDTH.to_string(),
            scale: "1".into(),
            title: None,
            tasks: None,
            rename: Vec::new(),
            colours_of: None,
            align_with: None,
        }
    }

    fn names(v: Vec<(Chart, Format, PathBuf)>) -> Vec<String> {
        v.into_iter().map(|(_, _, p)| p.display().to_string()).collect()
    }

    #[test]
    fn output_names() {
        let one = [Chart::Timeline];
        let all = [Chart::Timeline, Chart::Locks];
        assert_eq!(names(plan(&args(None, None), &one, false).unwrap()), ["traces/abba-deadlock-timeline.png"]);
        assert_eq!(names(plan(&args(None, Some("svg")), &one, false).unwrap()), ["traces/abba-deadlock-timeline.svg"]);
        assert_eq!(names(plan(&args(Some("x.svg"), None), &one, false).unwrap()), ["x.svg"]);
        assert!(plan(&args(Some("x.svg"), Some("png")), &one, false).is_err());
        assert!(plan(&args(None, Some("gif")), &one, false).is_err());
        // Formats and extensions in any case; a trace named `.json` alone is "trace".
        assert_eq!(names(plan(&args(None, Some("SVG")), &one, false).unwrap()), ["traces/abba-deadlock-timeline.svg"]);
        assert_eq!(stem(Path::new("d/.json")), "trace");
        assert_eq!(stem(Path::new("d/RUN.JSON")), "RUN");
        assert_eq!(
            names(plan(&args(Some("traces/abba"), None), &all, true).unwrap()),
            ["traces/abba-timeline.png", "traces/abba-locks.png"]
        );
        assert_eq!(
            names(plan(&args(Some("traces/abba.svg"), None), &all, true).unwrap()),
            ["traces/abba-timeline.svg", "traces/abba-locks.svg"]
        );
        // A file or prefix in a missing folder is refused: only `DIR/` makes one.
        assert!(plan(&args(Some("no-such-dir/abba"), None), &all, true).is_err());
        assert!(plan(&args(Some("no-such-dir/x.svg"), None), &one, false).is_err());
        assert_eq!(
            names(plan(&args(Some("src"), None), &all, true).unwrap()),
            ["src/abba-deadlock-timeline.png", "src/abba-deadlock-locks.png"]
        );
        // A missing folder is made when its parent exists; deeper is a typo.
        assert_eq!(
            names(plan(&args(Some("no-such-dir/"), None), &all, true).unwrap()),
            ["no-such-dir/abba-deadlock-timeline.png", "no-such-dir/abba-deadlock-locks.png"]
        );
        assert!(plan(&args(Some("no-such-dir/deeper/"), None), &all, true).is_err());
    }

    #[test]
    fn render_straight_from_a_run() {
        let run = sim::models::find("abba").unwrap().configure(&[]).unwrap().run(0, true);
        let dir = std::env::temp_dir().join(format!("deadsim-render-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let set = render_trace(run.trace.as_ref().unwrap(), &dir.join("abba.svg"), &Figure::default()).unwrap();
        let files = set.files.clone();
        assert!(!files[0].exists(), "nothing is in place before the commit");
        let skipped = set.commit(run.trace.as_ref().unwrap()).unwrap();
        let names: Vec<String> = files.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["abba-timeline.svg", "abba-locks.svg", "abba-waitfor.svg"]);
        assert_eq!(skipped, ["skipped pipes: no pipes in this trace"]);
        assert!(files.iter().all(|p| std::fs::read_to_string(p).unwrap().contains("<svg")));
        // The same seed again, cut short before anything blocks: its
        // wait-for graph is skipped, and the deadlock's one from before,
        // under the same name, goes rather than pass for this run's.
        let cut = sim::models::find("abba").unwrap().configure(&[]).unwrap().run_with(
            sim::Sim::new(0).record(true).max_steps(3).label("abba", run.trace.as_ref().unwrap().meta.params.clone()),
        );
        let (waitfor, locks) = (dir.join("abba-waitfor.svg"), dir.join("abba-locks.svg"));
        assert!(waitfor.exists() && locks.exists());
        let set = render_trace(cut.trace.as_ref().unwrap(), &dir.join("abba.svg"), &Figure::default()).unwrap();
        let files = set.files.clone();
        // The older charts of kinds this run has none of stay until the commit.
        assert!(waitfor.exists() && locks.exists());
        let skipped = set.commit(cut.trace.as_ref().unwrap()).unwrap();
        assert_eq!(files, [dir.join("abba-timeline.svg")]);
        assert!(skipped.iter().any(|s| s.starts_with("skipped waitfor")), "{skipped:?}");
        // (Nothing is locked in 3 steps: no locks chart either.)
        assert!(!waitfor.exists() && !locks.exists(), "the deadlock's charts are left beside a run without them");
        // A folder still to make, as `render -o DIR/` makes it.
        let set = render_trace(run.trace.as_ref().unwrap(), &dir.join("new/"), &Figure::default()).unwrap();
        let files = set.files.clone();
        set.commit(run.trace.as_ref().unwrap()).unwrap();
        assert!(files.iter().all(|p| p.starts_with(dir.join("new")) && p.exists()), "{files:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
