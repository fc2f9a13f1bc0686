//! Exhaustive exploration: depth-first search over every schedule, with
//! dynamic partial-order reduction (Flanagan and Godefroid, POPL 2005, with
//! sleep sets), optionally within a preemption bound raised from 0 until a
//! failure shows or the bound is reached (CHESS's iterative context
//! bounding, Musuvathi and Qadeer, PLDI 2007).
//!
//! Within a bound the reduction is bounded partial-order reduction (Coons,
//! Musuvathi and McKinley, OOPSLA 2013), as loom does it: no sleep sets
//! (which equivalent orders a sleeper stands for depends on preemptions the
//! bound counts), a race's branch taken only within the bound, and the
//! racing task also tried at the last context switch before the race, where
//! taking it may cost no preemption more. Each bound is a pass of its own,
//! and the search without a bound takes turns with the passes, half as
//! long as they run, for where the bound does not bind. Without reduction, a bound gives plain DFS, and each pass runs only the
//! schedules the pass before kept out.
//!
//! Each execution replays the prefix of the previous one up to its deepest
//! open branch, then takes a new choice there. With reduction, two steps of
//! different tasks are dependent when they touch a common resource; after
//! each execution every race (the last dependent step of another task that
//! does not happen before a step) adds the racing task as a branch where
//! the earlier step was taken, and sleep sets keep the search from
//! re-running an interleaving of independent steps. As in loom, races are
//! also checked before every step for each task's known next access (the
//! resource a blocked task waits on, the lock an enabled task is about to
//! take), so a task disabled by a lock still gets its turn at taking it first.
//!
//! ```
//! use sim::scheduler::{explore, ExploreConfig};
//! let model = sim::models::find("abba").unwrap().configure(&[("fixed".into(), "true".into())]).unwrap();
//! let r = explore(&model, &ExploreConfig::default());
//! assert!(r.failure.is_none() && r.exhausted);
//! ```

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::roots::{Cuts, Roots};
use super::touches::{Touch, Touches};
use super::vclock::{ClockId, ClockPool, VClock};
use super::{Footprint, Halt, ReplayStrategy, Strategy};
use crate::models::Configured;
use crate::rt::{FrozenTaskSet, TaskId, TaskSet};
use crate::{Run, Sim};

/// [`ExploreConfig::max_executions`] unless set otherwise.
pub const DEFAULT_MAX_EXECUTIONS: u64 = 1_000_000;

/// How to explore: what [`explore`] covers, and when it stops.
/// `ExploreConfig::default()` is every schedule, with reduction, within
/// [`DEFAULT_MAX_EXECUTIONS`].
#[derive(Clone, Debug)]
pub struct ExploreConfig {
    /// Only schedules with at most this many preemptions.
    pub preemption_bound: Option<u32>,
    /// Dynamic partial-order reduction (bounded, without sleep sets, with a
    /// preemption bound).
    pub reduction: bool,
    /// Stop after this many executions (the result then says it is not exhausted).
    pub max_executions: u64,
    pub max_steps: u64,
    /// Go on after a failure and collect every distinct one (by
    /// [`crate::hunt::signature`]) instead of stopping at the first.
    pub keep_going: bool,
    /// With `keep_going`: stop at the first failure with this signature
    /// (the one a shrink looks for), collected with the others.
    pub stop_at: Option<String>,
    /// Stop taking executions after this much wall-clock time (the result
    /// then says it stopped early); the first execution runs whatever the
    /// budget. Only when to stop depends on the clock:
    /// the executions run are the same ones in the same order.
    pub time_budget: Option<Duration>,
    /// Stop taking executions once this is set (Ctrl-C).
    pub stop: Option<&'static AtomicBool>,
    /// Incremented once per execution (for a progress line).
    pub progress: Option<Arc<AtomicU64>>,
    /// Check a proof against random schedules (see [`explore`]); on by
    /// default. A benchmark of the search alone turns it off.
    pub cross_check: bool,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            preemption_bound: None,
            reduction: true,
            max_executions: DEFAULT_MAX_EXECUTIONS,
            max_steps: crate::DEFAULT_MAX_STEPS,
            keep_going: false,
            stop_at: None,
            time_budget: None,
            stop: None,
            progress: None,
            cross_check: true,
        }
    }
}

/// What an exploration found.
#[derive(Debug)]
pub struct ExploreResult {
    /// Executions run, pruned ones included.
    pub executions: u64,
    /// Executions stopped early as redundant (sleep-set blocked).
    pub pruned: u64,
    /// True if every schedule (within the bound) was covered.
    pub exhausted: bool,
    /// The first failing run, recorded, and its schedule's choices.
    pub failure: Option<(Run, Vec<u32>)>,
    /// A model that does not replay the same way from the same choices.
    pub nondeterminism: Option<String>,
    /// With `keep_going`: every distinct failure's signature, with the
    /// choices of the first schedule that showed it, in signature order.
    pub distinct: std::collections::BTreeMap<String, Vec<u32>>,
    /// With a preemption bound: the bound of the last pass (see
    /// [`explore`]); for a failure, the fewest preemptions that fail
    /// (unless [`ExploreResult::unbounded_failure`] says otherwise, or the
    /// failure is the one the random schedules found after the search
    /// covered every schedule it saw: [`ExploreResult::missed_by_search`],
    /// whose own preemptions are in [`CrossCheck::missed`]).
    pub bound: Option<u32>,
    /// True if the time budget or the stop flag ended the exploration
    /// before it was exhausted (see [`ExploreConfig::time_budget`]).
    pub stopped_early: bool,
    /// The lock-order facts of every execution run, merged in execution
    /// order (first-seen sites kept): what `hunt` reports over its seeds.
    pub lock_order: crate::lockorder::LockOrder,
    /// With a bound and reduction: true if the search without a bound, run
    /// beside the passes, covered every schedule before they did (see [`explore`]).
    pub unbounded_covered: bool,
    /// Set when [`ExploreResult::failure`] was found by the search without a
    /// bound, to the failure's own preemptions, in two cases. The
    /// exploration stopped (its budget, its time budget or a stop) before
    /// the passes showed that none fails with fewer: [`ExploreResult::bound`]
    /// is then the pass that was cut short, not the failure's. Or the
    /// failure has more preemptions than the bound asked for, and the
    /// passes showed that every schedule within that bound completes
    /// ([`ExploreResult::exhausted`] is then true).
    pub unbounded_failure: Option<u32>,
    /// With a bound and reduction: how many of [`ExploreResult::executions`]
    /// the search without a bound ran (the rest are the passes').
    pub unbounded_executions: u64,
    /// The check of a proof against random schedules (see [`explore`]);
    /// none where there was no proof to check.
    pub cross_check: Option<CrossCheck>,
    /// True if reduction was asked for but the model sets timers or reads
    /// the virtual clock, so the exploration ran without it (see [`explore`]).
    pub timed: bool,
}

