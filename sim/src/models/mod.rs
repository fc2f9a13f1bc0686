//! Built-in models and the registry the CLI and hunts use.
//!
//! A model is a function that spawns tasks in a simulation, plus a
//! description of its parameters. [`Model::configure`] checks parameters
//! given as text (from the command line) and returns a [`Configured`] model
//! that runs any seed.

mod abba;
pub mod flink;
mod philosophers;
pub mod ttrpc;

pub use abba::Abba;
pub use flink::Flink;
pub use philosophers::Philosophers;
pub use ttrpc::Ttrpc;

use std::sync::Arc;

use crate::trace::Param;
use crate::{Run, Sim};

/// What a parameter takes.
#[derive(Clone, Copy, Debug)]
pub enum ParamKind {
    /// A switch: present means true.
    Flag,
    /// A whole number in `min..=max`.
    Int { min: u64, max: u64 },
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A decimal number in `min..=max`.
    Float { min: f64, max: f64 },
}

/// A parameter a model accepts (the CLI flag is `--name`).
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: &'static str,
    pub help: &'static str,
}

/// The verdict a variant is expected to have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Deadlock,
    NoDeadlock,
}

impl Expect {
    pub fn as_str(self) -> &'static str {
        match self {
            Expect::Deadlock => "deadlock",
            Expect::NoDeadlock => "no-deadlock",
        }
    }
}

/// A named setting of a model that `deadsim hunt` (no model) runs.
#[derive(Clone, Debug)]
pub struct Variant {
    /// How a user selects it on the command line (`--fixed`), "" for the defaults.
    pub label: String,
    pub params: Vec<(String, String)>,
    pub expect: Expect,
}

/// A model the CLI knows by name.
pub trait Model: Send + Sync {
    fn name(&self) -> &'static str;
    /// One line: what it models.
    fn about(&self) -> &'static str;
    fn params(&self) -> &'static [ParamSpec];
    /// The variants hunted by `deadsim hunt` without a model.
    fn variants(&self) -> Vec<Variant>;
    /// Checks `params` (name, value) and returns the runnable model.
    fn configure(&self, params: &[(String, String)]) -> Result<Configured, String>;
    /// A two-parameter grid that `deadsim hunt <model> --matrix` runs cell by cell.
    fn matrix(&self) -> Option<Matrix> {
        None
    }
    /// The parameters that say which code is run (a release, a scenario):
    /// a report's header names them even at their defaults, so that
    /// `ttrpc --client v1.2.3` is not read without the server it ran
    /// against. Commands a report prints give only non-defaults.
    fn label_params(&self) -> &'static [&'static str] {
        &[]
    }
}

/// A grid of variants: rows set one parameter, columns another.
#[derive(Clone, Debug)]
pub struct Matrix {
    pub row_param: &'static str,
    pub rows: Vec<&'static str>,
    pub col_param: &'static str,
    pub cols: Vec<&'static str>,
    /// The expected verdict of cell (row, column).
    pub expect: Vec<Vec<Expect>>,
}

type Runner = dyn Fn(Sim) -> Run + Send + Sync;

/// A model with its parameters fixed: runs any seed. Hunts
/// ([`crate::hunt`]), PCT ([`crate::scheduler::StrategyKind::run`]),
/// exhaustive exploration ([`crate::scheduler::explore`]), shrinking
/// ([`crate::scheduler::shrink`]) and replay ([`Configured::replay`]) all
/// take one, so a model of your own gets all of them through
/// [`Configured::of`] (or [`Configured::new`], with parameters):
///
/// ```
/// use sim::models::Configured;
/// use sim::scheduler::{explore, shrink, ExploreConfig, StrategyKind};
/// use sim::sync::Mutex;
///
/// // Your model: main spawns two tasks that take two locks in opposite orders.
/// let model = Configured::of("my-abba", || async {
///     let (a, b) = (Mutex::new("A"), Mutex::new("B"));
///     for (name, first, second) in [("T1", a, b), ("T2", b, a)] {
///         sim::spawn(name, async move {
///             let g1 = first.lock().await;
///             let g2 = second.lock().await;
///             g2.unlock().await;
///             g1.unlock().await;
///         });
///     }
/// });
/// // Random search, then PCT (depth 3), seed by seed.
/// let seed = (0..100).find(|&s| model.run(s, false).outcome.is_failure()).unwrap();
/// assert!((0..100).any(|s| StrategyKind::Pct(3).run(&model, s, false, 10_000).outcome.is_failure()));
/// // The failing seed recorded, shrunk, and its schedule string replayed.
/// let failing = model.run(seed, true);
/// let small = shrink(&model, &failing, 10_000).unwrap();
/// let schedule = small.run.schedule().unwrap();
/// assert_eq!(model.replay(schedule).unwrap().outcome.verdict(), "deadlock");
/// // Every schedule, with partial-order reduction: the deadlock is found.
/// let all = explore(&model, &ExploreConfig::default());
/// assert!(all.failure.is_some());
/// ```
#[derive(Clone)]
pub struct Configured {
    pub model: &'static str,
    /// Every parameter with its value (defaults filled in), in spec order.
    pub params: Arc<[Param]>,
    runner: Arc<Runner>,
}

