//! `deadsim hunt`: many seeds, in parallel, for the lowest failing one;
//! every built-in variant (no model), a version grid (`--matrix`), shards
//! and their merge.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use sim::hunt::{hunt_with, wilson, HuntOptions, SeedRange};
use sim::models::{self, Configured, Model};
use sim::scheduler::StrategyKind;

use crate::output::{cycle_json, params_json, print_table, write_trace_before_report};
use crate::output::{replay_command, replay_line};
use crate::UsageError;

/// Hunts started in this process, so a worker thread's [`SEEN`] is never
/// carried from one hunt to the next (a one-job hunt runs on this thread).
static HUNTS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The lock-order facts this worker has passed on in hunt number `.0`.
    static SEEN: std::cell::RefCell<(u64, sim::lockorder::SeenFacts)> = Default::default();
}

/// Set by Ctrl-C: hunts stop taking seeds and report what they found.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Set when Ctrl-C cut a hunt or an exploration short (not when it came after
/// the search ended): with nothing found, the process exits 130.
pub static CUT_SHORT_BY_CTRL_C: AtomicBool = AtomicBool::new(false);

/// Notes a search's end: `stopped_early` with Ctrl-C pressed is a search cut short by it.
pub fn note_stop(stopped_early: bool) {
    if stopped_early && INTERRUPTED.load(Ordering::Relaxed) {
        CUT_SHORT_BY_CTRL_C.store(true, Ordering::Relaxed);
    }
}

/// Why a hunt or an exploration stopped early, in their JSON: Ctrl-C or the
/// time budget (the two things that stop one early).
pub fn early_stop() -> &'static str {
    if INTERRUPTED.load(Ordering::Relaxed) {
        "interrupted"
    } else {
        "time-budget"
    }
}

/// Installs the Ctrl-C handler (an atomic store: async-signal-safe).
pub fn install_interrupt_handler() {
    #[cfg(unix)]
    {
        extern "C" fn on_sigint(_: i32) {
            INTERRUPTED.store(true, Ordering::Relaxed);
        }
        extern "C" {
            fn signal(signum: i32, handler: usize) -> usize;
        }
        const SIGINT: i32 = 2;
        // SAFETY: the handler only stores to an atomic.
        unsafe {
            signal(SIGINT, on_sigint as *const () as usize);
        }
    }
}

/// Everything `deadsim hunt <model>` takes.
pub struct HuntArgs {
    pub range: SeedRange,
    pub jobs: usize,
    pub kind: StrategyKind,
    pub trace: Option<PathBuf>,
    pub json: bool,
    pub max_steps: u64,
    pub keep_going: bool,
    pub shard: Option<(u64, u64)>,
    pub time_budget: Option<Duration>,
    pub check_determinism: bool,
}

/// Prints "N schedules, R/s, Ts" (or "N executions", as `unit` says) on
/// stderr every half second while `f` runs, when stderr is a terminal.
/// `total` gives the share done when known (0: not known).
pub fn with_progress<T>(total: u128, unit: &str, f: impl FnOnce(Option<&Arc<AtomicU64>>) -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return f(None);
    }
    let counter = Arc::new(AtomicU64::new(0));
    let done = AtomicBool::new(false);
    let started = Instant::now();
    // Stops the printer however `f` ends: a panic in it must not leave the
    // scope waiting for that thread forever.
    struct Done<'a>(&'a AtomicBool);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            // Wake often, print twice a second: the work never waits for this thread.
            let mut ticks = 0u32;
            // The widest line printed, which the last clear must cover.
            let mut widest = 0;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                ticks += 1;
                if ticks % 25 != 0 {
                    continue;
                }
                let n = counter.load(Ordering::Relaxed);
                let t = started.elapsed().as_secs_f64();
                let share = if total > 0 {
                    format!(" of {total} ({:.0}%)", 100.0 * n as f64 / total as f64)
                } else {
                    String::new()
                };
                let line = format!("{n}{share} {unit}, {:.0}/s, {t:.1}s   ", n as f64 / t.max(1e-9));
                widest = widest.max(line.len());
                eprint!("\r{line}");
            }
            eprint!("\r{:widest$}\r", "");
        });
        let _done = Done(&done);
        f(Some(&counter))
    })
}

