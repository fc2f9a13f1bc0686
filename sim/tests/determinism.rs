//! Same model, parameters and seed: the same run, byte for byte.

use sim::models;
use sim::scheduler::{PctStrategy, RandomStrategy, Strategy};
use sim::trace::{EventKind, Trace};
use sim::{Sim, TaskId, TaskSet};

fn variants() -> Vec<sim::models::Configured> {
    let mut out = Vec::new();
    for m in models::all() {
        for v in m.variants() {
            out.push(m.configure(&v.params).unwrap());
        }
    }
    out
}

#[test]
fn same_seed_gives_identical_trace_bytes_on_every_builtin_model() {
    for cfg in variants() {
        for seed in [0, 1, 7, 12345] {
            let a = cfg.run(seed, true).trace.unwrap().to_json();
            let b = cfg.run(seed, true).trace.unwrap().to_json();
            assert_eq!(a, b, "{} seed {seed}", cfg.model);
        }
        // And different seeds do explore different schedules.
        let a = cfg.run(0, true).trace.unwrap();
        assert!((1..20).any(|s| cfg.run(s, true).trace.unwrap().schedule != a.schedule));
    }
}

#[test]
fn recording_changes_no_choice() {
    for cfg in variants() {
        for seed in 0..200 {
            let off = cfg.run(seed, false);
            let on = cfg.run(seed, true);
            assert_eq!(off.outcome, on.outcome, "{} seed {seed}", cfg.model);
            assert_eq!((off.steps, off.time_ns), (on.steps, on.time_ns));
        }
    }
}

/// The strategy it wraps, but one the engine must ask from its step loop at
/// every step (a strategy that may halt a run is never asked elsewhere).
struct InLoop<S>(S);

impl<S: Strategy> Strategy for InLoop<S> {
    fn pick_task(&mut self, enabled: &TaskSet, last: Option<TaskId>, step: u64) -> TaskId {
        self.0.pick_task(enabled, last, step)
    }
    fn pick_index(&mut self, n: usize) -> usize {
        self.0.pick_index(n)
    }
    fn name(&self) -> String {
        self.0.name()
    }
    fn may_halt(&self) -> bool {
        true
    }
}

#[test]
fn steps_taken_at_scheduling_points_change_nothing() {
    // Random and PCT let a task take the next step at its own scheduling
    // point when it is picked again, without returning to the step loop.
    // The same strategies asked from the loop at every step must give the
    // same runs, event for event, choices included.
    for cfg in variants() {
        for seed in 0..60 {
            let pairs: [(Sim, Sim); 3] = [
                (Sim::new(seed), Sim::new(seed).strategy(Box::new(InLoop(RandomStrategy::new(seed))))),
                (
                    Sim::new(seed).strategy(Box::new(RandomStrategy::new(seed))),
                    Sim::new(seed).strategy(Box::new(InLoop(RandomStrategy::new(seed)))),
                ),
                (
                    Sim::new(seed).strategy(Box::new(PctStrategy::new(seed, 3, 40))),
                    Sim::new(seed).strategy(Box::new(InLoop(PctStrategy::new(seed, 3, 40)))),
                ),
            ];
            for (i, (inline, looped)) in pairs.into_iter().enumerate() {
                let (a, b) = (cfg.run_with(inline.record(true)), cfg.run_with(looped.record(true)));
                assert_eq!(sim::hunt::first_divergence(&a, &b), None, "{} seed {seed} pair {i}", cfg.model);
                assert_eq!((a.outcome, a.steps), (b.outcome, b.steps), "{} seed {seed} pair {i}", cfg.model);
            }
        }
    }
}

#[test]
fn steps_taken_in_place_stop_where_a_sleeper_is_due_or_the_step_limit_falls() {
    // A poll takes steps in place only within a budget the loop sets: the
    // steps left to the limit and the steps before the next sleeper is due.
    // Sleeps that end on, just before and just after a step boundary, a zero
    // step length, and limits that fall inside a task's run of steps must
    // all give the runs the loop gives.
    async fn model() {
        let mu = sim::sync::Mutex::new("mu");
        for (i, ns) in [10u64, 14, 15, 21, 1].into_iter().enumerate() {
            sim::spawn(format!("sleeper-{i}"), async move {
                for _ in 0..3 {
                    sim::time::sleep(ns).await;
                    let g = mu.lock().await;
                    g.unlock().await;
                }
            });
        }
        for _ in 0..12 {
            let g = mu.lock().await;
            g.unlock().await;
        }
    }
    let mut limited = 0;
    for step_ns in [0u64, 1, 7, 10] {
        for max_steps in [5u64, 13, 40, 1_000_000] {
            for seed in 0..40 {
                let sim = |s: Sim| s.step_ns(step_ns).max_steps(max_steps).record(true);
                let a = sim(Sim::new(seed)).run(model);
                let b = sim(Sim::new(seed).strategy(Box::new(InLoop(RandomStrategy::new(seed))))).run(model);
                let (ta, tb) = (a.trace.as_ref().unwrap(), b.trace.as_ref().unwrap());
                assert_eq!(ta.events, tb.events, "step_ns {step_ns} max_steps {max_steps} seed {seed}");
                assert_eq!(ta.schedule, tb.schedule);
                assert_eq!((a.outcome.verdict(), a.steps, a.time_ns), (b.outcome.verdict(), b.steps, b.time_ns));
                limited += (a.outcome.verdict() == "step-limit") as u32;
            }
        }
    }
    // The limits did fall inside runs.
    assert!(limited > 0);
}

#[test]
fn a_trace_read_back_and_written_again_is_byte_identical() {
    for cfg in variants() {
        for seed in 0..20 {
            let json = cfg.run(seed, true).trace.unwrap().to_json();
            let back = Trace::from_json(&json).unwrap();
            assert_eq!(back.to_json(), json);
        }
    }
}

#[test]
fn committed_traces_are_what_this_build_makes() {
    // traces/generate.sh writes them with a release build; re-running each
    // from its own metadata in this (debug) build must give the same bytes.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces");
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries.into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")) {
        let committed = std::fs::read_to_string(&path).unwrap();
        let t = Trace::parse(&committed, &path.display().to_string()).unwrap();
        let params: Vec<(String, String)> = t.meta.params.iter().map(|p| (p.name.clone(), p.value.clone())).collect();
        let model = models::find(&t.meta.model).unwrap().configure(&params).unwrap();
        let run = match t.meta.strategy.as_str() {
            "random" => model.run(t.meta.seed, true),
            // A shrunk run from its schedule string (generate.sh shrinks it,
            // in release, and CI compares the bytes).
            "shrink" => {
                let choices = sim::scheduler::Schedule::parse(&t.meta.replay).unwrap().choices;
                let strategy = sim::scheduler::ReplayStrategy::named(choices, "shrink");
                model.run_with(Sim::new(t.meta.seed).record(true).strategy(Box::new(strategy)))
            }
            other => panic!("{}: strategy {other}: not one this test makes again", path.display()),
        };
        let now = run.trace.unwrap().to_json();
        assert!(now == committed, "{} differs: run bash traces/generate.sh", path.display());
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} committed traces found");
}

