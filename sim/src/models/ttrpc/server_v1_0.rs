//! `server.go` at v1.0.2 (same design through v1.1.x): `serverConn.run`.
//!
//! The reader hands every request to the main loop over the unbuffered
//! `requests`; the main loop is the only writer. While it is blocked writing
//! a response, it takes no request, so the reader blocks holding one and
//! stops reading: back-pressure on the client.

use std::rc::Rc;

use super::channel::{Channel, Conn, RecvError, LINES_V1_0};
use super::wire::{Code, Frame, MessageType, SharedLedger};
use super::Workload;
use crate::sync::{select, Chan};
use crate::{at, frame_at};

/// `serverConn.run` (server.go:302-482), started by `Server.Serve` (server.go:127).
pub async fn run(conn: Conn, work: Workload, ledger: SharedLedger) {
    let _f = frame_at("serverConn.run", "server.go:302");
    let ch = Rc::new(Channel::new(conn, LINES_V1_0));
    let responses: Chan<Frame> = Chan::new("responses", 0);
    let requests: Chan<Frame> = Chan::new("requests", 0);
    let recv_err: Chan<RecvError> = Chan::new("recvErr", 1);
    let done = Chan::signal("done");
    done.declare_sender();
    responses.declare_receiver();
    requests.declare_receiver();
    recv_err.declare_receiver();
    ch.conn.tx.declare_writer();
    // Closes the connection as it returns.
    ch.conn.declare_closer();
    at("server.go:332");
    crate::spawn_background(
        "serverConn.run.func1",
        reader(ch.clone(), requests.clone(), recv_err.clone(), done.clone(), ledger),
    );
    let mut handlers = 0u32;
    loop {
        at("server.go:431");
        let mut req = requests.recv_case();
        let mut resp = responses.recv_case();
        let mut err = recv_err.recv_case();
        match select(&mut [&mut req, &mut resp, &mut err], false).await {
            Some(0) => {
                let Some(req) = req.take() else { break };
                at("server.go:434");
                handlers += 1;
                crate::spawn_background(
                    crate::numbered!("serverConn.run.func2#{}", req.stream_id),
                    handler(req, work, responses.clone(), done.clone()),
                );
                let _ = handlers;
            }
            Some(1) => {
                let Some(resp) = resp.take() else { break };
                at("server.go:459");
                if ch.send(resp).await.is_err() {
                    break;
                }
            }
            _ => {
                // io.EOF from the reader (server.go:470): the client went away.
                at("server.go:473");
                break;
            }
        }
    }
    // defers: close(done), conn.Close()
    done.close().await;
    ch.conn.close().await;
}

/// The reader goroutine (server.go:332-413).
async fn reader(
    ch: Rc<Channel>,
    requests: Chan<Frame>,
    recv_err: Chan<RecvError>,
    done: Chan<()>,
    ledger: SharedLedger,
) {
    let _f = frame_at("serverConn.run.func1", "server.go:332");
    ch.conn.rx.declare_reader();
    requests.declare_sender();
    recv_err.declare_sender();
    done.declare_receiver();
    loop {
        at("server.go:362");
        let msg = match ch.recv().await {
            Ok(m) => m,
            Err(e) => {
                at("server.go:366");
                recv_err.send(e).await;
                return;
            }
        };
        super::check_stream_id(&ledger, msg.stream_id);
        at("server.go:404");
        let mut hand = requests.send_case(msg);
        let mut closed = done.recv_case();
        if select(&mut [&mut hand, &mut closed], false).await != Some(0) {
            return;
        }
    }
}

/// A request's handler goroutine (server.go:434-451): `services.call`, then
/// hand the response to the main loop.
async fn handler(req: Frame, work: Workload, responses: Chan<Frame>, done: Chan<()>) {
    let _f = frame_at("serverConn.run.func2", "server.go:438");
    responses.declare_sender();
    done.declare_receiver();
    // services.call: an unknown method is status NotFound "method X" (services.go:119).
    let (code, payload) =
        if req.registered { (Code::Ok, work.response_bytes) } else { (Code::NotFound, super::STATUS_BYTES) };
    let resp =
        Frame { stream_id: req.stream_id, typ: MessageType::Response, payload, call: req.call, registered: true, code };
    at("server.go:444");
    let mut hand = responses.send_case(resp);
    let mut closed = done.recv_case();
    select(&mut [&mut hand, &mut closed], false).await;
}
