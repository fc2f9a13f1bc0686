//! `NetworkBuffer`: a memory segment with a reference count and a recycler.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use super::Gate;
use crate::frame_at;
use crate::sync::AtomicU64;

/// Who gets the segment back when the last reference is released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recycler {
    /// A floating buffer: the gate's `LocalBufferPool`.
    Pool,
    /// An exclusive buffer: the `BufferManager` of channel `i`.
    Manager(usize),
}

/// One reference to a `NetworkBuffer`. Clones share the reference count, as
/// the Java object is shared by the task thread and the channel state writer.
#[derive(Clone, Debug)]
pub struct NetworkBuffer {
    pub segment: u32,
    pub recycler: Recycler,
    /// netty's `refCnt`, an atomic field.
    ref_cnt: AtomicU64,
}

impl NetworkBuffer {
    /// `new NetworkBuffer(segment, recycler)`: one reference.
    pub fn new(segment: u32, recycler: Recycler) -> NetworkBuffer {
        NetworkBuffer { segment, recycler, ref_cnt: AtomicU64::new(crate::numbered!("segment-{}.refCnt", segment), 1) }
    }

    /// `retainBuffer()` (NetworkBuffer.java:166): one more owner.
    pub async fn retain_buffer(&self) -> NetworkBuffer {
        let _f = frame_at("NetworkBuffer.retainBuffer", "NetworkBuffer.java:166");
        self.ref_cnt.fetch_add(1).await;
        self.clone()
    }

    /// `recycleBuffer()` (NetworkBuffer.java:156): releases this reference; the
    /// release that drops the count to zero runs the recycler (`deallocate`,
    /// NetworkBuffer.java:182). The decrement is atomic in Java, and a
    /// scheduling point here, so which thread releases last is explored.
    pub fn recycle_buffer(self, g: Rc<Gate>) -> Pin<Box<dyn Future<Output = ()>>> {
        Box::pin(async move {
            let _f = frame_at("NetworkBuffer.recycleBuffer", "NetworkBuffer.java:156");
            let _r = frame_at("AbstractReferenceCountedByteBuf.release", "AbstractReferenceCountedByteBuf.java:100");
            let before = self.ref_cnt.fetch_sub(1).await;
            crate::check(before > 0, format_args!("segment {} released more often than retained", self.segment));
            if before != 1 {
                return;
            }
            let _h =
                frame_at("AbstractReferenceCountedByteBuf.handleRelease", "AbstractReferenceCountedByteBuf.java:110");
            let _d = frame_at("NetworkBuffer.deallocate", "NetworkBuffer.java:182");
            match self.recycler {
                Recycler::Pool => g.pool.recycle(g.clone(), self.segment).await,
                Recycler::Manager(i) => g.channels[i].bm.recycle(g.clone(), self.segment).await,
            }
        })
    }
}
