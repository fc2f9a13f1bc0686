//! The lock-order graph: potential deadlocks flagged from runs that did not
//! deadlock, and nothing flagged for the fixed models.

use sim::lockorder::{LockOrder, WarningKind};
use sim::models::{self, Configured};

fn model(name: &str, params: &[(&str, &str)]) -> Configured {
    let p: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    models::find(name).unwrap().configure(&p).unwrap()
}

/// The graph of the first `n` seeds that did not fail.
fn clean_graph(m: &Configured, n: u64) -> LockOrder {
    let mut g = LockOrder::default();
    for seed in 0..n {
        let run = m.run(seed, false);
        if !run.outcome.is_failure() {
            g.merge(&run.lock_order);
        }
    }
    g
}

fn kinds(g: &LockOrder) -> Vec<WarningKind> {
    g.warnings().iter().map(|w| w.kind).collect()
}

#[test]
fn flink_1_13_1_is_flagged_from_runs_that_did_not_deadlock() {
    for scenario in ["minimal", "pipeline"] {
        let g = clean_graph(&model("flink", &[("flink-version", "1.13.1"), ("scenario", scenario)]), 1_000);
        let w = g.warnings();
        let circular = w.iter().find(|w| w.kind == WarningKind::CircularDependency).expect("flagged");
        assert!(
            circular.summary.contains("channel-0.bufferQueue") && circular.summary.contains("channel-1.bufferQueue")
        );
        assert!(circular.report.starts_with("WARNING: possible circular locking dependency detected"));
        assert!(circular.report.contains("*** DEADLOCK ***"));
        // The scenario's columns are two tasks, never one task twice.
        let columns = circular.report.lines().skip_while(|l| !l.contains("Possible unsafe")).nth(2).unwrap();
        let names: Vec<&str> = columns.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
        assert!(names.len() == 2 && names[0] != names[1], "{scenario}: {columns:?}");
        assert!(kinds(&g).contains(&WarningKind::SameClassNesting), "{scenario}");
    }
}

#[test]
fn fixed_models_are_not_flagged() {
    for (name, params) in [
        ("abba", vec![("fixed", "true")]),
        ("philosophers", vec![("ordered", "true")]),
        ("flink", vec![("flink-version", "1.13.2")]),
        ("flink", vec![("flink-version", "1.13.2"), ("scenario", "minimal")]),
        ("flink", vec![("flink-version", "1.13.2"), ("scenario", "reentry")]),
    ] {
        let g = clean_graph(&model(name, &params), 2_000);
        assert_eq!(kinds(&g), vec![], "{name} {params:?}: {:?}", g.warnings());
    }
}

#[test]
fn a_deadlocked_run_holds_both_orders_however_its_waits_began() {
    // Each abba deadlock has T1 holding A waiting for B and T2 the other way;
    // a wait is an attempt, an edge of its own (as lockdep records it),
    // whether the task blocked at its lock (the lock was held) or was about
    // to take a free lock that the other task took first. Both happen among
    // these seeds; either way the run's own graph has the cycle.
    let m = model("abba", &[]);
    let mut deadlocks = 0;
    for seed in 0..300 {
        let run = m.run(seed, false);
        if run.outcome.deadlock().is_none() {
            continue;
        }
        deadlocks += 1;
        let mut pairs: Vec<(&str, &str)> = run.lock_order.edges.iter().map(|e| (&*e.from, &*e.to)).collect();
        pairs.sort();
        assert_eq!(pairs, vec![("A", "B"), ("B", "A")], "seed {seed}");
        assert!(kinds(&run.lock_order).contains(&WarningKind::CircularDependency), "seed {seed}");
    }
    assert!(deadlocks > 50, "{deadlocks} deadlocks in 300 seeds");
}

