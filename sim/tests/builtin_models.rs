//! The built-in `abba` and `philosophers` models: the exact cycle of the
//! buggy variants, and no failure over many seeds in the fixed ones.

use sim::models::{self, Configured};

fn model(name: &str, params: &[(&str, &str)]) -> Configured {
    let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    models::find(name).unwrap().configure(&params).unwrap()
}

/// (task, op, resource) of each task in the cycle.
type Cycle = Vec<(String, String, String)>;

/// The cycle, and what each of its tasks holds.
fn cycle_of(run: &sim::Run) -> (Cycle, Vec<Vec<String>>) {
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("expected a deadlock, got {:?}", run.outcome));
    (
        d.cycle.iter().map(|b| (b.name.clone(), b.op.clone(), b.waits_for.clone())).collect(),
        d.cycle.iter().map(|b| b.holds.iter().map(|h| h.resource.clone()).collect()).collect(),
    )
}

#[test]
fn abba_deadlocks_with_t1_waiting_for_b_and_t2_for_a() {
    let m = model("abba", &[]);
    let mut found = 0;
    for seed in 0..200 {
        let run = m.run(seed, false);
        if !run.outcome.is_failure() {
            continue;
        }
        found += 1;
        let (cycle, holds) = cycle_of(&run);
        let s = |x: &str| x.to_string();
        assert_eq!(cycle, vec![(s("T1"), s("lock"), s("B")), (s("T2"), s("lock"), s("A"))], "seed {seed}");
        assert_eq!(holds, vec![vec![s("A")], vec![s("B")]]);
        let d = run.outcome.deadlock().unwrap();
        assert_eq!(d.cycle[0].stack[0].name, "abba::worker");
        assert_eq!(d.cycle[0].released_by, vec!["T2"]);
    }
    assert!(found > 100, "most schedules of AB/BA deadlock ({found}/200)");
}

#[test]
fn abba_fixed_never_deadlocks() {
    let m = model("abba", &[("fixed", "true")]);
    for seed in 0..20_000 {
        let run = m.run(seed, false);
        assert!(!run.outcome.is_failure(), "seed {seed}: {}", run.outcome);
    }
}

#[test]
fn philosophers_cycle_goes_round_the_table() {
    for n in [2u64, 3, 5] {
        let m = model("philosophers", &[("philosophers", &n.to_string())]);
        let seed = (0..1000).find(|&s| m.run(s, false).outcome.is_failure()).expect("a deadlocking seed");
        let run = m.run(seed, false);
        let (cycle, holds) = cycle_of(&run);
        assert_eq!(cycle.len(), n as usize);
        for (i, (task, op, res)) in cycle.iter().enumerate() {
            assert_eq!(task, &format!("philosopher-{i}"));
            assert_eq!(op, "lock");
            assert_eq!(res, &format!("fork{}", (i + 1) % n as usize), "waits for the right fork");
            assert_eq!(holds[i], vec![format!("fork{i}")], "holds the left fork");
        }
    }
}

#[test]
fn philosophers_ordered_never_deadlocks() {
    for n in ["2", "3", "5"] {
        let m = model("philosophers", &[("philosophers", n), ("ordered", "true")]);
        for seed in 0..5_000 {
            let run = m.run(seed, false);
            assert!(!run.outcome.is_failure(), "n={n} seed {seed}: {}", run.outcome);
        }
    }
}

#[test]
fn out_of_range_and_foreign_parameters_are_rejected_with_the_flag_named() {
    let err = |name: &str, p: &[(&str, &str)]| {
        let params: Vec<(String, String)> = p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        models::find(name).unwrap().configure(&params).err().expect("rejected")
    };
    assert!(err("philosophers", &[("philosophers", "1")]).contains("--philosophers: 1 is out of range"));
    assert!(err("philosophers", &[("philosophers", "x")]).contains("not a whole number"));
    assert!(err("abba", &[("rounds", "0")]).contains("--rounds"));
    assert!(err("abba", &[("ordered", "true")]).contains("--ordered does not apply to model abba"));
    assert!(models::find("nope").err().unwrap().contains("abba, philosophers"));
}
