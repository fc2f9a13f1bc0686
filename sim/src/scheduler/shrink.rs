//! Shrinking a failing schedule: fewer preemptions, then fewer steps, same failure.
//!
//! First, the failing run is replayed with each step's footprint, which
//! gives its happens-before order: a step comes after the task's previous
//! step and after every earlier step it conflicts with. Any order of the
//! steps that keeps it is the same run up to independent steps, so it fails
//! the same way; the shrinker picks the order with the fewest switches
//! (a task goes on while its next step is free to run). Spawns keep their
//! order too: tasks are numbered as they are spawned. Should the order
//! still miss a dependency and send a step to a task that is not enabled
//! there, the order is also taken as the run goes, each pick checked
//! against the tasks enabled; both are tried.
//!
//! Then, seeing a schedule as segments (task `t` runs `n` steps, then the
//! next segment's task), it greedily drops segments, joins two segments of
//! one task (moving its later steps up, or its earlier ones down, past the
//! segments between), and shortens segments, keeping
//! every change after which the run still fails with the same
//! [`crate::hunt::signature`] with fewer preemptions or steps. A switch away
//! from a task that could have gone on is a preemption. When a pass changes
//! nothing, the schedule is reordered again for the fewest switches (the
//! dropped segments leave independent steps in an order with more than
//! they need: ttrpc seed 0, 17 preemptions, then 3), and the greedy search
//! goes on from there while that makes it smaller.
//!
//! A greedy search can stop above the fewest preemptions, so the shrinker
//! then explores every schedule within fewer preemptions than it reached,
//! the bound raised from 0 (CHESS's iterative context bounding), with what
//! is left of its budget: the first bound with a schedule that fails the
//! same way is the fewest preemptions there are, and that schedule is
//! shrunk again for steps.
//!
//! ```
//! let model = sim::models::find("philosophers").unwrap().configure(&[]).unwrap();
//! let seed = (0..100).find(|&s| model.run(s, false).outcome.is_failure()).unwrap();
//! let failing = model.run(seed, true);
//! let shrunk = sim::scheduler::shrink(&model, &failing, 100_000).unwrap();
//! assert_eq!(sim::hunt::signature(&shrunk.run.outcome), sim::hunt::signature(&failing.outcome));
//! assert!(shrunk.preemptions <= shrunk.original_preemptions);
//! ```

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use super::{Footprint, Halt, ReplayStrategy, Schedule, Strategy};
use crate::hunt::signature;
use crate::models::Configured;
use crate::rt::{TaskId, TaskSet};
use crate::{Run, Sim};

/// A shrunk failing run.
#[derive(Debug)]
pub struct Shrunk {
    /// The run, recorded.
    pub run: Run,
    pub preemptions: u32,
    pub original_preemptions: u32,
    pub original_steps: u64,
    /// Candidate runs tried (explored schedules among them).
    pub tries: u64,
    /// True if the try budget ran out before the search was done: a larger
    /// one may shrink further.
    pub budget_spent: bool,
    /// True if the stop flag (Ctrl-C) ended the search: `run` is the best so far.
    pub interrupted: bool,
    /// True if `preemptions` is proved the fewest: every schedule with fewer
    /// (within `step_limit` steps) was explored and none fails the same way.
    pub fewest: bool,
    /// What the search proved of the fewest preemptions a schedule that
    /// fails this way needs: at least this many. Every schedule with fewer
    /// was explored and none fails so; `preemptions` when `fewest`, and
    /// below it when the budget or a stop ended the search.
    pub at_least: u32,
    /// The step limit of the shrinker's runs.
    pub step_limit: u64,
    /// True if a schedule the search explored ran into `step_limit` (and
    /// was cut there): what it proved holds for runs of up to that many steps.
    pub limit_hit: bool,
    /// True if the search of the schedules with fewer preemptions began
    /// (the budget or a stop may end the greedy phase before it).
    pub explored: bool,
    /// The model did not replay the same way in that search: nothing is
    /// claimed of fewer preemptions (`at_least` is 0).
    pub nondeterminism: Option<String>,
}

/// What a segment run did: the task of each step, the preemptions made, and
/// (when asked for) each step's footprint.
#[derive(Default)]
struct SegLog {
    ran: Vec<TaskId>,
    preemptions: u32,
    /// The data choices the run made, as it made them (a given choice out
    /// of range is taken as 0), while the given ones lasted.
    data_taken: Vec<u32>,
    footprints: Option<Vec<(TaskId, Footprint)>>,
}

