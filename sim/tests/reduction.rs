//! Partial-order reduction against brute force on generated programs.
//!
//! `search.rs` checks the reduction on models written to stress one
//! primitive each. Here proptest writes the models: two or three tasks, each a
//! few operations drawn from every primitive the engine has (mutexes, an
//! RWMutex, a monitor with wait and notify, channels with and without a
//! buffer, selects with and without default, a pipe (closed at either end
//! too), an atomic, a plain
//! variable declared with `sim::access`, `choose`, sleeps and yields). Each
//! task logs what it observed (values received, read, loaded, chosen, which
//! case a select took) and main fails with every task's log once all are
//! done, so every distinct outcome of the program is a distinct failure
//! signature, and deadlocks are failures too. Exploring every schedule with
//! reduction must give exactly the outcomes exploring without it gives, with
//! no bound and within each bound of 0 to 2 preemptions: the reduction may
//! skip a schedule only if another one it runs is equivalent to it.
//!
//! A failing case prints the program (shrunk by proptest) and both sets.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

use sim::models::Configured;
use sim::scheduler::{explore, ExploreConfig};
use sim::sync::{
    select, AtomicU64, Chan, Monitor, MonitorGuard, Mutex, MutexGuard, Pipe, RwMutex, RwReadGuard, RwWriteGuard,
};

/// One operation of a generated task. Lock-like operations (`Lock`, `RLock`,
/// `WLock`, `Enter`) are skipped when the task already holds that resource,
/// and `Unlock` releases the last one taken, so every program is well nested;
/// whatever a task still holds it releases as it ends.
#[derive(Clone, Debug)]
enum Op {
    Lock(usize),
    RLock,
    WLock,
    Enter,
    Unlock,
    /// `wait()` once (no loop: a wait nobody notifies deadlocks), only
    /// inside the monitor.
    Wait,
    Notify,
    NotifyAll,
    /// On channel 0 (unbuffered) or 1 (one slot).
    Send(usize, u8),
    Recv(usize),
    Close(usize),
    /// Receive from either channel; with `true`, a default case.
    SelectRecv(bool),
    SelectSend(usize, u8, bool),
    PipeWrite(u64),
    PipeRead(u64),
    /// Closes the pipe's write end (`true`: later reads get end of stream)
    /// or its read end (writes, and reads, fail).
    PipeClose(bool),
    Add(u8),
    Load,
    VarWrite(u8),
    VarRead,
    Choose,
    Sleep(u64),
    Yield,
    /// Reads a primitive's state without a scheduling point of its own:
    /// `len` of channel 1, the pipe's bytes buffered, the atomic's `peek`,
    /// the context's `err`, the WaitGroup's count, the `Once`'s `is_done`.
    /// Each must be ordered against the operations that change that state.
    Peek(u8),
    /// `cancel()` of the context.
    Cancel,
    /// `wg.Add(1)`: a write of the WaitGroup's counter, a scheduling point.
    WgAdd,
    /// `once.Do` of a function that yields.
    OnceDo,
    /// Spawns a child that runs one of [`child`]'s small programs, in the
    /// background (never joined: the run ends without it) or joined by
    /// this task as it ends.
    Spawn(u8, bool),
}