/// Why a schedule did not replay to the run it was recorded from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotReplayed {
    /// The run stopped where the schedule no longer fits (the choice it
    /// names is not there), or where it ends while the run goes on: the
    /// outcome's summary, which says which.
    Stopped(String),
    /// The run ended with choices of the schedule left over: the model
    /// ended sooner (it changed since), or a step limit cut it short.
    Unused {
        /// Steps the run took, and its verdict in words ("no deadlock").
        steps: u64,
        verdict: &'static str,
        /// The run ended at its step limit.
        step_limit: bool,
        /// Choices the run used, of those `given`.
        used: usize,
        given: usize,
    },
}

impl std::fmt::Display for NotReplayed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotReplayed::Stopped(summary) => f.write_str(summary),
            NotReplayed::Unused { steps, step_limit: true, used, given, .. } => write!(
                f,
                "the run hit its step limit at step {steps} with {} of the schedule's {given} choices unused",
                given - used
            ),
            NotReplayed::Unused { steps, verdict, used, given, .. } => write!(
                f,
                "the run ended at step {steps} ({verdict}) with {} of the schedule's {given} choices unused: the \
                 schedule does not fit this model",
                given - used
            ),
        }
    }
}

impl Configured {
    /// A model named `model`, with `params` (every parameter with its value:
    /// they go into traces, and a schedule string's fingerprint is made
    /// from them), run by `runner` on the [`Sim`] it is given, as
    /// `|sim| sim.run(|| my_model(n))`.
    ///
    /// # Panics
    /// If `model` is empty or has a character other than an ASCII letter,
    /// digit, `-` or `_`: it goes into schedule strings
    /// (`ds1:my-model:...`), which could not be read back.
    pub fn new(model: &'static str, params: Vec<Param>, runner: impl Fn(Sim) -> Run + Send + Sync + 'static) -> Self {
        assert!(
            !model.is_empty() && model.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "model name `{model}`: use ASCII letters, digits, `-` and `_` (it goes into schedule strings)"
        );
        Configured { model, params: params.into(), runner: Arc::new(runner) }
    }

