//! Hunting: running many seeds, in parallel, for the lowest failing one.
//!
//! The result does not depend on the number of jobs: seeds are handed out in
//! increasing order, a worker stops taking seeds above the lowest failure
//! found so far, and `schedules` counts the seeds up to and including that
//! failure (what a one-job hunt runs).
//!
//! ```
//! let range: sim::hunt::SeedRange = "0..50".parse().unwrap();
//! let model = sim::models::find("abba").unwrap().configure(&[]).unwrap();
//! let r = sim::hunt::hunt(range, 2, |seed| model.run(seed, false).outcome);
//! assert!(r.failure.is_some());
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::Outcome;

/// An inclusive range of seeds, written `A..B` (B excluded) or `A..=B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    pub first: u64,
    pub last: u64,
}

impl SeedRange {
    /// How many seeds the range holds (at least 1).
    pub fn len(&self) -> u64 {
        (self.last - self.first).saturating_add(1)
    }

    /// Never true: an empty range cannot be written.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl fmt::Display for SeedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..={}", self.first, self.last)
    }
}

impl FromStr for SeedRange {
    type Err = String;

    fn from_str(s: &str) -> Result<SeedRange, String> {
        let num = |t: &str| -> Result<u64, String> {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{s}`: `{t}` is not a seed (a whole number from 0 to {})", u64::MAX))
        };
        if let Some((a, b)) = s.split_once("..=") {
            let (first, last) = (num(a)?, num(b)?);
            if last < first {
                return Err(format!("`{s}` is empty (the end is below the start)"));
            }
            Ok(SeedRange { first, last })
        } else if let Some((a, b)) = s.split_once("..") {
            let (first, end) = (num(a)?, num(b)?);
            if end <= first {
                return Err(format!("`{s}` is empty (A..B excludes B; write A..=B to include it)"));
            }
            Ok(SeedRange { first, last: end - 1 })
        } else {
            let n = num(s)?;
            Ok(SeedRange { first: n, last: n })
        }
    }
}

/// What a hunt found.
#[derive(Debug)]
pub struct HuntResult {
    /// Schedules a one-job hunt would have run: up to the lowest failing seed, or all.
    pub schedules: u64,
    /// The lowest failing seed and its outcome.
    pub failure: Option<(u64, Outcome)>,
}

/// Seeds handed to a worker at a time.
const CHUNK: u64 = 16;

/// Runs `run(seed)` over `range` on `jobs` OS threads; stops at the lowest failing seed.
pub fn hunt<F>(range: SeedRange, jobs: usize, run: F) -> HuntResult
where
    F: Fn(u64) -> Outcome + Sync,
{
    let next = AtomicU64::new(0); // offset from range.first
    let best = AtomicU64::new(u64::MAX); // lowest failing offset
    let found: Mutex<Option<(u64, Outcome)>> = Mutex::new(None);
    let total = range.len();
    let worker = || loop {
        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
        if start >= total || start > best.load(Ordering::Relaxed) {
            break;
        }
        for off in start..(start + CHUNK).min(total) {
            if off > best.load(Ordering::Relaxed) {
                return;
            }
            let outcome = run(range.first + off);
            if outcome.is_failure() {
                best.fetch_min(off, Ordering::Relaxed);
                let mut f = found.lock().unwrap();
                if f.as_ref().is_none_or(|(o, _)| off < *o) {
                    *f = Some((off, outcome));
                }
                return;
            }
        }
    };
    let jobs = jobs.max(1);
    if jobs == 1 {
        worker();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                scope.spawn(worker);
            }
        });
    }
    let failure = found.into_inner().unwrap().map(|(off, o)| (range.first + off, o));
    let schedules = match &failure {
        Some((seed, _)) => seed - range.first + 1,
        None => total,
    };
    HuntResult { schedules, failure }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_ranges_parse_rust_style() {
        assert_eq!("0..10".parse::<SeedRange>().unwrap(), SeedRange { first: 0, last: 9 });
        assert_eq!("3..=3".parse::<SeedRange>().unwrap(), SeedRange { first: 3, last: 3 });
        assert_eq!("7".parse::<SeedRange>().unwrap(), SeedRange { first: 7, last: 7 });
        assert_eq!("5..=18446744073709551615".parse::<SeedRange>().unwrap().last, u64::MAX);
        for bad in ["5..5", "5..3", "a..3", "1..=0", "", "..", "-1..4", "1...4"] {
            assert!(bad.parse::<SeedRange>().is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn lowest_failing_seed_is_the_same_for_any_job_count() {
        // Seeds divisible by 37 "fail": the lowest in 100..1000 is 111.
        let run = |seed: u64| {
            if seed % 37 == 0 {
                Outcome::StepLimit { steps: seed }
            } else {
                Outcome::Completed
            }
        };
        let range: SeedRange = "100..1000".parse().unwrap();
        for jobs in [1, 2, 3, 8] {
            let r = hunt(range, jobs, run);
            assert_eq!(r.failure.as_ref().map(|f| f.0), Some(111), "jobs={jobs}");
            assert_eq!(r.schedules, 12);
        }
        let none = hunt("1..30".parse().unwrap(), 4, run);
        assert!(none.failure.is_none());
        assert_eq!(none.schedules, 29);
    }
}
