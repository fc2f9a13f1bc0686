//! Go's `context`: `cancel()` is idempotent, a timeout cancels with
//! "context deadline exceeded", a goroutine leaked past its caller's
//! deadline is found, and a wait on `Done()` nobody is left to cancel is
//! found as the last canceller returns.

use sim::context::{self, CANCELED, DEADLINE_EXCEEDED};
use sim::sync::{select, Chan};
use sim::time::sleep;
use sim::{spawn, Outcome, Sim};

fn spawn_heartbeat() {
    sim::spawn_background("heartbeat", async {
        loop {
            sleep(1_000_000).await;
        }
    });
}

#[test]
fn cancel_may_be_called_by_several_tasks_any_number_of_times() {
    for seed in 0..200 {
        let run = Sim::new(seed).run(|| async {
            let (ctx, cancel) = context::with_cancel("req");
            for name in ["a", "b"] {
                let c = cancel.clone();
                let h = spawn(name, async move {
                    c.cancel().await;
                    c.cancel().await;
                });
                cancel.declare_for(h.id());
            }
            assert_eq!(ctx.done().recv().await, None);
            assert_eq!(ctx.err(), Some(CANCELED));
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_timeout_cancels_unless_a_cancel_comes_first() {
    for cancel_first in [false, true] {
        let run = Sim::new(0).run(move || async move {
            let (ctx, cancel) = context::with_timeout("req", 5_000);
            cancel.declare();
            if cancel_first {
                sleep(1_000).await;
                cancel.cancel().await;
            }
            ctx.done().recv().await;
            let want = if cancel_first { CANCELED } else { DEADLINE_EXCEEDED };
            assert_eq!(ctx.err(), Some(want));
            // Steps take virtual time too (100 ns each): woken after the
            // cancel at 1 µs, well before the timeout, or after the timeout.
            let now = sim::time::now();
            assert!(if cancel_first { (1_000..5_000).contains(&now) } else { now >= 5_000 }, "{now}");
            // The timer fires later, or has fired: the error stays.
            sleep(10_000).await;
            assert_eq!(ctx.err(), Some(want));
        });
        assert_eq!(run.outcome, Outcome::Completed, "cancelled first: {cancel_first}: {}", run.outcome);
    }
}

#[test]
fn a_worker_left_sending_after_its_caller_timed_out_is_blocked_for_good() {
    // The classic leak: the caller returns on ctx.Done(); the worker then
    // sends its result on an unbuffered channel nobody will read.
    for seed in 0..100 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let (ctx, cancel) = context::with_timeout("req", 1_000);
            cancel.declare();
            let result: Chan<u32> = Chan::new("result", 0);
            result.declare_receiver();
            let tx = result.clone();
            spawn("worker", async move {
                tx.declare_sender();
                sleep(2_000).await;
                tx.send(42).await;
            });
            let (mut got, mut done) = (result.recv_case(), ctx.done().recv_case());
            select(&mut [&mut got, &mut done], false).await;
            cancel.cancel().await;
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome));
        let text = d.to_string();
        assert!(
            text.contains(
                "\"worker\" (task 3): waiting to send on chan \"result\", and no task left that may receive from it or \
                 close it"
            ),
            "seed {seed}: {text}"
        );
        assert_eq!(d.running, ["heartbeat"], "seed {seed}: {d}");
    }
}

#[test]
fn a_wait_on_done_whose_cancellers_all_returned_is_found_as_the_last_returns() {
    for seed in 0..100 {
        let run = Sim::new(seed).max_steps(10_000).run(|| async {
            spawn_heartbeat();
            let (ctx, cancel) = context::with_cancel("req");
            let c = cancel.clone();
            let h = spawn("handler", async move {
                sim::yield_now().await;
                drop(c); // returns on an error path without cancel()
            });
            cancel.declare_for(h.id());
            ctx.done().recv().await;
        });
        let d = run.outcome.deadlock().unwrap_or_else(|| panic!("seed {seed}: {}", run.outcome));
        assert!(
            d.to_string().contains(
                "\"main\" (task 0): waiting to receive from chan \"req.Done()\", and no task left that may send on it or \
                 close it"
            ),
            "seed {seed}: {d}"
        );
        assert!(d.step < 100, "found as the handler returns, not at the step limit: {d}");
    }
}

#[test]
fn a_cancel_by_a_task_not_declared_is_a_model_error() {
    let run = Sim::new(0).run(|| async {
        let (ctx, cancel) = context::with_cancel("req");
        cancel.declare();
        let c = cancel.clone();
        spawn("stranger", async move { c.cancel().await }).join().await;
        ctx.done().recv().await;
    });
    match &run.outcome {
        Outcome::Panic { task, message, .. } => {
            assert_eq!(task, "stranger");
            assert!(message.contains("closes) channel \"req.Done()\", whose holders"), "{message}");
        }
        o => panic!("{o}"),
    }
}

#[test]
fn with_timeout_declares_its_timer_so_every_canceller_must_be_declared_on_every_seed() {
    // Go's `defer cancel()` from main, undeclared: with_timeout declared
    // its timer, so the cancellers are declared and main's cancel is a
    // model error, on every seed alike (the timer once declared itself at
    // its first step, and the panic depended on the schedule); declared,
    // the run completes.
    for declared in [false, true] {
        for seed in 0..50 {
            let run = Sim::new(seed).run(move || async move {
                let (ctx, cancel) = context::with_timeout("req", 1_000);
                if declared {
                    cancel.declare();
                }
                sim::yield_now().await;
                cancel.cancel().await;
                assert_eq!(ctx.err(), Some(CANCELED));
            });
            match (&run.outcome, declared) {
                (Outcome::Completed, true) => {}
                (Outcome::Panic { task, message, .. }, false) => {
                    assert_eq!(task, "main");
                    assert!(message.contains("closes) channel \"req.Done()\", whose holders"), "{message}");
                }
                (o, _) => panic!("declared {declared}, seed {seed}: {o}"),
            }
        }
    }
}
