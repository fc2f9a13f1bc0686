//! Go's `sync.WaitGroup`: `wait` returns only once every `done` is in; a
//! forgotten `done` is found as the last declared worker returns; a `done`
//! too many panics as Go's does; a lock held across `wait` is noted.

use std::cell::RefCell;
use std::rc::Rc;

use sim::sync::{Mutex, WaitGroup};
use sim::time::sleep;
use sim::{spawn, Outcome, Sim};

/// `workers` tasks, each `done` once (but the one numbered `forget`), and
/// main waiting for them; what happened, in order.
fn fan_out(seed: u64, workers: usize, forget: Option<usize>, heartbeat: bool) -> (Outcome, Vec<String>) {
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    let run = Sim::new(seed).max_steps(100_000).run(move || async move {
        if heartbeat {
            sim::spawn_background("heartbeat", async {
                loop {
                    sleep(1_000_000).await;
                }
            });
        }
        let wg = WaitGroup::new("wg");
        for i in 0..workers {
            wg.add(1).await;
            let (wg, l) = (wg.clone(), l.clone());
            spawn(format!("worker-{i}"), async move {
                wg.declare_done();
                sim::yield_now().await;
                if forget != Some(i) {
                    l.borrow_mut().push(format!("done {i}"));
                    wg.done().await;
                }
            });
        }
        wg.wait().await;
        l.borrow_mut().push("wait returned".to_string());
    });
    let log = log.borrow().clone();
    (run.outcome, log)
}

/// A worker declared to call Done on `wg`: a step of work, then Done,
/// unless it `forget`s (returns early on an error path).
async fn worker(wg: WaitGroup, forget: bool) {
    wg.declare_done();
    sim::yield_now().await;
    if !forget {
        wg.done().await;
    }
}

#[test]
fn wait_returns_only_after_every_done() {
    for seed in 0..200 {
        let (outcome, log) = fan_out(seed, 3, None, false);
        assert_eq!(outcome, Outcome::Completed, "seed {seed}");
        assert_eq!(log.len(), 4, "seed {seed}: {log:?}");
        assert_eq!(log[3], "wait returned", "seed {seed}: {log:?}");
    }
}

#[test]
fn a_forgotten_done_is_found_as_the_last_worker_returns_even_beside_a_heartbeat() {
    for seed in 0..100 {
        let (outcome, log) = fan_out(seed, 3, Some(1), true);
        let d = outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", outcome.summary()));
        assert!(!d.global && d.running == ["heartbeat"], "seed {seed}: {d:?}");
        let main = d.behind.iter().find(|b| b.name == "main").expect("main waits");
        assert_eq!((main.op.as_str(), main.waits_for.as_str()), ("wait", "wg"), "seed {seed}");
        assert_eq!(main.counter, Some(1), "seed {seed}: two of three workers called Done");
        let text = d.to_string();
        assert!(
            text.contains(
                "\"main\" (task 0): waiting in Wait on WaitGroup \"wg\" (counter 1), and no task left that may call \
                 Done on it (\"worker-1\" returned without calling it)\n    at sync.(*WaitGroup).Wait\n"
            ),
            "{d}"
        );
        assert_eq!(main.forgot_done_names, ["worker-1"], "seed {seed}");
        // A worker may finish before main's next `add` (each is a step):
        // the counter then touched zero, with nobody waiting yet.
        assert!(
            text.contains("Done never brought WaitGroup \"wg\" to zero.")
                || text.contains("WaitGroup \"wg\" last reached zero at step")
                    && text.contains("with no task in Wait then"),
            "{d}"
        );
        assert!(!log.contains(&"wait returned".to_string()), "seed {seed}: {log:?}");
    }
}

#[test]
fn a_done_too_many_panics_as_go_does() {
    let run = Sim::new(0).run(|| async {
        let wg = WaitGroup::new("wg");
        wg.add(1).await;
        wg.done().await;
        wg.done().await;
    });
    let Outcome::Panic { task, message, .. } = &run.outcome else { panic!("{}", run.outcome.summary()) };
    assert_eq!(task, "main");
    assert!(message.starts_with("sync: negative WaitGroup counter"), "{message}");
}

