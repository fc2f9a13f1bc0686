//! `replay`, `explore` and `shrink`: schedules rather than seeds.

use std::path::PathBuf;

use serde_json::json;
use sim::models::{Configured, Model, NotReplayed};
use sim::scheduler::{explore, ExploreConfig, Schedule, StrategyKind};
use sim::Run;

use crate::output::{
    count, cycle_json, model_label, params_json, replay_command, replay_line, run_json, write_files_before_report,
    write_trace_before_report,
};
use crate::UsageError;

/// What a `--seed`/`--schedule` pair selects.
pub enum Which {
    Seed(u64, StrategyKind),
    Schedule(Schedule),
}

impl Which {
    /// `max_steps` bounds the choices a schedule string may have (see
    /// [`Schedule::choices_for`]).
    pub fn from_args(
        seed: Option<u64>,
        strategy: Option<&str>,
        schedule: Option<String>,
        max_steps: u64,
    ) -> Result<Which, UsageError> {
        match (seed, schedule) {
            (Some(_), Some(_)) => Err(UsageError("give --seed or --schedule, not both".into())),
            (None, None) => Err(UsageError("give --seed N or --schedule STRING".into())),
            (None, Some(_)) if strategy.is_some() => {
                Err(UsageError("--strategy goes with --seed; a schedule string already fixes every choice".into()))
            }
            (Some(s), None) => {
                Ok(Which::Seed(s, strategy.unwrap_or("random").parse().map_err(|e| format!("--strategy {e}"))?))
            }
            (None, Some(text)) => {
                Ok(Which::Schedule(Schedule::parse_within(&text, Schedule::choices_for(max_steps)).map_err(|e| {
                    let e = e.strip_prefix("schedule: ").unwrap_or(&e);
                    // Too many for the step limit: the flag that would take more.
                    let hint = if e.ends_with("this replay reads") {
                        format!(" (16 a step of --max-steps {max_steps}; a longer run takes a larger --max-steps)")
                    } else {
                        String::new()
                    };
                    format!("--schedule: {e}{hint}")
                })?))
            }
        }
    }

    /// Runs it with recording on; a schedule is checked against the model first.
    pub fn run(&self, m: &dyn Model, cfg: &Configured, max_steps: u64) -> Result<Run, UsageError> {
        match self {
            Which::Seed(seed, kind) => Ok(kind.run(cfg, *seed, true, max_steps)),
            Which::Schedule(s) => {
                s.check_for(m.name(), &cfg.params).map_err(|e| {
                    let hint = match (s.model == m.name()).then(|| parameters_giving(m, cfg, &s.fingerprint)) {
                        Some(Some(flags)) => format!(" (`{flags}` gives its fingerprint)"),
                        _ => String::new(),
                    };
                    UsageError(format!("--schedule: {e}{hint}"))
                })?;
                cfg.replay_schedule(s, max_steps).map_err(|e| {
                    UsageError(match e {
                        // A schedule that ends while the run goes on is cut
                        // short, or one of a step-limit run replayed without
                        // its step limit.
                        NotReplayed::Stopped(summary) if summary.contains("the schedule ends") => format!(
                            "--schedule: {summary}; the schedule is cut short, or it is a step-limit run's and \
                             replays only with that run's --max-steps"
                        ),
                        NotReplayed::Stopped(summary) => format!("--schedule: {summary}"),
                        NotReplayed::Unused { steps, step_limit: true, used, given, .. } => format!(
                            "--schedule: the run hit the step limit (--max-steps {steps}) with {} of the schedule's \
                             {given} choices unused; replay it with the step limit it was recorded with",
                            given - used
                        ),
                        NotReplayed::Unused { steps, verdict, used, given, .. } => format!(
                            "--schedule: the run ended at step {steps} ({verdict}) with {} of the schedule's {given} \
                             choices unused; the schedule does not fit this model",
                            given - used
                        ),
                    })
                })
            }
        }
    }
}

