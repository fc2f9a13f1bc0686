//! A model's misuse of a primitive (Go's "send on closed channel", Java's
//! IllegalMonitorStateException, a declaration left out) is reported at the
//! model's line that called the primitive, as Go's and Java's stack traces
//! report it, not at a line of the library.

use std::cell::Cell;

use sim::context;
use sim::sync::{select, Chan, Cond, Monitor, Mutex, Pipe, WaitGroup};
use sim::{spawn, Outcome, Sim};

thread_local! {
    /// The line of the call that should be cited, set by the model as it runs.
    static LINE: Cell<u32> = const { Cell::new(0) };
}

/// Marks this line as the one the panic should cite, then evaluates `op`.
macro_rules! cited {
    ($op:expr) => {{
        LINE.with(|l| l.set(line!()));
        $op
    }};
}

/// Runs `model` and checks that it panics in `task` with `message`, cited
/// at the line `cited!` marked last.
fn assert_cited<F, Fut>(model: F, task: &str, message: &str)
where
    F: FnOnce() -> Fut + 'static,
    Fut: std::future::Future<Output = ()> + 'static,
{
    LINE.with(|l| l.set(0));
    let run = Sim::new(0).run(model);
    let Outcome::Panic { task: t, message: m, .. } = &run.outcome else { panic!("{}", run.outcome.summary()) };
    let line = LINE.with(|l| l.get());
    assert_ne!(line, 0, "the model never reached its cited line");
    assert_eq!(t, task);
    assert!(m.starts_with(message), "{m}");
    assert!(m.ends_with(&format!(" (at {}:{line})", file!())), "{m}");
}

#[test]
fn a_send_on_a_closed_channel_cites_the_send() {
    assert_cited(
        || async {
            let ch: Chan<u32> = Chan::new("ch", 1);
            ch.close().await;
            cited!(ch.send(1)).await;
        },
        "main",
        "send on closed channel",
    );
}

#[test]
fn a_parked_send_woken_by_the_close_cites_the_send() {
    assert_cited(
        || async {
            let ch: Chan<u32> = Chan::new("ch", 0);
            let tx = ch.clone();
            let h = spawn("sender", async move {
                cited!(tx.send(1)).await;
            });
            sim::time::sleep(1_000).await;
            ch.close().await;
            h.join().await;
        },
        "sender",
        "send on closed channel",
    );
}

#[test]
fn a_close_of_a_closed_channel_cites_the_second_close() {
    assert_cited(
        || async {
            let ch: Chan<u32> = Chan::new("ch", 0);
            ch.close().await;
            cited!(ch.close()).await;
        },
        "main",
        "close of closed channel",
    );
}

#[test]
fn a_select_that_sends_on_a_closed_channel_cites_the_select() {
    assert_cited(
        || async {
            let ch: Chan<u32> = Chan::new("ch", 1);
            ch.close().await;
            let mut send = ch.send_case(1);
            cited!(select(&mut [&mut send], false)).await;
        },
        "main",
        "send on closed channel",
    );
}

#[test]
fn an_undeclared_sender_cites_its_send() {
    assert_cited(
        || async {
            let ch: Chan<u32> = Chan::new("ch", 1);
            ch.declare_sender(); // main only
            let tx = ch.clone();
            spawn("sender", async move {
                cited!(tx.send(1)).await;
            })
            .join()
            .await;
        },
        "sender",
        "sim: task 1 (\"sender\") sends on (or closes) channel \"ch\"",
    );
}

#[test]
fn an_undeclared_pipe_writer_cites_its_write() {
    assert_cited(
        || async {
            let p: Pipe<()> = Pipe::new("p", 4);
            p.declare_reader();
            p.declare_writer();
            let q = p.clone();
            spawn("writer", async move {
                let _ = cited!(q.write(1, None)).await;
            })
            .join()
            .await;
        },
        "writer",
        "sim: task 1 (\"writer\") writes to",
    );
}

#[test]
fn a_late_declaration_cites_the_declaration() {
    assert_cited(
        || async {
            let ch: Chan<u32> = Chan::new("ch", 1);
            ch.declare_sender();
            let h = spawn("late", async move {
                sim::time::sleep(10).await;
                cited!(ch.declare_sender());
            });
            h.join().await;
        },
        "late",
        "sim: task 1 (\"late\") declared itself a sender on channel \"ch\" after its first scheduling point",
    );
}

#[test]
fn a_done_too_many_cites_the_done() {
    assert_cited(
        || async {
            let wg = WaitGroup::new("wg");
            wg.add(1).await;
            wg.done().await;
            cited!(wg.done()).await;
        },
        "main",
        "sync: negative WaitGroup counter",
    );
}

