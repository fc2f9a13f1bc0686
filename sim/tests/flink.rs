//! The Flink model: FLINK-22946 in 1.13.1 (both scenarios), the merged fix,
//! the re-entry case, and the report's first proposal (as worded, and with
//! the waiting flag cleared).

use sim::models::{self, Configured};
use sim::trace::EventKind;

fn flink(params: &[(&str, &str)]) -> Configured {
    let p: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    models::find("flink").unwrap().configure(&p).unwrap()
}

fn first_failure(m: &Configured, seeds: std::ops::Range<u64>) -> Option<sim::Run> {
    seeds.map(|s| m.run(s, false)).find(|r| r.outcome.is_failure())
}

const TASK: &str = "Join(xxxxxx) (34/256)#1";
const WRITER: &str = "Channel state writer Join(xxxxxx) (34/256)#1";

/// The chain of the original report's stacks, outermost first.
const CHAIN: [&str; 4] = [
    "BufferManager.recycle",
    "LocalBufferPool.recycle",
    "LocalBufferPool.fireBufferAvailableNotification",
    "BufferManager.notifyBufferAvailable",
];

/// Checks the FLINK-22946 cycle: the task thread and the writer, each
/// holding one bufferQueue monitor and waiting for the other's, each stack
/// holding the report's chain in order.
fn assert_flink_22946(run: &sim::Run) {
    let d = run.outcome.deadlock().unwrap_or_else(|| panic!("expected a deadlock, got {}", run.outcome));
    let names: Vec<&str> = d.cycle.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, vec![TASK, WRITER]);
    for (i, b) in d.cycle.iter().enumerate() {
        let other = &d.cycle[1 - i];
        assert_eq!(b.op, "lock");
        assert_eq!(b.kind, "monitor");
        assert!(b.waits_for.ends_with(".bufferQueue"), "{}", b.waits_for);
        assert_eq!(b.holds.len(), 1, "{b:?}");
        assert!(b.holds[0].resource.ends_with(".bufferQueue"));
        assert_eq!(b.holds[0].resource, other.waits_for, "each holds what the other waits for");
        assert_ne!(b.waits_for, b.holds[0].resource, "two distinct BufferManagers");
        assert_eq!(b.released_by, vec![other.name.clone()]);
        // The stack is innermost first; the chain must appear outermost first going up.
        let outer_first: Vec<&str> = b.stack.iter().rev().map(|f| f.name.as_str()).collect();
        let mut pos = 0;
        for want in CHAIN {
            pos += outer_first[pos..]
                .iter()
                .position(|f| *f == want)
                .unwrap_or_else(|| panic!("{want} missing after position {pos} in {outer_first:?}"));
        }
        assert_eq!(b.stack[0].name, "BufferManager.notifyBufferAvailable");
        assert_eq!(b.stack[0].site, "BufferManager.java:296", "1.13.1's synchronized (bufferQueue)");
    }
    let task_outer: Vec<&str> = d.cycle[0].stack.iter().map(|f| f.name.as_str()).collect();
    assert!(task_outer.contains(&"SpillingAdaptiveSpanningRecordDeserializer.getNextRecord"));
    let writer_outer: Vec<&str> = d.cycle[1].stack.iter().map(|f| f.name.as_str()).collect();
    assert!(writer_outer.contains(&"ChannelStateCheckpointWriter.write"));
}

#[test]
fn flink_1_13_1_minimal_deadlocks_as_in_the_report() {
    for version in ["1.13.0", "1.13.1"] {
        let m = flink(&[("flink-version", version), ("scenario", "minimal")]);
        let run = first_failure(&m, 0..100).expect("deadlock within 100 seeds");
        assert_flink_22946(&run);
        assert!(run.steps < 60, "a handful of steps: {}", run.steps);
    }
}

