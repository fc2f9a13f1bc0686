//! `channel.go`: the framed transport over a connection, with Go's
//! `bufio.Writer` and `bufio.Reader` of 4096 bytes on each side.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use super::wire::{Frame, BUFIO_SIZE, HEADER_BYTES};
use crate::sync::{Pipe, PipeClosed, ReadError};
use crate::{at, frame_at};

/// The lines of `channel.go` and `bufio.go` a design's frames cite.
#[derive(Clone, Copy, Debug)]
pub struct Lines {
    pub send: &'static str,
    pub send_payload: &'static str,
    pub send_flush: &'static str,
    pub recv: &'static str,
    pub recv_header: &'static str,
    pub recv_body: &'static str,
}

/// v1.0.x and v1.1.x `channel.go` (the seed's stacks: the payload write is at :127).
pub const LINES_V1_0: Lines = Lines {
    send: "channel.go:122",
    send_payload: "channel.go:127",
    send_flush: "channel.go:132",
    recv: "channel.go:100",
    recv_header: "channel.go:101",
    recv_body: "channel.go:115",
};

/// v1.2.x `channel.go`.
pub const LINES_V1_2: Lines = Lines {
    send: "channel.go:145",
    send_payload: "channel.go:155",
    send_flush: "channel.go:161",
    recv: "channel.go:120",
    recv_header: "channel.go:121",
    recv_body: "channel.go:137",
};

/// One side of a `net.Conn`: the pipe it writes and the pipe it reads.
#[derive(Clone)]
pub struct Conn {
    pub tx: Pipe<Frame>,
    pub rx: Pipe<Frame>,
    /// The payload lengths of the frames this side sends, in order: what the
    /// peer decodes from each header's length field.
    pub tx_lengths: Rc<RefCell<VecDeque<u64>>>,
    pub rx_lengths: Rc<RefCell<VecDeque<u64>>>,
}

impl Conn {
    /// `conn.Close()`: the peer reads end of stream, and this side's reads and
    /// writes (and the peer's writes) fail.
    pub async fn close(&self) {
        self.tx.close_write().await;
        self.rx.close_read().await;
    }

    /// The current goroutine may call [`Conn::close`] (see [`Channel::declare_closer`]).
    pub fn declare_closer(&self) {
        self.tx.declare_write_closer();
        self.rx.declare_read_closer();
    }
}

/// Why `channel.recv` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvError {
    /// `io.EOF` (or `io.ErrUnexpectedEOF` mid-frame): the peer closed.
    Eof,
    /// `io.ErrClosedPipe`: this side closed.
    Closed,
}

/// `channel` with its `bufio.Writer` and `bufio.Reader`.
pub struct Channel {
    pub conn: Conn,
    lines: Lines,
    /// `bw.n`: bytes buffered in the writer.
    bw_n: Cell<u64>,
    /// Bytes read from the connection into the reader's buffer, not yet consumed.
    br_buffered: Cell<u64>,
    /// Frames whose last byte has been read from the connection.
    br_frames: RefCell<VecDeque<Frame>>,
}

impl Channel {
    /// `newChannel(conn)`.
    pub fn new(conn: Conn, lines: Lines) -> Channel {
        Channel { conn, lines, bw_n: Cell::new(0), br_buffered: Cell::new(0), br_frames: RefCell::new(VecDeque::new()) }
    }

    /// The current goroutine writes to the connection. Said when it starts,
    /// so that a wait on the other end is never judged before it is counted.
    pub fn declare_writer(&self) {
        self.conn.tx.declare_writer();
    }

    /// The current goroutine reads from the connection (see [`Channel::declare_writer`]).
    pub fn declare_reader(&self) {
        self.conn.rx.declare_reader();
    }

    /// The current goroutine may close the connection ([`Conn::close`]):
    /// a close releases the peer's reads and writes as a write or a read
    /// would, so the goroutine holds both ends of its side.
    pub fn declare_closer(&self) {
        self.conn.declare_closer();
    }

    /// One `conn.Write` of `n` bytes (the frame rides on it if it is the last).
    async fn conn_write(&self, n: u64, frame: &mut Option<Frame>, last: bool) -> Result<(), PipeClosed> {
        let msg = if last { frame.take() } else { None };
        self.conn.tx.write(n, msg).await
    }

    /// `bufio.(*Writer).Flush`: writes whatever is buffered.
    async fn flush(&self, frame: &mut Option<Frame>) -> Result<(), PipeClosed> {
        let n = self.bw_n.get();
        if n == 0 {
            return Ok(());
        }
        let _f = frame_at("bufio.(*Writer).Flush", "bufio.go:591");
        self.bw_n.set(0);
        self.conn_write(n, frame, true).await
    }