/// How [`explore`] checked a proof against random seeds `0..`[`CROSS_CHECK_SEEDS`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrossCheck {
    /// Seeds run (from 0): all of them, fewer if the stop flag cut the
    /// check short or a seed failed.
    pub seeds: u64,
    /// Of those, the seeds whose schedules count: those within `bound`
    /// (all without one).
    pub within: u64,
    /// The preemptions a random schedule may have to count against a proof
    /// within a bound; none where the proof is of every schedule.
    pub bound: Option<u32>,
    /// A seed whose schedule fails though the reduced search covered every
    /// schedule it saw without a failure, with its preemptions: the search
    /// did not see what two steps share (a racy read or write not declared
    /// with [`crate::access`]), so it proved nothing.
    /// [`ExploreResult::failure`] is then that seed's run, and
    /// [`ExploreResult::exhausted`] false.
    pub missed: Option<(u64, u32)>,
}

impl ExploreResult {
    /// The seed of [`CrossCheck::missed`], if the check contradicted the proof.
    pub fn missed_by_search(&self) -> Option<u64> {
        self.cross_check.as_ref()?.missed.map(|(seed, _)| seed)
    }
}

impl ExploreResult {
    /// Adds one pass of a bounded exploration to the total: its counts, its
    /// distinct failures (a lower bound's schedule, come first, is kept), and
    /// how it ended. True if the exploration ends with it: a failure, a model
    /// that does not replay, or a pass cut short.
    fn absorb(&mut self, pass: ExploreResult) -> bool {
        self.executions += pass.executions;
        self.pruned += pass.pruned;
        self.stopped_early = pass.stopped_early;
        self.lock_order.merge(&pass.lock_order);
        for (sig, choices) in pass.distinct {
            self.distinct.entry(sig).or_insert(choices);
        }
        let ends = pass.nondeterminism.is_some() || pass.failure.is_some() || !pass.exhausted;
        if ends {
            self.nondeterminism = pass.nondeterminism;
            self.failure = pass.failure;
        }
        ends
    }

    /// No execution run yet.
    pub(super) fn nothing_yet(bound: Option<u32>) -> ExploreResult {
        ExploreResult {
            executions: 0,
            pruned: 0,
            exhausted: false,
            failure: None,
            nondeterminism: None,
            distinct: Default::default(),
            bound,
            stopped_early: false,
            lock_order: Default::default(),
            unbounded_covered: false,
            unbounded_failure: None,
            unbounded_executions: 0,
            cross_check: None,
            timed: false,
        }
    }
}

enum Node {
    Task {
        enabled: FrozenTaskSet,
        last: Option<TaskId>,
        chosen: TaskId,
        /// Tasks still to explore here (all of `enabled` once `all_enabled`).
        backtrack: TaskSet,
        /// Tasks explored (or being explored) here.
        done: TaskSet,
        /// True once a race with a task not enabled here asked for every
        /// enabled task: `backtrack` is then all of `enabled`.
        all_enabled: bool,
        /// Tasks asleep here, with the step each would take.
        sleep: Vec<(TaskId, Footprint)>,
        /// The steps tasks took here, learnt from the executions so far.
        taken: Vec<(TaskId, Footprint)>,
        preemptions: u32,
    },
    Data {
        n: usize,
        chosen: usize,
    },
}

/// One step of the current execution.
struct StepRec {
    task: TaskId,
    node: usize,
    /// This step's number within its task (1-based).
    local: u32,
}

struct Search {
    cfg: ExploreConfig,
    nodes: Vec<Node>,
    /// Position of the next node in the current execution.
    pos: usize,
    /// The steps of the current execution.
    steps: Vec<StepRec>,
    /// The footprint of the last step.
    last_fp: Footprint,
    /// Each task's clock after its last step (`None` before its first).
    task_clock: Vec<Option<ClockId>>,
    /// The clocks `task_clock` and `touches` name.
    clocks: ClockPool,
    /// The last steps that touched each resource.
    touches: Touches,
    halt: Option<Halt>,
    error: Option<String>,
    /// True once the bound kept a schedule out: a higher bound has more to see.
    cut: bool,
    /// Set when the stop flag (Ctrl-C) cut the current execution short: a
    /// long execution of a large model does not make Ctrl-C wait for it.
    interrupted: bool,
    /// The choice at each node of a subtree's root path (a task id or a
    /// data choice): the executions of this pass start with it, and no
    /// branch above its end is taken (see [`explore`]).
    forced: Vec<u32>,
    /// When collecting: each branch the bound kept out, as the choices of
    /// its node's path and then the branch: the roots of the next pass.
    deferred: Option<Roots>,
    /// The branches the bound kept out in the current execution, as (depth,
    /// choice): added to `deferred` with the execution's path when it ends.
    cuts: Cuts,
    /// The tasks cut at the node being made (reused from node to node).
    cut_here: TaskSet,
    /// The emptied sleep and taken lists of nodes gone, for new nodes: a
    /// node made past the replayed prefix allocates none.
    spare: Vec<Vec<(TaskId, Footprint)>>,
}

impl Search {
    fn preemptions_at(&self, i: usize) -> u32 {
        self.nodes[..i]
            .iter()
            .rev()
            .find_map(|n| match n {
                Node::Task { preemptions, last, chosen, enabled, .. } => {
                    Some(preemptions + u32::from(last.is_some_and(|l| l != *chosen && enabled.contains(l))))
                }
                Node::Data { .. } => None,
            })
            .unwrap_or_default()
    }

    fn within_bound(&self, preemptions: u32, enabled: &TaskSet, last: Option<TaskId>, t: TaskId) -> bool {
        within(self.cfg.preemption_bound, preemptions, last.filter(|&l| enabled.contains(l)), t)
    }

    /// The model ran differently from the path it is replaying: the
    /// execution stops, and the search reports it.
    fn diverged(&mut self, enabled: &TaskSet, step: u64) -> TaskId {
        self.error = Some(format!("the model did not replay the same way at step {step}"));
        self.halt = Some(Halt::Pruned);
        enabled.nth(0)
    }

    /// Races are looked for and branch the search (with or without a bound).
    fn reduction(&self) -> bool {
        self.cfg.reduction
    }

    /// Sleep sets prune equivalent orders: only without a bound.
    fn sleep_sets(&self) -> bool {
        self.cfg.reduction && self.cfg.preemption_bound.is_none()
    }

    /// Task `t`'s clock after its last step (`None` before its first).
    fn clock_of(&self, t: TaskId) -> Option<&VClock> {
        self.task_clock.get(t as usize).copied().flatten().map(|c| self.clocks.get(c))
    }

    /// Step `i` happens before the point `clock` describes (nothing
    /// happens before a task's first step).
    fn happens_before(&self, i: usize, clock: Option<&VClock>) -> bool {
        let s = &self.steps[i];
        clock.is_some_and(|c| c.get(s.task as usize) >= s.local)
    }