/// The programs a spawned child runs.
fn child(k: u8) -> Vec<Op> {
    match k {
        0 => vec![Op::Lock(0)],
        1 => vec![Op::Send(1, 7)],
        2 => vec![Op::Recv(1)],
        3 => vec![Op::Add(2)],
        _ => vec![Op::Enter, Op::NotifyAll],
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..2usize).prop_map(Op::Lock),
        Just(Op::RLock),
        Just(Op::WLock),
        Just(Op::Enter),
        Just(Op::Unlock),
        Just(Op::Wait),
        Just(Op::Notify),
        Just(Op::NotifyAll),
        (0..2usize, 1..4u8).prop_map(|(c, v)| Op::Send(c, v)),
        (0..2usize).prop_map(Op::Recv),
        (0..2usize).prop_map(Op::Close),
        any::<bool>().prop_map(Op::SelectRecv),
        (0..2usize, 1..4u8, any::<bool>()).prop_map(|(c, v, d)| Op::SelectSend(c, v, d)),
        (1..3u64).prop_map(Op::PipeWrite),
        (1..3u64).prop_map(Op::PipeRead),
        any::<bool>().prop_map(Op::PipeClose),
        (1..3u8).prop_map(Op::Add),
        Just(Op::Load),
        (1..3u8).prop_map(Op::VarWrite),
        Just(Op::VarRead),
        Just(Op::Choose),
        (0..3u64).prop_map(|n| Op::Sleep(n * 100)),
        Just(Op::Yield),
        (0..6u8).prop_map(Op::Peek),
        Just(Op::Cancel),
        Just(Op::WgAdd),
        Just(Op::OnceDo),
        (0..5u8, any::<bool>()).prop_map(|(k, background)| Op::Spawn(k, background)),
    ]
}

/// Two to `tasks` tasks of one to `ops` operations each.
fn program(tasks: usize, ops: usize) -> impl Strategy<Value = Vec<Vec<Op>>> {
    proptest::collection::vec(proptest::collection::vec(op(), 1..=ops), 2..=tasks)
}

/// A setting of the property test from the environment, for longer hunts
/// by hand.
fn env(name: &str, default: u32) -> u32 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

enum Held {
    Mutex(usize, MutexGuard),
    Read(RwReadGuard),
    Write(RwWriteGuard),
    Monitor(MonitorGuard),
}

impl Held {
    async fn release(self) {
        match self {
            Held::Mutex(_, g) => g.unlock().await,
            Held::Read(g) => g.runlock().await,
            Held::Write(g) => g.unlock().await,
            Held::Monitor(g) => g.exit().await,
        }
    }
}

/// The shared state of one run: made afresh by main.
#[derive(Clone)]
struct World {
    mutexes: [Mutex; 2],
    rw: RwMutex,
    monitor: Monitor,
    chans: [Chan<u8>; 2],
    pipe: Pipe<u8>,
    atomic: AtomicU64,
    /// A plain variable; its accesses are declared against `var_guard`.
    var: Rc<Cell<u8>>,
    var_guard: Mutex,
    ctx: (sim::context::Context, sim::context::CancelFunc),
    wg: sim::sync::WaitGroup,
    once: sim::sync::Once,
    /// What each task saw, by task name, with the resource its writes and
    /// main's final read of it are declared against (`sim::access`): main
    /// joins no background child, so its read races with their writes.
    logs: Rc<RefCell<BTreeMap<String, (sim::ResId, String)>>>,
}

fn run_task(w: World, ops: Arc<Vec<Op>>, name: String) -> Pin<Box<dyn Future<Output = ()>>> {
    Box::pin(async move {
        let mut held: Vec<Held> = Vec::new();
        let mut children = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            if let Op::Spawn(k, background) = *op {
                let (child_name, ops) = (format!("{name}.{i}"), Arc::new(child(k)));
                let task = run_task(w.clone(), ops, child_name.clone());
                if background {
                    sim::spawn_background(child_name, task);
                } else {
                    children.push(sim::spawn(child_name, task));
                }
            } else {
                step(&w, op, &mut held, &name).await;
            }
        }
        while let Some(h) = held.pop() {
            h.release().await;
        }
        for c in children {
            c.join().await;
        }
    })
}