/// The report's two thread dumps, innermost frame first, as `method
/// (File.java:line)`: the JVM's generated `$$Lambda$N/M` frames and
/// `Thread.run` left out, and the package names.
const REPORT_TASK: &[&str] = &[
    "BufferManager.notifyBufferAvailable (BufferManager.java:296)",
    "LocalBufferPool.fireBufferAvailableNotification (LocalBufferPool.java:507)",
    "LocalBufferPool.recycle (LocalBufferPool.java:494)",
    "LocalBufferPool.recycle (LocalBufferPool.java:460)",
    "NetworkBuffer.deallocate (NetworkBuffer.java:182)",
    "AbstractReferenceCountedByteBuf.handleRelease (AbstractReferenceCountedByteBuf.java:110)",
    "AbstractReferenceCountedByteBuf.release (AbstractReferenceCountedByteBuf.java:100)",
    "NetworkBuffer.recycleBuffer (NetworkBuffer.java:156)",
    "BufferManager$AvailableBufferQueue.addExclusiveBuffer (BufferManager.java:399)",
    "BufferManager.recycle (BufferManager.java:200)",
    "NetworkBuffer.deallocate (NetworkBuffer.java:182)",
    "AbstractReferenceCountedByteBuf.handleRelease (AbstractReferenceCountedByteBuf.java:110)",
    "AbstractReferenceCountedByteBuf.release (AbstractReferenceCountedByteBuf.java:100)",
    "NetworkBuffer.recycleBuffer (NetworkBuffer.java:156)",
    "SpillingAdaptiveSpanningRecordDeserializer.getNextRecord (SpillingAdaptiveSpanningRecordDeserializer.java:95)",
    "AbstractStreamTaskNetworkInput.emitNext (AbstractStreamTaskNetworkInput.java:95)",
    "StreamOneInputProcessor.processInput (StreamOneInputProcessor.java:66)",
    "StreamTwoInputProcessor.processInput (StreamTwoInputProcessor.java:96)",
    "StreamTask.processInput (StreamTask.java:423)",
    "MailboxProcessor.runMailboxLoop (MailboxProcessor.java:204)",
    "StreamTask.runMailboxLoop (StreamTask.java:681)",
    "StreamTask.executeInvoke (StreamTask.java:636)",
    "StreamTask.runWithCleanUpOnFail (StreamTask.java:647)",
    "StreamTask.invoke (StreamTask.java:620)",
    "Task.doRun (Task.java:779)",
    "Task.run (Task.java:566)",
];

const REPORT_WRITER_FROM_WRITE: &[&str] = &[
    "ChannelStateCheckpointWriter.write (ChannelStateCheckpointWriter.java:173)",
    "ChannelStateCheckpointWriter.writeInput (ChannelStateCheckpointWriter.java:131)",
    "ChannelStateWriteRequest.lambda$write$0 (ChannelStateWriteRequest.java:63)",
    "ChannelStateWriteRequest.lambda$buildWriteRequest$2 (ChannelStateWriteRequest.java:93)",
    "CheckpointInProgressRequest.execute (ChannelStateWriteRequest.java:212)",
    "ChannelStateWriteRequestDispatcherImpl.dispatchInternal (ChannelStateWriteRequestDispatcherImpl.java:82)",
    "ChannelStateWriteRequestDispatcherImpl.dispatch (ChannelStateWriteRequestDispatcherImpl.java:59)",
    "ChannelStateWriteRequestExecutorImpl.loop (ChannelStateWriteRequestExecutorImpl.java:96)",
    "ChannelStateWriteRequestExecutorImpl.run (ChannelStateWriteRequestExecutorImpl.java:75)",
];