/// `deadsim hunt <model>`.
pub fn hunt_one(m: &'static dyn Model, cfg: &Configured, a: HuntArgs) -> Result<bool, UsageError> {
    let range = match a.shard {
        Some((i, n)) => match sim::hunt::shard(a.range, i, n) {
            Some(r) => r,
            None => {
                // Every shard of such a split is refused, so a batch job
                // array fails as a whole, not in some of its jobs.
                return Err(UsageError(format!(
                    "--shard {i}/{n}: seeds {} hold {} seed(s), too few for {n} shards; split them at most {} ways",
                    a.range,
                    a.range.count(),
                    a.range.count()
                )));
            }
        },
        None => a.range,
    };
    let started = Instant::now();
    let opts_base = (a.jobs, a.keep_going, a.time_budget);
    // Workers finish seeds out of order: gather by seed, so the findings are
    // those of a one-job hunt whatever `--jobs` is. Each worker passes on
    // only the runs that show it a fact it has not seen.
    let graph = std::sync::Mutex::new(sim::lockorder::SeedGraph::default());
    let hunt_id = HUNTS.fetch_add(1, Ordering::Relaxed) + 1;
    let gather = |run: sim::Run| {
        if !run.lock_order.is_empty() {
            let new = SEEN.with(|seen| {
                let mut seen = seen.borrow_mut();
                if seen.0 != hunt_id {
                    *seen = (hunt_id, Default::default());
                }
                seen.1.any_new(&run.lock_order)
            });
            if new {
                graph.lock().unwrap().add(run.seed, &run.lock_order);
            }
        }
        run.outcome
    };
    let r = with_progress(range.count(), "schedules", |progress| {
        let opts = HuntOptions {
            jobs: opts_base.0,
            keep_going: opts_base.1,
            time_budget: opts_base.2,
            progress: progress.map(|p| &**p),
            stop: Some(&INTERRUPTED),
        };
        hunt_with(range, &opts, |seed| {
            if !a.check_determinism {
                return gather(a.kind.run(cfg, seed, false, a.max_steps));
            }
            let first = a.kind.run(cfg, seed, true, a.max_steps);
            let second = a.kind.run(cfg, seed, true, a.max_steps);
            match sim::hunt::first_divergence(&first, &second) {
                Some(message) => {
                    sim::Outcome::Invariant { task: "(determinism check)".into(), message, frames: Vec::new() }
                }
                None => gather(first),
            }
        })
    });
    let elapsed = started.elapsed().as_secs_f64();
    note_stop(r.stopped_early);
    // Seeds past the lowest failure, or past what was covered, are what a
    // one-job hunt would not have run.
    let last = match (&r.failure, r.covered) {
        (_, None) => None,
        (Some((seed, _)), Some(c)) if !a.keep_going => Some((*seed).min(c.last)),
        (_, Some(c)) => Some(c.last),
    };
    let graph = graph.into_inner().unwrap();
    let warnings = last.map_or_else(Vec::new, |last| graph.up_to(last).warnings());
    // The failing seed once more, recorded: its schedule string, and its
    // trace's events only for --trace (a step limit of millions of steps
    // would keep hundreds of megabytes of them).
    let recorded = r.failure.as_ref().map(|&(seed, _)| match a.trace {
        Some(_) => a.kind.run(cfg, seed, true, a.max_steps),
        None => a.kind.run_for_schedule(cfg, seed, a.max_steps),
    });
    // A trace that cannot be written fails the command after the report,
    // so that the hunt's result is not lost with it.
    let written = match (&a.trace, &recorded) {
        (Some(path), Some(run)) => write_trace_before_report(path, run.trace.as_ref().unwrap()),
        (Some(path), None) => {
            crate::output::no_trace(path);
            Ok(())
        }
        _ => Ok(()),
    };
    let covered = r.covered.map_or("none".to_string(), |c| c.to_string());
    // What stopped a hunt early, in the JSON message and the report alike.
    let why = if INTERRUPTED.load(Ordering::Relaxed) { "interrupted" } else { "time budget spent" };
    if a.json {
        let (verdict, seed, cycle, message) = match &r.failure {
            Some((s, o)) => (o.verdict(), Some(*s), cycle_json(o), o.summary()),
            None if r.covered.is_none() => {
                ("no-deadlock", None, json!([]), "interrupted before any seed ran".to_string())
            }
            // Stopped early, it says so, as the report's line does.
            None if r.stopped_early => {
                let n = crate::output::count(r.schedules, "schedule");
                (
                    "no-deadlock",
                    None,
                    json!([]),
                    format!("{why} after {n} (seeds {covered} covered of {range}), no failure in them"),
                )
            }
            None => ("no-deadlock", None, json!([]), format!("no failure in seeds {covered}")),
        };
        let mut out = json!({
            "verdict": verdict, "seed": seed, "schedules": r.schedules, "cycle": cycle,
            "model": m.name(), "params": params_json(cfg), "strategy": a.kind.to_string(),
            "max_steps": a.max_steps, "keep_going": a.keep_going, "check_determinism": a.check_determinism,
            "seeds": range.to_string(), "range": a.range.to_string(), "covered": covered,
            "stopped_early": r.stopped_early,
            // Settled: every seed run, or the lowest failure found (every seed below it ran).
            "complete": !r.stopped_early || (r.failure.is_some() && !a.keep_going), "message": message,
            // Why, as explore's JSON says it.
            "stopped": r.stopped_early.then(early_stop),
            "schedule": recorded.as_ref().and_then(|run| run.trace.as_ref().map(|t| t.meta.replay.clone())),
            // The command that replays it, with the step limit a step-limit failure needs.
            "replay": recorded.as_ref().map(|run| replay_command(m, cfg, run)),
        });
        if let Some((i, n)) = a.shard {
            out["shard"] = json!(format!("{i}/{n}"));
        }
        out["warnings"] = crate::output::warnings_json(&warnings);
        // The facts behind them, with their seeds, for `deadsim merge`: the
        // warnings of the shards together are those of the whole graph.
        if a.shard.is_some() {
            out["lock_order"] = last.map_or(json!(null), |last| graph.to_json(last));
        }
        if a.keep_going {
            let (p, lo, hi) = wilson(r.failures, r.schedules);
            out["failures"] = json!(r.failures);
            out["share"] = json!({"failing": p, "ci95": [lo, hi]});
            out["distinct"] = json!(r
                .distinct
                .iter()
                .map(|d| json!({"signature": d.signature, "seed": d.lowest_seed,
                "count": d.count, "verdict": d.outcome.verdict()}))
                .collect::<Vec<_>>());
        }
        crate::output::print_json(out);
        return written.map(|()| r.failure.is_some());
    }
    let label = crate::output::model_label(m, cfg);
    // A shard's text names the shard and the whole range it is part of (its
    // JSON has them as fields).
    let range = match a.shard {
        Some((i, n)) => format!("{range}, shard {i}/{n} of {}", a.range),
        None => range.to_string(),
    };
    if r.stopped_early {
        match r.covered {
            // As the JSON's message says it, when nothing was found.
            Some(_) => println!(
                "{label}: {why} after {} (seeds {covered} covered of {range}){}",
                crate::output::count(r.schedules, "schedule"),
                if r.failure.is_none() { ", no failure in them" } else { "" }
            ),
            None => println!("{label}: {why} before any seed ran (seeds {range})"),
        }
    }
    if a.keep_going && r.covered.is_some() {
        let (p, lo, hi) = wilson(r.failures, r.schedules);
        println!(
            "{label}: {} of {} failed ({}, 95% Wilson CI {}..{}), {}, strategy {}",
            r.failures,
            crate::output::count(r.schedules, "schedule"),
            percent(p),
            percent(lo),
            percent(hi),
            crate::output::count(r.distinct.len() as u64, "distinct failure"),
            a.kind
        );
        // The commonest first; the JSON keeps the signatures' order.
        let mut by_count: Vec<_> = r.distinct.iter().collect();
        by_count.sort_by_key(|d| (std::cmp::Reverse(d.count), d.lowest_seed));
        for d in by_count {
            println!("  {:>8} x  lowest seed {:>8}  {}", d.count, d.lowest_seed, d.signature);
        }
    }
    match (&r.failure, &recorded) {
        (Some((seed, _)), Some(run)) => {
            if !a.keep_going {
                println!(
                    "{label}: {} at seed {seed} (schedule {} of seeds {range}, strategy {})",
                    run.outcome.verdict_text(),
                    r.schedules,
                    a.kind
                );
            }
            println!();
            crate::output::print_outcome(run);
            println!();
            println!("{}", replay_line(m, cfg, run));
            println!("   or: {}", crate::output::seed_replay_command(m, cfg, a.kind, *seed, run));
        }
        _ if !r.stopped_early && !a.keep_going => {
            // Every seed ran: how rare a failure could still be (the
            // Wilson interval for none in n, as --keep-going gives it).
            let (_, _, hi) = wilson(0, r.schedules);
            println!(
                "{label}: no failure in {} (seeds {range}, strategy {}; failing share 0%, 95% Wilson CI 0%..{})",
                crate::output::count(r.schedules, "schedule"),
                a.kind,
                percent(hi)
            )
        }
        _ => {}
    }
    if a.check_determinism {
        // A divergence is a failure (reported above); say what was checked.
        let which = match r.schedules {
            1 => "the schedule".to_string(),
            n => format!("each of the {}", crate::output::count(n, "schedule")),
        };
        println!("determinism checked: {which} ran twice, recorded, and compared event by event");
    }
    crate::output::print_warnings(&warnings);
    eprintln!("({} in {elapsed:.2}s on {})", crate::output::count(r.schedules, "schedule"), job_count(r.jobs));
    written.map(|()| r.failure.is_some())
}

