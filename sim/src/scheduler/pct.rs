//! PCT: probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
//! Nagarakatte, ASPLOS 2010).
//!
//! Every task gets a random priority when it first appears; the enabled
//! task with the highest priority runs. At `depth - 1` change points, chosen
//! uniformly among the run's `k` steps, the task that runs is demoted below
//! every initial priority. A bug of depth `d` is found with probability at
//! least `1 / (n k^(d-1))` per run. `k` comes from the same seed's first
//! run (see [`crate::scheduler::StrategyKind`]), so results depend on nothing
//! but the seed.
//!
//! PCT assumes every task blocks or ends. One that spins (a loop around a
//! `select` with a default case, an atomic load, a spin lock, or a read
//! with no step such as `len(ch)` or `ctx.Err()` and a yield; see
//! `spin.rs`) would run
//! alone to the step limit while a fair scheduler such as Go's lets the
//! others run. So a spinning task yields by CHESS's fair rule (Musuvathi
//! and Qadeer, PLDI 2008): it is not picked again while a task that was
//! enabled when it spun has not run since. Priorities stay as they are, so
//! a task that stops spinning has its own again, and a run without spins
//! is PCT's own. Other busy waits are not seen: a loop that locks a mutex
//! to read a flag the model does not declare with [`crate::observe`], one
//! that does not yield, a ticker and its reader.
//! Each spinner polls three times after every step of a task that is not
//! spinning, so many spinners can make a run several times longer than
//! under random.

use super::spin::SpinWatch;
use super::Strategy;
use super::StrategyKind;
use crate::rng::SimRng;
use crate::rt::{TaskId, TaskSet};
use crate::{Run, Sim};

/// Runs `seed` under PCT of depth `d` (see [`StrategyKind::run_by`]): first
/// with depth 1 (the seed's priorities, no change point) to learn the step
/// bound `k` from the seed's own run, so that the result does not depend on
/// which seeds ran before or how many jobs ran them; then with depth `d`
/// and that bound. A failure of the first run is the result.
pub(super) fn run_seed(d: u32, seed: u64, record: bool, max_steps: u64, run: impl Fn(Sim) -> Run) -> Run {
    // `StrategyKind::Pct(0)` built by hand would run as depth 1 and print
    // as `pct:0`, which no flag or schedule reads back.
    assert!(
        super::PCT_DEPTHS.contains(&d),
        "PCT depth {d}: expected {} to {} (StrategyKind::pct checks it)",
        super::PCT_DEPTHS.start(),
        super::PCT_DEPTHS.end()
    );
    let stream = PctStrategy::stream(seed);
    let probe = run(Sim::new(seed)
        .record(record && d == 1)
        .max_steps(max_steps)
        .strategy(Box::new(PctStrategy::with_stream(stream.clone(), 1, 0))));
    if d == 1 || probe.outcome.is_failure() {
        let mut done = if record && probe.trace.is_none() {
            run(Sim::new(seed).record(true).max_steps(max_steps).strategy(Box::new(PctStrategy::new(seed, 1, 0))))
        } else {
            probe
        };
        // The run of `--strategy pct:D --seed N`, as the report names it
        // (it wrote pct:1, the probe's depth).
        if let Some(t) = done.trace.as_mut() {
            t.meta.strategy = StrategyKind::Pct(d).to_string();
        }
        return done;
    }
    let k = probe.steps;
    run(Sim::new(seed).record(record).max_steps(max_steps).strategy(Box::new(PctStrategy::with_stream(stream, d, k))))
}

/// PCT with a fixed depth and step bound.
pub struct PctStrategy {
    rng: SimRng,
    depth: u32,
    /// Change points (steps) in draw order: the i-th demotes the task picked
    /// at its step to priority `depth - 1 - i`.
    change_points: Vec<u64>,
    priorities: Vec<u64>,
    spin: SpinWatch,
    /// A task that spun in the step just taken: its yield is made at the
    /// next pick, from the tasks enabled then.
    spun: Option<TaskId>,
    /// Each task yielding, with the tasks it yields to: those enabled when
    /// it spun that have not run since.
    yielding: Vec<(TaskId, TaskSet)>,
    /// Sets of `yielding` entries that ended, to copy the next into: past
    /// 64 tasks a set keeps words on the heap, and a loop spins every round.
    spare: Vec<TaskSet>,
}

impl PctStrategy {
    /// PCT for `seed` with `depth` (d >= 1) and step bound `k`.
    pub fn new(seed: u64, depth: u32, k: u64) -> PctStrategy {
        PctStrategy::with_stream(PctStrategy::stream(seed), depth, k)
    }

    /// The random stream of `seed`'s PCT runs, its first block drawn: a
    /// seed's two runs (see [`crate::scheduler::StrategyKind`]) start from
    /// copies of it, so the ChaCha block is computed once per seed.
    pub fn stream(seed: u64) -> SimRng {
        // A stream of its own, so PCT and random with one seed differ.
        SimRng::new_filled(seed ^ 0x5043_5400_0000_0000)
    }