/// Runs the tasks segment by segment; past the segments, keeps running the
/// last task while it can, else the lowest-numbered enabled one. Data
/// choices are taken in order from `data`.
struct Segments {
    segs: VecDeque<(TaskId, u64)>,
    data: VecDeque<u32>,
    log: Rc<RefCell<SegLog>>,
}

impl Strategy for Segments {
    fn pick_task(&mut self, enabled: &TaskSet, last: Option<TaskId>, _step: u64) -> TaskId {
        let t = loop {
            match self.segs.front_mut() {
                Some((t, n)) if *n > 0 && enabled.contains(*t) => {
                    *n -= 1;
                    break *t;
                }
                Some(_) => {
                    self.segs.pop_front();
                }
                None => break last.filter(|&l| enabled.contains(l)).unwrap_or_else(|| enabled.nth(0)),
            }
        };
        let mut log = self.log.borrow_mut();
        if last.is_some_and(|l| l != t && enabled.contains(l)) {
            log.preemptions += 1;
        }
        log.ran.push(t);
        t
    }

    fn pick_index(&mut self, n: usize) -> usize {
        let Some(k) = take_choice(&mut self.data, n) else { return 0 };
        self.log.borrow_mut().data_taken.push(k);
        k as usize
    }

    fn name(&self) -> String {
        "shrink".to_string()
    }

    fn wants_footprints(&self) -> bool {
        self.log.borrow().footprints.is_some()
    }

    fn step_done(&mut self, task: TaskId, footprint: &Footprint) {
        if let Some(f) = self.log.borrow_mut().footprints.as_mut() {
            f.push((task, footprint.clone()));
        }
    }
}

/// Segments (task, length) of a per-step task list.
fn segments_of(ran: &[TaskId]) -> Vec<(TaskId, u64)> {
    let mut out: Vec<(TaskId, u64)> = Vec::new();
    for &t in ran {
        match out.last_mut() {
            Some((u, n)) if *u == t => *n += 1,
            _ => out.push((t, 1)),
        }
    }
    out
}

/// Runs `model` segment by segment.
fn run_segments(model: &Configured, sim: Sim, segs: &[(TaskId, u64)], data: &[u32], footprints: bool) -> (Run, SegLog) {
    let log = Rc::new(RefCell::new(SegLog { footprints: footprints.then(Vec::new), ..SegLog::default() }));
    let strategy =
        Segments { segs: segs.iter().copied().collect(), data: data.iter().copied().collect(), log: log.clone() };
    let run = model.run_with(sim.strategy(Box::new(strategy)));
    let log = std::mem::take(&mut *log.borrow_mut());
    (run, log)
}

/// The smallest failing schedule found so far: fewest preemptions, then fewest steps.
#[derive(Clone)]
struct Best {
    segs: Vec<(TaskId, u64)>,
    /// The data choices the segments run with, in order.
    data: Rc<[u32]>,
    /// The data choices its run made of them (see [`SegLog::data_taken`]).
    taken: Rc<[u32]>,
    preemptions: u32,
    steps: u64,
}

/// Shrinks `failing` (a run of `model`, recorded) within `max_tries` candidate runs.
/// `None` when there is nothing to shrink from: `failing` was run without
/// recording (no schedule to start from), or its schedule does not replay
/// on `model` to the same outcome, as for a run stopped at a step limit
/// below [`crate::DEFAULT_MAX_STEPS`]: shrink that with [`shrink_until`]
/// and its limit.
pub fn shrink(model: &Configured, failing: &Run, max_tries: u64) -> Option<Shrunk> {
    shrink_until(model, failing, max_tries, crate::DEFAULT_MAX_STEPS, None)
}

