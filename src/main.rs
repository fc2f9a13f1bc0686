//! `deadsim`: the command line over the `sim` and `visualizer` crates.
//! Argument parsing, progress and files only; no simulation logic here.

mod bench_cmd;
mod hunt_cmd;
mod model_args;
mod output;
mod render;
mod search_cmd;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use model_args::ModelArgs;
use search_cmd::Which;
use sim::hunt::SeedRange;
use sim::models::{self, Configured, Model};
use sim::scheduler::StrategyKind;

#[derive(Parser)]
#[command(
    name = "deadsim",
    version,
    propagate_version = true,
    about = "Reproduce real concurrency deadlocks deterministically, seed by seed",
    long_about = "deadsim runs models of concurrent systems under a seeded scheduler, finds wait-for \
                  cycles (deadlocks) through locks, monitors, channels and pipes, and replays any seed \
                  or schedule byte for byte.\n\nExit codes: 0 nothing found, 1 a failure found, 2 bad usage or input, 130 a hunt or \
                  explore stopped by Ctrl-C before it found anything (explore --require-complete: 1 also when it \
                  stopped before a proof)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in models, their variants and parameters
    Models {
        /// Only this model
        model: Option<String>,
        /// Print one JSON object on stdout: each model's parameters and variants, as flags
        #[arg(long)]
        json: bool,
    },
    /// Run one seed of a model and report the outcome
    Run {
        /// Model name (see `deadsim models`)
        model: String,
        /// The seed
        #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = parse_seed)]
        seed: u64,
        /// random, pct or pct:D (PCT of depth D, 1 to 10; pct is pct:3)
        #[arg(long, default_value = "random", value_name = "STRATEGY")]
        strategy: String,
        /// Write the run's trace (JSON) to FILE
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Draw the run's charts: OUT is a directory (ending in /) or a file-name prefix
        #[arg(long, value_name = "OUT")]
        render: Option<PathBuf>,
        #[command(flatten)]
        figure: render::FigureArgs,
        /// Print one JSON object on stdout instead of the report
        #[arg(long)]
        json: bool,
        /// Stop a run after N steps (outcome step-limit)
        #[arg(long, value_name = "N", default_value_t = sim::DEFAULT_MAX_STEPS, allow_hyphen_values = true, value_parser = parse_count_u64)]
        max_steps: u64,
        #[command(flatten)]
        params: ModelArgs,
    },
    /// Run many seeds; stop at the lowest failing one. Without a model, hunt
    /// every built-in model variant and print a verdict table
    Hunt {
        /// Model name; omit to hunt every built-in model variant
        model: Option<String>,
        /// Seeds to run: A..B (B excluded), A..=B or one seed A [default: 0..10000]
        #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
        seeds: Option<String>,
        /// Worker threads, 1 to 1024 (each runs its own simulations; default: the machine's cores). Seeds go out 16 at a time, so S seeds use at most S/16 of them, rounded up
        #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_jobs)]
        jobs: Option<usize>,
        /// random, pct, pct:D (depth D, 1 to 10; pct is pct:3), or dfs (exhaustive, as `deadsim explore`: it takes
        /// --preemptions, --no-reduction, --max-executions, --require-complete, --max-steps, --time-budget and
        /// --keep-going)
        #[arg(long, default_value = "random", value_name = "STRATEGY")]
        strategy: String,
        /// With --strategy dfs: only schedules with at most K preemptions (as explore's)
        #[arg(long, value_name = "K", allow_hyphen_values = true, value_parser = parse_whole_u32)]
        preemptions: Option<u32>,
        /// With --strategy dfs: explore without partial-order reduction (every interleaving)
        #[arg(long)]
        no_reduction: bool,
        /// With --strategy dfs: stop after N executions [default: 1000000]
        #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_count_u64)]
        max_executions: Option<u64>,
        /// With --strategy dfs: exit 1, not 0, when the search stops (a budget ran out) before it has
        /// covered every schedule (within --preemptions), as explore's
        #[arg(long)]
        require_complete: bool,
        /// Write the trace of the lowest failing seed to FILE (with no failure, an older FILE is
        /// removed); needs a model
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Print one JSON object on stdout instead of the report
        #[arg(long)]
        json: bool,
        /// Stop a run after N steps (outcome step-limit) [default: 1000000]
        #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_count_u64)]
        max_steps: Option<u64>,
        /// Hunt every cell of the model's version grid (ttrpc: servers x clients); not with --trace,
        /// --keep-going, --shard, --time-budget or --check-determinism (hunt one cell for those)
        #[arg(long)]
        matrix: bool,
        /// Run every seed; report the share of failing schedules (95% Wilson score interval) and each distinct failure;
        /// needs a model (with --strategy dfs: every distinct failure, as explore --keep-going)
        #[arg(long)]
        keep_going: bool,
        /// Run only shard I of N (0-based) of the seed range; merge the JSON with `deadsim merge`;
        /// needs a model
        #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
        shard: Option<String>,
        /// Stop taking seeds after this long, in seconds or with a unit (90, 1.5s, 10m, 2h; the first 16
        /// seeds always run), and say how far it got; needs a model
        #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
        time_budget: Option<String>,
        /// Run each seed twice, recorded, and report the first divergent step if they differ; needs a
        /// model, not with --matrix
        #[arg(long)]
        check_determinism: bool,
        /// With no model, or --matrix: exit 0 when every row (cell) has its expected verdict and 1
        /// when one does not, instead of 1 when any row fails (a CI check of the models)
        #[arg(long)]
        check_expected: bool,
        #[command(flatten)]
        params: ModelArgs,
    },
    /// Re-run one seed or schedule string with recording on: every event, then the report
    Replay {
        /// Model name
        model: String,
        #[command(flatten)]
        which: WhichArgs,
        /// Write the trace (JSON) to FILE
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Draw the run's charts: OUT is a directory (ending in /) or a file-name prefix
        #[arg(long, value_name = "OUT")]
        render: Option<PathBuf>,
        #[command(flatten)]
        figure: render::FigureArgs,
        /// Print one JSON object on stdout (as `run --json`) instead of the events and the report
        #[arg(long)]
        json: bool,
        /// Stop a run after N steps
        #[arg(long, value_name = "N", default_value_t = sim::DEFAULT_MAX_STEPS, allow_hyphen_values = true, value_parser = parse_count_u64)]
        max_steps: u64,
        #[command(flatten)]
        params: ModelArgs,
    },
    /// Explore every schedule (depth-first, with partial-order reduction) or
    /// every schedule within a preemption bound; prove or find a failure
    Explore(ExploreCli),
    /// From a failing seed or schedule, find the run with the fewest
    /// preemptions (then steps) that fails the same way
    Shrink {
        /// Model name
        model: String,
        #[command(flatten)]
        which: WhichArgs,
        /// Write the shrunk run's trace to FILE (if the run does not fail, an older FILE is removed)
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Draw the shrunk run's charts: OUT is a directory (ending in /) or a file-name prefix
        #[arg(long, value_name = "OUT")]
        render: Option<PathBuf>,
        #[command(flatten)]
        figure: render::FigureArgs,
        /// Print one JSON object on stdout instead of the report
        #[arg(long)]
        json: bool,
        /// Candidate runs to try at most
        #[arg(long, value_name = "N", default_value_t = 20_000, allow_hyphen_values = true, value_parser = parse_count_u64)]
        max_tries: u64,
        /// Stop a run after N steps
        #[arg(long, value_name = "N", default_value_t = sim::DEFAULT_MAX_STEPS, allow_hyphen_values = true, value_parser = parse_count_u64)]
        max_steps: u64,
        #[command(flatten)]
        params: ModelArgs,
    },
    /// Draw a trace as charts (PNG or SVG): timeline, locks, pipes, wait-for graph
    Render(render::RenderArgs),
    /// Convert a trace to Chrome Trace Event JSON (opens in Perfetto)
    Export(render::ExportArgs),
    /// Merge the JSON results of the shards of one hunt (`hunt --shard I/N --json`)
    Merge {
        /// The shards' JSON files
        files: Vec<PathBuf>,
    },
    /// Measure schedules/s and steps/s (recording off, one core)
    Bench {
        /// Seconds for each throughput row, 0.01 to 600 (a first-deadlock row stops after 5 times
        /// that or 100,000 seeds; the exhaustive rows have a fixed budget of 100,000 executions)
        #[arg(long, default_value = "2", allow_hyphen_values = true)]
        seconds: String,
    },
}