/// Prints every event of a recorded run, then its outcome. A step in which
/// the task that ran made no event (it ran to its next operation, which
/// comes at a later step: a task's first run, or code between two
/// operations) gets a `runs` line, so that every step the timeline draws
/// is listed.
pub fn print_events(run: &Run) {
    let t = run.trace.as_ref().expect("recorded");
    let labels = t.task_labels();
    // Whether the task that ran each step made an event in it.
    let mut own = vec![false; t.schedule.len() + 1];
    for e in &t.events {
        let step = e.step as usize;
        if step >= 1 && t.schedule.get(step - 1) == Some(&e.task) {
            own[step] = true;
        }
    }
    // The time of a step without events, as the charts place it.
    let times = visualizer::model::step_times(t);
    let mut listed = 0usize;
    let mut runs_until = |step: usize| {
        while listed < step.min(t.schedule.len()) {
            listed += 1;
            if !own[listed] {
                let task = &labels[t.schedule[listed - 1] as usize];
                let time = times.get(listed).map_or(String::new(), u64::to_string);
                println!("step {listed:>6} t={time:>9}ns  {task:<20} runs");
            }
        }
    };
    for e in &t.events {
        runs_until(e.step as usize);
        println!("{}", t.event_line(&labels, e));
    }
    runs_until(usize::MAX);
    println!();
    crate::output::print_outcome(run);
}

pub struct ExploreArgs {
    pub preemptions: Option<u32>,
    pub no_reduction: bool,
    pub max_executions: u64,
    pub max_steps: u64,
    pub trace: Option<PathBuf>,
    pub json: bool,
    /// Stop taking executions after this long (`--time-budget`).
    pub time_budget: Option<std::time::Duration>,
    /// Every distinct failure, not the first (`--keep-going`; no bound).
    pub keep_going: bool,
    /// A search that stops before it has covered every schedule fails
    /// (`--require-complete`): exit 1, as for a failure found.
    pub require_complete: bool,
}

/// The parameters, within two changes of `cfg`'s, that give fingerprint
/// `fp`, as the model and flags that select them (`abba --fixed`): what a
/// schedule recorded with other parameters was most likely recorded with.
/// A fingerprint is a hash, so this tries the values a user may have left
/// out or mistyped: each flag either way, each choice (a ttrpc tag, a Flink
/// release), whole numbers from the lowest up to 64 of them, and pairs of
/// flag or choice changes (a server and a client tag). Only fingerprints are
/// computed, nothing is run.
fn parameters_giving(m: &dyn Model, cfg: &Configured, fp: &str) -> Option<String> {
    use sim::models::ParamKind;
    let specs = m.params();
    let base: Vec<(String, String)> = cfg.params.iter().map(|p| (p.name.clone(), p.value.clone())).collect();
    // Each parameter's spec, by name: a configured model may leave some
    // out (Flink's pipeline-only ones under `--scenario minimal`), so the
    // two lists need not line up.
    let spec = |i: usize| specs.iter().find(|s| s.name == base[i].0.as_str());
    // The values each parameter may take other than its own.
    let others = |i: usize| -> Vec<String> {
        let own = &base[i].1;
        let Some(spec) = spec(i) else { return Vec::new() };
        let mut all: Vec<String> = match spec.kind {
            ParamKind::Flag => vec!["true".into(), "false".into()],
            ParamKind::Choice(words) => words.iter().map(|w| w.to_string()).collect(),
            ParamKind::Int { min, max } => (min..=max.min(min.saturating_add(63))).map(|n| n.to_string()).collect(),
            ParamKind::Float { .. } => vec![],
        };
        // A number given where the schedule was recorded without it: its
        // default, which the low whole numbers need not reach (ttrpc's
        // 4000 payload bytes) and a fraction has no list to hold.
        if !all.iter().any(|v| v == spec.default) {
            all.push(spec.default.to_string());
        }
        all.into_iter().filter(|v| v != own).collect()
    };
    let small = |i: usize| spec(i).is_some_and(|s| matches!(s.kind, ParamKind::Flag | ParamKind::Choice(_)));
    // Only values off their defaults are passed, as a user passes flags: a
    // model refuses some flags with others (Flink's pipeline-only ones
    // with `--scenario minimal`), even at their defaults.
    let try_set = |given: &[(String, String)]| -> Option<String> {
        let off_default: Vec<(String, String)> = given
            .iter()
            .filter(|(k, v)| specs.iter().find(|s| s.name == k.as_str()).is_none_or(|s| s.default != v.as_str()))
            .cloned()
            .collect();
        let c = m.configure(&off_default).ok()?;
        (sim::scheduler::fingerprint(m.name(), &c.params) == fp).then(|| crate::output::model_command(m, &c))
    };
    let n = base.len();
    for i in 0..n {
        for v in others(i) {
            let mut given = base.clone();
            given[i].1 = v;
            if let Some(found) = try_set(&given) {
                return Some(found);
            }
        }
    }
    for i in (0..n).filter(|&i| small(i)) {
        for j in (i + 1..n).filter(|&j| small(j)) {
            for v in others(i) {
                for w in others(j) {
                    let mut given = base.clone();
                    given[i].1 = v.clone();
                    given[j].1 = w;
                    if let Some(found) = try_set(&given) {
                        return Some(found);
                    }
                }
            }
        }
    }
    None
}