#[test]
fn a_lock_held_across_wait_is_noted_and_deadlocks_when_a_worker_needs_it() {
    // The classic: main holds mu while it waits; the worker needs mu before
    // its done. Every schedule where main takes mu first deadlocks.
    let model = || async {
        let (mu, wg) = (Mutex::new("mu"), WaitGroup::new("wg"));
        wg.add(1).await;
        let w = wg.clone();
        spawn("worker", async move {
            w.declare_done();
            let g = mu.lock().await;
            g.unlock().await;
            w.done().await;
        });
        let g = mu.lock().await;
        wg.wait().await;
        g.unlock().await;
    };
    let mut found = 0;
    for seed in 0..100 {
        let run = Sim::new(seed).run(model);
        let Some(d) = run.outcome.deadlock() else { continue };
        found += 1;
        let names: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["main", "worker"], "seed {seed}: {d}");
        let w = run.lock_order.warnings();
        assert!(w.iter().any(|w| w.kind == sim::lockorder::WarningKind::HeldAcrossBlocking), "{w:?}");
    }
    assert!(found > 0);
}

#[test]
fn explore_proves_a_fan_out_and_finds_the_forgotten_done() {
    use sim::models::Configured;
    use sim::scheduler::{explore, ExploreConfig};
    let fan = |forget: bool| {
        move || async move {
            let wg = WaitGroup::new("wg");
            for i in 0..2 {
                wg.add(1).await;
                let wg = wg.clone();
                spawn(format!("worker-{i}"), async move {
                    wg.declare_done();
                    if !(forget && i == 1) {
                        wg.done().await;
                    }
                });
            }
            wg.wait().await;
        }
    };
    let ok = explore(&Configured::of("fan-out", fan(false)), &ExploreConfig::default());
    assert!(ok.exhausted && ok.failure.is_none(), "{:?}", ok.failure.map(|f| f.0.outcome.summary()));
    let bad = explore(&Configured::of("fan-out-forgot", fan(true)), &ExploreConfig::default());
    let (run, _) = bad.failure.expect("the forgotten done deadlocks");
    assert!(run.outcome.deadlock().is_some(), "{}", run.outcome.summary());
}

#[test]
fn a_wait_woken_with_the_counter_raised_again_panics_as_go_does() {
    // A's last done wakes main; A adds again before main looks: Go's Wait
    // panics there. In other schedules main looks first and returns.
    let mut reused = 0;
    for seed in 0..200 {
        let run = Sim::new(seed).run(|| async {
            let wg = WaitGroup::new("wg");
            wg.add(1).await;
            let w = wg.clone();
            spawn("A", async move {
                w.declare_done();
                w.done().await;
                w.add(1).await;
                sim::yield_now().await;
                w.done().await;
            });
            wg.wait().await;
        });
        match &run.outcome {
            Outcome::Completed => {}
            Outcome::Panic { task, message, .. } => {
                assert_eq!(task, "main", "seed {seed}");
                assert!(
                    message.starts_with("sync: WaitGroup is reused before previous Wait has returned"),
                    "{message}"
                );
                reused += 1;
            }
            o => panic!("seed {seed}: {}", o.summary()),
        }
    }
    assert!(reused > 0 && reused < 200, "{reused} of 200");
}

#[test]
fn a_done_by_a_task_not_declared_fails_the_run_at_once() {
    // A is declared as it is spawned; B is not, and its done is not the
    // last: the run fails at B's done, naming the WaitGroup's own
    // declaration, in every seed where main's wait is not judged first
    // without B (then main's report is the outcome, as the README says).
    let mut named = 0;
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(100_000).run(|| async {
            let wg = WaitGroup::new("wg");
            wg.add(2).await;
            for (name, declared, yields) in [("A", true, 0), ("B", false, 3)] {
                let w = wg.clone();
                let task = spawn(name, async move {
                    for _ in 0..yields {
                        sim::yield_now().await;
                    }
                    w.done().await;
                });
                if declared {
                    wg.declare_done_for(task.id());
                }
            }
            wg.wait().await;
        });
        if let Outcome::Panic { task, message, .. } = &run.outcome {
            assert_eq!(task, "B", "seed {seed}");
            assert!(message.contains("calls Done on WaitGroup \"wg\", whose callers of Done were declared without it"));
            named += 1;
        } else {
            assert!(run.outcome.deadlock().is_some(), "seed {seed}: {}", run.outcome.summary());
        }
    }
    assert!(named > 0);
}