/// `deadsim merge`: one result from the JSON of the shards of one hunt.
pub fn merge(files: &[PathBuf]) -> Result<bool, UsageError> {
    if files.is_empty() {
        return Err(UsageError("merge needs the JSON files of a hunt's shards".into()));
    }
    let mut shards = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| UsageError(format!("{}: cannot read ({e})", f.display())))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| UsageError(format!("{}: not JSON ({e})", f.display())))?;
        if !v.is_object() {
            return Err(UsageError(format!(
                "{}: the top level is not an object: not the JSON of `deadsim hunt --json`",
                f.display()
            )));
        }
        for key in ["model", "params", "strategy", "range", "seeds", "schedules", "verdict"] {
            if v.get(key).is_none() {
                return Err(UsageError(format!(
                    "{}: field `{key}` is missing: not the JSON of `deadsim hunt --json`",
                    f.display()
                )));
            }
        }
        shards.push((f.display().to_string(), v));
    }
    let first = &shards[0].1;
    // A failure is made again here, and a shard's "no failure" taken on its
    // word: shards of another deadsim (whose runs may differ) are refused.
    let own = env!("CARGO_PKG_VERSION");
    for (name, v) in &shards {
        let made = match v.get("deadsim") {
            Some(serde_json::Value::String(made)) if made == own => continue,
            Some(serde_json::Value::String(made)) => format!("deadsim {made}"),
            Some(other) => format!("deadsim {other}"),
            // The field came with 0.1.0 of 2026-12-07: an older build's shard.
            None => "a deadsim that did not say its version".to_string(),
        };
        return Err(UsageError(format!(
            "{name}: made by {made}, and this is deadsim {own}: merge shards with the deadsim that made them"
        )));
    }
    for (name, v) in &shards[1..] {
        // A shard is a `--keep-going` one if it has the failure counts.
        let kind = |v: &serde_json::Value| json!(v.get("failures").is_some());
        if kind(v) != kind(first) {
            return Err(UsageError(format!(
                "{name}: a {} shard, but {} is a {} one: merge shards of one hunt",
                if v.get("failures").is_some() { "--keep-going" } else { "lowest-failure" },
                shards[0].0,
                if first.get("failures").is_some() { "--keep-going" } else { "lowest-failure" },
            )));
        }
        for key in ["model", "strategy", "range", "max_steps", "check_determinism"] {
            if v.get(key) != first.get(key) {
                return Err(UsageError(format!(
                    "{name}: `{key}` differs from {} ({} vs {})",
                    shards[0].0, v[key], first[key]
                )));
            }
        }
        let (mine, theirs) = (params_by_value(v), params_by_value(first));
        if mine != theirs {
            // The parameters that differ, not two whole objects.
            let differ: Vec<String> = match (mine.as_object(), theirs.as_object()) {
                (Some(a), Some(b)) => {
                    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                    keys.into_iter()
                        .filter(|k| a.get(*k) != b.get(*k))
                        .map(|k| {
                            let show =
                                |x: Option<&serde_json::Value>| x.map_or("(none)".to_string(), |x| x.to_string());
                            format!("{k} {} vs {}", show(a.get(k)), show(b.get(k)))
                        })
                        .collect()
                }
                _ => vec![format!("{} vs {}", v["params"], first["params"])],
            };
            return Err(UsageError(format!("{name}: `params` differs from {}: {}", shards[0].0, differ.join(", "))));
        }
    }
    // Every file must be a different shard i/n of the same n: a duplicate or a
    // shard of another split would count seeds twice or leave gaps unseen.
    let range: SeedRange = first["range"]
        .as_str()
        .unwrap_or("")
        .parse()
        .map_err(|e| UsageError(format!("{}: field `range`: {e}", shards[0].0)))?;
    let mut split: Option<u64> = None;
    let mut seen = std::collections::BTreeSet::new();
    let mut blocks: Vec<Shard> = Vec::new();
    for (name, v) in &shards {
        let b = Shard::read(name, v, range)?;
        if *split.get_or_insert(b.n) != b.n {
            return Err(UsageError(format!(
                "{name}: shard {}/{} is from another split than {} (shards of {})",
                b.i,
                b.n,
                shards[0].0,
                split.unwrap()
            )));
        }
        if !seen.insert(b.i) {
            return Err(UsageError(format!("{name}: shard {}/{} is given twice", b.i, b.n)));
        }
        blocks.push(b);
    }
    // Every failure's schedule string is for this model and these parameters.
    let fingerprints: std::collections::BTreeSet<&str> = blocks.iter().filter_map(|b| b.fingerprint).collect();
    if fingerprints.len() > 1 {
        return Err(UsageError(format!(
            "field `schedule`: the shards' schedules carry {} fingerprints ({}): not shards of one hunt",
            fingerprints.len(),
            fingerprints.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    let n = split.unwrap_or(1);
    let missing: Vec<String> = (0..n)
        .filter(|&i| !seen.contains(&i) && sim::hunt::shard(range, i, n).is_some())
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        // Without them the lowest failing seed (or "no failure") is not the hunt's.
        return Err(UsageError(format!(
            "shard(s) {} missing: merge needs every shard of the split ({} of {n} given)",
            missing.join(", "),
            seen.len()
        )));
    }
    blocks.sort_by_key(|b| b.seeds.first);
    let lowest = blocks.iter().filter_map(|b| b.seed.map(|s| (s, b.v))).min_by_key(|(s, _)| *s);
    // Each failure a shard claims is made again from its seed, not copied:
    // a field edited in a shard (a `replay` command above all) is refused.
    // Every shard's, not only the lowest's, and with --keep-going each
    // distinct failure's lowest seed too: a failure a seed does not give
    // would stand in the merged list. (One run a failure.)
    for b in &blocks {
        let name = &shards.iter().find(|(_, x)| std::ptr::eq(x, b.v)).expect("a shard's").0;
        let run = b.seed.map(|seed| check_failure_fields(name, b.v, seed)).transpose()?;
        check_distinct(name, b.v, b.seed.zip(run.as_ref()))?;
    }
    let keep_going = first.get("failures").is_some();
    // What the shards ran: all their seeds, or fewer if a time budget or Ctrl-C stopped one.
    // Counted in u128: the whole u64 range holds 2^64 seeds.
    let covered: u128 = blocks.iter().map(|b| b.covered.map_or(0, |c| c.count())).sum();
    // The seeds run up to a seed, inclusive.
    let run_up_to = |s: u64| -> u128 {
        blocks
            .iter()
            .filter_map(|b| b.covered)
            .filter(|c| c.first <= s)
            .map(|c| SeedRange { first: c.first, last: c.last.min(s) }.count())
            .sum()
    };
    let stopped_early = blocks.iter().any(|b| b.v["stopped_early"].as_bool().unwrap_or(false));
    // A lowest-failure hunt of the whole range runs every seed up to its failure.
    let schedules = match (lowest, keep_going) {
        (Some((s, _)), false) => run_up_to(s).min(u64::MAX as u128) as u64,
        _ => blocks.iter().fold(0u64, |n, b| n.saturating_add(b.schedules)),
    };
    // Below the failure, a seed no shard ran may fail too.
    let unproven = lowest.is_some_and(|(s, _)| !keep_going && run_up_to(s) != (s - range.first) as u128 + 1);
    // The lowest failure found, with every seed below it run: settled, as one
    // hunt of the range is (see `sim::hunt::HuntResult::stopped_early`),
    // whatever stopped the shards above it.
    let settled = lowest.is_some() && !unproven && !keep_going;
    let stopped_early = stopped_early && !settled;
    let covered_text = if covered == range.count() || settled {
        range.to_string()
    } else {
        // Ranges that meet are one: "0..=15,2000..=5999", not "...,2000..=3999,4000..=5999".
        let mut joined: Vec<SeedRange> = Vec::new();
        for c in blocks.iter().filter_map(|b| b.covered) {
            match joined.last_mut() {
                Some(prev) if prev.last.checked_add(1) == Some(c.first) => prev.last = c.last,
                _ => joined.push(c),
            }
        }
        let parts: Vec<String> = joined.iter().map(|c| c.to_string()).collect();
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(",")
        }
    };
    let mut out = json!({
        "verdict": lowest.map_or(json!("no-deadlock"), |(_, v)| v["verdict"].clone()),
        "seed": lowest.map(|(s, _)| s), "schedules": schedules,
        "cycle": lowest.map_or(json!([]), |(_, v)| v["cycle"].clone()),
        "model": first["model"], "params": params_by_value(first), "strategy": first["strategy"],
        "max_steps": first["max_steps"], "keep_going": keep_going,
        "check_determinism": first["check_determinism"],
        "seeds": range.to_string(), "range": range.to_string(), "covered": covered_text, "shards": shards.len(),
        "schedule": lowest.map_or(json!(null), |(_, v)| v["schedule"].clone()),
        "replay": lowest.map_or(json!(null), |(_, v)| v["replay"].clone()),
        "message": lowest.map_or_else(
            || {
                json!(if covered == range.count() {
                    format!("no failure in seeds {range}")
                } else {
                    format!("no failure in the {covered} of the {} seeds of {range} that the shards ran", range.count())
                })
            },
            |(_, v)| v["message"].clone()
        ),
        "stopped_early": stopped_early,
        // Settled: every seed run, or the lowest failure found with every seed below it run.
        "complete": covered == range.count() || (lowest.is_some() && !unproven && !keep_going),
        // Why, as a shard's JSON says it: the first shard that stopped early.
        "stopped": if settled {
            None
        } else {
            blocks.iter().find_map(|b| b.v.get("stopped").filter(|s| !s.is_null()).cloned())
        },
    });
    if covered != range.count() && !settled {
        // Name what each short shard covered: a shard that found its failure
        // settled all its seeds without running those above it.
        let short: Vec<String> = blocks
            .iter()
            .filter(|b| b.covered.map_or(0, |c| c.count()) != b.seeds.count())
            .map(|b| match b.covered {
                Some(c) => format!("shard {}/{} covered seeds {c} of its {}", b.i, b.n, b.seeds),
                None => format!("shard {}/{} covered none of its seeds {}", b.i, b.n, b.seeds),
            })
            .collect();
        let mut warning = format!(
            "{} of the {} seeds of {range} covered: {} stopped early ({})",
            covered,
            range.count(),
            if short.len() == 1 { "a shard" } else { "shards" },
            short.join("; ")
        );
        if let (true, Some((s, _))) = (unproven, lowest) {
            warning.push_str(&format!("; some seeds below {s} were not run, so a lower one may fail too"));
        }
        eprintln!("warning: {warning}");
        out["warning"] = json!(warning);
    }
    if !keep_going {
        // Whether the failure is the range's lowest; with no failure, there is nothing to say.
        out["lowest"] = lowest.map_or(json!(null), |_| json!(!unproven));
    }
    // The lock-order findings: those of the shards' facts together, up to
    // the lowest failing seed (what a hunt of the whole range would have
    // run), as that hunt finds them.
    let mut graph = sim::lockorder::SeedGraph::default();
    for (name, v) in &shards {
        match &v["lock_order"] {
            _ if v.get("lock_order").is_none() => {
                return Err(UsageError(format!(
                    "{name}: field `lock_order` is missing: made by an older deadsim; run the shard again"
                )))
            }
            // A shard stopped before its first seed saw no facts; one that
            // ran seeds has facts, if only empty lists: a null would drop
            // its findings without a word.
            serde_json::Value::Null if v["covered"] == "none" => {}
            serde_json::Value::Null => {
                return Err(UsageError(format!(
                    "{name}: field `lock_order` is null, but the shard covered seeds {}: \
                     its lock-order facts are missing; run the shard again",
                    v["covered"].as_str().unwrap_or("?")
                )))
            }
            facts if !facts.is_object() => {
                // What it is, not the value: a pasted list may be long.
                let kind = match facts {
                    serde_json::Value::Bool(_) => "true or false",
                    serde_json::Value::Number(_) => "a number",
                    serde_json::Value::String(_) => "text",
                    _ => "a list",
                };
                return Err(UsageError(format!(
                    "{name}: field `lock_order` is {kind}, not an object (with `edges`, `held_across`, `written`)"
                )));
            }
            facts => graph
                .merge(&sim::lockorder::SeedGraph::from_json(facts).map_err(|e| UsageError(format!("{name}: {e}")))?),
        }
    }
    let last = match lowest {
        Some((s, _)) if !keep_going => s,
        _ => range.last,
    };
    out["warnings"] = crate::output::warnings_json(&graph.up_to(last).warnings());
    if keep_going {
        let failures = blocks.iter().fold(0u64, |n, b| n.saturating_add(b.v["failures"].as_u64().unwrap_or(0)));
        let (p, lo, hi) = wilson(failures, schedules);
        let mut distinct: std::collections::BTreeMap<String, (u64, u64, serde_json::Value)> = Default::default();
        for b in &blocks {
            for d in b.v["distinct"].as_array().into_iter().flatten() {
                let sig = d["signature"].as_str().unwrap_or("").to_string();
                let e = distinct.entry(sig).or_insert((u64::MAX, 0, d["verdict"].clone()));
                e.0 = e.0.min(d["seed"].as_u64().unwrap_or(u64::MAX));
                e.1 = e.1.saturating_add(d["count"].as_u64().unwrap_or(0));
            }
        }
        out["failures"] = json!(failures);
        out["share"] = json!({"failing": p, "ci95": [lo, hi]});
        out["distinct"] = json!(distinct
            .into_iter()
            .map(|(sig, (seed, count, verdict))| json!({"signature": sig, "seed": seed, "count": count, "verdict": verdict}))
            .collect::<Vec<_>>());
    }
    crate::output::print_json(out);
    Ok(lowest.is_some())
}

/// What a table's hunt (every built-in variant, or a model's `--matrix`) runs with.
pub struct TableArgs {
    pub range: SeedRange,
    pub jobs: usize,
    pub json: bool,
    pub max_steps: u64,
    pub kind: StrategyKind,
    /// The exit code says whether every row has its expected verdict.
    pub check_expected: bool,
}

pub fn hunt_matrix(name: &str, params: &crate::model_args::ModelArgs, a: TableArgs) -> Result<bool, UsageError> {
    let TableArgs { range, jobs, json, max_steps, kind, check_expected } = a;
    let m = models::find(name)?;
    let grid = m.matrix().ok_or_else(|| UsageError(format!("model {name} has no --matrix (only ttrpc has one)")))?;
    let base = params.pairs();
    if let Some((p, _)) = base.iter().find(|(p, _)| p == grid.row_param || p == grid.col_param) {
        return Err(UsageError(format!("--{p} is set by --matrix; leave it out")));
    }
    if check_expected && !base.is_empty() {
        let given: Vec<String> = base.iter().map(|(p, _)| format!("--{p}")).collect();
        return Err(UsageError(format!(
            "--check-expected: the expected verdicts are those of the default workload; leave out {}",
            given.join(", ")
        )));
    }
    let started = Instant::now();
    let mut cells = Vec::new();
    let mut any = false;
    let opts = HuntOptions { jobs, stop: Some(&INTERRUPTED), ..Default::default() };
    'grid: for (ri, row) in grid.rows.iter().enumerate() {
        for (ci, col) in grid.cols.iter().enumerate() {
            let mut p = base.clone();
            p.push((grid.row_param.to_string(), row.to_string()));
            p.push((grid.col_param.to_string(), col.to_string()));
            let cfg = m.configure(&p)?;
            let r = hunt_with(range, &opts, |seed| kind.run(&cfg, seed, false, max_steps).outcome);
            any |= r.failure.is_some();
            let stopped = r.stopped_early;
            // The grid's text names the cell and seed; the JSON gives the schedule.
            let replay = if json {
                r.failure.as_ref().map(|(seed, _)| Replay::of(m, &cfg, kind, *seed, max_steps))
            } else {
                None
            };
            cells.push((ri, ci, grid.expect[ri][ci], r, replay));
            if stopped {
                break 'grid;
            }
        }
    }
    let interrupted = cells.last().is_some_and(|c| c.3.stopped_early);
    note_stop(interrupted);
    let total_cells = grid.rows.len() * grid.cols.len();
    // Cells whose verdict is not the expected one (a cell cut short is not
    // compared), as `S x C: verdict (expected E)`.
    let differing: Vec<String> = cells
        .iter()
        .filter(|c| settled(&c.3))
        .filter(|c| row_verdict(&c.3) != c.2.as_str())
        .map(|c| {
            format!(
                "--{} {} --{} {}: {} (expected {})",
                grid.row_param,
                grid.rows[c.0],
                grid.col_param,
                grid.cols[c.1],
                row_verdict(&c.3),
                c.2.as_str()
            )
        })
        .collect();
    let elapsed = started.elapsed().as_secs_f64();
    if json {
        // The expected verdicts are those of the default workload: with
        // another (--callers 2), whether a cell matches is not known (null),
        // as the table leaves out its (!) marks then.
        let default = base.is_empty();
        let out: Vec<serde_json::Value> = cells
            .iter()
            .map(|(ri, ci, e, r, replay)| {
                let verdict = row_verdict(r);
                // An interrupted cell has no verdict to match (the table shows `-`).
                let matches =
                    if default && verdict != "interrupted" { json!(verdict == e.as_str()) } else { json!(null) };
                json!({grid.row_param: grid.rows[*ri], grid.col_param: grid.cols[*ci], "expected": e.as_str(),
                       "matches": matches, "verdict": verdict,
                       "seed": r.failure.as_ref().map(|f| f.0), "schedules": r.schedules,
                       "covered": r.covered.map_or("none".to_string(), |c| c.to_string()),
                       "cycle": r.failure.as_ref().map_or(json!([]), |f| cycle_json(&f.1)),
                       "schedule": replay.as_ref().map(|x| &x.schedule),
                       "replay": replay.as_ref().map(|x| &x.command)})
            })
            .collect();
        let verdict = cells.iter().find_map(|c| c.3.failure.as_ref().map(|f| f.1.verdict())).unwrap_or("no-deadlock");
        let seed = cells.iter().find_map(|c| c.3.failure.as_ref().map(|f| f.0));
        // The first failing cell's (in table order), as verdict and seed are.
        let cycle = cells.iter().find_map(|c| c.3.failure.as_ref().map(|f| cycle_json(&f.1))).unwrap_or(json!([]));
        let schedules: u64 = cells.iter().map(|c| c.3.schedules).sum();
        crate::output::print_json(
            json!({"verdict": verdict, "seed": seed, "schedules": schedules, "cycle": cycle, "model": name,
            "seeds": range.to_string(), "strategy": kind.to_string(), "cells": out,
            "default_workload": default, "stopped_early": interrupted, "complete": !interrupted,
            "all_expected": if default { all_expected(out.iter().map(|c| &c["matches"])) } else { json!(null) }}),
        );
        return Ok(if check_expected { !differing.is_empty() } else { any });
    }
    let flags = m.configure(&base)?.flags(m.params());
    let flags = if flags.is_empty() { String::new() } else { format!(" {flags}") };
    // The jobs a cell's hunt used: fewer than asked when the range is short.
    let used = cells.iter().map(|c| c.3.jobs).max().unwrap_or(jobs);
    println!("deadsim hunt {name} --matrix{flags}: seeds {range}, strategy {kind}, {}", job_count(used));
    println!(
        "rows: --{} (S), columns: --{} (C); a cell is the verdict and the lowest failing seed\n",
        grid.row_param, grid.col_param
    );
    // Built line by line so a line never ends in padding.
    let mut line = format!("{:<10}", "S \\ C");
    for c in &grid.cols {
        line.push_str(&format!("{c:<22}"));
    }
    println!("{}", line.trim_end());
    let (mut marked, mut cut) = (false, false);
    for (ri, row) in grid.rows.iter().enumerate() {
        let mut line = format!("{row:<10}");
        for (_, _, e, r, _) in cells.iter().filter(|c| c.0 == ri) {
            let cell = match &r.failure {
                Some((seed, o)) => format!("{} @{seed}", o.verdict().to_uppercase()),
                None => row_verdict(r).to_string(),
            };
            let verdict = row_verdict(r);
            let mark = if verdict == e.as_str() || !base.is_empty() || r.stopped_early { "" } else { " (!)" };
            marked |= !mark.is_empty();
            cut |= r.stopped_early;
            line.push_str(&format!("{:<22}", format!("{cell}{mark}")));
        }
        println!("{}", line.trim_end());
    }
    match (base.is_empty(), marked, cut) {
        (true, true, _) => println!(
            "\n(!) marks a cell whose verdict differs from the expected one (the matrix for valid calls read from the Go source at each tag: sim/src/models/ttrpc/README.md)."
        ),
        (true, false, false) => {
            println!("\nEvery cell has the verdict expected for valid calls (the matrix read from the Go source at each tag: sim/src/models/ttrpc/README.md).")
        }
        // Cut short: the rows say so, and an unfinished cell is not compared.
        (true, false, true) => {}
        (false, _, _) => println!(
            "\nExpected verdicts hold for the default workload only; with these parameters the grid shows what the simulator finds."
        ),
    }
    // The workload flags (as the header writes them, by value) and the step
    // limit go with it: a cell's seed replays only under the parameters it
    // was hunted with.
    let limit = if max_steps == sim::DEFAULT_MAX_STEPS { String::new() } else { format!(" --max-steps {max_steps}") };
    println!(
        "Replay a cell: deadsim replay {name} --{} S --{} C{flags} --seed N{}{limit}",
        grid.row_param,
        grid.col_param,
        crate::output::strategy_flag(kind)
    );
    if check_expected {
        print_expected("cells", cells.iter().filter(|c| settled(&c.3)).count(), total_cells, &differing);
    }
    if interrupted {
        print_interrupted("cells", cells.len(), total_cells, cells.last().map(|c| &c.3));
    }
    eprintln!("({elapsed:.2}s)");
    Ok(if check_expected { !differing.is_empty() } else { any })
}

