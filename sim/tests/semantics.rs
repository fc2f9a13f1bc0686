//! Each rule of the engine's semantics, checked on small hand-made models.

use std::cell::RefCell;
use std::rc::Rc;

use sim::sync::{select, Chan, Monitor, Mutex, Pipe, RwMutex};
use sim::time::sleep;
use sim::{spawn, spawn_background, Outcome, Sim};

type Log = Rc<RefCell<Vec<String>>>;

fn log() -> Log {
    Rc::new(RefCell::new(Vec::new()))
}

/// Runs the model for `seed` and returns the outcome and what it logged.
fn run_logged<F, Fut>(seed: u64, f: F) -> (Outcome, Vec<String>)
where
    F: FnOnce(Log) -> Fut + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let l = log();
    let l2 = l.clone();
    let run = Sim::new(seed).run(move || f(l2));
    let v = l.borrow().clone();
    (run.outcome, v)
}

#[test]
fn run_ends_when_foreground_tasks_return_and_blocked_background_tasks_are_parked() {
    for seed in 0..50 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let never: Chan<u32> = Chan::new("never", 0);
            never.declare_sender(); // main holds the send end but never sends
            let rx = never.clone();
            spawn_background("server.loop", async move {
                rx.recv().await;
            });
            let l = log.clone();
            spawn("client", async move {
                sleep(1_000).await;
                l.borrow_mut().push("client done".into());
            });
        });
        assert_eq!(outcome, Outcome::Completed, "seed {seed}");
        assert_eq!(log, vec!["client done"]);
    }
}

#[test]
fn a_foreground_task_blocked_forever_is_a_global_deadlock() {
    let run = Sim::new(0).run(|| async {
        let ch: Chan<u32> = Chan::new("results", 0);
        // Nobody holds the send end: the wait cannot be tied to a cycle,
        // but once nothing can run it is a global deadlock.
        ch.recv().await;
    });
    let d = run.outcome.deadlock().expect("deadlock");
    assert!(d.global);
    assert!(d.cycle.is_empty());
    assert_eq!(d.behind.len(), 1);
    assert_eq!(d.behind[0].name, "main");
    assert_eq!(d.behind[0].op, "recv");
    assert_eq!(d.behind[0].waits_for, "results");
}

#[test]
fn go_mutex_is_not_reentrant_relocking_is_a_one_task_cycle() {
    let run = Sim::new(0).run(|| async {
        let mu = Mutex::new("mu");
        let _g = mu.lock().await;
        let _again = mu.lock().await;
    });
    let d = run.outcome.deadlock().expect("deadlock");
    assert_eq!(d.cycle.len(), 1);
    assert_eq!(d.cycle[0].name, "main");
    assert_eq!(d.cycle[0].waits_for, "mu");
    assert_eq!(d.cycle[0].released_by, vec!["main"]);
    assert_eq!(d.cycle[0].holds.len(), 1);
}

#[test]
fn mutex_unlock_enables_every_waiter_and_the_scheduler_picks() {
    let mut winners = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let mu = Mutex::new("mu");
            let g = mu.lock().await;
            for name in ["A", "B", "C"] {
                let l = log.clone();
                spawn(name, async move {
                    let g = mu.lock().await;
                    l.borrow_mut().push(name.to_string());
                    g.unlock().await;
                });
            }
            // Every waiter blocks before the unlock.
            sleep(10_000).await;
            g.unlock().await;
        });
        assert_eq!(outcome, Outcome::Completed);
        winners.insert(log[0].clone());
    }
    assert_eq!(winners.into_iter().collect::<Vec<_>>(), vec!["A", "B", "C"], "no FIFO hand-off");
}

#[test]
fn unlock_is_a_scheduling_point() {
    // Another task can run between T1's lock and T1's unlock returning.
    let mut interleaved = false;
    let mut sequential = false;
    for seed in 0..100 {
        let (_, log) = run_logged(seed, |log| async move {
            let mu = Mutex::new("mu");
            let l = log.clone();
            spawn("T1", async move {
                let g = mu.lock().await;
                l.borrow_mut().push("locked".into());
                g.unlock().await;
                l.borrow_mut().push("unlocked".into());
            });
            let l = log.clone();
            spawn("T2", async move {
                sim::yield_now().await;
                l.borrow_mut().push("T2".into());
            });
        });
        let pos = |s: &str| log.iter().position(|x| x == s).unwrap();
        interleaved |= pos("locked") < pos("T2") && pos("T2") < pos("unlocked");
        sequential |= pos("unlocked") < pos("T2");
    }
    assert!(interleaved && sequential);
}