#[test]
fn reentering_a_held_monitor_adds_no_edge() {
    let g = clean_graph(&model("flink", &[("scenario", "reentry")]), 200);
    let mut pairs: Vec<(&str, &str)> = g.edges.iter().map(|e| (&*e.from, &*e.to)).collect();
    pairs.sort();
    // Recycling under channel-0's monitor takes the pool's lock, and then the
    // monitor of the listener it notifies: channel-1's, or channel-0's own
    // again, which is a re-entry and adds no edge.
    assert_eq!(
        pairs,
        vec![
            ("channel-0.bufferQueue", "LocalBufferPool.availableMemorySegments"),
            ("channel-0.bufferQueue", "channel-1.bufferQueue")
        ],
        "{:?}",
        g.edges
    );
}

#[test]
fn abba_inversion_is_reported_with_the_unsafe_scenario() {
    let mut g = LockOrder::default();
    for seed in 0..100 {
        g.merge(&model("abba", &[]).run(seed, false).lock_order);
    }
    let w = g.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].summary, "possible circular locking dependency: \"A\" -> \"B\" -> \"A\"");
    assert!(w[0].report.contains("Possible unsafe locking scenario"));
    assert!(w[0].report.contains("lock(A);") && w[0].report.contains("lock(B);"));
}

#[test]
fn ttrpc_clients_hold_send_lock_across_the_pipe_write() {
    let g = clean_graph(&model("ttrpc", &[("server", "v1.2.3"), ("client", "v1.2.3")]), 300);
    let w = g.warnings();
    assert!(w.iter().any(|w| w.kind == WarningKind::HeldAcrossBlocking && w.summary.contains("\"sendLock\"")));
    let chain = w.iter().find(|w| w.kind == WarningKind::ChainIntoBlocking).expect("the v1.2.3 chain");
    assert!(chain.summary.starts_with("\"streamLock\" held while taking \"sendLock\""), "{}", chain.summary);
    assert!(!w.iter().any(|w| w.kind == WarningKind::CircularDependency));
    // After #168 the chain is gone; sendLock is still held across the write, by design.
    let g = clean_graph(&model("ttrpc", &[("server", "v1.2.3"), ("client", "v1.2.4")]), 300);
    assert_eq!(kinds(&g), vec![WarningKind::HeldAcrossBlocking]);
}

#[test]
fn each_order_is_one_edge_per_run_among_few_locks_and_many() {
    // The first 64 resources' edges are told apart by bit rows, the others
    // by the list: an order is reported once, with where it was first taken,
    // on either side of that line and across it, and the rows are empty
    // again for the next run on the thread.
    async fn model() {
        let locks: Vec<sim::sync::Mutex> = (0..70).map(|i| sim::sync::Mutex::new(format!("m{i}"))).collect();
        for (a, b) in [(0, 1), (0, 1), (1, 0), (66, 67), (66, 67), (0, 66), (0, 66), (67, 3), (67, 3)] {
            let _f = sim::frame_at("pair", if a < b { "up" } else { "down" });
            let g1 = locks[a].lock().await;
            let g2 = locks[b].lock().await;
            g2.unlock().await;
            g1.unlock().await;
        }
    }
    for seed in 0..3 {
        let run = sim::Sim::new(seed).run(model);
        let pairs: Vec<(String, String)> =
            run.lock_order.edges.iter().map(|e| (e.from.to_string(), e.to.to_string())).collect();
        let want = [("m0", "m1"), ("m1", "m0"), ("m66", "m67"), ("m0", "m66"), ("m67", "m3")];
        assert_eq!(pairs, want.map(|(a, b)| (a.to_string(), b.to_string())), "seed {seed}");
        assert!(run.lock_order.edges.iter().all(|e| e.to_at.is_some()));
    }
}

/// A reader takes `cache` for reading, then again inside (Go's recursive
/// read lock); with `writer`, another task takes it for writing after that
/// many ns.
fn recursive_reader(recursive: bool, writer: Option<u64>) -> Configured {
    Configured::of(if recursive { "recursive-read" } else { "read-once" }, move || async move {
        let rw = sim::sync::RwMutex::new("cache");
        sim::spawn("reader", async move {
            let _f = sim::frame_at("Cache.Get", "cache.go:10");
            let outer = rw.rlock().await;
            if recursive {
                sim::at("cache.go:12");
                let inner = rw.rlock().await;
                inner.runlock().await;
            }
            outer.runlock().await;
        });
        if let Some(after) = writer {
            sim::spawn("writer", async move {
                if after > 0 {
                    sim::time::sleep(after).await;
                }
                let w = rw.lock().await;
                w.unlock().await;
            });
        }
    })
}