/// [`shrink`], with every try stopped at `max_steps` steps (the step limit
/// the failing run was found within: `deadsim shrink --max-steps`), or
/// sooner, at four times the failing run's steps and 1,000 more; never
/// before the failing run's own length, so a failing run longer than
/// `max_steps` is still tried whole. Ended early (with the best schedule found so far) once
/// `stop` is set: Ctrl-C in `deadsim shrink`.
pub fn shrink_until(
    model: &Configured,
    failing: &Run,
    max_tries: u64,
    max_steps: u64,
    stop: Option<&'static std::sync::atomic::AtomicBool>,
) -> Option<Shrunk> {
    let stopped = || stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
    // The try budget as every phase sees it: spent, or the search was stopped.
    let spent = |tries: u64| tries >= max_tries || stopped();
    let trace = failing.trace.as_ref()?;
    let target = signature(&failing.outcome);
    // The data choices, separated from the task picks by replaying the schedule.
    let data: Rc<[u32]> = split_data_choices(model, &trace.meta.replay)?.into();
    // Room for a try to run longer than the failing run (a schedule with
    // fewer preemptions may take more steps), within the caller's limit.
    let max_steps = (failing.steps.max(1) * 4 + 1000).min(max_steps.max(failing.steps));
    let try_run = |segs: &[(TaskId, u64)], data: &[u32]| -> (Run, SegLog) {
        run_segments(model, Sim::new(failing.seed).max_steps(max_steps), segs, data, false)
    };
    let (first, log) = try_run(&segments_of(&trace.schedule), &data);
    let (ran, p0) = (log.ran, log.preemptions);
    if signature(&first.outcome) != target {
        return None; // the schedule does not replay to the same failure
    }
    let mut best = Best {
        segs: segments_of(&ran),
        data: data.clone(),
        taken: log.data_taken.into(),
        preemptions: p0,
        steps: first.steps,
    };
    let mut tries = 1u64;
    // The same run, its independent steps reordered for the fewest switches.
    if !spent(tries) {
        for order in linearize(model, &ran, &data).unwrap_or_default() {
            if spent(tries) {
                break;
            }
            tries += 1;
            let (run, log) = try_run(&segments_of(&order), &data);
            if signature(&run.outcome) == target && log.preemptions <= best.preemptions {
                best = Best {
                    segs: segments_of(&log.ran),
                    data: data.clone(),
                    taken: log.data_taken.into(),
                    preemptions: log.preemptions,
                    steps: run.steps,
                };
            }
        }
    }
    // A candidate (segments, with their data choices) replaces the best if
    // it fails the same way and is smaller.
    let offer = |best: &mut Best, cand: &[(TaskId, u64)], data: &Rc<[u32]>| -> bool {
        let (run, log) = try_run(cand, data);
        let p = log.preemptions;
        let smaller = p < best.preemptions || (p == best.preemptions && run.steps < best.steps);
        if signature(&run.outcome) == target && smaller {
            *best = Best {
                segs: segments_of(&log.ran),
                data: data.clone(),
                taken: log.data_taken.into(),
                preemptions: p,
                steps: run.steps,
            };
            return true;
        }
        false
    };
    // The best schedule's steps reordered again for the fewest switches:
    // the greedy search drops and shortens segments, which leaves steps that
    // are independent of their neighbours in an order with more switches
    // than they need (ttrpc seed 0: 17 preemptions, 3 once reordered).
    // Whether it made the best smaller; `None` if the budget was spent.
    let relinearize = |best: &mut Best, tries: &mut u64| -> Option<bool> {
        if spent(*tries) {
            return None;
        }
        let ran: Vec<TaskId> = best.segs.iter().flat_map(|&(t, n)| std::iter::repeat_n(t, n as usize)).collect();
        let data = best.data.clone();
        let mut took = false;
        for order in linearize(model, &ran, &data).unwrap_or_default() {
            if spent(*tries) {
                return None;
            }
            *tries += 1;
            took |= offer(best, &segments_of(&order), &data);
        }
        Some(took)
    };
    // Greedy passes until one changes nothing, then the reordering; again
    // while the reordering makes the best smaller. (Reordering after every
    // pass, or keeping only the data choices the best's run took, did
    // better on some of 36 shrinks and worse on others; this did better on
    // 12 and worse on none.) Returns false if the budget ended it first.
    let settle = |best: &mut Best, tries: &mut u64, joins_last: bool| -> bool {
        loop {
            let Some(improved) = greedy_pass(best, tries, &spent, &offer, joins_last) else { return false };
            if improved {
                continue;
            }
            let Some(reordered) = relinearize(best, tries) else { return false };
            if !reordered {
                return true;
            }
        }
    };
    // Where the greedy search settles depends on the order of its moves:
    // joins before the shortening, or after. Both are run from the same
    // start and the smaller kept. (Over 54 shrinks of ten model variants,
    // 107 preemptions in all joining first, 100 joining last, 95 the
    // smaller of the two.) Returns false if the budget ended it first.
    let settle = |best: &mut Best, tries: &mut u64| -> bool {
        let start = best.clone();
        if !settle(best, tries, false) {
            return false;
        }
        let mut other = start;
        let done = settle(&mut other, tries, true);
        if (other.preemptions, other.steps) < (best.preemptions, best.steps) {
            *best = other;
        }
        done
    };
    // Whether the budget cut a phase short, so that a larger one may do better.
    let mut budget_spent = !settle(&mut best, &mut tries);
    // Settled, the best still carries the failing run's data choices past
    // those its own run makes: a longer candidate takes them, at points
    // they were not made for. With its run's own choices only (past them a
    // candidate takes the first option of each), as a shrink of the best's
    // schedule string would start, the search goes on (flink,
    // self-assign-clear, pct seed 0: 12 preemptions, then 11). Only a
    // smaller run replaces the best. (The same run: each choice it took is
    // where it took it.)
    if !budget_spent && best.taken != best.data {
        best.data = best.taken.clone();
        budget_spent = !settle(&mut best, &mut tries);
    }
    // Fewer preemptions than the greedy search reached, if any schedule has them.
    let mut fewest = best.preemptions == 0;
    // One pass per bound, each over every schedule within it, until one
    // shows the failure (the bound below it showed none) or the budget ends.
    let mut bound = 0;
    let (mut limit_hit, mut explored, mut nondeterminism) = (false, false, None);
    // Each pass explores the subtrees below the branches the pass before
    // kept out (see `dfs::explore`): every schedule runs once.
    let mut roots: Option<super::roots::Roots> = None;
    // Three runs are kept back for a schedule it finds (see below).
    'bounds: while bound < best.preemptions {
        let mut r = super::dfs::ExploreResult::nothing_yet(Some(bound));
        let mut next = super::roots::Roots::default();
        let mut cut = false;
        let this_pass: Box<dyn Iterator<Item = Vec<u32>>> = match &roots {
            None => Box::new(std::iter::once(Vec::new())),
            Some(r) => Box::new(r.iter()),
        };
        for root in this_pass {
            if spent(tries + 3) {
                budget_spent = true;
                break 'bounds;
            }
            let cfg = super::ExploreConfig {
                preemption_bound: Some(bound),
                reduction: false,
                max_executions: max_tries - tries - 3,
                max_steps,
                keep_going: true,
                stop_at: Some(target.clone()),
                stop,
                ..Default::default()
            };
            explored = true;
            let (pass, pass_cut, deferred) = super::dfs::explore_pass(model, &cfg, false, root, true);
            tries += pass.executions;
            cut |= pass_cut;
            next.append(deferred);
            r.exhausted = pass.exhausted;
            r.nondeterminism = pass.nondeterminism;
            for (sig, choices) in pass.distinct {
                limit_hit |= sig.starts_with("step-limit:");
                r.distinct.entry(sig).or_insert(choices);
            }
            if r.nondeterminism.is_some() || r.distinct.contains_key(&target) || !r.exhausted {
                break;
            }
        }
        roots = Some(next);
        if r.nondeterminism.is_some() {
            nondeterminism = r.nondeterminism;
            break;
        }
        match r.distinct.get(&target) {
            Some(choices) => {
                // Its schedule as segments: the same run, then shrunk for
                // steps. Replaying it, splitting its data choices out and
                // trying it are three runs.
                tries += 3;
                let replayed = model.run_with(
                    Sim::new(failing.seed)
                        .record(true)
                        .max_steps(max_steps)
                        .strategy(Box::new(ReplayStrategy::new(choices.clone()))),
                );
                let explored = replayed.trace.as_ref().and_then(|t| {
                    Some((segments_of(&t.schedule), Rc::<[u32]>::from(split_data_choices(model, &t.meta.replay)?)))
                });
                if let Some((segs, data)) = explored {
                    let before = best.preemptions;
                    if offer(&mut best, &segs, &data) && best.preemptions < before {
                        // Every schedule with fewer preemptions was explored in the passes before.
                        fewest = true;
                        budget_spent |= !settle(&mut best, &mut tries);
                    }
                }
                break;
            }
            // Stopped (Ctrl-C) in this pass: nothing is claimed of its bound.
            None if !r.exhausted => {
                budget_spent = true;
                break;
            }
            // No schedule needs more preemptions than this bound, yet the
            // failing one did: the search and the run disagree, so nothing
            // is claimed.
            None if !cut => break,
            None => bound += 1,
        }
    }
    // Every pass below the best's preemptions was explored and none failed this way.
    fewest |= bound == best.preemptions;
    // Record the best one.
    let (run, _) =
        run_segments(model, Sim::new(failing.seed).record(true).max_steps(max_steps), &best.segs, &best.data, false);
    Some(Shrunk {
        run,
        preemptions: best.preemptions,
        original_preemptions: p0,
        original_steps: failing.steps,
        tries,
        // What a stop cut short is not the budget's doing.
        budget_spent: budget_spent && !stopped(),
        interrupted: stopped(),
        fewest,
        // The passes below `bound` were explored whole and showed no such
        // run; a model that did not replay the same way proves nothing.
        at_least: match (fewest, &nondeterminism) {
            (_, Some(_)) => 0,
            (true, None) => best.preemptions,
            (false, None) => bound.min(best.preemptions),
        },
        step_limit: max_steps,
        limit_hit,
        explored,
        nondeterminism,
    })
}

