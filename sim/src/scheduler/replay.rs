//! Schedule strings, and replaying one exactly.
//!
//! A schedule is every choice of a run that had alternatives (the task picked
//! when more than one was enabled, the case of a `select` with several ready
//! cases, ...), in order. Its string form carries the model and a
//! fingerprint of its parameters, so a schedule is never replayed against
//! the wrong model silently:
//!
//! ```text
//! ds1:abba:a5167e82:1.2x2.1
//! ```
//!
//! (`deadsim run abba --seed 0` prints it: `abba`'s default parameters have
//! the fingerprint `a5167e82`.) `2x2` is the choice 2 two times. Replay stops with a clear message at
//! the first step where the schedule no longer fits the model.
//!
//! ```
//! use sim::scheduler::Schedule;
//! let s = Schedule { model: "abba".into(), fingerprint: "a5167e82".into(), choices: vec![1, 2, 2, 1] };
//! let text = s.encode();
//! assert_eq!(text, "ds1:abba:a5167e82:1.2x2.1");
//! assert_eq!(Schedule::parse(&text).unwrap(), s);
//! ```

use super::{Halt, Strategy};
use crate::rt::{TaskId, TaskSet};
use crate::trace::Param;

/// A decoded schedule string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub model: String,
    pub fingerprint: String,
    pub choices: Vec<u32>,
}

const PREFIX: &str = "ds1";

/// The fingerprint of a model and its parameters: FNV-1a (32 bits) over
/// the bytes of `model`, then of each parameter's name and value in turn,
/// each followed by a NUL byte, as 8 hex digits.
pub fn fingerprint(model: &str, params: &[Param]) -> String {
    let mut h: u32 = 0x811c_9dc5;
    let mut eat = |s: &str| {
        for b in s.bytes().chain(std::iter::once(0)) {
            h ^= b as u32;
            h = h.wrapping_mul(0x0100_0193);
        }
    };
    eat(model);
    for p in params {
        eat(&p.name);
        eat(&p.value);
    }
    format!("{h:08x}")
}

impl Schedule {
    /// The printable form.
    pub fn encode(&self) -> String {
        let mut out = format!("{PREFIX}:{}:{}:", self.model, self.fingerprint);
        let mut i = 0;
        let mut first = true;
        while i < self.choices.len() {
            let v = self.choices[i];
            let mut n = 1;
            while i + n < self.choices.len() && self.choices[i + n] == v {
                n += 1;
            }
            if !first {
                out.push('.');
            }
            first = false;
            if n == 1 {
                out.push_str(&v.to_string());
            } else {
                out.push_str(&format!("{v}x{n}"));
            }
            i += n;
        }
        out
    }

    /// The most choices [`Schedule::parse`] takes (400 MB laid out).
    pub const MAX_CHOICES: usize = 100_000_000;

    /// Choices a replay of at most `max_steps` steps reads at most, for
    /// [`Schedule::parse_within`]: 16 a step (a step makes one choice, or a
    /// few), and never fewer than 10,000,000, so that a string a short run
    /// cannot use is refused before it is laid out.
    pub fn choices_for(max_steps: u64) -> usize {
        max_steps.saturating_mul(16).max(10_000_000).min(usize::MAX as u64) as usize
    }

    /// Parses a schedule string; the error names what is wrong with it.
    pub fn parse(text: &str) -> Result<Schedule, String> {
        Schedule::parse_within(text, Schedule::MAX_CHOICES)
    }

