//! `BufferManager`: one input channel's exclusive and floating buffers.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use super::network_buffer::{NetworkBuffer, Recycler};
use super::versions::ListenerApi;
use super::{Fix, Gate, Location};
use crate::sync::Monitor;
use crate::{at, frame_at};

/// `BufferListener.NotificationResult`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotificationResult {
    BufferNotUsed,
    BufferUsedNoNeedMore,
    BufferUsedNeedMore,
}

impl NotificationResult {
    pub fn is_used(self) -> bool {
        self != NotificationResult::BufferNotUsed
    }
}

/// `BufferManager.AvailableBufferQueue`.
#[derive(Default, Debug)]
pub struct AvailableBufferQueue {
    pub floating: VecDeque<u32>,
    pub exclusive: VecDeque<u32>,
}

impl AvailableBufferQueue {
    pub fn available(&self) -> u32 {
        (self.floating.len() + self.exclusive.len()) as u32
    }
}

/// `BufferManager` of one `RemoteInputChannel`.
pub struct BufferManager {
    pub channel: usize,
    /// `synchronized (bufferQueue)`: a reentrant Java monitor; every
    /// `BufferManager`'s monitor is one lock class.
    pub buffer_queue: Monitor,
    pub queue: RefCell<AvailableBufferQueue>,
    /// `numRequiredBuffers`.
    pub num_required: Cell<u32>,
    /// `isWaitingForFloatingBuffers`.
    pub waiting: Cell<bool>,
    /// Who first cleared `waiting` while the manager stayed in the pool's
    /// listener queue, and where: the thread and its innermost frame. An
    /// end-of-run invariant on the flag names it (the run ends in `main`,
    /// far from the code that broke the invariant).
    pub cleared_by: Cell<Option<(crate::TaskId, Option<crate::Frame>)>>,
}

impl BufferManager {
    /// `numRequiredBuffers = n`, noted in the trace.
    pub fn set_num_required(&self, n: u32) {
        if self.num_required.replace(n) != n {
            crate::note(Some(self.buffer_queue.id()), "numRequiredBuffers", n as u64);
        }
    }

    /// `isWaitingForFloatingBuffers = w`, noted in the trace.
    pub fn set_waiting(&self, g: &Gate, w: bool) {
        // The first clear that leaves this manager in the pool's listener
        // queue not waiting breaks the invariant; a later clear (the queue
        // may hold the manager twice by then) only repeats it.
        let stale = !w && self.waiting.get() && g.pool.listeners.borrow().contains(&self.channel);
        if stale && self.cleared_by.get().is_none() {
            self.cleared_by.set(crate::rt::with(|s| Some((s.current, s.top_frame(s.current)))));
        }
        if self.waiting.replace(w) != w {
            crate::note(Some(self.buffer_queue.id()), "isWaitingForFloatingBuffers", w as u64);
        }
    }

    pub fn new(channel: usize, name: &'static str) -> BufferManager {
        BufferManager {
            channel,
            buffer_queue: Monitor::with_class(name, Some("BufferManager.bufferQueue")),
            queue: RefCell::new(AvailableBufferQueue::default()),
            num_required: Cell::new(0),
            waiting: Cell::new(false),
            cleared_by: Cell::new(None),
        }
    }

