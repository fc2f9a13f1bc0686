//! Go's `sync.Cond`: `wait` lets go of its lock and takes it back, no
//! signal falls between the unlock and the wait, `signal` wakes the task
//! waiting longest, and a `signal` where a `broadcast` was needed leaves a
//! waiter blocked for good, found as the last signaler returns.

use std::cell::RefCell;
use std::rc::Rc;

use sim::sync::{Cond, Mutex};
use sim::time::sleep;
use sim::{spawn, Outcome, Sim};

/// `n` waiters `for !ready { c.Wait() }`; a setter sets `ready` and wakes
/// them with `broadcast`, or (the bug) one `signal`.
fn waiters(seed: u64, n: usize, broadcast: bool) -> Outcome {
    Sim::new(seed)
        .max_steps(100_000)
        .run(move || async move {
            sim::spawn_background("heartbeat", async {
                loop {
                    sleep(1_000_000).await;
                }
            });
            let (mu, cond, ready) = (Mutex::new("mu"), Cond::new("cond"), Rc::new(RefCell::new(false)));
            for i in 0..n {
                let r = ready.clone();
                spawn(format!("waiter-{i}"), async move {
                    let mut g = mu.lock().await;
                    while !*r.borrow() {
                        g = cond.wait(g).await;
                    }
                    g.unlock().await;
                });
            }
            let r = ready.clone();
            spawn("setter", async move {
                cond.declare_signaler();
                sim::yield_now().await;
                let g = mu.lock().await;
                *r.borrow_mut() = true;
                g.unlock().await;
                if broadcast {
                    cond.broadcast().await;
                } else {
                    cond.signal().await;
                }
            });
        })
        .outcome
}

#[test]
fn broadcast_wakes_every_waiter_and_no_signal_is_lost_between_unlock_and_wait() {
    for seed in 0..300 {
        assert_eq!(waiters(seed, 3, true), Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_signal_where_a_broadcast_was_needed_leaves_a_waiter_blocked_for_good() {
    let mut found = 0;
    for seed in 0..300 {
        let outcome = waiters(seed, 2, false);
        let Some(d) = outcome.deadlock() else {
            // Both waiters saw ready before waiting.
            assert_eq!(outcome, Outcome::Completed, "seed {seed}");
            continue;
        };
        let text = d.to_string();
        assert!(
            text.contains("waiting in Wait on Cond \"cond\", and no task left that may signal it"),
            "seed {seed}: {text}"
        );
        assert!(text.contains("at sync.(*Cond).Wait"), "seed {seed}: {text}");
        assert!(text.contains("Last notify of \"cond\": Signal() at step "), "seed {seed}: {text}");
        // Found as the setter returns, beside the heartbeat (and the woken waiter).
        assert!(d.running.contains(&"heartbeat".to_string()), "seed {seed}: {d}");
        found += 1;
    }
    assert!(found > 100, "{found} of 300");
}

#[test]
fn signal_wakes_the_task_waiting_longest() {
    for seed in 0..200 {
        let log = Rc::new(RefCell::new(Vec::<String>::new()));
        let l = log.clone();
        let run = Sim::new(seed).run(move || async move {
            let (mu, cond) = (Mutex::new("mu"), Cond::new("cond"));
            for name in ["a", "b"] {
                let l = l.clone();
                spawn(name, async move {
                    let g = mu.lock().await;
                    // Logged under mu: the order they join the wait list.
                    l.borrow_mut().push(format!("{name} waits"));
                    let g = cond.wait(g).await;
                    l.borrow_mut().push(format!("{name} woke"));
                    g.unlock().await;
                });
            }
            // Both waiting (each let go of mu only inside wait), then one
            // signal at a time.
            loop {
                let g = mu.lock().await;
                let n = l.borrow().len();
                g.unlock().await;
                if n == 2 {
                    break;
                }
                sim::yield_now().await;
            }
            cond.signal().await;
            while l.borrow().len() < 3 {
                sim::yield_now().await;
            }
            cond.signal().await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
        let log = log.borrow();
        let first = log[0].split(' ').next().unwrap();
        assert_eq!(log[2], format!("{first} woke"), "seed {seed}: {log:?}");
    }
}

#[test]
fn a_cond_wait_is_kept_in_the_trace_and_only_a_cond_wait_may_say_so() {
    // The waiter waits holding a second lock the signaler needs first: a
    // cycle; or the signal came before the wait, and was lost.
    let (mut found, mut lost) = (0, 0);
    for seed in 0..50 {
        let run = Sim::new(seed).record(true).run(|| async {
            let (mu, other, cond) = (Mutex::new("mu"), Mutex::new("other"), Cond::new("cond"));
            spawn("signaler", async move {
                cond.declare_signaler();
                let g = other.lock().await;
                cond.signal().await;
                g.unlock().await;
            });
            let held = other.lock().await;
            let g = mu.lock().await;
            let g = cond.wait(g).await;
            g.unlock().await;
            held.unlock().await;
        });
        let Some(d) = run.outcome.deadlock() else { continue };
        let text = d.to_string();
        if d.cycle.is_empty() {
            assert!(text.contains("Signal() at step "), "seed {seed}: {text}");
            assert!(text.contains(", with no task waiting: it was lost"), "seed {seed}: {text}");
            lost += 1;
            continue;
        }
        assert!(
            text.contains(
                "\"main\" (task 0): waiting in Wait on Cond \"cond\", which any of these could signal: \"signaler\""
            ),
            "seed {seed}: {text}"
        );
        assert!(text.contains("Cond \"cond\" was never signalled."), "seed {seed}: {text}");
        let trace = run.trace.unwrap();
        let json = trace.to_json();
        assert!(json.contains("\"cond\":true"), "seed {seed}");
        let again = sim::trace::Trace::from_json(&json).unwrap();
        assert_eq!(again.deadlock, trace.deadlock);
        let bad = json.replacen("\"op\":\"lock\",", "\"cond\":true,\"op\":\"lock\",", 1);
        assert_ne!(bad, json);
        let err = sim::trace::Trace::from_json(&bad).unwrap_err().to_string();
        assert!(err.contains("cond: true, but the task is not in a Wait on a Cond"), "{err}");
        found += 1;
    }
    assert!(found > 10 && lost > 0, "{found} cycles, {lost} lost signals of 50");
}

#[test]
fn a_signal_by_a_task_not_declared_names_the_cond_declarations() {
    let run = Sim::new(0).run(|| async {
        let cond = Cond::new("cond");
        cond.declare_signaler();
        spawn("stranger", async move { cond.signal().await }).join().await;
    });
    match &run.outcome {
        Outcome::Panic { task, message, .. } => {
            assert_eq!(task, "stranger");
            assert!(message.contains("signals Cond \"cond\", whose signalers were declared without it"), "{message}");
            assert!(message.contains("(declare_signaler, declare_signaler_for)"), "{message}");
        }
        o => panic!("{o}"),
    }
}