/// R holds a read lock and then wants M; X holds M and then wants a read
/// lock; W asks for the write lock in between. Go's RWMutex makes X's RLock
/// wait for the waiting writer W, which waits for reader R: a cycle.
async fn rw_cycle(with_writer: bool) {
    let rw = RwMutex::new("streamLock");
    let m = Mutex::new("sendLock");
    spawn("R", async move {
        let _r = rw.rlock().await;
        sleep(100_000).await;
        let _g = m.lock().await;
    });
    spawn("X", async move {
        let _g = m.lock().await;
        sleep(50_000).await;
        let _r = rw.rlock().await;
    });
    if with_writer {
        spawn("W", async move {
            sleep(10_000).await;
            let _w = rw.lock().await;
        });
    }
}

#[test]
fn a_reader_behind_a_waiting_writer_waits_for_that_writer() {
    for seed in 0..50 {
        let run = Sim::new(seed).run(|| rw_cycle(true));
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {:?}", run.outcome));
        let cycle: Vec<(&str, &str, &str)> =
            d.cycle.iter().map(|b| (b.name.as_str(), b.op.as_str(), b.waits_for.as_str())).collect();
        assert_eq!(
            cycle,
            vec![("R", "lock", "sendLock"), ("X", "rlock", "streamLock"), ("W", "lock", "streamLock")],
            "seed {seed}"
        );
        assert_eq!(d.cycle[1].released_by, vec!["W"], "the reader waits for the waiting writer");
        assert_eq!(d.cycle[2].released_by, vec!["R"], "the writer waits for the reader");
        // The writer does not hold streamLock yet: the report says it is queued.
        let report = d.to_string();
        assert!(
            report.contains(
                r#""X" (task 2): waiting to read-lock rwmutex "streamLock", behind the writer waiting for it: "W""#
            ),
            "{report}"
        );
        assert!(report.contains(r#""W" (task 3): waiting to lock rwmutex "streamLock", held by "R""#), "{report}");
    }
    // Without the waiting writer, X gets its read lock and everything completes.
    for seed in 0..50 {
        assert_eq!(Sim::new(seed).run(|| rw_cycle(false)).outcome, Outcome::Completed);
    }
}

#[test]
fn readers_waiting_at_a_writers_unlock_go_before_the_next_writer() {
    for seed in 0..200 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let rw = RwMutex::new("rw");
            let w1 = rw.lock().await;
            let l = log.clone();
            spawn("R", async move {
                sleep(1_000).await;
                let r = rw.rlock().await;
                l.borrow_mut().push("R".into());
                r.runlock().await;
            });
            let l = log.clone();
            spawn("W2", async move {
                sleep(2_000).await;
                let w = rw.lock().await;
                l.borrow_mut().push("W2".into());
                w.unlock().await;
            });
            sleep(10_000).await;
            w1.unlock().await;
        });
        assert_eq!(outcome, Outcome::Completed);
        assert_eq!(log, vec!["R", "W2"], "seed {seed}");
    }
}

#[test]
fn java_monitor_is_reentrant_and_wait_releases_and_restores_every_entry() {
    for seed in 0..100 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let mon = Monitor::new("bufferQueue");
            let l = log.clone();
            let waiter = spawn("waiter", async move {
                let outer = mon.enter().await;
                let inner = mon.enter().await;
                l.borrow_mut().push("waiting".into());
                inner.wait().await; // releases both entries
                l.borrow_mut().push(format!("woken, holds={}", mon.held_by_current()));
                inner.exit().await;
                assert!(mon.held_by_current(), "one entry left after the first exit");
                outer.exit().await;
            });
            let l = log.clone();
            spawn("notifier", async move {
                sleep(1_000).await;
                let g = mon.enter().await; // possible only because wait released every entry
                l.borrow_mut().push("notify".into());
                g.notify_all();
                g.exit().await;
            });
            waiter.join().await;
            let g = mon.enter().await; // free again: the waiter left both entries
            g.exit().await;
        });
        assert_eq!(outcome, Outcome::Completed, "seed {seed}");
        assert_eq!(log, vec!["waiting", "notify", "woken, holds=true"]);
    }
}

