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

/// An inclusive range of seeds, written `A..B` (B excluded), `A..=B`, or
/// `N` for one seed. Never empty: `first <= last` (parsing refuses an empty
/// range; one built by hand must keep it, or [`SeedRange::len`] panics).
///
/// ```
/// use sim::hunt::SeedRange;
/// let r: SeedRange = "0..1000".parse().unwrap();
/// assert_eq!((r.first, r.last, r.len()), (0, 999, 1000));
/// assert_eq!("7".parse::<SeedRange>().unwrap(), SeedRange { first: 7, last: 7 });
/// assert!("5..5".parse::<SeedRange>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeedRange {
    /// The lowest seed.
    pub first: u64,
    /// The highest seed, included.
    pub last: u64,
}

impl SeedRange {
    /// How many seeds the range holds (at least 1), saturating at
    /// `u64::MAX`: the whole range `0..=u64::MAX` holds one more (see
    /// [`SeedRange::count`]).
    pub fn len(&self) -> u64 {
        (self.last - self.first).saturating_add(1)
    }

    /// How many seeds the range holds, exactly, even for the whole u64 range.
    pub fn count(&self) -> u128 {
        (self.last - self.first) as u128 + 1
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
                return Err(format!("`{s}` is empty: {last} is below {first} (write the lower seed first)"));
            }
            Ok(SeedRange { first, last })
        } else if let Some((a, b)) = s.split_once("..") {
            let (first, end) = (num(a)?, num(b)?);
            if end <= first {
                // A hint only where it helps: `A..A` means seed A, `10..3` has no fix of that kind.
                return Err(if end == first {
                    format!("`{s}` is empty (A..B excludes B); write {first}..={first} or {first} for the one seed")
                } else {
                    format!("`{s}` is empty: {end} is below {first} (write the lower seed first)")
                });
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
    /// Schedules a one-job hunt would have run: up to the lowest failing
    /// seed, or every seed covered (all of them with `keep_going`).
    pub schedules: u64,
    /// The lowest failing seed and its outcome.
    pub failure: Option<(u64, Outcome)>,
    /// With `keep_going`: how many seeds failed. Without: 1 if a seed
    /// failed, else 0 (the seeds other jobs ran past the lowest failure are
    /// not counted, so the figure is the same for any job count).
    pub failures: u64,
    /// With `keep_going`: each distinct failure (by [`signature`]) with its
    /// lowest seed and count, in signature order. Without: empty.
    pub distinct: Vec<Distinct>,
    /// The seeds the result settles: all of the range, unless the hunt
    /// stopped early (then the prefix it ran; `None` if it ran no seed).
    pub covered: Option<SeedRange>,
    /// True if a time budget or an interrupt stopped the hunt before its
    /// result was settled: a lowest-failure hunt that found its failure is
    /// settled, whatever stopped the seeds above it.
    pub stopped_early: bool,
    /// Worker threads that ran: `jobs`, or fewer when there were fewer
    /// chunks of seeds or the system gave fewer threads.
    pub jobs: usize,
}

/// One kind of failure found by a `keep_going` hunt.
#[derive(Debug, Clone)]
pub struct Distinct {
    pub signature: String,
    pub lowest_seed: u64,
    pub count: u64,
    pub outcome: Outcome,
}

/// How to hunt.
#[derive(Default)]
pub struct HuntOptions<'a> {
    /// Worker threads, at most (0, the default, is taken for 1).
    pub jobs: usize,
    /// Run every seed and summarize all failures, instead of stopping at the lowest.
    pub keep_going: bool,
    /// Stop taking new seeds after this wall-clock time (the first chunk of
    /// seeds is run whatever the budget).
    pub time_budget: Option<std::time::Duration>,
    /// Incremented once per schedule run (for a progress line).
    pub progress: Option<&'a AtomicU64>,
    /// Set from outside (Ctrl-C) to stop taking new seeds.
    pub stop: Option<&'a std::sync::atomic::AtomicBool>,
}

