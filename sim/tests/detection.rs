//! Deadlock detection: partial cycles found the step they form, through
//! locks, channels, selects and pipes; never a report for a wait some
//! running task could still release.

use sim::sync::{select, Chan, Mutex, Pipe};
use sim::time::sleep;
use sim::{spawn, Outcome, Sim};

/// "T1" locks `a` then `b`, "T2" locks `b` then `a`, each sleeping in
/// between: they always deadlock, at virtual time 1000.
/// Panics unless the trace of `run` (recorded) reads back: its reader
/// checks every event against the report.
fn reads_back(run: &sim::Run, what: &str) {
    let json = run.trace.as_ref().expect("recorded").to_json();
    if let Err(e) = sim::trace::Trace::from_json(&json) {
        panic!("{what}: the trace does not read back: {e}");
    }
}

fn spawn_opposite_orders(a: Mutex, b: Mutex) {
    for (name, first, second) in [("T1", a, b), ("T2", b, a)] {
        spawn(name, async move {
            let _first = first.lock().await;
            sleep(1_000).await;
            let _second = second.lock().await;
        });
    }
}

#[test]
fn a_cycle_that_leaves_no_task_able_to_run_is_global() {
    // Found the step the second lock wait closes the cycle, with main
    // returned and no one else left: every task is asleep, as Go would say.
    let d = sim::models::find("abba").unwrap().configure(&[]).unwrap().run(0, false).outcome;
    let d = d.deadlock().expect("abba seed 0 deadlocks");
    assert!(d.global && d.running.is_empty(), "{d:?}");
    assert!(d.to_string().starts_with("Found a deadlock (no task can run) at step 5"), "{d}");
}

#[test]
fn a_global_deadlock_of_the_one_task_left_does_not_say_every_task() {
    // The sender returned without sending: main, the one task left, waits
    // for good. "every task is blocked" would overstate it.
    let run = Sim::new(0).run(|| async {
        let ch = Chan::<u32>::new("results", 0);
        let tx = ch.clone();
        spawn("producer", async move { tx.declare_sender() }).join().await;
        let _ = ch.recv().await;
    });
    let d = run.outcome.deadlock().expect("main waits for good");
    assert!(d.global && d.cycle.is_empty() && d.behind.len() == 1, "{d}");
    assert!(d.to_string().contains("ns: the one task left is blocked\n"), "{d}");
    assert_eq!(d.summary(), "deadlock (global): the one task left is blocked: main");
}

#[test]
fn partial_deadlock_is_found_while_other_tasks_still_run() {
    for seed in 0..100 {
        let run = Sim::new(seed).record(true).run(|| async {
            let (a, b) = (Mutex::new("A"), Mutex::new("B"));
            spawn_opposite_orders(a, b);
            spawn("bystander", async {
                for _ in 0..1_000 {
                    sim::yield_now().await;
                }
            });
        });
        let d = run.outcome.deadlock().expect("deadlock");
        assert!(!d.global);
        assert_eq!(d.running, vec!["bystander"], "seed {seed}");
        let names: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, vec!["T1", "T2"]);
        // Found at the step it formed: the last event before is the second block.
        let trace = run.trace.unwrap();
        let last_block = trace.events.iter().rev().find(|e| e.kind == sim::trace::EventKind::Block).unwrap();
        assert_eq!(last_block.step, d.step);
        assert!(d.step < 500, "found long before the bystander finishes");
    }
}

#[test]
fn tasks_blocked_behind_the_cycle_are_listed_apart() {
    let run = Sim::new(1).run(|| async {
        let (a, b) = (Mutex::new("A"), Mutex::new("B"));
        spawn_opposite_orders(a, b);
        spawn("waiter", async move {
            sleep(500).await;
            let _a = a.lock().await;
        });
    });
    let d = run.outcome.deadlock().expect("deadlock");
    let cycle: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
    let behind: Vec<&str> = d.behind.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(cycle, vec!["T1", "T2"]);
    assert_eq!(behind, vec!["waiter"]);
}

/// main holds `mu` and waits to receive on a channel whose senders are
/// `workers`, each stuck behind `mu`; with `main_sends`, main declares the
/// send end too.
fn recv_behind_senders(workers: &'static [&'static str], main_sends: bool) -> sim::Run {
    Sim::new(0).run(move || async move {
        let mu = Mutex::new("mu");
        let ch: Chan<u32> = Chan::new("results", 0);
        if main_sends {
            ch.declare_sender();
        }
        let g = mu.lock().await;
        for &name in workers {
            let tx = ch.clone();
            spawn(name, async move {
                tx.declare_sender();
                let _g = mu.lock().await;
                tx.send(1).await;
            });
        }
        ch.recv().await;
        drop(g);
    })
}

#[test]
fn a_task_holding_both_ends_is_not_named_as_its_own_releaser() {
    let run = recv_behind_senders(&["worker"], true);
    let d = run.outcome.deadlock().expect("deadlock");
    assert_eq!((d.cycle[0].name.as_str(), d.cycle[0].op.as_str()), ("main", "recv"));
    assert_eq!(d.cycle[0].released_by, vec!["worker"]);
}

#[test]
fn a_channel_wait_points_to_every_holder_of_the_other_end() {
    // Only when both senders are stuck behind main's lock is it a deadlock.
    let run = recv_behind_senders(&["worker-1", "worker-2"], false);
    let d = run.outcome.deadlock().expect("deadlock");
    assert_eq!(d.cycle[0].name, "main");
    assert_eq!(d.cycle[0].op, "recv");
    assert_eq!(d.cycle[0].released_by, vec!["worker-1", "worker-2"]);
    assert_eq!(d.cycle.len(), 2, "main -> worker-1 -> main");
    assert_eq!(d.behind.len(), 1);
}

