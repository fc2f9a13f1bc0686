//! `server.go` and `services.go` at v1.2.x: `serverConn.run`.
//!
//! The reader dispatches requests itself: a registered unary method gets its
//! own goroutine, which is the one that waits to hand the response over, so
//! for valid unary calls the reader never stops reading. But a call to an
//! unregistered method, or a stream id that does not increase, makes the
//! reader itself call `sendStatus`, which waits for the main loop.

use std::rc::Rc;

use super::channel::{Channel, Conn, RecvError, LINES_V1_2};
use super::wire::{Code, Frame, MessageType, SharedLedger};
use super::Workload;
use crate::sync::{select, Chan};
use crate::{at, frame_at};

/// `serverConn.run` (server.go:323-561), started by `Server.Serve`.
pub async fn run(conn: Conn, work: Workload, ledger: SharedLedger) {
    let _f = frame_at("serverConn.run", "server.go:323");
    let ch = Rc::new(Channel::new(conn, LINES_V1_2));
    let responses: Chan<Frame> = Chan::new("responses", 0);
    let recv_err: Chan<RecvError> = Chan::new("recvErr", 1);
    let done = Chan::signal("done");
    done.declare_sender();
    responses.declare_receiver();
    recv_err.declare_receiver();
    ch.conn.tx.declare_writer();
    // Closes the connection as it returns.
    ch.conn.declare_closer();
    at("server.go:369");
    crate::spawn_background(
        "serverConn.run.func2",
        reader(ch.clone(), work, responses.clone(), recv_err.clone(), done.clone(), ledger),
    );
    loop {
        at("server.go:508");
        let mut resp = responses.recv_case();
        let mut err = recv_err.recv_case();
        match select(&mut [&mut resp, &mut err], false).await {
            Some(0) => {
                let Some(resp) = resp.take() else { break };
                at("server.go:520");
                if ch.send(resp).await.is_err() {
                    break;
                }
            }
            _ => {
                at("server.go:553");
                break;
            }
        }
    }
    done.close().await;
    ch.conn.close().await;
}

/// `sendStatus` (server.go:351-367): waits for the main loop to take it.
async fn send_status(responses: &Chan<Frame>, done: &Chan<()>, req: &Frame, code: Code) {
    let _f = frame_at("serverConn.run.func1", "server.go:352");
    let resp = Frame {
        stream_id: req.stream_id,
        typ: MessageType::Response,
        payload: super::STATUS_BYTES,
        call: req.call,
        registered: req.registered,
        code,
    };
    let mut hand = responses.send_case(resp);
    let mut closed = done.recv_case();
    select(&mut [&mut hand, &mut closed], false).await;
}

/// The reader goroutine (server.go:369-487).
async fn reader(
    ch: Rc<Channel>,
    work: Workload,
    responses: Chan<Frame>,
    recv_err: Chan<RecvError>,
    done: Chan<()>,
    ledger: SharedLedger,
) {
    let _f = frame_at("serverConn.run.func2", "server.go:369");
    ch.conn.rx.declare_reader();
    responses.declare_sender();
    recv_err.declare_sender();
    done.declare_receiver();
    let mut last_stream_id = 0u32;
    loop {
        at("server.go:380");
        let msg = match ch.recv().await {
            Ok(m) => m,
            Err(e) => {
                at("server.go:384");
                recv_err.send(e).await;
                return;
            }
        };
        super::check_stream_id(&ledger, msg.stream_id);
        if msg.stream_id <= last_stream_id {
            at("server.go:438");
            send_status(&responses, &done, &msg, Code::InvalidArgument).await;
            continue;
        }
        last_stream_id = msg.stream_id;
        at("server.go:473");
        if msg.registered {
            // services.handle, unary: `go func() { ...; respond(...) }()` (services.go:111).
            crate::spawn_background(
                crate::numbered!("serviceSet.handle.func1#{}", msg.stream_id),
                unary(msg, work, responses.clone(), done.clone()),
            );
        } else {
            // status.Errorf(codes.Unimplemented, "method %v") (services.go:154).
            at("server.go:476");
            send_status(&responses, &done, &msg, Code::Unimplemented).await;
        }
    }
}

/// A unary call's goroutine (services.go:111-121): call, then `respond`.
async fn unary(req: Frame, work: Workload, responses: Chan<Frame>, done: Chan<()>) {
    let _f = frame_at("serviceSet.handle.func1", "services.go:120");
    responses.declare_sender();
    done.declare_receiver();
    let resp = Frame {
        stream_id: req.stream_id,
        typ: MessageType::Response,
        payload: work.response_bytes,
        call: req.call,
        registered: true,
        code: Code::Ok,
    };
    // respond (server.go:459-472)
    let _g = frame_at("serverConn.run.func2.2", "server.go:460");
    let mut hand = responses.send_case(resp);
    let mut closed = done.recv_case();
    select(&mut [&mut hand, &mut closed], false).await;
}