/// Offers a candidate (segments, with their data choices) to the best:
/// true if it took it.
type Offer<'a> = dyn Fn(&mut Best, &[(TaskId, u64)], &Rc<[u32]>) -> bool + 'a;

/// One pass over the segments of `best`: drops each, then joins each with
/// a later one of its task and shortens each, in either order, keeping
/// every change `offer` takes. Returns whether one was taken, or `None` if
/// the budget (`spent`) ended the pass.
fn greedy_pass(
    best: &mut Best,
    tries: &mut u64,
    spent: &dyn Fn(u64) -> bool,
    offer: &Offer,
    joins_last: bool,
) -> Option<bool> {
    let dropped = drop_pass(best, tries, spent, offer)?;
    let (first, second): (Pass, Pass) = if joins_last { (shorten_pass, join_pass) } else { (join_pass, shorten_pass) };
    let a = first(best, tries, spent, offer)?;
    let b = second(best, tries, spent, offer)?;
    Some(dropped | a | b)
}

/// A move of [`greedy_pass`].
type Pass = fn(&mut Best, &mut u64, &dyn Fn(u64) -> bool, &Offer) -> Option<bool>;

/// Drops whole segments.
fn drop_pass(best: &mut Best, tries: &mut u64, spent: &dyn Fn(u64) -> bool, offer: &Offer) -> Option<bool> {
    let mut improved = false;
    // Drop whole segments, last first (late switches are the cheapest to lose).
    let mut k = best.segs.len();
    while k > 1 {
        if spent(*tries) {
            return None;
        }
        k -= 1;
        let mut cand = best.segs.clone();
        cand.remove(k);
        *tries += 1;
        let data = best.data.clone();
        if offer(best, &cand, &data) {
            improved = true;
            k = k.min(best.segs.len());
        }
    }
    Some(improved)
}