    /// The most recent step of another task that touched `r` in a way that
    /// conflicts with an access of `t` (`write`: the access changes `r`).
    fn last_conflict(&self, r: u32, t: TaskId, write: bool) -> Option<usize> {
        self.touches.last_conflict(r, t, write).map(|h| h.step)
    }

    /// A race: task `t` should also be tried where step `k` was taken (every
    /// task enabled there, if `t` was not). Within a preemption bound, only
    /// if that keeps the schedule within it, and also at the last context
    /// switch before step `k` (see the module's comment).
    ///
    /// Called for every known next access at every step, so the same race
    /// comes back step after step (256 ttrpc callers queued on one lock):
    /// what is there already is not added again, and nothing is allocated.
    fn add_backtrack(&mut self, k: usize, t: TaskId) {
        let node = self.steps[k].node;
        self.backtrack_at(node, t);
        if self.cfg.preemption_bound.is_some() {
            if let Some(j) = self.last_switch_before(node) {
                self.backtrack_at(j, t);
            }
        }
    }

    /// Whether [`Search::add_backtrack`] would change anything (a check of
    /// debug builds).
    fn adds_backtrack(&self, k: usize, t: TaskId) -> bool {
        let node = self.steps[k].node;
        let switch = self.cfg.preemption_bound.and_then(|_| self.last_switch_before(node));
        self.backtrack_adds(node, t) || switch.is_some_and(|j| self.backtrack_adds(j, t))
    }

    /// Whether [`Search::backtrack_at`] would change anything.
    fn backtrack_adds(&self, node: usize, t: TaskId) -> bool {
        let Node::Task { enabled, backtrack, all_enabled, last, preemptions, sleep, .. } = &self.nodes[node] else {
            return false;
        };
        if *all_enabled {
            false
        } else if !enabled.contains(t) || sleep.iter().any(|(p, _)| *p == t) {
            true
        } else if within(self.cfg.preemption_bound, *preemptions, last.filter(|&l| enabled.contains(l)), t) {
            !backtrack.contains(t)
        } else {
            !self.cut
        }
    }

    /// Adds `t` to the branches of task node `node` (all its enabled tasks
    /// if `t` was not one), within the bound.
    fn backtrack_at(&mut self, node: usize, t: TaskId) {
        let bound = self.cfg.preemption_bound;
        let Node::Task { enabled, backtrack, all_enabled, last, preemptions, sleep, .. } = &mut self.nodes[node] else {
            return;
        };
        if *all_enabled {
            return;
        }
        // Asleep there, `t`'s next step was run from here already, and
        // commutes with what came before the race: the race's reversal
        // starts with another task's step, one that happens before `t`'s
        // racing step (a child whose write `t` reads later). Which one the
        // search does not work out: every task enabled here is tried.
        if !enabled.contains(t) || sleep.iter().any(|(p, _)| *p == t) {
            // Not copied into `backtrack`: with 5,000 ttrpc tasks such copies
            // were 38 MB of one execution's heap. `next_branch` applies the bound.
            *all_enabled = true;
        } else if within(bound, *preemptions, last.filter(|&l| enabled.contains(l)), t) {
            backtrack.insert(t);
        } else {
            // A higher bound has more to see.
            self.cut = true;
        }
    }

    /// After an execution: its last step ended the run (a failure, the
    /// last foreground task finishing, the step limit) while other tasks
    /// could still have run, so it disabled them all. Ending the run makes
    /// that step dependent on every task enabled beside it, whose next steps
    /// the run never saw: each is a branch where the step was taken (one
    /// that closes a channel before another's send panics on it, a
    /// background task that fails before main ends).
    fn ended_with_others_enabled(&mut self) {
        let Some(k) = self.steps.len().checked_sub(1) else { return };
        let node = self.steps[k].node;
        let Node::Task { enabled, chosen, .. } = &self.nodes[node] else { return };
        if enabled.len() < 2 {
            return;
        }
        let (chosen, others): (TaskId, Vec<TaskId>) = (*chosen, enabled.iter().collect());
        for u in others {
            if u != chosen {
                self.add_backtrack(k, u);
            }
        }
    }

    /// The latest task node before `node` where the schedule switched
    /// tasks (its task differs from the one of the task node before it),
    /// or the first task node if it never did.
    fn last_switch_before(&self, node: usize) -> Option<usize> {
        let chosen = |j: usize| match &self.nodes[j] {
            Node::Task { chosen, .. } => Some(*chosen),
            Node::Data { .. } => None,
        };
        let mut tasks = (0..node).rev().filter_map(|j| chosen(j).map(|c| (j, c))).peekable();
        let mut first = None;
        while let Some((j, c)) = tasks.next() {
            match tasks.peek() {
                Some(&(_, before)) if before != c => return Some(j),
                Some(_) => {}
                None => first = Some(j),
            }
        }
        first
    }

    /// The sleep set a node starts with: its parent's sleepers and the
    /// tasks the parent already explored, less those the parent's step wakes.
    fn inherited_sleep(&mut self) -> Vec<(TaskId, Footprint)> {
        if !self.sleep_sets() {
            return Vec::new();
        }
        let Some(last) = self.steps.last() else { return Vec::new() };
        let mut out = self.spare.pop().unwrap_or_default();
        let (task, fp) = (last.task, &self.last_fp);
        let Node::Task { sleep, taken, done, .. } = &self.nodes[last.node] else { return out };
        for (p, f) in sleep.iter().chain(taken.iter().filter(|(p, _)| done.contains(*p))) {
            if *p != task && !f.conflicts(fp) && !out.iter().any(|(q, _)| q == p) {
                out.push((*p, f.clone()));
            }
        }
        out
    }

    /// Drops the nodes from `len` on, keeping their lists for new nodes.
    fn truncate_nodes(&mut self, len: usize) {
        while self.nodes.len() > len {
            if let Some(Node::Task { mut sleep, mut taken, .. }) = self.nodes.pop() {
                sleep.clear();
                taken.clear();
                self.spare.extend([sleep, taken].into_iter().filter(|l| l.capacity() > 0));
            }
        }
    }
}

/// True if running `t` at a node (reached with `preemptions`, the task run
/// before being `last_enabled` if it is still enabled there) keeps the
/// schedule within `bound` preemptions.
fn within(bound: Option<u32>, preemptions: u32, last_enabled: Option<TaskId>, t: TaskId) -> bool {
    match bound {
        None => true,
        Some(k) => preemptions + u32::from(last_enabled.is_some_and(|l| l != t)) <= k,
    }
}

struct DfsStrategy(Rc<RefCell<Search>>);