#[test]
fn tasks_that_share_a_name_are_told_apart_by_id() {
    // A pool of two "worker"s behind main: the report names which is which.
    let run = recv_behind_senders(&["worker", "worker"], false);
    let d = run.outcome.deadlock().expect("deadlock");
    assert_eq!(d.cycle[0].released_by, vec!["worker", "worker"]);
    assert_eq!(d.cycle[0].released_by_ids, vec![1, 2]);
    assert_eq!(d.cycle[1].released_by_ids, vec![0]);
    assert_eq!((d.cycle[1].task, d.behind[0].task), (1, 2));
    let report = d.to_string();
    assert!(report.contains(r#"which only these could serve: "worker" (task 1), "worker" (task 2)"#), "{report}");
    // "main" is nobody else's name: it stays bare.
    assert!(report.contains(r#"waiting to lock mutex "mu", held by "main""#), "{report}");
    assert_eq!(
        d.summary(),
        r#"deadlock (global, 2 tasks in the cycle): "main" waiting to receive from "results" -> "worker" (task 1) waiting to lock "mu""#
    );

    // Two "worker"s in opposite lock orders: each is held up by the other.
    let run = Sim::new(0).run(|| async {
        let (a, b) = (Mutex::new("A"), Mutex::new("B"));
        for (first, second) in [(a, b), (b, a)] {
            spawn("worker", async move {
                let _first = first.lock().await;
                sleep(1_000).await;
                let _second = second.lock().await;
            });
        }
    });
    let d = run.outcome.deadlock().expect("deadlock");
    let ids: Vec<(u32, Vec<u32>)> = d.cycle.iter().map(|b| (b.task, b.released_by_ids.clone())).collect();
    assert_eq!(ids, vec![(1, vec![2]), (2, vec![1])]);
    let report = d.to_string();
    assert!(report.contains(r#""worker" (task 1): waiting to lock mutex "B", held by "worker" (task 2)"#), "{report}");
    assert!(report.contains(r#""worker" (task 2): waiting to lock mutex "A", held by "worker" (task 1)"#), "{report}");
    assert_eq!(d.shared, vec!["worker"]);

    // A third "worker" still running when they deadlock: "Still running" says which.
    let run = Sim::new(0).run(|| async {
        let (a, b) = (Mutex::new("A"), Mutex::new("B"));
        for (first, second) in [(a, b), (b, a)] {
            spawn("worker", async move {
                let _first = first.lock().await;
                sleep(1_000).await;
                let _second = second.lock().await;
            });
        }
        spawn("worker", sleep(5_000));
    });
    let d = run.outcome.deadlock().expect("deadlock");
    assert!(!d.global);
    assert_eq!((d.running.clone(), d.running_ids.clone()), (vec!["worker".to_string()], vec![3]));
    assert!(d.to_string().ends_with("\nStill running: \"worker\" (task 3)\n"), "{d}");

    // A name the report gives one task, but another task of the run has
    // too (here one that finished long before): still given its id.
    let run = Sim::new(0).run(|| async {
        let (a, b) = (Mutex::new("A"), Mutex::new("B"));
        spawn("T2", async {});
        sleep(1).await;
        spawn_opposite_orders(a, b);
    });
    let d = run.outcome.deadlock().expect("deadlock");
    assert_eq!(d.shared, vec!["T2"]);
    assert_eq!(
        d.summary(),
        r#"deadlock (global, 2 tasks in the cycle): "T1" waiting to lock "B" -> "T2" (task 3) waiting to lock "A""#
    );
    assert!(d.to_string().contains(r#"held by "T2" (task 3)"#), "{d}");
}

/// main holds `mu` and takes two messages from `jobs`; W1 sends one, then
/// waits for `mu`; W2 sends the other after `w2_sleeps` ns. With `declare`,
/// W1 declares its send end (and W2, unless `w2_declares` is false).
fn pool_of_two(seed: u64, declare: bool, w2_declares: bool, w2_sleeps: u64) -> sim::Run {
    Sim::new(seed).run(move || async move {
        let mu = Mutex::new("mu");
        let jobs: Chan<u32> = Chan::new("jobs", 0);
        let g = mu.lock().await;
        let (tx1, tx2) = (jobs.clone(), jobs.clone());
        spawn("W1", async move {
            if declare {
                tx1.declare_sender();
            }
            tx1.send(1).await;
            let _g = mu.lock().await;
        });
        spawn("W2", async move {
            if declare && w2_declares {
                tx2.declare_sender();
            }
            sleep(w2_sleeps).await;
            tx2.send(2).await;
        });
        jobs.recv().await;
        jobs.recv().await;
        drop(g);
    })
}

#[test]
fn a_channel_nobody_declared_is_never_judged_dead_while_a_task_may_still_use_it() {
    // When main waits for its second message, W1, the one sender it has
    // seen, waits for main's lock: by the senders seen, a deadlock. But W2
    // is still to send, and nobody declared who sends: no report. (A
    // report came here for every seed before the ends had to be declared.)
    for seed in 0..100 {
        for declare in [false, true] {
            let run = pool_of_two(seed, declare, true, 1_000);
            assert!(!run.outcome.is_failure(), "seed {seed}, declared {declare}: {}", run.outcome);
        }
    }
}

#[test]
fn a_global_deadlock_through_undeclared_channels_keeps_its_cycle() {
    // Nothing declared: main and T each wait for a message only the other
    // would send. No task can run, so the tasks that used each channel are
    // all there is: the report has its cycle, not just "every task is blocked".
    for seed in 0..30 {
        let run = Sim::new(seed).run(|| async {
            let (a, b): (Chan<u32>, Chan<u32>) = (Chan::new("a", 0), Chan::new("b", 0));
            let (ta, tb) = (a.clone(), b.clone());
            spawn("T", async move {
                ta.send(1).await;
                tb.recv().await;
                tb.recv().await;
            });
            a.recv().await;
            b.send(2).await;
            a.recv().await;
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome));
        assert!(d.global, "seed {seed}");
        let cycle: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(cycle, vec!["main", "T"], "seed {seed}: {d}");
    }
}

#[test]
fn a_write_lock_under_ones_own_read_lock_is_a_deadlock() {
    // Go's RWMutex has no upgrade: Lock waits for every reader to leave,
    // the caller among them.
    let run = Sim::new(0).run(|| async {
        let rw = sim::sync::RwMutex::new("cache");
        let _r = rw.rlock().await;
        let _w = rw.lock().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    assert_eq!((d.cycle.len(), d.cycle[0].name.as_str(), d.cycle[0].op.as_str()), (1, "main", "lock"), "{d}");
    assert_eq!(d.cycle[0].released_by, vec!["main"], "{d}");
}

/// Where each lock a blocked task holds was taken, as a report prints it.
fn held_at(b: &sim::BlockedTask) -> Vec<String> {
    b.holds.iter().map(|h| h.at.as_ref().unwrap().to_string()).collect()
}

#[test]
fn a_read_lock_left_after_a_nested_one_is_reported_where_the_outer_one_was_taken() {
    // kubernetes#62464's shape: RLock, a nested RLock and RUnlock, then a
    // writer arrives and the next RLock waits behind it. The read lock the
    // reader still holds is the outer one; the report said the inner's site.
    let mut found = 0;
    for seed in 0..100 {
        let run = Sim::new(seed).run(|| async {
            let rw = sim::sync::RwMutex::new("rw");
            spawn("reader", async move {
                let _f = sim::frame_at("outer", "outer.go:1");
                let g1 = rw.rlock().await;
                {
                    let _i = sim::frame_at("inner", "inner.go:10");
                    rw.rlock().await.runlock().await;
                }
                sim::at("outer.go:3");
                rw.rlock().await.runlock().await;
                g1.runlock().await;
            });
            spawn("writer", async move { rw.lock().await.unlock().await });
        });
        let Some(d) = run.outcome.deadlock() else { continue };
        let reader = d.cycle.iter().find(|b| b.name == "reader").unwrap_or_else(|| panic!("seed {seed}: {d}"));
        let at = held_at(reader);
        assert_eq!(at, ["outer (outer.go:1)"], "seed {seed}: {d}");
        found += 1;
    }
    assert!(found > 0);
}

#[test]
fn a_read_lock_let_go_out_of_nesting_order_leaves_the_other_one_in_the_report() {
    // RLock at outer.go:1, RLock at second.go:10, then the first guard's
    // RUnlock: the read lock left is the second one, whatever the order.
    let mut found = 0;
    for seed in 0..100 {
        let run = Sim::new(seed).run(|| async {
            let rw = sim::sync::RwMutex::new("rw");
            spawn("reader", async move {
                let _f = sim::frame_at("outer", "outer.go:1");
                let g1 = rw.rlock().await;
                let g2 = {
                    let _i = sim::frame_at("second", "second.go:10");
                    rw.rlock().await
                };
                g1.runlock().await;
                sim::at("outer.go:5");
                rw.rlock().await.runlock().await;
                g2.runlock().await;
            });
            spawn("writer", async move { rw.lock().await.unlock().await });
        });
        let Some(d) = run.outcome.deadlock() else { continue };
        let reader = d.cycle.iter().find(|b| b.name == "reader").unwrap_or_else(|| panic!("seed {seed}: {d}"));
        // Only where the writer came after g1's RUnlock (else g2 waits, holding g1).
        if reader.stack[0].to_string() != "outer (outer.go:5)" {
            continue;
        }
        let at = held_at(reader);
        assert_eq!(at, ["second (second.go:10)"], "seed {seed}: {d}");
        found += 1;
    }
    assert!(found > 0);
}

#[test]
fn a_read_lock_let_go_by_another_task_is_the_one_its_guard_holds() {
    // Go lets any goroutine RUnlock. "a" read-locks at a.go:1 and again at
    // a.go:2, and hands the second guard to "b", which lets go of it; a
    // writer arrives and a's third RLock waits behind it. The lock a still
    // holds is the one of a.go:1 (b's RUnlock once dropped the first hold).
    for seed in 0..50 {
        let run = Sim::new(seed).run(|| async {
            let rw = sim::sync::RwMutex::new("rw");
            let stage = std::rc::Rc::new(std::cell::Cell::new(0));
            let handed = std::rc::Rc::new(std::cell::RefCell::new(None));
            let (st, h) = (stage.clone(), handed.clone());
            spawn("a", async move {
                let _f = sim::frame_at("a", "a.go:1");
                let g1 = rw.rlock().await;
                sim::at("a.go:2");
                *h.borrow_mut() = Some(rw.rlock().await);
                st.set(1);
                while st.get() < 2 {
                    sim::yield_now().await;
                }
                // The writer queues meanwhile: nothing else can run.
                sleep(1_000).await;
                sim::at("a.go:3");
                rw.rlock().await.runlock().await;
                g1.runlock().await;
            });
            let (st, h) = (stage.clone(), handed);
            spawn("b", async move {
                while st.get() < 1 {
                    sim::yield_now().await;
                }
                let g2 = h.borrow_mut().take().unwrap();
                g2.runlock().await;
                st.set(2);
            });
            let st = stage;
            spawn("writer", async move {
                while st.get() < 2 {
                    sim::yield_now().await;
                }
                rw.lock().await.unlock().await;
            });
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome));
        let a = d.cycle.iter().find(|b| b.name == "a").unwrap_or_else(|| panic!("seed {seed}: {d}"));
        let at = held_at(a);
        assert_eq!(at, ["a (a.go:1)"], "seed {seed}: {d}");
    }
}

#[test]
fn a_send_on_a_signal_channel_is_a_model_error() {
    let run = Sim::new(0).run(|| async {
        let done = Chan::signal("done");
        done.declare_sender();
        done.send(()).await;
    });
    match &run.outcome {
        Outcome::Panic { message, .. } => {
            assert!(message.starts_with("sim: a send on signal channel \"done\""), "{message}")
        }
        o => panic!("{o}"),
    }
}

#[test]
fn a_task_using_an_end_declared_without_it_is_a_model_error() {
    // W1 declares itself the sender, W2 sends undeclared: the model is told.
    let want = "sim: task 2 (\"W2\") sends on (or closes) channel \"jobs\", whose holders of that end were declared without it";
    let told = (0..100)
        .filter(|&seed| {
            let run = pool_of_two(seed, true, false, 0);
            match &run.outcome {
                Outcome::Panic { task, message, .. } => {
                    assert!(task == "W2" && message.starts_with(want), "seed {seed}: {}", run.outcome);
                    true
                }
                _ => false,
            }
        })
        .count();
    assert!(told > 0, "no seed of 100 told");
}

#[test]
fn a_cycle_goes_through_the_other_holders_of_a_channel_not_back_to_its_waiter() {
    // Two workers each take jobs and hand some back. W1 holds `results`
    // and waits to send on the full `jobs`; W2, the other receiver, waits
    // for `results`. W1 holds the receive end too, but cannot serve itself
    // while it waits: the cycle is W1 -> W2, not W1 alone (as it was).
    for seed in 0..50 {
        let run = Sim::new(seed).run(|| async {
            let results = Mutex::new("results");
            let jobs: Chan<u32> = Chan::new("jobs", 1);
            jobs.declare_sender();
            jobs.send(0).await;
            let (j1, j2) = (jobs.clone(), jobs.clone());
            spawn("W1", async move {
                j1.declare_sender();
                j1.declare_receiver();
                let _r = results.lock().await;
                spawn("W2", async move {
                    j2.declare_sender();
                    j2.declare_receiver();
                    let _r = results.lock().await;
                });
                j1.send(1).await;
            });
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome));
        let cycle: Vec<(&str, &str)> = d.cycle.iter().map(|b| (b.name.as_str(), b.op.as_str())).collect();
        assert_eq!(cycle, vec![("W1", "send"), ("W2", "lock")], "seed {seed}: {d}");
        assert_eq!(d.cycle[0].released_by, vec!["W2"], "seed {seed}: {d}");
    }
}

#[test]
fn no_report_while_a_holder_of_the_other_end_can_still_run() {
    for seed in 0..200 {
        let run = Sim::new(seed).run(|| async {
            let mu = Mutex::new("mu");
            let ch: Chan<u32> = Chan::new("results", 0);
            let g = mu.lock().await;
            let tx = ch.clone();
            spawn("stuck", async move {
                tx.declare_sender();
                let _g = mu.lock().await;
            });
            let tx = ch.clone();
            spawn("slow", async move {
                tx.declare_sender();
                sleep(1_000_000).await;
                tx.send(1).await;
            });
            ch.recv().await;
            g.unlock().await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_task_not_yet_started_may_hold_any_end() {
    // main blocks on a channel before the task that will send has run a step.
    for seed in 0..100 {
        let run = Sim::new(seed).run(|| async {
            let ch: Chan<u32> = Chan::new("c", 0);
            let tx = ch.clone();
            spawn("late", async move { tx.send(5).await });
            assert_eq!(ch.recv().await, Some(5));
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_select_waits_for_any_of_its_cases() {
    let model = |b_free: bool| {
        move || async move {
            let mu = Mutex::new("mu");
            // c1 holds A's value once main stops receiving.
            let c1: Chan<u32> = Chan::new("c1", 1);
            let c2: Chan<u32> = Chan::new("c2", 0);
            let g = mu.lock().await;
            let t1 = c1.clone();
            spawn("A", async move {
                t1.declare_sender();
                let _g = mu.lock().await;
                t1.send(1).await;
            });
            let t2 = c2.clone();
            spawn("B", async move {
                t2.declare_sender();
                if b_free {
                    sleep(1_000).await;
                } else {
                    let _g = mu.lock().await;
                }
                t2.send(2).await;
            });
            let mut r1 = c1.recv_case();
            let mut r2 = c2.recv_case();
            select(&mut [&mut r1, &mut r2], false).await;
            g.unlock().await;
        }
    };
    for seed in 0..50 {
        let run = Sim::new(seed).run(model(false));
        let d = run.outcome.deadlock().expect("both cases stuck: deadlock");
        assert_eq!(d.cycle[0].op, "select");
        assert_eq!(d.cycle[0].waits_for, "recv c1 | recv c2");
        assert_eq!(d.cycle[0].released_by, vec!["A", "B"]);
        let run = Sim::new(seed).run(model(true));
        assert_eq!(run.outcome, Outcome::Completed, "one case can still fire");
    }
}

#[test]
fn full_pipes_in_both_directions_form_a_cycle() {
    // Each side writes more than the pipe holds before reading: the shape of
    // the ttrpc deadlock, without the channels.
    for seed in 0..50 {
        let run = Sim::new(seed).run(|| async {
            let c2s: Pipe<()> = Pipe::new("client->server", 16);
            let s2c: Pipe<()> = Pipe::new("server->client", 16);
            for (name, out, inp) in [("client", c2s.clone(), s2c.clone()), ("server", s2c.clone(), c2s.clone())] {
                spawn(name, async move {
                    out.declare_writer();
                    inp.declare_reader();
                    out.write(100, None).await.unwrap();
                    let mut msgs = Vec::new();
                    inp.read(100, &mut msgs).await.unwrap();
                });
            }
        });
        let d = run.outcome.deadlock().expect("deadlock");
        let cycle: Vec<(&str, &str, &str)> =
            d.cycle.iter().map(|b| (b.name.as_str(), b.op.as_str(), b.waits_for.as_str())).collect();
        assert_eq!(cycle, vec![("client", "write", "client->server"), ("server", "write", "server->client")]);
        // With a reader that reads first on one side, both complete.
        let run = Sim::new(seed).run(|| async {
            let c2s: Pipe<()> = Pipe::new("client->server", 16);
            let s2c: Pipe<()> = Pipe::new("server->client", 16);
            let (o, i) = (c2s.clone(), s2c.clone());
            spawn("client", async move {
                o.write(100, None).await.unwrap();
                let mut m = Vec::new();
                let mut got = 0;
                while got < 100 {
                    got += i.read(100, &mut m).await.unwrap();
                }
            });
            spawn("server", async move {
                let mut m = Vec::new();
                let mut got = 0;
                while got < 100 {
                    got += c2s.read(100, &mut m).await.unwrap();
                }
                s2c.write(100, None).await.unwrap();
            });
        });
        assert_eq!(run.outcome, Outcome::Completed);
    }
}

#[test]
fn the_report_reads_like_a_thread_dump() {
    let run = Sim::new(0).run(|| async {
        let (a, b) = (Mutex::new("A"), Mutex::new("B"));
        spawn("T1", async move {
            let _f = sim::frame_at("Worker.run", "worker.go:10");
            let _a = a.lock().await;
            sleep(1_000).await;
            sim::at("worker.go:12");
            let _b = b.lock().await;
        });
        spawn("T2", async move {
            let _f = sim::frame_at("Worker.run", "worker.go:10");
            let _b = b.lock().await;
            sleep(1_000).await;
            sim::at("worker.go:12");
            let _a = a.lock().await;
        });
    });
    let text = run.outcome.to_string();
    assert!(text.contains("\"T1\" (task 1): waiting to lock mutex \"B\", held by \"T2\""), "{text}");
    assert!(text.contains("    at Worker.run (worker.go:12)"), "{text}");
    assert!(text.contains("    - locked mutex \"A\" at Worker.run (worker.go:10)"), "{text}");
}

/// `lockIt`: locks `m` in a frame of its own and returns with it held.
async fn lock_it(m: Mutex) -> sim::sync::MutexGuard {
    let _f = sim::frame_at("lockIt", "util.go:3");
    m.lock().await
}

#[test]
fn a_held_lock_is_printed_under_the_frame_that_took_it() {
    let run = Sim::new(0).run(|| async {
        let (a, b, c, d) = (Mutex::new("A"), Mutex::new("B"), Mutex::new("C"), Mutex::new("D"));
        spawn("T1", async move {
            let _f = sim::frame_at("Outer.run", "outer.go:5");
            // Taken by a frame that has returned: printed after the stack.
            let _c = lock_it(c).await;
            // The same function twice on the stack, each holding its own.
            let _outer = sim::frame_at("Worker.step", "worker.go:10");
            let _a = a.lock().await;
            let _inner = sim::frame_at("Worker.step", "worker.go:10");
            let _d = d.lock().await;
            sleep(1_000).await;
            sim::at("worker.go:12");
            let _b = b.lock().await;
        });
        spawn("T2", async move {
            let _b = b.lock().await;
            sleep(1_000).await;
            let _a = a.lock().await;
        });
    });
    let text = run.outcome.to_string();
    let t1 = "\"T1\" (task 1): waiting to lock mutex \"B\", held by \"T2\"
    at Worker.step (worker.go:12)
    - locked mutex \"D\" at Worker.step (worker.go:10)
    at Worker.step (worker.go:10)
    - locked mutex \"A\" at Worker.step (worker.go:10)
    at Outer.run (outer.go:5)
    - locked mutex \"C\" at lockIt (util.go:3)
";
    assert!(text.contains(t1), "{text}");
    let d = run.outcome.deadlock().unwrap();
    let frames: Vec<_> = d.cycle[0].holds.iter().map(|h| (h.resource.as_str(), h.frame)).collect();
    assert_eq!(frames, [("A", Some(1)), ("C", None), ("D", Some(0))]);
    // A task with no frames holds with none.
    assert!(text.contains("    at <task body>\n    - locked mutex \"B\"\n"), "{text}");
}

/// `lockIt` that hands the lock off (to whoever will unlock it) before it
/// returns.
async fn lock_it_handed(m: Mutex) -> sim::sync::MutexGuard {
    let _f = sim::frame_at("lockIt", "util.go:3");
    let g = m.lock().await;
    g.hand_off();
    g
}

/// T1 takes C through `lockIt` (handing it off, if `handed`), then blocks
/// in a second call of `lockIt` at the same depth, for B, which T2 holds
/// while it waits for C.
fn lock_it_twice(handed: bool) -> sim::Run {
    Sim::new(0).run(move || async move {
        let (b, c) = (Mutex::new("B"), Mutex::new("C"));
        spawn("T1", async move {
            let _f = sim::frame_at("Outer.run", "outer.go:5");
            let _c = if handed { lock_it_handed(c).await } else { lock_it(c).await };
            sleep(1_000).await;
            // The same function at the same depth: not the call that took C.
            let _b = lock_it(b).await;
        });
        spawn("T2", async move {
            let _b = b.lock().await;
            sleep(1_000).await;
            let _c = c.lock().await;
        });
    })
}

#[test]
fn a_lock_taken_by_a_call_that_returned_is_not_printed_under_the_next_call_of_that_function() {
    let run = lock_it_twice(false);
    let text = run.outcome.to_string();
    let t1 = "\"T1\" (task 1): waiting to lock mutex \"B\", held by \"T2\"
    at lockIt (util.go:3)
    at Outer.run (outer.go:5)
    - locked mutex \"C\" at lockIt (util.go:3)
";
    assert!(text.contains(t1), "{text}");
    assert_eq!(run.outcome.deadlock().unwrap().cycle[0].holds[0].frame, None);
}

#[test]
fn a_lock_handed_off_is_printed_after_the_stack() {
    // `hand_off` takes the hold off the task's books for lock order, so the
    // return of the frame that took it would go unseen: from the hand-off
    // on it is printed after the stack, not under a later call of `lockIt`.
    let text = lock_it_twice(true).outcome.to_string();
    let t1 = "    at lockIt (util.go:3)
    at Outer.run (outer.go:5)
    - locked mutex \"C\" at lockIt (util.go:3)
";
    assert!(text.contains(t1), "{text}");
}

/// How [`one_slot_buffer`] runs.
#[derive(Clone, Copy, Default)]
struct Buffer {
    /// notifyAll() instead of notify().
    notify_all: bool,
    /// main joins the four tasks.
    join: bool,
    /// A background heartbeat runs on beside them.
    heartbeat: bool,
    /// The four declare themselves the monitor's notifiers.
    declare: bool,
}

/// Java's classic bounded buffer of one slot, two producers and two
/// consumers of `items` each, waiting in `while` loops on one monitor; with
/// `notify()` (not `notifyAll()`) a notify can wake a task of the same side,
/// which waits again, until every task waits.
fn one_slot_buffer(sim: Sim, b: Buffer, items: u32) -> sim::Run {
    use sim::sync::Monitor;
    use std::cell::Cell;
    use std::rc::Rc;
    sim.run(move || async move {
        if b.heartbeat {
            spawn_heartbeat();
        }
        let mon = Monitor::new("buffer");
        let slot: Rc<Cell<Option<u32>>> = Rc::new(Cell::new(None));
        let wake = move |g: &sim::sync::MonitorGuard| if b.notify_all { g.notify_all() } else { g.notify() };
        let mut handles = Vec::new();
        for p in ["producer-1", "producer-2"] {
            let slot = slot.clone();
            handles.push(spawn(p, async move {
                if b.declare {
                    mon.declare_notifier();
                }
                let _f = sim::frame("Buffer.put");
                for i in 0..items {
                    let g = mon.enter().await;
                    while slot.get().is_some() {
                        sim::at("Buffer.java:12");
                        g.wait().await;
                    }
                    slot.set(Some(i));
                    sim::at("Buffer.java:15");
                    wake(&g);
                    g.exit().await;
                }
            }));
        }
        for c in ["consumer-1", "consumer-2"] {
            let slot = slot.clone();
            handles.push(spawn(c, async move {
                if b.declare {
                    mon.declare_notifier();
                }
                let _f = sim::frame("Buffer.take");
                for _ in 0..items {
                    let g = mon.enter().await;
                    while slot.get().is_none() {
                        sim::at("Buffer.java:22");
                        g.wait().await;
                    }
                    slot.set(None);
                    sim::at("Buffer.java:25");
                    wake(&g);
                    g.exit().await;
                }
            }));
        }
        if b.join {
            for h in handles {
                h.join().await;
            }
        }
    })
}

/// A background task that sleeps forever, a second at a time: one that
/// runs on beside a deadlock and could, as far as deadsim knows, release it.
fn spawn_heartbeat() {
    sim::spawn_background("heartbeat", async {
        loop {
            sleep(1_000_000).await;
        }
    });
}

#[test]
fn a_deadlock_in_wait_names_the_monitors_last_notify() {
    // notify() where notifyAll() was needed: every task ends in wait(), and
    // the report's last line on the monitor shows how: its last notify
    // woke a task of the same side, which waits again (or woke nobody).
    let mut deadlocks = 0;
    let mut signatures = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let run = one_slot_buffer(Sim::new(seed).record(true), Buffer::default(), 3);
        let Some(d) = run.outcome.deadlock() else { continue };
        deadlocks += 1;
        let waiting: Vec<&str> = d.cycle.iter().chain(&d.behind).map(|b| b.op.as_str()).collect();
        assert!(waiting.len() >= 2 && waiting.iter().all(|&op| op == "wait"), "seed {seed}: {d}");
        // Waiters waiting for one another's notify are no cycle worth
        // drawing: the report lists them all, and signs the bug one way
        // whichever waiters are left.
        assert!(d.global && d.cycle.is_empty(), "seed {seed}: {d}");
        signatures.insert(sim::hunt::signature(&run.outcome));
        assert_eq!(d.notifies.len(), 1, "seed {seed}");
        let n = &d.notifies[0];
        assert_eq!((n.monitor.as_str(), n.resource), ("buffer", 0));
        let last = n.last.as_ref().expect("the buffer was notified");
        assert_eq!(last.op, "notify");
        let side = |name: &str| name.split('-').next().unwrap().to_string();
        assert_eq!(last.woke.len(), last.woke_ids.len());
        match last.woke_ids.as_slice() {
            [] => assert!(d.to_string().contains("with no task waiting: it was lost"), "{d}"),
            [w] => {
                // The woken task waits again: a notify of its own side's,
                // which could not use it.
                assert!(d.behind.iter().chain(&d.cycle).any(|b| b.task == *w), "seed {seed}: {d}");
                assert_eq!(side(&last.woke[0]), side(&last.name), "seed {seed}: {d}");
                let line = format!(
                    "Last notify of \"buffer\": notify() at step {} by \"{}\" at Buffer.{} (Buffer.java:{}), which woke \"{}\" (waiting again)\n",
                    last.step,
                    last.name,
                    if last.name.starts_with("producer") { "put" } else { "take" },
                    if last.name.starts_with("producer") { 15 } else { 25 },
                    last.woke[0]
                );
                assert!(d.to_string().contains(&line), "seed {seed}: want {line}in\n{d}");
            }
            more => panic!("notify woke {more:?}"),
        }
        // The trace reader checks the entry against the events.
        let json = run.trace.unwrap().to_json();
        sim::trace::Trace::parse(&json, "buffer.json").expect("the trace reads back");
    }
    assert!(deadlocks > 10, "{deadlocks} of 300 seeds deadlock");
    assert_eq!(
        signatures.into_iter().collect::<Vec<_>>(),
        vec!["deadlock: every task is blocked: consumer-* wait buffer, producer-* wait buffer"]
    );
    // With main joining the four: still no cycle ("main could notify" is no
    // more than the waiters' own), main listed with them.
    let mut joined = 0;
    for seed in 0..300 {
        let run = one_slot_buffer(Sim::new(seed).record(true), Buffer { join: true, ..Buffer::default() }, 3);
        let Some(d) = run.outcome.deadlock() else { continue };
        joined += 1;
        assert!(d.cycle.is_empty(), "seed {seed}: {d}");
        assert!(d.behind.iter().any(|b| b.name == "main" && b.op == "join"), "seed {seed}: {d}");
    }
    assert!(joined > 10, "{joined}");
    // notifyAll() wakes both sides: no schedule deadlocks.
    for seed in 0..300 {
        let run = one_slot_buffer(Sim::new(seed).record(true), Buffer { notify_all: true, ..Buffer::default() }, 3);
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_lost_notify_and_a_monitor_never_notified_are_reported() {
    use sim::sync::Monitor;
    // The notify comes before the wait (no flag checked under the monitor):
    // the waiter waits forever.
    let run = Sim::new(0).record(true).run(|| async {
        let ready = Monitor::new("ready");
        spawn("waiter", async move {
            sleep(1_000).await;
            let g = ready.enter().await;
            g.wait().await;
            g.exit().await;
        });
        spawn("notifier", async move {
            let _f = sim::frame_at("Main.signal", "Main.java:9");
            let g = ready.enter().await;
            g.notify();
            g.exit().await;
        });
    });
    let d = run.outcome.deadlock().expect("deadlock");
    let last = d.notifies[0].last.as_ref().expect("notified once");
    assert!(last.woke.is_empty() && last.woke_ids.is_empty());
    let report = d.to_string();
    assert!(
        report.contains("Last notify of \"ready\": notify() at step 4 by \"notifier\" at Main.signal (Main.java:9), with no task waiting: it was lost\n"),
        "{report}"
    );
    let good = run.trace.unwrap().to_json();
    sim::trace::Trace::parse(&good, "t.json").expect("reads back");
    // A report whose notify the events contradict is refused.
    let tamper = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        f(&mut v);
        sim::trace::Trace::parse(&v.to_string(), "t.json").unwrap_err().to_string()
    };
    let e = tamper(&|v| v["deadlock"]["notifies"][0]["last"]["woke_ids"] = serde_json::json!([1]));
    assert!(e.contains("deadlock.notifies[0].last.woke_ids: [1], but the notify's wake events wake tasks []"), "{e}");
    let e = tamper(&|v| v["deadlock"]["notifies"][0]["last"]["step"] = serde_json::json!(1));
    assert!(e.contains("deadlock.notifies[0].last: notify at step 1 by task 2, but the monitor's last notify is a notify at step 4 by task 2"), "{e}");
    let e = tamper(&|v| {
        let n = v["deadlock"]["notifies"][0].clone();
        v["deadlock"]["notifies"].as_array_mut().unwrap().push(n);
    });
    assert!(
        e.contains("deadlock.notifies: monitors [0, 0], but the report's tasks wait in wait() on monitors [0]"),
        "{e}"
    );
    // Without the field (a trace written before deadsim kept it): read as it was.
    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["deadlock"].as_object_mut().unwrap().remove("notifies");
    sim::trace::Trace::parse(&v.to_string(), "t.json").expect("an older trace reads");
    let e = tamper(&|v| v["deadlock"]["notifies"][0]["last"] = serde_json::Value::Null);
    assert!(e.contains("deadlock.notifies[0].last: none, but the monitor is notified at step 4"), "{e}");

    // Nested monitor lockout: A waits on `inner` still holding `outer`; B
    // needs `outer` before it can notify `inner`, which nobody ever did.
    let run = Sim::new(0).run(|| async {
        let (outer, inner) = (Monitor::new("outer"), Monitor::new("inner"));
        spawn("A", async move {
            let o = outer.enter().await;
            let i = inner.enter().await;
            i.wait().await;
            i.exit().await;
            o.exit().await;
        });
        spawn("B", async move {
            sleep(1_000).await;
            let o = outer.enter().await;
            let i = inner.enter().await;
            i.notify();
            i.exit().await;
            o.exit().await;
        });
    });
    let d = run.outcome.deadlock().expect("deadlock");
    assert_eq!(d.notifies.len(), 1);
    assert_eq!((d.notifies[0].monitor.as_str(), &d.notifies[0].last), ("inner", &None));
    // A cycle through B's wait for A's lock: that one is drawn.
    let cycle: Vec<(&str, &str)> = d.cycle.iter().map(|b| (b.name.as_str(), b.op.as_str())).collect();
    assert_eq!(cycle, vec![("A", "wait"), ("B", "lock")]);
    assert!(d.to_string().contains("\nMonitor \"inner\" was never notified.\n"), "{d}");
}

#[test]
fn a_wait_judged_while_a_task_had_not_started_is_judged_again_once_it_has() {
    // main joins "sender", stuck on a channel only main may receive from;
    // a background heartbeat runs forever. When the sender blocked before
    // the heartbeat's first step (it might have declared itself a
    // receiver), its wait could not be judged; with the heartbeat running
    // on, no later block came to judge it, and the run ended at the step
    // limit. It is judged again once every spawned task has run.
    let mut first_steps = std::collections::BTreeSet::new();
    for seed in 0..300 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let ch: Chan<u32> = Chan::new("ch", 0);
            ch.declare_receiver();
            let c = ch.clone();
            let sender = spawn("sender", async move {
                c.declare_sender();
                c.send(1).await;
            });
            sender.join().await;
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome.summary()));
        assert!(!d.global, "the heartbeat still runs");
        let cycle: Vec<(&str, &str)> = d.cycle.iter().map(|b| (b.name.as_str(), b.op.as_str())).collect();
        assert_eq!(cycle, vec![("main", "join"), ("sender", "send")], "seed {seed}");
        assert_eq!(d.running, vec!["heartbeat"]);
        first_steps.insert(d.step);
    }
    // Found within a few steps of forming, not at the step limit.
    assert!(first_steps.iter().all(|&s| s < 10), "{first_steps:?}");
    // Its trace with the cycle's tasks moved behind it, the join's releaser
    // emptied: only a wait nobody is left to serve (a wait() with no
    // notifier, a channel or pipe wait with no holder of the other end)
    // stands alone in a partial report, and a join or a wait with a
    // releaser does not.
    let run = Sim::new(0).record(true).max_steps(10_000).run(|| async {
        spawn_heartbeat();
        let ch: Chan<u32> = Chan::new("ch", 0);
        ch.declare_receiver();
        let c = ch.clone();
        spawn("sender", async move {
            c.declare_sender();
            c.send(1).await;
        })
        .join()
        .await;
    });
    let mut v: serde_json::Value = serde_json::from_str(&run.trace.unwrap().to_json()).unwrap();
    let mut cycle = v["deadlock"]["cycle"].take();
    for b in cycle.as_array_mut().unwrap().iter_mut().filter(|b| b["op"] == "join") {
        b["released_by"] = serde_json::json!([]);
        b["released_by_ids"] = serde_json::json!([]);
    }
    v["deadlock"]["behind"] = cycle;
    v["deadlock"]["cycle"] = serde_json::json!([]);
    let e = sim::trace::Trace::parse(&v.to_string(), "t.json").unwrap_err().to_string();
    assert!(e.contains("deadlock.cycle: empty, but deadlock.global is false"), "{e}");
}

#[test]
fn a_run_stopped_at_its_step_limit_lists_the_tasks_blocked_there() {
    // A lost notify beside a heartbeat that runs forever: the waiter's wait
    // could be notified by the heartbeat (any live task may notify), so no
    // check proves it dead, and the run ends at the step limit. The report
    // says who is blocked there, and on what.
    use sim::sync::Monitor;
    let run = Sim::new(0).max_steps(2_000).run(|| async {
        spawn_heartbeat();
        let ready = Monitor::new("ready");
        let g = ready.enter().await;
        g.notify();
        g.exit().await;
        spawn("waiter", async move {
            let _f = sim::frame_at("Waiter.run", "Waiter.java:7");
            let g = ready.enter().await;
            g.wait().await;
            g.exit().await;
        });
    });
    let Outcome::StepLimit { steps, blocked, .. } = &run.outcome else { panic!("{}", run.outcome.summary()) };
    assert_eq!(*steps, 2_000);
    let entries: Vec<(&str, &str, &str)> =
        blocked.iter().map(|b| (b.name.as_str(), b.op.as_str(), b.waits_for.as_str())).collect();
    assert_eq!(entries, vec![("waiter", "wait", "ready")]);
    assert_eq!(blocked[0].released_by, vec!["heartbeat"]);
    assert_eq!(
        run.outcome.to_string(),
        "step limit: still running after 2000 steps\n\nBlocked at the limit:\n\
         \"waiter\" (task 2): waiting for a notify on monitor \"ready\", which any of these could notify: \"heartbeat\"\n\
         \x20   at Waiter.run (Waiter.java:7)\n\n\
         Asleep at the limit: \"heartbeat\"\n"
    );
}

#[test]
fn a_step_limit_report_names_a_starved_releaser_and_who_used_up_the_steps() {
    // A ticker and its drain never block (Go's 1 ns ticker under a 100 ns
    // step): PCT, which always runs the highest-priority task that can,
    // starves "worker", main's declared sender, whenever it draws the
    // lowest priority. Not a deadlock: the report at the step limit must
    // not say that no task is left to send (worker is live), and says who
    // ran and who never did.
    use sim::scheduler::StrategyKind;
    let program = || async {
        let tick: Chan<()> = Chan::new("ticker.C", 1);
        let (t1, t2) = (tick.clone(), tick.clone());
        let h = sim::spawn_background("ticker", async move {
            loop {
                sleep(1).await;
                let mut send = t1.send_case(());
                select(&mut [&mut send], true).await;
            }
        });
        tick.declare_sender_for(h.id());
        let h = sim::spawn_background("keeper", async move { while t2.recv().await.is_some() {} });
        tick.declare_receiver_for(h.id());
        let ch: Chan<u32> = Chan::new("ch", 0);
        let tx = ch.clone();
        let h = spawn("worker", async move { tx.send(1).await });
        ch.declare_sender_for(h.id());
        ch.declare_receiver();
        ch.recv().await;
    };
    let mut starved = 0;
    for seed in 0..30 {
        let run = StrategyKind::Pct(1).run_by(seed, false, 2_000, |sim| sim.run(program));
        let Outcome::StepLimit { blocked, running, .. } = &run.outcome else {
            assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
            continue;
        };
        // Main waits in recv while worker never ran, or worker waits in
        // send while main, its receiver, is the one starved.
        let text = run.outcome.to_string();
        assert_eq!(blocked.len(), 1, "seed {seed}: {text}");
        let other = if blocked[0].name == "main" { "worker" } else { "main" };
        assert_eq!(blocked[0].released_by, [other], "seed {seed}: {text}");
        assert!(!text.contains("no task left"), "seed {seed}: {text}");
        let mut who: Vec<(&str, bool)> = running.iter().map(|r| (r.name.as_str(), r.started)).collect();
        who.retain(|w| w.0 == other);
        assert_eq!(who.len(), 1, "seed {seed}: {text}");
        if !who[0].1 {
            starved += 1;
            assert!(
                text.contains(
                    "\"main\" (task 0): waiting to receive from chan \"ch\", which only these could serve: \
                     \"worker\"\n\x20   at <task body>\n\n"
                ),
                "seed {seed}: {text}"
            );
            // The ticker may be between ticks, asleep, at the limit.
            let lines: Vec<&str> = text.lines().collect();
            let listed = |prefix: &str| lines.iter().find(|l| l.starts_with(prefix)).copied().unwrap_or("");
            let (ran, asleep) = (listed("Still running at the limit: "), listed("Asleep at the limit: "));
            assert!(ran.contains("\"keeper\"") || asleep.contains("\"keeper\""), "seed {seed}: {text}");
            assert!(ran.contains("\"ticker\"") || asleep.contains("\"ticker\""), "seed {seed}: {text}");
            let spawned = running.iter().find(|r| r.name == "worker").unwrap().spawned_at;
            assert!(
                text.ends_with(&format!(
                    "Never scheduled, though able to run since spawned: \"worker\" (spawned at step {spawned})\n"
                )),
                "seed {seed}: {text}"
            );
        }
    }
    assert!(starved > 0, "PCT starves the worker in some seed");
}

#[test]
fn a_send_with_a_timeout_case_is_no_deadlock_and_without_one_is() {
    // Go: a worker sends its result in a select with `<-time.After(d)`;
    // the caller gave up and never receives. With the timeout the worker
    // leaves; without it, it waits forever (a goroutine leak the caller's
    // join turns into a deadlock).
    for timeout in [true, false] {
        for seed in 0..200 {
            let run = Sim::new(seed).run(move || async move {
                let results: Chan<u32> = Chan::new("results", 0);
                results.declare_receiver();
                let tx = results.clone();
                let worker = spawn("worker", async move {
                    tx.declare_sender();
                    let mut send = tx.send_case(7);
                    if timeout {
                        let after = sim::time::after(5_000);
                        let mut expired = after.recv_case();
                        select(&mut [&mut send, &mut expired], false).await;
                    } else {
                        select(&mut [&mut send], false).await;
                    }
                });
                worker.join().await;
            });
            if timeout {
                assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
            } else {
                let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome.summary()));
                let cycle: Vec<(&str, &str)> = d.cycle.iter().map(|b| (b.name.as_str(), b.op.as_str())).collect();
                assert_eq!(cycle, vec![("main", "join"), ("worker", "select")], "seed {seed}");
            }
        }
    }
}

#[test]
fn declared_notifiers_let_a_wait_deadlock_be_found_beside_a_task_that_runs_on() {
    use sim::sync::Monitor;
    // The one-slot buffer with notify() (not notifyAll), beside a
    // heartbeat: any live task may notify, so without declarations every
    // task in wait() waits on the heartbeat too, and the run ends at the
    // step limit. With the four declared as the buffer's notifiers, the
    // deadlock is found as it forms, the heartbeat still running.
    let model = |seed: u64, declare: bool, notify_all: bool| {
        let b = Buffer { notify_all, heartbeat: true, declare, ..Buffer::default() };
        one_slot_buffer(Sim::new(seed).max_steps(3_000), b, 3)
    };
    let (mut found, mut limits) = (0, 0);
    for seed in 0..300 {
        match &model(seed, true, false).outcome {
            Outcome::Deadlock(d) => {
                assert!(!d.global && d.running == vec!["heartbeat"], "seed {seed}: {d}");
                assert!(d.cycle.iter().chain(&d.behind).all(|b| b.op == "wait"), "seed {seed}: {d}");
                assert!(d.step < 200, "seed {seed}: found as it forms, at step {}", d.step);
                found += 1;
            }
            Outcome::Completed => {}
            other => panic!("seed {seed}: {}", other.summary()),
        }
        match &model(seed, false, false).outcome {
            Outcome::StepLimit { .. } => limits += 1,
            Outcome::Completed => {}
            other => panic!("seed {seed} undeclared: {}", other.summary()),
        }
        assert_eq!(model(seed, true, true).outcome, Outcome::Completed, "seed {seed}: notifyAll");
    }
    assert!(found > 10, "{found}");
    // The same schedules deadlock, declared or not: only the finding differs.
    assert_eq!(found, limits);

    // The lost wakeup itself: the one declared notifier notified before the
    // wait and finished; nobody alive can notify. Found as it forms, the
    // heartbeat still running, with no cycle: the waiter is dead by itself.
    for seed in 0..50 {
        let run = Sim::new(seed).record(true).max_steps(3_000).run(|| async {
            spawn_heartbeat();
            let ready = Monitor::new("ready");
            let notifier = spawn("notifier", async move {
                ready.declare_notifier();
                let g = ready.enter().await;
                g.notify();
                g.exit().await;
            });
            notifier.join().await;
            spawn("waiter", async move {
                let g = ready.enter().await;
                g.wait().await;
                g.exit().await;
            });
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome.summary()));
        assert!(!d.global && d.cycle.is_empty() && d.running == vec!["heartbeat"], "seed {seed}: {d}");
        assert_eq!(d.behind.iter().map(|b| b.name.as_str()).collect::<Vec<_>>(), vec!["waiter"]);
        assert!(d.to_string().contains("1 task blocked for good, in no cycle"), "{d}");
        assert!(d.to_string().contains("with no task waiting: it was lost"), "{d}");
        assert_eq!(sim::hunt::signature(&run.outcome), "deadlock: blocked for good: waiter wait ready");
        sim::trace::Trace::parse(&run.trace.unwrap().to_json(), "t.json").expect("the trace reads back");
    }

    // A notify by a task not declared, once the monitor declares its notifiers: the run fails.
    let run = Sim::new(0).run(|| async {
        let m = Monitor::new("m");
        m.declare_notifier();
        spawn("rogue", async move {
            let g = m.enter().await;
            g.notify();
            g.exit().await;
        });
    });
    let Outcome::Panic { task, message, .. } = &run.outcome else { panic!("{}", run.outcome.summary()) };
    assert_eq!(task, "rogue");
    assert!(message.contains("notifies monitor \"m\", whose notifiers were declared without it"), "{message}");
}

#[test]
fn time_after_counts_from_the_call() {
    // Each deadline from the call (the timer task's first step comes later);
    // the send may lag the deadline, never precede it.
    for seed in 0..100 {
        let run = Sim::new(seed).run(|| async {
            let t0 = sim::time::now();
            let after = sim::time::after(1_000);
            after.recv().await;
            let waited = sim::time::now() - t0;
            assert!((1_000..1_000 + 5 * sim::DEFAULT_STEP_NS).contains(&waited), "{waited}");
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}: {}", run.outcome.summary());
    }
}

#[test]
fn a_receive_whose_declared_senders_all_finished_is_dead_by_itself() {
    // The sender returns without sending (a goroutine that forgot to), while
    // a heartbeat runs on: the receiver is blocked for good, with no cycle.
    // Found when the receiver blocks or, if it blocked first, when the last
    // declared sender finishes, not at the step limit; a background task in
    // the same wait is parked, as at the end of a run.
    let mut steps = std::collections::BTreeSet::new();
    for seed in 0..100 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let ch: Chan<u32> = Chan::new("results", 0);
            let (tx, rx, parked) = (ch.clone(), ch.clone(), ch.clone());
            sim::spawn_background("server.loop", async move {
                parked.declare_receiver();
                parked.recv().await;
            });
            let receiver = spawn("receiver", async move {
                rx.declare_receiver();
                rx.recv().await;
            });
            spawn("sender", async move {
                tx.declare_sender();
                sim::yield_now().await;
            });
            receiver.join().await;
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome.summary()));
        assert!(!d.global && d.cycle.is_empty(), "seed {seed}: {d:?}");
        let behind: Vec<(&str, &str, usize)> =
            d.behind.iter().map(|b| (b.name.as_str(), b.op.as_str(), b.released_by.len())).collect();
        // Main is behind it once it joins; found before, it still runs.
        let alone = [("receiver", "recv", 0)];
        assert!(behind == alone || behind == [("main", "join", 1), alone[0]], "seed {seed}: {behind:?}");
        let text = d.to_string();
        assert!(
            text.contains("\"receiver\" (task 3): waiting to receive from chan \"results\", and no task left that may send on it or close it"),
            "{text}"
        );
        steps.insert(d.step);
    }
    assert!(steps.iter().all(|&s| s < 12), "{steps:?}");
}

#[test]
fn a_task_behind_a_parked_background_task_is_blocked_for_good() {
    // A server loop takes the state lock (and says so), then waits for a
    // result whose only declared sender returns without sending: the loop
    // is parked (a background task may wait for good), but the caller that
    // needs the lock next, and main that joins it, never go on. Found when the last of
    // them blocks, whichever of the lock wait, the join, the loop's receive
    // or the sender's return comes last, while a heartbeat runs on.
    let mut lasts = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let state = Mutex::new("state");
            let ch: Chan<u32> = Chan::new("result", 0);
            let locked: Chan<()> = Chan::new("locked", 1);
            let (tx, rx, st, told, heard) = (ch.clone(), ch.clone(), state, locked.clone(), locked);
            sim::spawn_background("server.loop", async move {
                rx.declare_receiver();
                told.declare_sender();
                let _g = st.lock().await;
                told.send(()).await;
                rx.recv().await;
            });
            spawn("sender", async move {
                tx.declare_sender();
                sim::yield_now().await;
            });
            let caller = spawn("caller", async move {
                heard.declare_receiver();
                heard.recv().await;
                let _g = state.lock().await;
            });
            caller.join().await;
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome.summary()));
        assert!(!d.global && d.cycle.is_empty(), "seed {seed}: {d:?}");
        let main_behind = d.behind.iter().any(|b| b.name == "main");
        assert_eq!(d.running, if main_behind { vec!["heartbeat"] } else { vec!["main", "heartbeat"] }, "seed {seed}");
        let behind: Vec<(&str, &str, Vec<&str>)> = d
            .behind
            .iter()
            .map(|b| (b.name.as_str(), b.op.as_str(), b.released_by.iter().map(|s| s.as_str()).collect()))
            .collect();
        let caller = ("caller", "lock", vec!["server.loop"]);
        let parked = ("server.loop", "recv", vec![]);
        assert!(
            behind == [parked.clone(), caller.clone()] || behind == [("main", "join", vec!["caller"]), parked, caller],
            "seed {seed}: {behind:?}"
        );
        let text = d.to_string();
        assert!(
            text.contains("waiting to receive from chan \"result\", and no task left that may send on it or close it"),
            "{text}"
        );
        lasts.insert(d.behind.len());
    }
    // Both moments: before main joined, and after.
    assert_eq!(lasts.len(), 2, "{lasts:?}");
    // Joined, it keeps main waiting for good: found beside the heartbeat.
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let ch: Chan<u32> = Chan::new("result", 0);
            let (tx, rx) = (ch.clone(), ch);
            let server = sim::spawn_background("server.loop", async move {
                rx.declare_receiver();
                rx.recv().await;
            });
            spawn("sender", async move { tx.declare_sender() });
            server.join().await;
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome.summary()));
        let behind: Vec<(&str, &str)> = d.behind.iter().map(|b| (b.name.as_str(), b.op.as_str())).collect();
        assert_eq!(behind, [("main", "join"), ("server.loop", "recv")], "seed {seed}");
        // The join is the failure here: a hunt tells it from another task's join.
        assert_eq!(
            sim::hunt::signature(&run.outcome),
            "deadlock: blocked for good: main join server.loop, server.loop recv result"
        );
    }
    // A loop that holds both ends of its own queue (it requeues work) and
    // whose only other sender returned is parked too: it cannot serve itself.
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let q: Chan<u32> = Chan::new("requests", 1);
            let (lq, cq) = (q.clone(), q);
            sim::spawn_background("server.loop", async move {
                lq.declare_receiver();
                lq.declare_sender();
                loop {
                    lq.recv().await;
                }
            });
            let client = spawn("client", async move {
                cq.declare_sender();
                cq.send(1).await;
            });
            client.join().await;
            for _ in 0..5 {
                sim::yield_now().await;
            }
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}: {}", run.outcome.summary());
    }
    // A background task in wait() whose declared notifiers all returned is
    // parked as well: joined, main waits for good; else the run completes.
    for join in [false, true] {
        let run = Sim::new(0).max_steps(10_000).run(move || async move {
            spawn_heartbeat();
            let m = sim::sync::Monitor::new("ready");
            spawn("notifier", async move { m.declare_notifier() });
            let waiter = sim::spawn_background("waiter", async move {
                let g = m.enter().await;
                g.wait().await;
            });
            for _ in 0..3 {
                sim::yield_now().await;
            }
            if join {
                waiter.join().await;
            }
        });
        match (join, &run.outcome) {
            (false, Outcome::Completed) => {}
            (true, Outcome::Deadlock(d)) => {
                let behind: Vec<(&str, &str)> = d.behind.iter().map(|b| (b.name.as_str(), b.op.as_str())).collect();
                assert_eq!(behind, [("main", "join"), ("waiter", "wait")]);
            }
            (_, o) => panic!("join {join}: {}", o.summary()),
        }
    }
    // Parked alone, it is no failure: the run completes once main returns.
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            let ch: Chan<u32> = Chan::new("result", 0);
            let rx = ch.clone();
            let state = Mutex::new("state");
            let st = state;
            sim::spawn_background("server.loop", async move {
                rx.declare_receiver();
                let _g = st.lock().await;
                rx.recv().await;
            });
            ch.declare_sender();
            sim::yield_now().await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_holder_declared_after_the_holders_were_known_fails_the_run() {
    // w1 declares itself a sender only after its first lock: a model
    // error. Where w2 (the other declared sender) had declared and returned
    // before, main's receive is judged dead by itself though w1 is yet to
    // send, and the run reports that deadlock: nothing can know of a
    // declaration to come. Where w1's declaration comes first, it now fails
    // the run, naming the task and the channel, so that a hunt shows the
    // model error beside the false deadlock; where w1 declares before w2
    // (nothing known yet), it is in time.
    let (mut failed, mut completed, mut judged_first) = (0, 0, 0);
    for seed in 0..200 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            let ch: Chan<u32> = Chan::new("results", 2);
            let mu = Mutex::new("mu");
            let (tx1, tx2) = (ch.clone(), ch.clone());
            ch.declare_receiver();
            spawn("w1", async move {
                let g = mu.lock().await;
                tx1.declare_sender();
                g.unlock().await;
                tx1.send(1).await;
            });
            spawn("w2", async move {
                tx2.declare_sender();
                tx2.send(2).await;
            });
            ch.recv().await;
            ch.recv().await;
        });
        match &run.outcome {
            Outcome::Completed => completed += 1,
            Outcome::Panic { task, message, .. } => {
                assert_eq!(task, "w1", "seed {seed}");
                assert!(
                    message.contains(
                        "task 1 (\"w1\") declared itself a sender on channel \"results\" after its first scheduling point"
                    ),
                    "seed {seed}: {message}"
                );
                failed += 1;
            }
            Outcome::Deadlock(d) => {
                let blocked: Vec<(&str, &str)> = d.behind.iter().map(|b| (b.name.as_str(), b.op.as_str())).collect();
                assert_eq!(blocked, [("main", "recv")], "seed {seed}");
                judged_first += 1;
            }
            o => panic!("seed {seed}: {}", o.summary()),
        }
    }
    eprintln!("{failed} failed at the declaration, {judged_first} judged before it, {completed} completed");
    assert!(failed > 0 && completed > 0, "{failed} failed, {completed} completed");
    // A monitor's notifiers likewise.
    let mut late = 0;
    for seed in 0..100 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            let m = sim::sync::Monitor::new("ready");
            let mu = Mutex::new("mu");
            spawn("n1", async move {
                let g = mu.lock().await;
                m.declare_notifier();
                g.unlock().await;
                let g = m.enter().await;
                g.notify_all();
                g.exit().await;
            });
            spawn("n2", async move { m.declare_notifier() });
        });
        match &run.outcome {
            Outcome::Completed => {}
            Outcome::Panic { task, message, .. } if task == "n1" => {
                assert!(
                    message
                        .contains("declared itself a notifier of monitor \"ready\" after its first scheduling point"),
                    "seed {seed}: {message}"
                );
                late += 1;
            }
            o => panic!("seed {seed}: {}", o.summary()),
        }
    }
    assert!(late > 0);
    // Declared for it by its parent right after the spawn: in time, always.
    for seed in 0..100 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            let ch: Chan<u32> = Chan::new("results", 2);
            let tx = ch.clone();
            ch.declare_receiver();
            ch.declare_sender();
            let w = spawn("w", async move { tx.send(1).await });
            ch.declare_sender_for(w.id());
            ch.recv().await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_wait_whose_last_declared_notifier_returns_after_it_is_found_then() {
    // The notifier returns without notifying, mostly after the waiter is in
    // wait(), while a heartbeat runs on: the waiter (and main, joining it) is
    // blocked for good, found as the notifier returns, whether the waiter is
    // a foreground task or a background one main joins.
    let mut steps = std::collections::BTreeSet::new();
    for background in [false, true] {
        for seed in 0..100 {
            let run = Sim::new(seed).max_steps(10_000).run(move || async move {
                spawn_heartbeat();
                let m = sim::sync::Monitor::new("ready");
                spawn("notifier", async move {
                    m.declare_notifier();
                    for _ in 0..3 {
                        sim::yield_now().await;
                    }
                });
                let waiter = async move {
                    let g = m.enter().await;
                    g.wait().await;
                };
                if background {
                    sim::spawn_background("waiter", waiter).join().await;
                } else {
                    spawn("waiter", waiter).join().await;
                }
            });
            let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome.summary()));
            assert!(d.behind.iter().any(|b| b.name == "waiter" && b.op == "wait"), "seed {seed}: {d:?}");
            steps.insert(d.step);
        }
    }
    assert!(steps.iter().all(|&s| s < 30), "{steps:?}");
}