#[test]
fn notify_wakes_one_waiter_chosen_by_the_scheduler() {
    let mut first = std::collections::BTreeSet::new();
    for seed in 0..100 {
        let (_, log) = run_logged(seed, |log| async move {
            let mon = Monitor::new("lock");
            for name in ["A", "B"] {
                let l = log.clone();
                spawn_background(name, async move {
                    let g = mon.enter().await;
                    g.wait().await;
                    l.borrow_mut().push(name.to_string());
                    g.exit().await;
                });
            }
            sleep(1_000).await;
            let g = mon.enter().await;
            g.notify();
            g.exit().await;
            sleep(1_000).await;
        });
        assert_eq!(log.len(), 1, "notify wakes exactly one");
        first.insert(log[0].clone());
    }
    assert_eq!(first.len(), 2, "either waiter may be the one");
}

#[test]
fn unbuffered_channel_is_a_rendezvous_and_buffered_send_waits_only_when_full() {
    for seed in 0..50 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let ch: Chan<u32> = Chan::new("unbuffered", 0);
            let tx = ch.clone();
            let l = log.clone();
            spawn("sender", async move {
                tx.send(1).await;
                l.borrow_mut().push(format!("sent at {}", sim::time::now() >= 50_000));
            });
            sleep(50_000).await;
            assert_eq!(ch.recv().await, Some(1));
            let b: Chan<u32> = Chan::new("buffered", 2);
            b.send(1).await;
            b.send(2).await; // fits: no receiver needed
            assert_eq!(b.len(), 2);
            let l = log.clone();
            let rx = b.clone();
            spawn("drainer", async move {
                sleep(10_000).await;
                l.borrow_mut().push("drain".into());
                while rx.recv().await.is_some() {}
            });
            b.send(3).await; // full: waits for the drainer
            log.borrow_mut().push("third sent".into());
            b.close().await;
        });
        assert_eq!(outcome, Outcome::Completed, "seed {seed}");
        assert_eq!(log, vec!["sent at true", "drain", "third sent"]);
    }
}

#[test]
fn close_wakes_receivers_with_none_and_send_on_closed_panics() {
    let (outcome, log) = run_logged(0, |log| async move {
        let ch: Chan<u32> = Chan::new("done", 0);
        let rx = ch.clone();
        let l = log.clone();
        let h = spawn("receiver", async move {
            let v = rx.recv().await;
            l.borrow_mut().push(format!("{v:?}"));
        });
        ch.close().await;
        h.join().await;
        ch.send(1).await;
    });
    assert_eq!(log, vec!["None"]);
    match outcome {
        Outcome::Panic { task, message, .. } => {
            assert_eq!(task, "main");
            assert!(message.contains("send on closed channel"), "{message}");
        }
        other => panic!("expected a panic outcome, got {other:?}"),
    }
}

#[test]
fn select_picks_uniformly_among_ready_cases_and_default_when_none() {
    let mut picked = [0u32; 2];
    for seed in 0..400 {
        let run = Sim::new(seed).run(move || async move {
            let a: Chan<u32> = Chan::new("a", 1);
            let b: Chan<u32> = Chan::new("b", 1);
            let mut ca = a.recv_case();
            let mut cb = b.recv_case();
            assert_eq!(select(&mut [&mut ca, &mut cb], true).await, None, "nothing ready: default");
            a.send(1).await;
            b.send(2).await;
            let i = select(&mut [&mut ca, &mut cb], false).await.unwrap();
            let v = if i == 0 { ca.take() } else { cb.take() };
            assert_eq!(v, Some(i as u32 + 1));
            sim::check(i < 2, "case index");
            // Record the pick in the outcome through a deliberate invariant.
            sim::check(i != 1, "picked b");
        });
        match run.outcome {
            Outcome::Completed => picked[0] += 1,
            Outcome::Invariant { ref message, .. } if message == "picked b" => picked[1] += 1,
            other => panic!("{other:?}"),
        }
    }
    assert!(picked[0] > 150 && picked[1] > 150, "{picked:?}");
}