/// Joins two segments of one task.
fn join_pass(best: &mut Best, tries: &mut u64, spent: &dyn Fn(u64) -> bool, offer: &Offer) -> Option<bool> {
    let mut improved = false;
    // Two segments of one task joined, with what ran between them
    // before or after: its later steps pulled up to its earlier ones, or
    // the earlier pushed down to the later. Dropping and shortening only
    // take steps away; a preemption whose two sides both matter needs
    // steps moved. Each later segment of the task is tried, nearest first,
    // until a join is taken. (Over 54 shrinks of ten model variants, 280
    // preemptions in all; joining the next segment only, 151; any, 107.
    // Flink, self-assign-clear, random seed 7: 32, then 29, then 4.)
    let mut k = best.segs.len();
    while k > 1 {
        k -= 1;
        let t = best.segs[k - 1].0;
        let mut j = k + 1;
        'joins: while j < best.segs.len() {
            if best.segs[j].0 == t {
                for pull_up in [true, false] {
                    if spent(*tries) {
                        return None;
                    }
                    let mut cand = best.segs.clone();
                    let moved = if pull_up { cand.remove(j) } else { cand.remove(k - 1) };
                    let into = if pull_up { k - 1 } else { j - 1 };
                    cand[into].1 += moved.1;
                    *tries += 1;
                    let data = best.data.clone();
                    if offer(best, &cand, &data) {
                        improved = true;
                        k = k.min(best.segs.len());
                        break 'joins;
                    }
                }
            }
            j += 1;
        }
    }
    Some(improved)
}