#[test]
fn flink_1_13_1_minimal_deadlock_has_the_reports_stacks_frame_for_frame() {
    let m = flink(&[("flink-version", "1.13.1"), ("scenario", "minimal")]);
    let run = first_failure(&m, 0..100).expect("deadlock within 100 seeds");
    let d = run.outcome.deadlock().unwrap();
    let stack = |i: usize| d.cycle[i].stack.iter().map(|f| f.to_string()).collect::<Vec<_>>();
    assert_eq!(stack(0), REPORT_TASK);
    // The writer's stack: the same recycling chain down to the first
    // recycleBuffer, then its own.
    let mut writer: Vec<&str> = REPORT_TASK[..14].to_vec();
    writer.extend(REPORT_WRITER_FROM_WRITE);
    assert_eq!(stack(1), writer);
    // Each holds the other's queue, entered by `BufferManager.recycle`, and
    // the report prints it under that frame, as the dump's `- locked`.
    let text = run.outcome.to_string();
    for (i, b) in d.cycle.iter().enumerate() {
        let other = &d.cycle[1 - i];
        assert_eq!(b.holds.len(), 1, "{text}");
        let h = &b.holds[0];
        assert_eq!(h.resource, other.waits_for, "{text}");
        assert_eq!(h.frame, Some(9), "{text}");
        assert_eq!(b.stack[9].to_string(), "BufferManager.recycle (BufferManager.java:200)");
        let under = format!(
            "    at BufferManager.recycle (BufferManager.java:200)\n    - locked monitor \"{}\" at BufferManager.recycle (BufferManager.java:192)\n",
            h.resource
        );
        assert!(text.contains(&under), "{text}");
    }
}

#[test]
fn flink_1_13_1_pipeline_deadlock_comes_out_of_the_dynamics() {
    let m = flink(&[("flink-version", "1.13.1")]);
    let found = first_failure(&m, 0..30_000).expect("deadlock within 30000 seeds");
    assert_flink_22946(&found);
    // The trace shows how the state arose: both managers registered as
    // listeners, and a registered one's numRequiredBuffers dropped later.
    let run = m.run(found.seed, true);
    let t = run.trace.unwrap();
    let name = |r: Option<u32>| t.resources[r.unwrap() as usize].name.clone();
    let mut waiting = std::collections::BTreeMap::new();
    let mut dropped_while_waiting = false;
    let mut required = std::collections::BTreeMap::new();
    for e in &t.events {
        if e.kind != EventKind::Value {
            continue;
        }
        let (res, v) = (name(e.resource), e.amount.unwrap());
        match e.op.as_deref() {
            Some("isWaitingForFloatingBuffers") => {
                waiting.insert(res, v);
            }
            Some("numRequiredBuffers") => {
                let before = required.insert(res.clone(), v);
                if waiting.get(&res) == Some(&1) && before.is_some_and(|b| v < b) {
                    dropped_while_waiting = true;
                }
            }
            _ => {}
        }
    }
    assert_eq!(waiting.len(), 2, "both channels' managers seen: {waiting:?}");
    assert!(waiting.values().all(|&w| w == 1), "both managers registered at the deadlock: {waiting:?}");
    assert!(dropped_while_waiting, "a registered manager's numRequiredBuffers dropped");
}

#[test]
fn the_merged_fix_never_deadlocks_and_keeps_its_invariants() {
    for version in ["1.12.5", "1.13.2", "1.13.3", "1.13.5", "1.14.0"] {
        let m = flink(&[("flink-version", version), ("scenario", "minimal")]);
        if let Some(r) = first_failure(&m, 0..3_000) {
            panic!("{version} minimal seed {}: {}", r.seed, r.outcome);
        }
    }
    // The pipeline of 1.13.1 deadlocks in about 6 seeds of 10,000 (the
    // lowest is 2948): 30,000 seeds would show it some 18 times.
    for version in ["1.12.5", "1.13.2", "1.14.0"] {
        let m = flink(&[("flink-version", version)]);
        if let Some(r) = first_failure(&m, 0..30_000) {
            panic!("{version} pipeline seed {}: {}", r.seed, r.outcome);
        }
    }
}

