//! `RemoteInputChannel`: received buffers, sender backlog, checkpoint persistence.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use super::buffer_manager::BufferManager;
use super::network_buffer::NetworkBuffer;
use super::Gate;
use crate::sync::Monitor;
use crate::{at, frame_at};

/// One input channel of the gate.
pub struct RemoteInputChannel {
    pub index: usize,
    pub name: &'static str,
    pub bm: BufferManager,
    /// `synchronized (receivedBuffers)`.
    pub received_lock: Monitor,
    pub received: RefCell<VecDeque<NetworkBuffer>>,
    /// `initialCredit`: the number of exclusive buffers.
    pub initial_credit: u32,
    /// Buffers the Netty thread still persists for the pending checkpoint
    /// (the channel is BARRIER_PENDING until the barrier arrives).
    pub persisting: Cell<u32>,
}

impl RemoteInputChannel {
    pub fn new(index: usize, name: &'static str, bm_name: &'static str, initial_credit: u32) -> RemoteInputChannel {
        RemoteInputChannel {
            index,
            name,
            bm: BufferManager::new(index, bm_name),
            received_lock: Monitor::new(format!("{name}.receivedBuffers")),
            received: RefCell::new(VecDeque::new()),
            initial_credit,
            persisting: Cell::new(0),
        }
    }

    /// `onBuffer(buffer, sequenceNumber, backlog)` on the Netty thread:
    /// queue it, persist it for a pending unaligned checkpoint
    /// (`ChannelStatePersister.maybePersist`: retain and hand to the writer),
    /// then `onSenderBacklog`.
    pub async fn on_buffer(&self, g: &Rc<Gate>, buffer: NetworkBuffer, backlog: u32) {
        let _f = frame_at("RemoteInputChannel.onBuffer", g.lines.ric_on_buffer);
        let lock = self.received_lock.enter().await;
        if self.persisting.get() > 0 {
            self.persisting.set(self.persisting.get() - 1);
            at(g.lines.ric_maybe_persist);
            g.hand_to_writer(buffer.retain_buffer().await).await;
        }
        self.received.borrow_mut().push_back(buffer);
        lock.exit().await;
        // Where a release's line of the call is not known, the method's.
        let or_method = |line: &'static str| if line.is_empty() { g.lines.ric_on_buffer } else { line };
        at(or_method(g.lines.ric_notify_non_empty));
        g.notify_channel_non_empty(self.index).await;
        at(or_method(g.lines.ric_on_buffer_backlog));
        self.on_sender_backlog(g, backlog).await;
    }

    /// `onSenderBacklog(backlog)`: `requestFloatingBuffers(backlog + initialCredit)`.
    pub async fn on_sender_backlog(&self, g: &Gate, backlog: u32) {
        let _f = frame_at("RemoteInputChannel.onSenderBacklog", g.lines.ric_on_backlog);
        self.bm.request_floating_buffers(g, backlog + self.initial_credit).await;
    }

    /// `checkpointStarted(barrier)` on the task thread: the queued buffers are
    /// in flight for the checkpoint (`getInflightBuffersUnsafe` retains each
    /// and hands it to the writer), and the next ones the Netty thread
    /// receives before the barrier are persisted too.
    pub async fn checkpoint_started(&self, g: &Gate, persist_next: u32) {
        let _f = frame_at("RemoteInputChannel.checkpointStarted", g.lines.ric_checkpoint_started);
        let lock = self.received_lock.enter().await;
        {
            let _u = frame_at("RemoteInputChannel.getInflightBuffersUnsafe", g.lines.ric_inflight_retain);
            let queued: Vec<NetworkBuffer> = self.received.borrow().iter().cloned().collect();
            for b in queued {
                let retained = b.retain_buffer().await;
                g.hand_to_writer(retained).await;
            }
        }
        self.persisting.set(persist_next);
        lock.exit().await;
    }

    /// `getNextBuffer()` on the task thread: the buffer, and whether more are queued.
    pub async fn get_next_buffer(&self) -> (Option<NetworkBuffer>, bool) {
        let _f = frame_at("RemoteInputChannel.getNextBuffer", "RemoteInputChannel.java:205");
        let lock = self.received_lock.enter().await;
        let b = self.received.borrow_mut().pop_front();
        let more = !self.received.borrow().is_empty();
        lock.exit().await;
        (b, more)
    }
}