/// Failing runs longer than this are not re-run with recording just to print
/// their schedule string; the seed is printed instead.
const RECORD_FOR_SCHEDULE_MAX_STEPS: u64 = 200_000;

/// `--seed N`, read as `--seeds` reads its seeds: clap's own message for
/// `-1` is "invalid digit found in string".
fn parse_seed(s: &str) -> Result<u64, String> {
    s.trim().parse::<u64>().map_err(|_| format!("not a seed (a whole number from 0 to {})", u64::MAX))
}

/// A count flag that is at least 1 (`--max-steps`, `--max-executions`,
/// `--max-tries`): one wording for every value that is not one (clap's own
/// are "invalid digit found in string" for `-1` and "number too large to fit
/// in target type"). 0 parses, to be refused as "must be at least 1".
fn parse_count_u64(s: &str) -> Result<u64, String> {
    s.trim().parse::<u64>().map_err(|_| format!("not a whole number from 1 to {}", u64::MAX))
}

/// As [`parse_count_u64`], for `--preemptions`, which may be 0.
fn parse_whole_u32(s: &str) -> Result<u32, String> {
    s.trim().parse::<u32>().map_err(|_| format!("not a whole number from 0 to {}", u32::MAX))
}

/// `--jobs N`: what it takes, said as for `--jobs 0` (which parses).
fn parse_jobs(s: &str) -> Result<usize, String> {
    s.trim().parse::<usize>().map_err(|_| format!("expected 1 to {MAX_JOBS} worker threads"))
}

/// Which run: a seed (with the strategy it ran under) or a schedule string.
#[derive(clap::Args)]
struct WhichArgs {
    /// The seed
    #[arg(long, allow_hyphen_values = true, value_parser = parse_seed)]
    seed: Option<u64>,
    /// The strategy the seed was run with [default: random]
    #[arg(long, value_name = "STRATEGY")]
    strategy: Option<String>,
    /// A schedule string (printed under every failure) instead of a seed
    #[arg(long, value_name = "STRING")]
    schedule: Option<String>,
}

impl WhichArgs {
    fn which(self, max_steps: u64) -> Result<Which, UsageError> {
        Which::from_args(self.seed, self.strategy.as_deref(), self.schedule, max_steps)
    }
}

/// A failure that ends the command with exit code 2 (bad usage or input).
/// An empty message is one said on stderr already ([`UsageError::said`]).
pub struct UsageError(pub String);