#[test]
fn a_read_lock_taken_again_is_flagged_from_runs_that_did_not_deadlock() {
    // The writer comes long after: no run deadlocks, yet the second read
    // lock is a potential deadlock, as lockdep's recursive read says.
    let m = recursive_reader(true, Some(10_000));
    assert!((0..50).all(|s| !m.run(s, false).outcome.is_failure()));
    let g = clean_graph(&m, 50);
    assert_eq!(kinds(&g), vec![WarningKind::RecursiveReadLock]);
    let w = &g.warnings()[0];
    assert_eq!(w.summary, "possible recursive locking: \"cache\" read-locked again while held for reading");
    assert!(w.report.starts_with("WARNING: possible recursive locking detected\n\"reader\" is trying to acquire lock \"cache\" (read) at Cache.Get (cache.go:12)\nbut task is already holding lock \"cache\" (read), taken at Cache.Get (cache.go:10)\n"), "{}", w.report);
    assert!(w.report.contains("  rlock(cache);\n") && w.report.contains("*** DEADLOCK ***"), "{}", w.report);
    // Its columns: the task seen, and the writer seen, as the abba report
    // names its tasks; "a writer" where none was seen.
    assert!(w.report.contains("\n       reader    writer\n       ----      ----\n"), "{}", w.report);
    let alone = clean_graph(&recursive_reader(true, None), 5).warnings();
    assert!(alone[0].report.contains("\n       reader    a writer\n       ----      ----\n"), "{}", alone[0].report);
    // One read lock at a time: nothing to flag, writer or not.
    assert!(clean_graph(&recursive_reader(false, Some(10_000)), 50).warnings().is_empty());
    // A writer in between, where it comes at once: some schedule deadlocks.
    let soon = recursive_reader(true, Some(0));
    assert!((0..200).any(|s| soon.run(s, false).outcome.is_failure()));
}

/// cockroach#3710's chain: two tasks read-lock `Store.mu`, lock
/// `baseQueue.mu`, and read-lock `Store.mu` again; with `writer`, a third
/// task write-locks `Store.mu` (at once, or after that many ns).
fn store_chain(writer: Option<u64>) -> Configured {
    Configured::of("store-chain", move || async move {
        let mu = sim::sync::RwMutex::new("Store.mu");
        let bq = sim::sync::Mutex::new("baseQueue.mu");
        for name in ["T1", "T2"] {
            sim::spawn(name, async move {
                let _f = sim::frame_at("Store.ForceRaftLogScanAndProcess", "store.go:10");
                let r = mu.rlock().await;
                sim::at("store.go:11");
                let q = bq.lock().await;
                sim::at("store.go:12");
                let r2 = mu.rlock().await;
                r2.runlock().await;
                q.unlock().await;
                r.runlock().await;
            });
        }
        if let Some(after) = writer {
            sim::spawn("processRaft", async move {
                if after > 0 {
                    sim::time::sleep(after).await;
                }
                let _f = sim::frame_at("Store.processRaft", "store.go:40");
                let w = mu.lock().await;
                w.unlock().await;
            });
        }
    })
}

