//! `stream.go` (v1.2.x): a client stream's receive side.

use super::wire::Frame;
use crate::sync::{select, Chan};
use crate::{at, frame_at};

/// `stream`: `recv` has capacity 1 (stream.go:45); `recvClose` is closed once.
pub struct Stream {
    pub id: u32,
    pub recv: Chan<Frame>,
    pub recv_close: Chan<()>,
    closed: std::cell::Cell<bool>,
}

impl Stream {
    /// `newStream` (stream.go:41).
    pub fn new(id: u32) -> Stream {
        Stream {
            id,
            recv: Chan::new(crate::numbered!("stream#{}.recv", id), 1),
            recv_close: Chan::signal(crate::numbered!("stream#{}.recvClose", id)),
            closed: std::cell::Cell::new(false),
        }
    }

    /// `stream.closeWithError` (stream.go:50-60): closes `recvClose` once.
    pub async fn close_with_error(&self) {
        // `closed` is shared state of the stream; its channel stands for it.
        crate::access(self.recv_close.id(), true);
        if !self.closed.replace(true) {
            self.recv_close.close().await;
        }
    }

    /// `stream.receive` (stream.go:66-80), in the client's receive loop.
    pub async fn receive(&self, done: &Chan<()>, msg: Frame) {
        let _f = frame_at("stream.receive", "stream.go:72");
        crate::access(self.recv_close.id(), false);
        if self.closed.get() {
            return;
        }
        at("stream.go:72");
        let mut closed = self.recv_close.recv_case();
        let mut put = self.recv.send_case(msg);
        let mut cdone = done.recv_case();
        select(&mut [&mut closed, &mut put, &mut cdone], false).await;
    }
}