    /// `recycle(MemorySegment)`: the recycler of this channel's exclusive buffers.
    pub async fn recycle(&self, g: Rc<Gate>, segment: u32) {
        let _f = frame_at("BufferManager.recycle", g.lines.bm_recycle);
        at(g.lines.bm_recycle_lock);
        let lock = self.buffer_queue.enter().await;
        // inputChannel.isReleased() is never true in these scenarios.
        at(g.lines.bm_recycle_add);
        let surplus = self.add_exclusive_buffer(&g, segment);
        let released_floating = match (g.fixed, surplus) {
            (false, Some(floating)) if g.fix != Fix::None && self.waiting.get() => {
                // The report's first proposal: a manager that is itself waiting
                // for floating buffers keeps the surplus one (and, read so,
                // updates its waiting state as notifyBufferAvailable would).
                g.place(floating, Location::Floating(self.channel));
                self.queue.borrow_mut().floating.push_back(floating);
                if g.fix == Fix::SelfAssignClear && self.queue.borrow().available() >= self.num_required.get() {
                    self.set_waiting(&g, false);
                }
                None
            }
            (false, Some(floating)) => {
                // 1.13.1: AvailableBufferQueue.addExclusiveBuffer recycles the
                // surplus floating buffer here, still inside synchronized (bufferQueue).
                let _a =
                    frame_at("BufferManager$AvailableBufferQueue.addExclusiveBuffer", g.lines.add_exclusive_recycle);
                NetworkBuffer::new(floating, Recycler::Pool).recycle_buffer(g.clone()).await;
                None
            }
            (_, surplus) => surplus,
        };
        lock.notify_all();
        lock.exit().await;
        if let Some(floating) = released_floating {
            // 1.13.2+: recycled after the monitor is left.
            at(g.lines.bm_recycle_outside);
            NetworkBuffer::new(floating, Recycler::Pool).recycle_buffer(g.clone()).await;
        }
    }

    /// `AvailableBufferQueue.addExclusiveBuffer` (runs under `bufferQueue`):
    /// adds the exclusive segment; with a surplus, takes one floating segment
    /// out for the caller to recycle.
    fn add_exclusive_buffer(&self, g: &Gate, segment: u32) -> Option<u32> {
        g.place(segment, Location::Exclusive(self.channel));
        let mut q = self.queue.borrow_mut();
        q.exclusive.push_back(segment);
        if q.available() > self.num_required.get() {
            let floating = q.floating.pop_front();
            if let Some(f) = floating {
                g.take(f);
            }
            floating
        } else {
            None
        }
    }

    /// `checkState(isWaitingForFloatingBuffers)`, the first thing
    /// `notifyBufferAvailable` does under `bufferQueue` in every release.
    fn check_state_waiting(&self, g: &Gate) {
        crate::check(
            self.waiting.get(),
            format_args!(
                "IllegalStateException in BufferManager.notifyBufferAvailable of channel {}: \
                 checkState(isWaitingForFloatingBuffers) failed; the channel fails the task",
                g.channels[self.channel].name
            ),
        );
    }

    /// `notifyBufferAvailable(Buffer)` up to 1.13: the pool offers a floating
    /// segment. Called with the pool lock released, possibly by a thread that
    /// holds another manager's `bufferQueue`, or this one's (reentrant).
    pub async fn notify_buffer_available(&self, g: &Rc<Gate>, segment: u32) -> NotificationResult {
        let _f = frame_at("BufferManager.notifyBufferAvailable", g.lines.notify);
        // inputChannel.isReleased() early-out (FLINK-18595): never released here.
        at(g.lines.notify_lock);
        let lock = self.buffer_queue.enter().await;
        self.check_state_waiting(g);
        let result = {
            let mut q = self.queue.borrow_mut();
            if q.available() >= self.num_required.get() {
                self.set_waiting(g, false);
                NotificationResult::BufferNotUsed
            } else {
                g.place(segment, Location::Floating(self.channel));
                q.floating.push_back(segment);
                if q.available() == self.num_required.get() {
                    self.set_waiting(g, false);
                    NotificationResult::BufferUsedNoNeedMore
                } else {
                    NotificationResult::BufferUsedNeedMore
                }
            }
        };
        lock.notify_all();
        lock.exit().await;
        result
    }

    /// `notifyBufferAvailable(Buffer)` from 1.14 (FLINK-23466): the manager
    /// stops waiting at once; if it has enough the buffer goes back to the
    /// pool's caller, else it takes it and, still under `bufferQueue`, asks
    /// the pool for the rest and registers again if it runs dry. True if it
    /// took the buffer.
    pub async fn notify_buffer_available_boolean(&self, g: &Rc<Gate>, segment: u32) -> bool {
        let _f = frame_at("BufferManager.notifyBufferAvailable", g.lines.notify);
        // inputChannel.isReleased() early-out (FLINK-18595): never released here.
        at(g.lines.notify_lock);
        let lock = self.buffer_queue.enter().await;
        self.check_state_waiting(g);
        self.set_waiting(g, false);
        if self.queue.borrow().available() >= self.num_required.get() {
            lock.exit().await;
            return false;
        }
        g.place(segment, Location::Floating(self.channel));
        self.queue.borrow_mut().floating.push_back(segment);
        at(g.lines.notify_try);
        self.try_request_buffers(g).await;
        lock.notify_all();
        lock.exit().await;
        true
    }