/// `deadsim explore`: every schedule (within a preemption bound), or the first failing one.
pub fn explore_cmd(m: &dyn Model, cfg: &Configured, a: ExploreArgs) -> Result<bool, UsageError> {
    let started = std::time::Instant::now();
    crate::hunt_cmd::install_interrupt_handler();
    let r = crate::hunt_cmd::with_progress(0, "executions", |progress| {
        let ec = ExploreConfig {
            preemption_bound: a.preemptions,
            reduction: !a.no_reduction,
            max_executions: a.max_executions,
            max_steps: a.max_steps,
            time_budget: a.time_budget,
            stop: Some(&crate::hunt_cmd::INTERRUPTED),
            progress: progress.cloned(),
            keep_going: a.keep_going,
            ..ExploreConfig::default()
        };
        explore(cfg, &ec)
    });
    // With --keep-going each distinct failure, recorded from the first
    // schedule that showed it, in signature order; the first is reported
    // (and its trace written) as the one failure is without it.
    let mut r = r;
    let mut distinct: Vec<Distinct> = Vec::new();
    for (i, (signature, choices)) in r.distinct.iter().enumerate() {
        let strategy = sim::scheduler::ReplayStrategy::named(choices.clone(), "dfs");
        let run = cfg.run_with(sim::Sim::new(0).record(true).max_steps(a.max_steps).strategy(Box::new(strategy)));
        distinct.push(Distinct {
            signature: signature.clone(),
            verdict: run.outcome.verdict(),
            schedule: run.trace.as_ref().map(|t| t.meta.replay.clone()),
            replay: replay_command(m, cfg, &run),
        });
        if i == 0 {
            r.failure = Some((run, choices.clone()));
        }
    }
    let interrupted = crate::hunt_cmd::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed);
    crate::hunt_cmd::note_stop(r.stopped_early);
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(e) = &r.nondeterminism {
        return Err(UsageError(format!("{}: {e}; exhaustive search needs a deterministic model", m.name())));
    }
    let label = model_label(m, cfg);
    // A model that sleeps or reads the clock is explored without reduction.
    let reduced = !a.no_reduction && !r.timed;
    // Why, where it is said.
    const TIMED: &str = "the model uses virtual time, which every step moves";
    let no_reduction = format!("no reduction: {TIMED}");
    // Within a bound, the reduction is bounded (no sleep sets; see `sim::scheduler::explore`).
    let how = match (reduced, r.timed) {
        (true, _) => "partial-order reduction",
        (false, true) => "plain DFS, without reduction as the model uses virtual time",
        (false, false) => "plain DFS",
    };
    // What ended a search before it was done.
    let stopped = match (r.stopped_early, interrupted) {
        (true, true) => "it was interrupted".to_string(),
        (true, false) => format!(
            "the time budget (--time-budget {}) ran out",
            crate::secs(a.time_budget.map_or(0.0, |d| d.as_secs_f64()))
        ),
        (false, _) => format!("the budget (--max-executions {}) ran out", a.max_executions),
    };
    let bounded = match (a.preemptions, r.bound) {
        // Found by the random schedules a proof is checked against.
        (Some(_), _) if r.missed_by_search().is_some() => match r.cross_check.as_ref().and_then(|c| c.bound) {
            Some(k) => format!("{how}, within {}", count(k.into(), "preemption")),
            // A pass below the bound refused no branch: a proof of every schedule.
            None => how.to_string(),
        },
        // Found beside the passes with more preemptions than asked for; the
        // passes then showed that every schedule within the bound completes.
        (Some(k), Some(_)) if r.failure.is_some() && r.exhausted => format!(
            "{how}, the bound raised from 0: every schedule within {} completes; this one, found by the \
             search beside the passes, has {}",
            count(k.into(), "preemption"),
            count(r.unbounded_failure.unwrap_or_default().into(), "preemption")
        ),
        // Found beside the passes, which stopped before they could show it needs the fewest.
        (Some(k), Some(b)) if r.failure.is_some() && r.unbounded_failure.is_some() => {
            let p = r.unbounded_failure.unwrap_or_default();
            let below = if b > 0 { format!("none fails within {}; ", b - 1) } else { String::new() };
            let after = if p > k {
                // The passes stop at `k`: they could never show it for fewer than `p`.
                format!(", more than the {k} asked for, and {stopped} before the passes covered {k}")
            } else {
                format!(", and {stopped} before the passes showed whether fewer fail")
            };
            format!(
                "{how}, the bound raised from 0: {below}this one, found by the search without a bound, has {}{after}",
                count(p.into(), "preemption")
            )
        }
        (Some(_), Some(b)) if r.failure.is_some() && b > 0 => {
            format!("{how}, the bound raised from 0: none fails within {}, one within {b}", b - 1)
        }
        (Some(_), Some(_)) if r.failure.is_some() => format!("{how}, the bound raised from 0: fails within 0"),
        // The search without a bound, run beside the passes, covered every schedule first.
        (Some(_), Some(b)) if r.unbounded_covered => {
            let passes = if b > 0 {
                format!("the passes had raised the bound from 0 to {b} when")
            } else {
                "the passes were still within 0 when".to_string()
            };
            format!(
                "{how}: {passes} the search without a bound beside them covered every schedule, in {} of the {}, \
                 {} of them pruned as redundant",
                r.unbounded_executions, r.executions, r.pruned
            )
        }
        // Plain DFS ran out of schedules; the reduced search out of
        // branches the bound refused: every schedule is covered, up to the
        // order of independent steps.
        (Some(k), Some(b)) if r.exhausted && b < k && !reduced => {
            format!("{how}, the bound raised from 0; no schedule has more than {}", count(b.into(), "preemption"))
        }
        (Some(k), Some(b)) if r.exhausted && b < k => {
            format!(
                "{how}, the bound raised from 0; the bound of {b} refused no branch, so no higher one has more to see"
            )
        }
        (Some(0), _) => how.to_string(),
        _ => format!("{how}, the bound raised from 0"),
    };
    // Where the passes decided, the executions the search beside them ran are part of the count.
    let bounded = if r.unbounded_executions > 0 && !r.unbounded_covered {
        format!(
            "{bounded}; {} of the {} by the search without a bound beside the passes",
            r.unbounded_executions,
            count(r.executions, "execution")
        )
    } else {
        bounded
    };
    let reduction = if a.preemptions.is_some() {
        bounded.as_str()
    } else if a.no_reduction {
        "no reduction"
    } else if r.timed {
        no_reduction.as_str()
    } else {
        "partial-order reduction"
    };
    let scope = match a.preemptions {
        // The search without a bound covered them all: the proof is of every schedule.
        Some(_) if r.unbounded_covered => "every schedule".to_string(),
        Some(k) => format!("every schedule within {}", count(k.into(), "preemption")),
        None => "every schedule".to_string(),
    };
    // The largest bound every schedule within which was run (none without a
    // bound). Exhausted below the bound asked for, no higher bound had more
    // to see: the bound asked for is proved.
    let proved_within = match (a.preemptions, r.bound) {
        // The proof the random schedules contradicted proved nothing.
        _ if r.missed_by_search().is_some() => None,
        (Some(k), Some(_)) if r.exhausted => Some(k),
        // Cut short or failing within b: every schedule within b - 1 ran.
        (Some(_), Some(b)) if b > 0 => Some(b - 1),
        _ => None,
    };
    // A trace that cannot be written fails the command after the report
    // (see `hunt`).
    let written = match (&a.trace, &r.failure) {
        (Some(path), Some((run, _))) => write_trace_before_report(path, run.trace.as_ref().unwrap()),
        (Some(path), None) => {
            crate::output::no_trace(path);
            Ok(())
        }
        _ => Ok(()),
    };
    // Lock-order findings over every execution run, as `hunt` gives them over its seeds.
    let warnings = r.lock_order.warnings();
    // No failure, and no proof either: with --require-complete that fails
    // the command. Ctrl-C's own exit, 130, already says it is no pass, but
    // only where Ctrl-C cut the search short (`note_stop`): one pressed as
    // the budget ran out leaves a search the budget ended.
    let unproved = a.require_complete && r.failure.is_none() && !r.exhausted && !(r.stopped_early && interrupted);
    // The verdict line, the same in the report and in the JSON's `message`.
    let message = match &r.failure {
        Some((run, _)) => run.outcome.summary(),
        None if r.exhausted => {
            // Only sleep sets prune: a reduction without a bound.
            let pruned = if reduced && a.preemptions.is_none() {
                format!("; {} pruned as redundant", r.pruned)
            } else {
                String::new()
            };
            // The proof of a reduced search is checked against random schedules (see `explore`).
            let checked = match &r.cross_check {
                Some(c) if c.seeds == 0 => String::new(),
                Some(c) if c.bound.is_some() && c.within == 0 => {
                    format!("; no random schedule of seeds 0..{} is within the bound to check it against", c.seeds)
                }
                Some(c) if c.bound.is_some() => format!(
                    "; the {} of seeds 0..{} within the bound {}",
                    count(c.within, "random schedule"),
                    c.seeds,
                    agree(c.within)
                ),
                Some(c) => format!("; {} {}", count(c.seeds, "random schedule"), agree(c.seeds)),
                None => String::new(),
            };
            format!(
                "proved: {}, {scope} completes without deadlock, invariant violation or panic ({reduction}{pruned}){checked}",
                count(r.executions, "execution")
            )
        }
        None => {
            // With a bound raised pass by pass, the passes below the last one
            // are proofs, and the last one is the one cut short.
            let (scope, covered) = match (a.preemptions, r.bound, proved_within) {
                (Some(k), Some(b), proved) if b < k => (
                    format!(
                        "every schedule within {} (on the way to the {k} asked for)",
                        count(b.into(), "preemption")
                    ),
                    proved.map_or(String::new(), |p| {
                        format!(" (every schedule within {} was covered and completes)", count(p.into(), "preemption"))
                    }),
                ),
                (_, _, Some(p)) => (
                    scope.clone(),
                    format!(" (every schedule within {} was covered and completes)", count(p.into(), "preemption")),
                ),
                _ => (scope.clone(), String::new()),
            };
            // Unreduced and unbounded, a depth-first search turns over the
            // last steps of its first schedules and never reaches a choice
            // made early (a model writer's timed kernel: 50,000 executions
            // without its bug, which one preemption found in 2,394).
            let unreduced = match (r.timed, a.preemptions) {
                // (--keep-going takes no bound: no hint of one.)
                (true, None) if !a.keep_going => format!(
                    "; {TIMED}, so the search ran without reduction, and without a bound it varies the last \
                     steps first: --preemptions 2 tries every schedule with few preemptions first"
                ),
                (true, _) => format!("; {TIMED}, so the search ran without reduction"),
                _ => String::new(),
            };
            format!(
                "no failure in {}, but {stopped} before {scope} was covered{covered}{unreduced}",
                count(r.executions, "execution")
            )
        }
    };
    if a.json {
        let (verdict, cycle, schedule, replay) = match &r.failure {
            Some((run, _)) => (
                run.outcome.verdict(),
                cycle_json(&run.outcome),
                json!(run.trace.as_ref().map(|t| t.meta.replay.clone())),
                json!(replay_command(m, cfg, run)),
            ),
            None => ("no-deadlock", json!([]), json!(null), json!(null)),
        };
        let warnings = crate::output::warnings_json(&warnings);
        crate::output::print_json(
            json!({"verdict": verdict, "seed": r.missed_by_search(), "schedules": r.executions, "cycle": cycle, "model": m.name(),
                   "params": params_json(cfg), "strategy": "dfs", "message": message,
                   "executions": r.executions, "pruned": r.pruned, "exhausted": r.exhausted,
                   "complete": r.exhausted || (r.failure.is_some() && r.unbounded_failure.is_none() && !a.keep_going),
                   // The bound asked for (`preemptions` in shrink's JSON counts a schedule's own).
                   "preemption_bound": a.preemptions, "reduction": reduced,
                   // Reduction asked for, and off: the model uses virtual time.
                   "timed": r.timed,
                   "stopped": stopped_json(&r, a.keep_going), "proved_within": proved_within,
                   "max_steps": a.max_steps,
                   "found_within": r.failure.as_ref().and(r.bound).filter(|_| r.unbounded_failure.is_none() && r.missed_by_search().is_none()),
                   // Of `executions`, those of the search without a bound beside the passes,
                   // and the preemptions of a failure it found that the passes could not
                   // show to need the fewest (see `found_within`).
                   "unbounded_executions": (a.preemptions.is_some() && reduced).then_some(r.unbounded_executions),
                   "unbounded_failure": r.unbounded_failure,
                   "schedule": schedule, "replay": replay,
                   // A random seed that failed after the search covered every schedule it saw.
                   "missed_by_search": r.missed_by_search(),
                   "keep_going": a.keep_going, "require_complete": a.require_complete,
                   // With --keep-going: every distinct failure, in signature order.
                   "distinct": a.keep_going.then(|| distinct.iter().map(|d| json!({"signature": d.signature,
                       "verdict": d.verdict, "schedule": d.schedule, "replay": d.replay})).collect::<Vec<_>>()),
                   "warnings": warnings}),
        );
        return written.map(|()| r.failure.is_some() || unproved);
    }
    match &r.failure {
        Some((run, _)) if r.missed_by_search().is_some() => {
            println!(
                "{label}: {} found by random seed {} ({}), after the search ({reduction}) covered every schedule \
                 it saw in {} without one\n",
                run.outcome.verdict_text(),
                run.seed,
                count(r.cross_check.as_ref().and_then(|c| c.missed).map_or(0, |(_, p)| p).into(), "preemption"),
                count(r.executions, "execution")
            );
            print!("{}", run.outcome);
            println!(
                "(the reduction skipped this interleaving as equivalent to one it ran: a step shares state with \
                 another that the model does not declare, with sim::access, so the search proved nothing)"
            );
            println!("\n{}", replay_line(m, cfg, run));
        }
        Some((run, _)) if a.keep_going => {
            let covered = if r.exhausted {
                "every schedule covered".to_string()
            } else {
                format!("but {stopped} before every schedule was covered")
            };
            println!(
                "{label}: {} found by exhaustive search in {} ({reduction}), {covered}:\n",
                count(distinct.len() as u64, "distinct failure"),
                count(r.executions, "execution")
            );
            for d in &distinct {
                println!("  {}\n    replay: {}", d.signature, d.replay);
            }
            println!("\nThe first of them:\n");
            crate::output::print_outcome(run);
        }
        Some((run, _)) => {
            println!(
                "{label}: {} found by exhaustive search after {} ({reduction})\n",
                run.outcome.verdict_text(),
                count(r.executions, "execution")
            );
            crate::output::print_outcome(run);
            println!("\n{}", replay_line(m, cfg, run));
        }
        None => println!("{label}: {message}"),
    }
    if unproved {
        println!("--require-complete: no proof, as not {scope} was covered (exit 1)");
    }
    crate::output::print_warnings(&warnings);
    eprintln!("({elapsed:.2}s)");
    written.map(|()| r.failure.is_some() || unproved)
}