impl UsageError {
    /// An error already said on stderr (a file a search could not write,
    /// said before its report): the command ends with exit 2 and says
    /// nothing more, so that stderr has the one line.
    pub fn said() -> UsageError {
        UsageError(String::new())
    }
}

impl From<String> for UsageError {
    fn from(s: String) -> Self {
        UsageError(s)
    }
}

/// Restores the default SIGPIPE action, so `deadsim ... | head` ends quietly
/// instead of panicking on a closed stdout (Rust ignores SIGPIPE by default).
fn reset_sigpipe() {
    #[cfg(unix)]
    {
        extern "C" {
            fn signal(signum: i32, handler: usize) -> usize;
        }
        const SIGPIPE: i32 = 13;
        const SIG_DFL: usize = 0;
        // SAFETY: installs the default disposition for one signal; no handler code runs.
        unsafe {
            signal(SIGPIPE, SIG_DFL);
        }
    }
}

/// A report that cannot be written (stdout on a full disk, a closed
/// descriptor) ends the command with one line and exit 2, as bad output
/// paths do, not with `println!`'s panic and backtrace.
fn exit_on_failed_output() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(why) = msg.strip_prefix("failed printing to stdout: ") {
            let _ = writeln!(std::io::stderr(), "deadsim: error: cannot write the output to stdout ({why})");
            std::process::exit(2);
        }
        if msg.starts_with("failed printing to stderr") {
            std::process::exit(2);
        }
        previous(info)
    }));
}

/// `deadsim help [COMMAND] --help|-h|--version|-V`, which clap takes for a
/// command named `--help`, read as `deadsim [COMMAND] --help` (the top
/// level's help says what `help` does) or `deadsim --version`. Anything else
/// is left as it is, for clap.
fn help_with_flags(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let Some(rest) = args.get(2..).filter(|_| args[1] == "help") else { return args };
    let Some(rest) = rest.iter().map(|a| a.to_str()).collect::<Option<Vec<&str>>>() else { return args };
    let (flags, names): (Vec<&str>, Vec<&str>) = rest.iter().partition(|a| a.starts_with('-'));
    let known = ["-V", "--version", "-h", "--help"];
    if flags.is_empty() || names.len() > 1 || flags.iter().any(|f| !known.contains(f)) {
        return args;
    }
    let help = flags.iter().any(|f| *f == "-h" || *f == "--help");
    let mut out = vec![args[0].clone()];
    out.extend(names.iter().map(std::ffi::OsString::from));
    out.push(if help { "--help" } else { "--version" }.into());
    out
}

fn main() -> ExitCode {
    reset_sigpipe();
    exit_on_failed_output();
    use clap::{CommandFactory, FromArgMatches};
    // A subcommand's `-V` says "deadsim 0.1.0", as the top level's does (clap
    // would name it "deadsim-run").
    let cmd = Cli::command().mut_subcommands(|c| c.display_name("deadsim"));
    let args = help_with_flags(std::env::args_os().collect());
    // The command's name, for the errors below (`std::env::args` would
    // panic on an argument that is not UTF-8).
    let first_arg: Option<String> = args.get(1).and_then(|a| a.to_str()).map(String::from);
    // Where clap says only "invalid UTF-8 was detected in one or more
    // arguments": which one, by the flag it is the value of.
    let not_utf8 = args.iter().skip(1).position(|a| a.to_str().is_none()).map(|i| i + 1).map(|i| {
        let lossy = args[i].to_string_lossy();
        let before = if i > 1 { args[i - 1].to_str() } else { None };
        match (before, lossy.split_once('=')) {
            (_, Some((flag, value))) if flag.starts_with("--") => format!("{flag} {value}: not UTF-8"),
            (Some(flag), _) if flag.starts_with("--") => format!("{flag} {lossy}: not UTF-8"),
            _ => format!("argument `{lossy}`: not UTF-8"),
        }
    });
    let cli = match cmd.try_get_matches_from(args).and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::from(0);
            }
            if let (ErrorKind::InvalidUtf8, Some(which)) = (e.kind(), &not_utf8) {
                let help = first_arg.as_deref().map_or("deadsim --help".into(), |c| format!("deadsim {c} --help"));
                eprintln!("deadsim: error: {} (see {help})", output::one_line(which));
                return ExitCode::from(2);
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                // No command: bad usage, so one line, as every other (the help is a flag away).
                let names: Vec<String> = Cli::command()
                    .get_subcommands()
                    .map(|c| c.get_name().to_string())
                    .filter(|n| n != "help")
                    .collect();
                eprintln!(
                    "deadsim: error: no command given: one of {} (deadsim --help says what each does)",
                    names.join(", ")
                );
                return ExitCode::from(2);
            }
            // One line, as every other error: clap's first line, without its tips.
            let text = e.to_string();
            let mut lines = text.lines();
            let first = lines.next().unwrap_or("bad usage").trim_start_matches("error: ");
            // clap lists missing arguments on the lines below, indented; keep them on this line.
            let missing: Vec<&str> =
                lines.take_while(|l| l.starts_with("  ")).map(str::trim).filter(|l| !l.is_empty()).collect();
            let first =
                if missing.is_empty() { first.to_string() } else { format!("{} {}", first, missing.join(", ")) };
            // clap's "a similar argument exists" tip is kept: it names the flag
            // meant. But a seed given to `explore` is not a misspelt flag.
            let explore_seed = first_arg.as_deref() == Some("explore")
                && ["'--seed'", "'--seeds'"].iter().any(|a| first.starts_with(&format!("unexpected argument {a}")));
            if explore_seed {
                eprintln!(
                    "deadsim: error: explore takes no seed: it runs every schedule, in order \
                     (`deadsim replay MODEL --seed N` runs one seed, `deadsim hunt MODEL --seeds A..B` many)"
                );
                return ExitCode::from(2);
            }
            // Nor is a strategy: explore is one (`hunt --strategy dfs`).
            let explore_strategy =
                first_arg.as_deref() == Some("explore") && first.starts_with("unexpected argument '--strategy'");
            if explore_strategy {
                eprintln!(
                    "deadsim: error: explore takes no --strategy: it is the exhaustive one (`deadsim hunt MODEL \
                     --strategy random|pct:D` searches seeds)"
                );
                return ExitCode::from(2);
            }
            let tip = text.lines().map(str::trim).find(|l| l.starts_with("tip: a similar"));
            let first = match tip {
                Some(t) => format!("{first}; {}", t.trim_start_matches("tip: ")),
                None => first,
            };
            // The help of the command given, which lists the flags it takes.
            let command = first_arg
                .filter(|a| a != "help" && Cli::command().get_subcommands().any(|c| c.get_name() == a.as_str()));
            let help = command.map_or("deadsim --help".to_string(), |c| format!("deadsim {c} --help"));
            eprintln!("deadsim: error: {} (see {help})", output::clip(&output::one_line(&first)));
            return ExitCode::from(2);
        }
    };
    match dispatch(cli.command) {
        Ok(true) => ExitCode::from(1),
        // Ctrl-C stopped a search that found nothing: not a pass, as the
        // shell reports a process that SIGINT ended (128 + 2).
        Ok(false) if hunt_cmd::CUT_SHORT_BY_CTRL_C.load(std::sync::atomic::Ordering::Relaxed) => ExitCode::from(130),
        Ok(false) => ExitCode::from(0),
        Err(UsageError(msg)) => {
            if !msg.is_empty() {
                eprintln!("deadsim: error: {}", output::clip(&output::one_line(&msg)));
            }
            ExitCode::from(2)
        }
    }
}

