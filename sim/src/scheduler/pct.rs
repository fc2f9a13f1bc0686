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
//! `select` with a default case or an atomic load, see `spin.rs`) would run alone to the step
//! limit while a fair scheduler such as Go's lets the others run. So a
//! spinning task is demoted below every other task, as shuttle and Coyote
//! demote a task that yields. A one-off non-blocking poll demotes nothing:
//! the schedules of a program without spins are PCT's own.

use super::spin::SpinWatch;
use super::Strategy;
use crate::rng::SimRng;
use crate::rt::{TaskId, TaskSet};

/// PCT with a fixed depth and step bound.
pub struct PctStrategy {
    rng: SimRng,
    depth: u32,
    /// Change points (steps, ascending) and the priority each demotes to.
    change_points: Vec<u64>,
    priorities: Vec<u64>,
    spin: SpinWatch,
    /// The priority the next spinning task is demoted to: below every
    /// other priority, and below the spinners demoted before it.
    spin_low: u64,
}

/// Added to every priority but a spinner's, which go below it: the initial
/// priorities `depth + (draw >> 2)` and the change points' `depth - 1 - i`
/// keep their order, so a run without spins is the same as without this.
const SPIN_FLOOR: u64 = 1 << 62;

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
            spin_low: SPIN_FLOOR - 1,
        }
    }

    #[inline]
    fn priority(&mut self, t: TaskId) -> u64 {
        match self.priorities.get(t as usize) {
            Some(&p) => p,
            None => self.draw_priorities(t),
        }
    }

    /// Draws the priorities of the tasks up to `t`, in id order, the first
    /// time one of them is seen.
    #[cold]
    fn draw_priorities(&mut self, t: TaskId) -> u64 {
        while self.priorities.len() <= t as usize {
            let p = SPIN_FLOOR + self.depth as u64 + (self.rng.next_u64() >> 2);
            self.priorities.push(p);
        }
        self.priorities[t as usize]
    }
}

impl Strategy for PctStrategy {
    fn pick_task(&mut self, enabled: &TaskSet, _last: Option<TaskId>, step: u64) -> TaskId {
        // The highest priority; the lowest id of those that share it.
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
        if let Some(i) = self.change_points.iter().position(|&c| c == step) {
            self.priorities[best as usize] = SPIN_FLOOR + self.depth as u64 - 1 - i as u64;
        }
        self.spin.picked(best);
        best
    }

    fn polled(&mut self, task: TaskId, what: u64) {
        if self.spin.polled(task, what) {
            // (It has run, so its priority is drawn.)
            self.priorities[task as usize] = self.spin_low;
            self.spin_low -= 1;
        }
    }

    fn pick_index(&mut self, n: usize) -> usize {
        self.rng.below(n as u32) as usize
    }

    fn name(&self) -> String {
        format!("pct:{}", self.depth)
    }
}