/// One operation of `ops` other than a spawn.
async fn step(w: &World, op: &Op, held: &mut Vec<Held>, name: &str) {
    let note = |s: String| {
        let mut logs = w.logs.borrow_mut();
        let (guard, l) = logs.get_mut(name).expect("main made every task's log");
        sim::access(*guard, true);
        l.push_str(&s);
        l.push(' ');
    };
    let holds_rw = held.iter().any(|h| matches!(h, Held::Read(_) | Held::Write(_)));
    let monitor = held.iter().find_map(|h| if let Held::Monitor(g) = h { Some(g) } else { None });
    match *op {
        Op::Lock(i) => {
            if !held.iter().any(|h| matches!(h, Held::Mutex(j, _) if *j == i)) {
                held.push(Held::Mutex(i, w.mutexes[i].lock().await));
            }
        }
        Op::RLock if !holds_rw => held.push(Held::Read(w.rw.rlock().await)),
        Op::WLock if !holds_rw => held.push(Held::Write(w.rw.lock().await)),
        Op::Enter if monitor.is_none() => held.push(Held::Monitor(w.monitor.enter().await)),
        Op::RLock | Op::WLock | Op::Enter => {}
        Op::Unlock => {
            if let Some(h) = held.pop() {
                h.release().await;
            }
        }
        Op::Wait => {
            if let Some(g) = monitor {
                g.wait().await;
                note("woke".into());
            }
        }
        Op::Notify => {
            if let Some(g) = monitor {
                g.notify();
            }
        }
        Op::NotifyAll => {
            if let Some(g) = monitor {
                g.notify_all();
            }
        }
        Op::Send(c, v) => w.chans[c].send(v).await,
        Op::Recv(c) => note(format!("r{c}={:?}", w.chans[c].recv().await)),
        Op::Close(c) => w.chans[c].close().await,
        Op::SelectRecv(default) => {
            let (mut a, mut b) = (w.chans[0].recv_case(), w.chans[1].recv_case());
            let got = match select(&mut [&mut a, &mut b], default).await {
                Some(0) => format!("s0={:?}", a.take()),
                Some(_) => format!("s1={:?}", b.take()),
                None => "s-".into(),
            };
            note(got);
        }
        Op::SelectSend(c, v, default) => {
            let mut s = w.chans[c].send_case(v);
            let mut r = w.chans[1 - c].recv_case();
            let got = match select(&mut [&mut s, &mut r], default).await {
                Some(0) => "ss".to_string(),
                Some(_) => format!("sr={:?}", r.take()),
                None => "s-".into(),
            };
            note(got);
        }
        Op::PipeWrite(n) => {
            let r = w.pipe.write(n, Some(n as u8)).await;
            note(format!("pw={}", r.is_ok()));
        }
        Op::PipeRead(max) => {
            let mut msgs = Vec::new();
            let r = w.pipe.read(max, &mut msgs).await;
            note(format!("pr={:?}{msgs:?}", r.ok()));
        }
        Op::PipeClose(true) => w.pipe.close_write().await,
        Op::PipeClose(false) => w.pipe.close_read().await,
        Op::Add(n) => note(format!("a={}", w.atomic.fetch_add(n as u64).await)),
        Op::Load => note(format!("l={}", w.atomic.load().await)),
        Op::VarWrite(v) => {
            sim::yield_now().await;
            sim::access(w.var_guard.id(), true);
            w.var.set(v);
        }
        Op::VarRead => {
            sim::yield_now().await;
            sim::access(w.var_guard.id(), false);
            note(format!("v={}", w.var.get()));
        }
        Op::Choose => note(format!("c={}", sim::choose(2))),
        Op::Sleep(ns) => sim::time::sleep(ns).await,
        Op::Yield => sim::yield_now().await,
        Op::Peek(k) => {
            // A step of its own, as VarRead's: the read is what it does.
            sim::yield_now().await;
            let seen = match k {
                0 => w.chans[1].len() as u64,
                1 => w.pipe.buffered(),
                2 => w.atomic.peek(),
                3 => w.ctx.0.err().is_some() as u64,
                4 => w.wg.count(),
                _ => w.once.is_done() as u64,
            };
            note(format!("p{k}={seen}"));
        }
        Op::Cancel => w.ctx.1.cancel().await,
        Op::WgAdd => {
            sim::yield_now().await;
            w.wg.add(1).await;
        }
        Op::OnceDo => w.once.call_once(sim::yield_now).await,
        Op::Spawn(..) => unreachable!("run_task spawns"),
    }
}

