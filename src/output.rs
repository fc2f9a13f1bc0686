//! Shared output helpers: tables, JSON pieces (a run as `run --json` prints
//! it), the replay line under every failure, counted words, writing files.

use std::path::Path;

use serde_json::json;
use sim::models::{Configured, Model};
use sim::scheduler::StrategyKind;
use sim::{Outcome, Run};

use crate::UsageError;

/// Prints rows in aligned columns (`right[i]`: right-align column i); the
/// last column is not padded.
pub fn print_table<const N: usize>(rows: &[[String; N]], right: &[bool; N]) {
    let mut width = [0usize; N];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            width[i] = width[i].max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else if right[i] {
                line.push_str(&format!("{cell:>w$}  ", w = width[i]));
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = width[i]));
            }
        }
        println!("{}", line.trim_end());
    }
}

/// A failure's report, and for a run stopped at its step limit what the
/// limit may mean (every command that reports one says it alike).
pub fn print_outcome(run: &sim::Run) {
    let o = &run.outcome;
    print!("{o}");
    if let Outcome::StepLimit { steps, .. } = o {
        println!(
            "(--max-steps {steps}: a run that only takes long needs a larger one; one that never ends is a livelock)"
        );
        let strategy = run.trace.as_ref().map_or("", |t| t.meta.strategy.as_str());
        if let Some(note) = sim::outcome::unfair_limit_note(strategy) {
            println!("{note}");
        }
    }
}

/// The `cycle` of the JSON output: `[{"task", "id", "op", "waits_for",
/// "at", "stack", "holds"}]` (see [`blocked_json`]; the id tells apart
/// tasks that share a name).
pub fn cycle_json(o: &Outcome) -> serde_json::Value {
    let cycle: Vec<serde_json::Value> =
        o.deadlock().map(|d| d.cycle.iter().map(blocked_json).collect()).unwrap_or_default();
    serde_json::Value::Array(cycle)
}

/// A blocked task as the text report gives it: what it waits in and on,
/// where (`at`, its innermost frame, as the report's first `at` line, or
/// null; and its whole `stack`, innermost first), and the locks it holds
/// (`holds`: resource, kind, mode, `at`, where taken, or null, and `frame`,
/// the index in `stack` of the frame that took it, or null once that frame
/// has returned).
pub fn blocked_json(b: &sim::outcome::BlockedTask) -> serde_json::Value {
    let at = b.stack.first().map(|f| f.to_string());
    let stack: Vec<String> = b.stack.iter().map(|f| f.to_string()).collect();
    let holds: Vec<serde_json::Value> = b
        .holds
        .iter()
        .map(|h| json!({"resource": h.resource, "kind": h.kind, "mode": h.mode, "at": h.at.as_ref().map(|f| f.to_string()), "frame": h.frame}))
        .collect();
    json!({"task": b.name, "id": b.task, "op": b.op, "waits_for": b.waits_for, "at": at, "stack": stack, "holds": holds})
}

/// Prints one JSON result on stdout, with the `deadsim` version that made
/// it (a CI script, or `merge`, can tell the results of two builds apart).
pub fn print_json(mut v: serde_json::Value) {
    if let Some(o) = v.as_object_mut() {
        o.insert("deadsim".into(), json!(env!("CARGO_PKG_VERSION")));
    }
    println!("{v}");
}

/// The model's parameters as a JSON object, each value of its kind: a
/// flag `true`/`false`, a number a number, a choice a string.
pub fn params_json(cfg: &Configured) -> serde_json::Value {
    let specs = sim::models::find(cfg.model).map(|m| m.params()).unwrap_or_default();
    let mut map = serde_json::Map::new();
    for p in cfg.params.iter() {
        let value = match specs.iter().find(|s| s.name == p.name) {
            Some(spec) => param_value(&spec.kind, &p.value),
            None => json!(p.value),
        };
        map.insert(p.name.clone(), value);
    }
    serde_json::Value::Object(map)
}

/// A parameter's value (as the model takes it, text) as JSON of its kind;
/// the text itself if it does not read as that kind.
pub fn param_value(kind: &sim::models::ParamKind, value: &str) -> serde_json::Value {
    use sim::models::ParamKind;
    match kind {
        ParamKind::Flag => value.parse::<bool>().map_or_else(|_| json!(value), |b| json!(b)),
        ParamKind::Int { .. } => value.parse::<u64>().map_or_else(|_| json!(value), |n| json!(n)),
        ParamKind::Float { .. } => value
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| json!(value), serde_json::Value::Number),
        ParamKind::Choice(_) => json!(value),
    }
}