#[test]
fn a_cycle_through_read_locks_needs_a_writer() {
    // No writer: read locks never wait, so "baseQueue.mu -> Store.mu (read)"
    // closes no cycle, and the only finding is the recursive read lock.
    let none = store_chain(None);
    let r = sim::scheduler::explore(&none, &sim::scheduler::ExploreConfig::default());
    assert!(r.exhausted && r.failure.is_none(), "{:?}", r.failure.map(|f| f.0.outcome.summary()));
    assert_eq!(kinds(&r.lock_order), vec![WarningKind::RecursiveReadLock], "{:#?}", r.lock_order.warnings());
    let w = &r.lock_order.warnings()[0];
    assert!(
        w.report.ends_with("(no task asked to write-lock \"Store.mu\" in these runs: one that does deadlocks this)\n"),
        "{}",
        w.report
    );
    // The edge is there, marked: taken for reading while holding a mutex.
    let e = r.lock_order.edges.iter().find(|e| e.from == "baseQueue.mu" && e.to == "Store.mu").unwrap();
    assert!(e.read && !e.from_read);
    let e = r.lock_order.edges.iter().find(|e| e.from == "Store.mu" && e.to == "baseQueue.mu").unwrap();
    assert!(!e.read && e.from_read);

    // A writer that comes late: no run deadlocks, but the cycle is real
    // (the writer waits for T1's read lock, T2's read lock waits behind
    // the writer, T1 waits for T2's baseQueue.mu) and is reported.
    let late = store_chain(Some(10_000));
    assert!((0..100).all(|s| !late.run(s, false).outcome.is_failure()));
    let g = clean_graph(&late, 100);
    assert_eq!(kinds(&g), vec![WarningKind::CircularDependency, WarningKind::RecursiveReadLock], "{:#?}", g.warnings());
    let w = &g.warnings()[0];
    assert_eq!(w.summary, "possible circular locking dependency: \"Store.mu\" -> \"baseQueue.mu\" -> \"Store.mu\"");
    for line in [
        "is trying to acquire lock \"Store.mu\" (read) at Store.ForceRaftLogScanAndProcess (store.go:12)\nbut task is already holding lock \"baseQueue.mu\", taken at Store.ForceRaftLogScanAndProcess (store.go:11)\n",
        "asked for it at Store.ForceRaftLogScanAndProcess (store.go:11) while holding \"Store.mu\" (read), taken at Store.ForceRaftLogScanAndProcess (store.go:10)\n",
        "  rlock(Store.mu);\n",
        "two tasks running this code deadlock, with the writer below)\n",
        "lock(baseQueue.mu);\n",
        "\"Store.mu\" is read-locked on both sides: the second read lock waits only behind a writer, which waits for the first\n(\"processRaft\" asks to write-lock \"Store.mu\" at Store.processRaft (store.go:40))\n",
    ] {
        assert!(w.report.contains(line), "{line}\n---\n{}", w.report);
    }
    // The writer at once: explore finds the three-task deadlock.
    let soon = store_chain(Some(0));
    let r = sim::scheduler::explore(&soon, &sim::scheduler::ExploreConfig::default());
    assert!(r.failure.is_some(), "{} executions", r.executions);
}

#[test]
fn a_writer_seen_in_another_run_makes_a_read_lock_a_wait() {
    // One run without the writer, one with only the writer: merged (and
    // through a shard's JSON) the cycle is there, as a one-by-one hunt
    // over both would see it.
    let chain = store_chain(None).run(0, false).lock_order;
    let writer_only = Configured::of("writer", || async {
        let mu = sim::sync::RwMutex::new("Store.mu");
        sim::spawn("processRaft", async move {
            let _f = sim::frame_at("Store.processRaft", "store.go:40");
            mu.lock().await.unlock().await;
        });
    })
    .run(0, false)
    .lock_order;
    assert!(chain.written.is_empty() && writer_only.edges.is_empty() && !writer_only.is_empty());
    assert!(!kinds(&chain).contains(&WarningKind::CircularDependency));
    let mut g = chain.clone();
    g.merge(&writer_only);
    assert_eq!(kinds(&g)[0], WarningKind::CircularDependency);
    let mut sg = sim::lockorder::SeedGraph::default();
    sg.add(3, &writer_only);
    sg.add(1, &chain);
    let mut seen = sim::lockorder::SeenFacts::default();
    assert!(seen.any_new(&chain) && seen.any_new(&writer_only) && !seen.any_new(&writer_only));
    let back = sim::lockorder::SeedGraph::from_json(&sg.to_json(u64::MAX)).unwrap();
    assert_eq!(back.up_to(u64::MAX), g);
    // Up to seed 2 the writer is not seen yet.
    assert!(!kinds(&back.up_to(2)).contains(&WarningKind::CircularDependency));
}