fn model(program: &[Vec<Op>]) -> Configured {
    let tasks: Arc<Vec<Arc<Vec<Op>>>> = Arc::new(program.iter().map(|t| Arc::new(t.clone())).collect());
    Configured::of("generated", move || {
        let tasks = tasks.clone();
        async move {
            let w = World {
                mutexes: [Mutex::new("m0"), Mutex::new("m1")],
                rw: RwMutex::new("rw"),
                monitor: Monitor::new("mon"),
                chans: [Chan::new("c0", 0), Chan::new("c1", 1)],
                pipe: Pipe::new("p", 2),
                atomic: AtomicU64::new("x", 0),
                var: Rc::new(Cell::new(0)),
                var_guard: Mutex::new("var"),
                ctx: sim::context::with_cancel("ctx"),
                wg: sim::sync::WaitGroup::new("wg"),
                once: sim::sync::Once::new("once"),
                logs: Rc::default(),
            };
            // A log for every task the program may spawn, made up front:
            // resources made by tasks would be numbered in the order they ran.
            for (i, ops) in tasks.iter().enumerate() {
                let name = format!("t{i}");
                let children = ops.iter().enumerate().filter(|(_, op)| matches!(op, Op::Spawn(..)));
                for task in std::iter::once(name.clone()).chain(children.map(|(j, _)| format!("{name}.{j}"))) {
                    let guard = Mutex::new(format!("log of {task}")).id();
                    w.logs.borrow_mut().insert(task, (guard, String::new()));
                }
            }
            let handles: Vec<_> = tasks
                .iter()
                .enumerate()
                .map(|(i, ops)| {
                    let name = format!("t{i}");
                    sim::spawn(name.clone(), run_task(w.clone(), ops.clone(), name))
                })
                .collect();
            for h in handles {
                h.join().await;
            }
            let all: Vec<String> = w
                .logs
                .borrow()
                .iter()
                .filter(|(_, (guard, log))| {
                    sim::access(*guard, false);
                    !log.is_empty()
                })
                .map(|(task, (_, log))| format!("{task}: {log}"))
                .collect();
            panic!("{}", all.join("| "));
        }
    })
}

/// Every distinct failure of `m` within `bound`, the executions that took,
/// and whether the model used virtual time (then explored without
/// reduction either way); `None` if the exploration did not finish within
/// its budget.
fn outcomes(m: &Configured, reduction: bool, bound: Option<u32>) -> Option<(BTreeSet<String>, u64, bool)> {
    let c = ExploreConfig {
        preemption_bound: bound,
        reduction,
        max_executions: env("DEADSIM_REDUCTION_BUDGET", 20_000).into(),
        max_steps: 10_000,
        keep_going: true,
        cross_check: false,
        ..ExploreConfig::default()
    };
    let r = explore(m, &c);
    r.exhausted.then(|| (r.distinct.keys().cloned().collect(), r.executions, r.timed))
}

#[test]
fn reduction_keeps_every_outcome_of_generated_programs() {
    // More cases, another seed, larger programs (up to TASKS tasks of up to
    // OPS operations) and a larger budget for plain DFS, by hand:
    // DEADSIM_REDUCTION_CASES=1500 DEADSIM_REDUCTION_SEED=7 DEADSIM_REDUCTION_TASKS=4 \
    //   DEADSIM_REDUCTION_OPS=5 DEADSIM_REDUCTION_BUDGET=60000 cargo test --release -p sim --test reduction
    let mut runner = TestRunner::new_with_rng(
        Config { cases: env("DEADSIM_REDUCTION_CASES", 300), failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[env("DEADSIM_REDUCTION_SEED", 11) as u8; 32]),
    );
    let (compared, saved) = (Cell::new(0u64), Cell::new(0u64));
    let size = (env("DEADSIM_REDUCTION_TASKS", 3) as usize, env("DEADSIM_REDUCTION_OPS", 3) as usize);
    runner
        .run(&program(size.0, size.1), |p| {
            let m = model(&p);
            for bound in [None, Some(0), Some(1), Some(2)] {
                let Some((brute, n_brute, _)) = outcomes(&m, false, bound) else {
                    continue; // too many schedules to compare
                };
                let (reduced, n_reduced, timed) = outcomes(&m, true, bound)
                    .ok_or_else(|| TestCaseError::fail(format!("{bound:?}: reduced search did not finish")))?;
                prop_assert_eq!(
                    &reduced,
                    &brute,
                    "{:?} within {:?}: {} reduced vs {} brute-force",
                    p,
                    bound,
                    n_reduced,
                    n_brute
                );
                if !timed {
                    // (A model that sleeps is explored without reduction both ways.)
                    compared.set(compared.get() + 1);
                    saved.set(saved.get() + n_brute.saturating_sub(n_reduced));
                }
            }
            Ok(())
        })
        .unwrap();
    // The comparison is not vacuous: most programs were small enough to
    // compare, and the reduction skipped schedules on the whole.
    eprintln!("{} comparisons, {} executions saved by the reduction", compared.get(), saved.get());
    assert!(compared.get() > 600, "only {} comparisons", compared.get());
    assert!(saved.get() > 0);
}