    /// A model of your own with no parameters: `main` makes the model's main
    /// task afresh for every run. `name` goes into its traces and schedule
    /// strings, so a schedule of one model is refused by another (see the
    /// example on [`Configured`]). The fingerprint is of the name alone:
    /// settings the closure captures are not in it, so a model with
    /// settings gives them as parameters ([`Configured::new`]), or a name
    /// each, for a schedule of one setting to be refused by another.
    /// `name` is made of ASCII letters, digits, `-` and `_` (see
    /// [`Configured::new`], which panics otherwise).
    pub fn of<F, Fut>(name: &'static str, main: F) -> Configured
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = ()> + 'static,
    {
        let main = Arc::new(main);
        Configured::new(name, Vec::new(), move |sim| {
            let main = main.clone();
            sim.run(move || main())
        })
    }

    /// Runs a schedule string (`meta.replay` of a trace, or the one a
    /// report prints) with recording on: the same run, step for step. A
    /// schedule of another model or other parameters is refused, and one
    /// that no longer fits the model (changed since) says at which step.
    /// It runs to [`crate::DEFAULT_MAX_STEPS`]: a run stopped at a lower
    /// step limit ([`Sim::max_steps`]; the string does not carry it) is
    /// replayed with that limit by [`Configured::replay_schedule`], as
    /// `deadsim replay --max-steps` does.
    pub fn replay(&self, schedule: &str) -> Result<Run, String> {
        let s = crate::scheduler::Schedule::parse(schedule)?;
        s.check_for(self.model, &self.params)?;
        self.replay_schedule(&s, crate::DEFAULT_MAX_STEPS).map_err(|e| e.to_string())
    }

    /// Runs `schedule` (checked against this model already: see
    /// [`Schedule::check_for`](crate::scheduler::Schedule::check_for)) with
    /// recording on, stopping at `max_steps`; a run that is not the one the
    /// schedule was recorded from is a [`NotReplayed`]. The one replay
    /// behind `deadsim replay --schedule`, `render`'s check of a trace and
    /// [`Configured::replay`].
    pub fn replay_schedule(&self, schedule: &crate::scheduler::Schedule, max_steps: u64) -> Result<Run, NotReplayed> {
        let given = schedule.choices.len();
        let run = self.run_with(
            Sim::new(0)
                .record(true)
                .max_steps(max_steps)
                .strategy(Box::new(crate::scheduler::ReplayStrategy::new(schedule.choices.clone()))),
        );
        if let crate::Outcome::Stopped { .. } = &run.outcome {
            return Err(NotReplayed::Stopped(run.outcome.summary()));
        }
        // Choices left over: the model ended sooner than the run the
        // schedule was recorded from, which is another run.
        let used = run
            .trace
            .as_ref()
            .and_then(|t| crate::scheduler::Schedule::parse(&t.meta.replay).ok())
            .map_or(given, |u| u.choices.len());
        if used < given {
            return Err(NotReplayed::Unused {
                steps: run.steps,
                verdict: run.outcome.verdict_text(),
                step_limit: matches!(run.outcome, crate::Outcome::StepLimit { .. }),
                used,
                given,
            });
        }
        Ok(run)
    }

    /// Runs `sim` (seed, strategy, recording already set) on this model.
    pub fn run_with(&self, sim: Sim) -> Run {
        // Only a trace names the model: a hunt's runs skip the reference
        // count updates of sharing the parameters.
        let sim = if sim.records() { sim.label(self.model, self.params.clone()) } else { sim };
        (self.runner)(sim)
    }

    /// Runs one seed with the random strategy.
    pub fn run(&self, seed: u64, record: bool) -> Run {
        self.run_with(Sim::new(seed).record(record))
    }

    /// The command-line flags that select these parameters (non-defaults only).
    pub fn flags(&self, specs: &[ParamSpec]) -> String {
        self.flags_with(specs, &[])
    }

    /// [`Configured::flags`], with the parameters named in `always` given
    /// at their defaults too (see [`Model::label_params`]).
    pub fn flags_with(&self, specs: &[ParamSpec], always: &[&str]) -> String {
        let mut out = Vec::new();
        for p in self.params.iter() {
            let spec = specs.iter().find(|s| s.name == p.name);
            if !always.contains(&p.name.as_str()) && spec.is_some_and(|s| canonical(s.kind, s.default) == p.value) {
                continue;
            }
            out.extend(arg_words(specs, &p.name, &p.value));
        }
        out.join(" ")
    }
}

/// The command-line words that set parameter `name` to `value`: `--name
/// value`, or `--name` alone for a flag that is on (none for one that is off).
pub fn arg_words(specs: &[ParamSpec], name: &str, value: &str) -> Vec<String> {
    match specs.iter().find(|s| s.name == name).map(|s| s.kind) {
        Some(ParamKind::Flag) if value == "false" => vec![],
        Some(ParamKind::Flag) => vec![format!("--{name}")],
        _ => vec![format!("--{name}"), value.to_string()],
    }
}

/// Parsed parameter values, checked against a model's specs.
pub struct Params<'a> {
    specs: &'static [ParamSpec],
    given: &'a [(String, String)],
    model: &'static str,
}

