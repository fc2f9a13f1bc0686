//! The Netty thread: receives buffers from the sender as credit allows,
//! each with the sender's backlog.

use std::rc::Rc;

use super::Gate;
use crate::frame_at;

/// The Netty client thread.
pub const THREAD: &str = "Flink Netty Client (40111) Thread 0";

/// Receive `per_channel` buffers on every channel. A channel can receive
/// only into a buffer it has available (credit-based flow control); the
/// sender's backlog after each buffer is a choice in `0..=max_backlog`
/// (bounded by what it still has to send), so backlogs rise and fall.
pub async fn run(g: Rc<Gate>, per_channel: u32, max_backlog: u32) {
    let _f = frame_at(
        "CreditBasedPartitionRequestClientHandler.channelRead",
        "CreditBasedPartitionRequestClientHandler.java:229",
    );
    let mut remaining = vec![per_channel; g.channels.len()];
    while remaining.iter().any(|&r| r > 0) {
        // The sender's view of each channel's credit (read without the lock).
        for ch in &g.channels {
            crate::access(ch.bm.buffer_queue.id(), false);
        }
        let ready: Vec<usize> =
            (0..g.channels.len()).filter(|&c| remaining[c] > 0 && g.channels[c].bm.available() > 0).collect();
        if ready.is_empty() {
            // No credit: wait for the task to recycle buffers.
            crate::time::sleep(1_000).await;
            continue;
        }
        let c = ready[crate::choose(ready.len())];
        let Some(buffer) = g.channels[c].bm.request_buffer(&g).await else { continue };
        remaining[c] -= 1;
        let backlog = (crate::choose(max_backlog as usize + 1) as u32).min(remaining[c]);
        g.channels[c].on_buffer(&g, buffer, backlog).await;
    }
    let lock = g.input_lock.enter().await;
    crate::access(g.input_lock.id(), true);
    g.netty_done.set(true);
    lock.notify_all();
    lock.exit().await;
}