#[test]
fn bad_traces_are_rejected_with_the_field_named() {
    let good = models::find("abba").unwrap().configure(&[]).unwrap().run(0, true).trace.unwrap().to_json();
    let err = |text: &str| Trace::parse(text, "t.json").expect_err("rejected").to_string();
    assert!(err("not json").starts_with("t.json: not JSON"));
    assert!(err("[1,2]").contains("not a deadsim trace (the top level is not an object)"));
    assert!(err(r#"{"format":"deadsim-trace","version":1"#).starts_with("t.json: not JSON (EOF"));
    assert!(err(r#"{"format":3,"version":1}"#).contains("no field `format`"));
    // The format and version are read alone, before the rest: a repeated
    // key counts as its last value, as in any JSON object.
    assert!(err(r#"{"format":"deadsim-trace","format":"x","version":1}"#).contains("`format` is \"x\""));
    assert!(
        err(&good.replacen("\"version\":1", "\"version\":\"1\"", 1)).contains("`version` is missing or not a number")
    );
    assert!(err(r#"{"format":"other"}"#).contains("field `format` is \"other\""));
    assert!(err(&good.replace("\"version\":1", "\"version\":2")).contains("format version 2 is not supported"));
    assert!(err(&good.replace("\"task\":2,\"kind\":\"lock\"", "\"task\":9,\"kind\":\"lock\""))
        .contains(".task: 9 is not a task id"));
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let last = v["events"].as_array().unwrap().len() - 1;
    let mut back = v.clone();
    back["events"][last]["time"] = serde_json::json!(0);
    assert!(err(&back.to_string()).contains(&format!("events[{last}].time: 0 goes back from")));
    let mut back = v.clone();
    back["events"][last]["step"] = serde_json::json!(0);
    assert!(err(&back.to_string()).contains(&format!("events[{last}].step: 0 goes back from")));
    // A wrong type is named by its field's path, in any layout (here all on one line).
    v["meta"]["steps"] = serde_json::json!("x");
    let e = err(&v.to_string());
    assert!(e.contains("invalid trace at meta.steps (invalid type: string \"x\""), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["cycle"][0]["task"] = serde_json::json!(-1);
    let e = err(&v.to_string());
    assert!(e.contains("invalid trace at deadlock.cycle[0].task (invalid value: integer `-1`"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["behind"] = v["deadlock"]["cycle"].clone();
    v["deadlock"]["behind"][1].as_object_mut().unwrap().remove("waits_for");
    let e = err(&serde_json::to_string_pretty(&v).unwrap());
    assert!(e.contains("invalid trace at deadlock.behind[1] (missing field `waits_for`"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["version"] = serde_json::json!(1.0);
    assert!(err(&v.to_string()).contains("trace format version 1.0 is not supported (this deadsim reads version 1)"));
    // Ids and kinds that do not fit the tables are refused, not drawn as "?".
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["cycle"][0]["task"] = serde_json::json!(42);
    assert!(err(&v.to_string()).contains("deadlock.cycle[0].task: 42 is not a task id"));
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["cycle"][0]["name"] = serde_json::json!("T9");
    assert!(err(&v.to_string()).contains("deadlock.cycle[0].name: \"T9\", but task 1 is \"T1\""));
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["resources"][0]["kind"] = serde_json::json!("pipe");
    let e = err(&v.to_string());
    assert!(e.contains("resources[0].capacity: null, but a pipe has one (0 when unbuffered)"), "{e}");
    v["resources"][0]["capacity"] = serde_json::json!(0);
    let e = err(&v.to_string());
    assert!(e.contains(": a lock event on resource 0 (\"A\"), which is a pipe, not a mutex or rwmutex"), "{e}");
    // A notifyAll that says it woke another number of tasks than wait on
    // the monitor; a notify whose wake is of a task not waiting. (Flink's
    // pipeline scenario, seed 0: LocalBufferPool's monitor.)
    let flink = models::find("flink").unwrap().configure(&[("scenario".into(), "pipeline".into())]).unwrap();
    let mut v: serde_json::Value = serde_json::to_value(flink.run(0, true).trace.unwrap()).unwrap();
    let events = v["events"].as_array_mut().unwrap();
    let i = events
        .iter()
        .position(|e| e["kind"] == "notify_all" && e["amount"].as_u64() > Some(0))
        .expect("a notifyAll wakes");
    let n = events[i]["amount"].as_u64().unwrap();
    events[i]["amount"] = serde_json::json!(n + 1);
    let e = err(&v.to_string());
    assert!(e.contains(&format!("events[{i}].amount: a notify_all event of monitor")), "{e}");
    assert!(e.contains(&format!("wakes {}, but {n} task(s) wait on it", n + 1)), "{e}");
    // A kind the engine has not: refused at the resource, used or not.
    for r in [0, 1] {
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        v["resources"][r]["kind"] = serde_json::json!("mutexx");
        let e = err(&v.to_string());
        assert!(
            e.contains(&format!(
                "resources[{r}].kind: \"mutexx\", not one of mutex, rwmutex, monitor, chan, pipe, atomic"
            )),
            "{e}"
        );
    }
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["resources"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"id": 2, "name": "C", "kind": "banana", "capacity": null}));
    assert!(err(&v.to_string()).contains("resources[2].kind: \"banana\", not one of"));
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["resources"][1]["capacity"] = serde_json::json!(5);
    assert!(err(&v.to_string()).contains("resources[1].capacity: 5, but a mutex has none (null)"));
    // A wake with no block before it: refused. (A run of abba --fixed where
    // a task waits for a lock and is woken; its block event taken out.)
    let m = models::find("abba").unwrap().configure(&[("fixed".into(), "true".into())]).unwrap();
    let woke = (0..100)
        .map(|seed| m.run(seed, true).trace.unwrap())
        .find(|t| t.events.iter().any(|e| e.kind == EventKind::Wake));
    let mut v: serde_json::Value = serde_json::to_value(woke.expect("some run blocks and wakes")).unwrap();
    let events = v["events"].as_array_mut().unwrap();
    let wake = events.iter().position(|e| e["kind"] == "wake").unwrap();
    let task = events[wake]["task"].clone();
    let block = events[..wake].iter().rposition(|e| e["kind"] == "block" && e["task"] == task).unwrap();
    events.remove(block);
    let e = err(&v.to_string());
    assert!(
        e.contains(&format!("events[{}]: task {task} wakes, but no block or sleep of it comes before", wake - 1)),
        "{e}"
    );
    // A deadlock report that names no task.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["cycle"] = serde_json::json!([]);
    assert!(err(&v.to_string()).contains("deadlock: a report that names no task"));
    // A report that names a task twice, or one the events leave running.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let first = v["deadlock"]["cycle"][0].clone();
    v["deadlock"]["cycle"].as_array_mut().unwrap().push(first);
    assert!(err(&v.to_string()).contains("deadlock.cycle[2]: task 1 (\"T1\") is named twice in the report"));
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let mut main = v["deadlock"]["cycle"][0].clone();
    main["task"] = serde_json::json!(0);
    main["name"] = serde_json::json!("main");
    v["deadlock"]["behind"] = serde_json::json!([main]);
    let e = err(&v.to_string());
    assert!(
        e.contains("deadlock.behind[0]: task 0 (\"main\") is in the report, but the events do not leave it blocked"),
        "{e}"
    );
    // A report whose shape the events contradict: a task said to wait for
    // another lock than it does; "no cycle" where the tasks wait for each
    // other's mutexes; a task left out of a global report; the tasks able
    // to run, and whether any is, misstated.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let other = v["deadlock"]["cycle"][1]["resource"].clone();
    v["deadlock"]["cycle"][0]["resource"] = other;
    let e = err(&v.to_string());
    assert!(e.contains("deadlock.cycle[0].resource: 0, but the task's block event is on resource 1 (\"B\")"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let cycle = v["deadlock"]["cycle"].take();
    v["deadlock"]["behind"] = cycle;
    v["deadlock"]["cycle"] = serde_json::json!([]);
    let e = err(&v.to_string());
    assert!(e.contains("deadlock.cycle: empty, but \"T1\", \"T2\" wait for one another's mutexes"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["cycle"].as_array_mut().unwrap().pop();
    let e = err(&v.to_string());
    assert!(
        e.contains("deadlock: task 2 (\"T2\") is left blocked, but a report of a global deadlock does not name it"),
        "{e}"
    );
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["running"] = serde_json::json!(["main"]);
    let e = err(&v.to_string());
    assert!(e.contains("deadlock.running: [\"main\"], but the events leave [] able to run"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["running_ids"] = serde_json::json!([0]);
    let e = err(&v.to_string());
    assert!(e.contains("deadlock.running_ids: [0], but the events leave tasks [] able to run"), "{e}");
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"]["global"] = serde_json::json!(false);
    let e = err(&v.to_string());
    assert!(e.contains("deadlock.global: false, but the events leave no task able to run"), "{e}");
    // A byte-order mark before the JSON is read past.
    let t = Trace::parse(&format!("\u{feff}{good}"), "t.json").expect("a trace with a BOM loads");
    assert_eq!(t.to_json(), good);
    // A meta that contradicts the rest: refused, naming the field.
    for (pointer, value, want) in [
        ("/meta/verdict", serde_json::json!("exploded"), "meta.verdict: \"exploded\" is not a verdict"),
        ("/meta/strategy", serde_json::json!(""), "meta.strategy: empty"),
        (
            "/meta/strategy",
            serde_json::json!("pct:x"),
            "meta.strategy: \"pct:x\": a PCT depth is a whole number from 1",
        ),
        (
            "/meta/strategy",
            serde_json::json!("pct:0"),
            "meta.strategy: \"pct:0\": a PCT depth is a whole number from 1",
        ),
        ("/meta/verdict", serde_json::json!("no-deadlock"), "deadlock: a deadlock report, but meta.verdict is"),
        ("/deadlock", serde_json::json!(null), "deadlock: missing, but meta.verdict is \"deadlock\""),
        ("/deadlock/step", serde_json::json!(99), "deadlock.step: 99, but meta.steps is 5"),
        ("/meta/time_ns", serde_json::json!(100), "events: an event at 500 ns, but meta.time_ns is 100"),
        ("/tasks/2/parent", serde_json::json!(9), "tasks[2].parent: 9 is not a task spawned before task 2"),
    ] {
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        *v.pointer_mut(pointer).unwrap() = value;
        let e = err(&v.to_string());
        assert!(e.contains(want), "{pointer}: {e}");
    }
    // Lock events that no run records: a held mutex locked again, a free one unlocked.
    let fixed = [("fixed".to_string(), "true".to_string())];
    let done = models::find("abba").unwrap().configure(&fixed).unwrap().run(0, true).trace.unwrap().to_json();
    let v: serde_json::Value = serde_json::from_str(&done).unwrap();
    Trace::parse(&done, "t.json").expect("the run's own trace loads");
    let events = v["events"].as_array().unwrap();
    let at = events.iter().position(|e| e["kind"] == "lock").unwrap();
    let lock = events[at].clone();
    let name = v["resources"][lock["resource"].as_u64().unwrap() as usize]["name"].as_str().unwrap().to_string();
    let mut twice = v.clone();
    twice["events"].as_array_mut().unwrap().insert(at + 1, lock.clone());
    let e = err(&twice.to_string());
    assert!(e.contains(&format!("locks \"{name}\", which task {} holds", lock["task"])), "{e}");
    let mut free = v.clone();
    free["events"].as_array_mut().unwrap().remove(at);
    let e = err(&free.to_string());
    assert!(e.contains(&format!("unlocks \"{name}\", which no task holds")), "{e}");
    // A task's events lie between its one spawn and its one finish, and a
    // lock event names its lock.
    let events = v["events"].as_array().unwrap();
    let finish = events.iter().position(|e| e["kind"] == "finish" && e["task"] == 0).expect("main finishes");
    let spawn_t1 = events.iter().position(|e| e["kind"] == "spawn" && e["task"] == 1).unwrap();
    let first_t1 = events.iter().position(|e| e["task"] == 1 && e["kind"] != "spawn").unwrap();
    for (edit, want) in [
        ("again", "task 0 is spawned again".to_string()),
        ("late", format!("events[{}]: a finish event of task 0 after it finished", finish + 1)),
        (
            "early",
            format!(
                "events[{}]: a {} event of task 1 before its spawn",
                first_t1 - 1,
                events[first_t1]["kind"].as_str().unwrap()
            ),
        ),
        ("nores", format!("events[{at}]: a lock event without a resource")),
    ] {
        let mut w = v.clone();
        let list = w["events"].as_array_mut().unwrap();
        match edit {
            "again" => list.insert(1, list[0].clone()),
            "late" => list.insert(finish + 1, list[finish].clone()),
            "early" => {
                list.remove(spawn_t1);
            }
            _ => {
                list[at].as_object_mut().unwrap().remove("resource");
            }
        }
        let e = err(&w.to_string());
        assert!(e.contains(&want), "{edit}: {e}");
    }
    // The schedule and the events tell one story (abba seed 0: T1 and T2
    // each take their first lock, then block on the second at step 5).
    let v: serde_json::Value = serde_json::from_str(&good).unwrap();
    let sched: Vec<u64> = v["schedule"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap()).collect();
    let events = v["events"].as_array().unwrap();
    // An event only the task that ran makes, given to another task; a
    // lock given to another task with no peer (no hand-off).
    let last = events.len() - 1;
    let mut w = v.clone();
    w["events"][last]["task"] = serde_json::json!(2);
    let e = err(&w.to_string());
    assert!(
        e.contains(&format!(
            "events[{last}]: a deadlock event of task 2 at step 5, which the schedule gives to task 1"
        )),
        "{e}"
    );
    let lock = events.iter().position(|e| e["kind"] == "lock" && e["task"] == 1).unwrap();
    let mut w = v.clone();
    w["events"][lock]["task"] = serde_json::json!(2);
    let e = err(&w.to_string());
    assert!(
        e.contains(&format!("events[{lock}]: a lock event of task 2 at step 5, which the schedule gives to task 1")),
        "{e}"
    );
    // A lock's kind edited from mutex to rwmutex: T2's block in T1's step
    // (held up by T1's lock of A) is then out of place, and the message
    // names the resource whose kind rules it out.
    let mut w = v.clone();
    w["resources"][0]["kind"] = serde_json::json!("rwmutex");
    let e = err(&w.to_string());
    assert!(
        e.contains(
            "which the schedule gives to task 1 (a task held up in another's step waits to lock a mutex or enter a \
             monitor that step took; resources[0] is a rwmutex)"
        ),
        "{e}"
    );
    // A spawn whose peer is not the task that ran.
    let mut w = v.clone();
    w["events"][1]["peer"] = serde_json::json!(2);
    let e = err(&w.to_string());
    assert!(e.contains("events[1]: task 1 is spawned by task 2, which is not spawned yet"), "{e}");
    // Only main's spawn comes before step 1.
    let mut w = v.clone();
    w["events"][1]["step"] = serde_json::json!(0);
    let e = err(&w.to_string());
    assert!(e.contains("events[1]: a spawn event at step 0, where only main's spawn can be"), "{e}");
    // One more step, given to a blocked task, then to a finished one.
    for (task, why) in [(sched[4], "it is blocked or asleep"), (0, "it has finished")] {
        let mut w = v.clone();
        w["schedule"].as_array_mut().unwrap().push(serde_json::json!(task));
        w["meta"]["steps"] = serde_json::json!(sched.len() + 1);
        let e = err(&w.to_string());
        let n = sched.len();
        assert!(e.contains(&format!("schedule[{n}]: task {task} runs at step {}, but {why}", n + 1)), "{e}");
    }
    // An event no hand-off makes, given to a task that did not run, even
    // with the running task as peer; a block of another task that no
    // taking of its lock explains.
    let deadlock_at = events.iter().position(|e| e["kind"] == "deadlock").unwrap();
    let mut w = v.clone();
    w["events"][deadlock_at] = serde_json::json!({"step": 5, "time": 500, "task": 2, "kind": "finish", "peer": 1});
    let e = err(&w.to_string());
    assert!(e.contains(&format!("events[{deadlock_at}]: a finish event of task 2 with peer 1 at step 5")), "{e}");
    let block = events.iter().position(|e| e["kind"] == "block" && e["task"] == 2).unwrap();
    let mut w = v.clone();
    w["events"][block]["op"] = serde_json::json!("recv");
    let e = err(&w.to_string());
    assert!(
        e.contains(&format!("events[{block}]: a block in recv on resource 0 (\"A\"), which is a mutex, not a chan")),
        "{e}"
    );
    let mut w = v.clone();
    w["events"][block]["resource"] = serde_json::json!(1);
    let e = err(&w.to_string());
    assert!(e.contains(&format!("events[{block}]: a block event of task 2 at step 5")), "{e}");
    // A task run before its spawn: T2 at step 2, main spawning it at step 3.
    let mut w = v.clone();
    w["schedule"] = serde_json::json!([0, 2, 0, 2, 1]);
    w["events"][2]["step"] = serde_json::json!(3);
    w["events"][3]["step"] = serde_json::json!(3);
    let e = err(&w.to_string());
    assert!(e.contains("schedule[1]: task 2 runs at step 2, but it is not spawned yet"), "{e}");
    // A spawn made by the new task itself.
    let mut w = v.clone();
    w["schedule"][0] = serde_json::json!(1);
    w["events"][1]["peer"] = serde_json::json!(1);
    let e = err(&w.to_string());
    assert!(e.contains("events[1]: task 1 is spawned by task 1, which is not spawned yet"), "{e}");
    // A pipe never holds more than its capacity: a buffered level above it
    // is refused (it was drawn off the chart).
    let pipes = models::find("ttrpc").unwrap().configure(&[]).unwrap().run(0, true).trace.unwrap().to_json();
    let mut v: serde_json::Value = serde_json::from_str(&pipes).unwrap();
    let at = v["events"].as_array().unwrap().iter().position(|e| e["kind"] == "write").expect("a pipe write");
    v["events"][at]["buffered"] = serde_json::json!(u64::MAX);
    let r = v["events"][at]["resource"].clone();
    let e = err(&v.to_string());
    assert!(e.contains(&format!("events[{at}].buffered: {} bytes, but pipe {r} (", u64::MAX)), "{e}");
    assert!(e.ends_with("holds at most 0"), "{e}");
    // A run a replaying or exploring strategy stopped has a verdict of its own.
    for verdict in ["diverged", "pruned"] {
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        v["meta"]["verdict"] = serde_json::json!(verdict);
        v["deadlock"] = serde_json::json!(null);
        // Stopped before the deadlock was seen: no deadlock event.
        v["events"].as_array_mut().unwrap().pop();
        Trace::parse(&v.to_string(), "t.json").unwrap_or_else(|e| panic!("{verdict}: {e}"));
    }
    // In the writer's layout too, a wrong type is named by its field.
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    let events = lines.iter().position(|l| l == "\"events\":[").unwrap();
    let e4 = &mut lines[events + 1 + 4];
    let at = e4.find("\"time\":").unwrap() + "\"time\":".len();
    let end = at + e4[at..].find(',').unwrap();
    e4.replace_range(at..end, "\"x\"");
    let e = err(&lines.join("\n"));
    assert!(e.starts_with("t.json: invalid trace at events[4].time (invalid type: string \"x\", expected u64"), "{e}");
}

#[test]
fn the_engines_traces_load_hand_offs_included() {
    // Runs whose traces have events of tasks other than the one that ran:
    // pipe writes moved in by the reader (buffered pipes), channel and
    // RWMutex hand-offs, tasks held up by another's lock, timer wakes.
    let p = |k: &str, v: &str| (k.to_string(), v.to_string());
    let mut writes_for_another = 0;
    for (model, params) in [
        ("ttrpc", vec![p("pipe-buffer", "6000")]),
        ("ttrpc", vec![p("pipe-buffer", "100"), p("payload", "5000"), p("callers", "3")]),
        ("ttrpc", vec![p("client", "v1.2.3"), p("pipe-buffer", "4096"), p("request-bytes", "9000")]),
        ("ttrpc", vec![p("client", "v1.1.0"), p("unregistered-fraction", "0.5")]),
        ("flink", vec![p("scenario", "pipeline")]),
        ("philosophers", vec![p("philosophers", "6")]),
    ] {
        let m = models::find(model).unwrap().configure(&params).unwrap();
        for seed in 0..6 {
            let t = m.run(seed, true).trace.unwrap();
            let loaded =
                Trace::parse(&t.to_json(), "t.json").unwrap_or_else(|e| panic!("{model} {params:?} seed {seed}: {e}"));
            writes_for_another += loaded
                .events
                .iter()
                .filter(|e| e.kind == EventKind::Write && e.step > 0 && loaded.schedule[e.step as usize - 1] != e.task)
                .count();
        }
    }
    assert!(writes_for_another > 0, "some pipe write was moved in by its reader");
}

#[test]
fn a_report_and_lock_events_the_events_contradict_are_rejected() {
    let err = |v: &serde_json::Value| Trace::parse(&v.to_string(), "t.json").expect_err("rejected").to_string();
    let recorded = |name: &str, params: &[(&str, &str)]| {
        let p: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let m = models::find(name).unwrap().configure(&p).unwrap();
        let run = (0..3_000).map(|s| m.run(s, false)).find(|r| r.outcome.is_failure()).expect("a failing seed");
        serde_json::to_value(m.run(run.seed, true).trace.unwrap()).unwrap()
    };
    let abba = recorded("abba", &[]);
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = abba.clone();
        f(&mut v);
        err(&v)
    };
    for (what, e, want) in [
        (
            "op",
            edit(&|v| v["deadlock"]["cycle"][0]["op"] = "send".into()),
            "deadlock.cycle[0].op: \"send\", but the task's block event is a lock",
        ),
        (
            "kind",
            edit(&|v| v["deadlock"]["cycle"][0]["kind"] = "chan".into()),
            "deadlock.cycle[0].kind: \"chan\", but the resource it waits on is a \"mutex\"",
        ),
        (
            "waits_for",
            edit(&|v| v["deadlock"]["cycle"][0]["waits_for"] = "C".into()),
            "deadlock.cycle[0].waits_for: \"C\", but the task's block event says \"B\"",
        ),
        (
            "holds",
            edit(&|v| v["deadlock"]["cycle"][0]["holds"][0]["resource"] = "B".into()),
            "deadlock.cycle[0].holds: mutex \"B\", but the events leave task 1 holding mutex \"A\"",
        ),
        (
            "holds' frame",
            edit(&|v| v["deadlock"]["cycle"][0]["holds"][0]["frame"] = 99.into()),
            "deadlock.cycle[0].holds[0].frame: 99, but the stack has 1 frame",
        ),
        (
            "holds' frame of another function",
            edit(&|v| v["deadlock"]["cycle"][0]["holds"][0]["at"]["name"] = "main".into()),
            "deadlock.cycle[0].holds[0].frame: 0 (abba::worker), but the lock was taken in main",
        ),
        (
            "holds emptied",
            edit(&|v| v["deadlock"]["cycle"][0]["holds"] = serde_json::json!([])),
            "deadlock.cycle[0].holds: nothing, but the events leave task 1 holding mutex \"A\"",
        ),
        (
            "stack emptied",
            edit(&|v| v["deadlock"]["cycle"][1]["stack"] = serde_json::json!([])),
            "deadlock.cycle[1].stack: empty, but the task blocked in abba::worker (",
        ),
        (
            "released_by",
            edit(&|v| {
                v["deadlock"]["cycle"][0]["released_by"] = serde_json::json!([]);
                v["deadlock"]["cycle"][0]["released_by_ids"] = serde_json::json!([]);
            }),
            "deadlock.cycle[0].released_by: [] does not name \"T2\", the next task of the cycle",
        ),
        (
            "released_by_ids",
            edit(&|v| {
                v["deadlock"]["cycle"][0]["released_by"] = serde_json::json!(["T1"]);
                v["deadlock"]["cycle"][0]["released_by_ids"] = serde_json::json!([1]);
            }),
            "deadlock.cycle[0].released_by_ids: [1], but the task waits for a mutex held by task 2",
        ),
        (
            "released_by_ids longer",
            edit(&|v| v["deadlock"]["cycle"][0]["released_by_ids"] = serde_json::json!([2, 1])),
            "deadlock.cycle[0].released_by_ids: 2 ids, but released_by has 1 names",
        ),
        (
            "released_by_ids in one entry only",
            edit(&|v| drop(v["deadlock"]["cycle"][1].as_object_mut().unwrap().remove("released_by_ids"))),
            "deadlock.cycle[1].released_by_ids: missing, but other entries of the report have them",
        ),
        (
            "shared",
            edit(&|v| v["deadlock"]["shared"] = serde_json::json!(["T1"])),
            "deadlock.shared: [\"T1\"], but the names two or more tasks have are []",
        ),
        (
            "released_by_ids of another name",
            edit(&|v| v["deadlock"]["cycle"][0]["released_by"] = serde_json::json!(["T1"])),
            "deadlock.cycle[0].released_by_ids[0]: task 2 is \"T2\", but released_by[0] is \"T1\"",
        ),
        (
            "released_by_ids out of range",
            edit(&|v| {
                v["deadlock"]["cycle"][1]["released_by"] = serde_json::json!(["T1", "T1"]);
                v["deadlock"]["cycle"][1]["released_by_ids"] = serde_json::json!([1, 7]);
            }),
            "deadlock.cycle[1].released_by_ids[1]: 7 is not a task id",
        ),
        (
            "order",
            edit(&|v| v["deadlock"]["cycle"].as_array_mut().unwrap().reverse()),
            "deadlock.cycle[0]: task 2, but the cycle starts at its task spawned first",
        ),
        (
            "step",
            edit(&|v| v["deadlock"]["step"] = 1.into()),
            "deadlock.step/time: 1/500 ns, but the deadlock event is at step 5, 500 ns",
        ),
        (
            "event",
            edit(&|v| drop(v["events"].as_array_mut().unwrap().pop())),
            "the verdict is \"deadlock\", but the events do not end in a deadlock event",
        ),
        (
            "block op",
            edit(&|v| {
                let b = v["events"].as_array_mut().unwrap().iter_mut().find(|e| e["kind"] == "block").unwrap();
                b["op"] = "bogus".into();
            }),
            ".op: a block in \"bogus\", not an operation a task waits in",
        ),
    ] {
        assert!(e.contains(want), "{what}: {e}");
    }
    // A monitor's exit taken out: the next task to enter it finds it owned.
    let flink = recorded("flink", &[("scenario", "minimal")]);
    let events = flink["events"].as_array().unwrap();
    let kind_of = |r: &serde_json::Value| flink["resources"][r.as_u64().unwrap() as usize]["kind"].clone();
    let (x, next) = (0..events.len())
        .filter(|&i| {
            events[i]["kind"] == "exit" && events[i]["amount"] == 0 && kind_of(&events[i]["resource"]) == "monitor"
        })
        .find_map(|i| {
            let e = &events[i];
            let j = (i + 1..events.len())
                .find(|&j| events[j]["resource"] == e["resource"] && events[j]["kind"] == "enter")?;
            (events[j]["task"] != e["task"]).then_some((i, j))
        })
        .expect("a monitor another task enters after an exit");
    let mut v = flink.clone();
    v["events"].as_array_mut().unwrap().remove(x);
    let name =
        flink["resources"][events[x]["resource"].as_u64().unwrap() as usize]["name"].as_str().unwrap().to_string();
    let want = format!(
        "events[{}]: task {} enters monitor \"{name}\", which task {} owns",
        next - 1,
        events[next]["task"],
        events[x]["task"]
    );
    assert!(err(&v).contains(&want), "{want}: {}", err(&v));
    // main joins the first Join task: released by another task, it is refused.
    let d = &flink["deadlock"];
    let j = d["behind"].as_array().unwrap().iter().position(|b| b["op"] == "join").expect("main joins");
    let (joined, other) = (&d["behind"][j]["released_by_ids"][0], d["cycle"][1]["task"].clone());
    assert_ne!(*joined, other);
    let mut v = flink.clone();
    v["deadlock"]["behind"][j]["released_by_ids"] = serde_json::json!([other]);
    v["deadlock"]["behind"][j]["released_by"] = serde_json::json!([d["cycle"][1]["name"]]);
    let want = format!("deadlock.behind[{j}].released_by_ids: [{other}], but the task joins task {joined}");
    assert!(err(&v).contains(&want), "{want}: {}", err(&v));
    // An RWMutex's write unlock taken out: the next lock of it finds a writer.
    let ttrpc = recorded("ttrpc", &[("server", "v1.0.2"), ("client", "v1.2.3")]);
    let events = ttrpc["events"].as_array().unwrap();
    let kind_of = |r: &serde_json::Value| ttrpc["resources"][r.as_u64().unwrap() as usize]["kind"].clone();
    let (x, next) = (0..events.len())
        .filter(|&i| events[i]["kind"] == "unlock" && kind_of(&events[i]["resource"]) == "rwmutex")
        .find_map(|i| {
            let j = (i + 1..events.len()).find(|&j| {
                events[j]["resource"] == events[i]["resource"]
                    && matches!(events[j]["kind"].as_str(), Some("lock" | "rlock"))
            })?;
            Some((i, j))
        })
        .expect("an RWMutex locked again after a write unlock");
    let writer = (0..x)
        .rev()
        .find(|&i| events[i]["resource"] == events[x]["resource"] && events[i]["kind"] == "lock")
        .map(|i| events[i]["task"].clone())
        .unwrap();
    let mut v = ttrpc.clone();
    v["events"].as_array_mut().unwrap().remove(x);
    let name =
        ttrpc["resources"][events[x]["resource"].as_u64().unwrap() as usize]["name"].as_str().unwrap().to_string();
    let how = if events[next]["kind"] == "lock" { "write-locks" } else { "read-locks" };
    let held = if how == "write-locks" { "holds" } else { "write-holds" };
    let want =
        format!("events[{}]: task {} {how} \"{name}\", which task {writer} {held}", next - 1, events[next]["task"]);
    assert!(err(&v).contains(&want), "{want}: {}", err(&v));
    // A sleeper woken by the running task, not by its time.
    // (The committed Flink pipeline failure has the Netty thread sleep for credit.)
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/flink-1.13.1-self-assign-clear-failure.json");
    let pipeline: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let pevents = pipeline["events"].as_array().unwrap();
    let wake = (0..pevents.len())
        .find(|&i| {
            pevents[i]["kind"] == "wake"
                && (0..i)
                    .rev()
                    .find(|&j| {
                        pevents[j]["task"] == pevents[i]["task"]
                            && matches!(pevents[j]["kind"].as_str(), Some("sleep" | "block"))
                    })
                    .is_some_and(|j| pevents[j]["kind"] == "sleep")
        })
        .expect("a sleeper wakes");
    let step = pevents[wake]["step"].as_u64().unwrap() as usize;
    let ran = pipeline["schedule"][step - 1].clone();
    let mut v = pipeline.clone();
    v["events"][wake]["peer"] = ran.clone();
    let e = err(&v);
    assert!(
        e.contains(&format!(
            "events[{wake}]: a wake event of task {} with peer {ran} at step {step}",
            pevents[wake]["task"]
        )),
        "{e}"
    );
    // A task spawned by one that has finished.
    let mut v = abba.clone();
    let evs = v["events"].as_array_mut().unwrap();
    let finish = evs.iter().position(|e| e["kind"] == "finish" && e["task"] == 0).expect("main finishes");
    let f = evs.remove(finish);
    evs.insert(1, f);
    let e = err(&v);
    assert!(e.contains("is spawned by task 0, which has finished"), "{e}");
    // A channel holding more messages than its capacity.
    let send = events.iter().position(|e| e["kind"] == "send").expect("a channel send");
    let mut v = ttrpc.clone();
    v["events"][send]["amount"] = 50.into();
    let e = err(&v);
    assert!(e.contains(&format!("events[{send}].amount: 50 messages buffered, but channel")), "{e}");
}

#[test]
fn a_task_alone_in_its_cycle_loads() {
    // main waits to receive on a channel whose every end it holds: the
    // report's cycle is that one task, which is not among its own
    // releasers. Such traces load.
    let run = sim::Sim::new(0).record(true).run(|| async {
        let ch: sim::sync::Chan<u32> = sim::sync::Chan::new("loop", 0);
        ch.declare_sender();
        ch.declare_receiver();
        ch.recv().await;
    });
    let d = run.outcome.deadlock().expect("a deadlock");
    assert_eq!((d.cycle.len(), d.cycle[0].name.as_str()), (1, "main"));
    assert!(d.cycle[0].released_by.is_empty(), "{d}");
    Trace::parse(&run.trace.unwrap().to_json(), "t.json").unwrap();
}

#[test]
fn a_partial_report_names_the_tasks_behind_its_cycle() {
    // The committed ttrpc trace is a partial deadlock: main joins a caller
    // that can never run, and a caller waits for streamLock, whose writer
    // is in the cycle. Leaving either out of `behind` is refused.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/ttrpc-s1.0.2-c1.2.3-deadlock.json");
    let good: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(good["deadlock"]["global"], false);
    Trace::parse(&good.to_string(), "t.json").expect("the committed trace loads");
    for (op, want) in [("join", "joins task"), ("lock", "waits for \"streamLock\", held by task")] {
        let mut v = good.clone();
        let behind = v["deadlock"]["behind"].as_array_mut().unwrap();
        let i = behind.iter().position(|b| b["op"] == op).unwrap_or_else(|| panic!("a {op} behind the cycle"));
        let name = behind.remove(i)["name"].as_str().unwrap().to_string();
        let e = Trace::parse(&v.to_string(), "t.json").expect_err("refused").to_string();
        assert!(e.contains("deadlock.behind: task") && e.contains(&format!("(\"{name}\") {want}")), "{op}: {e}");
        assert!(e.ends_with("which the report says can never run, but the report does not name it"), "{e}");
    }
}

/// A recorded run of `model` with `params`, as JSON to damage.
fn recorded_json(model: &str, params: &[(&str, &str)], seed: u64) -> serde_json::Value {
    let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let t = models::find(model).unwrap().configure(&params).unwrap().run(seed, true).trace.unwrap();
    serde_json::from_str(&t.to_json()).unwrap()
}

/// Index of the first event for which `f` holds.
fn first(v: &serde_json::Value, f: impl Fn(&serde_json::Value) -> bool) -> usize {
    v["events"].as_array().unwrap().iter().position(f).expect("such an event")
}

#[test]
fn channels_and_pipes_fill_and_drain_as_their_events_say() {
    let err = |v: &serde_json::Value| Trace::parse(&v.to_string(), "t.json").expect_err("rejected").to_string();
    // ttrpc with a small socket buffer: writes that do not all fit, bytes
    // moved in as the reader frees room, reads of what is buffered.
    let pb = recorded_json("ttrpc", &[("pipe-buffer", "5000")], 0);
    Trace::parse(&pb.to_string(), "t.json").expect("the engine's trace loads");
    let w = first(&pb, |e| e["kind"] == "write" && e["amount"].as_u64() > Some(0));
    let mut v = pb.clone();
    v["events"][w]["amount"] = serde_json::json!(4999);
    assert!(err(&v).contains(&format!("events[{w}]: a write of 4999 bytes into pipe")), "{}", err(&v));
    let mut v = pb.clone();
    v["events"][w]["buffered"] = serde_json::json!(0);
    assert!(err(&v).contains("leaves 0 buffered"), "{}", err(&v));
    // The write taken out: the reader then reads from an empty pipe.
    let mut v = pb.clone();
    v["events"].as_array_mut().unwrap().remove(w);
    let e = err(&v);
    assert!(e.contains("a read of") && e.contains("which buffered 0"), "{e}");
    let r = first(&pb, |e| e["kind"] == "read" && e["amount"].as_u64() > Some(0));
    let mut v = pb.clone();
    let twice = v["events"][r].clone();
    v["events"].as_array_mut().unwrap().insert(r + 1, twice);
    assert!(err(&v).contains(&format!("events[{}]: a read of", r + 1)), "{}", err(&v));
    // A pipe with more room than the trace says: a writer would not have blocked.
    let mut v = pb.clone();
    let pipe = v["events"][w]["resource"].as_u64().unwrap() as usize;
    v["resources"][pipe]["capacity"] = serde_json::json!(1_000_000);
    let e = err(&v);
    assert!(e.contains("blocks in write on pipe") && e.contains("of 1000000 bytes and no write is in progress"), "{e}");

    // The default ttrpc run: unbuffered channels and net.Pipes.
    let tt = recorded_json("ttrpc", &[], 0);
    // An unbuffered channel given room: the select that waits to send on it had a ready case.
    let sel = first(&tt, |e| {
        e["kind"] == "block" && e["op"] == "select" && e["cases"].as_array().unwrap().iter().any(|c| c["dir"] == "send")
    });
    let case = tt["events"][sel]["cases"].as_array().unwrap().iter().position(|c| c["dir"] == "send").unwrap();
    let chan = tt["events"][sel]["cases"][case]["resource"].as_u64().unwrap() as usize;
    let mut v = tt.clone();
    v["resources"][chan]["capacity"] = serde_json::json!(1);
    let e = err(&v);
    assert!(
        e.contains("blocks in a select, but its send case on channel") && e.contains("is ready (0 of 1 messages"),
        "{e}"
    );
    // A hand-off to a waiting receiver whose send is taken out.
    let handed = first(&tt, |e| e["kind"] == "recv" && !e["peer"].is_null());
    let mut v = tt.clone();
    v["events"].as_array_mut().unwrap().remove(handed - 1);
    let e = err(&v);
    assert!(
        e.contains(&format!("events[{}]: task", handed - 1)) && e.contains("but the event before is not that send"),
        "{e}"
    );
    // A task that blocks twice with no wake between.
    let block = first(&tt, |e| e["kind"] == "block");
    let mut v = tt.clone();
    let again = v["events"][block].clone();
    v["events"].as_array_mut().unwrap().insert(block + 1, again);
    assert!(
        err(&v).contains(&format!("events[{}]: task", block + 1)) && err(&v).contains("blocks again"),
        "{}",
        err(&v)
    );
}

#[test]
fn the_meta_and_task_table_agree_with_the_run() {
    let err = |v: &serde_json::Value| Trace::parse(&v.to_string(), "t.json").expect_err("rejected").to_string();
    let good = recorded_json("abba", &[], 0);
    let mut v = good.clone();
    v["meta"]["message"] = serde_json::json!("two\nlines");
    assert!(err(&v).contains("meta.message: more than one line"));
    // The schedule string of other parameters, or of another model.
    let mut v = good.clone();
    v["meta"]["params"][1]["value"] = serde_json::json!("7");
    assert!(err(&v).contains("meta.replay: fingerprint a5167e82, but meta.model and meta.params give"), "{}", err(&v));
    let mut v = good.clone();
    v["meta"]["replay"] = serde_json::json!("ds1:flink:a5167e82:1.2");
    assert!(
        err(&v).contains("meta.replay: \"ds1:flink:a5167e82:1.2\" is not a schedule string of model abba"),
        "{}",
        err(&v)
    );
    // A task in the table that no event spawns.
    let mut v = good.clone();
    v["tasks"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"id": 3, "name": "ghost", "background": false, "parent": 0}));
    assert!(err(&v).contains("tasks[3]: \"ghost\" is never spawned"), "{}", err(&v));
    // Background flags the run contradicts: with T1 and T2 in the
    // background, main's return at step 1 would have ended the run there.
    let mut v = good.clone();
    for t in [1, 2] {
        v["tasks"][t]["background"] = serde_json::json!(true);
    }
    assert!(err(&v).contains("every foreground task has returned by then"), "{}", err(&v));
}

#[test]
fn traces_of_a_library_users_model_load() {
    // A model labelled freely, whose task panics with a multi-line message
    // (an `assert_eq!`) and reads 0 bytes of a pipe with bytes in it: the
    // trace the engine writes loads, its message on one line.
    let params = vec![sim::trace::Param { name: "mode".into(), value: "a b".into() }];
    let run = sim::Sim::new(0).record(true).label("bank v2", params).run(|| async {
        let pipe: sim::sync::Pipe<()> = sim::sync::Pipe::new("p", 10);
        pipe.write(4, None).await.unwrap();
        let mut got = Vec::new();
        assert_eq!(pipe.read(0, &mut got).await, Ok(0));
        assert_eq!(pipe.buffered(), 4, "the read took nothing");
        assert_eq!(1 + 1, 3, "the model's own check");
    });
    let t = run.trace.unwrap();
    assert!(
        t.meta.message.starts_with(
            "panic in \"main\": assertion `left == right` failed: the model's own check; left: 2; right: 3"
        ),
        "{}",
        t.meta.message
    );
    let loaded = Trace::parse(&t.to_json(), "t.json").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.meta.model, "bank v2");
}

#[test]
fn a_notify_is_checked_against_the_monitors_wait_set() {
    use std::cell::Cell;
    use std::rc::Rc;
    // Two waiters on a monitor; main notifies until both have gone: each
    // notify wakes one of them, chosen by the scheduler.
    let model = || {
        sim::models::Configured::new("waiters", Vec::new(), |sim: Sim| {
            sim.run(|| async {
                let m = sim::sync::Monitor::new("m");
                let left = Rc::new(Cell::new(2u32));
                for name in ["w1", "w2"] {
                    let left = left.clone();
                    sim::spawn(name, async move {
                        let g = m.enter().await;
                        g.wait().await;
                        left.set(left.get() - 1);
                        g.exit().await;
                    });
                }
                while left.get() > 0 {
                    let g = m.enter().await;
                    g.notify();
                    g.exit().await;
                }
            })
        })
    };
    let err = |text: &str| Trace::parse(text, "t.json").expect_err("rejected").to_string();
    let mut checked = 0;
    for seed in 0..50 {
        let t = model().run(seed, true).trace.unwrap();
        // Every run's trace reads back: each notify's wake is of a waiter.
        Trace::parse(&t.to_json(), "t.json").unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let mut v: serde_json::Value = serde_json::to_value(&*t).unwrap();
        let events = v["events"].as_array_mut().unwrap();
        let Some(i) = events.iter().position(|e| e["kind"] == "notify" && e["amount"] == 1) else { continue };
        // A notify that says it woke nobody while a task waits.
        v["events"][i]["amount"] = serde_json::json!(0);
        let e = err(&v.to_string());
        assert!(e.contains(&format!("events[{i}].amount: a notify event of monitor \"m\" wakes 0, but")), "{e}");
        checked += 1;
    }
    assert!(checked > 0, "no seed notified a waiter");
}

#[test]
fn a_trace_of_any_pct_depth_the_library_runs_loads() {
    // The CLI takes depths 1 to 10; the library's strategy takes any, and
    // its trace names it (pct:20): the reader takes it as written.
    let model = models::find("abba").unwrap().configure(&[]).unwrap();
    let run = model.run_with(Sim::new(0).record(true).strategy(Box::new(PctStrategy::new(0, 20, 50))));
    let trace = run.trace.expect("recorded");
    assert_eq!(trace.meta.strategy, "pct:20");
    let back = Trace::parse(&trace.to_json(), "t.json").expect("a pct:20 trace loads");
    assert_eq!(back.to_json(), trace.to_json());
}

#[test]
fn a_run_recorded_for_its_schedule_alone_has_the_full_recordings_schedule() {
    // What a hunt records of its failing seed when no --trace is asked:
    // the schedule string, without the events (a few bytes a step).
    for (name, params) in [("abba", vec![]), ("ttrpc", vec![("client".to_string(), "v1.2.3".to_string())])] {
        let cfg = sim::models::find(name).unwrap().configure(&params).unwrap();
        for kind in [sim::scheduler::StrategyKind::Random, sim::scheduler::StrategyKind::Pct(3)] {
            for seed in 0..8 {
                let full = kind.run(&cfg, seed, true, 100_000);
                let lean = kind.run_for_schedule(&cfg, seed, 100_000);
                let (ft, lt) = (full.trace.unwrap(), lean.trace.unwrap());
                assert_eq!(lt.meta.replay, ft.meta.replay, "{name} {kind} seed {seed}");
                assert_eq!(lt.meta.strategy, ft.meta.strategy, "{name} {kind} seed {seed}");
                assert_eq!(lean.outcome, full.outcome, "{name} {kind} seed {seed}");
                assert!(lt.events.is_empty() && !ft.events.is_empty(), "{name} {kind} seed {seed}");
            }
        }
    }
}
