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
            assert!(
                message.starts_with(
                    "sim: task 1 (\"stranger\") cancels context \"req\", whose cancellers were declared without it: \
                     declare every task that calls cancel(), when it starts (CancelFunc::declare"
                ),
                "{message}"
            );
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
    // Also when the deadline passed first and the cancel closes nothing (a
    // model writer's `WithTimeout(..); defer cancel()` passed on the seeds
    // where the timer fired first, 76 of 2000).
    for (declared, late) in [(false, false), (false, true), (true, false), (true, true)] {
        for seed in 0..50 {
            let run = Sim::new(seed).run(move || async move {
                let (ctx, cancel) = context::with_timeout("req", 1_000);
                if declared {
                    cancel.declare();
                }
                sim::yield_now().await;
                if late {
                    sim::time::sleep(5_000).await;
                }
                cancel.cancel().await;
                assert_eq!(ctx.err(), Some(if late { context::DEADLINE_EXCEEDED } else { CANCELED }));
            });
            match (&run.outcome, declared) {
                (Outcome::Completed, true) => {}
                (Outcome::Panic { task, message, .. }, false) => {
                    assert_eq!(task, "main");
                    assert!(message.contains("cancels context \"req\", whose cancellers were declared"), "{message}");
                }
                (o, _) => panic!("declared {declared}, late {late}, seed {seed}: {o}"),
            }
        }
    }
}