/// A select on receiving from `calls` or sending 99 on `out`, with no one
/// ready at first; a caller sends 7 on `calls` a microsecond later. Gives the
/// case taken, the value received and the value left unsent.
async fn select_recv_calls_or_send_out() -> (Option<usize>, Option<u32>, Option<u32>) {
    let calls: Chan<u32> = Chan::new("calls", 0);
    let out: Chan<u32> = Chan::new("out", 0);
    let c = calls.clone();
    spawn("caller", async move {
        sleep(1_000).await;
        c.send(7).await;
    });
    let mut recv = calls.recv_case();
    let mut send = out.send_case(99);
    let i = select(&mut [&mut recv, &mut send], false).await;
    (i, recv.take(), send.into_value())
}

#[test]
fn a_blocked_select_completes_through_any_case_and_gives_back_unsent_values() {
    for seed in 0..50 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let (i, received, unsent) = select_recv_calls_or_send_out().await;
            assert_eq!(i, Some(0));
            log.borrow_mut().push(format!("{received:?} {unsent:?}"));
        });
        assert_eq!(outcome, Outcome::Completed);
        assert_eq!(log, vec!["Some(7) Some(99)"]);
    }
}

#[test]
fn a_blocked_select_records_its_cases_in_order_on_its_block_event() {
    use sim::trace::{Case, CaseDir, EventKind};
    let run = Sim::new(3).record(true).run(|| async {
        assert_eq!(select_recv_calls_or_send_out().await.0, Some(0));
    });
    assert_eq!(run.outcome, Outcome::Completed);
    let t = run.trace.unwrap();
    let id = |name: &str| t.resources.iter().find(|r| r.name == name).unwrap().id;
    let blocks: Vec<_> = t.events.iter().filter(|e| e.kind == EventKind::Block).collect();
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert_eq!(blocks[0].op.as_deref(), Some("select"));
    assert_eq!(blocks[0].resource, None);
    assert_eq!(
        blocks[0].cases,
        vec![Case { resource: id("calls"), dir: CaseDir::Recv }, Case { resource: id("out"), dir: CaseDir::Send }]
    );
    // No other event carries cases, and the trace reads back as written.
    assert_eq!(t.events.iter().filter(|e| !e.cases.is_empty()).count(), 1);
    let json = t.to_json();
    assert_eq!(sim::trace::Trace::from_json(&json).unwrap().to_json(), json);
    let bad = json.replace(&format!("\"resource\":{},\"dir\":\"send\"", id("out")), "\"resource\":9,\"dir\":\"send\"");
    let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
    assert!(err.contains(".cases[1].resource: 9 is not a resource id"), "{err}");
}

#[test]
fn net_pipe_write_completes_only_when_readers_took_every_byte_in_read_sized_pieces() {
    for seed in 0..50 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let p: Pipe<&'static str> = Pipe::new("net.Pipe", 0);
            let w = p.clone();
            let l = log.clone();
            spawn("writer", async move {
                w.write(10, Some("frame")).await.unwrap();
                l.borrow_mut().push("write returned".into());
            });
            let mut msgs = Vec::new();
            for _ in 0..3 {
                let n = p.read(4, &mut msgs).await.unwrap();
                log.borrow_mut().push(format!("read {n} {msgs:?}"));
            }
            sleep(1_000).await;
        });
        assert_eq!(outcome, Outcome::Completed);
        let reads: Vec<&String> = log.iter().filter(|x| x.starts_with("read")).collect();
        assert_eq!(reads, vec!["read 4 []", "read 4 []", "read 2 [\"frame\"]"], "seed {seed}");
        let ret = log.iter().position(|x| x == "write returned").unwrap();
        assert!(ret > log.iter().position(|x| x.starts_with("read 2")).unwrap(), "{log:?}");
    }
}