#[test]
fn a_pipe_closer_serves_a_wait_until_it_finishes_and_must_be_declared() {
    // The writer is gone; the closer (a goroutine that closes the conn to
    // cancel the read) still may close the write end: the read waits on it,
    // and gets end of stream when it does.
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let p: Pipe<u8> = Pipe::new("conn", 4);
            let (w, r, c) = (p.clone(), p.clone(), p.clone());
            spawn("writer", async move {
                w.declare_writer();
            });
            spawn("closer", async move {
                c.declare_write_closer();
                sim::yield_now().await;
                c.close_write().await;
            });
            let mut got = Vec::new();
            r.declare_reader();
            assert_eq!(r.read(4, &mut got).await, Err(sim::sync::ReadError::Eof), "end of stream");
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
    // A closer that returns without closing leaves the read dead by itself.
    let run = Sim::new(0).max_steps(10_000).run(|| async {
        spawn_heartbeat();
        let p: Pipe<u8> = Pipe::new("conn", 4);
        let c = p.clone();
        spawn("closer", async move {
            c.declare_write_closer();
        });
        p.declare_reader();
        let _ = p.read(4, &mut Vec::new()).await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome.summary()));
    assert!(d.to_string().contains("and no task left that may write to it or close it"), "{d}");
    // A close by a task declared neither writer nor closer fails the run:
    // a wait judged dead could have been released by it.
    let run = Sim::new(0).run(|| async {
        let p: Pipe<u8> = Pipe::new("conn", 4);
        p.declare_writer();
        let c = p.clone();
        spawn("stranger", async move { c.close_write().await }).join().await;
    });
    let Outcome::Panic { task, message, .. } = &run.outcome else { panic!("{}", run.outcome.summary()) };
    assert_eq!(task, "stranger");
    assert!(message.contains("writes to (or closes the write end of) pipe \"conn\""), "{message}");
}