/// With `--check-expected`, under a table: whether every row (or cell)
/// settled has its expected verdict, naming those that do not.
fn print_expected(what: &str, settled: usize, total: usize, differing: &[String]) {
    // Cut short (Ctrl-C): only the rows that ran to their verdict are compared.
    let of =
        if settled < total { format!("{settled} {what} settled (of {total})") } else { format!("{settled} {what}") };
    match differing {
        [] => println!("\n--check-expected: every one of the {of} has its expected verdict."),
        _ => println!(
            "\n--check-expected: {} of the {of} {} from the expected verdict: {}.",
            differing.len(),
            if differing.len() == 1 { "differs" } else { "differ" },
            differing.join("; ")
        ),
    }
}

pub fn hunt_all(a: TableArgs) -> Result<bool, UsageError> {
    let TableArgs { range, jobs, json, max_steps, kind, check_expected } = a;
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut any = false;
    let opts = HuntOptions { jobs, stop: Some(&INTERRUPTED), ..Default::default() };
    let total_rows: usize = models::all().iter().map(|m| m.variants().len()).sum();
    'models: for m in models::all() {
        for v in m.variants() {
            let cfg = m.configure(&v.params).map_err(|e| UsageError(format!("built-in variant {}: {e}", m.name())))?;
            let r = hunt_with(range, &opts, |seed| kind.run(&cfg, seed, false, max_steps).outcome);
            any |= r.failure.is_some();
            let stopped = r.stopped_early;
            let replay = r.failure.as_ref().map(|(seed, _)| Replay::of(m, &cfg, kind, *seed, max_steps));
            rows.push((m, v, r, replay));
            if stopped {
                break 'models;
            }
        }
    }
    let interrupted = rows.last().is_some_and(|r| r.2.stopped_early);
    note_stop(interrupted);
    let elapsed = started.elapsed().as_secs_f64();
    // Rows whose verdict is not the expected one (a row cut short is not
    // compared), as `model variant: verdict (expected E)`.
    let differing: Vec<String> = rows
        .iter()
        .filter(|r| settled(&r.2))
        .filter(|r| row_verdict(&r.2) != r.1.expect.as_str())
        .map(|(m, v, r, _)| {
            let variant = if v.label.is_empty() { String::new() } else { format!(" {}", v.label) };
            format!("{}{variant}: {} (expected {})", m.name(), row_verdict(r), v.expect.as_str())
        })
        .collect();
    if json {
        let variants: Vec<serde_json::Value> = rows
            .iter()
            .map(|(m, v, r, replay)| {
                let verdict = row_verdict(r);
                json!({
                    "model": m.name(), "variant": v.label, "expected": v.expect.as_str(),
                    "matches": if verdict == "interrupted" { json!(null) } else { json!(verdict == v.expect.as_str()) },
                    "verdict": verdict,
                    "seed": r.failure.as_ref().map(|f| f.0), "schedules": r.schedules,
                    "covered": r.covered.map_or("none".to_string(), |c| c.to_string()),
                    "cycle": r.failure.as_ref().map_or(json!([]), |f| cycle_json(&f.1)),
                    "schedule": replay.as_ref().map(|x| &x.schedule), "replay": replay.as_ref().map(|x| &x.command),
                })
            })
            .collect();
        let verdict =
            rows.iter().find_map(|(_, _, r, _)| r.failure.as_ref().map(|f| f.1.verdict())).unwrap_or("no-deadlock");
        let seed = rows.iter().find_map(|(_, _, r, _)| r.failure.as_ref().map(|f| f.0));
        // The first failing row's (in table order), as verdict and seed are.
        let cycle =
            rows.iter().find_map(|(_, _, r, _)| r.failure.as_ref().map(|f| cycle_json(&f.1))).unwrap_or(json!([]));
        let schedules: u64 = rows.iter().map(|(_, _, r, _)| r.schedules).sum();
        crate::output::print_json(
            json!({"verdict": verdict, "seed": seed, "schedules": schedules, "cycle": cycle, "seeds": range.to_string(),
                   "strategy": kind.to_string(), "stopped_early": interrupted, "complete": !interrupted,
                   "all_expected": all_expected(variants.iter().map(|v| &v["matches"])), "variants": variants}),
        );
        return Ok(if check_expected { !differing.is_empty() } else { any });
    }
    let used = rows.iter().map(|r| r.2.jobs).max().unwrap_or(jobs);
    println!("deadsim hunt: every built-in model variant, seeds {range}, strategy {kind}, {}\n", job_count(used));
    let mut table = vec![["model", "variant", "verdict", "seed", "schedules", "expected", "cycle"].map(String::from)];
    for (m, v, r, _) in &rows {
        let verdict = row_verdict(r);
        let cycle = r
            .failure
            .as_ref()
            .and_then(|f| f.1.deadlock())
            .map(|d| d.cycle.iter().map(|b| format!("{} -> {}", b.name, b.target())).collect::<Vec<_>>().join(", "))
            .or_else(|| r.failure.as_ref().map(|f| f.1.summary()))
            .unwrap_or_default();
        table.push([
            m.name().to_string(),
            if v.label.is_empty() { "(default)".to_string() } else { v.label.clone() },
            verdict.to_string(),
            r.failure.as_ref().map_or("-".to_string(), |f| f.0.to_string()),
            r.schedules.to_string(),
            if r.stopped_early && r.failure.is_none() {
                "-".to_string()
            } else if verdict == v.expect.as_str() {
                "yes".to_string()
            } else {
                format!("NO ({})", v.expect.as_str())
            },
            cycle,
        ]);
    }
    print_table(&table, &[false, false, false, true, true, false, false]);
    let replays: Vec<&str> = rows.iter().filter_map(|r| r.3.as_ref().map(|x| x.by_seed.as_str())).collect();
    if !replays.is_empty() {
        println!("\nReplay each failure:");
        for line in replays {
            println!("  {line}");
        }
    }
    if check_expected {
        print_expected("rows", rows.iter().filter(|r| settled(&r.2)).count(), total_rows, &differing);
    }
    if interrupted {
        print_interrupted("variants", rows.len(), total_rows, rows.last().map(|r| &r.2));
    }
    eprintln!("({elapsed:.2}s)");
    Ok(if check_expected { !differing.is_empty() } else { any })
}

