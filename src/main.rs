//! `deadsim`: the command line over the `sim` and `visualizer` crates.
//! Argument parsing, progress and files only; no simulation logic here.

mod model_args;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use serde_json::json;

use model_args::ModelArgs;
use sim::hunt::{hunt, SeedRange};
use sim::models::{self, Configured, Model};
use sim::Outcome;

#[derive(Parser)]
#[command(
    name = "deadsim",
    version,
    about = "Reproduce real concurrency deadlocks deterministically, seed by seed",
    long_about = "deadsim runs models of concurrent systems under a seeded scheduler, finds wait-for \
                  cycles (deadlocks) through locks, monitors, channels and pipes, and replays any seed \
                  byte for byte.\n\nExit codes: 0 nothing found, 1 a failure found, 2 bad usage or input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in models, their variants and parameters
    Models,
    /// Run one seed of a model and report the outcome
    Run {
        /// Model name (see `deadsim models`)
        model: String,
        /// The seed
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Write the run's trace (JSON) to FILE
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Print one JSON object on stdout instead of the report
        #[arg(long)]
        json: bool,
        /// Stop a run after N steps (outcome step-limit)
        #[arg(long, value_name = "N", default_value_t = sim::DEFAULT_MAX_STEPS)]
        max_steps: u64,
        #[command(flatten)]
        params: ModelArgs,
    },
    /// Run many seeds; stop at the lowest failing one. Without a model, hunt
    /// every built-in model variant and print a verdict table
    Hunt {
        /// Model name; omit to hunt every built-in model variant
        model: Option<String>,
        /// Seeds to run: A..B (B excluded) or A..=B
        #[arg(long, default_value = "0..10000", value_name = "RANGE")]
        seeds: String,
        /// Worker threads (each runs its own simulations)
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        /// Write the trace of the lowest failing seed to FILE
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Print one JSON object on stdout instead of the report
        #[arg(long)]
        json: bool,
        /// Stop a run after N steps (outcome step-limit)
        #[arg(long, value_name = "N", default_value_t = sim::DEFAULT_MAX_STEPS)]
        max_steps: u64,
        #[command(flatten)]
        params: ModelArgs,
    },
    /// Re-run one seed with recording on: print every event, then the report
    Replay {
        /// Model name
        model: String,
        /// The seed to replay
        #[arg(long)]
        seed: u64,
        /// Write the trace (JSON) to FILE
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Stop a run after N steps
        #[arg(long, value_name = "N", default_value_t = sim::DEFAULT_MAX_STEPS)]
        max_steps: u64,
        #[command(flatten)]
        params: ModelArgs,
    },
    /// Draw a trace as charts (PNG or SVG): timeline, locks, pipes, wait-for graph
    Render(render::RenderArgs),
    /// Convert a trace to Chrome Trace Event JSON (opens in Perfetto)
    Export(render::ExportArgs),
    /// Measure schedules/s and steps/s (recording off, one core)
    Bench {
        /// Seconds to run each measurement
        #[arg(long, default_value_t = 2.0)]
        seconds: f64,
    },
}

/// A failure that ends the command with exit code 2 (bad usage or input).
struct UsageError(String);

impl From<String> for UsageError {
    fn from(s: String) -> Self {
        UsageError(s)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(found) => ExitCode::from(if found { 1 } else { 0 }),
        Err(UsageError(msg)) => {
            eprintln!("deadsim: error: {msg}");
            ExitCode::from(2)
        }
    }
}