/// Go's `net.Pipe` hands a reader even an empty write and waits for it to
/// be taken: `Write(nil)` returns only after a `Read`, which returns 0 and
/// no error. With no reader ever, the writer is stuck; a socket buffer
/// (capacity above 0) takes 0 bytes at once.
#[test]
fn net_pipe_write_of_zero_bytes_waits_for_a_read_that_returns_zero() {
    for seed in 0..50 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let p: Pipe<&'static str> = Pipe::new("net.Pipe", 0);
            let w = p.clone();
            let l = log.clone();
            spawn("writer", async move {
                w.write(0, Some("empty")).await.unwrap();
                l.borrow_mut().push("write returned".into());
                w.write(3, None).await.unwrap();
            });
            sleep(1_000).await;
            log.borrow_mut().push("slept".into());
            let mut msgs = Vec::new();
            let n = p.read(8, &mut msgs).await.unwrap();
            log.borrow_mut().push(format!("read {n} {msgs:?}"));
            let n = p.read(8, &mut msgs).await.unwrap();
            log.borrow_mut().push(format!("read {n}"));
        });
        assert_eq!(outcome, Outcome::Completed);
        let at = |x: &str| log.iter().position(|y| y == x).unwrap_or_else(|| panic!("{x} not in {log:?}"));
        assert!(at("slept") < at("write returned"), "seed {seed}: {log:?}");
        assert!(at("read 0 [\"empty\"]") < at("read 3"), "seed {seed}: {log:?}");
    }
    // A reader that reads to the end of the stream goes on past the 0.
    for seed in 0..50 {
        let (outcome, log) = run_logged(seed, |log| async move {
            let p: Pipe<()> = Pipe::new("net.Pipe", 0);
            let w = p.clone();
            spawn("writer", async move {
                w.write(0, None).await.unwrap();
                w.write(3, None).await.unwrap();
                w.close_write().await;
            });
            let (mut total, mut reads) = (0, 0);
            loop {
                match p.read(8, &mut Vec::new()).await {
                    Ok(n) => (total, reads) = (total + n, reads + 1),
                    Err(e) => {
                        log.borrow_mut().push(format!("{total} bytes in {reads} reads, then {e}"));
                        break;
                    }
                }
            }
        });
        assert_eq!(outcome, Outcome::Completed, "seed {seed}");
        assert_eq!(log, ["3 bytes in 2 reads, then EOF"], "seed {seed}");
    }
    let stuck = sim::Sim::new(0).run(|| async {
        let p: Pipe<()> = Pipe::new("net.Pipe", 0);
        p.declare_writer();
        p.declare_reader();
        p.write(0, None).await.unwrap();
    });
    assert_eq!(stuck.outcome.verdict(), "deadlock", "{}", stuck.outcome);
    let socket = sim::Sim::new(0).run(|| async {
        let p: Pipe<()> = Pipe::new("socket", 4);
        p.declare_writer();
        p.declare_reader();
        p.write(0, None).await.unwrap();
    });
    assert_eq!(socket.outcome, Outcome::Completed);
}

#[test]
fn buffered_pipe_moves_what_fits_and_reads_cross_message_boundaries() {
    let (outcome, log) = run_logged(0, |log| async move {
        let p: Pipe<u32> = Pipe::new("socket", 8);
        let w = p.clone();
        let l = log.clone();
        spawn("writer", async move {
            w.write(6, Some(1)).await.unwrap();
            w.write(6, Some(2)).await.unwrap(); // 2 bytes fit, 4 wait for room
            l.borrow_mut().push(format!("both written, buffered {}", w.buffered()));
            w.close_write().await;
        });
        sleep(10_000).await;
        log.borrow_mut().push(format!("buffered {}", p.buffered()));
        let mut msgs = Vec::new();
        let n = p.read(7, &mut msgs).await.unwrap(); // frees room: the rest moves in
        log.borrow_mut().push(format!("read {n} {msgs:?}"));
        let mut total = n;
        loop {
            match p.read(100, &mut msgs).await {
                Ok(n) => total += n,
                Err(sim::sync::ReadError::Eof) => break,
                Err(e) => panic!("{e}"),
            }
        }
        log.borrow_mut().push(format!("total {total} {msgs:?}"));
    });
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(log[0], "buffered 8");
    assert_eq!(log[1], "read 7 [1]");
    assert!(log.contains(&"total 12 [1, 2]".to_string()), "{log:?}");
}