#[test]
fn recycling_into_its_own_manager_reenters_the_monitor() {
    let m = flink(&[("scenario", "reentry")]);
    for seed in 0..500 {
        let run = m.run(seed, false);
        assert!(!run.outcome.is_failure(), "seed {seed}: {}", run.outcome);
    }
    // The task thread entered channel-0's monitor a second time.
    let t = m.run(0, true).trace.expect("recorded");
    let bq = t.resources.iter().position(|r| r.name == "channel-0.bufferQueue").unwrap() as u32;
    assert!(t.events.iter().any(|e| e.kind == EventKind::Enter && e.resource == Some(bq) && e.amount == Some(2)));
}

#[test]
fn self_assign_as_worded_never_deadlocks_nor_fails_a_check() {
    // The report's first proposal, and nothing else: the minimal scenario
    // is proved by exhaustive exploration, the pipeline over as many seeds
    // as show the 1.13.1 deadlock some 18 times.
    let minimal = flink(&[("fix", "self-assign"), ("scenario", "minimal")]);
    let explored = sim::scheduler::explore(&minimal, &sim::scheduler::ExploreConfig::default());
    assert!(explored.exhausted && explored.failure.is_none(), "{:?}", explored.failure.map(|f| f.0.outcome));
    let m = flink(&[("fix", "self-assign")]);
    if let Some(r) = first_failure(&m, 0..30_000) {
        panic!("self-assign pipeline seed {}: {}", r.seed, r.outcome);
    }
    // Without it the same scenario deadlocks: the proposal alone is what
    // takes the cycle away (the two models differ only by it).
    let unfixed = flink(&[("scenario", "minimal")]);
    assert!(first_failure(&unfixed, 0..100).is_some(), "1.13.1 minimal deadlocks without it");
}

#[test]
fn self_assign_clearing_the_waiting_flag_leaves_a_listener_that_is_not_waiting() {
    let m = flink(&[("fix", "self-assign-clear")]);
    let run = first_failure(&m, 0..100).expect("this reading fails");
    assert_eq!(run.outcome.verdict(), "invariant", "{}", run.outcome);
    let mut seen_illegal_state = false;
    for seed in 0..300 {
        if let sim::Outcome::Invariant { message, .. } = m.run(seed, false).outcome {
            seen_illegal_state |= message.contains("checkState(isWaitingForFloatingBuffers) failed");
        }
    }
    assert!(seen_illegal_state, "the pool's notification hits the failed checkState");
    // Every run of the minimal scenario ends with a manager registered and
    // not waiting; the message names the thread that cleared the flag, and
    // where (the run ends in main, far from it): either thread, by seed.
    let minimal = flink(&[("fix", "self-assign-clear"), ("scenario", "minimal")]);
    let mut by = std::collections::BTreeSet::new();
    for seed in 0..200 {
        let o = format!("{}", minimal.run(seed, false).outcome);
        assert!(o.contains("is in the pool's listener queue but not waiting"), "seed {seed}: {o}");
        let who = [TASK, WRITER]
            .into_iter()
            .find(|t| o.contains(&format!("(\"{t}\" cleared it at BufferManager.recycle (BufferManager.java:200))")))
            .unwrap_or_else(|| panic!("seed {seed}: who cleared the flag, and where: {o}"));
        by.insert(who);
    }
    assert_eq!(by.len(), 2, "both threads clear it in some run");
    // In the pipeline the blame stays with the proposal's clear even when
    // the manager, registered twice by then, is cleared again as Flink
    // clears it (seed 1616: by notifyBufferAvailable at step 509).
    for seed in [5, 10, 302, 1616, 3054] {
        let o = format!("{}", m.run(seed, false).outcome);
        assert!(o.contains("\" cleared it at BufferManager.recycle (BufferManager.java:200))"), "seed {seed}: {o}");
    }
}