#[test]
fn a_wait_behind_a_lock_its_worker_needs_names_the_counter_and_who_may_call_done() {
    // Main holds mu across Wait; the worker needs mu before its Done. The
    // report gives the counter and the worker that could call Done, and the
    // trace keeps the counter, read back as written; the reader refuses a
    // counter on any other wait.
    let mut found = 0;
    for seed in 0..50 {
        let run = Sim::new(seed).record(true).run(|| async {
            let (wg, mu) = (WaitGroup::new("wg"), Mutex::new("mu"));
            wg.add(2).await;
            let w = wg.clone();
            spawn("worker", async move {
                w.declare_done();
                w.done().await;
                let _g = mu.lock().await;
                w.done().await;
            });
            let _g = mu.lock().await;
            wg.wait().await;
        });
        let Some(d) = run.outcome.deadlock() else { continue };
        let text = d.to_string();
        assert!(
            text.contains(
                "\"main\" (task 0): waiting in Wait on WaitGroup \"wg\" (counter 1), which any of these could call \
                 Done on: \"worker\""
            ),
            "seed {seed}: {text}"
        );
        assert!(text.contains("\"worker\" (task 1): waiting to lock mutex \"mu\", held by \"main\""), "{text}");
        assert!(text.contains("WaitGroup \"wg\" last reached zero") || text.contains("Done never brought"), "{text}");
        let trace = run.trace.unwrap();
        let json = trace.to_json();
        assert!(json.contains("\"counter\":1"), "seed {seed}");
        let again = sim::trace::Trace::from_json(&json).unwrap();
        assert_eq!(again.deadlock, trace.deadlock);
        // Only a Wait on a WaitGroup has a counter.
        let bad = json.replacen("\"op\":\"lock\",", "\"counter\":1,\"op\":\"lock\",", 1);
        assert_ne!(bad, json);
        let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
        assert!(err.contains("counter: given, but the task is not in a Wait on a WaitGroup"), "{err}");
        found += 1;
    }
    assert!(found > 10, "{found} of 50");
}