#[test]
fn closing_the_write_end_fails_the_write_in_progress_and_keeps_what_is_buffered() {
    // Go's `Write` on a conn closed under it returns an error; the bytes the
    // socket buffer took stay readable, the rest never arrive.
    for cap in [0, 4] {
        for seed in 0..20 {
            let (outcome, log) = run_logged(seed, move |log| async move {
                let p: Pipe<&'static str> = Pipe::new("conn", cap);
                for (name, after, n, msg) in [("writer", 0, 10, "frame"), ("next writer", 500, 3, "ping")] {
                    let (w, l) = (p.clone(), log.clone());
                    spawn(name, async move {
                        sleep(after).await;
                        let r = w.write(n, Some(msg)).await;
                        l.borrow_mut().push(format!("{name}: {r:?}"));
                    });
                }
                let c = p.clone();
                spawn("closer", async move {
                    sleep(1_000).await;
                    c.close_write().await;
                });
                sleep(2_000).await;
                let mut msgs = Vec::new();
                let mut total = 0;
                loop {
                    match p.read(100, &mut msgs).await {
                        Ok(n) => total += n,
                        Err(sim::sync::ReadError::Eof) => break,
                        Err(e) => panic!("{e}"),
                    }
                }
                log.borrow_mut().push(format!("read {total} {msgs:?}"));
            });
            assert_eq!(outcome, Outcome::Completed, "capacity {cap}, seed {seed}");
            // The writer blocked (capacity 4: with the buffer full; 0: for a
            // reader); the next one waits its turn; both fail at the close,
            // and the reader gets what the buffer held, without the frame
            // whose last byte never came.
            let mut log = log;
            log.sort();
            let want = ["next writer: Err(PipeClosed)", &format!("read {cap} []"), "writer: Err(PipeClosed)"];
            assert_eq!(log, want, "capacity {cap}, seed {seed}");
        }
    }
}