    /// [`Schedule::parse`] of a string of at most `max_choices` choices,
    /// counted before they are laid out: a short string (`1x10000000` nine
    /// times) costs nothing to refuse.
    pub fn parse_within(text: &str, max_choices: usize) -> Result<Schedule, String> {
        let text = text.trim();
        let mut parts = text.splitn(4, ':');
        let (Some(prefix), Some(model), Some(fp), Some(body)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(format!("schedule `{}`: expected {PREFIX}:MODEL:FINGERPRINT:CHOICES", abbreviate(text)));
        };
        if prefix.contains(char::is_whitespace) && prefix.ends_with(PREFIX) {
            // The whole replay command pasted, not its schedule string.
            return Err(format!("schedule: give the {PREFIX}:... string alone, not the command around it"));
        }
        if prefix != PREFIX {
            return Err(format!("schedule: unknown format `{prefix}` (this deadsim reads {PREFIX})"));
        }
        if model.is_empty() || !model.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!("schedule: `{model}` is not a model name"));
        }
        if fp.len() != 8 || !fp.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("schedule: fingerprint `{fp}` is not 8 hex digits"));
        }
        // The parts first, then the choices, all at once: a short string
        // (`1x10000000` nine times) must not cost gigabytes before it is
        // refused.
        let mut parts: Vec<(u32, usize)> = Vec::new();
        let mut total: u64 = 0;
        if !body.is_empty() {
            // An error names the part as written, counted from 1 (`part 2
            // `2x02``): a part `2x3` is three choices, and "choices"
            // elsewhere (unused ones, divergence) counts those.
            for (i, tok) in body.split('.').enumerate() {
                let (v, n) = match tok.split_once('x') {
                    Some((v, n)) => (v, Some(n)),
                    None => (tok, None),
                };
                // Written as `encode` writes them: plain digits, no sign, no
                // leading zero (Rust's parse alone would take `+2` and `02`).
                let canonical = |d: &str| {
                    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && (d == "0" || !d.starts_with('0'))
                };
                // Anything else that reads as a number is refused as written.
                let plain = |d: &str| {
                    (!canonical(d) && d.parse::<u64>().is_ok()).then(|| {
                        format!(
                            "schedule: part {} `{tok}`: numbers are written as deadsim prints them, \
                             in plain digits with no sign or leading zero",
                            i + 1
                        )
                    })
                };
                if let Some(e) = plain(v).or_else(|| n.and_then(plain)) {
                    return Err(e);
                }
                let v: u32 = v
                    .parse()
                    .map_err(|_| format!("schedule: part {} `{tok}` is not a number from 0 to {}", i + 1, u32::MAX))?;
                let n: usize = match n {
                    None => 1,
                    Some(n) => n.parse().ok().filter(|k| (1..=10_000_000).contains(k)).ok_or_else(|| {
                        format!("schedule: part {} `{tok}` has a bad repeat count (1 to 10000000 after the x)", i + 1)
                    })?,
                };
                total += n as u64;
                parts.push((v, n));
            }
        }
        if total > max_choices as u64 {
            return Err(format!("schedule: {total} choices, more than the {max_choices} this replay reads"));
        }
        let mut choices = Vec::with_capacity(total as usize);
        for (v, n) in parts {
            choices.extend(std::iter::repeat_n(v, n));
        }
        Ok(Schedule { model: model.to_string(), fingerprint: fp.to_ascii_lowercase(), choices })
    }

    /// Checks that this schedule was recorded on `model` with these parameters.
    pub fn check_for(&self, model: &str, params: &[Param]) -> Result<(), String> {
        if self.model != model {
            return Err(format!("this schedule was recorded on model {}, not {model}", self.model));
        }
        let fp = fingerprint(model, params);
        if self.fingerprint != fp {
            return Err(format!(
                "this schedule was recorded with other parameters of {model} (fingerprint {}; these \
                 parameters give {fp}): pass the parameters it was recorded with",
                self.fingerprint
            ));
        }
        Ok(())
    }
}

fn abbreviate(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Follows a schedule's choices exactly; stops the run where they no longer fit.
pub struct ReplayStrategy {
    choices: Vec<u32>,
    pos: usize,
    halt: Option<String>,
    /// The strategy a recorded replay names in its trace.
    name: &'static str,
}

impl ReplayStrategy {
    pub fn new(choices: Vec<u32>) -> ReplayStrategy {
        ReplayStrategy { choices, pos: 0, halt: None, name: "replay" }
    }

    /// A replay that records the run of the strategy that found it (`dfs`
    /// for `explore`'s failing schedule), so its trace says where it came from.
    pub fn named(choices: Vec<u32>, name: &'static str) -> ReplayStrategy {
        ReplayStrategy { name, ..ReplayStrategy::new(choices) }
    }

    fn next(&mut self, what: impl FnOnce() -> String) -> Option<u32> {
        match self.choices.get(self.pos) {
            Some(&c) => {
                self.pos += 1;
                Some(c)
            }
            None => {
                if self.halt.is_none() {
                    self.halt = Some(format!("the schedule ends, but the run goes on ({})", what()));
                }
                None
            }
        }
    }
}

impl Strategy for ReplayStrategy {
    fn pick_task(&mut self, enabled: &TaskSet, _last: Option<TaskId>, _step: u64) -> TaskId {
        let first = enabled.nth(0);
        if enabled.len() == 1 || self.halt.is_some() {
            return first;
        }
        let Some(t) = self.next(|| format!("{} tasks could run", enabled.len())) else { return first };
        if enabled.contains(t) {
            t
        } else {
            let list: Vec<String> = enabled.iter().map(|x| x.to_string()).collect();
            self.halt = Some(format!("task {t} is not enabled (enabled: {})", list.join(", ")));
            first
        }
    }

    fn pick_index(&mut self, n: usize) -> usize {
        if self.halt.is_some() {
            return 0;
        }
        let Some(k) = self.next(|| format!("a choice among {n}")) else { return 0 };
        if (k as usize) < n {
            k as usize
        } else {
            self.halt = Some(format!("choice {k} is out of range (there are {n} alternatives)"));
            0
        }
    }

    fn name(&self) -> String {
        self.name.to_string()
    }

    fn may_halt(&self) -> bool {
        true
    }

    fn halt(&mut self) -> Option<Halt> {
        self.halt.take().map(Halt::Diverged)
    }
}