#[test]
fn a_wait_a_close_on_its_own_side_may_still_wake_is_not_dead() {
    // Every writer is gone, but a read closer (a goroutine that closes the
    // conn to cancel the read) lives: its close_read fails the read.
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let p: Pipe<u8> = Pipe::new("conn", 4);
            let (w, c) = (p.clone(), p.clone());
            spawn("writer", async move { w.declare_writer() });
            spawn("canceller", async move {
                c.declare_read_closer();
                sim::yield_now().await;
                sim::yield_now().await;
                c.close_read().await;
            });
            p.declare_reader();
            assert!(p.read(4, &mut Vec::new()).await.is_err(), "the read is cancelled");
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
    // Every reader is gone, but a write closer lives: its close_write fails
    // the write in progress, and the write queued behind it.
    for cap in [0, 4] {
        for seed in 0..50 {
            let run = Sim::new(seed).max_steps(10_000).run(move || async move {
                spawn_heartbeat();
                let p: Pipe<u8> = Pipe::new("conn", cap);
                let (r, c, q) = (p.clone(), p.clone(), p.clone());
                spawn("reader", async move { r.declare_reader() });
                spawn("canceller", async move {
                    c.declare_write_closer();
                    sim::yield_now().await;
                    sim::yield_now().await;
                    c.close_write().await;
                });
                spawn("queued", async move {
                    q.declare_writer();
                    assert!(q.write(10, None).await.is_err(), "the queued write is cancelled");
                });
                p.declare_writer();
                assert!(p.write(10, None).await.is_err(), "the write is cancelled");
            });
            assert_eq!(run.outcome, Outcome::Completed, "capacity {cap}, seed {seed}");
        }
    }
    // Every receiver is gone, but another sender may close the channel: the
    // parked send then panics, which is the run's outcome, not a deadlock.
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let ch: Chan<u32> = Chan::new("results", 0);
            let (rx, closer) = (ch.clone(), ch.clone());
            ch.declare_sender();
            spawn("receiver", async move { rx.declare_receiver() });
            spawn("closer", async move {
                closer.declare_sender();
                sim::yield_now().await;
                sim::yield_now().await;
                closer.close().await;
            });
            ch.send(1).await;
        });
        assert!(
            matches!(&run.outcome, Outcome::Panic { message, .. } if message.contains("send on closed channel")),
            "seed {seed}: {}",
            run.outcome.summary()
        );
    }
}