impl Strategy for DfsStrategy {
    fn pick_task(&mut self, enabled: &TaskSet, last: Option<TaskId>, step: u64) -> TaskId {
        let mut s = self.0.borrow_mut();
        let i = s.pos;
        s.pos += 1;
        // Every 1024 steps, whether Ctrl-C asks to stop.
        if i % 1024 == 1023 && s.cfg.stop.is_some_and(|f| f.load(Ordering::Relaxed)) {
            s.interrupted = true;
            s.halt = Some(Halt::Pruned);
            return enabled.nth(0);
        }
        if i < s.nodes.len() {
            // Replaying the prefix.
            let chosen = match &s.nodes[i] {
                Node::Task { chosen, enabled: e, .. } if e.equals(enabled) => *chosen,
                _ => return s.diverged(enabled, step),
            };
            return chosen;
        }
        let preemptions = s.preemptions_at(i);
        if let Some(&f) = s.forced.get(i) {
            // On a subtree's root path: its choice alone, no branch here.
            if !enabled.contains(f) {
                return s.diverged(enabled, step);
            }
            let mut only = TaskSet::new();
            only.insert(f);
            s.nodes.push(Node::Task {
                enabled: FrozenTaskSet::from(enabled),
                last,
                chosen: f,
                backtrack: only.clone(),
                done: only,
                all_enabled: false,
                sleep: Vec::new(),
                taken: Vec::new(),
                preemptions,
            });
            return f;
        }
        let sleep = s.inherited_sleep();
        let asleep = |t: TaskId| sleep.iter().any(|(p, _)| *p == t);
        // Prefer the task that ran last (no preemption), then the lowest id.
        let candidates = last.into_iter().filter(|&l| enabled.contains(l)).chain(enabled.iter());
        let mut pick = None;
        for t in candidates {
            if asleep(t) {
                continue;
            }
            if s.within_bound(preemptions, enabled, last, t) {
                pick = Some(t);
                break;
            }
            s.cut = true;
        }
        let Some(t) = pick else {
            s.halt = Some(Halt::Pruned);
            return enabled.nth(0);
        };
        let mut backtrack = TaskSet::new();
        if !s.reduction() {
            for u in enabled.iter() {
                if asleep(u) {
                    continue;
                }
                if s.within_bound(preemptions, enabled, last, u) {
                    backtrack.insert(u);
                } else {
                    s.cut = true;
                    if s.deferred.is_some() {
                        s.cut_here.insert(u);
                    }
                }
            }
            if !s.cut_here.is_empty() {
                let (depth, mut here) = (s.nodes.len() as u32, std::mem::take(&mut s.cut_here));
                s.cuts.push(depth, &here);
                here.clear();
                s.cut_here = here;
            }
        }
        backtrack.insert(t);
        let mut done = TaskSet::new();
        done.insert(t);
        let taken = if s.sleep_sets() { s.spare.pop().unwrap_or_default() } else { Vec::new() };
        s.nodes.push(Node::Task {
            enabled: FrozenTaskSet::from(enabled),
            last,
            chosen: t,
            backtrack,
            done,
            all_enabled: false,
            sleep,
            taken,
            preemptions,
        });
        t
    }

    fn pick_index(&mut self, n: usize) -> usize {
        let mut s = self.0.borrow_mut();
        let i = s.pos;
        s.pos += 1;
        if i < s.nodes.len() {
            return match s.nodes[i] {
                Node::Data { n: m, chosen } if m == n => chosen,
                _ => {
                    s.error = Some("the model did not replay the same way (a data choice changed)".into());
                    s.halt = Some(Halt::Pruned);
                    0
                }
            };
        }
        let chosen = match s.forced.get(i) {
            Some(&f) if (f as usize) < n => f as usize,
            Some(_) => {
                s.error = Some("the model did not replay the same way (a data choice changed)".into());
                s.halt = Some(Halt::Pruned);
                0
            }
            None => 0,
        };
        s.nodes.push(Node::Data { n, chosen });
        chosen
    }

    fn name(&self) -> String {
        "dfs".to_string()
    }

    /// Only for the reduction: races, sleep sets and the known next
    /// accesses all come from footprints. A plain DFS (a preemption bound,
    /// `--no-reduction`) needs none, and the engine then records nothing
    /// per step for it.
    fn wants_footprints(&self) -> bool {
        self.0.borrow().reduction()
    }

    fn step_done(&mut self, task: TaskId, footprint: &Footprint) {
        let mut s = self.0.borrow_mut();
        if footprint.timed {
            // The reduction cannot order this step (see `explore`): stop here.
            TIMED.set(true);
            s.halt = Some(Halt::Pruned);
        }
        // The node of this step: the last task node before pos.
        let node = (0..s.pos).rev().find(|&j| matches!(s.nodes[j], Node::Task { .. })).expect("a step has a node");
        // The steps taken at a node, and the last step's footprint, are
        // what sleep sets are made of: none within a bound.
        let sleep_sets = s.sleep_sets();
        if let (Node::Task { taken, .. }, true) = (&mut s.nodes[node], sleep_sets) {
            if !taken.iter().any(|(p, _)| *p == task) {
                // Most nodes see one task's step: no room for four.
                taken.reserve_exact(1);
                taken.push((task, footprint.clone()));
            }
        }
        let t = task as usize;
        if s.task_clock.len() <= t {
            s.task_clock.resize(t + 1, None);
        }
        let s = &mut *s;
        // The clock before this step: `task_clock[t]`, left as it is until
        // the end. This step's clock starts from it and shares its chunks.
        let before = s.task_clock[t];
        let local = s.clock_of(task).map_or(0, |c| c.get(t)) + 1;
        let clock = s.clocks.copy_of(before);
        // The step that granted the task what it takes now (the last other
        // change of its own pseudo-resource) enabled this step: it comes
        // before it in every schedule, and is no race. Taken for one, as
        // the latest it hid the race on another resource the step touched
        // (a receive that takes a parked send, then finds the monitor its
        // next operation enters held): only the latest race is reversed.
        let enabler = if footprint.granted {
            s.touches.last_conflict(Footprint::task_resource(task), task, false).map(|h| h.clock)
        } else {
            None
        };
        let base = match enabler {
            Some(e) => {
                let b = s.clocks.copy_of(before);
                s.clocks.join_into(b, e);
                Some(b)
            }
            None => before,
        };
        let touched = footprint.resources.iter().map(|r| (r, true)).chain(footprint.reads.iter().map(|r| (r, false)));
        let mut race: Option<usize> = None;
        for (r, write) in touched.clone() {
            if let Some(h) = s.touches.last_conflict(r, task, write) {
                let (k, other) = (h.step, h.clock);
                if !s.happens_before(k, base.map(|b| s.clocks.get(b))) {
                    race = race.max(Some(k));
                }
                s.clocks.join_into(clock, other);
            }
        }
        s.clocks.set(clock, t, local);
        let step = s.steps.len();
        for (r, write) in touched {
            s.touches.note(r, write, Touch { step, task, clock }, &mut s.clocks);
        }
        // The task holds the new clock (from `copy_of`) and lets the old go.
        s.task_clock[t] = Some(clock);
        if let Some(b) = before {
            s.clocks.release(b);
        }
        if let (Some(b), Some(_)) = (base, enabler) {
            s.clocks.release(b);
        }
        s.steps.push(StepRec { task, node, local });
        if sleep_sets {
            s.last_fp.clone_from(footprint);
        }
        if let (Some(k), true) = (race, s.reduction()) {
            s.add_backtrack(k, task);
        }
    }