    /// `bufio.(*Writer).Write` of `len` bytes, exactly as Go does it: fill the
    /// buffer and flush it while the rest does not fit, except that with an
    /// empty buffer the rest goes straight to the connection; buffer what fits.
    async fn bufio_write(&self, mut len: u64, frame: &mut Option<Frame>) -> Result<(), PipeClosed> {
        let _f = frame_at("bufio.(*Writer).Write", "bufio.go:618");
        while len > BUFIO_SIZE - self.bw_n.get() {
            if self.bw_n.get() == 0 {
                // "Large write, empty buffer": write directly, all of it.
                at("bufio.go:623");
                let n = len;
                len = 0;
                self.conn_write(n, frame, true).await?;
            } else {
                let fill = BUFIO_SIZE - self.bw_n.get();
                len -= fill;
                self.bw_n.set(BUFIO_SIZE);
                at("bufio.go:627");
                let _g = frame_at("bufio.(*Writer).Flush", "bufio.go:591");
                self.bw_n.set(0);
                self.conn_write(BUFIO_SIZE, frame, len == 0).await?;
            }
        }
        self.bw_n.set(self.bw_n.get() + len);
        Ok(())
    }

    /// `channel.send`: header and payload into the writer, then `Flush`.
    /// Blocks inside the connection write while the peer does not read.
    pub async fn send(&self, frame: Frame) -> Result<(), PipeClosed> {
        let _f = frame_at("channel.send", self.lines.send);
        let payload = frame.payload;
        self.conn.tx_lengths.borrow_mut().push_back(payload);
        let mut frame = Some(frame);
        // writeMessageHeader: 10 bytes into an empty buffer, no I/O.
        self.bufio_write(HEADER_BYTES, &mut frame).await?;
        if payload > 0 {
            at(self.lines.send_payload);
            self.bufio_write(payload, &mut frame).await?;
        }
        at(self.lines.send_flush);
        self.flush(&mut frame).await
    }

    /// `io.ReadFull(ch.br, p[:len])` through `bufio.Reader`: take what is
    /// buffered; with an empty buffer, read straight into `p` when it is at
    /// least a buffer long, else fill the buffer with one `conn.Read`.
    async fn read_full(&self, mut len: u64) -> Result<(), RecvError> {
        let mut got = Vec::new();
        while len > 0 {
            let buffered = self.br_buffered.get();
            if buffered > 0 {
                let t = buffered.min(len);
                self.br_buffered.set(buffered - t);
                len -= t;
                continue;
            }
            let (max, direct) = if len >= BUFIO_SIZE { (len, true) } else { (BUFIO_SIZE, false) };
            let n = match self.conn.rx.read(max, &mut got).await {
                Ok(n) => n,
                // io.EOF before a frame, io.ErrUnexpectedEOF inside one: both end the read loop.
                Err(ReadError::Eof) => return Err(RecvError::Eof),
                Err(ReadError::Closed) => return Err(RecvError::Closed),
            };
            self.br_frames.borrow_mut().extend(got.drain(..));
            if direct {
                len -= n;
            } else {
                self.br_buffered.set(n);
            }
        }
        Ok(())
    }

    /// `channel.recv`: the 10-byte header, then the payload it announces.
    pub async fn recv(&self) -> Result<Frame, RecvError> {
        let _f = frame_at("channel.recv", self.lines.recv);
        at(self.lines.recv_header);
        self.read_full(HEADER_BYTES).await?;
        let len = self.conn.rx_lengths.borrow_mut().pop_front().expect("a header's bytes arrive after it was written");
        at(self.lines.recv_body);
        self.read_full(len).await?;
        Ok(self.br_frames.borrow_mut().pop_front().expect("a frame arrives with its last byte"))
    }
}

/// A connected pair of conns over two pipes of `capacity` bytes (0: `net.Pipe`).
pub fn pipe_pair(capacity: u64) -> (Conn, Conn) {
    let c2s: Pipe<Frame> = Pipe::new("client->server", capacity);
    let s2c: Pipe<Frame> = Pipe::new("server->client", capacity);
    let up = Rc::new(RefCell::new(VecDeque::new()));
    let down = Rc::new(RefCell::new(VecDeque::new()));
    let client = Conn { tx: c2s.clone(), rx: s2c.clone(), tx_lengths: up.clone(), rx_lengths: down.clone() };
    let server = Conn { tx: s2c, rx: c2s, tx_lengths: down, rx_lengths: up };
    (client, server)
}