#[test]
fn a_wait_on_an_undeclared_end_is_not_said_to_have_no_task_left() {
    // The publisher holds the mutex across a send on an unbuffered channel;
    // the consumer needs the mutex before it receives. Nothing is declared:
    // the global deadlock is found, but the consumer has not reached the
    // channel, nothing says it will, and the report must not claim that no
    // task is left that may receive.
    let mut found = 0;
    for seed in 0..300 {
        let run = Sim::new(seed).record(true).run(|| async {
            let (mu, events) = (Mutex::new("Cache.mu"), Chan::<u32>::new("Cache.events", 0));
            let (m2, e2) = (mu, events.clone());
            spawn("publisher", async move {
                let _g = m2.lock().await;
                e2.send(1).await;
            });
            spawn("consumer", async move {
                let g = mu.lock().await;
                drop(g);
                events.recv().await;
            });
        });
        let Some(d) = run.outcome.deadlock() else { continue };
        let text = d.to_string();
        assert!(!text.contains("no task left"), "seed {seed}: {text}");
        let p = d.behind.iter().find(|b| b.name == "publisher").expect("the publisher is blocked");
        assert!(p.undeclared && p.released_by.is_empty(), "seed {seed}: {p:?}");
        assert!(
            text.contains(
                "waiting to send on chan \"Cache.events\", which no live task has used so far (its receivers are \
                 not declared; a task may yet receive from it or close it)"
            ),
            "seed {seed}: {text}"
        );
        // The flag is kept in the trace and read back.
        let trace = run.trace.unwrap();
        let again = sim::trace::Trace::from_json(&trace.to_json()).unwrap();
        assert_eq!(again.deadlock, trace.deadlock);
        found += 1;
    }
    assert!(found > 100, "{found} deadlocks in 300 seeds");
}