/// Shortens segments.
fn shorten_pass(best: &mut Best, tries: &mut u64, spent: &dyn Fn(u64) -> bool, offer: &Offer) -> Option<bool> {
    let mut improved = false;
    // Shorter segments: each one's lengths from 1 up, the first
    // that still fails taken. Halving alone misses most: in a loop the
    // lengths that fail come once a loop body (abba: 2, 6 and 10 steps
    // of T1 before T2 runs, not 5).
    let mut k = 0;
    while k < best.segs.len() {
        let n = best.segs[k].1;
        for len in 1..n {
            if spent(*tries) {
                return None;
            }
            let mut cand = best.segs.clone();
            cand[k].1 = len;
            *tries += 1;
            let data = best.data.clone();
            if offer(best, &cand, &data) {
                improved = true;
                break;
            }
        }
        k += 1;
    }
    Some(improved)
}

/// Replays `ran` (a task per step) with footprints, and returns orders of
/// its steps (a task per step) that keep their happens-before order with
/// the fewest switches between tasks: the one computed ahead (if there is
/// one), then the one taken as a run goes ([`Online`]).
fn linearize(model: &Configured, ran: &[TaskId], data: &[u32]) -> Option<Vec<Vec<TaskId>>> {
    let (_, log) = run_segments(model, Sim::new(0).max_steps(ran.len() as u64 + 10), &segments_of(ran), data, true);
    let steps = log.footprints.unwrap_or_default();
    let n = steps.len();
    if n == 0 {
        return None;
    }
    // Predecessors of each step: the task's previous step, every earlier
    // conflicting step, and the step that spawned tasks before it if it
    // spawns one: tasks are numbered in the order they are spawned, so two
    // spawns that swapped would swap the numbers, and a schedule names
    // tasks by number (ttrpc seed 1: serverConn.run's spawn moved before
    // Client.run's gave its goroutine the other's number).
    let ids: std::collections::BTreeSet<TaskId> = steps.iter().map(|(t, _)| *t).collect();
    let mut touched: std::collections::BTreeSet<TaskId> = Default::default();
    let mut last_spawn: Option<usize> = None;
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut last_of: std::collections::BTreeMap<TaskId, usize> = Default::default();
    for j in 0..n {
        let (tj, fj) = &steps[j];
        if let Some(&p) = last_of.get(tj) {
            preds[j].push(p);
        }
        // A step spawns a task if it is the first to touch its pseudo-resource.
        let mut spawns = false;
        for r in fj.resources.iter() {
            let u = u32::MAX - r;
            spawns |= u != *tj && ids.contains(&u) && touched.insert(u);
        }
        if spawns {
            preds[j].extend(last_spawn);
            last_spawn = Some(j);
        }
        for (i, (ti, fi)) in steps[..j].iter().enumerate() {
            if ti != tj && fi.conflicts(fj) {
                preds[j].push(i);
            }
        }
        last_of.insert(*tj, j);
    }
    // Each task's steps in order; schedule greedily, staying on a task while we can.
    let mut per_task: Queues = Default::default();
    for (j, (t, _)) in steps.iter().enumerate() {
        per_task.entry(*t).or_default().push_back(j);
    }
    let tasks: Vec<TaskId> = steps.iter().map(|(t, _)| *t).collect();
    // The order computed ahead, from the run's happens-before alone.
    let ahead = offline_order(&tasks, &preds, per_task.clone());
    // And taken as the run goes, checking each pick against what is
    // enabled: a dependency the footprints miss sends the order computed
    // ahead to a task that cannot run there, and the run elsewhere.
    let ran = Rc::new(RefCell::new(Vec::new()));
    let online = Online {
        tasks,
        preds,
        per_task,
        done: vec![false; n],
        current: None,
        data: data.iter().copied().collect(),
        ran: ran.clone(),
    };
    model.run_with(Sim::new(0).max_steps(2 * n as u64 + 10).strategy(Box::new(online)));
    let taken = std::mem::take(&mut *ran.borrow_mut());
    Some([ahead, Some(taken)].into_iter().flatten().collect())
}

/// Each task's steps (indices into the run), in order.
type Queues = std::collections::BTreeMap<TaskId, std::collections::VecDeque<usize>>;