/// Why an exhaustive search for every distinct failure takes no bound:
/// raised pass by pass, the bound says the fewest preemptions of the one
/// failure it stops at, and every failure has its own.
const KEEP_GOING_UNBOUNDED: &str =
    "--keep-going goes without --preemptions: it explores every schedule for every distinct failure";

/// Explore's execution budget unless `--max-executions` gives one.
const EXPLORE_MAX_EXECUTIONS: u64 = sim::scheduler::DEFAULT_MAX_EXECUTIONS;

/// The flags of `deadsim explore`.
#[derive(clap::Args)]
struct ExploreCli {
    /// Model name
    model: String,
    /// Only schedules with at most K preemptions (the bound is raised from 0 to K, so a failure found needs the fewest preemptions)
    #[arg(long, value_name = "K", allow_hyphen_values = true, value_parser = parse_whole_u32)]
    preemptions: Option<u32>,
    /// Explore without partial-order reduction (every interleaving)
    #[arg(long)]
    no_reduction: bool,
    /// Stop after N executions
    #[arg(long, value_name = "N", default_value_t = EXPLORE_MAX_EXECUTIONS, allow_hyphen_values = true, value_parser = parse_count_u64)]
    max_executions: u64,
    /// Stop a run after N steps
    #[arg(long, value_name = "N", default_value_t = sim::DEFAULT_MAX_STEPS, allow_hyphen_values = true, value_parser = parse_count_u64)]
    max_steps: u64,
    /// Write the trace of a failing schedule to FILE (with no failure, an older FILE is removed)
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Print one JSON object on stdout instead of the report
    #[arg(long)]
    json: bool,
    /// Stop after this long, in seconds or with a unit (90, 1.5s, 10m, 2h; the first execution always
    /// runs), and say how far the exploration got
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    time_budget: Option<String>,
    /// Go on after a failure: every distinct failure (by its cycle) among all schedules, each with a
    /// schedule that shows it; not with --preemptions
    #[arg(long)]
    keep_going: bool,
    /// Exit 1, not 0, when the exploration stops (--max-executions or --time-budget ran out) before it
    /// has covered every schedule (within --preemptions): a CI check that needs the proof, not only
    /// no failure
    #[arg(long)]
    require_complete: bool,
    #[command(flatten)]
    params: ModelArgs,
}

fn strategy_kind(s: &str) -> Result<StrategyKind, UsageError> {
    s.parse().map_err(|e| UsageError(format!("--strategy {e}")))
}