/// How to replay a table row's failure: its schedule string, the command
/// that replays that, and the shorter command by seed (for the report).
struct Replay {
    schedule: Option<String>,
    command: String,
    by_seed: String,
}

impl Replay {
    /// Runs `seed` once more, recorded, for its schedule string.
    fn of(m: &'static dyn Model, cfg: &Configured, kind: StrategyKind, seed: u64, max_steps: u64) -> Replay {
        let run = kind.run_for_schedule(cfg, seed, max_steps);
        Replay {
            schedule: run.trace.as_ref().map(|t| t.meta.replay.clone()),
            command: replay_command(m, cfg, &run),
            by_seed: crate::output::seed_replay_command(m, cfg, kind, seed, &run),
        }
    }
}

/// A row's verdict: its failure's, or "interrupted" when Ctrl-C stopped it
/// before it found one (its seeds were not all run).
/// True if a table row ran to its verdict: not one Ctrl-C cut short before
/// it found anything (`interrupted`), which is not compared.
fn settled(r: &sim::hunt::HuntResult) -> bool {
    row_verdict(r) != "interrupted"
}

fn row_verdict(r: &sim::hunt::HuntResult) -> &'static str {
    match &r.failure {
        Some((_, o)) => o.verdict(),
        None if r.stopped_early => "interrupted",
        None => "no-deadlock",
    }
}