/// The next task of a linearized order, among those `may_run` allows whose
/// next step has all its predecessors `done`: `current` if it is one,
/// else the one that can go on longest without waiting for another task.
fn next_in_order(
    current: Option<TaskId>,
    per_task: &Queues,
    tasks: &[TaskId],
    preds: &[Vec<usize>],
    done: &[bool],
    may_run: impl Fn(TaskId) -> bool,
) -> Option<TaskId> {
    let ready = |t: TaskId| {
        may_run(t) && per_task.get(&t).and_then(|q| q.front()).is_some_and(|&j| preds[j].iter().all(|&p| done[p]))
    };
    if let Some(c) = current.filter(|&c| ready(c)) {
        return Some(c);
    }
    let mut best: Option<(usize, TaskId)> = None;
    for (&t, q) in per_task {
        if !ready(t) {
            continue;
        }
        let run_len = q.iter().take_while(|&&j| preds[j].iter().all(|&p| done[p] || tasks[p] == t)).count();
        if best.is_none_or(|(l, _)| run_len > l) {
            best = Some((run_len, t));
        }
    }
    best.map(|(_, t)| t)
}

/// [`linearize`]'s order computed from the happens-before order alone.
fn offline_order(tasks: &[TaskId], preds: &[Vec<usize>], mut per_task: Queues) -> Option<Vec<TaskId>> {
    let n = tasks.len();
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut current: Option<TaskId> = None;
    while order.len() < n {
        let t = next_in_order(current, &per_task, tasks, preds, &done, |_| true)?;
        let j = per_task.get_mut(&t)?.pop_front()?;
        done[j] = true;
        order.push(t);
        current = Some(t);
    }
    Some(order)
}

/// The order of [`linearize`], taken step by step: [`next_in_order`] among
/// the enabled tasks, else the enabled task whose next step came first in
/// the run.
struct Online {
    tasks: Vec<TaskId>,
    preds: Vec<Vec<usize>>,
    per_task: Queues,
    done: Vec<bool>,
    current: Option<TaskId>,
    data: VecDeque<u32>,
    ran: Rc<RefCell<Vec<TaskId>>>,
}

impl Strategy for Online {
    fn pick_task(&mut self, enabled: &TaskSet, _last: Option<TaskId>, _step: u64) -> TaskId {
        let next =
            next_in_order(self.current, &self.per_task, &self.tasks, &self.preds, &self.done, |t| enabled.contains(t));
        let t = next.unwrap_or_else(|| {
            self.per_task
                .iter()
                .filter(|(&t, q)| enabled.contains(t) && !q.is_empty())
                .min_by_key(|(_, q)| q.front().copied())
                .map(|(&t, _)| t)
                .unwrap_or_else(|| enabled.nth(0))
        });
        if let Some(j) = self.per_task.get_mut(&t).and_then(|q| q.pop_front()) {
            self.done[j] = true;
        }
        self.current = Some(t);
        self.ran.borrow_mut().push(t);
        t
    }

    fn pick_index(&mut self, n: usize) -> usize {
        take_choice(&mut self.data, n).unwrap_or(0) as usize
    }

    fn name(&self) -> String {
        "shrink".to_string()
    }
}

/// The next of the data choices given, for a choice of `n` options (one out
/// of range is taken as 0); `None` once they are used up.
fn take_choice(data: &mut VecDeque<u32>, n: usize) -> Option<u32> {
    data.pop_front().map(|k| if (k as usize) < n { k } else { 0 })
}

/// The data choices of a schedule string, found by replaying it and noting
/// which choices were data choices.
fn split_data_choices(model: &Configured, schedule: &str) -> Option<Vec<u32>> {
    let sched = Schedule::parse(schedule).ok()?;
    let log = Rc::new(RefCell::new(Vec::new()));
    /// Replays a schedule, noting which of its choices were data choices.
    struct Split(ReplayStrategy, Rc<RefCell<Vec<u32>>>);
    impl Strategy for Split {
        fn pick_task(&mut self, enabled: &TaskSet, last: Option<TaskId>, step: u64) -> TaskId {
            self.0.pick_task(enabled, last, step)
        }
        fn pick_index(&mut self, n: usize) -> usize {
            let k = self.0.pick_index(n);
            self.1.borrow_mut().push(k as u32);
            k
        }
        fn name(&self) -> String {
            "split".to_string()
        }
        fn may_halt(&self) -> bool {
            true
        }
        fn halt(&mut self) -> Option<Halt> {
            self.0.halt()
        }
    }
    model.run_with(Sim::new(0).strategy(Box::new(Split(ReplayStrategy::new(sched.choices), log.clone()))));
    let v = log.borrow().clone();
    Some(v)
}