/// Writes a trace file (`--trace path`) whole or not at all. If it cannot
/// be written, an older deadsim trace at `path` goes too, as [`no_trace`]
/// removes one: a following `render path` must not draw another run.
pub fn write_trace(path: &Path, t: &sim::trace::Trace) -> Result<(), UsageError> {
    t.write_file(path).map_err(|e| {
        let said = remove_older_trace(path);
        UsageError(format!("--trace {}: cannot write the trace ({e}){said}", path.display()))
    })
}

/// Writes a recorded run's charts (`--render OUT`) and its trace (`--trace
/// FILE`): the charts are written beside their places first; then the
/// trace; and only then are the charts put in place. An error leaves the
/// charts that were there as they were; a chart that cannot be drawn or
/// written still lets the trace be written (the error says so), and a
/// trace that cannot be written leaves every chart as it was. The charts
/// written and those left out are said on stderr (stdout is the report's).
pub fn write_charts_and_trace(
    render: Option<(&Path, &crate::render::Figure)>,
    trace: Option<&Path>,
    t: &sim::trace::Trace,
) -> Result<(), UsageError> {
    let staged = match render.map(|(out, opts)| crate::render::render_trace(t, out, opts)).transpose() {
        Ok(staged) => staged,
        Err(e) => {
            return Err(match trace {
                // A window that misses the run, or a chart path that cannot
                // be written, is the flag's fault, not the run's: the trace
                // is written, whole, to draw from once the flag is right (a
                // search may have taken long to find the run).
                Some(path) => {
                    let what = if e.window { "drawn" } else { "written" };
                    match write_trace(path, t) {
                        Ok(()) => UsageError(format!(
                            "{}; no chart was {what}, and --trace {} was written",
                            e.msg,
                            path.display()
                        )),
                        // Both failed: both said, the chart's first.
                        Err(trace) => UsageError(format!("{}; no chart was {what}; {}", e.msg, trace.0)),
                    }
                }
                None => UsageError(e.msg),
            });
        }
    };
    if let (Some(path), Some(set)) = (trace, &staged) {
        // The trace written over one of the charts would be put back under
        // the chart's name: refused, with every file left as it was.
        if let Some(chart) = set.same_file_as(path) {
            return Err(UsageError(format!(
                "--trace {}: the same file as the chart {} of --render; give the trace another name",
                path.display(),
                chart.display()
            )));
        }
    }
    if let Some(path) = trace {
        // On an error the staged charts are dropped, and with them their files.
        write_trace(path, t)?;
    }
    let (mut charts, mut skipped) = (Vec::new(), Vec::new());
    if let Some(set) = staged {
        charts = set.files.clone();
        skipped = set.commit(t).map_err(UsageError)?;
    }
    for f in charts {
        eprintln!("wrote {}", path_line(&f));
    }
    for line in skipped {
        eprintln!("{line}");
    }
    Ok(())
}

/// [`write_charts_and_trace`] for a search, whose result stands even when
/// its files cannot be written: the error is said at once (a report cut
/// short by a closed or full stdout cannot hide it), the report follows,
/// and the command then ends with exit 2 without saying it again.
pub fn write_files_before_report(
    render: Option<(&Path, &crate::render::Figure)>,
    trace: Option<&Path>,
    t: &sim::trace::Trace,
) -> Result<(), UsageError> {
    write_charts_and_trace(render, trace, t).map_err(|e| {
        eprintln!("deadsim: error: {}; the report follows", one_line(&e.0));
        UsageError::said()
    })
}

/// Removes a deadsim trace at `path` that this command did not write (a
/// regular file, not a link or a folder; a file of the user's that a
/// mistyped `--trace` names is left alone), and says what became of it.
fn remove_older_trace(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() && is_trace(path) => match std::fs::remove_file(path) {
            Ok(()) => "; the earlier trace there was removed".to_string(),
            Err(e) => format!("; warning: the earlier trace there could not be removed ({e}), so it is not this one"),
        },
        Ok(m) if m.is_file() => "; the file there is not a deadsim trace and was left as it was".to_string(),
        Ok(m) if m.is_symlink() => {
            "; warning: the link there was left as it was, so what it names is not this one".to_string()
        }
        _ => String::new(),
    }
}

