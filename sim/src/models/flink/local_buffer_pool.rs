//! `LocalBufferPool`: the gate's floating buffers and its FIFO of listeners.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use super::buffer_manager::NotificationResult;
use super::versions::ListenerApi;
use super::{Gate, Location};
use crate::sync::Monitor;
use crate::{at, frame_at};

/// `LocalBufferPool` of one input gate. The pool's size is fixed in the
/// model, so it never has excess buffers and is never destroyed.
pub struct LocalBufferPool {
    /// `synchronized (availableMemorySegments)`.
    pub lock: Monitor,
    pub available: RefCell<VecDeque<u32>>,
    /// `registeredListeners`: the `BufferManager`s (by channel) waiting for a buffer.
    pub listeners: RefCell<VecDeque<usize>>,
}

impl LocalBufferPool {
    pub fn new(available: VecDeque<u32>, listeners: VecDeque<usize>) -> LocalBufferPool {
        LocalBufferPool {
            lock: Monitor::new("LocalBufferPool.availableMemorySegments"),
            available: RefCell::new(available),
            listeners: RefCell::new(listeners),
        }
    }

    /// `recycle(MemorySegment)` -> `recycle(segment, UNKNOWN_CHANNEL)`: hand the
    /// segment to the first listener that uses it, else keep it. The listener
    /// is called after the pool lock is released (FLINK-9676). (1.13 loops
    /// `while (!notificationResult.isBufferUsed())`, 1.14 `do { } while
    /// (!fireBufferAvailableNotification(..))`: the same steps.)
    pub async fn recycle(&self, g: Rc<Gate>, segment: u32) {
        let _p = frame_at("LocalBufferPool.recycle", g.lines.pool_recycle_public);
        let _f = frame_at("LocalBufferPool.recycle", g.lines.pool_recycle);
        loop {
            at(g.lines.pool_recycle_lock);
            let lock = self.lock.enter().await;
            let listener = self.listeners.borrow_mut().pop_front();
            let Some(listener) = listener else {
                g.place(segment, Location::Pool);
                self.available.borrow_mut().push_back(segment);
                lock.exit().await;
                return;
            };
            // Which manager the segment goes to decides the bug: in the
            // trace, the channel (its index) the pool polled.
            crate::note(Some(self.lock.id()), "registeredListeners.poll", listener as u64);
            lock.exit().await;
            at(g.lines.pool_recycle_fire);
            if self.fire_buffer_available_notification(&g, listener, segment).await {
                return;
            }
        }
    }

    /// `fireBufferAvailableNotification`: offer the segment to `listener`;
    /// true if it took it. Up to 1.13 a listener that needs more goes back
    /// to the end of the queue here; from 1.14 it registers itself again
    /// (`BufferManager.tryRequestBuffers`).
    async fn fire_buffer_available_notification(&self, g: &Rc<Gate>, listener: usize, segment: u32) -> bool {
        let _f = frame_at("LocalBufferPool.fireBufferAvailableNotification", g.lines.pool_fire_notify);
        let bm = &g.channels[listener].bm;
        if g.api == ListenerApi::Boolean {
            return bm.notify_buffer_available_boolean(g, segment).await;
        }
        let result = bm.notify_buffer_available(g, segment).await;
        if result == NotificationResult::BufferUsedNeedMore {
            at(g.lines.pool_fire_register);
            let lock = self.lock.enter().await;
            self.listeners.borrow_mut().push_back(listener);
            lock.exit().await;
        }
        result.is_used()
    }

    /// `requestBuffer()` -> `requestMemorySegment`: a free segment, if any.
    pub async fn request_buffer(&self, g: &Gate) -> Option<u32> {
        let _f = frame_at("LocalBufferPool.requestMemorySegment", g.lines.pool_request);
        let lock = self.lock.enter().await;
        let seg = self.available.borrow_mut().pop_front();
        lock.exit().await;
        seg
    }

    /// `addBufferListener`: registers `listener` only if no segment is free.
    pub async fn add_buffer_listener(&self, g: &Gate, listener: usize) -> bool {
        let _f = frame_at("LocalBufferPool.addBufferListener", g.lines.pool_add_listener);
        let lock = self.lock.enter().await;
        let registered = self.available.borrow().is_empty();
        if registered {
            self.listeners.borrow_mut().push_back(listener);
        }
        lock.exit().await;
        registered
    }
}
