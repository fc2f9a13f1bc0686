//! A test that swaps the panic hook around its first run (to keep a
//! panicking model quiet) removed deadsim's hook for good: every later
//! task panic was reported with an empty message. The message now comes
//! from the panic itself when the hook did not take it. (Its own test
//! binary: the hook is the process's.)

use sim::{Outcome, Sim};

#[test]
fn a_panic_message_survives_a_test_that_swapped_the_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let quiet = Sim::new(0).run(|| async { panic!("first") });
    std::panic::set_hook(previous);
    assert!(matches!(quiet.outcome, Outcome::Panic { .. }));
    let run = Sim::new(0).run(|| async { panic!("sim: declare every task") });
    match run.outcome {
        Outcome::Panic { task, message, .. } => {
            assert_eq!(task, "main");
            assert!(message.starts_with("sim: declare every task"), "{message:?}");
        }
        o => panic!("{o}"),
    }
}