/// What makes two failures "the same": the verdict and, for a deadlock,
/// the cycle (task, operation, resource); otherwise the message.
///
/// Numbered names (`caller-3`, `serverConn.run.func2#7`, `errs#12`) count as
/// one role (`caller-*`), so the same cycle played by other callers is the
/// same failure. A cycle is read from its least rotation (by text): a report
/// starts it at the task numbered lowest, and task numbers follow the order
/// of spawns, which two tasks that spawn can take either way.
pub fn signature(o: &Outcome) -> String {
    // A task's part: its role, its wait, and the role of what it waits for.
    let part = |b: &crate::outcome::BlockedTask| format!("{} {} {}", role(&b.name), b.op, role(&b.waits_for));
    match o {
        Outcome::Deadlock(d) if !d.cycle.is_empty() => {
            let mut parts: Vec<String> = d.cycle.iter().map(part).collect();
            let first = (0..parts.len())
                .min_by(|&i, &j| parts[i..].iter().chain(&parts[..i]).cmp(parts[j..].iter().chain(&parts[..j])))
                .unwrap_or(0);
            parts.rotate_left(first);
            format!("deadlock: {}", parts.join(" -> "))
        }
        // No cycle: the roles blocked and what they wait in, each once and
        // sorted (which of two producers is still waiting at the end, or
        // whether both are, is chance, not another failure).
        Outcome::Deadlock(d) => {
            let mut parts: Vec<String> = d.behind.iter().map(part).collect();
            parts.sort();
            parts.dedup();
            let what = if d.global { "every task is blocked" } else { "blocked for good" };
            format!("deadlock: {what}: {}", parts.join(", "))
        }
        o => format!("{}: {}", o.verdict(), o.summary()),
    }
}

/// `caller-3` -> `caller-*`, `stream#9.recv` -> `stream#*.recv`: digits right
/// after a `-` or `#` become `*`.
fn role(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut after_mark = false;
    let mut in_number = false;
    for c in name.chars() {
        if c.is_ascii_digit() && (after_mark || in_number) {
            if !in_number {
                out.push('*');
                in_number = true;
            }
        } else {
            in_number = false;
            out.push(c);
        }
        after_mark = c == '-' || c == '#';
    }
    out
}

/// Seeds handed to a worker at a time.
const CHUNK: u64 = 16;

/// Runs `run(seed)` over `range` on up to `jobs` OS threads (see
/// [`HuntResult::jobs`]; 0 is taken for 1); stops at the lowest failing seed.
pub fn hunt<F>(range: SeedRange, jobs: usize, run: F) -> HuntResult
where
    F: Fn(u64) -> Outcome + Sync,
{
    hunt_with(range, &HuntOptions { jobs, ..Default::default() }, run)
}