    fn pending(&mut self, accesses: &[(TaskId, u32)]) {
        let mut s = self.0.borrow_mut();
        if !s.reduction() {
            return;
        }
        for &(t, r) in accesses {
            if let Some(k) = s.last_conflict(r, t, true) {
                if !s.happens_before(k, s.clock_of(t)) {
                    s.add_backtrack(k, t);
                }
            }
        }
    }

    fn check_pending(&mut self, all: &[(TaskId, u32)]) {
        let s = self.0.borrow();
        if !s.reduction() {
            return;
        }
        for &(t, r) in all {
            if let Some(k) = s.last_conflict(r, t, true) {
                let adds = !s.happens_before(k, s.clock_of(t)) && s.adds_backtrack(k, t);
                assert!(!adds, "the known next access ({t}, {r}) races with step {k}, and the search was not told");
            }
        }
    }

    fn may_halt(&self) -> bool {
        true
    }

    fn halt(&mut self) -> Option<Halt> {
        self.0.borrow_mut().halt.take()
    }
}

/// Moves to the next branch: the deepest node with an unexplored choice.
/// Returns false when the search is exhausted.
fn next_branch(s: &mut Search) -> bool {
    // The subtree's root path is fixed: no branch is taken on it.
    let floor = s.forced.len();
    let bound = s.cfg.preemption_bound;
    while s.nodes.len() > floor {
        let node = s.nodes.last_mut().expect("above the floor");
        match node {
            Node::Data { n, chosen } => {
                if *chosen + 1 < *n {
                    *chosen += 1;
                    return true;
                }
            }
            Node::Task { backtrack, all_enabled, enabled, done, sleep, chosen, last, preemptions, .. } => {
                let untried = |&t: &TaskId| !done.contains(t) && !sleep.iter().any(|(p, _)| *p == t);
                let next = if *all_enabled {
                    // Every enabled task, within the bound (a bounded reduction's race
                    // with a task not enabled here).
                    let (mut over, p) = (false, *preemptions);
                    let l = last.filter(|&l| enabled.contains(l));
                    let next = enabled.iter().filter(untried).find(|&t| {
                        let ok = within(bound, p, l, t);
                        over |= !ok;
                        ok
                    });
                    s.cut |= over;
                    next
                } else {
                    backtrack.iter().find(untried)
                };
                if let Some(t) = next {
                    *chosen = t;
                    done.insert(t);
                    return true;
                }
            }
        }
        let below = s.nodes.len() - 1;
        s.truncate_nodes(below);
    }
    false
}

/// Explores `model` exhaustively (within the bound); stops at the first failure.
///
/// With a preemption bound `k` this is CHESS's iterative context bounding:
/// every schedule within 0 preemptions, then within 1, up to `k`, so a
/// failure is found with the fewest preemptions any failing schedule needs
/// ([`ExploreResult::bound`] says how many). As in CHESS, a pass does not
/// run the schedules of the passes before it again: pass `b` explores the
/// subtrees below each branch that pass `b - 1` kept out (the branches that
/// make a preemption more), so every schedule runs once, in the pass of its
/// own number of preemptions.
///
/// With reduction, each pass is a whole bounded reduced search of its own
/// bound (the schedules of the passes before run again, a fraction of the
/// last pass's), and a pass whose bound kept no race's branch out covers
/// every schedule: the passes stop there. Taking turns with the passes runs
/// the reduced search without a bound, given half as many executions as
/// they took: when it covers every schedule first, the exploration ends
/// there ([`ExploreResult::unbounded_covered`]); a failure it finds is
/// reported once the passes below its preemptions found none.
///
/// A reduced search that covers every schedule (within the bound) without a
/// failure is checked against [`CROSS_CHECK_SEEDS`] random schedules (those
/// within the bound): the reduction trusts the model to declare what its
/// steps share, and a model that shares state it does not declare (with
/// [`crate::access`]) would otherwise be "proved" (see
/// [`CrossCheck::missed`]).
///
/// A model that sleeps or reads the virtual clock ([`crate::time`]) is
/// explored without reduction: each step moves the clock by the same amount
/// whichever task takes it, so where a sleeper wakes depends on how many
/// steps came before, not on what they touched, and no footprint can say
/// which steps that makes dependent. The reduced search stops at the first
/// such step, and the exploration runs again without reduction, within what
/// is left of its budgets ([`ExploreResult::timed`]).
pub fn explore(model: &Configured, cfg: &ExploreConfig) -> ExploreResult {
    /// Clears [`TIMED`] however `explore` ends, a panic included.
    struct Cleared;
    impl Drop for Cleared {
        fn drop(&mut self) {
            TIMED.set(false);
        }
    }
    TIMED.set(false);
    let _cleared = Cleared;
    let started = Instant::now();
    let mut r = search(model, cfg);
    if TIMED.replace(false) {
        // A step of a reduced search set a timer or read the clock, and the
        // search stopped there. Every step moves the virtual clock, so when
        // a sleeper wakes, and what `now` says, depend on how many steps of
        // any task came first: steps the reduction takes for independent can
        // decide whether a sleeper runs before a step it races with (a
        // close that comes before a send only when other steps delay the
        // send until the closer's sleep is over). Only every order is sure.
        // The executions and the time the reduced search took count
        // against the budgets, and in the result.
        let spent = r.executions;
        if cfg.max_executions <= spent {
            // The budget went on the execution that met the clock: nothing
            // is left for a search without reduction.
            r.timed = true;
            r.exhausted = false;
            // Stopped by the clock, which is not the stop a caller set.
            r.stopped_early = false;
            return r;
        }
        let plain = ExploreConfig {
            reduction: false,
            max_executions: cfg.max_executions.saturating_sub(spent),
            time_budget: cfg.time_budget.map(|t| t.saturating_sub(started.elapsed())),
            ..cfg.clone()
        };
        r = search(model, &plain);
        r.executions += spent;
        r.timed = true;
        return r;
    }
    if cfg.cross_check
        && cfg.reduction
        && r.exhausted
        && r.failure.is_none()
        && r.distinct.is_empty()
        && r.nondeterminism.is_none()
    {
        // What was proved: every schedule (no bound; the search without a
        // bound covered them all; or a pass below the bound refused no
        // branch), or every schedule within the bound.
        let within = match (cfg.preemption_bound, r.bound) {
            (Some(k), Some(b)) if !r.unbounded_covered && b >= k => Some(k),
            _ => None,
        };
        cross_check(model, cfg, &mut r, within);
    }
    r
}