/// The line after a table that Ctrl-C cut short.
fn print_interrupted(what: &str, done: usize, total: usize, last: Option<&sim::hunt::HuntResult>) {
    match last.and_then(|r| r.covered) {
        Some(c) => println!("interrupted: {done} of {total} {what} hunted; the last one ran seeds {c} only"),
        None => println!("interrupted: {done} of {total} {what} hunted; the last one ran no seed"),
    }
}

/// "1 job", "2 jobs".
fn job_count(n: usize) -> String {
    crate::output::count(n as u64, "job")
}

/// A shard's `params` as `(name, value)` pairs, as the command line gives
/// them (a number written as JSON is its text); `None` if not an object.
fn shard_params(v: &serde_json::Value) -> Option<Vec<(String, String)>> {
    let o = v["params"].as_object()?;
    Some(o.iter().map(|(k, x)| (k.clone(), x.as_str().map_or_else(|| x.to_string(), str::to_string))).collect())
}

/// A shard's `params` as the model reads them (`"03"` is `"3"`), or as
/// written when the model does not take them (the check of the shard's own
/// fields then names what is wrong).
fn params_by_value(v: &serde_json::Value) -> serde_json::Value {
    let model = models::find(v["model"].as_str().unwrap_or("")).ok();
    match (model, shard_params(v)) {
        (Some(m), Some(given)) => m.configure(&given).map_or_else(|_| v["params"].clone(), |c| params_json(&c)),
        _ => v["params"].clone(),
    }
}

/// Runs seed `seed` of the hunt that shard `v` (file `name`) is of, recorded.
fn rerun(
    name: &str,
    v: &serde_json::Value,
    seed: u64,
) -> Result<(&'static dyn models::Model, Configured, sim::Run), UsageError> {
    let bad = |field: &str, why: String| UsageError(format!("{name}: field `{field}` {why}"));
    let model_name = v["model"].as_str().unwrap_or("");
    let m = models::find(model_name).map_err(|_| bad("model", format!("is {}, not a model of deadsim", v["model"])))?;
    let given = shard_params(v).ok_or_else(|| bad("params", format!("is {}, not an object", v["params"])))?;
    let cfg = m.configure(&given).map_err(|e| bad("params", e))?;
    let kind: StrategyKind = v["strategy"].as_str().unwrap_or("").parse().map_err(|e| bad("strategy", e))?;
    let max_steps = v["max_steps"]
        .as_u64()
        .filter(|&n| n > 0)
        .ok_or_else(|| bad("max_steps", format!("is {}, not a step limit", v["max_steps"])))?;
    let run = kind.run(&cfg, seed, true, max_steps);
    Ok((m, cfg, run))
}