#[test]
fn a_write_only_its_own_blocked_side_could_cancel_is_blocked_for_good() {
    // The reader is gone. The writer queued behind main's write could close
    // the write end, but it waits too; a write closer that first needs the
    // mutex main holds never gets to close. Both are deadlocks, found
    // beside a heartbeat, not left to the step limit.
    for cap in [0, 4] {
        for seed in 0..50 {
            let run = Sim::new(seed).max_steps(10_000).run(move || async move {
                spawn_heartbeat();
                let p: Pipe<u8> = Pipe::new("conn", cap);
                let (r, q) = (p.clone(), p.clone());
                spawn("reader", async move { r.declare_reader() });
                spawn("queued", async move {
                    q.declare_writer();
                    let _ = q.write(10, None).await;
                });
                p.declare_writer();
                let _ = p.write(10, None).await;
            });
            let d = run
                .outcome
                .deadlock()
                .unwrap_or_else(|| panic!("capacity {cap}, seed {seed}: {}", run.outcome.summary()));
            let mut names: Vec<&str> = d.cycle.iter().chain(&d.behind).map(|b| b.name.as_str()).collect();
            names.sort_unstable();
            assert_eq!(names, ["main", "queued"], "capacity {cap}, seed {seed}: {d}");
            assert_eq!(d.running, ["heartbeat"], "capacity {cap}, seed {seed}");
            // The write in progress (main's or the other's): nobody reads, and
            // the one queued behind it could only close the end.
            let text = d.to_string();
            assert!(
                text.contains("waiting to write to pipe \"conn\", and no task left to serve it; only these may still close it: \""),
                "capacity {cap}, seed {seed}: {text}"
            );
            // With the heartbeat still running, it rests on the declared reader.
            assert!(
                text.ends_with("must be declared as well: declare_reader() in that task, or the _for(id) form where there is one.)\n"),
                "capacity {cap}, seed {seed}: {text}"
            );
        }
    }
    let mut found = 0;
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let (p, mu) = (Pipe::<u8>::new("conn", 0), Mutex::new("mu"));
            let (r, c) = (p.clone(), p.clone());
            spawn("reader", async move { r.declare_reader() });
            spawn("canceller", async move {
                c.declare_write_closer();
                let g = mu.lock().await;
                c.close_write().await;
                g.unlock().await;
            });
            p.declare_writer();
            let g = mu.lock().await;
            let _ = p.write(10, None).await;
            g.unlock().await;
        });
        match run.outcome.deadlock() {
            Some(d) => {
                let names: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
                assert_eq!(names, ["main", "canceller"], "seed {seed}: {d}");
                found += 1;
            }
            None => assert_eq!(run.outcome, Outcome::Completed, "seed {seed}"),
        }
    }
    assert!(found > 0, "main takes mu first in some seed");
}

#[test]
fn a_write_a_running_write_closer_may_fail_is_not_dead_while_its_reader_waits_for_the_writer() {
    // Main holds mu across a write nobody reads yet: the reader first needs
    // mu. The cycle main -> reader -> main looks closed, but "canceller", a
    // declared write closer, is still running and its close_write fails
    // main's write, which then unlocks. No deadlock, in any seed; and where
    // the canceller returns without closing (`closes` false) it is one.
    for closes in [true, false] {
        let mut found = 0;
        for seed in 0..100 {
            let run = Sim::new(seed).max_steps(10_000).run(move || async move {
                spawn_heartbeat();
                let (p, mu) = (Pipe::<u8>::new("conn", 0), Mutex::new("mu"));
                let (r, c) = (p.clone(), p.clone());
                spawn("reader", async move {
                    r.declare_reader();
                    drop(mu.lock().await);
                    let _ = r.read(10, &mut Vec::new()).await;
                });
                spawn("canceller", async move {
                    c.declare_write_closer();
                    for _ in 0..5 {
                        sim::yield_now().await;
                    }
                    if closes {
                        c.close_write().await;
                    }
                });
                p.declare_writer();
                let g = mu.lock().await;
                let _ = p.write(10, None).await;
                g.unlock().await;
            });
            match run.outcome.deadlock() {
                Some(d) => {
                    assert!(!closes, "seed {seed}: {d}");
                    let names: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
                    assert_eq!(names, ["main", "reader"], "seed {seed}: {d}");
                    assert_eq!(d.running, ["heartbeat"], "seed {seed}: {d}");
                    // Found as the canceller returns, not left to the step limit.
                    assert!(d.step < 100, "seed {seed}: {d}");
                    found += 1;
                }
                None => assert_eq!(run.outcome, Outcome::Completed, "closes {closes}, seed {seed}"),
            }
        }
        if !closes {
            assert!(found > 0, "main takes mu first in some seed");
        }
    }
}

#[test]
fn a_report_tells_the_closers_of_the_waiters_own_side_from_those_who_serve_it() {
    // As above, but the canceller, a declared write closer, first needs mu
    // too: main's write is dead. Its entry names the reader as the one who
    // could serve it and the canceller as one who could only close the
    // pipe under it (and so fail the write), in the text and in the trace.
    let mut found = 0;
    for seed in 0..50 {
        let run = Sim::new(seed).record(true).max_steps(10_000).run(|| async {
            let (p, mu) = (Pipe::<u8>::new("conn", 0), Mutex::new("mu"));
            let (r, c) = (p.clone(), p.clone());
            let (mu_r, mu_c) = (mu, mu);
            spawn("reader", async move {
                r.declare_reader();
                drop(mu_r.lock().await);
                let _ = r.read(10, &mut Vec::new()).await;
            });
            spawn("canceller", async move {
                c.declare_write_closer();
                drop(mu_c.lock().await);
                c.close_write().await;
            });
            p.declare_writer();
            let g = mu.lock().await;
            let _ = p.write(10, None).await;
            g.unlock().await;
        });
        let Some(d) = run.outcome.deadlock() else {
            assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
            continue;
        };
        found += 1;
        let text = d.to_string();
        let main = d.cycle.iter().find(|b| b.name == "main").unwrap_or_else(|| panic!("seed {seed}: {text}"));
        assert_eq!(
            (main.released_by.as_slice(), main.closing.as_slice()),
            (&["reader".to_string(), "canceller".to_string()][..], &[2][..]),
            "seed {seed}: {text}"
        );
        assert!(
            text.contains(
                "\"main\" (task 0): waiting to write to pipe \"conn\", which only these could serve: \"reader\"; or \
                 close it: \"canceller\"\n"
            ),
            "seed {seed}: {text}"
        );
        // The trace keeps them, and reads back; a closer that is not a
        // releaser of the wait is refused.
        let json = run.trace.unwrap().to_json();
        let again = sim::trace::Trace::from_json(&json).unwrap();
        assert_eq!(again.deadlock.unwrap().cycle.iter().find(|b| b.name == "main").unwrap().closing, [2]);
        let bad = json.replace("\"closing\":[2]", "\"closing\":[0]");
        assert_ne!(bad, json);
        let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
        assert!(err.contains("closing[0]: task 0 is not a releaser"), "{err}");
        for (bad, want) in [
            (json.replace("\"closing\":[2]", "\"closing\":[2,2]"), "closing[1]: task 2 is given twice"),
            (
                json.replace("\"closing\":[2]", "\"closing\":[2],\"undeclared\":true"),
                "closing: given with undeclared: true",
            ),
            (
                json.replace("\"closing\":[2]", "\"closing\":[2],\"closers_only\":true"),
                "closing: given with closers_only: true",
            ),
        ] {
            let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
    }
    assert!(found > 0, "main takes mu first in some seed");
}

#[test]
fn a_cycle_of_background_tasks_beside_a_parked_closer_of_their_pipe_is_a_deadlock() {
    // A background writer holds mu across a write; the background reader
    // first needs mu. Their conn's declared write closer waits for `stop`,
    // whose only sender returns without sending: the closer is parked and
    // will never close, so the writer and the reader are blocked for good,
    // a cycle of background tasks' locks, reported as the sender returns.
    // (The closer's edge once made the whole set look parked.)
    let mut found = 0;
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            let (p, mu, stop) = (Pipe::<u8>::new("conn", 0), Mutex::new("mu"), Chan::<()>::new("stop", 0));
            let (w, r, c, st, tx) = (p.clone(), p.clone(), p, stop.clone(), stop);
            sim::spawn_background("closer", async move {
                c.declare_write_closer();
                st.declare_receiver();
                if st.recv().await.is_some() {
                    c.close_write().await;
                }
            });
            sim::spawn_background("writer", async move {
                w.declare_writer();
                let g = mu.lock().await;
                let _ = w.write(10, None).await;
                g.unlock().await;
            });
            sim::spawn_background("reader", async move {
                r.declare_reader();
                sim::yield_now().await;
                drop(mu.lock().await);
                let _ = r.read(10, &mut Vec::new()).await;
            });
            spawn("stopper", async move {
                tx.declare_sender();
                for _ in 0..10 {
                    sim::yield_now().await;
                }
            });
            sleep(1_000_000).await;
        });
        let Some(d) = run.outcome.deadlock() else {
            // The reader took mu first: the write is read, nobody waits.
            assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
            continue;
        };
        let mut names: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["reader", "writer"], "seed {seed}: {d}");
        assert!(d.behind.is_empty(), "the parked closer is no part of it: {d}");
        assert!(d.step < 100, "found as the stopper returns: {d}");
        found += 1;
    }
    assert!(found > 10, "{found} of 50");
}