thread_local! {
    /// Set when a reduced search meets a step that set a timer or read the
    /// clock: every pass and search of the exploration stops, and [`explore`]
    /// starts again without reduction.
    static TIMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Random schedules a proof by [`explore`] is checked against.
pub const CROSS_CHECK_SEEDS: u64 = 256;

/// Random picks that count preemptions as the search does: a switch away
/// from the task that ran last while it could go on.
struct CountingRandom {
    inner: super::RandomStrategy,
    preemptions: std::rc::Rc<std::cell::Cell<u32>>,
}

impl Strategy for CountingRandom {
    fn pick_task(&mut self, enabled: &TaskSet, last: Option<TaskId>, step: u64) -> TaskId {
        let t = self.inner.pick_task(enabled, last, step);
        // `last` is given only while it is still enabled.
        if last.is_some_and(|l| l != t) {
            self.preemptions.set(self.preemptions.get() + 1);
        }
        t
    }
    fn pick_index(&mut self, n: usize) -> usize {
        self.inner.pick_index(n)
    }
    fn name(&self) -> String {
        "random".to_string()
    }
}

/// Runs random seeds `0..CROSS_CHECK_SEEDS` after a reduced search proved
/// every schedule (or, `within` a bound, every one with that many
/// preemptions at most); the first that fails within what was proved
/// contradicts the proof and becomes the result's failure.
fn cross_check(model: &Configured, cfg: &ExploreConfig, r: &mut ExploreResult, within: Option<u32>) {
    let run = |seed: u64, record: bool| {
        let preemptions = std::rc::Rc::new(std::cell::Cell::new(0));
        let strategy = CountingRandom { inner: super::RandomStrategy::new(seed), preemptions: preemptions.clone() };
        let run = model.run_with(Sim::new(seed).record(record).max_steps(cfg.max_steps).strategy(Box::new(strategy)));
        (run, preemptions.get())
    };
    let check = r.cross_check.insert(CrossCheck { bound: within, ..CrossCheck::default() });
    for seed in 0..CROSS_CHECK_SEEDS {
        if cfg.stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
            return;
        }
        check.seeds = seed + 1;
        let (quick, preemptions) = run(seed, false);
        if within.is_some_and(|k| preemptions > k) {
            continue;
        }
        check.within += 1;
        if !quick.outcome.is_failure() {
            continue;
        }
        check.missed = Some((seed, preemptions));
        let (recorded, _) = run(seed, true);
        let replay = recorded.trace.as_ref().map(|t| t.meta.replay.clone()).unwrap_or_default();
        let choices = super::Schedule::parse(&replay).map(|s| s.choices).unwrap_or_default();
        r.failure = Some((recorded, choices));
        r.exhausted = false;
        return;
    }
}

/// [`explore`] without the cross-check.
fn search(model: &Configured, cfg: &ExploreConfig) -> ExploreResult {
    let Some(k) = cfg.preemption_bound else { return explore_within(model, cfg, true).0 };
    if cfg.reduction {
        return explore_bounded_reduced(model, cfg, k);
    }
    let started = Instant::now();
    let mut total = ExploreResult::nothing_yet(None);
    // The root paths of this pass's subtrees: the whole tree for bound 0.
    let mut roots: Option<Roots> = None;
    for b in 0..=k {
        let mut next = Roots::default();
        total.bound = Some(b);
        let this_pass: Box<dyn Iterator<Item = Vec<u32>>> = match &roots {
            None => Box::new(std::iter::once(Vec::new())),
            Some(r) => Box::new(r.iter()),
        };
        for root in this_pass {
            let left = cfg.max_executions.saturating_sub(total.executions);
            if left == 0 {
                // The budget went to the schedules before these.
                return total;
            }
            // One budget for all the passes: each gets what the ones before left
            // (a subtraction, not a deadline: a budget of 1e19 s has none).
            let time_budget = cfg.time_budget.map(|t| t.saturating_sub(started.elapsed()));
            let (pass, _, deferred) = explore_pass(
                model,
                &ExploreConfig { preemption_bound: Some(b), max_executions: left, time_budget, ..cfg.clone() },
                total.executions == 0,
                root,
                b < k,
            );
            if total.absorb(pass) {
                return total;
            }
            next.append(deferred);
        }
        if next.is_empty() {
            // No schedule needs more preemptions: every one has been seen.
            break;
        }
        roots = Some(next);
    }
    total.exhausted = true;
    total
}