#[test]
fn a_class_cycle_through_read_locks_counts_a_writer_of_any_lock_of_the_class() {
    // x1 then y1 (read) in T1, y2 (read) then x2 in T2, a writer on one y:
    // the classes X and Y are taken in both orders, and which y is written
    // is no matter to a class cycle, which takes its locks for one another.
    let classes = |written_is_y1: bool| {
        Configured::of("classes", move || async move {
            let (x1, x2) =
                (sim::sync::Mutex::with_class("x1", Some("X")), sim::sync::Mutex::with_class("x2", Some("X")));
            let y1 = sim::sync::RwMutex::with_class("y1", Some("Y"));
            let y2 = sim::sync::RwMutex::with_class("y2", Some("Y"));
            let target = if written_is_y1 { y1 } else { y2 };
            sim::spawn("T1", async move {
                let g = x1.lock().await;
                y1.rlock().await.runlock().await;
                g.unlock().await;
            });
            sim::spawn("T2", async move {
                sim::time::sleep(1_000).await;
                let r = y2.rlock().await;
                x2.lock().await.unlock().await;
                r.runlock().await;
            });
            sim::spawn("W", async move {
                sim::time::sleep(5_000).await;
                target.lock().await.unlock().await;
            });
        })
    };
    for written_is_y1 in [true, false] {
        let g = clean_graph(&classes(written_is_y1), 20);
        assert_eq!(kinds(&g), vec![WarningKind::ClassCircularDependency], "y1 written: {written_is_y1}");
        let w = &g.warnings()[0];
        assert!(w.report.contains("\"T1\" took \"y1\" (read) at"), "{}", w.report);
        assert!(w.report.contains("while holding \"y2\" (read), taken at"), "{}", w.report);
    }
}

#[test]
fn two_locks_of_one_name_nested_are_not_a_recursive_read() {
    // transfer(a, b) locks two accounts, both named "account": the edge
    // between them is by name from a lock to itself, but not one object
    // read-locked twice.
    let m = Configured::of("transfer", || async {
        let (a, b) = (sim::sync::Mutex::new("account"), sim::sync::Mutex::new("account"));
        sim::spawn("transfer", async move {
            let ga = a.lock().await;
            let gb = b.lock().await;
            gb.unlock().await;
            ga.unlock().await;
        });
    });
    let g = clean_graph(&m, 5);
    assert_eq!(g.edges.len(), 1);
    assert!(!g.edges[0].recursive);
    // Nested as two instances of one class (by name): information, not a
    // one-lock "circular dependency" (as it was) nor a recursive read.
    assert_eq!(kinds(&g), vec![WarningKind::SameClassNesting], "{:?}", g.warnings());
    assert_eq!(g.warnings()[0].summary, "two instances of lock class account nested: \"account\" then \"account\"");
    // And a recursive read survives a shard's JSON.
    let r = clean_graph(&recursive_reader(true, None), 5);
    let mut sg = sim::lockorder::SeedGraph::default();
    sg.add(0, &r);
    let back = sim::lockorder::SeedGraph::from_json(&sg.to_json(u64::MAX)).unwrap();
    assert_eq!(kinds(&back.up_to(u64::MAX)), vec![WarningKind::RecursiveReadLock]);
}