/// The outcomes of `program`, explored with and without reduction: the
/// same, and `expected` once panics' source lines are left out (a panic
/// cites the line of `model` that called the primitive). Gives the
/// executions each took.
fn assert_outcomes(program: &[Vec<Op>], expected: &[&str]) -> (u64, u64) {
    let m = model(program);
    let (brute, n_brute, _) = outcomes(&m, false, None).expect("small enough");
    let (reduced, n_reduced, _) = outcomes(&m, true, None).expect("small enough");
    assert_eq!(reduced, brute, "{program:?}");
    let lineless = |sig: &String| match sig.split_once(".rs:") {
        Some((head, tail)) => format!("{head}.rs{}", tail.trim_start_matches(|c: char| c.is_ascii_digit())),
        None => sig.clone(),
    };
    let got: Vec<String> = brute.iter().map(lineless).collect();
    assert_eq!(got, expected, "{program:?}");
    (n_brute, n_reduced)
}

#[test]
fn a_send_that_panics_on_a_closed_channel_races_with_the_close() {
    // t0 closes c1 and then blocks for good sending on c0, unless t1's
    // send on c1 comes after the close and panics. The panicking send saw
    // the close: its step must say so, or the search never orders the two
    // the other way.
    let p = vec![vec![Op::Close(1), Op::Send(0, 1)], vec![Op::Send(1, 1)]];
    let (brute, reduced) = assert_outcomes(
        &p,
        &[
            "deadlock: every task is blocked: main join t0, t0 send c0",
            "panic: panic in \"t1\": send on closed channel (at sim/tests/reduction.rs)",
        ],
    );
    assert!(reduced < brute, "{reduced} vs {brute}");
}

#[test]
fn a_step_that_ends_the_run_is_ordered_with_every_task_that_could_have_run() {
    // t0's own send on the channel it closed ends the run before t1 ever
    // runs: only running t1 first shows that t1 can be the one to panic.
    let p = vec![vec![Op::Close(1), Op::Send(1, 1)], vec![Op::Send(1, 1)]];
    assert_outcomes(
        &p,
        &[
            "panic: panic in \"t0\": send on closed channel (at sim/tests/reduction.rs)",
            "panic: panic in \"t1\": send on closed channel (at sim/tests/reduction.rs)",
        ],
    );
}