/// [`explore`] with reduction within bound `k`: a reduced pass per bound,
/// from 0, and beside them the reduced search without a bound.
///
/// A bounded pass has no sleep sets and runs the schedules of the lower
/// bounds again, so where the bound does not bind it costs far more than the
/// search without one (`abba --fixed`: 35 executions cover every schedule,
/// the passes up to the bound of 6 that refuses no branch take 410). So the
/// two take turns: after each execution of the passes, the search without a
/// bound goes on from where it stopped until it has run one for every
/// [`UNBOUNDED_SHARE`] of theirs. It settles the exploration when it covers
/// every schedule (then every one within `k` completes). A failure it finds
/// has some number `p` of preemptions, and the passes below the current one
/// found none: once they have shown that none fails within `p - 1` (at once
/// if `p` is the current pass's bound), it is a failure with the fewest.
/// Only counts decide, so the result does not depend on timing. With
/// `keep_going` (every distinct failure, each with
/// its fewest preemptions) the passes run alone.
fn explore_bounded_reduced(model: &Configured, cfg: &ExploreConfig, k: u32) -> ExploreResult {
    let started = Instant::now();
    let time_left = || cfg.time_budget.map(|t| t.saturating_sub(started.elapsed()));
    let mut total = ExploreResult::nothing_yet(None);
    let mut unbounded = (!cfg.keep_going).then(|| Side {
        pass: Pass::new(model, &ExploreConfig { preemption_bound: None, ..cfg.clone() }, vec![], false),
        seen: (0, 0),
    });
    // The passes' executions so far.
    let mut by_passes = 0u64;
    // The search without a bound, stopped at a failure with more
    // preemptions than `k`.
    let mut beyond: Option<Side> = None;
    for b in 0..=k {
        total.bound = Some(b);
        if let Some(p) = unbounded.as_ref().and_then(|u| u.pass.failed_with) {
            debug_assert!(p >= b, "a failure with {p} preemptions that the passes below {b} missed");
            if p <= b {
                // No pass below `b` fails: its failure has the fewest preemptions.
                return unbounded.take().expect("checked").report(total, p);
            }
        }
        let mut pass = Side {
            pass: Pass::new(model, &ExploreConfig { preemption_bound: Some(b), ..cfg.clone() }, vec![], false),
            seen: (0, 0),
        };
        while !pass.pass.over {
            let left = cfg.max_executions.saturating_sub(total.executions);
            if left == 0 {
                return cut_short(total, unbounded.or(beyond));
            }
            pass.pass.resume(pass.pass.result.executions + 1, total.executions == 0, time_left());
            by_passes += pass.take_progress(&mut total);
            if pass.pass.over {
                continue;
            }
            let Some(u) = unbounded.as_mut().filter(|u| !u.pass.over) else { continue };
            let until =
                (by_passes / UNBOUNDED_SHARE).min(u.seen.0 + cfg.max_executions.saturating_sub(total.executions));
            if until <= u.seen.0 {
                continue;
            }
            u.pass.resume(until, false, time_left());
            total.unbounded_executions += u.take_progress(&mut total);
            let r = &mut u.pass.result;
            if r.nondeterminism.is_some() {
                total.nondeterminism = r.nondeterminism.take();
                return total;
            }
            if r.stopped_early {
                total.stopped_early = true;
                return cut_short(total, unbounded);
            }
            if r.exhausted {
                // Every schedule completes, so every one within `k` does.
                total.exhausted = true;
                total.unbounded_covered = true;
                return total;
            }
            match u.pass.failed_with {
                // The passes below `b` found none: it has the fewest.
                Some(p) if p <= b => return unbounded.take().expect("checked").report(total, p),
                // Outside the bound: the passes go on alone, and the
                // failure is kept, to be reported with what they show.
                Some(p) if p > k => beyond = unbounded.take(),
                _ => {}
            }
        }
        let (pass, cut, _) = pass.pass.finish();
        for (sig, choices) in pass.distinct {
            total.distinct.entry(sig).or_insert(choices);
        }
        if pass.nondeterminism.is_some() || pass.failure.is_some() {
            total.nondeterminism = pass.nondeterminism;
            total.failure = pass.failure;
            return total;
        }
        if !pass.exhausted {
            // A stop, a spent time budget, or the failure a shrink looks for.
            total.stopped_early = pass.stopped_early;
            return cut_short(total, unbounded.or(beyond));
        }
        if !cut {
            // No branch needed more preemptions: every schedule has been seen.
            if let Some(p) = unbounded.as_ref().and_then(|u| u.pass.failed_with).filter(|&p| p <= k) {
                // Bounded reduction missed a failure within the bound: say the failure, not a proof.
                debug_assert!(false, "the passes missed a failure with {p} preemptions");
                return unbounded.take().expect("checked").report(total, p);
            }
            break;
        }
    }
    total.exhausted = true;
    match beyond.and_then(|u| u.pass.failed_with.map(|p| (u, p))) {
        // Every schedule within `k` completes, and one beyond fails: both
        // are said (`unbounded_failure` > `k`), as a failure.
        Some((u, p)) => {
            total.failure = u.pass.finish().0.failure;
            total.unbounded_failure = Some(p);
            total
        }
        None => total,
    }
}

/// The search without a bound is given one execution for every this many
/// of the passes' (see [`explore_bounded_reduced`]). Half:
/// where the passes decide (a failure they find, a bound that binds), it
/// costs them half as many executions again, and where the bound does not
/// bind, the exploration takes three times the executions of the search
/// without a bound. (An equal share cost the passes twice as many where
/// they decide; turns at doubling counts made a proof cost up to 5 times.)
const UNBOUNDED_SHARE: u64 = 2;

/// A search of a bounded exploration taking turns with another, and how
/// much of its progress is in the total already.
struct Side<'m> {
    pass: Pass<'m>,
    /// Executions and pruned executions already added to the total.
    seen: (u64, u64),
}

impl Side<'_> {
    /// Adds what the search ran since the last call to `total`: executions,
    /// pruned ones and lock-order facts. Gives the executions added.
    fn take_progress(&mut self, total: &mut ExploreResult) -> u64 {
        let r = &mut self.pass.result;
        let added = r.executions - self.seen.0;
        total.executions += added;
        total.pruned += r.pruned - self.seen.1;
        self.seen = (r.executions, r.pruned);
        total.lock_order.merge(&std::mem::take(&mut r.lock_order));
        added
    }

    /// `total` with this (unbounded) search's failure, which needs `p`
    /// preemptions, the fewest of any failure.
    fn report(self, mut total: ExploreResult, p: u32) -> ExploreResult {
        total.bound = Some(p);
        total.failure = self.pass.finish().0.failure;
        total
    }
}

/// `total`, cut short within its bound, with the failure the unbounded
/// search beside the passes found, if it found one. The passes below its
/// preemptions did not all run, so it is a failure, but not one known to
/// need the fewest ([`ExploreResult::unbounded_failure`]).
fn cut_short(mut total: ExploreResult, unbounded: Option<Side<'_>>) -> ExploreResult {
    if let Some((u, p)) = unbounded.and_then(|u| u.pass.failed_with.map(|p| (u, p))) {
        total.failure = u.pass.finish().0.failure;
        total.unbounded_failure = Some(p);
    }
    total
}

/// One depth-first pass: every schedule, or every one within `cfg`'s bound;
/// and whether the bound kept any schedule out. The `first` pass of an
/// exploration runs one execution whatever its time budget, so that any
/// budget gives a result.
pub(super) fn explore_within(model: &Configured, cfg: &ExploreConfig, first: bool) -> (ExploreResult, bool) {
    let (result, cut, _) = explore_pass(model, cfg, first, Vec::new(), false);
    (result, cut)
}

/// [`explore_within`] over the subtree whose root path is `forced` (every
/// schedule when it is empty); with `collect`, also gives each branch the
/// bound kept out, as a root path for the next pass.
pub(super) fn explore_pass(
    model: &Configured,
    cfg: &ExploreConfig,
    first: bool,
    forced: Vec<u32>,
    collect: bool,
) -> (ExploreResult, bool, Roots) {
    let mut pass = Pass::new(model, cfg, forced, collect);
    pass.resume(cfg.max_executions, first, cfg.time_budget);
    pass.finish()
}

/// One depth-first search, kept between calls: [`Pass::resume`] takes
/// executions until the search ends or has run a given number, and a later
/// call goes on from the branch where it stopped. A bounded exploration runs
/// the search without a bound beside its passes this way (see
/// [`explore_bounded_reduced`]).
pub(super) struct Pass<'m> {
    model: &'m Configured,
    cfg: ExploreConfig,
    search: Rc<RefCell<Search>>,
    result: ExploreResult,
    /// True once the search ended: every schedule run, a failure, a model
    /// that does not replay, a stop or a spent time budget.
    over: bool,
    /// The preemptions of the failing schedule, once one failed.
    failed_with: Option<u32>,
}