#[test]
fn a_child_is_cancelled_with_its_parent_and_takes_its_error() {
    // Go's WithCancel(parent): the server's shutdown ends every request,
    // and a request's grandchild; a request's own cancel ends no other.
    for seed in 0..50 {
        let run = Sim::new(seed).run(|| async {
            let (server, shutdown) = context::with_timeout("server", 1_000);
            shutdown.declare();
            let (req1, cancel1) = server.with_cancel("req1");
            let (req2, _cancel2) = server.with_cancel("req2");
            let (call, _) = req2.with_cancel("call");
            cancel1.declare();
            cancel1.cancel().await;
            assert_eq!((req1.err(), req2.err(), server.err()), (Some(CANCELED), None, None));
            let waiter = spawn("handler", async move {
                call.done().recv().await;
                call.err()
            });
            // The deadline passes: every open descendant ends with its error.
            assert_eq!(waiter.join().await, Some(context::DEADLINE_EXCEEDED));
            assert_eq!(req2.err(), Some(context::DEADLINE_EXCEEDED));
            assert_eq!(req1.err(), Some(CANCELED), "a cancelled child keeps its own error");
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_childs_cancellers_are_its_parents_declared_before_or_after_it_was_made() {
    // main makes the child, then declares a closer of the parent: that task
    // may cancel the child too (no undeclared-canceller panic), and while it
    // runs a wait on the child's Done() is no deadlock. Where it returns
    // without cancelling, the wait is found as it returns: main, declared
    // too, is the one canceller left, and it waits.
    for cancels in [true, false] {
        for seed in 0..50 {
            let run = Sim::new(seed).max_steps(10_000).run(move || async move {
                spawn_heartbeat();
                let (parent, cancel) = context::with_cancel("server");
                cancel.declare();
                let (child, _child_cancel) = parent.with_cancel("req");
                let c = cancel.clone();
                let h = spawn("signals", async move {
                    sim::yield_now().await;
                    if cancels {
                        c.cancel().await;
                    }
                });
                cancel.declare_for(h.id());
                child.done().recv().await;
            });
            match run.outcome.deadlock() {
                Some(d) => {
                    assert!(!cancels, "seed {seed}: {d}");
                    let names: Vec<&str> = d.cycle.iter().chain(&d.behind).map(|b| b.name.as_str()).collect();
                    assert_eq!(names, ["main"], "seed {seed}: {d}");
                    assert!(d.step < 100, "found as \"signals\" returns, not at the step limit: {d}");
                    let text = d.to_string();
                    assert!(
                        text.contains(
                            "\"main\" (task 0): waiting to receive from chan \"req.Done()\", and no task but itself \
                             may send on it or close it, which it cannot while it waits"
                        ),
                        "seed {seed}: {text}"
                    );
                }
                None => assert!(cancels && run.outcome == Outcome::Completed, "seed {seed}: {}", run.outcome),
            }
        }
    }
}

#[test]
fn a_childs_cancellers_kept_under_an_undeclared_parent_count_once_the_parents_are_declared() {
    // A model writer's three cases, each once a false deadlock or a panic:
    // the parent's cancellers declared after a WithTimeout child was made
    // (the child's timer, then undeclared, was left out: "no task left" at
    // step 3 while it ran); after a child whose cancel a task was given and
    // declared (it panicked, as a child of an undeclared parent); and a
    // helper that makes a child and declares its cancel, under a parent
    // never declared (it panicked).
    for case in 0..3 {
        for seed in 0..30 {
            let run = Sim::new(seed).max_steps(10_000).run(move || async move {
                spawn_heartbeat();
                let (parent, cancel) = context::with_cancel("p");
                match case {
                    0 => {
                        let (child, _c) = parent.with_timeout("c", 1_000);
                        cancel.declare();
                        child.done().recv().await;
                        assert_eq!(child.err(), Some(DEADLINE_EXCEEDED));
                    }
                    1 => {
                        let (child, child_cancel) = parent.with_cancel("c");
                        let cc = child_cancel.clone();
                        let h = spawn("stopper", async move {
                            sleep(500).await;
                            cc.cancel().await;
                        });
                        child_cancel.declare_for(h.id());
                        cancel.declare();
                        child.done().recv().await;
                        assert_eq!(child.err(), Some(CANCELED));
                    }
                    _ => {
                        let p = parent.clone();
                        spawn("helper", async move {
                            let (rpc, cancel) = p.with_timeout("rpc", 1_000);
                            cancel.declare();
                            cancel.cancel().await;
                            assert_eq!(rpc.err(), Some(CANCELED));
                        })
                        .join()
                        .await;
                    }
                }
            });
            assert_eq!(run.outcome, Outcome::Completed, "case {case}, seed {seed}");
        }
    }
}

#[test]
fn a_child_of_a_cancelled_context_is_cancelled_at_once_and_background_never_is() {
    let run = Sim::new(0).run(|| async {
        let (parent, cancel) = context::with_cancel("server");
        cancel.cancel().await;
        let (child, child_cancel) = parent.with_cancel("req");
        assert_eq!(child.err(), Some(CANCELED));
        child.done().recv().await;
        child_cancel.cancel().await; // nothing left to do, as in Go
                                     // Background's Done() is Go's nil channel: a wait on it never ends.
        context::Context::background().done().recv().await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    assert!(d.global, "{d}");
    assert!(
        d.to_string().contains(
            "\"main\" (task 0): waiting to receive from chan \"context.Background().Done()\", and no task left that \
             may send on it or close it"
        ),
        "{d}"
    );
}

#[test]
fn a_child_of_a_cancelled_parent_has_its_own_closed_done_on_every_seed() {
    // A worker's WithCancel(server) and `defer cancel()`, before or after
    // the server shut down: after, the child is cancelled as it is made, on
    // its own channel; its declarations and its cancel never touch the
    // parent's (they once did, and 30 of 40 seeds panicked). Its cancellers
    // are the server's either way, so the worker must declare itself on
    // every seed alike.
    for declares in [true, false] {
        for seed in 0..40 {
            let run = Sim::new(seed).run(move || async move {
                let (server, shutdown) = context::with_cancel("server");
                shutdown.declare();
                let s = server.clone();
                let h = spawn("worker", async move {
                    sim::yield_now().await;
                    let (req, cancel) = s.with_cancel("req");
                    if declares {
                        cancel.declare();
                    }
                    cancel.cancel().await;
                    req.done().recv().await;
                    req.err()
                });
                shutdown.cancel().await;
                assert!(h.join().await.is_some());
            });
            match &run.outcome {
                Outcome::Completed => assert!(declares, "seed {seed}"),
                Outcome::Panic { task, message, .. } => {
                    assert!(!declares, "seed {seed}: {message}");
                    assert_eq!(task, "worker");
                    assert!(message.contains("cancels context \"req\", whose cancellers were declared"), "{message}");
                }
                o => panic!("declares {declares}, seed {seed}: {o}"),
            }
        }
    }
}

#[test]
fn a_timeout_made_from_a_context_anyone_may_cancel_works_and_its_timer_is_not_declared() {
    let run = Sim::new(0).run(|| async {
        let (parent, _cancel) = context::with_cancel("server");
        let (child, _c) = parent.with_timeout("req", 1_000);
        child.done().recv().await;
        assert_eq!(child.err(), Some(DEADLINE_EXCEEDED));
        assert_eq!(parent.err(), None);
    });
    assert_eq!(run.outcome, Outcome::Completed);
}

#[test]
fn a_child_cancelled_by_itself_leaves_its_parent_and_contexts_add_no_background_channel() {
    // Go's removeChild: 50 requests, each cancelled by its own cancel; the
    // server's shutdown then closes its own Done() in one step, not 51.
    let run = Sim::new(0).record(true).run(|| async {
        let (server, shutdown) = context::with_cancel("server");
        for _ in 0..50 {
            let (_req, cancel) = server.with_cancel("req");
            cancel.cancel().await;
        }
        let t = sim::time::now();
        shutdown.cancel().await;
        assert_eq!(sim::time::now() - t, 100, "one step");
        let _ = context::with_timeout("b", 10);
    });
    assert_eq!(run.outcome, Outcome::Completed);
    let t = run.trace.unwrap();
    let names: Vec<&str> = t.resources.iter().map(|r| r.name.as_str()).filter(|n| !n.starts_with("req")).collect();
    assert_eq!(names, ["server.Done()", "b.Done()"]);
}

#[test]
fn every_child_is_done_once_its_parents_cancel_returns() {
    // A handler's own cancel of its request racing the server's shutdown:
    // the request once left the server's list before it was closed, and a
    // shutdown in between returned with it open (77 of 300 seeds).
    for seed in 0..300 {
        let run = Sim::new(seed).run(|| async {
            let (server, shutdown) = context::with_cancel("server");
            let (req, cancel) = server.with_cancel("req");
            spawn("handler", async move { cancel.cancel().await });
            shutdown.cancel().await;
            sim::check(req.err().is_some(), "the shutdown returned with a request open");
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn every_grandchild_is_done_once_the_cancel_above_it_returns() {
    // The handler's own cancel of req closes req, then yields before sub:
    // the server's cancel, finding req closed, once passed sub by and
    // returned with it open (65 of 300 seeds). Go's parent waits on the
    // child's lock until its children are closed too.
    for seed in 0..300 {
        let run = Sim::new(seed).run(|| async {
            let (server, shutdown) = context::with_cancel("server");
            let (req, cancel) = server.with_cancel("req");
            let (sub, _c) = req.with_cancel("sub");
            spawn("handler", async move { cancel.cancel().await });
            shutdown.cancel().await;
            sim::check(req.err().is_some() && sub.err().is_some(), "open after the server's cancel returned");
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_canceller_left_out_of_the_kept_ones_is_told_on_every_seed() {
    // "t" is kept as the child's canceller while the root is undeclared;
    // "u", never declared, cancels too. Whether u's cancel came before or
    // after the root's declaration once decided if it was caught (23 of
    // 200 seeds); now it is on every one.
    for seed in 0..100 {
        let run = Sim::new(seed).run(|| async {
            let (root, rc) = context::with_cancel("root");
            let (child, cc) = root.with_cancel("child");
            let c2 = cc.clone();
            let t = spawn("t", async move { c2.cancel().await });
            cc.declare_for(t.id());
            let c3 = cc.clone();
            spawn("u", async move { c3.cancel().await });
            sleep(1).await;
            rc.declare();
            child.done().recv().await;
        });
        match &run.outcome {
            Outcome::Panic { task, message, .. } => {
                assert_eq!(task, "u", "seed {seed}");
                assert!(message.contains("cancels context \"child\", whose cancellers were declared"), "{message}");
            }
            o => panic!("seed {seed}: {o}"),
        }
    }
}

#[test]
fn a_second_cancel_of_a_cancelled_tree_is_one_step() {
    let run = Sim::new(0).run(|| async {
        let (server, shutdown) = context::with_cancel("server");
        let reqs: Vec<_> = (0..10).map(|_| server.with_cancel("req")).collect();
        shutdown.cancel().await;
        assert!(reqs.iter().all(|(r, _)| r.err() == Some(CANCELED)));
        let t = sim::time::now();
        shutdown.cancel().await;
        assert_eq!(sim::time::now() - t, 100, "the settled tree is not walked again");
    });
    assert_eq!(run.outcome, Outcome::Completed);
}

/// The events of the task named `name`: kind and step.
fn events_of(run: &sim::Run, name: &str) -> Vec<(sim::trace::EventKind, u64)> {
    let trace = run.trace.as_ref().expect("recorded");
    let id = trace.tasks.iter().find(|t| t.name == name).expect("the task").id;
    trace.events.iter().filter(|e| e.task == id).map(|e| (e.kind, e.step)).collect()
}

#[test]
fn a_cancel_stops_the_timer_of_its_context_and_of_those_made_from_it() {
    use sim::trace::EventKind::{Finish, Sleep, Spawn};
    // Go's timerCtx.cancel stops its timer: the timer task ends in the
    // cancel's step, asleep or not started yet, and a wait nobody serves is
    // then found as it blocks, not at the deadline of a timer that no
    // longer cancels anything.
    for (case, started) in [("own", true), ("own, at once", false), ("parent's", true)] {
        let run = Sim::new(0).record(true).run(move || async move {
            let (parent, cancel_parent) = context::with_cancel("server");
            cancel_parent.declare();
            let (ctx, cancel) = parent.with_timeout("req", 5_000_000_000);
            cancel.declare();
            if started {
                // The timer's task runs and goes to sleep.
                sleep(1_000).await;
            }
            if case == "parent's" {
                cancel_parent.cancel().await;
            } else {
                cancel.cancel().await;
            }
            assert_eq!(ctx.err(), Some(CANCELED));
            let reply: Chan<()> = Chan::new("reply", 0);
            reply.recv().await;
        });
        assert!(matches!(run.outcome, Outcome::Deadlock(_)), "{case}: {}", run.outcome);
        assert!(run.time_ns < 1_000_000, "{case}: found at {} ns", run.time_ns);
        let timer = events_of(&run, "req timer");
        let kinds: Vec<_> = timer.iter().map(|e| e.0).collect();
        let want = if started { vec![Spawn, Sleep, Finish] } else { vec![Spawn, Finish] };
        assert_eq!(kinds, want, "{case}: {timer:?}");
        // Finished in the step of main's close of the context's channel.
        let trace = run.trace.as_ref().unwrap();
        let close = trace.events.iter().rfind(|e| e.kind == sim::trace::EventKind::Close).unwrap();
        assert_eq!(timer.last().unwrap().1, close.step, "{case}");
        // Named as stopped by main, and read back by the trace's reader.
        let finish = trace.events.iter().rfind(|e| e.kind == Finish).unwrap();
        assert_eq!(finish.peer, Some(0), "{case}");
        if let Err(e) = sim::trace::Trace::from_json(&trace.to_json()) {
            panic!("{case}: the trace does not read back: {e}");
        }
    }
}

#[test]
fn a_timer_that_fired_is_not_stopped_and_its_error_stays() {
    // The deadline passes while main sleeps: the timer cancels, and main's
    // cancel after it does nothing (Go's Stop on a fired timer).
    let run = Sim::new(0).record(true).run(|| async {
        let (ctx, cancel) = context::with_timeout("req", 1_000);
        cancel.declare();
        sleep(10_000).await;
        cancel.cancel().await;
        assert_eq!(ctx.err(), Some(DEADLINE_EXCEEDED));
    });
    assert_eq!(run.outcome, Outcome::Completed, "{}", run.outcome);
    let timer = events_of(&run, "req timer");
    assert!(timer.iter().any(|e| e.0 == sim::trace::EventKind::Wake), "{timer:?}");
}

#[test]
fn a_timeout_of_zero_is_cancelled_as_it_is_made_and_one_of_u64_max_never_is() {
    // Go's WithDeadline cancels at once a context whose deadline has
    // passed: Err() is DeadlineExceeded and Done() closed before any step.
    // A parent's cancel that came first gives its own error.
    for parent_cancelled in [false, true] {
        let run = Sim::new(0).record(true).run(move || async move {
            let (parent, cancel_parent) = context::with_cancel("server");
            cancel_parent.declare();
            if parent_cancelled {
                cancel_parent.cancel().await;
            }
            let (ctx, cancel) = parent.with_timeout("req", 0);
            cancel.declare();
            let want = if parent_cancelled { CANCELED } else { DEADLINE_EXCEEDED };
            assert_eq!(ctx.err(), Some(want));
            let mut done = ctx.done().recv_case();
            assert_eq!(select(&mut [&mut done], true).await, Some(0), "Done() is closed");
            let (top, _c) = context::with_timeout("top", 0);
            assert_eq!(top.err(), Some(DEADLINE_EXCEEDED));
            // The deadline at the end of time never comes, and does not
            // wrap round to now.
            let (late, cancel_late) = context::with_timeout("late", u64::MAX);
            cancel_late.declare();
            sleep(1_000).await;
            assert_eq!(late.err(), None);
            cancel_late.cancel().await;
        });
        assert_eq!(run.outcome, Outcome::Completed, "parent cancelled: {parent_cancelled}: {}", run.outcome);
        // No timer task was started for either: only "late"'s.
        let tasks: Vec<String> = run.trace.unwrap().tasks.into_iter().map(|t| t.name).collect();
        assert_eq!(tasks, ["main", "late timer"], "parent cancelled: {parent_cancelled}");
    }
}