#[test]
fn an_undeclared_signaler_cites_the_signal() {
    assert_cited(
        || async {
            let cond = Cond::new("cond");
            cond.declare_signaler_for(0);
            let h = spawn("signaler", async move {
                cited!(cond.signal()).await;
            });
            h.join().await;
        },
        "signaler",
        "sim: task 1 (\"signaler\") signals Cond \"cond\"",
    );
}

#[test]
fn a_monitor_left_by_a_task_that_does_not_own_it_cites_the_exit() {
    assert_cited(
        || async {
            let m = Monitor::new("m");
            let g = m.enter().await;
            spawn("other", async move {
                cited!(g.exit()).await;
            })
            .join()
            .await;
        },
        "other",
        "IllegalMonitorStateException: monitor exit by a task that does not own it",
    );
}

#[test]
fn a_notify_by_a_task_that_does_not_own_the_monitor_cites_the_notify() {
    assert_cited(
        || async {
            let m = Monitor::new("m");
            let g = m.enter().await;
            spawn("other", async move {
                cited!(g.notify_all());
                std::mem::forget(g);
            })
            .join()
            .await;
        },
        "other",
        "IllegalMonitorStateException: notifyAll by a task that does not own the monitor",
    );
}

#[test]
fn an_undeclared_cancel_cites_the_cancel() {
    assert_cited(
        || async {
            let (_ctx, cancel) = context::with_cancel("ctx");
            cancel.declare();
            spawn("canceller", async move {
                cited!(cancel.cancel()).await;
            })
            .join()
            .await;
        },
        "canceller",
        "sim: task 1 (\"canceller\") cancels context \"ctx\"",
    );
}

#[test]
fn a_panic_of_the_model_itself_still_cites_its_own_line() {
    assert_cited(
        || async {
            let mu = Mutex::new("mu");
            let g = mu.lock().await;
            g.unlock().await;
            cited!(panic!("the model's own"));
        },
        "main",
        "the model's own",
    );
}

#[test]
fn an_undeclared_done_cites_the_done_on_every_schedule() {
    // The Done checks its caller twice, as it starts and as it notifies
    // (the last one): main's declaration may come between, and the second
    // check cited the library's line.
    let mut cited = 0;
    for seed in 0..200 {
        LINE.with(|l| l.set(0));
        let run = Sim::new(seed).run(|| async {
            let wg = WaitGroup::new("wg");
            wg.add(1).await;
            let w = wg.clone();
            spawn("A", async move {
                cited!(w.done()).await;
            });
            sim::yield_now().await;
            wg.declare_done(); // main only
            wg.wait().await;
        });
        if let Outcome::Panic { message, .. } = &run.outcome {
            let line = LINE.with(|l| l.get());
            assert!(message.ends_with(&format!(" (at {}:{line})", file!())), "seed {seed}: {message}");
            cited += 1;
        }
    }
    assert!(cited > 0, "no schedule panicked");
}

#[test]
fn a_misuse_a_task_caught_is_cited_by_no_later_panic() {
    // The caught panic left its line behind; the ticker's own send on the
    // channel main closed (a panic of the library's task) cited it.
    let run = Sim::new(0).run(|| async {
        let ch: Chan<u32> = Chan::new("ch", 1);
        ch.declare_sender();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ch.declare_sender_for(99)));
        assert!(caught.is_err());
        let t = sim::time::Ticker::new("tick", 1_000);
        t.c().declare_sender();
        t.c().close().await;
        sim::time::sleep(5_000).await;
    });
    let Outcome::Panic { task, message, .. } = &run.outcome else { panic!("{}", run.outcome.summary()) };
    assert_eq!(task, "tick");
    assert!(message.starts_with("send on closed channel") && !message.contains(file!()), "{message}");
}

#[test]
fn a_ticker_of_no_period_and_a_choice_of_none_cite_the_call() {
    assert_cited(
        || async {
            cited!(sim::time::Ticker::new("tick", 0));
        },
        "main",
        "time: non-positive interval for NewTicker",
    );
    assert_cited(
        || async {
            cited!(sim::task::choose(0));
        },
        "main",
        "choose needs at least one alternative",
    );
}

#[test]
fn a_sender_that_returned_declared_again_is_no_misuse() {
    // Found by review: a finished task leaves the ends it held, and a
    // declaration of it afterwards was taken for a late new holder.
    let run = Sim::new(0).run(|| async {
        let ch: Chan<u32> = Chan::new("ch", 1);
        ch.declare_receiver();
        let tx = ch.clone();
        let w = spawn("w", async move {
            tx.declare_sender();
            tx.send(1).await;
        });
        let id = w.id();
        w.join().await;
        assert_eq!(ch.recv().await, Some(1));
        ch.declare_sender_for(id);
    });
    assert_eq!(run.outcome, Outcome::Completed, "{}", run.outcome.summary());
}
