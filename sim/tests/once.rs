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