/// [`hunt`] with every option.
pub fn hunt_with<F>(range: SeedRange, opts: &HuntOptions, run: F) -> HuntResult
where
    F: Fn(u64) -> Outcome + Sync,
{
    let next = AtomicU64::new(0); // offset from range.first
    let best = AtomicU64::new(u64::MAX); // lowest failing offset
    let found: Mutex<Option<(u64, Outcome)>> = Mutex::new(None);
    let all: Mutex<std::collections::BTreeMap<String, Distinct>> = Mutex::new(Default::default());
    let failures = AtomicU64::new(0);
    let total = range.len();
    let started = std::time::Instant::now();
    let stopped = std::sync::atomic::AtomicBool::new(false);
    // A time budget is checked from the second chunk on, so a hunt with any
    // budget covers some seeds; a stop (Ctrl-C) is obeyed at once.
    let out_of_time = || {
        opts.stop.is_some_and(|s| s.load(Ordering::Relaxed))
            || (opts.time_budget.is_some_and(|b| started.elapsed() >= b) && next.load(Ordering::Relaxed) > 0)
    };
    let worker = || loop {
        if out_of_time() {
            stopped.store(true, Ordering::Relaxed);
            break;
        }
        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
        if start >= total || (!opts.keep_going && start > best.load(Ordering::Relaxed)) {
            break;
        }
        for off in start..(start + CHUNK).min(total) {
            if !opts.keep_going && off > best.load(Ordering::Relaxed) {
                return;
            }
            let seed = range.first + off;
            let outcome = run(seed);
            if let Some(p) = opts.progress {
                p.fetch_add(1, Ordering::Relaxed);
            }
            if !outcome.is_failure() {
                continue;
            }
            failures.fetch_add(1, Ordering::Relaxed);
            best.fetch_min(off, Ordering::Relaxed);
            if opts.keep_going {
                let sig = signature(&outcome);
                let mut map = all.lock().unwrap();
                let e = map.entry(sig.clone()).or_insert(Distinct {
                    signature: sig,
                    lowest_seed: seed,
                    count: 0,
                    outcome: outcome.clone(),
                });
                e.count += 1;
                if seed < e.lowest_seed {
                    e.lowest_seed = seed;
                    e.outcome = outcome.clone();
                }
            }
            let mut f = found.lock().unwrap();
            if f.as_ref().is_none_or(|(o, _)| off < *o) {
                *f = Some((off, outcome));
            }
            if !opts.keep_going {
                return;
            }
        }
    };
    // No more workers than chunks of seeds: the others would find nothing
    // to do. The result is the same for any number of workers, so when the
    // system has no more threads to give, the hunt goes on with those it got
    // (this thread, if none).
    let mut jobs = opts.jobs.clamp(1, total.div_ceil(CHUNK).min(usize::MAX as u64) as usize);
    if jobs == 1 {
        worker();
    } else {
        jobs = std::thread::scope(|scope| {
            let started =
                (0..jobs).take_while(|_| std::thread::Builder::new().spawn_scoped(scope, worker).is_ok()).count();
            if started == 0 {
                worker();
            }
            started.max(1)
        });
    }
    let handed = next.load(Ordering::Relaxed).min(total);
    let failure = found.into_inner().unwrap().map(|(off, o)| (range.first + off, o));
    // Every chunk handed out runs to its end (or to a failure that settles
    // the rest): a budget spent, or a stop, once all of them were handed out
    // cut nothing short, and the hunt is complete. So is a lowest-failure
    // hunt that found one: its seed was handed out, so every seed below it
    // ran, and the budget stopped only seeds it would not have run. Else a
    // result would say it stopped early, or not, by the clock.
    let settled = failure.is_some() && !opts.keep_going;
    let stopped_early = stopped.load(Ordering::Relaxed) && handed < total && !settled;
    let covered = if stopped_early {
        (handed > 0).then(|| SeedRange { first: range.first, last: range.first + handed - 1 })
    } else {
        Some(range)
    };
    let covered_len = covered.map_or(0, |c| c.len());
    let schedules = match (&failure, opts.keep_going) {
        // Saturating: the whole u64 range holds one seed more than a u64 counts.
        (Some((seed, _)), false) => (seed - range.first).saturating_add(1),
        _ => covered_len,
    };
    let failures = if opts.keep_going { failures.load(Ordering::Relaxed) } else { u64::from(failure.is_some()) };
    HuntResult {
        schedules,
        failure,
        failures,
        distinct: all.into_inner().unwrap().into_values().collect(),
        covered,
        stopped_early,
        jobs,
    }
}

/// Compares two recorded runs of the same seed: `None` if their traces are
/// identical, else where they first differ (`--check-determinism`).
///
/// Panics if either run was not recorded: there would be nothing to compare,
/// and "no divergence" would be a false pass.
pub fn first_divergence(a: &crate::Run, b: &crate::Run) -> Option<String> {
    let recorded = "first_divergence compares recorded runs (Sim::record(true))";
    let (ta, tb) = (a.trace.as_ref().expect(recorded), b.trace.as_ref().expect(recorded));
    if ta == tb {
        return None;
    }
    let n = ta.events.len().min(tb.events.len());
    if let Some(i) = (0..n).find(|&i| ta.events[i] != tb.events[i]) {
        let (ea, eb) = (&ta.events[i], &tb.events[i]);
        return Some(format!(
            "the same seed ran differently twice: first divergent event at step {} (event {i}: {:?} of task {} vs {:?} of task {})",
            ea.step.min(eb.step),
            ea.kind,
            ea.task,
            eb.kind,
            eb.task
        ));
    }
    if ta.events.len() != tb.events.len() {
        return Some(format!(
            "the same seed ran differently twice: {} events vs {} (they agree up to event {n})",
            ta.events.len(),
            tb.events.len()
        ));
    }
    Some("the same seed ran differently twice: identical events, different tables or outcome".to_string())
}

/// The share `k / n` with its 95% Wilson score interval.
pub fn wilson(k: u64, n: u64) -> (f64, f64, f64) {
    if n == 0 {
        return (0.0, 0.0, 1.0);
    }
    let (k, n, z) = (k as f64, n as f64, 1.959_963_984_540_054);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n) + z * z / (4.0 * n * n)).sqrt() / denom;
    // At k = 0 (k = n) the bound is 0 (1) exactly; computed, it is off by a rounding.
    let lo = if k == 0.0 { 0.0 } else { (centre - half).max(0.0) };
    let hi = if k == n { 1.0 } else { (centre + half).min(1.0) };
    (p, lo, hi)
}