/// Checks a `--keep-going` shard's distinct failures against their seeds:
/// each lowest seed, run again, fails with that verdict and signature.
/// `known` is a run made already (the shard's failing seed's), not made twice.
fn check_distinct(name: &str, v: &serde_json::Value, known: Option<(u64, &sim::Run)>) -> Result<(), UsageError> {
    for (k, d) in v["distinct"].as_array().into_iter().flatten().enumerate() {
        let Some(seed) = d["seed"].as_u64() else { continue };
        let made;
        let run = match known {
            Some((s, run)) if s == seed => run,
            _ => {
                made = rerun(name, v, seed)?.2;
                &made
            }
        };
        let (verdict, sig) = (run.outcome.verdict(), sim::hunt::signature(&run.outcome));
        if d["verdict"] != json!(verdict) || d["signature"] != json!(sig) {
            return Err(UsageError(format!(
                "{name}: field `distinct[{k}]` says seed {seed} fails with {} ({}), but it gives {verdict} ({sig}) (edited, or made by another build of deadsim)",
                d["verdict"], d["signature"]
            )));
        }
    }
    Ok(())
}

/// Runs the failing `seed` of shard `name` (JSON `v`) again, as the hunt
/// did, and refuses the shard if the fields that report it (`verdict`,
/// `cycle`, `message`, `schedule`, `replay`) are not what that run gives.
/// Gives the run.
fn check_failure_fields(name: &str, v: &serde_json::Value, seed: u64) -> Result<sim::Run, UsageError> {
    let bad = |field: &str, why: String| UsageError(format!("{name}: field `{field}` {why}"));
    let (m, cfg, run) = rerun(name, v, seed)?;
    let schedule = run.trace.as_ref().map(|t| t.meta.replay.clone());
    let expected = [
        ("verdict", json!(run.outcome.verdict())),
        ("cycle", cycle_json(&run.outcome)),
        ("message", json!(run.outcome.summary())),
        ("schedule", json!(schedule)),
        ("replay", json!(replay_command(m, &cfg, &run))),
    ];
    for (field, want) in expected {
        if v[field] != want {
            return Err(bad(
                field,
                format!(
                    "is {}, but seed {seed} of this hunt gives {want} (edited, or made by another build of deadsim)",
                    v[field]
                ),
            ));
        }
    }
    Ok(run)
}

struct Shard<'a> {
    v: &'a serde_json::Value,
    i: u64,
    n: u64,
    seeds: SeedRange,
    /// The seeds it ran (from `seeds.first`), if any.
    covered: Option<SeedRange>,
    /// Its lowest failing seed, if any.
    seed: Option<u64>,
    schedules: u64,
    /// The fingerprint of its failure's schedule string.
    fingerprint: Option<&'a str>,
}

