//! The states, holds and blocks derived from the committed abba trace, as
//! `traces/README.md` tells its story: main spawns T1 and T2 and returns
//! (step 1); T2 locks B (4); T1 locks A (5), which disables T2 (its next
//! operation takes A), and T1's next operation takes B, held by T2: both
//! block in step 5.

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
