//! `abba`: two threads, two Go mutexes, taken in opposite orders.
//!
//! The smallest lock-order deadlock, and the "write your own model" example
//! of the README: T1 takes A then B, T2 takes B then A, for a few rounds.
//! With `--fixed` both take A then B and no schedule deadlocks.

use super::{Configured, Expect, Model, ParamKind, ParamSpec, Params, Variant};
use crate::sync::Mutex;

/// The `abba` model.
pub struct Abba;

const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "fixed", kind: ParamKind::Flag, default: "false", help: "both threads take A then B" },
    ParamSpec {
        name: "rounds",
        kind: ParamKind::Int { min: 1, max: 1000 },
        default: "3",
        help: "lock rounds per thread",
    },
];

/// One thread: `rounds` times, lock `first`, lock `second`, unlock both.
pub async fn worker(first: Mutex, second: Mutex, rounds: u64) {
    let _f = crate::frame("abba::worker");
    for _ in 0..rounds {
        let g1 = crate::here!(first.lock()).await;
        let g2 = crate::here!(second.lock()).await;
        crate::here!(g2.unlock()).await;
        crate::here!(g1.unlock()).await;
    }
}

/// The model's main task: make the mutexes, start both threads.
pub async fn main(fixed: bool, rounds: u64) {
    let a = Mutex::new("A");
    let b = Mutex::new("B");
    crate::spawn("T1", worker(a, b, rounds));
    if fixed {
        crate::spawn("T2", worker(a, b, rounds));
    } else {
        crate::spawn("T2", worker(b, a, rounds));
    }
}

impl Model for Abba {
    fn name(&self) -> &'static str {
        "abba"
    }
    fn about(&self) -> &'static str {
        "two threads take two Go mutexes in opposite orders (AB/BA)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn variants(&self) -> Vec<Variant> {
        vec![
            Variant { label: String::new(), params: vec![], expect: Expect::Deadlock },
            Variant {
                label: "--fixed".into(),
                params: vec![("fixed".into(), "true".into())],
                expect: Expect::NoDeadlock,
            },
        ]
    }
    fn configure(&self, given: &[(String, String)]) -> Result<Configured, String> {
        let p = Params::new("abba", PARAMS, given)?;
        let fixed = p.flag("fixed")?;
        let rounds = p.int("rounds")?;
        Ok(Configured::new("abba", p.normalized(), move |sim| sim.run(move || main(fixed, rounds))))
    }
}
