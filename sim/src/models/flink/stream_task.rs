//! The task thread: `StreamTask` reading its input gate, the deserializer
//! recycling each consumed buffer, and unaligned checkpoints starting.

use std::rc::Rc;

use super::network_buffer::NetworkBuffer;
use super::Gate;
use crate::{frame_at, FrameGuard};

/// The name of the task thread in the original report's thread dump.
pub const THREAD: &str = "Join(xxxxxx) (34/256)#1";

/// The mailbox's default action on the Join's two inputs, as in the
/// report: everything the task thread does with its input (taking a
/// buffer, a barrier's `checkpointStarted`, the record) runs under it.
pub fn input_frames() -> [FrameGuard; 3] {
    [
        frame_at("StreamTask.processInput", "StreamTask.java:423"),
        frame_at("StreamTwoInputProcessor.processInput", "StreamTwoInputProcessor.java:96"),
        frame_at("StreamOneInputProcessor.processInput", "StreamOneInputProcessor.java:66"),
    ]
}

/// `SpillingAdaptiveSpanningRecordDeserializer.getNextRecord`: the record
/// is read, the buffer is consumed, and the deserializer recycles it (under
/// [`input_frames`]).
pub async fn consume(g: &Rc<Gate>, buffer: NetworkBuffer) {
    let _e = frame_at("AbstractStreamTaskNetworkInput.emitNext", "AbstractStreamTaskNetworkInput.java:95");
    let _d = frame_at(
        "SpillingAdaptiveSpanningRecordDeserializer.getNextRecord",
        "SpillingAdaptiveSpanningRecordDeserializer.java:95",
    );
    buffer.recycle_buffer(g.clone()).await;
}

/// The task thread's frames down to its mailbox loop, as the report's
/// thread dump has them (its generated `$$Lambda` frames and `Thread.run`
/// left out).
pub fn mailbox_frames() -> [FrameGuard; 7] {
    [
        frame_at("Task.run", "Task.java:566"),
        frame_at("Task.doRun", "Task.java:779"),
        frame_at("StreamTask.invoke", "StreamTask.java:620"),
        frame_at("StreamTask.runWithCleanUpOnFail", "StreamTask.java:647"),
        frame_at("StreamTask.executeInvoke", "StreamTask.java:636"),
        frame_at("StreamTask.runMailboxLoop", "StreamTask.java:681"),
        frame_at("MailboxProcessor.runMailboxLoop", "MailboxProcessor.java:204"),
    ]
}

/// The pipeline's task thread: consume every buffer the Netty thread
/// delivers; every `checkpoint_interval` buffers, an unaligned checkpoint
/// starts on every channel.
pub async fn run(g: Rc<Gate>, checkpoint_interval: u32, persist_next: u32) {
    let _f = mailbox_frames();
    let mut consumed = 0u32;
    loop {
        // SingleInputGate.getChannel: wait for a channel with data.
        let lock = g.input_lock.enter().await;
        let channel = loop {
            if let Some(c) = g.channels_with_data.borrow_mut().pop_front() {
                break Some(c);
            }
            if g.netty_done.get() {
                break None;
            }
            lock.wait().await;
        };
        lock.exit().await;
        let Some(c) = channel else { break };
        let _i = input_frames();
        let (buffer, more) = g.channels[c].get_next_buffer().await;
        if more {
            g.notify_channel_non_empty(c).await;
        }
        let Some(buffer) = buffer else { continue };
        consumed += 1;
        if consumed % checkpoint_interval == 0 {
            // The barrier: checkpointStarted on every channel.
            for ch in &g.channels {
                ch.checkpoint_started(&g, persist_next).await;
            }
        }
        consume(&g, buffer).await;
    }
    g.writer_finish().await;
}