/// [`write_trace`] for a command whose report is still to come (`hunt`,
/// `explore`, `shrink`): a trace that cannot be written is said on stderr
/// at once, so that a report that then cannot be printed either (a full
/// disk under both) does not hide it, and the error is returned, to end
/// the command with exit 2 after the report, which keeps the search's result.
pub fn write_trace_before_report(path: &Path, t: &sim::trace::Trace) -> Result<(), UsageError> {
    write_files_before_report(None, Some(path), t)
}

/// A search asked to write `--trace path` found nothing: says so on stderr,
/// and removes an earlier file at `path`, so that a following `render path`
/// fails instead of drawing an older run's failure as this search's.
pub fn no_trace(path: &Path) {
    // If a trace cannot go, the search's result still stands: a warning.
    let said = remove_older_trace(path);
    eprintln!("no failure, so no trace was written to {}{said}", path_line(path));
}

/// True if the file at `path` starts as a deadsim trace does.
fn is_trace(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..n]);
    let compact: String = head.chars().filter(|c| !c.is_whitespace()).collect();
    compact.starts_with(&format!("{{\"format\":\"{}\"", sim::trace::FORMAT))
}

/// `--flag value` pairs as the command line writes them.
pub fn flags_label(params: &[(String, String)]) -> String {
    if params.is_empty() {
        return "(default)".to_string();
    }
    params
        .iter()
        .map(|(k, v)| if v == "true" { format!("--{k}") } else { format!("--{k} {v}") })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `model --flags` for a report's header: the non-default flags, and the
/// model's [`label_params`](sim::models::Model::label_params) whatever
/// their values (`ttrpc --server v1.0.2 --client v1.2.3`).
pub fn model_label(m: &dyn sim::models::Model, cfg: &Configured) -> String {
    with_flags(m.name(), cfg.flags_with(m.params(), m.label_params()))
}

/// `model --flags` for a command a report prints (non-default flags only).
pub fn model_command(m: &dyn sim::models::Model, cfg: &Configured) -> String {
    with_flags(m.name(), cfg.flags(m.params()))
}

/// `name flags`, or `name` alone when there are none.
fn with_flags(name: &str, flags: String) -> String {
    if flags.is_empty() {
        name.to_string()
    } else {
        format!("{name} {flags}")
    }
}

/// The lock-order warnings as JSON.
pub fn warnings_json(w: &[sim::lockorder::Warning]) -> serde_json::Value {
    json!(w
        .iter()
        .map(|w| json!({"kind": w.kind.as_str(), "summary": w.summary, "report": w.report}))
        .collect::<Vec<_>>())
}

/// Prints the lock-order warnings (potential deadlocks first) after a result.
pub fn print_warnings(w: &[sim::lockorder::Warning]) {
    if w.is_empty() {
        return;
    }
    println!("\nLock order ({} over the schedules run):", crate::output::count(w.len() as u64, "finding"));
    for w in w {
        println!();
        print!("{}", w.report);
    }
}

/// An error line cut to a length a terminal shows: a value echoed from a
/// file or a flag (a task name of 100,000 characters) is cut, with how
/// much was left out, so that the line still ends with what follows it.
pub fn clip(msg: &str) -> std::borrow::Cow<'_, str> {
    const KEEP: usize = 1_000;
    let n = msg.chars().count();
    if n <= KEEP + 100 {
        return msg.into();
    }
    // The start and the end: the file or flag, and what was expected.
    let head: String = msg.chars().take(KEEP / 2).collect();
    let tail: String = msg.chars().skip(n - KEEP / 2).collect();
    format!("{head}… ({} characters left out) …{tail}", n - KEEP).into()
}

/// A path as errors and notes show it: [`one_line`] of its text.
pub fn path_line(path: &std::path::Path) -> String {
    one_line(&path.display().to_string()).into_owned()
}