#[test]
fn a_model_that_sleeps_is_explored_without_reduction() {
    // t1 sleeps for one step's time and closes the channel t0 sends on (its
    // one slot free). The close comes before the send (which then panics)
    // only if other steps (main's join) delay the send past t1's sleep, and
    // no footprint relates those steps to either; otherwise the send fills
    // the slot and the run ends with main's report of the final state (as
    // every run of these programs does; nothing to report here).
    let p = vec![vec![Op::Send(1, 1)], vec![Op::Sleep(100), Op::Close(1)]];
    let m = model(&p);
    assert_eq!(outcomes(&m, false, None).unwrap().0.len(), 2);
    assert_outcomes(
        &p,
        &[
            "panic: panic in \"main\":  (at sim/tests/reduction.rs)",
            "panic: panic in \"t0\": send on closed channel (at sim/tests/reduction.rs)",
        ],
    );
    let r = explore(&m, &ExploreConfig { keep_going: true, ..ExploreConfig::default() });
    assert!(r.timed && r.exhausted && r.distinct.len() == 2, "{r:?}");
    // Without the sleep the reduction stays on.
    let p = vec![vec![Op::Send(0, 1)], vec![Op::Yield, Op::Close(0)]];
    let r = explore(&model(&p), &ExploreConfig { keep_going: true, ..ExploreConfig::default() });
    assert!(!r.timed && r.exhausted, "{r:?}");
}

#[test]
fn a_step_that_takes_a_parked_send_races_with_what_came_before_the_send() {
    // t2's step that takes t1's parked send on c0 goes on to enter the
    // monitor t0 holds, and blocks there. The send granted it the value:
    // no race to reverse (the receive cannot come before the send it
    // takes), and taken for one, as the later it hid the race with t0's
    // entry, whose reversal lets t2 enter the monitor, and leave it, first.
    let p = vec![vec![Op::Enter, Op::PipeRead(1)], vec![Op::SelectSend(0, 1, false)], vec![Op::Recv(0), Op::Enter]];
    assert_outcomes(
        &p,
        &[
            "deadlock: every task is blocked: main join t0, t0 read p",
            "deadlock: every task is blocked: main join t0, t0 read p, t2 lock mon",
        ],
    );
}

#[test]
fn one_deadlock_has_one_report_whichever_task_blocked_last() {
    // When t1 waits holding the write lock t0 then waits for, main, t0
    // and t1 are all blocked, and main (which could notify) closes a cycle
    // as t0 does. Which of main's join and t0's read lock came last is the
    // order of two unrelated steps; the report names the shortest cycle
    // whichever it was, so the deadlock has one signature.
    let p = vec![vec![Op::RLock], vec![Op::WLock, Op::Enter, Op::Wait]];
    assert_outcomes(
        &p,
        &["deadlock: every task is blocked: main join t1, t1 wait mon", "deadlock: t0 rlock rw -> t1 wait mon"],
    );
}

#[test]
fn a_background_task_that_fails_only_before_main_ends_is_found() {
    // t0 closes c1, and a background child of t1 sends on it: the send
    // panics if the child runs after the close and before main returns
    // (main does not wait for it). Main's last step ends the run with the
    // child still able to run, so the child is tried before it.
    let p = vec![vec![Op::Close(1)], vec![Op::Spawn(1, true)]];
    let outcomes = outcomes(&model(&p), true, None).unwrap().0;
    assert!(outcomes.iter().any(|o| o.starts_with("panic: panic in \"t1.0\": send on closed channel")), "{outcomes:?}");
    assert!(outcomes.iter().any(|o| o.starts_with("panic: panic in \"main\"")), "{outcomes:?}");
}

#[test]
fn a_race_with_a_task_asleep_there_is_reversed_by_what_happens_before_it() {
    // The outcome missed: t1's background child adds before t0 does, and
    // t0 is parked in its receive when t1's select sends. Explored with t1's
    // select first, t0's receive races with it; but at the select, t0 is
    // asleep (its add, run from an earlier node, commutes with what t1 did),
    // so trying t0 there is no branch. The reversal has to start with the
    // child, whose add happens before t0's: every task is tried there.
    let p = vec![vec![Op::Add(1), Op::Recv(0)], vec![Op::Send(1, 1), Op::Spawn(3, true), Op::SelectSend(0, 1, false)]];
    let m = model(&p);
    let (reduced, _, _) = outcomes(&m, true, None).unwrap();
    assert_eq!(reduced, outcomes(&m, false, None).unwrap().0);
    assert!(reduced.iter().any(|o| o.contains("t0: a=2 r0=Some(1) | t1: ss | t1.1: a=0")), "{reduced:?}");
}

