//! Go's `sync.Once`: the function runs once, a caller that comes while it
//! runs waits for it, and a function that calls `Do` again deadlocks.

use std::cell::Cell;
use std::rc::Rc;

use sim::sync::Once;
use sim::{spawn, Outcome, Sim};

#[test]
fn the_function_runs_once_and_every_caller_returns_after_it() {
    for seed in 0..300 {
        let run = Sim::new(seed).run(|| async {
            let (once, runs) = (Once::new("initOnce"), Rc::new(Cell::new(0)));
            let mut callers = Vec::new();
            for name in ["caller-1", "caller-2", "caller-3"] {
                let (once, runs) = (once.clone(), runs.clone());
                callers.push(spawn(name, async move {
                    let r = runs.clone();
                    once.call_once(|| async move {
                        sim::yield_now().await; // the work, which others may overtake
                        r.set(r.get() + 1);
                    })
                    .await;
                    // Go's Do returns only once f has returned, whoever ran it.
                    sim::check(once.is_done() && runs.get() == 1, "returned before the function did");
                }));
            }
            for c in callers {
                c.join().await;
            }
            assert_eq!(runs.get(), 1);
        });
        assert_eq!(run.outcome, Outcome::Completed, "seed {seed}");
    }
}

#[test]
fn a_function_that_calls_do_on_its_own_once_deadlocks() {
    let run = Sim::new(0).run(|| async {
        let once = Once::new("configOnce");
        let again = once.clone();
        once.call_once(|| async move {
            let _f = sim::frame_at("loadConfig", "config.go:42");
            again.call_once(|| async {}).await;
        })
        .await;
    });
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("{}", run.outcome));
    assert!(d.global, "{d}");
    let text = d.to_string();
    assert!(
        text.contains(
            "\"main\" (task 0): waiting to lock mutex \"configOnce\", held by \"main\"\n    at sync.(*Once).Do\n    \
             at loadConfig (config.go:42)\n    at sync.(*Once).Do\n"
        ),
        "{text}"
    );
}

#[test]
fn one_once_inside_another_is_no_nesting_to_annotate() {
    // Lazy initialisation: config's function reads the logger, whose own
    // Once runs inside. Two locks of class sync.Once nested: Go's pattern,
    // not an INFO on nesting two instances of one class.
    let run = Sim::new(0).run(|| async {
        let (config, logger) = (Once::new("configOnce"), Once::new("loggerOnce"));
        config.call_once(|| async move { logger.call_once(|| async {}).await }).await;
    });
    assert_eq!(run.outcome, Outcome::Completed);
    assert_eq!(run.lock_order.edges.len(), 1, "{:?}", run.lock_order);
    assert!(run.lock_order.warnings().is_empty(), "{:?}", run.lock_order.warnings());
}