#[test]
fn panics_in_tasks_are_outcomes_with_the_task_and_message() {
    let run = Sim::new(0).run(|| async {
        spawn("worker", async {
            let _f = sim::frame_at("Worker.run", "worker.go:12");
            sim::yield_now().await;
            panic!("index out of range [3] with length 3");
        });
    });
    match run.outcome {
        Outcome::Panic { task, message, frames } => {
            assert_eq!(task, "worker");
            assert!(message.starts_with("index out of range [3] with length 3"), "{message}");
            assert_eq!(frames[0].name, "Worker.run");
            assert_eq!(frames[0].site, "worker.go:12");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn violated_invariant_and_step_limit_are_outcomes() {
    let run = Sim::new(0).run(|| async {
        spawn("counter", async {
            let _f = sim::frame("Counter.add");
            sim::yield_now().await;
            sim::check(false, format_args!("count is {} but should be {}", 3, 2));
        });
    });
    match run.outcome {
        Outcome::Invariant { task, message, frames } => {
            assert_eq!((task.as_str(), message.as_str()), ("counter", "count is 3 but should be 2"));
            assert_eq!(frames[0].name, "Counter.add");
        }
        other => panic!("{other:?}"),
    }
    let run = Sim::new(0).max_steps(500).run(|| async {
        loop {
            sim::yield_now().await;
        }
    });
    let main = sim::RunningTask { task: 0, name: "main".into(), started: true, asleep: false, spawned_at: 1 };
    assert_eq!(
        run.outcome,
        Outcome::StepLimit { steps: 500, blocked: vec![], running: vec![main].into(), shared: Box::default() }
    );
    assert_eq!(
        run.outcome.to_string(),
        "step limit: still running after 500 steps\n\nStill running at the limit: \"main\"\n"
    );
}

#[test]
fn awaiting_a_foreign_future_is_reported_not_hung() {
    let run = Sim::new(0).record(true).run(|| async {
        std::future::pending::<()>().await;
    });
    assert_eq!(run.outcome.verdict(), "panic");
    assert!(run.outcome.summary().contains("not a deadsim primitive"));
    // Its trace says so with a panic event of the task, and loads.
    let t = run.trace.unwrap();
    assert_eq!(t.events.last().map(|e| (e.task, e.kind)), Some((0, sim::trace::EventKind::Panic)));
    let json = t.to_json();
    assert_eq!(sim::trace::Trace::from_json(&json).unwrap().to_json(), json);
}

#[test]
fn sleep_jumps_the_clock_only_when_nothing_else_can_run() {
    let (outcome, log) = run_logged(0, |log| async move {
        let l = log.clone();
        spawn("sleeper", async move {
            sleep(1_000_000).await;
            l.borrow_mut().push(format!("woke at >= 1ms: {}", sim::time::now() >= 1_000_000));
        });
        let l = log.clone();
        spawn("busy", async move {
            for _ in 0..10 {
                sim::yield_now().await;
            }
            l.borrow_mut().push(format!("busy done before 1ms: {}", sim::time::now() < 1_000_000));
        });
    });
    assert_eq!(outcome, Outcome::Completed);
    assert_eq!(log, vec!["busy done before 1ms: true", "woke at >= 1ms: true"]);
}

#[test]
fn join_gives_each_task_its_result_and_unjoined_results_and_futures_are_dropped() {
    // Counts drops of what tasks return or hold, so a cell that leaks or
    // drops twice shows.
    struct Counted(Rc<RefCell<u32>>);
    impl Drop for Counted {
        fn drop(&mut self) {
            *self.0.borrow_mut() += 1;
        }
    }
    // An over-aligned future takes the unpooled path of the task storage.
    #[repr(align(128))]
    struct Wide(u64);
    let drops = Rc::new(RefCell::new(0u32));
    for seed in 0..50 {
        let d = drops.clone();
        let run = Sim::new(seed).run(move || async move {
            let words = spawn("words", async { vec!["a".to_string(), "b".to_string()] });
            let number = spawn("number", async {
                let w = Wide(41);
                sim::yield_now().await;
                w.0 + 1
            });
            // Made outside the tasks, so each exists once whether or not its task ran.
            let result = Counted(d.clone());
            spawn("unjoined", async move { result });
            let held = Counted(d.clone());
            // Blocked for ever in the background on a channel main could send on:
            // its future still holds a Counted when the run ends.
            let never: Chan<u8> = Chan::new("never", 0);
            never.declare_sender();
            spawn_background("parked", async move {
                let _held = held;
                never.recv().await;
            });
            assert_eq!(words.join().await, vec!["a", "b"]);
            assert_eq!(number.join().await, 42);
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
    assert_eq!(*drops.borrow(), 100, "each run drops one unjoined result and one parked future");
}

#[test]
fn a_join_handle_from_another_execution_is_refused() {
    thread_local! {
        static STASH: RefCell<Option<sim::JoinHandle<u32>>> = const { RefCell::new(None) };
    }
    let first = Sim::new(0).run(|| async {
        let h = spawn("t", async { 7u32 });
        STASH.with(|s| *s.borrow_mut() = Some(h));
    });
    assert_eq!(first.outcome, Outcome::Completed);
    let second = Sim::new(0).run(|| async {
        // Task 1 here returns a String: reading it as the old handle's u32 must not happen.
        spawn("other", async { String::from("not a u32") });
        let stale = STASH.with(|s| s.borrow_mut().take()).unwrap();
        stale.join().await;
    });
    match second.outcome {
        Outcome::Panic { message, .. } => assert!(message.contains("another execution"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_unlock_or_exit_dropped_before_its_first_poll_releases_as_its_guard_would() {
    // `drop(g.unlock())` is dropping the guard: the lock is free again, and
    // the next lock of the same task takes it instead of deadlocking on itself.
    for seed in 0..20 {
        let run = Sim::new(seed).run(|| async {
            let mu = Mutex::new("mu");
            let g = mu.lock().await;
            drop(g.unlock());
            let g = mu.lock().await;
            g.unlock().await;
            let m = Monitor::new("m");
            let g = m.enter().await;
            drop(g.exit());
            let other = spawn("other", async move {
                let g = m.enter().await;
                g.exit().await;
            });
            other.join().await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_sleep_to_the_end_of_time_neither_wraps_nor_overflows() {
    // Go's time.Sleep(math.MaxInt64): asleep for good. The deadline was
    // `clock + ns`, which wrapped (a release build woke the sleeper at once)
    // or overflowed (a debug build panicked inside the library). Now a
    // deadline ends at END_OF_TIME (Go's longest duration), and the steps
    // after it move the clock on from there.
    let run = Sim::new(0).record(true).run(|| async {
        let forever = spawn("forever", async {
            sleep(u64::MAX).await;
            sim::time::now()
        });
        sleep(1_000).await;
        assert!((1_000..2_000).contains(&sim::time::now()), "main woke at {}", sim::time::now());
        // Joined: nothing else can run, so the clock jumps to the deadline.
        let woke = forever.join().await;
        assert!((sim::time::END_OF_TIME..sim::time::END_OF_TIME + 1_000).contains(&woke), "{woke}");
        assert!(sim::time::now() > sim::time::END_OF_TIME);
    });
    assert_eq!(run.outcome, Outcome::Completed, "{}", run.outcome);
}