#[test]
fn a_childs_first_step_does_not_race_with_its_spawn_or_a_join_of_it() {
    // Missed: t1's child enters the monitor, and leaves it, before t0 enters
    // it for good. The child's first step, which finds the monitor held,
    // raced with its spawn and with t1's join of it (which came later, and
    // as the latest race hid the one with t0's entry). A spawn enables the
    // first step, and a join only looks at the task, as the first step does.
    let p = vec![vec![Op::Enter, Op::PipeRead(1)], vec![Op::Spawn(4, false)]];
    assert_outcomes(
        &p,
        &[
            "deadlock: every task is blocked: main join t0, t0 read p",
            "deadlock: every task is blocked: main join t0, t0 read p, t1 join t1.0, t1.0 lock mon",
        ],
    );
}

#[test]
fn a_join_that_blocks_does_not_race_with_the_finish_it_waits_for() {
    // Missed within 0 preemptions: t2's child adds before t0 does, and t0 is
    // parked in its receive when t1's select sends. Explored with t0 first,
    // the child's add races with t0's add and, as the child ends in that
    // step, with t2's join of it, which had blocked. Only the latest race,
    // the join's, was reversed, and its reversal (the child ending before
    // the join) is a preemption of t2 the bound cuts; the add's, which fits,
    // was never tried. A join that blocks only waits: had the child ended
    // first, the join would have gone on at once, to the same state.
    let p = vec![vec![Op::Add(1), Op::Recv(0)], vec![Op::SelectSend(0, 1, true)], vec![Op::Spawn(3, false)]];
    let m = model(&p);
    let (brute, _, _) = outcomes(&m, false, Some(0)).unwrap();
    let (reduced, _, _) = outcomes(&m, true, Some(0)).unwrap();
    assert_eq!(reduced, brute);
    assert!(reduced.iter().any(|o| o.contains("t0: a=2 r0=Some(1) | t1: ss | t2.0: a=0")), "{reduced:?}");
}

#[test]
fn a_pipe_write_that_fails_on_a_closed_end_races_with_the_close() {
    // t1's write succeeds before t0 closes the read end and fails after:
    // the failing write touched nothing, so the search never ordered it
    // before the close (t0's select, which sees nothing of either, keeps
    // the end of the run from ordering them).
    let p = vec![vec![Op::PipeClose(false), Op::SelectSend(0, 1, true)], vec![Op::PipeWrite(1)]];
    let (brute, reduced) = assert_outcomes(
        &p,
        &[
            "panic: panic in \"main\": t0: s- | t1: pw=false  (at sim/tests/reduction.rs)",
            "panic: panic in \"main\": t0: s- | t1: pw=true  (at sim/tests/reduction.rs)",
        ],
    );
    assert!(reduced < brute, "{reduced} vs {brute}");
}

#[test]
fn a_read_of_a_primitives_state_races_with_what_changes_it() {
    // `len(ch)`, a pipe's bytes buffered, an atomic's peek, `ctx.Err()`, a
    // WaitGroup's count and `Once`'s done read state without a scheduling
    // point: each must be ordered against the operation that changes it, or
    // the search runs one order and misses the other (a worker that checks
    // `ctx.Err()` before sending leaked in the order it never tried).
    for (k, change) in
        [(0, Op::Send(1, 1)), (1, Op::PipeWrite(1)), (2, Op::Add(1)), (3, Op::Cancel), (4, Op::WgAdd), (5, Op::OnceDo)]
    {
        let p = vec![vec![Op::Peek(k)], vec![change.clone()]];
        let m = model(&p);
        let (reduced, _, _) = outcomes(&m, true, None).expect("small enough");
        let seen: BTreeSet<&str> =
            reduced.iter().filter_map(|sig| sig.split(&format!("p{k}=")).nth(1)?.get(..1)).collect();
        assert_eq!(seen, BTreeSet::from(["0", "1"]), "{change:?}: {reduced:?}");
    }
}
