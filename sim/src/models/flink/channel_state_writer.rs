//! The channel state writer thread: writes in-flight buffers of unaligned
//! checkpoints, then recycles them.

use std::rc::Rc;

use super::network_buffer::NetworkBuffer;
use super::Gate;
use crate::{frame_at, FrameGuard};

/// The name of the writer thread in the original report's thread dump.
pub const THREAD: &str = "Channel state writer Join(xxxxxx) (34/256)#1";

/// The writer thread's frames below its request loop, as the report's
/// thread dump has them (its generated `$$Lambda` frames and `Thread.run`
/// left out): `run` -> `loop`, where it takes the next request.
pub fn executor_frames() -> [FrameGuard; 2] {
    [
        frame_at("ChannelStateWriteRequestExecutorImpl.run", "ChannelStateWriteRequestExecutorImpl.java:75"),
        frame_at("ChannelStateWriteRequestExecutorImpl.loop", "ChannelStateWriteRequestExecutorImpl.java:96"),
    ]
}

/// `ChannelStateCheckpointWriter.writeInput` -> `write`: the buffer is
/// written, and recycled in `finally`. Reached from the request loop
/// through the dispatcher and the request's lambdas, as in the report.
pub async fn write_input(g: &Rc<Gate>, buffer: NetworkBuffer) {
    let _d =
        frame_at("ChannelStateWriteRequestDispatcherImpl.dispatch", "ChannelStateWriteRequestDispatcherImpl.java:59");
    let _di = frame_at(
        "ChannelStateWriteRequestDispatcherImpl.dispatchInternal",
        "ChannelStateWriteRequestDispatcherImpl.java:82",
    );
    let _e = frame_at("CheckpointInProgressRequest.execute", "ChannelStateWriteRequest.java:212");
    let _b = frame_at("ChannelStateWriteRequest.lambda$buildWriteRequest$2", "ChannelStateWriteRequest.java:93");
    let _l = frame_at("ChannelStateWriteRequest.lambda$write$0", "ChannelStateWriteRequest.java:63");
    let _i = frame_at("ChannelStateCheckpointWriter.writeInput", "ChannelStateCheckpointWriter.java:131");
    let _w = frame_at("ChannelStateCheckpointWriter.write", "ChannelStateCheckpointWriter.java:173");
    {
        // serializer.writeData: the buffer's bytes go to the checkpoint stream.
        let _s = frame_at("ChannelStateSerializerImpl.writeData", "ChannelStateSerializer.java:99");
        crate::yield_now().await;
    }
    // finally { buffer.recycleBuffer(); }
    buffer.recycle_buffer(g.clone()).await;
}

/// `ChannelStateWriteRequestExecutorImpl.run` -> `loop`: take requests until
/// the task is done.
pub async fn run(g: Rc<Gate>) {
    let _f = executor_frames();
    loop {
        let lock = g.writer_lock.enter().await;
        let next = loop {
            if let Some(b) = g.writer_queue.borrow_mut().pop_front() {
                break Some(b);
            }
            if g.writer_done.get() {
                break None;
            }
            lock.wait().await;
        };
        lock.exit().await;
        match next {
            Some(b) => write_input(&g, b).await,
            None => return,
        }
    }
}