/// The `i`-th of `n` contiguous blocks of `range` (`i` 0-based), each of
/// `len / n` or one more seeds, or `None` for every `i` when the range has
/// fewer seeds than `n`: a split with an empty block is refused as a whole,
/// not shard by shard.
pub fn shard(range: SeedRange, i: u64, n: u64) -> Option<SeedRange> {
    let len = range.count();
    let (i, n) = (i as u128, n as u128);
    if n > len || i >= n {
        return None;
    }
    let lo = len * i / n;
    let hi = len * (i + 1) / n;
    let at = |k: u128| (range.first as u128 + k) as u64;
    (hi > lo).then(|| SeedRange { first: at(lo), last: at(hi - 1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_divergence_finds_where_two_runs_part() {
        let abba = crate::models::find("abba").unwrap().configure(&[]).unwrap();
        let (a, again, b) = (abba.run(0, true), abba.run(0, true), abba.run(1, true));
        assert_eq!(first_divergence(&a, &again), None);
        let ta = a.trace.as_ref().unwrap();
        let tb = b.trace.as_ref().unwrap();
        let i = (0..ta.events.len().min(tb.events.len())).find(|&i| ta.events[i] != tb.events[i]).unwrap();
        let step = ta.events[i].step.min(tb.events[i].step);
        let d = first_divergence(&a, &b).expect("seeds 0 and 1 of abba run differently");
        assert!(d.contains(&format!("first divergent event at step {step} (event {i}:")), "{d}");
        // Same events, different outcome: said so, not passed.
        let mut c = abba.run(0, true);
        c.trace.as_mut().unwrap().meta.verdict = "no-deadlock".into();
        assert!(first_divergence(&a, &c).unwrap().contains("identical events, different tables or outcome"));
    }

    #[test]
    #[should_panic(expected = "compares recorded runs")]
    fn first_divergence_refuses_runs_without_traces() {
        let abba = crate::models::find("abba").unwrap().configure(&[]).unwrap();
        first_divergence(&abba.run(0, false), &abba.run(0, false));
    }

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
                Outcome::StepLimit { steps: seed, blocked: Vec::new(), running: Box::default(), shared: Box::default() }
            } else {
                Outcome::Completed
            }
        };
        let range: SeedRange = "100..1000".parse().unwrap();
        for jobs in [1, 2, 3, 8] {
            let r = hunt(range, jobs, run);
            assert_eq!(r.failure.as_ref().map(|f| f.0), Some(111), "jobs={jobs}");
            assert_eq!(r.schedules, 12);
            // Other jobs may have run into 148 or 185 before they stopped.
            assert_eq!(r.failures, 1, "jobs={jobs}");
        }
        // Every seed from 111 on fails, and the ones before are slow: the
        // other jobs' first seeds fail before the first job gets to 111.
        let from_111 = |seed: u64| {
            if seed >= 111 {
                Outcome::StepLimit { steps: seed, blocked: Vec::new(), running: Box::default(), shared: Box::default() }
            } else {
                std::thread::sleep(std::time::Duration::from_millis(2));
                Outcome::Completed
            }
        };
        let r = hunt(range, 8, from_111);
        assert_eq!((r.failure.as_ref().map(|f| f.0), r.schedules, r.failures), (Some(111), 12, 1));
        let none = hunt("1..30".parse().unwrap(), 4, run);
        assert!(none.failure.is_none());
        assert_eq!((none.schedules, none.failures), (29, 0));
    }

    #[test]
    fn keep_going_counts_every_failure_and_groups_them() {
        let run = |seed: u64| match seed % 10 {
            3 => Outcome::StepLimit { steps: 1, blocked: Vec::new(), running: Box::default(), shared: Box::default() },
            7 => Outcome::StepLimit { steps: 2, blocked: Vec::new(), running: Box::default(), shared: Box::default() },
            _ => Outcome::Completed,
        };
        for jobs in [1, 3] {
            let r = hunt_with(
                "0..100".parse().unwrap(),
                &HuntOptions { jobs, keep_going: true, ..Default::default() },
                run,
            );
            assert_eq!((r.failures, r.schedules), (20, 100));
            assert_eq!(r.failure.as_ref().unwrap().0, 3);
            let d: Vec<(u64, u64)> = r.distinct.iter().map(|d| (d.lowest_seed, d.count)).collect();
            assert_eq!(d, vec![(3, 10), (7, 10)]);
        }
        let (p, lo, hi) = wilson(20, 100);
        assert!((p - 0.2).abs() < 1e-12 && lo > 0.13 && lo < 0.14 && hi > 0.28 && hi < 0.30, "{lo} {hi}");
        // No failure: the interval starts at 0 itself (computed, it was 3.5e-18).
        let (p, lo, hi) = wilson(0, 101);
        assert!(p == 0.0 && lo == 0.0 && hi > 0.036 && hi < 0.037, "{lo} {hi}");
        let (p, lo, hi) = wilson(101, 101);
        assert!(p == 1.0 && hi == 1.0 && lo > 0.963 && lo < 0.964, "{lo} {hi}");
    }

    #[test]
    fn numbered_names_are_one_role() {
        assert_eq!(role("caller-3"), "caller-*");
        assert_eq!(role("serverConn.run.func2#17"), "serverConn.run.func2#*");
        assert_eq!(role("stream#9.recv"), "stream#*.recv");
        assert_eq!(role("channel-0.bufferQueue"), "channel-*.bufferQueue");
        assert_eq!(role("T1"), "T1");
        assert_eq!(role("client->server"), "client->server");
    }

    #[test]
    fn a_cycle_signs_alike_from_whichever_task_it_starts() {
        let blocked = |name: &str, waits_for: &str| crate::outcome::BlockedTask {
            task: 0,
            name: name.into(),
            op: "lock".into(),
            waits_for: waits_for.into(),
            resource: None,
            kind: "mutex".into(),
            released_by: Vec::new(),
            released_by_ids: Vec::new(),
            stack: Vec::new(),
            holds: Vec::new(),
            undeclared: false,
            returned: Vec::new(),
            closers_only: false,
            only_itself: false,
            closing: Vec::new(),
            full: None,
            counter: None,
            forgot_done: Vec::new(),
            forgot_done_names: Vec::new(),
            cond: false,
        };
        let sign = |names: &[(&str, &str)]| {
            signature(&Outcome::Deadlock(Box::new(crate::outcome::Deadlock {
                global: true,
                step: 0,
                time: 0,
                cycle: names.iter().map(|(n, w)| blocked(n, w)).collect(),
                behind: Vec::new(),
                running: Vec::new(),
                running_ids: Vec::new(),
                waiting: Vec::new(),
                waiting_ids: Vec::new(),
                shared: Vec::new(),
                notifies: Vec::new(),
            })))
        };
        let (p, q, r) = (("p1", "B"), ("q1", "A"), ("q1", "C"));
        assert_eq!(sign(&[q, p]), "deadlock: p1 lock B -> q1 lock A");
        assert_eq!(sign(&[p, q]), sign(&[q, p]));
        // A role that comes twice: the whole rotation decides, not its first part.
        let want = "deadlock: p1 lock B -> q1 lock A -> p1 lock B -> q1 lock C";
        for cycle in [[p, q, p, r], [q, p, r, p], [p, r, p, q], [r, p, q, p]] {
            assert_eq!(sign(&cycle), want, "{cycle:?}");
        }
    }

    #[test]
    fn shards_partition_the_range() {
        let range: SeedRange = "10..=109".parse().unwrap();
        let blocks: Vec<SeedRange> = (0..3).filter_map(|i| shard(range, i, 3)).collect();
        assert_eq!(blocks.iter().map(|b| b.len()).sum::<u64>(), 100);
        assert_eq!(blocks[0].first, 10);
        assert_eq!(blocks[2].last, 109);
        assert!(blocks.windows(2).all(|w| w[0].last + 1 == w[1].first));
        let tiny: SeedRange = "0..2".parse().unwrap();
        // More shards than seeds: every shard of the split is refused alike.
        assert_eq!((0..3).map(|i| shard(tiny, i, 3)).collect::<Vec<_>>(), vec![None, None, None]);
        assert_eq!(shard(tiny, 1, 2), Some(SeedRange { first: 1, last: 1 }));
        assert_eq!(shard(range, 3, 3), None, "no shard 3 of 3");
        // Every seed of the whole u64 range, u64::MAX among them, falls in a shard.
        let all = SeedRange { first: 0, last: u64::MAX };
        assert_eq!(shard(all, 0, 2), Some(SeedRange { first: 0, last: u64::MAX / 2 }));
        assert_eq!(shard(all, 1, 2), Some(SeedRange { first: u64::MAX / 2 + 1, last: u64::MAX }));
        assert_eq!(all.count(), 1u128 << 64);
        assert_eq!(all.len(), u64::MAX, "len saturates");
    }

    #[test]
    fn empty_ranges_say_why() {
        let err = |s: &str| s.parse::<SeedRange>().unwrap_err();
        assert_eq!(err("10..3"), "`10..3` is empty: 3 is below 10 (write the lower seed first)");
        assert_eq!(err("10..=3"), "`10..=3` is empty: 3 is below 10 (write the lower seed first)");
        assert_eq!(err("4..4"), "`4..4` is empty (A..B excludes B); write 4..=4 or 4 for the one seed");
        // The advice given works.
        assert_eq!("4..=4".parse::<SeedRange>().unwrap(), SeedRange { first: 4, last: 4 });
    }

    #[test]
    fn a_spent_budget_runs_the_first_chunk_and_a_stop_runs_nothing() {
        use std::sync::atomic::AtomicBool;
        static STOP: AtomicBool = AtomicBool::new(true);
        let range: SeedRange = "100..1000".parse().unwrap();
        let ran = AtomicU64::new(0);
        let run = |_| {
            ran.fetch_add(1, Ordering::Relaxed);
            Outcome::Completed
        };
        let spent = HuntOptions {
            jobs: 1,
            keep_going: false,
            time_budget: Some(std::time::Duration::ZERO),
            progress: None,
            stop: None,
        };
        let r = hunt_with(range, &spent, run);
        assert!(r.stopped_early);
        assert_eq!(r.covered, Some(SeedRange { first: 100, last: 100 + CHUNK - 1 }));
        assert_eq!((r.schedules, ran.load(Ordering::Relaxed)), (CHUNK, CHUNK));
        // A range of one chunk is all run before the budget is looked at:
        // the budget stopped nothing.
        let one: SeedRange = "100..116".parse().unwrap();
        let r = hunt_with(one, &spent, run);
        assert!(!r.stopped_early, "{:?}", r.covered);
        assert_eq!((r.covered, r.schedules), (Some(one), CHUNK));
        let stopped = HuntOptions { time_budget: None, stop: Some(&STOP), ..spent };
        ran.store(0, Ordering::Relaxed);
        let r = hunt_with(range, &stopped, run);
        assert!(r.stopped_early);
        assert_eq!((r.covered, r.schedules, ran.load(Ordering::Relaxed)), (None, 0, 0));
        // A failure in the first chunk settles a lowest-failure hunt: the
        // spent budget stopped nothing it would have run, for any job count.
        let fails_at_105 = |seed| {
            if seed == 105 {
                Outcome::Invariant { task: "t".into(), message: "m".into(), frames: Vec::new() }
            } else {
                Outcome::Completed
            }
        };
        for jobs in [1, 2] {
            let r = hunt_with(range, &HuntOptions { jobs, ..spent }, fails_at_105);
            assert!(!r.stopped_early, "{jobs} jobs: {:?}", r.covered);
            assert_eq!((r.failure.map(|f| f.0), r.schedules, r.covered), (Some(105), 6, Some(range)));
            // Running every seed, it is cut short as before.
            let r = hunt_with(range, &HuntOptions { jobs, keep_going: true, ..spent }, fails_at_105);
            assert!(r.stopped_early && r.covered.unwrap().last < 999, "{jobs} jobs: {:?}", r.covered);
        }
    }

    #[test]
    fn more_jobs_than_chunks_of_seeds_give_the_one_job_result() {
        let range: SeedRange = "0..100".parse().unwrap();
        let fail = |seed: u64| {
            if seed % 37 == 36 {
                Outcome::Invariant { task: "t".into(), message: "m".into(), frames: Vec::new() }
            } else {
                Outcome::Completed
            }
        };
        let one = hunt(range, 1, fail);
        let many = hunt(range, 100_000, fail);
        assert_eq!((many.failure.map(|f| f.0), many.schedules), (one.failure.map(|f| f.0), one.schedules));
        assert_eq!(one.schedules, 37);
    }
}