#[test]
fn versions_and_parameters_are_checked() {
    let err = |p: &[(&str, &str)]| {
        let p: Vec<(String, String)> = p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        models::find("flink").unwrap().configure(&p).err().expect("rejected")
    };
    assert!(err(&[("flink-version", "1.15.0")]).contains("accepted: 1.12.5, 1.13.0, 1.13.1"));
    assert!(err(&[("flink-version", "1.13.2"), ("fix", "self-assign")]).contains("already has the merged fix"));
    assert!(err(&[("flink-version", "1.14.0"), ("fix", "self-assign-clear")])
        .contains("--fix self-assign-clear is a proposal for 1.13.0/1.13.1; 1.14.0 already has the merged fix"));
    assert!(
        err(&[("scenario", "minimal"), ("floating", "4")]).contains("--floating applies to --scenario pipeline only")
    );
    assert!(err(&[("channels", "1")]).contains("--channels: 1 is out of range"));
}

#[test]
fn release_1_14_0_runs_its_own_listener_protocol() {
    // FLINK-23466: from 1.14 a manager that took a buffer asks the pool for
    // the rest itself (tryRequestBuffers) and the pool never puts a listener
    // back; FLINK-16641: requestBuffer lowers numRequiredBuffers. 1.13.3 has
    // neither. Seen from the top frame of each event of 40 pipeline runs.
    for (version, is_1_14) in [("1.14.0", true), ("1.13.3", false)] {
        let m = flink(&[("flink-version", version)]);
        let (mut tries, mut pool_puts_back, mut request_lowers) = (0, 0, 0);
        for seed in 0..40 {
            let run = m.run(seed, true);
            assert!(!run.outcome.is_failure(), "{version} seed {seed}: {}", run.outcome);
            let t = run.trace.unwrap();
            for e in &t.events {
                let Some(f) = e.frame.map(|f| &t.frames[f as usize]) else { continue };
                match (f.name.as_str(), e.kind) {
                    ("BufferManager.tryRequestBuffers", _) => tries += 1,
                    // The pool's monitor entered to queue the listener again.
                    ("LocalBufferPool.fireBufferAvailableNotification", EventKind::Enter) => pool_puts_back += 1,
                    ("BufferManager.requestBuffer", EventKind::Value)
                        if e.op.as_deref() == Some("numRequiredBuffers") =>
                    {
                        request_lowers += 1
                    }
                    _ => {}
                }
            }
        }
        if is_1_14 {
            assert!(tries > 0 && request_lowers > 0, "{version}: {tries} tryRequestBuffers, {request_lowers} lowered");
            assert_eq!(pool_puts_back, 0, "{version}: the pool put a listener back");
        } else {
            assert!(pool_puts_back > 0, "{version}: the pool never put a listener back");
            assert_eq!((tries, request_lowers), (0, 0), "{version}");
        }
    }
}

/// The Netty thread's `notifyChannelNonEmpty`, after onBuffer's
/// `receivedBuffers` block, cites its line where a copy of the release's
/// file was read (1.14.0), else onBuffer's first line; never `maybePersist`'s
/// (a read of the sources found it cited there).
#[test]
fn on_buffer_notify_channel_non_empty_cites_its_line() {
    for (version, site) in [
        ("1.13.1", "RemoteInputChannel.java:450"),
        ("1.13.3", "RemoteInputChannel.java:450"),
        ("1.14.0", "RemoteInputChannel.java:571"),
    ] {
        let m = flink(&[("flink-version", version)]);
        let mut sites = std::collections::BTreeSet::new();
        // Seeds where buffers are persisted for a checkpoint, and some where they are not.
        for seed in 0..20 {
            let t = m.run(seed, true).trace.unwrap();
            let gate = t.resources.iter().position(|r| r.name == "SingleInputGate.inputChannelsWithData").unwrap();
            let netty = t.tasks.iter().position(|k| k.name.starts_with("Flink Netty Client")).unwrap();
            sites.extend(
                t.events
                    .iter()
                    .filter(|e| e.task == netty as u32 && e.resource == Some(gate as u32))
                    .filter_map(|e| e.frame.map(|f| &t.frames[f as usize]))
                    .filter(|f| f.name == "RemoteInputChannel.onBuffer")
                    .map(|f| f.site.clone()),
            );
        }
        assert_eq!(sites, [site.to_string()].into(), "{version}");
    }
}