/// Runs a command; `Ok(true)` when it found a failure.
fn dispatch(cmd: Command) -> Result<bool, UsageError> {
    match cmd {
        Command::Models => {
            print_models();
            Ok(false)
        }
        Command::Run { model, seed, trace, json, max_steps, params } => {
            let (m, cfg) = configure(&model, &params)?;
            let run = cfg.run_with(sim::Sim::new(seed).record(trace.is_some()).max_steps(max_steps));
            if let (Some(path), Some(t)) = (&trace, &run.trace) {
                write_trace(path, t)?;
            }
            if json {
                let cycle = cycle_json(&run.outcome);
                let out = json!({
                    "verdict": run.outcome.verdict(),
                    "seed": if run.outcome.is_failure() { Some(seed) } else { None },
                    "schedules": 1,
                    "cycle": cycle,
                    "model": m.name(),
                    "params": params_json(&cfg),
                    "steps": run.steps,
                    "time_ns": run.time_ns,
                    "message": run.outcome.summary(),
                });
                println!("{out}");
            } else {
                println!("{} {} seed {seed}: {} after {} steps", m.name(), cfg.flags(m.params()), run.outcome.verdict(), run.steps);
                if run.outcome.is_failure() {
                    println!();
                    print!("{}", run.outcome);
                }
            }
            Ok(run.outcome.is_failure())
        }
        Command::Hunt { model, seeds, jobs, trace, json, max_steps, params } => {
            let range: SeedRange = seeds.parse().map_err(|e| format!("--seeds {e}"))?;
            let jobs = jobs.unwrap_or_else(default_jobs);
            if jobs == 0 {
                return Err(UsageError("--jobs must be at least 1".into()));
            }
            match model {
                Some(name) => hunt_one(&name, &params, range, jobs, trace, json, max_steps),
                None => {
                    if !params.pairs().is_empty() {
                        return Err(UsageError("model parameters need a model: deadsim hunt <model> ...".into()));
                    }
                    if trace.is_some() {
                        return Err(UsageError("--trace needs a model: deadsim hunt <model> --trace FILE".into()));
                    }
                    hunt_all(range, jobs, json, max_steps)
                }
            }
        }
        Command::Replay { model, seed, trace, max_steps, params } => {
            let (m, cfg) = configure(&model, &params)?;
            let run = cfg.run_with(sim::Sim::new(seed).record(true).max_steps(max_steps));
            let t = run.trace.as_ref().expect("recording on");
            println!("replay: {} {} seed {seed}", m.name(), cfg.flags(m.params()));
            for e in &t.events {
                let task = &t.tasks[e.task as usize].name;
                let res = e.resource.map(|r| format!(" \"{}\"", t.resources[r as usize].name)).unwrap_or_default();
                let amount = e.amount.map(|a| format!(" {a}")).unwrap_or_default();
                let frame = e.frame.map(|f| format!("  at {}", t.frames[f as usize])).unwrap_or_default();
                let kind = serde_json::to_value(e.kind).unwrap();
                println!("step {:>6} t={:>9}ns  {task:<20} {}{res}{amount}{frame}", e.step, e.time, kind.as_str().unwrap());
            }
            println!();
            print!("{}", run.outcome);
            if let Some(path) = &trace {
                write_trace(path, t)?;
            }
            Ok(run.outcome.is_failure())
        }
        Command::Render(args) => render::render(args).map(|()| false).map_err(UsageError),
        Command::Export(args) => render::export(args).map(|()| false).map_err(UsageError),
        Command::Bench { seconds } => {
            if !(seconds > 0.0 && seconds <= 600.0) {
                return Err(UsageError(format!("--seconds {seconds}: expected a number of seconds above 0 and at most 600")));
            }
            bench(seconds);
            Ok(false)
        }
    }
}

fn default_jobs() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn configure(name: &str, params: &ModelArgs) -> Result<(&'static dyn Model, Configured), UsageError> {
    let m = models::find(name)?;
    let cfg = m.configure(&params.pairs())?;
    Ok((m, cfg))
}

fn write_trace(path: &std::path::Path, t: &sim::trace::Trace) -> Result<(), UsageError> {
    t.write_file(path).map_err(|e| UsageError(format!("cannot write trace {}: {e}", path.display())))
}

fn cycle_json(o: &Outcome) -> serde_json::Value {
    let cycle: Vec<serde_json::Value> = o
        .deadlock()
        .map(|d| d.cycle.iter().map(|b| json!({"task": b.name, "waits_for": b.waits_for})).collect())
        .unwrap_or_default();
    serde_json::Value::Array(cycle)
}

fn params_json(cfg: &Configured) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for p in &cfg.params {
        map.insert(p.name.clone(), json!(p.value));
    }
    serde_json::Value::Object(map)
}

fn hunt_one(
    name: &str,
    params: &ModelArgs,
    range: SeedRange,
    jobs: usize,
    trace: Option<PathBuf>,
    json: bool,
    max_steps: u64,
) -> Result<bool, UsageError> {
    let (m, cfg) = configure(name, params)?;
    let started = Instant::now();
    let r = hunt(range, jobs, |seed| cfg.run_with(sim::Sim::new(seed).max_steps(max_steps)).outcome);
    let elapsed = started.elapsed().as_secs_f64();
    if let (Some(path), Some((seed, _))) = (&trace, &r.failure) {
        let run = cfg.run_with(sim::Sim::new(*seed).record(true).max_steps(max_steps));
        write_trace(path, run.trace.as_ref().unwrap())?;
    }
    let flags = cfg.flags(m.params());
    if json {
        let (verdict, seed, cycle, message) = match &r.failure {
            Some((s, o)) => (o.verdict(), Some(*s), cycle_json(o), o.summary()),
            None => ("no-deadlock", None, json!([]), format!("no failure in seeds {range}")),
        };
        println!(
            "{}",
            json!({"verdict": verdict, "seed": seed, "schedules": r.schedules, "cycle": cycle,
                   "model": m.name(), "params": params_json(&cfg), "seeds": range.to_string(), "message": message})
        );
    } else {
        match &r.failure {
            Some((seed, o)) => {
                println!("{} {flags}: {} at seed {seed} (schedule {} of seeds {range})", m.name(), o.verdict(), r.schedules);
                println!();
                print!("{o}");
                println!();
                let mut replay = format!("deadsim replay {} --seed {seed}", m.name());
                if !flags.is_empty() {
                    replay.push(' ');
                    replay.push_str(&flags);
                }
                println!("replay: {replay}");
            }
            None => println!("{} {flags}: no failure in {} schedules (seeds {range})", m.name(), r.schedules),
        }
        eprintln!("({} schedules in {elapsed:.2}s on {jobs} job(s))", r.schedules);
    }
    Ok(r.failure.is_some())
}

