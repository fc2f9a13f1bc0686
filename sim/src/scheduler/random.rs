//! Uniform random scheduling from a seed.

use super::Strategy;
use crate::rng::SimRng;
use crate::rt::{TaskId, TaskSet};

/// Picks uniformly among the enabled tasks at every step, drawing from one
/// ChaCha8 stream seeded with the run's seed.
pub struct RandomStrategy {
    rng: SimRng,
}

impl RandomStrategy {
    /// The strategy for `seed`.
    pub fn new(seed: u64) -> RandomStrategy {
        RandomStrategy { rng: SimRng::new(seed) }
    }

    /// Starts over as [`RandomStrategy::new`]`(seed)` would, in place.
    pub fn reseed(&mut self, seed: u64) {
        self.rng.reseed(seed);
    }
}

impl Strategy for RandomStrategy {
    #[inline]
    fn pick_task(&mut self, enabled: &TaskSet, _last: Option<TaskId>, _step: u64) -> TaskId {
        let k = self.rng.below(enabled.len() as u32);
        enabled.nth(k as usize)
    }

    #[inline]
    fn pick_index(&mut self, n: usize) -> usize {
        self.rng.below(n as u32) as usize
    }

    fn name(&self) -> String {
        "random".to_string()
    }
}