impl<'m> Pass<'m> {
    pub(super) fn new(model: &'m Configured, cfg: &ExploreConfig, forced: Vec<u32>, collect: bool) -> Pass<'m> {
        let search = Rc::new(RefCell::new(Search {
            cfg: cfg.clone(),
            nodes: Vec::new(),
            pos: 0,
            steps: Vec::new(),
            task_clock: Vec::new(),
            clocks: ClockPool::default(),
            last_fp: Footprint::default(),
            touches: Touches::default(),
            halt: None,
            error: None,
            cut: false,
            interrupted: false,
            forced,
            deferred: collect.then(Roots::default),
            cuts: Cuts::default(),
            cut_here: TaskSet::new(),
            spare: Vec::new(),
        }));
        Pass {
            model,
            cfg: cfg.clone(),
            search,
            result: ExploreResult::nothing_yet(cfg.preemption_bound),
            over: false,
            failed_with: None,
        }
    }

    /// Runs executions until the search ends or `until` of them have run in
    /// all (at least one when none has), within `time_budget` from now. The
    /// `first` call of an exploration runs one execution whatever its time
    /// budget, so that any budget gives a result.
    pub(super) fn resume(&mut self, until: u64, first: bool, time_budget: Option<Duration>) {
        let cfg = &self.cfg;
        let started = Instant::now();
        let out_of_time = |executions: u64| {
            cfg.stop.is_some_and(|s| s.load(Ordering::Relaxed))
                || (time_budget.is_some_and(|b| started.elapsed() >= b) && (executions > 0 || !first))
        };
        let result = &mut self.result;
        if cfg.reduction && TIMED.get() {
            result.stopped_early = true;
            self.over = true;
            return;
        }
        let ran_before = result.executions;
        while !self.over && result.executions < until.max(1) {
            // Checked before each execution, so a budget spent already (a
            // later pass of `explore`) runs none.
            if out_of_time(result.executions - ran_before) {
                result.stopped_early = true;
                self.over = true;
                return;
            }
            {
                let mut s = self.search.borrow_mut();
                s.pos = 0;
                s.steps.clear();
                s.task_clock.clear();
                s.touches.clear();
                s.clocks.clear();
                s.halt = None;
            }
            let run = self
                .model
                .run_with(Sim::new(0).max_steps(cfg.max_steps).strategy(Box::new(DfsStrategy(self.search.clone()))));
            result.executions += 1;
            if cfg.reduction && TIMED.get() {
                // `explore` starts again without reduction.
                result.stopped_early = true;
                self.over = true;
                return;
            }
            if !run.lock_order.is_empty() {
                result.lock_order.merge(&run.lock_order);
            }
            if let Some(p) = &cfg.progress {
                p.fetch_add(1, Ordering::Relaxed);
            }
            let mut s = self.search.borrow_mut();
            if !s.cuts.is_empty() {
                // The nodes of the cuts are this execution's (only later ones
                // may be stale).
                let (path, mut cuts) = (path_choices(&s.nodes), std::mem::take(&mut s.cuts));
                s.deferred.as_mut().expect("cuts are kept when collecting").add(&path, &cuts);
                cuts.clear();
                s.cuts = cuts;
            }
            if s.interrupted {
                // Cut short by Ctrl-C: not an execution that ran, nor a pruned one.
                result.executions -= 1;
                result.stopped_early = true;
                self.over = true;
                return;
            }
            if let Some(e) = s.error.take() {
                result.nondeterminism = Some(e);
                self.over = true;
                return;
            }
            if matches!(run.outcome, crate::Outcome::Stopped { .. }) {
                result.pruned += 1;
            } else if run.outcome.is_failure() && cfg.keep_going {
                let choices = choices_of(&s);
                let sig = crate::hunt::signature(&run.outcome);
                let wanted = cfg.stop_at.as_ref() == Some(&sig);
                result.distinct.entry(sig).or_insert(choices);
                if wanted {
                    self.over = true;
                    return;
                }
            } else if run.outcome.is_failure() {
                let choices = choices_of(&s);
                self.failed_with = Some(s.preemptions_at(s.pos));
                drop(s);
                let recorded = self.model.run_with(
                    Sim::new(0)
                        .record(true)
                        .max_steps(cfg.max_steps)
                        .strategy(Box::new(ReplayStrategy::named(choices.clone(), "dfs"))),
                );
                result.failure = Some((recorded, choices));
                self.over = true;
                return;
            }
            if s.reduction() && !matches!(run.outcome, crate::Outcome::Stopped { .. }) {
                s.ended_with_others_enabled();
            }
            // Nodes past the end of this run (a shorter run after a branch) are stale.
            let used = s.pos;
            s.truncate_nodes(used);
            if !next_branch(&mut s) {
                result.exhausted = true;
                self.over = true;
            }
        }
    }

    /// The result, whether the bound kept any branch out, and the branches
    /// it kept out (when collecting).
    pub(super) fn finish(self) -> (ExploreResult, bool, Roots) {
        let mut s = self.search.borrow_mut();
        let deferred = s.deferred.take().unwrap_or_default();
        (self.result, s.cut, deferred)
    }
}

/// The choice at each of `nodes` (a task id, or a data choice's index).
fn path_choices(nodes: &[Node]) -> Vec<u32> {
    nodes
        .iter()
        .map(|n| match n {
            Node::Task { chosen, .. } => *chosen,
            Node::Data { chosen, .. } => *chosen as u32,
        })
        .collect()
}

/// The choices of the current execution, as a schedule (forced ones left out).
fn choices_of(s: &Search) -> Vec<u32> {
    s.nodes[..s.pos]
        .iter()
        .filter_map(|n| match n {
            Node::Task { enabled, chosen, .. } if enabled.len() > 1 => Some(*chosen),
            Node::Data { chosen, .. } => Some(*chosen as u32),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No built-in model reaches this end of a bounded exploration (the
    /// passes find each of their failures first), so it is tested on its own:
    /// a failure the unbounded search found stays a failure when the passes
    /// are cut short, marked as not known to need the fewest preemptions.
    #[test]
    fn an_unbounded_failure_survives_passes_cut_short() {
        let m = crate::models::find("abba").unwrap().configure(&[]).unwrap();
        let mut u = Side { pass: Pass::new(&m, &ExploreConfig::default(), vec![], false), seen: (0, 0) };
        u.pass.resume(1_000, true, None);
        let p = u.pass.failed_with.expect("abba deadlocks");
        // abba needs a preemption to deadlock; no schedule has more than 6.
        assert!((1..=6).contains(&p), "{p}");
        let mut total = ExploreResult::nothing_yet(None);
        total.bound = Some(1);
        total.executions = 5;
        let r = cut_short(total, Some(u));
        assert!(r.failure.is_some() && r.unbounded_failure == Some(p) && r.bound == Some(1), "{r:?}");
        assert_eq!(r.executions, 5);
        // With nothing found beside them, a cut is only a cut.
        let quiet = Side { pass: Pass::new(&m, &ExploreConfig::default(), vec![], false), seen: (0, 0) };
        let r = cut_short(ExploreResult::nothing_yet(Some(0)), Some(quiet));
        assert!(r.failure.is_none() && r.unbounded_failure.is_none());
    }
}