#[test]
fn idle_server_loops_that_could_serve_each_other_beside_a_parked_feeder_stay_parked() {
    // ttrpc's shape: "server" selects over a (from "feeder", parked once
    // the producer returned) and b (acks from "pump"), and forwards what a
    // brings on c; "pump" acknowledges each on b. Idle, nothing else to do:
    // parked, not a deadlock (a review found a first form of dcb7d7e's
    // rule reporting it on every seed).
    for seed in 0..30 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            let (req, a, b, c) =
                (Chan::<u8>::new("req", 0), Chan::<u8>::new("a", 0), Chan::<u8>::new("b", 0), Chan::<u8>::new("c", 0));
            let (rq, fa) = (req.clone(), a.clone());
            sim::spawn_background("feeder", async move {
                rq.declare_receiver();
                fa.declare_sender();
                while let Some(v) = rq.recv().await {
                    fa.send(v).await;
                }
            });
            let (sa, sb, sc) = (a, b.clone(), c.clone());
            sim::spawn_background("server", async move {
                sa.declare_receiver();
                sb.declare_receiver();
                sc.declare_sender();
                loop {
                    let (mut ra, mut rb) = (sa.recv_case(), sb.recv_case());
                    if select(&mut [&mut ra, &mut rb], false).await == Some(0) {
                        sc.send(ra.take().unwrap_or(0)).await;
                    }
                }
            });
            sim::spawn_background("pump", async move {
                c.declare_receiver();
                b.declare_sender();
                while let Some(v) = c.recv().await {
                    b.send(v).await;
                }
            });
            spawn("producer", async move {
                req.declare_sender();
                req.send(1).await;
            });
            sleep(1_000_000).await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}: {}", run.outcome);
    }
}

/// A chain of background tasks, each holding a lock the one before it
/// waits for, behind one parked on a channel whose sender returned: every
/// task is parked, none reported. (Judged once over every blocked task:
/// the search was once repeated for each blocked task when one parked, and
/// parking spread a pass at a time, so that a review measured 320 such
/// tasks in seconds.)
#[test]
fn a_long_chain_behind_a_parked_task_is_parked_and_judged_at_once() {
    let run = Sim::new(0).max_steps(1_000_000).run(|| async {
        let stop: Chan<()> = Chan::new("stop", 0);
        let locks: Vec<Mutex> = (0..320).map(|i| Mutex::new(format!("L{i}"))).collect();
        let holding = std::rc::Rc::new(std::cell::Cell::new(0));
        for i in 0..320 {
            let (mine, next, st, h) = (locks[i], locks.get(i + 1).copied(), stop.clone(), holding.clone());
            sim::spawn_background(format!("t{i}"), async move {
                let _g = mine.lock().await;
                // Every task holds its own lock before any takes the next.
                h.set(h.get() + 1);
                while h.get() < 320 {
                    sim::yield_now().await;
                }
                match next {
                    Some(l) => drop(l.lock().await),
                    None => {
                        st.declare_receiver();
                        st.recv().await;
                    }
                }
            });
        }
        let tx = stop.clone();
        spawn("stopper", async move {
            tx.declare_sender();
            while holding.get() < 320 {
                sim::yield_now().await;
            }
            for _ in 0..2_000 {
                sim::yield_now().await;
            }
        })
        .join()
        .await;
    });
    assert_eq!(run.outcome, Outcome::Completed, "{}", run.outcome);
}

#[test]
fn a_wait_on_an_undeclared_end_names_the_live_tasks_that_used_it_at_the_step_limit() {
    // Main receives twice on an undeclared channel; "sender" sends once and
    // stays (spinning) or returns. Beside a spinning task the run ends at
    // its step limit, where the report names who used the end, alive.
    for stays in [true, false] {
        let run = Sim::new(0).max_steps(2_000).run(move || async move {
            spawn_heartbeat();
            let ch: Chan<u32> = Chan::new("results", 0);
            let tx = ch.clone();
            spawn("sender", async move {
                tx.send(1).await;
                if stays {
                    loop {
                        sim::yield_now().await;
                    }
                }
            });
            ch.recv().await;
            ch.recv().await;
        });
        let text = run.outcome.to_string();
        let want = if stays {
            "\"main\" (task 0): waiting to receive from chan \"results\", which these live tasks have used so far: \"sender\" (its senders are not declared)"
        } else {
            "\"main\" (task 0): waiting to receive from chan \"results\", which no live task has used so far (its senders are not declared; a task may yet send on it or close it)"
        };
        assert!(text.contains(want), "sender stays: {stays}: {text}");
    }
}

#[test]
fn a_lock_whose_holder_returned_says_so_and_where_it_was_taken() {
    // Go's missing Unlock on an error path: "leaker" returns holding mu.
    // A Go mutex may be unlocked by any task, so beside a heartbeat the
    // run goes to its step limit; alone, it is a global deadlock. Either
    // way the report says the holder returned, and where it locked.
    for heartbeat in [false, true] {
        let run = Sim::new(0).record(true).max_steps(2_000).run(move || async move {
            if heartbeat {
                spawn_heartbeat();
            }
            let mu = Mutex::new("Daemon.mu");
            spawn("leaker", async move {
                let _f = sim::frame_at("(*Daemon).GetContainer", "daemon.go:101");
                mu.lock().await.leak();
            })
            .join()
            .await;
            let _g = mu.lock().await;
        });
        let text = run.outcome.to_string();
        assert!(
            text.contains(
                "\"main\" (task 0): waiting to lock mutex \"Daemon.mu\", held by \"leaker\" (\"leaker\" returned \
                 without unlocking it, locked at (*Daemon).GetContainer (daemon.go:101))"
            ),
            "heartbeat {heartbeat}: {text}"
        );
        if let Some(d) = run.outcome.deadlock() {
            assert!(!heartbeat && d.global, "{d}");
            // The trace keeps it, and reads back.
            let t = run.trace.unwrap();
            let json = t.to_json();
            let again = sim::trace::Trace::from_json(&json).unwrap();
            assert_eq!(again.deadlock.unwrap().behind[0].returned.len(), 1);
            // A returned holder that is not a releaser of the wait is refused.
            let bad = json.replace("\"returned\":[{\"task\":1,", "\"returned\":[{\"task\":0,");
            assert_ne!(bad, json);
            let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
            assert!(err.contains("returned[0]: task 0 is not a releaser"), "{err}");
        } else {
            assert!(heartbeat, "{text}");
        }
    }
}

#[test]
fn background_loops_that_could_each_close_for_the_other_are_parked() {
    // Two read loops of one conn, the writer gone: each could close the
    // read end for the other, and neither will. They are parked, as one
    // such loop is, and the run completes while main runs on.
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            let p: Pipe<u8> = Pipe::new("conn", 4);
            for name in ["read-loop-1", "read-loop-2"] {
                let r = p.clone();
                sim::spawn_background(name, async move {
                    r.declare_reader();
                    let mut v = Vec::new();
                    while r.read(10, &mut v).await.is_ok() {}
                });
            }
            let w = p.clone();
            spawn("client", async move {
                w.declare_writer();
                let _ = w.write(3, None).await;
            });
            for _ in 0..50 {
                sim::yield_now().await;
            }
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_select_with_an_undeclared_case_is_reported_the_same_in_either_case_order() {
    // main selects on a declared channel (whose sender waits for the mutex
    // main holds) and an undeclared one; the report's line does not depend
    // on which case comes first.
    let line = |declared_first: bool| {
        let run = Sim::new(0).max_steps(2_000).run(move || async move {
            spawn_heartbeat();
            let (mu, declared, loose) =
                (Mutex::new("mu"), Chan::<u32>::new("declared", 0), Chan::<u32>::new("loose", 0));
            let tx = declared.clone();
            declared.declare_receiver();
            let g = mu.lock().await;
            let user = spawn("user", async move {
                let g = mu.lock().await;
                tx.send(1).await;
                g.unlock().await;
            });
            declared.declare_sender_for(user.id());
            let (mut a, mut b) = (declared.recv_case(), loose.recv_case());
            if declared_first {
                select(&mut [&mut a, &mut b], false).await;
            } else {
                select(&mut [&mut b, &mut a], false).await;
            }
            g.unlock().await;
        });
        let text = run.outcome.to_string();
        let line = text.lines().find(|l| l.starts_with("\"main\"")).unwrap_or_else(|| panic!("{text}")).to_string();
        line.replace("recv declared | recv loose", "recv loose | recv declared")
    };
    let (first, second) = (line(true), line(false));
    assert_eq!(first, second);
    assert!(
        first.contains(
            "which these live tasks have used so far: \"user\" (not every case's other end has its holders declared)"
        ),
        "{first}"
    );
}

#[test]
fn a_wait_on_a_lock_a_returned_task_holds_is_not_behind_an_unrelated_cycle() {
    // An AB/BA pair deadlocks beside a heartbeat; main meanwhile waits for
    // a mutex "leaker" returned holding. Any task may yet unlock a Go mutex,
    // so main is not blocked for good, and not part of the pair's report.
    let mut found = 0;
    for seed in 0..50 {
        let run = Sim::new(seed).max_steps(20_000).run(|| async {
            spawn_heartbeat();
            let (a, b, mu) = (Mutex::new("A"), Mutex::new("B"), Mutex::new("mu"));
            spawn_opposite_orders(a, b);
            spawn("leaker", async move { mu.lock().await.leak() }).join().await;
            let _g = mu.lock().await;
        });
        let Some(d) = run.outcome.deadlock() else { continue };
        found += 1;
        let names: Vec<&str> = d.cycle.iter().chain(&d.behind).map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["T1", "T2"], "seed {seed}: {d}");
    }
    assert!(found > 0);
}

#[test]
fn a_step_limit_report_gives_the_id_of_a_task_whose_name_others_have() {
    // Two "worker"s: one returned, one loops with the channel main waits
    // on. Only one is in the report, but the name alone would not say which.
    let run = Sim::new(0).max_steps(500).run(|| async {
        let ch: Chan<u32> = Chan::new("results", 0);
        spawn("worker", async {}).join().await;
        let tx = ch.clone();
        let h = spawn("worker", async move {
            let _keep = tx;
            loop {
                sim::yield_now().await;
            }
        });
        ch.declare_sender_for(h.id());
        ch.recv().await;
    });
    let text = run.outcome.to_string();
    assert!(text.contains("which only these could serve: \"worker\" (task 2)\n"), "{text}");
    assert!(text.contains("Still running at the limit: \"worker\" (task 2)\n"), "{text}");
}

#[test]
fn a_step_limit_report_names_the_closers_left_while_a_task_has_not_run() {
    // main sends on "ch", whose declared receiver returned without
    // receiving; "ticker", a declared sender too, may still close it. A
    // task PCT never schedules ("late") once made the report say that no
    // task was left to receive or close, with ticker listed as running.
    use sim::scheduler::StrategyKind;
    let mut seen = 0;
    for late in [false, true] {
        for seed in 0..100 {
            let program = move || async move {
                let tick: Chan<()> = Chan::new("ticker.C", 1);
                let ch: Chan<u32> = Chan::new("ch", 0);
                ch.declare_sender();
                let (t1, t2, c) = (tick.clone(), tick.clone(), ch.clone());
                let h = sim::spawn_background("ticker", async move {
                    let _may_close = c;
                    loop {
                        sleep(1).await;
                        let mut send = t1.send_case(());
                        select(&mut [&mut send], true).await;
                    }
                });
                tick.declare_sender_for(h.id());
                ch.declare_sender_for(h.id());
                let h = sim::spawn_background("keeper", async move { while t2.recv().await.is_some() {} });
                tick.declare_receiver_for(h.id());
                let h = spawn("reader", async {});
                ch.declare_receiver_for(h.id());
                h.join().await;
                if late {
                    spawn("late", async {});
                }
                ch.send(1).await;
            };
            let run = StrategyKind::Pct(1).run_by(seed, false, 2_000, |sim| sim.run(program));
            let Outcome::StepLimit { blocked, .. } = &run.outcome else { continue };
            let text = run.outcome.to_string();
            if blocked.iter().any(|b| b.name == "main" && b.op == "send") {
                seen += 1;
                assert!(
                    text.contains(
                        "\"main\" (task 0): waiting to send on chan \"ch\", and no task left to serve it; only these \
                         may still close it: \"ticker\"\n"
                    ),
                    "late {late}, seed {seed}: {text}"
                );
            }
        }
    }
    assert!(seen > 0, "main is blocked in its send at the limit in some seed");
}