impl<'a> Params<'a> {
    /// Checks that every given parameter is one of `specs`.
    pub fn new(
        model: &'static str,
        specs: &'static [ParamSpec],
        given: &'a [(String, String)],
    ) -> Result<Self, String> {
        for (name, _) in given {
            if !specs.iter().any(|s| s.name == name) {
                let known: Vec<String> = specs.iter().map(|s| format!("--{}", s.name)).collect();
                let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                return Err(format!("--{name} does not apply to model {model} (its parameters: {known})"));
            }
        }
        Ok(Params { specs, given, model })
    }

    /// The parameter's text as given (spaces around it are no part of
    /// it), or its default.
    pub fn text(&self, name: &str) -> &str {
        self.raw(name).trim()
    }

    fn raw(&self, name: &str) -> &str {
        let spec = self.specs.iter().find(|s| s.name == name).expect("parameter is in the spec");
        self.given.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).unwrap_or(spec.default)
    }

    /// A flag's value.
    pub fn flag(&self, name: &str) -> Result<bool, String> {
        match self.raw(name) {
            "true" | "" => Ok(true),
            "false" => Ok(false),
            v => Err(format!("--{name}: expected true or false, got `{v}`")),
        }
    }

    /// A whole number within the spec's range.
    pub fn int(&self, name: &str) -> Result<u64, String> {
        let spec = self.specs.iter().find(|s| s.name == name).unwrap();
        let ParamKind::Int { min, max } = spec.kind else { panic!("--{name} is not a number parameter") };
        let v = self.text(name);
        let n: u64 = v.parse().map_err(|_| format!("--{name}: `{v}` is not a whole number ({min} to {max})"))?;
        if n < min || n > max {
            return Err(format!("--{name}: {n} is out of range ({min} to {max}) for model {}", self.model));
        }
        Ok(n)
    }

    /// One of the spec's words.
    pub fn choice(&self, name: &str) -> Result<&'static str, String> {
        let spec = self.specs.iter().find(|s| s.name == name).unwrap();
        let ParamKind::Choice(words) = spec.kind else { panic!("--{name} is not a choice parameter") };
        let v = self.text(name);
        words
            .iter()
            .find(|w| **w == v)
            .copied()
            .ok_or_else(|| format!("--{name}: `{v}` is not one of {}", words.join(", ")))
    }

    /// A decimal number within the spec's range.
    pub fn float(&self, name: &str) -> Result<f64, String> {
        let spec = self.specs.iter().find(|s| s.name == name).unwrap();
        let ParamKind::Float { min, max } = spec.kind else { panic!("--{name} is not a decimal parameter") };
        let v = self.text(name);
        let x: f64 = v.parse().map_err(|_| format!("--{name}: `{v}` is not a number ({min} to {max})"))?;
        if !(min..=max).contains(&x) {
            return Err(format!("--{name}: {v} is out of range ({min} to {max}) for model {}", self.model));
        }
        Ok(x)
    }

    /// True if the user gave this parameter.
    pub fn given(&self, name: &str) -> bool {
        self.given.iter().any(|(n, _)| n == name)
    }

    /// Every parameter with its value, in spec order, for traces. Values
    /// are written one way whatever way they were typed (`--rounds 03` is
    /// `3`, `--fraction .50` is `0.5`), so the fingerprint of a schedule and
    /// the check of a merge compare what the parameters mean.
    pub fn normalized(&self) -> Vec<Param> {
        self.specs
            .iter()
            .map(|s| Param { name: s.name.to_string(), value: canonical(s.kind, self.raw(s.name)) })
            .collect()
    }
}

/// A parameter's value as [`Params::normalized`] writes it; text that does
/// not parse is kept as it is (reading it fails with its own message).
fn canonical(kind: ParamKind, text: &str) -> String {
    match kind {
        ParamKind::Flag if text.is_empty() => "true".to_string(),
        ParamKind::Int { .. } => text.trim().parse::<u64>().map_or_else(|_| text.to_string(), |n| n.to_string()),
        // `+ 0.0` writes -0 as 0; `{}` is the shortest text that reads back
        // the same, but writes a tiny one out in full (1e-320 in 320
        // digits): below 1e-4, `{:e}` (1e-320).
        ParamKind::Float { .. } => text.trim().parse::<f64>().map_or_else(
            |_| text.to_string(),
            |x| {
                let x = x + 0.0;
                if x != 0.0 && x.abs() < 1e-4 {
                    format!("{x:e}")
                } else {
                    x.to_string()
                }
            },
        ),
        ParamKind::Choice(_) => text.trim().to_string(),
        _ => text.to_string(),
    }
}

