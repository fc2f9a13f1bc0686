//! What travels between client and server: ttrpc frames as message objects
//! beside the bytes, and the ledger the invariants are checked against.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// The 10-byte frame header (length u32, stream id u32, type u8, flags u8).
pub const HEADER_BYTES: u64 = 10;
/// Go's default `bufio` buffer size, used by both `bufio.Writer` and `bufio.Reader`.
pub const BUFIO_SIZE: u64 = 4096;

/// `messageType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageType {
    Request,
    Response,
}

/// A gRPC status code carried in a response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Ok,
    /// v1.0.x/v1.1.x servers: unknown service or method.
    NotFound,
    /// v1.2.x servers: unknown service or method.
    Unimplemented,
    /// v1.2.x servers: a stream id that does not increase.
    InvalidArgument,
}

/// One frame on the wire. The payload's bytes are only counted; the frame
/// object reaches the reader with the frame's last byte.
#[derive(Clone, Debug)]
pub struct Frame {
    pub stream_id: u32,
    pub typ: MessageType,
    pub payload: u64,
    /// Which call this frame belongs to (the model's bookkeeping, not on the wire).
    pub call: u32,
    /// Requests: whether the method is registered on the server.
    pub registered: bool,
    /// Responses: the status.
    pub code: Code,
}

/// A call's answer as the caller sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The response frame of this call.
    Response { call: u32 },
    /// An error status from the server.
    Status(Code),
    /// `ErrClosed`: the client was closed under the call.
    Closed,
}

/// What the invariants are checked against.
#[derive(Default)]
pub struct Ledger {
    /// Answers handed to the caller of each call.
    pub delivered: BTreeMap<u32, u32>,
    /// Stream ids in the order the server read them.
    pub ids_seen: Vec<u32>,
}

pub type SharedLedger = Rc<RefCell<Ledger>>;