#[test]
fn a_send_blocked_on_a_full_buffer_says_so() {
    // cockroach#18101's leak: the worker fills a buffered channel whose
    // receiver returned. The report says the buffer is full, and the trace
    // keeps it; a capacity that is not the channel's is refused.
    let run = Sim::new(0).record(true).run(|| async {
        let ch: Chan<u32> = Chan::new("readyForImportCh", 2);
        let (tx, rx) = (ch.clone(), ch.clone());
        let w = spawn("restore.func1", async move {
            tx.declare_sender();
            for i in 0..3 {
                tx.send(i).await;
            }
        });
        spawn("restore", async move {
            rx.declare_receiver();
        })
        .join()
        .await;
        w.join().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    let text = d.to_string();
    assert!(
        text.contains(
            "\"restore.func1\" (task 1): waiting to send on chan \"readyForImportCh\" (buffer full, 2 of 2), and no \
             task left that may receive from it or close it"
        ),
        "{text}"
    );
    let json = run.trace.unwrap().to_json();
    assert!(sim::trace::Trace::from_json(&json).is_ok());
    let bad = json.replace("\"full\":2", "\"full\":3");
    assert_ne!(bad, json);
    let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
    assert!(err.contains("full: 3, but the task is not in a send on a channel of capacity 3"), "{err}");
}

#[test]
fn a_wait_only_the_waiter_itself_could_end_says_so_not_no_task_left() {
    // Go's `<-stopCh` before the task's own `defer close(stopCh)`: the
    // waiter is the one declared holder of the send end, and cannot close
    // it while it waits. "no task left that may send on it or close it"
    // left out the very task that may.
    let run = Sim::new(0).record(true).run(|| async {
        let stop = Chan::signal("stopCh");
        stop.declare_sender();
        sim::spawn("other", async { sleep(10_000).await });
        stop.recv().await;
        stop.close().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    let text = d.to_string();
    assert!(
        text.contains(
            "\"main\" (task 0): waiting to receive from chan \"stopCh\", and no task but itself may send on it or \
             close it, which it cannot while it waits\n"
        ),
        "{text}"
    );
    assert!(d.cycle[0].only_itself && d.cycle[0].released_by.is_empty(), "{text}");
    // The trace keeps it and reads back; beside a releaser it is refused.
    let json = run.trace.unwrap().to_json();
    assert!(sim::trace::Trace::from_json(&json).unwrap().deadlock.unwrap().cycle[0].only_itself);
    let bad = json.replace("\"only_itself\":true", "\"only_itself\":true,\"undeclared\":true");
    assert_ne!(bad, json);
    let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
    assert!(err.contains("only_itself: true, but the wait is not a channel or pipe wait with no releaser"), "{err}");
    // Another task on the other end: no such note.
    let run = Sim::new(0).run(|| async {
        let stop = Chan::signal("stopCh");
        stop.declare_sender();
        let s = stop.clone();
        let h = sim::spawn("closer", async move { s.recv().await });
        stop.declare_sender_for(h.id());
        stop.recv().await;
    });
    let text = run.outcome.to_string();
    assert!(!text.contains("but itself"), "{text}");
}

#[test]
fn a_partial_deadlock_names_the_blocked_tasks_outside_it() {
    // kubernetes#70277's leak: a goroutine loops on a ticker or a stop
    // channel nobody will close. It is blocked when the deadlock is found,
    // but the ticker will release it: not in the deadlock, not running,
    // and it was named nowhere.
    let run = Sim::new(0).record(true).run(|| async {
        let stop = Chan::signal("stopCh");
        stop.declare_sender();
        let s = stop.clone();
        sim::spawn("poller", async move {
            let tick = sim::time::Ticker::new("tick", 100_000);
            loop {
                let (mut t, mut d) = (tick.c().recv_case(), s.recv_case());
                if select(&mut [&mut t, &mut d], false).await == Some(1) {
                    return;
                }
            }
        });
        sleep(5_000).await;
        stop.recv().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    let text = d.to_string();
    assert!(text.ends_with("Still running: \"tick\"\nBlocked too, outside the deadlock: \"poller\"\n"), "{text}");
    assert_eq!((d.waiting.as_slice(), d.waiting_ids.as_slice()), (&["poller".to_string()][..], &[1][..]));
    // The trace keeps them, and reads back; a list the events do not give is refused.
    let json = run.trace.unwrap().to_json();
    assert_eq!(sim::trace::Trace::from_json(&json).unwrap().deadlock.unwrap().waiting_ids, [1]);
    let bad = json.replace("\"waiting_ids\":[1]", "\"waiting_ids\":[2]");
    assert_ne!(bad, json);
    let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
    assert!(err.contains("deadlock.waiting_ids: [2], but the events leave tasks [1] blocked outside"), "{err}");
}

#[test]
fn a_mutex_handed_to_another_task_to_unlock_is_no_deadlock_while_that_one_may() {
    // Go lets any goroutine unlock a mutex. main locks, hands the guard to
    // "unlocker", and waits for "sender", which waits for the lock: a cycle
    // main -> sender -> main if the task that locked must unlock, reported
    // at once. Handed off, the run completes; and where the new owner
    // returns without unlocking, the wait is found once no task can run.
    for unlocks in [true, false] {
        for seed in 0..100 {
            let run = Sim::new(seed).run(move || async move {
                let mu = Mutex::new("mu");
                let ch: Chan<u32> = Chan::new("ch", 0);
                ch.declare_receiver();
                let g = mu.lock().await;
                g.hand_off();
                sim::spawn("unlocker", async move {
                    sleep(1_000).await;
                    if unlocks {
                        g.unlock().await;
                    } else {
                        g.leak();
                    }
                });
                let tx = ch.clone();
                let h = sim::spawn("sender", async move {
                    let g = mu.lock().await;
                    tx.send(1).await;
                    g.unlock().await;
                });
                ch.declare_sender_for(h.id());
                assert_eq!(ch.recv().await, Some(1));
            });
            if unlocks {
                assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
                continue;
            }
            let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome));
            let text = d.to_string();
            assert!(d.global && d.time >= 1_000, "seed {seed}: found before the unlocker returned: {text}");
            assert!(text.contains("\"sender\" (task 2): waiting to lock mutex \"mu\", held by \"main\""), "{text}");
        }
    }
}

#[test]
fn a_partial_deadlock_beside_a_wait_on_a_handed_off_mutex_reads_back() {
    // x waits for mu, which main locked and handed to "u" (a background
    // loop that never unlocks it, but might: any task might). main and y
    // deadlock apart. The trace did not say mu was handed off, so its
    // reader wanted x in the report, as a task behind a dead holder.
    let run = Sim::new(0).record(true).run(|| async {
        let (mu, m2) = (Mutex::new("mu"), Mutex::new("m2"));
        let c: Chan<u32> = Chan::new("c", 0);
        c.declare_receiver();
        let g = mu.lock().await;
        g.hand_off();
        sim::spawn_background("u", async move {
            let _g = g;
            loop {
                sleep(1_000).await;
            }
        });
        sim::spawn("x", async move {
            let _g = mu.lock().await;
        });
        let _h = m2.lock().await;
        let tx = c.clone();
        let y = sim::spawn("y", async move {
            let _g = m2.lock().await;
            tx.send(1).await;
        });
        c.declare_sender_for(y.id());
        c.recv().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    let names: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["main", "y"], "{d}");
    assert!(d.waiting.contains(&"x".to_string()), "{d}");
    reads_back(&run, "handed-off beside a deadlock");
}

#[test]
fn a_handed_off_mutex_in_a_real_deadlock_reads_back_and_hand_off_works_from_the_new_owner() {
    // main hands mu off to "u", which waits on c before dropping the guard;
    // main then waits for mu, and only after it would send on c. A real
    // deadlock, found once no task can run; the reader followed the
    // locker as mu's holder and refused the trace ("wait for one another's
    // mutexes").
    let run = Sim::new(0).record(true).run(|| async {
        let mu = Mutex::new("mu");
        let g = mu.lock().await;
        g.hand_off();
        let c: Chan<u32> = Chan::new("c", 0);
        let c2 = c.clone();
        sim::spawn("u", async move {
            c2.recv().await;
            drop(g);
        });
        let g = mu.lock().await;
        c.send(1).await;
        g.unlock().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    assert!(d.global, "{d}");
    reads_back(&run, "a real deadlock over a handed-off mutex");
    // Called by the task the guard was moved to, before anything waits on
    // the mutex, hand_off counts too (it was ignored there, and main's
    // wait for mu reported deadlocked). main sleeps: "u" runs first.
    for seed in 0..50 {
        let run = Sim::new(seed).record(true).run(|| async {
            let mu = Mutex::new("mu");
            let g = mu.lock().await;
            sim::spawn("u", async move {
                g.hand_off();
                sleep(1_000).await;
                g.unlock().await;
            });
            sleep(10).await;
            let g = mu.lock().await;
            g.unlock().await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
        reads_back(&run, &format!("seed {seed}"));
    }
}

#[test]
fn an_rwmutex_write_lock_handed_to_another_task_to_unlock_is_no_deadlock_while_that_one_may() {
    // As a mutex's hand-off: main write-locks rw, hands the guard to
    // "unlocker", and read-locks rw itself. Without the hand-off main
    // waits for itself; with it, for the unlocker, and the run completes.
    // Where the unlocker returns without unlocking, the wait is found once
    // no task can run. Either trace reads back.
    for unlocks in [true, false] {
        for seed in 0..50 {
            let run = Sim::new(seed).record(true).run(move || async move {
                let rw = sim::sync::RwMutex::new("rw");
                let w = rw.lock().await;
                w.hand_off();
                sim::spawn("unlocker", async move {
                    sleep(1_000).await;
                    if unlocks {
                        w.unlock().await;
                    } else {
                        w.leak();
                    }
                });
                let r = rw.rlock().await;
                r.runlock().await;
            });
            if unlocks {
                assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
            } else {
                let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome));
                assert!(d.global && d.time >= 1_000, "seed {seed}: found before the unlocker returned: {d}");
            }
            reads_back(&run, &format!("seed {seed}"));
        }
    }
}

#[test]
fn a_leaked_guard_stays_held_and_a_dropped_one_releases() {
    // Go's `mu.Lock()` then return without `Unlock()` is `leak()`; the same
    // guard dropped is Rust's release, and there is no bug to find.
    for leak in [true, false] {
        let run = Sim::new(0).record(true).run(move || async move {
            let (mu, rw) = (Mutex::new("mu"), sim::sync::RwMutex::new("rw"));
            spawn("returns", async move {
                let g = mu.lock().await;
                let r = rw.rlock().await;
                if leak {
                    g.leak();
                    r.leak();
                }
            })
            .join()
            .await;
            let w = rw.lock().await;
            w.unlock().await;
            let g = mu.lock().await;
            g.unlock().await;
        });
        if leak {
            let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
            let text = d.to_string();
            // The read lock kept: main's write lock waits for it (before the mutex).
            assert!(text.contains("\"main\" (task 0): waiting to lock rwmutex \"rw\""), "{text}");
            assert!(text.contains("(\"returns\" returned without read-unlocking it)"), "{text}");
            // The trace keeps it, and reads it back.
            let json = run.trace.as_ref().unwrap().to_json();
            assert!(json.contains("\"read\":true"), "{json}");
            let again = sim::trace::Trace::from_json(&json).unwrap();
            let read = again.deadlock.unwrap();
            assert!(read.cycle.iter().chain(&read.behind).any(|b| b.returned.iter().any(|r| r.read)));
        } else {
            assert_eq!(run.outcome, Outcome::Completed);
        }
    }
}

/// A producer declares itself a sender, but main, which starts the second
/// producer later, declares nothing: once the first is gone, the consumer's
/// wait is dead as declared, though main will start another sender. The
/// report says "no task left" as the model declared it, and says what that
/// rests on; a global deadlock, with no task running, needs no such note.
#[test]
fn no_task_left_beside_running_tasks_says_it_rests_on_the_declarations() {
    let note = "\"No task left\" rests on the model's declarations: a task still running that will serve such a wait, \
                or start one that does, must be declared as well: declare_sender() in that task, or the _for(id) form";
    let late_spawner = || async {
        let results: Chan<u32> = Chan::new("results", 0);
        let (rx, tx1, tx2) = (results.clone(), results.clone(), results.clone());
        spawn("consumer", async move {
            rx.declare_receiver();
            rx.recv().await;
            rx.recv().await;
        });
        spawn("p1", async move {
            tx1.declare_sender();
            tx1.send(1).await;
        })
        .join()
        .await;
        sleep(1_000).await; // setup, then the second producer
        spawn("p2", async move {
            tx2.declare_sender();
            tx2.send(2).await;
        });
    };
    let run = Sim::new(0).run(late_spawner);
    let report = run.outcome.to_string();
    assert!(
        report.contains("\"consumer\" (task 1): waiting to receive from chan \"results\", and no task left that may send on it or close it")
            && report.contains("\nStill running: \"main\"\n")
            && report.contains(note),
        "{report}"
    );
    // Everyone blocked: no task is running whose declarations could be missing.
    let run = Sim::new(0).run(|| async {
        let ch: Chan<u32> = Chan::new("ch", 0);
        ch.declare_receiver();
        let tx = ch.clone();
        spawn("p", async move { tx.declare_sender() }).join().await;
        ch.recv().await;
    });
    let report = run.outcome.to_string();
    assert!(report.contains("no task left that may send on it or close it") && !report.contains(note), "{report}");
}
