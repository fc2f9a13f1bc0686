//! `stream.go` (v1.2.x): a client stream's receive side, in its two forms.
//!
//! v1.2.0 and v1.2.1: `closeWithError` closes `recv` itself, and `receive`
//! selects on `recv` and the client's context only. v1.2.2 added `recvClose`
//! (containerd/ttrpc#140, against containerd#8390's "send on closed
//! channel" panic): `closeWithError` closes `recvClose` and `recv` stays
//! open.

use super::wire::Frame;
use crate::sync::{select, Chan};
use crate::{at, frame_at};

/// `stream`: `recv` has capacity 1; from v1.2.2, `recvClose` is closed once.
pub struct Stream {
    pub id: u32,
    pub recv: Chan<Frame>,
    /// `None` before v1.2.2.
    pub recv_close: Option<Chan<()>>,
    /// `closeOnce`: the close has begun.
    close_once: std::cell::Cell<bool>,
    /// What `receive` checks first: `recvErr != nil` before v1.2.2, set
    /// after `close(s.recv)`; from v1.2.2 `recvClose` closed (set before it,
    /// with `recvErr`, but `receive` sees only the channel).
    closed: std::cell::Cell<bool>,
}

impl Stream {
    /// `newStream` (stream.go:41; v1.2.0: stream.go:40). `with_recv_close`
    /// from v1.2.2 on.
    pub fn new(id: u32, with_recv_close: bool) -> Stream {
        Stream {
            id,
            recv: Chan::new(crate::numbered!("stream#{}.recv", id), 1),
            recv_close: with_recv_close.then(|| Chan::signal(crate::numbered!("stream#{}.recvClose", id))),
            close_once: std::cell::Cell::new(false),
            closed: std::cell::Cell::new(false),
        }
    }

    /// The resource that stands for the stream's closed state.
    fn state_id(&self) -> crate::rt::ResId {
        self.recv_close.as_ref().map_or(self.recv.id(), |c| c.id())
    }

    /// `stream.closeWithError`: once, closes `recvClose` (stream.go:50-60),
    /// or before v1.2.2 `recv` itself (stream.go:48-61).
    pub async fn close_with_error(&self) {
        // The flags are shared state of the stream; its channel stands for them.
        crate::access(self.state_id(), true);
        if !self.close_once.replace(true) {
            // Set in the step of the close (no scheduling point between):
            // `receive` sees the stream closed exactly when the channel is.
            match &self.recv_close {
                Some(c) => c.close().await,
                None => self.recv.close().await,
            }
            self.closed.set(true);
        }
    }

    /// `stream.receive`, in the client's receive loop: stream.go:66-80
    /// (select at 72), or before v1.2.2 stream.go:67-77 (select at 71),
    /// where a `receive` after the close would send on a closed channel and
    /// panic, as containerd#8390 did.
    pub async fn receive(&self, done: &Chan<()>, msg: Frame) {
        let site = if self.recv_close.is_some() { "stream.go:72" } else { "stream.go:71" };
        let _f = frame_at("stream.receive", site);
        crate::access(self.state_id(), false);
        if self.closed.get() {
            return;
        }
        at(site);
        let mut put = self.recv.send_case(msg);
        let mut cdone = done.recv_case();
        match &self.recv_close {
            Some(c) => {
                let mut closed = c.recv_case();
                select(&mut [&mut closed, &mut put, &mut cdone], false).await;
            }
            None => {
                select(&mut [&mut put, &mut cdone], false).await;
            }
        }
    }
}
