//! `philosophers`: Dijkstra's dining philosophers with Go mutexes as forks.
//!
//! Philosopher i takes fork i, then fork i+1 (mod N): when all hold their
//! left fork, the N of them form a cycle. With `--ordered` each takes the
//! lower-numbered fork first, which breaks the cycle.

use super::{Configured, Expect, Model, ParamKind, ParamSpec, Params, Variant};
use crate::sync::Mutex;

/// The `philosophers` model.
pub struct Philosophers;

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "philosophers",
        kind: ParamKind::Int { min: 2, max: 64 },
        default: "5",
        help: "number of philosophers (and forks)",
    },
    ParamSpec { name: "ordered", kind: ParamKind::Flag, default: "false", help: "take the lower-numbered fork first" },
    ParamSpec {
        name: "rounds",
        kind: ParamKind::Int { min: 1, max: 1000 },
        default: "2",
        help: "meals per philosopher",
    },
];

/// One philosopher: `rounds` meals, each taking `first` then `second`.
pub async fn philosopher(first: Mutex, second: Mutex, rounds: u64) {
    let _f = crate::frame("philosophers::dine");
    for _ in 0..rounds {
        let g1 = crate::here!(first.lock()).await;
        let g2 = crate::here!(second.lock()).await;
        crate::here!(g2.unlock()).await;
        crate::here!(g1.unlock()).await;
    }
}

const FORK_NAMES: [&str; 64] = {
    // Static names avoid an allocation per fork per run.
    [
        "fork0", "fork1", "fork2", "fork3", "fork4", "fork5", "fork6", "fork7", "fork8", "fork9", "fork10", "fork11",
        "fork12", "fork13", "fork14", "fork15", "fork16", "fork17", "fork18", "fork19", "fork20", "fork21", "fork22",
        "fork23", "fork24", "fork25", "fork26", "fork27", "fork28", "fork29", "fork30", "fork31", "fork32", "fork33",
        "fork34", "fork35", "fork36", "fork37", "fork38", "fork39", "fork40", "fork41", "fork42", "fork43", "fork44",
        "fork45", "fork46", "fork47", "fork48", "fork49", "fork50", "fork51", "fork52", "fork53", "fork54", "fork55",
        "fork56", "fork57", "fork58", "fork59", "fork60", "fork61", "fork62", "fork63",
    ]
};

/// The model's main task.
pub async fn main(n: usize, ordered: bool, rounds: u64) {
    let forks: Vec<Mutex> = (0..n).map(|i| Mutex::new(FORK_NAMES[i])).collect();
    for i in 0..n {
        let (left, right) = (i, (i + 1) % n);
        let (a, b) = if ordered { (left.min(right), left.max(right)) } else { (left, right) };
        crate::spawn(crate::numbered!("philosopher-{}", i), philosopher(forks[a], forks[b], rounds));
    }
}

impl Model for Philosophers {
    fn name(&self) -> &'static str {
        "philosophers"
    }
    fn about(&self) -> &'static str {
        "N dining philosophers, forks are Go mutexes; --ordered breaks the cycle"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn variants(&self) -> Vec<Variant> {
        vec![
            Variant { label: String::new(), params: vec![], expect: Expect::Deadlock },
            Variant {
                label: "--ordered".into(),
                params: vec![("ordered".into(), "true".into())],
                expect: Expect::NoDeadlock,
            },
        ]
    }
    fn configure(&self, given: &[(String, String)]) -> Result<Configured, String> {
        let p = Params::new("philosophers", PARAMS, given)?;
        let n = p.int("philosophers")? as usize;
        let ordered = p.flag("ordered")?;
        let rounds = p.int("rounds")?;
        Ok(Configured::new("philosophers", p.normalized(), move |sim| sim.run(move || main(n, ordered, rounds))))
    }
}