/// `msg` with its control characters escaped (`\n`, `\t`, `\u{1b}`): an
/// error stays one line, and a name read from a file (a task called
/// "a\nb", an escape sequence) neither breaks it nor reaches the terminal.
pub fn one_line(msg: &str) -> std::borrow::Cow<'_, str> {
    // Unicode's bidirectional controls too: a name with U+202E (right-to-left
    // override) would turn the rest of the line around in a terminal.
    let bidi =
        |c: char| matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let escaped = |c: char| c.is_control() || bidi(c);
    if !msg.chars().any(escaped) {
        return msg.into();
    }
    let mut out = String::with_capacity(msg.len() + 8);
    for c in msg.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escaped(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// The longest schedule string a text report prints whole.
pub const LONG_SCHEDULE: usize = 4000;

/// True if `run`'s schedule string is too long to print (a run stopped at
/// a step limit of a million steps has one of megabytes).
pub fn schedule_too_long(run: &Run) -> bool {
    run.trace.as_ref().is_some_and(|t| t.meta.replay.len() > LONG_SCHEDULE)
}

/// The replay line printed under every failure. A schedule string too long
/// to print ([`LONG_SCHEDULE`]) is said where to find: `--json`'s
/// `schedule`, a `--trace` file's `meta.replay`.
pub fn replay_line(m: &dyn Model, cfg: &Configured, run: &Run) -> String {
    let command = replay_command(m, cfg, run);
    match (&run.trace, schedule_too_long(run)) {
        (Some(t), true) => {
            let head = command.strip_suffix(t.meta.replay.as_str()).unwrap_or(&command);
            format!(
                "replay: {head}<the schedule string: {}, not printed; --json gives it (`schedule`), \
                 as a --trace file does (meta.replay)>",
                count(t.meta.replay.chars().count() as u64, "character")
            )
        }
        _ => format!("replay: {command}"),
    }
}

/// The command that replays `run`: its schedule string (or seed), the
/// model's flags, and the step limit a step-limit failure needs.
pub fn replay_command(m: &dyn Model, cfg: &Configured, run: &Run) -> String {
    let model = format!("{}{}", model_command(m, cfg), step_limit_flag(run));
    match &run.trace {
        Some(t) => format!("deadsim replay {model} --schedule {}", t.meta.replay),
        None => format!("deadsim replay {model} --seed {}", run.seed),
    }
}

/// ` --strategy K` for a replay line, or nothing for the default.
pub fn strategy_flag(kind: StrategyKind) -> String {
    if kind == StrategyKind::Random {
        String::new()
    } else {
        format!(" --strategy {kind}")
    }
}

/// The command that replays `run` by its seed under `kind`: the model's
/// flags, the strategy and the step limit it needs.
pub fn seed_replay_command(m: &dyn Model, cfg: &Configured, kind: StrategyKind, seed: u64, run: &Run) -> String {
    format!("deadsim replay {} --seed {seed}{}{}", model_command(m, cfg), strategy_flag(kind), step_limit_flag(run))
}

/// A step-limit failure replays only under the same limit; any other failure
/// happens before the limit, so the default one replays it too.
pub fn step_limit_flag(run: &Run) -> String {
    match run.outcome {
        sim::Outcome::StepLimit { steps, .. } => format!(" --max-steps {steps}"),
        _ => String::new(),
    }
}

/// One run as `run --json` prints it (and `replay --json`, and `shrink
/// --json` for the shrunk run): `seed` is null for a schedule.
pub fn run_json(m: &dyn Model, cfg: &Configured, run: &Run, seed: Option<u64>, strategy: &str) -> serde_json::Value {
    let failed = run.outcome.is_failure();
    json!({
        "verdict": run.outcome.verdict(),
        "seed": seed,
        "schedules": 1,
        "cycle": cycle_json(&run.outcome),
        "model": m.name(),
        "params": params_json(cfg),
        "strategy": strategy,
        "steps": run.steps,
        "time_ns": run.time_ns,
        // A run stopped at its step limit: the tasks blocked there; a
        // deadlock: those blocked behind its cycle (or, with no cycle, all).
        "blocked": match &run.outcome {
            sim::Outcome::StepLimit { blocked, .. } => blocked.iter().map(blocked_json).collect::<Vec<_>>(),
            sim::Outcome::Deadlock(d) => d.behind.iter().map(blocked_json).collect::<Vec<_>>(),
            _ => Vec::new(),
        },
        // And those able to run there; `started` false: never scheduled.
        "running": match &run.outcome {
            sim::Outcome::StepLimit { running, .. } => running
                .iter()
                .map(|r| json!({"task": r.name, "id": r.task, "started": r.started, "asleep": r.asleep,
                    "spawned_at": r.spawned_at}))
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        },
        "message": run.outcome.summary(),
        "schedule": run.trace.as_ref().map(|t| t.meta.replay.clone()),
        "replay": failed.then(|| replay_command(m, cfg, run)),
        "warnings": crate::output::warnings_json(&run.lock_order.warnings()),
    })
}

/// "1 step", "2 steps", "1 try", "3 tries".
pub fn count(n: u64, one: &str) -> String {
    match (n, one.strip_suffix('y')) {
        (1, _) => format!("{n} {one}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        _ => format!("{n} {one}s"),
    }
}