    /// `requestFloatingBuffers(numRequired)` (from `onSenderBacklog`): sets
    /// `numRequiredBuffers` (even while waiting), then requests floating
    /// buffers until enough or the pool is empty, registering as a listener
    /// (in 1.14 through `tryRequestBuffers`).
    pub async fn request_floating_buffers(&self, g: &Gate, num_required: u32) -> u32 {
        let _f = frame_at("BufferManager.requestFloatingBuffers", g.lines.request_floating);
        at(g.lines.request_floating_lock);
        let lock = self.buffer_queue.enter().await;
        self.set_num_required(num_required);
        let requested = if g.api == ListenerApi::Boolean {
            at(g.lines.request_floating_try);
            self.try_request_buffers(g).await
        } else {
            self.request_until_enough_or_waiting(g).await
        };
        lock.exit().await;
        requested
    }

    /// `tryRequestBuffers()` (1.14, under `bufferQueue`).
    async fn try_request_buffers(&self, g: &Gate) -> u32 {
        let _f = frame_at("BufferManager.tryRequestBuffers", g.lines.try_request);
        self.request_until_enough_or_waiting(g).await
    }

    /// The request loop (under `bufferQueue`): a floating buffer from the
    /// pool while fewer than `numRequiredBuffers` are available, until the
    /// pool is empty and this manager is registered as its listener.
    async fn request_until_enough_or_waiting(&self, g: &Gate) -> u32 {
        let mut requested = 0;
        while self.queue.borrow().available() < self.num_required.get() && !self.waiting.get() {
            at(g.lines.request_floating_request);
            if let Some(seg) = g.pool.request_buffer(g).await {
                g.take(seg);
                g.place(seg, Location::Floating(self.channel));
                self.queue.borrow_mut().floating.push_back(seg);
                requested += 1;
            } else {
                at(g.lines.request_floating_listener);
                if g.pool.add_buffer_listener(g, self.channel).await {
                    self.set_waiting(g, true);
                    break;
                }
            }
        }
        requested
    }

    /// `requestBuffer()` -> `AvailableBufferQueue.takeBuffer`: a floating
    /// buffer first, else an exclusive one (the Netty thread receives into it).
    pub async fn request_buffer(&self, g: &Gate) -> Option<NetworkBuffer> {
        let _f = frame_at("BufferManager.requestBuffer", g.lines.request_buffer);
        let lock = self.buffer_queue.enter().await;
        if g.api == ListenerApi::Boolean {
            // FLINK-16641: "decrease the number of buffers required to avoid
            // allocating more than required after the buffer is taken". A
            // Java int; the Netty thread sets it again (onSenderBacklog) after
            // every buffer, so in these scenarios it is never 0 here.
            let n = self.num_required.get();
            crate::check(n > 0, "numRequiredBuffers would go below 0 in BufferManager.requestBuffer");
            self.set_num_required(n.saturating_sub(1));
        }
        let taken = {
            let mut q = self.queue.borrow_mut();
            if let Some(s) = q.floating.pop_front() {
                Some(NetworkBuffer::new(s, Recycler::Pool))
            } else {
                q.exclusive.pop_front().map(|s| NetworkBuffer::new(s, Recycler::Manager(self.channel)))
            }
        };
        if let Some(b) = &taken {
            g.take(b.segment);
        }
        lock.exit().await;
        taken
    }

    /// Buffers the sender may fill (its credit).
    pub fn available(&self) -> u32 {
        self.queue.borrow().available()
    }
}
