//! A panic a task caught itself left deadsim's hook message behind; a
//! later task panic, after a test swapped the hook, was reported with that
//! old message. (Its own test binary: the hook is the process's.)

use sim::{Outcome, Sim};

#[test]
fn a_caught_panic_does_not_give_its_message_to_a_later_one() {
    let first = Sim::new(0).run(|| async {
        let _ = std::panic::catch_unwind(|| panic!("caught inside the task"));
    });
    assert_eq!(first.outcome, Outcome::Completed);
    std::panic::set_hook(Box::new(|_| {}));
    let run = Sim::new(0).run(|| async { panic!("the real panic") });
    match run.outcome {
        Outcome::Panic { message, .. } => assert!(message.starts_with("the real panic"), "{message:?}"),
        o => panic!("{o}"),
    }
}