#[test]
fn a_waitgroup_that_reached_zero_with_nobody_waiting_is_not_said_to_have_lost_a_notify() {
    // Round one reaches zero before anyone waits (the usual case); round
    // two forgets its Done. The last-zero line says nobody was in Wait.
    let run = Sim::new(0).max_steps(10_000).run(|| async {
        let wg = WaitGroup::new("wg");
        wg.add(1).await;
        let w = wg.clone();
        spawn("first", async move {
            w.declare_done();
            w.done().await;
        })
        .join()
        .await;
        wg.add(1).await;
        wg.wait().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    let text = d.to_string();
    assert!(text.contains("WaitGroup \"wg\" last reached zero at step "), "{text}");
    assert!(text.contains(", with no task in Wait then"), "{text}");
    assert!(!text.contains("lost"), "{text}");
}

#[test]
fn a_task_cut_inside_done_waits_for_the_waitgroups_own_lock_not_a_models_monitor() {
    // A WaitGroup is a monitor inside, held for a step or two by Done and
    // Wait. A step limit that falls there found "b" "waiting to lock
    // monitor \"wg\"", a lock no Go program has.
    let mut seen = 0;
    for seed in 0..50u64 {
        for limit in 3..12u64 {
            let run = sim::Sim::new(seed).max_steps(limit).run(|| async {
                let wg = WaitGroup::new("wg");
                wg.add(2).await;
                for name in ["a", "b"] {
                    let wg = wg.clone();
                    sim::spawn(name, async move { wg.done().await });
                }
                wg.wait().await;
            });
            let text = run.outcome.to_string();
            assert!(!text.contains("lock monitor"), "seed {seed}, limit {limit}: {text}");
            for line in text.lines().filter(|l| l.contains("waiting for the lock")) {
                seen += 1;
                assert!(
                    line.contains("): in Done on WaitGroup \"wg\", waiting for the lock deadsim keeps its state under, held by \"")
                        || line.contains("): in Wait on WaitGroup \"wg\", waiting for the lock deadsim keeps its state under, held by \""),
                    "seed {seed}, limit {limit}: {text}"
                );
            }
        }
    }
    assert!(seen > 0, "no run was cut inside Done or Wait");
}

#[test]
fn a_forgotten_done_names_the_worker_not_the_spawner_declared_for_it() {
    // "starter" is declared (it spawns the workers, and returns); "w1"
    // returns early without Done. The report names w1 alone.
    let run = Sim::new(0).run(|| async {
        let wg = WaitGroup::new("wg");
        wg.add(2).await;
        let w = wg.clone();
        let starter = spawn("starter", async move {
            for (name, forget) in [("w0", false), ("w1", true)] {
                spawn(name, worker(w.clone(), forget));
            }
        });
        wg.declare_done_for(starter.id());
        wg.wait().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome.summary()));
    let main = d.cycle.iter().chain(&d.behind).find(|b| b.name == "main").expect("main waits");
    assert_eq!(main.forgot_done_names, ["w1"], "{d}");
    assert!(d.to_string().contains("may call Done on it (\"w1\" returned without calling it)"), "{d}");
}

#[test]
fn who_forgot_done_is_kept_in_the_trace_and_checked_when_read() {
    let run = Sim::new(0).record(true).run(|| async {
        let wg = WaitGroup::new("wg");
        for (name, forget) in [("w0", true), ("w1", false), ("w2", true)] {
            wg.add(1).await;
            spawn(name, worker(wg.clone(), forget));
        }
        wg.wait().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome.summary()));
    let main = d.cycle.iter().chain(&d.behind).find(|b| b.name == "main").unwrap();
    // By id, ascending, whatever order they were declared or returned in.
    assert_eq!(
        (main.forgot_done.as_slice(), main.forgot_done_names.as_slice()),
        (&[1, 3][..], &["w0".to_string(), "w2".to_string()][..])
    );
    assert!(d.to_string().contains("(\"w0\", \"w2\" returned without calling it)"), "{d}");
    let json = run.trace.unwrap().to_json();
    let again = sim::trace::Trace::from_json(&json).unwrap();
    assert_eq!(again.deadlock.unwrap().behind.iter().find(|b| b.name == "main").unwrap().forgot_done, [1, 3]);
    for (bad, want) in [
        (json.replace("\"forgot_done\":[1,3]", "\"forgot_done\":[1,9]"), "forgot_done[1]: 9 is not a task id"),
        (
            json.replace("\"forgot_done\":[1,3]", "\"forgot_done\":[3,1]"),
            "forgot_done[0]: task 3 is \"w2\", but forgot_done_names[0] is \"w0\"",
        ),
        (
            json.replace("\"forgot_done_names\":[\"w0\",\"w2\"]", "\"forgot_done_names\":[\"w0\"]"),
            "forgot_done: 2 ids, but forgot_done_names has 1 names",
        ),
    ] {
        assert_ne!(bad, json, "{want}");
        let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
        assert!(err.contains(want), "{err}");
    }
}

/// Go's `wg.Add(1)` after a rendezvous the waiter also passes: `Wait` may
/// run between the two and return before the work is counted. The `add`
/// is a step of its own, so a search finds it.
fn add_after_a_rendezvous(seed: u64) -> Outcome {
    Sim::new(seed)
        .run(|| async {
            let wg = WaitGroup::new("wg");
            let ready: sim::sync::Chan<()> = sim::sync::Chan::new("ready", 1);
            let worked = Rc::new(std::cell::Cell::new(false));
            let (w, r, done) = (wg.clone(), ready.clone(), worked.clone());
            spawn("worker", async move {
                r.send(()).await;
                w.add(1).await; // too late: Add belongs before the go statement
                done.set(true);
                w.done().await;
            });
            ready.recv().await;
            wg.wait().await;
            sim::check(worked.get(), "Wait returned before the work was done");
        })
        .outcome
}

#[test]
fn a_wait_may_run_between_an_operation_and_the_add_after_it() {
    let failing = (0..200).filter(|&seed| add_after_a_rendezvous(seed).is_failure()).count();
    let passing = (0..200).filter(|&seed| !add_after_a_rendezvous(seed).is_failure()).count();
    assert!(failing > 0 && passing > 0, "{failing} failing, {passing} passing");
    let broken = (0..200).map(add_after_a_rendezvous).find(|o| o.is_failure()).unwrap();
    assert_eq!(broken.summary(), "invariant violated in \"main\": Wait returned before the work was done");
}