/// Checks, before any work, that output can be written there: its folder
/// exists and is a folder. (The writes themselves are atomic: whole or not at all.)
fn check_output(flag: &str, path: &Option<PathBuf>) -> Result<(), UsageError> {
    if let Some(p) = path {
        // Only `render -o -` writes to stdout (it checks `-` before this);
        // elsewhere stdout is the report's, and `-` would be a file so named.
        if p.as_os_str() == "-" {
            let want = if flag == "--render" { "a folder (DIR/) or a file-name prefix" } else { "a file name" };
            return Err(UsageError(format!("{flag} -: give {want} (this output does not go to stdout)")));
        }
        // `--trace .json` would be a hidden file named `.json`.
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !p.to_string_lossy().ends_with('/') && name.eq_ignore_ascii_case(".json") {
            return Err(UsageError(format!(
                "{flag} {}: a name that is only an extension; put a name before it (run{name})",
                p.display()
            )));
        }
        // JSON under a chart's name would be opened as an image, and fail
        // (`.png` alone too: a hidden file to the file system, which has
        // no extension then). A folder (`out.png/`) is told apart below.
        let ext =
            p.extension().and_then(|e| e.to_str()).or_else(|| name.strip_prefix('.')).map(str::to_ascii_lowercase);
        let json_out = !["--render", "-o"].contains(&flag) && !p.to_string_lossy().ends_with('/');
        if let (true, Some(ext @ ("png" | "svg"))) = (json_out, ext.as_deref()) {
            return Err(UsageError(format!(
                "{flag} {}: .{ext} is a chart's name, and this output is JSON (name it .json; deadsim render \
                 draws charts)",
                p.display()
            )));
        }
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        let dir = if p.to_string_lossy().ends_with('/') { p.as_path() } else { dir };
        if !dir.exists() {
            return Err(UsageError(format!("{flag} {}: the folder {} does not exist", p.display(), dir.display())));
        }
        if !dir.is_dir() {
            return Err(UsageError(format!("{flag} {}: {} is not a folder", p.display(), dir.display())));
        }
    }
    Ok(())
}

/// `run`, `replay` and `shrink`'s figure flags, before the run: their
/// values, and a scale against a `--render` that makes SVG.
fn check_figure(render: &Option<PathBuf>, figure: &render::FigureArgs) -> Result<(), UsageError> {
    let fig = figure.figure().map_err(UsageError)?;
    match (render, figure.first_given()) {
        (Some(out), _) => render::check_figure(out, &fig).map_err(UsageError),
        (None, Some(flag)) => Err(UsageError(format!("{flag}: draws the run's charts; give --render OUT too"))),
        (None, None) => Ok(()),
    }
}

/// `run --render OUT`: as `render -o OUT` takes it, `OUT/` may be a folder
/// still to make (one level, made when the charts are written); a prefix's
/// folder must exist.
fn check_render_output(out: &Option<PathBuf>) -> Result<(), UsageError> {
    if let Some(p) = out {
        render::check_not_other_picture("--render", p).map_err(UsageError)?;
    }
    match out {
        Some(p) if p.to_string_lossy().ends_with('/') && !p.exists() => {
            render::check_out_folder("--render", p).map_err(UsageError)
        }
        _ => check_output("--render", out),
    }
}

/// [`check_output`] for an output file, and that the file itself can be
/// written there now, so a long hunt never ends in a result it cannot save.
fn check_output_file(flag: &str, path: &Option<PathBuf>) -> Result<(), UsageError> {
    check_output(flag, path)?;
    if let Some(p) = path {
        if p.to_string_lossy().ends_with('/') {
            return Err(UsageError(format!("{flag} {}: a folder; give a file name", p.display())));
        }
        sim::fsutil::check_writable(p)
            .map_err(|e| UsageError(format!("{flag} {}: cannot write there ({e})", p.display())))?;
    }
    Ok(())
}

fn check_max_steps(n: u64) -> Result<(), UsageError> {
    if n == 0 {
        return Err(UsageError("--max-steps must be at least 1".into()));
    }
    Ok(())
}

