//! Go's `time.Ticker`: ticks every period, drops a tick nobody took, and
//! after `Stop` sends no more (a receive then waits for good).

use sim::time::{now, sleep, Ticker};
use sim::{Outcome, Sim};

#[test]
fn ticks_come_every_period_and_one_not_taken_drops_the_next() {
    for seed in 0..20 {
        let run = Sim::new(seed).step_ns(0).run(|| async {
            let ticker = Ticker::new("ticker", 1_000);
            let c = ticker.c();
            assert_eq!((c.recv().await, now()), (Some(1_000), 1_000));
            assert_eq!(c.recv().await, Some(2_000));
            // Asleep for three and a half periods: the 3,000 tick waits in
            // the channel, those at 4,000 and 5,000 are dropped.
            sleep(3_500).await;
            assert_eq!(c.recv().await, Some(3_000));
            assert_eq!((c.recv().await, now()), (Some(6_000), 6_000));
            ticker.stop();
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_receive_after_stop_waits_for_good() {
    let run = Sim::new(0).step_ns(0).run(|| async {
        let ticker = Ticker::new("heartbeat", 1_000);
        ticker.c().recv().await;
        ticker.stop();
        ticker.c().recv().await; // Go: Stop does not close C
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    assert!(
        d.to_string().contains(
            "\"main\" (task 0): waiting to receive from chan \"heartbeat.C\", and no task left that may send on it \
             or close it"
        ),
        "{d}"
    );
    // Found at the stop, which ends the ticking task where it sleeps (Go
    // takes the timer off its heap), not at the next tick's time.
    assert_eq!(d.time, 1_000, "{d}");
}

#[test]
fn no_tick_is_sent_after_stop_returns() {
    // A stop that lands while a tick is due: the ticker once looked at the
    // flag, yielded, then sent (46 of 200 seeds sent one after stop).
    for seed in 0..200 {
        let run = Sim::new(seed).step_ns(0).run(|| async {
            let ticker = Ticker::new("t", 1_000);
            let t = ticker.clone();
            let stopper = sim::spawn("stopper", async move {
                sleep(1_000).await;
                t.stop();
                t.c().len()
            });
            let at_stop = stopper.join().await;
            sleep(10_000).await;
            sim::check(ticker.c().len() == at_stop, "a tick was sent after stop() returned");
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

/// The trace of `run` reads back (its reader checks every event).
fn reads_back(run: &sim::Run) {
    let json = run.trace.as_ref().expect("recorded").to_json();
    if let Err(e) = sim::trace::Trace::from_json(&json) {
        panic!("the trace does not read back: {e}\n{}", run.outcome);
    }
}

#[test]
fn a_stop_ends_the_ticking_task_in_a_trace_that_reads_back() {
    // The ticker's finish falls in the stopping task's step, naming it as
    // its peer, asleep or never started; the reader refused it.
    for sleep_first in [true, false] {
        let run = Sim::new(0).record(true).run(move || async move {
            let ticker = Ticker::new("heartbeat", 1_000);
            if sleep_first {
                ticker.c().recv().await;
            }
            ticker.stop();
            sleep(5_000).await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "{}", run.outcome);
        reads_back(&run);
    }
}

#[test]
fn a_stop_in_a_drop_guard_at_the_runs_end_does_nothing() {
    // Go's `defer ticker.Stop()` as a drop guard, in a background loop
    // the run ends without: dropped at teardown, with no run to end a
    // task in (it panicked: "a deadsim primitive was used outside a simulation").
    struct StopOnDrop(Ticker);
    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.stop();
        }
    }
    let run = Sim::new(0).run(|| async {
        sim::spawn_background("poller", async {
            let t = StopOnDrop(Ticker::new("tick", 1_000));
            loop {
                t.0.c().recv().await;
            }
        });
        sleep(2_500).await;
    });
    assert_eq!(run.outcome, Outcome::Completed);
}

#[test]
fn a_stop_in_the_first_step_of_the_last_task_to_start_ends_no_run_early() {
    // That step asked for the waits to be judged after it; the stop's own
    // ask saved the lowered limit as the real one, and 28 of 200 seeds
    // ended in a step limit after 5 or 6 steps.
    for seed in 0..200 {
        let run = Sim::new(seed).run(|| async {
            let m = sim::sync::Monitor::new("m");
            m.declare_notifier();
            sim::spawn("x", async {
                let t = Ticker::new("tk", 1_000);
                t.stop();
            });
            sim::spawn("w", async move {
                let g = m.enter().await;
                g.wait().await;
                g.exit().await;
            });
            sleep(1_000).await;
            let g = m.enter().await;
            g.notify();
            g.exit().await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}: {}", run.outcome);
    }
}

#[test]
fn a_deadlock_a_stop_leaves_is_judged_once_the_step_is_over() {
    // The stop ends the receiver's only sender; the step goes on (a spawn).
    // Judged inside stop(), the report said "late" was not running, and
    // the trace did not read back.
    let run = Sim::new(0).record(true).run(|| async {
        let t = Ticker::new("tick", 1_000);
        let c = t.c().clone();
        sim::spawn("w", async move { while c.recv().await.is_some() {} });
        sleep(1_500).await;
        t.stop();
        sim::spawn("late", async {});
        sleep(1_000).await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    // Judged after the stop's step, which spawned "late": once that one
    // has run (it could have declared itself a sender of "tick.C").
    let trace = run.trace.as_ref().unwrap();
    let stopped = trace.events.iter().find(|e| e.kind == sim::trace::EventKind::Finish && e.task == 1).unwrap();
    assert_eq!(stopped.peer, Some(0), "main stopped it");
    assert!(d.step > stopped.step, "judged inside the stop's step: {d}");
    let text = d.to_string();
    assert!(text.contains("\"w\" (task 2): waiting to receive from chan \"tick.C\", and no task left"), "{text}");
    reads_back(&run);
}

#[test]
fn the_reader_refuses_a_stop_of_a_task_that_is_no_longer_asleep() {
    // A finish in another task's step is a stopped timer's: asleep, or
    // never run. One woken from its sleep cannot be ended there.
    let run = Sim::new(0).record(true).run(|| async {
        sim::spawn_background("w", async {
            sleep(100).await;
            loop {
                sim::yield_now().await;
            }
        });
        sleep(150).await;
        for _ in 0..5 {
            sim::yield_now().await;
        }
    });
    let trace = run.trace.unwrap();
    let woke = trace.events.iter().find(|e| e.task == 1 && e.kind == sim::trace::EventKind::Wake).expect("w woke");
    // A step of main's after w woke (w never sleeps again).
    let main_step = (woke.step + 1..=trace.schedule.len() as u64)
        .find(|&k| trace.schedule[k as usize - 1] == 0)
        .expect("main runs after w woke");
    let mut v: serde_json::Value = serde_json::from_str(&trace.to_json()).unwrap();
    let events = v["events"].as_array_mut().unwrap();
    let at = events.iter().position(|e| e["step"].as_u64().unwrap() > main_step).unwrap_or(events.len());
    let time = events[at - 1]["time"].clone();
    events.insert(at, serde_json::json!({"step": main_step, "time": time, "task": 1, "kind": "finish", "peer": 0}));
    let err = sim::trace::Trace::from_json(&v.to_string()).unwrap_err().to_string();
    assert!(err.contains("a finish event of task 1 with peer 0"), "{err}");
}