impl<'a> Shard<'a> {
    fn read(name: &str, v: &'a serde_json::Value, range: SeedRange) -> Result<Shard<'a>, UsageError> {
        let bad = |field: &str, why: String| UsageError(format!("{name}: field `{field}` {why}"));
        let shown = |field: &str| v.get(field).map_or("missing".to_string(), |x| x.to_string());
        let shard =
            v.get("shard").ok_or_else(|| bad("shard", "is missing: not the JSON of a `--shard I/N` hunt".into()))?;
        let (i, n) = shard
            .as_str()
            .and_then(|s| s.split_once('/'))
            .and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
            .filter(|&(i, n)| i < n)
            .ok_or_else(|| bad("shard", format!("is {shard}, not I/N with I below N")))?;
        let seeds: SeedRange = v["seeds"].as_str().unwrap_or("").parse().map_err(|e| bad("seeds", e))?;
        if sim::hunt::shard(range, i, n) != Some(seeds) {
            return Err(bad("seeds", format!("is {seeds}, not the seeds of shard {i}/{n} of {range}")));
        }
        let covered = match v["covered"].as_str() {
            Some("none") => None,
            Some(c) => match c.parse::<SeedRange>() {
                Ok(c) if c.first == seeds.first && c.last <= seeds.last => Some(c),
                _ => {
                    return Err(bad(
                        "covered",
                        format!("is {}, not a start of the shard's seeds {seeds}", shown("covered")),
                    ))
                }
            },
            None => return Err(bad("covered", format!("is {}, not a seed range", shown("covered")))),
        };
        let schedules = v["schedules"]
            .as_u64()
            .ok_or_else(|| bad("schedules", format!("is {}, not a count", shown("schedules"))))?;
        let seed = match &v["seed"] {
            serde_json::Value::Null => None,
            x => match (x.as_u64(), covered) {
                (Some(s), Some(c)) if c.first <= s && s <= c.last => Some(s),
                _ => {
                    return Err(bad(
                        "seed",
                        format!("is {x}, not one of the seeds the shard ran ({})", shown("covered")),
                    ))
                }
            },
        };
        const VERDICTS: [&str; 5] = ["no-deadlock", "deadlock", "step-limit", "invariant", "panic"];
        let verdict = v["verdict"].as_str().filter(|x| VERDICTS.contains(x));
        match (verdict, seed) {
            (Some("no-deadlock"), None) => {}
            (Some(x), Some(_)) if x != "no-deadlock" => {}
            _ => {
                return Err(bad(
                    "verdict",
                    format!("is {}, which does not fit field `seed` ({})", shown("verdict"), shown("seed")),
                ))
            }
        }
        let stopped_early = v["stopped_early"].as_bool();
        match (&v["stopped"], stopped_early) {
            (serde_json::Value::Null, Some(false)) => {}
            (serde_json::Value::String(x), Some(true)) if x == "time-budget" || x == "interrupted" => {}
            _ => {
                return Err(bad(
                    "stopped",
                    format!(
                        "is {}, which does not fit field `stopped_early` ({}): null, or \"time-budget\" or \"interrupted\" when it stopped early",
                        shown("stopped"),
                        shown("stopped_early")
                    ),
                ))
            }
        }
        let model = v["model"].as_str().unwrap_or("");
        let fingerprint = match &v["schedule"] {
            serde_json::Value::Null if seed.is_none() => None,
            x => match x.as_str().and_then(|s| s.strip_prefix("ds1:")).and_then(|s| s.split_once(':')) {
                Some((m, rest)) if m == model && seed.is_some() => Some(rest.split(':').next().unwrap_or("")),
                _ => return Err(bad("schedule", format!("is {x}, not the schedule string of a failure of {model}"))),
            },
        };
        // The counts follow from the seeds it ran: every covered seed, or up
        // to its lowest failure (a shard is `--keep-going` if it has `failures`).
        let keep_going = v.get("failures").is_some();
        let has = if keep_going { "has" } else { "has no" };
        match v["keep_going"].as_bool() {
            Some(k) if k == keep_going => {}
            Some(k) => {
                return Err(bad(
                    "keep_going",
                    format!("is {k}, but the shard {has} field `failures` (a --keep-going hunt's)"),
                ));
            }
            None => {
                let why = format!(
                    "is {}, not true or false (expected {keep_going}: the shard {has} field `failures`)",
                    shown("keep_going")
                );
                return Err(bad("keep_going", why));
            }
        }
        // A hunt stops short of its seeds only at a time budget, a Ctrl-C,
        // or (without --keep-going) its first failure; `complete` follows.
        let stopped_early = stopped_early.unwrap_or_default();
        let found = seed.is_some() && !keep_going;
        if !stopped_early && !found && covered != Some(seeds) {
            return Err(bad(
                "stopped_early",
                format!(
                    "is false, but the shard covered {} of its seeds {seeds} without a failure to stop at",
                    shown("covered")
                ),
            ));
        }
        let complete = !stopped_early || found;
        if v["complete"].as_bool() != Some(complete) {
            return Err(bad(
                "complete",
                format!(
                    "is {}, but the shard's other fields give {complete} (`stopped_early` {stopped_early}, `seed` {})",
                    shown("complete"),
                    shown("seed")
                ),
            ));
        }
        let ran = match (seed, keep_going) {
            (Some(s), false) => (s - seeds.first).saturating_add(1),
            _ => covered.map_or(0, |c| c.len()),
        };
        if schedules != ran {
            return Err(match (seed, keep_going) {
                // Which of the two was edited cannot be told: both named.
                (Some(s), false) => bad(
                    "schedules",
                    format!(
                        "is {schedules}, but field `seed` is {s}: a shard of {seeds} that stops at seed {s} ran {ran} \
                         seeds, not {schedules}"
                    ),
                ),
                _ => bad(
                    "schedules",
                    format!(
                        "is {schedules}, but the shard ran {ran} seeds (field `covered` {}, field `seed` {})",
                        shown("covered"),
                        shown("seed")
                    ),
                ),
            });
        }
        if keep_going {
            Self::check_failures(v, seed, covered, schedules).map_err(|(field, why)| bad(&field, why))?;
        }
        // Lock-order facts come from the seeds it ran, up to its failure.
        let last_fact = if keep_going { covered.map(|c| c.last) } else { seed.or(covered.map(|c| c.last)) };
        for (list, fact) in
            [("edges", "an edge"), ("held_across", "a held-across fact"), ("written", "a write-lock fact")]
        {
            for x in v["lock_order"][list].as_array().into_iter().flatten() {
                let s = &x["seed"];
                match (s.as_u64(), last_fact) {
                    (Some(s), Some(last)) if seeds.first <= s && s <= last => {}
                    _ => {
                        let upto = last_fact
                            .map_or("none".to_string(), |l| SeedRange { first: seeds.first, last: l }.to_string());
                        return Err(bad(
                            &format!("lock_order.{list}"),
                            format!("has {fact} from seed {s}, not one of the seeds the shard ran ({upto})"),
                        ));
                    }
                }
            }
        }
        Ok(Shard { v, i, n, seeds, covered, seed, schedules, fingerprint })
    }

    /// A `--keep-going` shard's `failures` and `distinct` against each
    /// other and the seeds it ran: `Err((field, why))`.
    fn check_failures(
        v: &serde_json::Value,
        seed: Option<u64>,
        covered: Option<SeedRange>,
        schedules: u64,
    ) -> Result<(), (String, String)> {
        let failures = v["failures"].as_u64().filter(|&f| f <= schedules).ok_or_else(|| {
            (
                "failures".to_string(),
                format!("is {}, not a count of at most {schedules} (field `schedules`)", v["failures"]),
            )
        })?;
        if (failures > 0) != seed.is_some() {
            return Err(("failures".into(), format!("is {failures}, which does not fit field `seed` ({})", v["seed"])));
        }
        let list = v["distinct"].as_array().ok_or_else(|| ("distinct".to_string(), "is not a list".to_string()))?;
        let (mut sum, mut lowest) = (0u64, None::<u64>);
        for (k, d) in list.iter().enumerate() {
            let field = format!("distinct[{k}]");
            let s = d["seed"].as_u64().filter(|&s| covered.is_some_and(|c| c.first <= s && s <= c.last));
            let Some(s) = s else {
                let ran = covered.map_or("none".to_string(), |c| c.to_string());
                return Err((
                    format!("{field}.seed"),
                    format!("is {}, not one of the seeds the shard ran ({ran})", d["seed"]),
                ));
            };
            let count = d["count"]
                .as_u64()
                .filter(|&c| c >= 1)
                .ok_or_else(|| (format!("{field}.count"), format!("is {}, not a count of 1 or more", d["count"])))?;
            if !d["signature"].is_string() {
                return Err((format!("{field}.signature"), format!("is {}, not text", d["signature"])));
            }
            if !d["verdict"].as_str().is_some_and(|x| sim::outcome::FAILURE_VERDICTS.contains(&x)) {
                return Err((format!("{field}.verdict"), format!("is {}, not a failure's verdict", d["verdict"])));
            }
            // A signature starts with its failure's verdict ("deadlock: T1 lock B -> ...").
            let verdict = d["verdict"].as_str().unwrap_or("");
            if d["signature"].as_str().is_none_or(|sig| sig.split(':').next() != Some(verdict)) {
                return Err((
                    format!("{field}.verdict"),
                    format!(
                        "is {}, but field `{field}.signature` ({}) is of another failure",
                        d["verdict"], d["signature"]
                    ),
                ));
            }
            sum = sum.saturating_add(count);
            lowest = Some(lowest.map_or(s, |l| l.min(s)));
        }
        if sum != failures {
            return Err((
                "distinct".into(),
                format!("adds up to {}, but field `failures` is {failures}", crate::output::count(sum, "failure")),
            ));
        }
        if lowest != seed {
            return Err((
                "distinct".into(),
                format!(
                    "has its lowest seed at {}, but field `seed` is {}",
                    lowest.map_or("none".to_string(), |l| l.to_string()),
                    v["seed"]
                ),
            ));
        }
        Ok(())
    }
}

/// A table's `all_expected` from its rows' `matches`: false if a row's
/// verdict is not the one expected; else null if a row has none to match
/// (Ctrl-C stopped it: not known, and no regression); else true.
fn all_expected<'a>(matches: impl Iterator<Item = &'a serde_json::Value>) -> serde_json::Value {
    let matches: Vec<&serde_json::Value> = matches.collect();
    if matches.iter().any(|m| **m == false) {
        json!(false)
    } else if matches.iter().any(|m| m.is_null()) {
        json!(null)
    } else {
        json!(true)
    }
}

/// A share as a percentage: three decimals (`0.080%`), but two significant
/// digits below 0.01% (`0.00017%`), where three decimals said `0.000%`
/// beside a failure found, or for an interval's upper end above zero; and
/// `0%` only for none.
fn percent(share: f64) -> String {
    let v = 100.0 * share;
    if v == 0.0 {
        return "0%".to_string();
    }
    // Three decimals while they show two digits (0.010% and up); judged on
    // the rounded text, as the f64 nearest 0.0095 is just below it.
    let three = format!("{v:.3}");
    if three.parse::<f64>().is_ok_and(|r| r >= 0.01) {
        return format!("{three}%");
    }
    let mut decimals = (1.0 - v.log10().floor()) as usize;
    // Rounding up to the next power of ten (0.00099996 to 0.00100) would
    // give three digits: one decimal fewer.
    if format!("{v:.decimals$}").parse::<f64>().is_ok_and(|r| r >= 10f64.powf(v.log10().floor() + 1.0)) {
        decimals -= 1;
    }
    if decimals > 12 {
        return format!("{v:.1e}%");
    }
    format!("{v:.decimals$}%")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_share_keeps_two_significant_digits_below_a_hundredth_of_a_percent() {
        use super::percent;
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(0.0008), "0.080%");
        assert_eq!(percent(0.0113), "1.130%");
        assert_eq!(percent(1.0), "100.000%");
        // 1 of 600,000 and its interval's ends; 0 of 2,000,000's upper end.
        assert_eq!(percent(1.0 / 600_000.0), "0.00017%");
        assert_eq!(percent(2.94e-7), "0.000029%");
        assert_eq!(percent(1.92e-6), "0.00019%");
        assert_eq!(percent(1e-18), "1.0e-16%");
        // Rounding up to the next power of ten keeps two digits.
        assert_eq!(percent(0.0000999996), "0.010%");
        assert_eq!(percent(0.00000999996), "0.0010%");
        assert_eq!(percent(0.000094), "0.0094%");
        // 19 of 200,000: the f64 is just below 0.0095.
        assert_eq!(percent(19.0 / 200_000.0), "0.0095%");
    }
}
