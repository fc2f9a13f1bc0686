//! The states, holds and blocks derived from the committed abba trace, as
//! `traces/README.md` tells its story: main spawns T1 and T2 and returns
//! (step 1); T2 locks B (4); T1 locks A (5), which disables T2 (its next
//! operation takes A), and T1's next operation takes B, held by T2: both
//! block in step 5.

mod common;

use std::path::Path;

use visualizer::model::{Mode, State};
use visualizer::Model;

#[test]
fn abba_states_holds_blocks() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traces/abba-deadlock.json");
    let trace = visualizer::load(&path).unwrap();
    let m = Model::new(&trace).unwrap();
    assert_eq!(m.end, 5);
    assert_eq!(*m.times, vec![0, 100, 200, 300, 400, 500]);
    assert_eq!(m.deadlock, Some(5));
    use State::*;
    // schedule [0,1,2,2,1]: step s runs from position s-1 to s.
    assert_eq!(m.tasks[0].states, vec![(0, Running), (1, Finished)]);
    assert_eq!(m.tasks[1].states, vec![(1, Running), (2, Ready), (4, Running), (5, Blocked)]);
    assert_eq!(m.tasks[2].states, vec![(1, Ready), (2, Running), (4, Ready), (5, Blocked)]);
    let t1 = &m.tasks[1];
    assert_eq!(t1.holds.len(), 1);
    let h = &t1.holds[0];
    assert_eq!((h.resource, h.start, h.end, h.mode, h.open), (0, 5, 5, Mode::Exclusive, true));
    let b = &m.tasks[2].blocks[0];
    assert_eq!((b.resource, b.op.as_str(), b.start, b.end, b.open), (Some(0), "lock", 5, 5, true));
    // Lock A: held by T1 from step 5, waited for by T2 from step 5.
    assert_eq!(m.resources[0].holds.iter().map(|h| (h.task, h.start)).collect::<Vec<_>>(), vec![(1, 5)]);
    assert_eq!(m.resources[0].waits.iter().map(|w| (w.task, w.start)).collect::<Vec<_>>(), vec![(2, 5)]);
    assert_eq!(m.cycle_tasks(), vec![1, 2]);
    assert_eq!(m.story_start(), Some(4));
    assert_eq!(m.pos_at_or_after(450), 5);
    assert_eq!(m.pos_at_or_before(450), 4);
}

#[test]
fn clock_jumps_take_their_time() {
    // `common::clock_jump_trace`: waiter blocks on `done` (step 5), worker
    // sleeps 500 ns (6), timer sleeps 800 ns (7) and, nothing left to run,
    // the clock jumps to the worker's deadline (1100 ns) in step 7; the
    // worker runs steps 8 and 9, sleeps 300 ns, and the clock jumps to the
    // timer's (1500 ns); alone at the end, the worker sleeps 200 ns in
    // step 14 and the clock jumps to its own deadline. A step's time was
    // its first event's, and a step after a jump, with no event, was
    // interpolated across the jump (step 8 at 1000 ns, not 1200 ns).
    let trace = common::clock_jump_trace();
    assert_eq!(trace.schedule, [0, 1, 3, 2, 1, 3, 2, 3, 3, 2, 2, 3, 1, 3, 3, 3]);
    let m = Model::new(&trace).unwrap();
    let ends = [0, 100, 200, 300, 400, 500, 600, 700, 1200, 1300, 1600, 1700, 1800, 1900, 2000, 2300, 2400];
    assert_eq!(*m.times, ends);
    assert_eq!(*m.jumps, [(7, 1100), (9, 1500), (14, 2200)]);
    assert_eq!((m.resume(7), m.resume(8), m.time(7)), (1100, 1200, 700));
    use State::*;
    let spans = |t: u32| -> Vec<(State, u64, u64)> {
        m.spans(t, 0).iter().map(|s| (s.state, m.time_at(s.start), m.time_at(s.end))).collect()
    };
    // The timer sleeps 700..1500 and runs steps 10 and 11 after it; the
    // worker sleeps 600..1100, runs steps 8 and 9 (1100..1300), sleeps to
    // 1600, and its sleep in step 14 (the states, by position, show none:
    // it runs steps 14 to 16) lasts 2000..2200. Nothing runs in a jump.
    assert_eq!(
        spans(2),
        [
            (Ready, 100, 300),
            (Running, 300, 400),
            (Ready, 400, 600),
            (Running, 600, 700),
            (Blocked, 700, 1500),
            (Running, 1500, 1700),
            (Finished, 1700, 2400)
        ]
    );
    assert_eq!(
        spans(3),
        [
            (Ready, 100, 200),
            (Running, 200, 300),
            (Ready, 300, 500),
            (Running, 500, 600),
            (Blocked, 600, 1100),
            (Running, 1100, 1300),
            (Blocked, 1300, 1600),
            (Ready, 1600, 1700),
            (Running, 1700, 1800),
            (Ready, 1800, 1900),
            (Running, 1900, 2000),
            (Blocked, 2000, 2200),
            (Running, 2200, 2400),
            (Blocked, 2400, 2400)
        ]
    );
    // From a position on, the span that reaches it first: from 7, the
    // worker's sleep, which lasts past the end of step 7 to the jump's end;
    // from 8, the timer's sleep from step 7 to the jump at 9; from 10, the
    // worker's sleep to its wake, after any clock jump at 10 (there is
    // none: 1600 ns).
    use visualizer::model::Span;
    assert_eq!(m.spans(3, 7)[0], Span { state: Blocked, start: (6, false), end: (7, true) });
    assert_eq!(m.spans(2, 8)[0], Span { state: Blocked, start: (7, false), end: (9, true) });
    assert_eq!(m.spans(3, 10)[0], Span { state: Blocked, start: (9, false), end: (10, true) });
    assert_eq!(m.time_at((10, true)), 1600);
}