/// Runs a command; `Ok(true)` when it found a failure.
fn dispatch(cmd: Command) -> Result<bool, UsageError> {
    match &cmd {
        Command::Run { trace, render, figure, max_steps, .. } => {
            check_output_file("--trace", trace)?;
            check_render_output(render)?;
            check_figure(render, figure)?;
            check_max_steps(*max_steps)?;
        }
        Command::Hunt { trace, max_steps, .. } => {
            check_output_file("--trace", trace)?;
            check_max_steps(max_steps.unwrap_or(1))?;
        }
        Command::Replay { trace, render, figure, max_steps, .. } => {
            check_output_file("--trace", trace)?;
            check_render_output(render)?;
            check_figure(render, figure)?;
            check_max_steps(*max_steps)?;
        }
        Command::Explore(ExploreCli { trace, max_steps, .. }) => {
            check_output_file("--trace", trace)?;
            check_max_steps(*max_steps)?;
        }
        Command::Shrink { trace, render, figure, max_steps, max_tries, .. } => {
            check_output_file("--trace", trace)?;
            check_render_output(render)?;
            check_figure(render, figure)?;
            check_max_steps(*max_steps)?;
            if *max_tries == 0 {
                return Err(UsageError("--max-tries must be at least 1".into()));
            }
        }
        _ => {}
    }
    match cmd {
        Command::Models { model, json } => {
            let list = match &model {
                Some(name) => vec![models::find(name)?],
                None => models::all(),
            };
            if json {
                crate::output::print_json(models_json(&list));
            } else {
                print_models(&list);
            }
            Ok(false)
        }
        Command::Run { model, seed, strategy, trace, render, figure, json, max_steps, params } => {
            let figure = figure.figure().map_err(UsageError)?;
            let kind = strategy_kind(&strategy)?;
            let (m, cfg) = configure(&model, &params)?;
            let run = kind.run(&cfg, seed, trace.is_some() || render.is_some() || json, max_steps);
            let failed = run.outcome.is_failure();
            // A failure is re-run recorded, for its schedule string, unless it
            // is too long to record cheaply (its seed replays it all the same).
            let run = if failed && run.trace.is_none() && run.steps <= RECORD_FOR_SCHEDULE_MAX_STEPS {
                kind.run(&cfg, seed, true, max_steps)
            } else {
                run
            };
            // The files first, and a file that cannot be written is said at
            // once; the report still follows, and the command then fails with it.
            let written = match &run.trace {
                Some(t) => output::write_files_before_report(render.as_deref().zip(Some(&figure)), trace.as_deref(), t),
                None => Ok(()),
            };
            if json {
                crate::output::print_json(output::run_json(m, &cfg, &run, Some(seed), &kind.to_string()));
            } else {
                // The strategy is said when it is not the default one.
                let strategy = match kind.to_string().as_str() {
                    "random" => String::new(),
                    s => format!(" (strategy {s})"),
                };
                println!(
                    "{} seed {seed}{strategy}: {} after {}",
                    output::model_label(m, &cfg),
                    run.outcome.verdict_text(),
                    output::count(run.steps, "step")
                );
                if failed {
                    println!();
                    crate::output::print_outcome(&run);
                    println!("\n{}", output::replay_line(m, &cfg, &run));
                    if output::schedule_too_long(&run) {
                        // The seed replays it as well, in a line.
                        println!("   or: {}", output::seed_replay_command(m, &cfg, kind, seed, &run));
                    }
                }
                output::print_warnings(&run.lock_order.warnings());
            }
            written.map(|()| failed)
        }
        Command::Hunt {
            model,
            seeds,
            jobs,
            strategy,
            preemptions,
            no_reduction,
            max_executions,
            require_complete,
            trace,
            json,
            max_steps,
            matrix,
            keep_going,
            shard,
            time_budget,
            check_determinism,
            check_expected,
            params,
        } => {
            let lower = strategy.trim().to_ascii_lowercase();
            let strategy = if lower == "dfs" { "dfs" } else { strategy.trim() };
            if strategy != "dfs" {
                // Not a strategy at all: said first, not that it "runs seeds".
                strategy_kind(strategy)?;
                let dfs_only = [
                    ("--preemptions", preemptions.is_some()),
                    ("--no-reduction", no_reduction),
                    ("--max-executions", max_executions.is_some()),
                    ("--require-complete", require_complete),
                ];
                if let Some((flag, _)) = dfs_only.iter().find(|(_, set)| *set) {
                    return Err(UsageError(format!(
                        "{flag} applies to --strategy dfs only (the exhaustive search, as deadsim explore); \
                         --strategy {strategy} runs seeds"
                    )));
                }
            }
            if strategy == "dfs" {
                if let Some(flag) = [("--seeds", seeds.is_some()), ("--jobs", jobs.is_some())].iter().find(|f| f.1) {
                    return Err(UsageError(format!(
                        "{} does not apply to --strategy dfs, which explores schedules rather than seeds (on one core)",
                        flag.0
                    )));
                }
            }
            let range: SeedRange =
                seeds.as_deref().unwrap_or("0..10000").parse().map_err(|e| format!("--seeds {e}"))?;
            let jobs = match jobs {
                Some(j) if j == 0 || j > MAX_JOBS => {
                    return Err(UsageError(format!("--jobs {j}: expected 1 to {MAX_JOBS} worker threads")))
                }
                Some(j) => j,
                // A machine with more cores than that gets the most a flag may ask for.
                None => default_jobs().min(MAX_JOBS),
            };
            let shard = match shard {
                None => None,
                Some(s) => Some(parse_shard(&s)?),
            };
            let time_budget = parse_time_budget(time_budget.as_deref())?;
            if strategy == "dfs" {
                let seed_only = [
                    ("--shard", shard.is_some()),
                    ("--check-determinism", check_determinism),
                    ("--matrix", matrix),
                    ("--check-expected", check_expected),
                ];
                if let Some((flag, _)) = seed_only.iter().find(|(_, set)| *set) {
                    return Err(UsageError(format!(
                        "{flag} does not apply to --strategy dfs, which explores schedules rather than seeds"
                    )));
                }
                let name =
                    model.ok_or_else(|| UsageError("--strategy dfs needs a model: deadsim explore <model>".into()))?;
                let (m, cfg) = configure(&name, &params)?;
                if max_executions == Some(0) {
                    return Err(UsageError("--max-executions must be at least 1".into()));
                }
                // As `explore --keep-going`: every distinct failure.
                if keep_going && preemptions.is_some() {
                    return Err(UsageError(KEEP_GOING_UNBOUNDED.into()));
                }
                let a = search_cmd::ExploreArgs {
                    preemptions,
                    no_reduction,
                    max_executions: max_executions.unwrap_or(EXPLORE_MAX_EXECUTIONS),
                    max_steps: max_steps.unwrap_or(sim::DEFAULT_MAX_STEPS),
                    trace,
                    json,
                    time_budget,
                    keep_going,
                    require_complete,
                };
                return search_cmd::explore_cmd(m, &cfg, a);
            }
            let kind = strategy_kind(strategy)?;
            let max_steps = max_steps.unwrap_or(sim::DEFAULT_MAX_STEPS);
            if check_determinism && model.is_none() {
                return Err(UsageError(
                    "--check-determinism needs one model: deadsim hunt <model> --check-determinism".into(),
                ));
            }
            hunt_cmd::install_interrupt_handler();
            match model {
                Some(name) if matrix => {
                    let one_cell = [
                        ("--trace", trace.is_some()),
                        ("--keep-going", keep_going),
                        ("--shard", shard.is_some()),
                        ("--time-budget", time_budget.is_some()),
                        ("--check-determinism", check_determinism),
                    ];
                    if let Some((flag, _)) = one_cell.iter().find(|(_, given)| *given) {
                        return Err(UsageError(format!(
                            "--matrix goes without {flag}: hunt one cell for it (--matrix goes without --trace, \
                             --keep-going, --shard, --time-budget and --check-determinism)"
                        )));
                    }
                    let a = hunt_cmd::TableArgs { range, jobs, json, max_steps, kind, check_expected };
                    hunt_cmd::hunt_matrix(&name, &params, a)
                }
                Some(_) if check_expected => Err(UsageError(
                    "--check-expected checks a table's rows against their expected verdicts: give no model (every \
                     built-in variant), or --matrix"
                        .into(),
                )),
                Some(name) => {
                    let (m, cfg) = configure(&name, &params)?;
                    let a = hunt_cmd::HuntArgs {
                        range,
                        jobs,
                        kind,
                        trace,
                        json,
                        max_steps,
                        keep_going,
                        shard,
                        time_budget,
                        check_determinism,
                    };
                    hunt_cmd::hunt_one(m, &cfg, a)
                }
                None if matrix => Err(UsageError("--matrix needs a model: deadsim hunt ttrpc --matrix".into())),
                None => {
                    if !params.pairs().is_empty() {
                        return Err(UsageError("model parameters need a model: deadsim hunt <model> ...".into()));
                    }
                    // Named as given: the flags of one model's hunt that the table does not take.
                    let given: Vec<&str> = [
                        ("--trace", trace.is_some()),
                        ("--keep-going", keep_going),
                        ("--shard", shard.is_some()),
                        ("--time-budget", time_budget.is_some()),
                    ]
                    .iter()
                    .filter(|f| f.1)
                    .map(|f| f.0)
                    .collect();
                    if let Some((last, rest)) = given.split_last() {
                        let (flags, verb) = match rest {
                            [] => (last.to_string(), "needs"),
                            _ => (format!("{} and {last}", rest.join(", ")), "need"),
                        };
                        return Err(UsageError(format!("{flags} {verb} a model: deadsim hunt <model> {flags} ...")));
                    }
                    hunt_cmd::hunt_all(hunt_cmd::TableArgs { range, jobs, json, max_steps, kind, check_expected })
                }
            }
        }
        Command::Replay { model, which, trace, render, figure, json, max_steps, params } => {
            let figure = figure.figure().map_err(UsageError)?;
            let (m, cfg) = configure(&model, &params)?;
            let which = which.which(max_steps)?;
            let run = which.run(m, &cfg, max_steps)?;
            // The files first: a reader that closes the pipe early (`| head`)
            // must not cost them. One that cannot be written is said at once,
            // the report follows, and the command then fails with it.
            let written = output::write_files_before_report(
                render.as_deref().zip(Some(&figure)),
                trace.as_deref(),
                run.trace.as_ref().unwrap(),
            );
            if json {
                let (seed, strategy) = match &which {
                    Which::Seed(s, k) => (Some(*s), k.to_string()),
                    Which::Schedule(_) => (None, "replay".to_string()),
                };
                crate::output::print_json(output::run_json(m, &cfg, &run, seed, &strategy));
                return written.map(|()| run.outcome.is_failure());
            }
            match &which {
                Which::Seed(s, k) => println!("replay: {} seed {s}, strategy {k}", output::model_label(m, &cfg)),
                Which::Schedule(_) => {
                    println!("replay: {}, from the schedule string given", output::model_label(m, &cfg))
                }
            }
            search_cmd::print_events(&run);
            if run.outcome.is_failure() {
                println!("\n{}", output::replay_line(m, &cfg, &run));
            }
            // The lock-order findings its JSON gives, as `run` prints them.
            output::print_warnings(&run.lock_order.warnings());
            written.map(|()| run.outcome.is_failure())
        }
        Command::Explore(e) => {
            let (m, cfg) = configure(&e.model, &e.params)?;
            let time_budget = parse_time_budget(e.time_budget.as_deref())?;
            if e.max_executions == 0 {
                return Err(UsageError("--max-executions must be at least 1".into()));
            }
            if e.keep_going && e.preemptions.is_some() {
                return Err(UsageError(KEEP_GOING_UNBOUNDED.into()));
            }
            let a = search_cmd::ExploreArgs {
                preemptions: e.preemptions,
                no_reduction: e.no_reduction,
                max_executions: e.max_executions,
                max_steps: e.max_steps,
                trace: e.trace,
                json: e.json,
                time_budget,
                keep_going: e.keep_going,
                require_complete: e.require_complete,
            };
            search_cmd::explore_cmd(m, &cfg, a)
        }
        Command::Shrink { model, which, trace, render, figure, json, max_tries, max_steps, params } => {
            let figure = figure.figure().map_err(UsageError)?;
            let (m, cfg) = configure(&model, &params)?;
            let which = which.which(max_steps)?;
            let a = search_cmd::ShrinkArgs { max_steps, max_tries, trace, render, figure, json };
            search_cmd::shrink_cmd(m, &cfg, which, a)
        }
        Command::Merge { files } => hunt_cmd::merge(&files),
        Command::Render(args) => render::render(args).map(|()| false).map_err(UsageError),
        Command::Export(args) => render::export(args).map(|()| false).map_err(UsageError),
        Command::Bench { seconds: given } => {
            // Read here, not by clap, so that the message echoes what was given.
            let seconds = given.trim().parse::<f64>().ok().filter(|s| (0.01..=600.0).contains(s));
            let Some(seconds) = seconds else {
                return Err(UsageError(format!("--seconds {given}: expected a number of seconds from 0.01 to 600")));
            };
            bench_cmd::bench(seconds);
            Ok(false)
        }
    }
}