fn hunt_all(range: SeedRange, jobs: usize, json: bool, max_steps: u64) -> Result<bool, UsageError> {
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut any = false;
    for m in models::all() {
        for v in m.variants() {
            let cfg = m.configure(&v.params).map_err(|e| UsageError(format!("built-in variant {}: {e}", m.name())))?;
            let r = hunt(range, jobs, |seed| cfg.run_with(sim::Sim::new(seed).max_steps(max_steps)).outcome);
            any |= r.failure.is_some();
            rows.push((m, v, r));
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    if json {
        let variants: Vec<serde_json::Value> = rows
            .iter()
            .map(|(m, v, r)| {
                json!({
                    "model": m.name(), "variant": v.label, "expected": v.expect.as_str(),
                    "verdict": r.failure.as_ref().map_or("no-deadlock", |f| f.1.verdict()),
                    "seed": r.failure.as_ref().map(|f| f.0), "schedules": r.schedules,
                    "cycle": r.failure.as_ref().map_or(json!([]), |f| cycle_json(&f.1)),
                })
            })
            .collect();
        let verdict = rows.iter().find_map(|(_, _, r)| r.failure.as_ref().map(|f| f.1.verdict())).unwrap_or("no-deadlock");
        let seed = rows.iter().find_map(|(_, _, r)| r.failure.as_ref().map(|f| f.0));
        let schedules: u64 = rows.iter().map(|(_, _, r)| r.schedules).sum();
        println!("{}", json!({"verdict": verdict, "seed": seed, "schedules": schedules, "cycle": [], "seeds": range.to_string(), "variants": variants}));
        return Ok(any);
    }
    println!("deadsim hunt: every built-in model variant, seeds {range}, {jobs} job(s)\n");
    println!("{:<14} {:<12} {:<12} {:>8} {:>10}  {:<9} cycle", "model", "variant", "verdict", "seed", "schedules", "expected");
    for (m, v, r) in &rows {
        let verdict = r.failure.as_ref().map_or("no-deadlock", |f| f.1.verdict());
        let seed = r.failure.as_ref().map_or("-".to_string(), |f| f.0.to_string());
        let ok = if verdict == v.expect.as_str() { "yes" } else { "NO" };
        let cycle = r
            .failure
            .as_ref()
            .and_then(|f| f.1.deadlock())
            .map(|d| d.cycle.iter().map(|b| format!("{}->{}", b.name, b.waits_for)).collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let label = if v.label.is_empty() { "(default)" } else { &v.label };
        println!("{:<14} {:<12} {:<12} {:>8} {:>10}  {:<9} {}", m.name(), label, verdict, seed, r.schedules, ok, cycle);
    }
    println!("\nReplay a failing seed: deadsim replay <model> --seed N [variant flags]");
    eprintln!("({elapsed:.2}s)");
    Ok(any)
}

fn print_models() {
    for m in models::all() {
        println!("{}: {}", m.name(), m.about());
        let variants: Vec<String> = m
            .variants()
            .iter()
            .map(|v| format!("{} ({})", if v.label.is_empty() { "(default)" } else { &v.label }, v.expect.as_str()))
            .collect();
        println!("  variants: {}", variants.join(", "));
        for p in m.params() {
            let kind = match p.kind {
                models::ParamKind::Flag => String::new(),
                models::ParamKind::Int { min, max } => format!(" <{min}..={max}>"),
                models::ParamKind::Choice(c) => format!(" <{}>", c.join("|")),
            };
            println!("  --{}{kind}  {} (default {})", p.name, p.help, p.default);
        }
        println!();
    }
}

fn bench(seconds: f64) {
    println!("deadsim bench: random strategy, recording off, one core, {seconds}s per row\n");
    println!("{:<14} {:<22} {:>14} {:>14} {:>10}", "model", "variant", "schedules/s", "steps/s", "steps/run");
    let rows: Vec<(&str, Vec<(String, String)>)> = vec![
        ("abba", vec![("fixed".into(), "true".into())]),
        ("abba", vec![]),
        ("philosophers", vec![("ordered".into(), "true".into())]),
        ("philosophers", vec![]),
    ];
    for (name, params) in rows {
        let m = models::find(name).unwrap();
        let cfg = m.configure(&params).unwrap();
        // Warm up, then measure whole batches until the time is up.
        for seed in 0..1000 {
            std::hint::black_box(cfg.run(seed, false));
        }
        let started = Instant::now();
        let (mut runs, mut steps, mut seed) = (0u64, 0u64, 0u64);
        while started.elapsed().as_secs_f64() < seconds {
            for _ in 0..1000 {
                let r = cfg.run(seed, false);
                steps += r.steps;
                runs += 1;
                seed += 1;
            }
        }
        let t = started.elapsed().as_secs_f64();
        let label = cfg.flags(m.params());
        let label = if label.is_empty() { "(default)".to_string() } else { label };
        println!(
            "{:<14} {:<22} {:>14.0} {:>14.0} {:>10.1}",
            name,
            label,
            runs as f64 / t,
            steps as f64 / t,
            steps as f64 / runs as f64
        );
    }
}