/// Every built-in model, in the order `deadsim models` lists them.
pub fn all() -> Vec<&'static dyn Model> {
    vec![&Abba, &Philosophers, &Ttrpc, &Flink]
}

/// The built-in model called `name`.
pub fn find(name: &str) -> Result<&'static dyn Model, String> {
    all().into_iter().find(|m| m.name() == name).ok_or_else(|| {
        let names: Vec<&str> = all().iter().map(|m| m.name()).collect();
        format!("unknown model `{name}` (models: {})", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_decimal_parameter_is_written_short_and_reads_back() {
        let kind = ParamKind::Float { min: 0.0, max: 1.0 };
        assert_eq!(canonical(kind, "1e-320"), "1e-320");
        assert_eq!(canonical(kind, "0.00001"), "1e-5");
        assert_eq!(canonical(kind, ".50"), "0.5");
        assert_eq!(canonical(kind, "-0"), "0");
        for t in ["1e-320", "0.000123456789", "0.3"] {
            let c = canonical(kind, t);
            assert_eq!(c.parse::<f64>().unwrap(), t.parse::<f64>().unwrap(), "{t} -> {c}");
        }
    }

    fn configured(model: &str, given: &[(&str, &str)]) -> Configured {
        let given: Vec<(String, String)> = given.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        find(model).unwrap().configure(&given).unwrap()
    }

    #[test]
    fn spaces_around_a_number_parameter_are_no_part_of_it() {
        // As around a seed or a count flag: ` 2` is 2, with 2's fingerprint.
        let spaced = configured("abba", &[("rounds", " 2 ")]);
        assert_eq!(spaced.params, configured("abba", &[("rounds", "2")]).params);
        assert_eq!(canonical(ParamKind::Float { min: 0.0, max: 1.0 }, " .5"), "0.5");
        // And around a word.
        let spaced = configured("ttrpc", &[("client", " v1.2.3")]);
        assert_eq!(spaced.params, configured("ttrpc", &[("client", "v1.2.3")]).params);
        let given = [("rounds".to_string(), "2 x".to_string())];
        let e = find("abba").unwrap().configure(&given).err().unwrap();
        assert_eq!(e, "--rounds: `2 x` is not a whole number (1 to 1000)");
    }

    #[test]
    #[should_panic(expected = "model name `my.model`: use ASCII letters, digits")]
    fn a_model_name_a_schedule_string_cannot_carry_is_refused() {
        Configured::of("my.model", || async {});
    }

    #[test]
    fn a_value_means_the_same_however_it_is_typed() {
        let fp = |c: &Configured| crate::scheduler::fingerprint(c.model, &c.params);
        for (model, a, b) in [
            ("abba", ("rounds", "03"), ("rounds", "3")),
            ("abba", ("rounds", "+3"), ("rounds", "3")),
            ("ttrpc", ("unregistered-fraction", ".50"), ("unregistered-fraction", "0.5")),
            ("ttrpc", ("unregistered-fraction", "5e-1"), ("unregistered-fraction", "0.5")),
            ("ttrpc", ("unregistered-fraction", "-0.0"), ("unregistered-fraction", "0")),
            ("abba", ("fixed", ""), ("fixed", "true")),
        ] {
            let (x, y) = (configured(model, &[a]), configured(model, &[b]));
            assert_eq!(x.params, y.params, "{a:?} vs {b:?}");
            assert_eq!(fp(&x), fp(&y), "{a:?} vs {b:?}");
            assert_eq!(x.flags(find(model).unwrap().params()), y.flags(find(model).unwrap().params()));
        }
        // A default typed another way is still the default: no flag to show.
        assert_eq!(configured("abba", &[("rounds", "03")]).flags(Abba.params()), "");
        assert_eq!(configured("ttrpc", &[("unregistered-fraction", "0.0")]).flags(Ttrpc.params()), "");
        // Another value is another fingerprint.
        assert_ne!(fp(&configured("abba", &[("rounds", "4")])), fp(&configured("abba", &[("rounds", "3")])));
    }
}