/// Seconds as a person would type them: `-1`, `0.5`, `1e300`.
pub(crate) fn secs(t: f64) -> String {
    if t.is_finite() && t.abs() < 1e15 {
        format!("{t}")
    } else {
        format!("{t:e}")
    }
}

/// `--time-budget SECONDS`: a time above 0, in seconds or with a unit
/// (`90`, `1.5s`, `500ms`, `10m`, `2h`), quoted as given in an error.
fn parse_time_budget(t: Option<&str>) -> Result<Option<Duration>, UsageError> {
    let Some(given) = t else { return Ok(None) };
    let expected = || {
        UsageError(format!(
            "--time-budget `{given}`: expected a time above 0, in seconds or with a unit (90, 1.5s, 500ms, 10m, 2h)"
        ))
    };
    let text = given.trim();
    let (num, unit) = [("ms", 1e-3), ("min", 60.0), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .iter()
        .find_map(|&(suffix, unit)| text.strip_suffix(suffix).map(|n| (n, unit)))
        .unwrap_or((text, 1.0));
    // The number right before its unit: "1 h" is no time.
    if num.is_empty() || num.ends_with(char::is_whitespace) {
        return Err(expected());
    }
    let t: f64 = num.parse::<f64>().map_err(|_| expected())? * unit;
    if t.is_nan() || t <= 0.0 {
        return Err(expected());
    }
    // The most a Duration holds is 2^64 s less a nanosecond: as a float,
    // 18446744073709551615 rounds up past it.
    let d = Duration::try_from_secs_f64(t).map_err(|_| {
        UsageError(format!("--time-budget `{given}`: too large (it must be below 2^64 seconds, about 1.8447e19)"))
    })?;
    // A budget that rounds to no time at all (1e-19 s) is refused as 0 is.
    if d.is_zero() {
        return Err(UsageError(format!("--time-budget `{given}`: expected a time above 0 (at least 1 ns)")));
    }
    Ok(Some(d))
}

fn parse_shard(s: &str) -> Result<(u64, u64), UsageError> {
    let bad = || UsageError(format!("--shard `{s}`: expected I/N with 0 <= I < N, for example 0/4"));
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// More workers than this only add threads to start and stop: a hunt's
/// result is the same for any count, and its speed stops growing at the cores.
const MAX_JOBS: usize = 1024;

fn default_jobs() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn configure(name: &str, params: &ModelArgs) -> Result<(&'static dyn Model, Configured), UsageError> {
    let m = models::find(name)?;
    let cfg = m.configure(&params.pairs())?;
    Ok((m, cfg))
}

fn print_models(list: &[&'static dyn Model]) {
    for &m in list {
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
                models::ParamKind::Choice(c) if c.len() > 8 => format!(" <{}|...|{}>", c[0], c[c.len() - 1]),
                models::ParamKind::Choice(c) => format!(" <{}>", c.join("|")),
                models::ParamKind::Float { min, max } => format!(" <{min}..={max}>"),
            };
            println!("  --{}{kind}  {} (default {})", p.name, p.help, p.default);
        }
        println!();
    }
}

/// `models --json`: what a script needs to run every variant (its flags, as
/// `deadsim hunt` takes them) or to check a parameter before a long hunt.
fn models_json(list: &[&'static dyn Model]) -> serde_json::Value {
    use serde_json::json;
    let models: Vec<serde_json::Value> = list
        .iter()
        .map(|m| {
            let params: Vec<serde_json::Value> = m
                .params()
                .iter()
                .map(|p| {
                    let mut v =
                        json!({"name": p.name, "flag": format!("--{}", p.name), "default": output::param_value(&p.kind, p.default), "help": p.help});
                    match p.kind {
                        models::ParamKind::Flag => v["kind"] = json!("flag"),
                        models::ParamKind::Int { min, max } => {
                            v["kind"] = json!("int");
                            v["min"] = json!(min);
                            v["max"] = json!(max);
                        }
                        models::ParamKind::Float { min, max } => {
                            v["kind"] = json!("float");
                            v["min"] = json!(min);
                            v["max"] = json!(max);
                        }
                        models::ParamKind::Choice(words) => {
                            v["kind"] = json!("choice");
                            v["choices"] = json!(words);
                        }
                    }
                    v
                })
                .collect();
            let variants: Vec<serde_json::Value> = m
                .variants()
                .iter()
                .map(|v| {
                    let args: Vec<String> =
                        v.params.iter().flat_map(|(name, value)| models::arg_words(m.params(), name, value)).collect();
                    json!({"label": v.label, "args": args, "expect": v.expect.as_str()})
                })
                .collect();
            let matrix = m.matrix().map_or(json!(null), |x| {
                let expect: Vec<Vec<&str>> =
                    x.expect.iter().map(|row| row.iter().map(|e| e.as_str()).collect()).collect();
                json!({
                    "rows": {"param": x.row_param, "values": x.rows},
                    "columns": {"param": x.col_param, "values": x.cols},
                    "expect": expect,
                })
            });
            json!({"name": m.name(), "about": m.about(), "params": params, "variants": variants, "matrix": matrix})
        })
        .collect();
    json!({ "models": models })
}