/// A distinct failure `explore --keep-going` found, as it lists it.
struct Distinct {
    signature: String,
    verdict: &'static str,
    schedule: Option<String>,
    replay: String,
}

/// What ended an exploration early, for its JSON: "interrupted" (Ctrl-C),
/// "time-budget", "max-executions", or null (exhausted, or a failure found).
fn stopped_json(r: &sim::scheduler::ExploreResult, keep_going: bool) -> serde_json::Value {
    match r.stopped_early {
        // A search for every failure ends when every schedule is covered.
        _ if r.exhausted || (r.failure.is_some() && r.unbounded_failure.is_none() && !keep_going) => json!(null),
        true => json!(crate::hunt_cmd::early_stop()),
        false => json!("max-executions"),
    }
}

/// `deadsim shrink`'s options.
pub struct ShrinkArgs {
    pub max_steps: u64,
    pub max_tries: u64,
    pub trace: Option<PathBuf>,
    pub render: Option<PathBuf>,
    /// How `render` draws the charts.
    pub figure: crate::render::Figure,
    pub json: bool,
}

/// `deadsim shrink`: the failing run with the fewest preemptions, then steps.
pub fn shrink_cmd(m: &dyn Model, cfg: &Configured, which: Which, a: ShrinkArgs) -> Result<bool, UsageError> {
    let ShrinkArgs { max_steps, max_tries, trace, render, figure, json: json_out } = a;
    let figure = &figure;
    let from_seed = match &which {
        Which::Seed(s, _) => Some(*s),
        Which::Schedule(_) => None,
    };
    // Named as `run` names it: the variant, and the seed and its strategy
    // (but the default) when there is one.
    let what = match &which {
        Which::Seed(seed, StrategyKind::Random) => format!("{} seed {seed}", model_label(m, cfg)),
        Which::Seed(seed, kind) => format!("{} seed {seed} (strategy {kind})", model_label(m, cfg)),
        Which::Schedule(_) => model_label(m, cfg),
    };
    let failing = which.run(m, cfg, max_steps)?;
    // A run that does not fail has nothing to shrink (exit 0); a step-limit
    // run is a failure (exit 1, as everywhere) that is not shrunk, as a
    // shorter run would not hit the limit. Either is reported as it is.
    let step_limit = matches!(failing.outcome, sim::Outcome::StepLimit { .. });
    if step_limit || !failing.outcome.is_failure() {
        let written = match &trace {
            _ if step_limit => write_files_before_report(
                render.as_deref().zip(Some(figure)),
                trace.as_deref(),
                failing.trace.as_ref().unwrap(),
            ),
            Some(path) => {
                crate::output::no_trace(path);
                Ok(())
            }
            None => Ok(()),
        };
        if !step_limit {
            if let Some(out) = &render {
                eprintln!("no failure, so no charts were drawn at {}", crate::output::path_line(out));
            }
        }
        if json_out {
            let mut out = run_json(m, cfg, &failing, None, "shrink");
            out["shrunk"] = json!(false);
            out["from_seed"] = json!(from_seed);
            crate::output::print_json(out);
        } else {
            if step_limit {
                println!(
                    "{what}: this run hits the step limit ({}), which is not shrunk: shrink needs a deadlock, \
                     an invariant violation or a panic",
                    count(failing.steps, "step")
                );
                println!("{}", replay_line(m, cfg, &failing));
            } else {
                println!("{what}: this run does not fail ({}); nothing to shrink", failing.outcome.summary());
            }
            // The lock-order findings its JSON gives, as `run` prints them.
            crate::output::print_warnings(&failing.lock_order.warnings());
        }
        return written.map(|()| step_limit);
    }
    // Ctrl-C ends the search with the smallest schedule found so far.
    crate::hunt_cmd::install_interrupt_handler();
    let shrunk = sim::scheduler::shrink_until(cfg, &failing, max_tries, max_steps, Some(&crate::hunt_cmd::INTERRUPTED))
        .ok_or_else(|| {
            UsageError("the failing run does not replay to the same failure; cannot shrink it".to_string())
        })?;
    let run = &shrunk.run;
    let shrank = shrunk.preemptions != shrunk.original_preemptions || run.steps != shrunk.original_steps;
    // The file first; one that cannot be written fails the command after
    // the report (see `output::write_files_before_report`).
    let written =
        write_files_before_report(render.as_deref().zip(Some(figure)), trace.as_deref(), run.trace.as_ref().unwrap());
    if json_out {
        let mut out = run_json(m, cfg, run, None, "shrink");
        out["shrunk"] = json!(shrank);
        out["interrupted"] = json!(shrunk.interrupted);
        out["from_seed"] = json!(from_seed);
        out["original"] = json!({"preemptions": shrunk.original_preemptions, "steps": shrunk.original_steps});
        out["preemptions"] = json!(shrunk.preemptions);
        out["tries"] = json!(shrunk.tries);
        out["fewest_preemptions_proved"] = json!(shrunk.fewest);
        out["fewest_preemptions_at_least"] = json!(shrunk.at_least);
        out["step_limit_hit"] = json!(shrunk.limit_hit);
        out["nondeterminism"] = json!(shrunk.nondeterminism);
        out["budget_spent"] = json!(shrunk.budget_spent);
        crate::output::print_json(out);
        return written.map(|()| true);
    }
    let from = format!(
        "{} and {}",
        count(shrunk.original_preemptions as u64, "preemption"),
        count(shrunk.original_steps, "step")
    );
    if shrunk.interrupted {
        println!("{what}: interrupted after {}; the smallest schedule so far:", count(shrunk.tries, "try"));
    }
    if !shrank {
        println!("{what}: not shrunk: still {from} after {}; same failure:\n", count(shrunk.tries, "try"));
    } else {
        println!(
            "{what}: shrunk from {from} to {} and {} ({}); same failure:\n",
            count(shrunk.preemptions as u64, "preemption"),
            count(run.steps, "step"),
            count(shrunk.tries, "try"),
        );
    }
    crate::output::print_outcome(run);
    println!("\n{}", replay_line(m, cfg, run));
    // What the exploration of the schedules with fewer preemptions showed.
    let cut_at = match shrunk.limit_hit {
        true => format!(
            " within {} steps (some of the schedules tried ran that long and were cut there)",
            shrunk.step_limit
        ),
        false => String::new(),
    };
    let (p, b) = (shrunk.preemptions, shrunk.at_least);
    // "... while the search tried the schedules with 1 preemption (none with
    // fewer fails this way), before it could show whether one with fewer than 4 does".
    // "fewer than 1 preemptions" is none.
    let fewer = if p == 1 { "0 preemptions".to_string() } else { format!("fewer than {p} preemptions") };
    let where_it_was = match (shrunk.explored, b) {
        (false, _) => {
            format!("it tried to shorten the run greedily, before the search of the schedules with {fewer} began")
        }
        (true, 0) if p == 1 => {
            "the search tried the schedules with 0 preemptions, before it could show whether one fails this way"
                .to_string()
        }
        (true, 0) => format!(
            "the search tried the schedules with 0 preemptions, before it could show whether one with {fewer} \
             fails this way"
        ),
        (true, b) => format!(
            "the search tried the schedules with {} (none with fewer fails this way{cut_at}), before it could show \
             whether one with fewer than {p} does",
            count(b as u64, "preemption")
        ),
    };
    if let Some(why) = &shrunk.nondeterminism {
        println!("The model did not replay the same way in the search of fewer preemptions ({why}): nothing is claimed of them.");
        crate::output::print_warnings(&run.lock_order.warnings());
        return written.map(|()| true);
    }
    // The search keeps the budget's last tries back to check a schedule it
    // finds: "4997 tries" beside "--max-tries 5000 ran out" says why.
    let ran_out = format!("The try budget (--max-tries {max_tries}) ran out");
    let kept = match max_tries.saturating_sub(shrunk.tries) {
        0 => String::new(),
        kept => format!(
            "\n({} of the {max_tries} ran: the search keeps the last {} back to check a schedule it finds.)",
            shrunk.tries,
            if kept == 1 { "one".to_string() } else { kept.to_string() }
        ),
    };
    match (shrunk.fewest, shrunk.budget_spent) {
        (true, spent) => {
            if p == 0 {
                println!("It has no preemption: no schedule has fewer.");
            } else {
                println!("No schedule with fewer preemptions fails this way{cut_at}: every one was tried.");
            }
            if spent {
                println!("{ran_out} before its steps were cut further: a larger one may shorten it.{kept}");
            }
        }
        (false, true) => println!("{ran_out} while {where_it_was}: a larger one may shrink it further.{kept}"),
        (false, false) if shrunk.interrupted => println!("Interrupted while {where_it_was}."),
        // The search and the run disagreed (see sim::scheduler::shrink): nothing is claimed.
        (false, false) => {}
    }
    // The lock-order findings of the shrunk run, which its JSON gives.
    crate::output::print_warnings(&run.lock_order.warnings());
    written.map(|()| true)
}

/// The verb after [`count`]: "1 random schedule agrees", "2 ... agree".
fn agree(n: u64) -> &'static str {
    if n == 1 {
        "agrees"
    } else {
        "agree"
    }
}