#[test]
fn a_monitor_held_across_another_monitors_wait_is_flagged() {
    // A waits on `inner` still holding `outer` (wait() lets go of `inner`
    // only); B notifies `inner` without `outer`, so every run completes.
    // A notifier that needed `outer` would never get it: Java's nested
    // monitor lockout. As lockdep notes a lock held across a sleep, the
    // wait is flagged from these runs, which did not deadlock.
    let m = |a_holds_outer: bool| {
        Configured::of(if a_holds_outer { "nested" } else { "flat" }, move || async move {
            use sim::sync::Monitor;
            let (outer, inner) = (Monitor::new("outer"), Monitor::new("inner"));
            let notified = std::rc::Rc::new(std::cell::Cell::new(false));
            let n = notified.clone();
            sim::spawn("A", async move {
                let _f = sim::frame_at("A.run", "A.java:3");
                let o = if a_holds_outer { Some(outer.enter().await) } else { None };
                let i = inner.enter().await;
                while !n.get() {
                    i.wait().await;
                }
                i.exit().await;
                if let Some(o) = o {
                    o.exit().await;
                }
            });
            sim::spawn("B", async move {
                let i = inner.enter().await;
                notified.set(true);
                i.notify();
                i.exit().await;
            });
        })
    };
    let (mut g, mut waited) = (LockOrder::default(), 0);
    for seed in 0..200 {
        let run = m(true).run(seed, false);
        assert!(!run.outcome.is_failure(), "seed {seed}: {}", run.outcome.summary());
        waited += usize::from(!run.lock_order.held_across.is_empty());
        g.merge(&run.lock_order);
    }
    assert!(waited > 0 && waited < 200, "A waits in some schedules only: {waited}");
    let w = g.warnings();
    let held = w.iter().find(|w| w.kind == WarningKind::HeldAcrossBlocking).expect("flagged");
    assert_eq!(held.summary, "\"outer\" held across a blocking wait() on \"inner\"");
    assert!(
        held.report.starts_with(
            "INFO: lock held across a blocking wait()\n\"A\" blocked in wait() on \"inner\" at A.run (A.java:3)\n  while holding \"outer\""
        ),
        "{}",
        held.report
    );
    // Without `outer` around the wait: nothing.
    let mut g = LockOrder::default();
    for seed in 0..200 {
        g.merge(&m(false).run(seed, false).lock_order);
    }
    assert_eq!(kinds(&g), vec![], "{:?}", g.warnings());
}

#[test]
fn one_writer_of_two_read_locked_sides_stands_for_two() {
    // T1 read-locks A then B, T2 B then A: each read lock waits only behind
    // a writer, so a deadlock needs a writer waiting on A and another on B
    // at once. W writes both, one after the other: the report names it for
    // each and says it stands for two tasks running its code.
    // The cycle's report, with one writer task "W" of both locks, or one
    // per lock ("WA", "WB").
    let report = |one_writer: bool| {
        let m = Configured::of("two-sides", move || async move {
            let (a, b) = (sim::sync::RwMutex::new("A"), sim::sync::RwMutex::new("B"));
            for (name, first, second) in [("T1", a, b), ("T2", b, a)] {
                sim::spawn(name, async move {
                    let g1 = first.rlock().await;
                    let g2 = second.rlock().await;
                    g2.runlock().await;
                    g1.runlock().await;
                });
            }
            let writers: &[(&str, &[sim::sync::RwMutex])] =
                if one_writer { &[("W", &[a, b])] } else { &[("WA", &[a]), ("WB", &[b])] };
            for &(name, locks) in writers {
                let locks = locks.to_vec();
                sim::spawn(name, async move {
                    for l in locks {
                        l.lock().await.unlock().await;
                    }
                });
            }
        });
        let w = clean_graph(&m, 50).warnings();
        w.into_iter().find(|w| w.kind == WarningKind::CircularDependency).expect("flagged").report
    };
    let one = report(true);
    for lock in ["A", "B"] {
        let line = format!("\"{lock}\" is read-locked on both sides");
        assert!(one.contains(&line), "{line}\n---\n{one}");
    }
    let note = "(\"W\" is seen writing more than one of them; each needs a writer of its own waiting at the same time: two tasks running its code)\n";
    assert!(one.contains(note), "{one}");
    // Two writers, one per lock: no such note.
    let two = report(false);
    assert!(!two.contains("writing more than one"), "{two}");
}