    /// [`PctStrategy::new`] from the stream [`PctStrategy::stream`] gives.
    pub fn with_stream(mut rng: SimRng, depth: u32, k: u64) -> PctStrategy {
        let mut change_points = Vec::new();
        if k > 0 {
            while change_points.len() + 1 < depth as usize && (change_points.len() as u64) < k {
                let c = 1 + rng.next_u64() % k;
                if !change_points.contains(&c) {
                    change_points.push(c);
                }
            }
        }
        // The i-th change point in draw order demotes to priority depth-1-i:
        // below every initial priority (>= depth), distinct.
        PctStrategy {
            rng,
            depth,
            change_points,
            priorities: Vec::new(),
            spin: SpinWatch::default(),
            spun: None,
            yielding: Vec::new(),
            spare: Vec::new(),
        }
    }

    #[inline]
    fn priority(&mut self, t: TaskId) -> u64 {
        match self.priorities.get(t as usize) {
            Some(&p) => p,
            None => self.draw_priorities(t),
        }
    }

    /// Task `t` spun: it yields to the other tasks `enabled` now.
    #[cold]
    fn start_yield(&mut self, t: TaskId, enabled: &TaskSet) {
        let mut to = match self.yielding.iter().position(|(u, _)| *u == t) {
            Some(i) => self.yielding.remove(i).1,
            None => self.spare.pop().unwrap_or_default(),
        };
        to.clone_from(enabled);
        to.remove(t);
        if to.is_empty() {
            self.spare.push(to);
        } else {
            self.yielding.push((t, to));
        }
    }

    /// True if `t` yields still: a task it yields to is enabled. Some
    /// enabled task never does: a task yields to `u` only if it spun after
    /// `u` last ran (running takes `u` out of every set), and so after `u`
    /// spun, if `u` did. Of the enabled tasks, one that never spun, or else
    /// the one that spun first, yields to none of them.
    fn yields(&self, t: TaskId, enabled: &TaskSet) -> bool {
        self.yielding.iter().any(|(u, to)| *u == t && to.iter().any(|v| enabled.contains(v)))
    }

    /// The pick while tasks yield: the highest priority of the enabled
    /// tasks that do not (one never does: see `yields`), which then runs.
    #[cold]
    fn pick_past_yields(&mut self, enabled: &TaskSet) -> TaskId {
        let mut best: Option<(TaskId, u64)> = None;
        for t in enabled.iter() {
            if self.yields(t, enabled) {
                continue;
            }
            let p = self.priority(t);
            if best.is_none_or(|(_, b)| p > b) {
                best = Some((t, p));
            }
        }
        let (best, _) = best.expect("an enabled task that does not yield");
        self.ran(best);
        best
    }

    /// Task `t` runs: the tasks that yield to it have let it.
    #[cold]
    fn ran(&mut self, t: TaskId) {
        for (_, to) in &mut self.yielding {
            to.remove(t);
        }
        // As `retain`, but the sets of the entries that end are kept.
        let mut i = 0;
        while i < self.yielding.len() {
            if self.yielding[i].0 == t || self.yielding[i].1.is_empty() {
                let (_, set) = self.yielding.remove(i);
                self.spare.push(set);
            } else {
                i += 1;
            }
        }
    }

    /// Draws the priorities of the tasks up to `t`, in id order, the first
    /// time one of them is seen.
    #[cold]
    fn draw_priorities(&mut self, t: TaskId) -> u64 {
        while self.priorities.len() <= t as usize {
            let p = self.depth as u64 + (self.rng.next_u64() >> 2);
            self.priorities.push(p);
        }
        self.priorities[t as usize]
    }
}

impl Strategy for PctStrategy {
    fn pick_task(&mut self, enabled: &TaskSet, _last: Option<TaskId>, step: u64) -> TaskId {
        if let Some(t) = self.spun.take() {
            self.start_yield(t, enabled);
        }
        // The highest priority; the lowest id of those that share it.
        let best = if self.yielding.is_empty() {
            let mut tasks = enabled.iter();
            let mut best = tasks.next().expect("the engine picks among enabled tasks only");
            let mut best_p = self.priority(best);
            for t in tasks {
                let p = self.priority(t);
                if p > best_p {
                    best = t;
                    best_p = p;
                }
            }
            best
        } else {
            self.pick_past_yields(enabled)
        };
        if let Some(i) = self.change_points.iter().position(|&c| c == step) {
            self.priorities[best as usize] = self.depth as u64 - 1 - i as u64;
        }
        self.spin.picked(best);
        best
    }

    fn polled(&mut self, task: TaskId, what: u64) {
        if self.spin.polled(task, what) {
            self.spun = Some(task);
        }
    }

    fn pick_index(&mut self, n: usize) -> usize {
        self.rng.below(n as u32) as usize
    }

    fn name(&self) -> String {
        format!("pct:{}", self.depth)
    }
}
