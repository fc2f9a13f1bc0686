//! `client.go` at v1.0.2 (same design in v1.0.0 and v1.0.1).
//!
//! One `run` goroutine is the only writer: it takes calls from the
//! unbuffered `c.calls` and writes them, and it also takes responses from
//! the receiver over the unbuffered `incoming`. While `run` is blocked in a
//! write, the receiver blocks holding a response and stops reading (#72).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::channel::{Channel, Conn, LINES_V1_0};
use super::wire::{Answer, Frame, MessageType, SharedLedger};
use crate::sync::{select, Chan};
use crate::{at, frame_at};

/// `callRequest`: what a caller hands to `run`.
pub struct CallRequest {
    pub call: u32,
    pub registered: bool,
    pub payload: u64,
    /// `errs`, capacity 1 (client.go:147).
    pub errs: Chan<Answer>,
}

/// `Client` (v1.0.x).
pub struct Client {
    channel: Channel,
    /// `c.calls`, unbuffered (client.go:82).
    calls: Chan<CallRequest>,
    /// `c.ctx.Done()`, closed by `Close`.
    done: Chan<()>,
    closed: Cell<bool>,
    ledger: SharedLedger,
}

impl Client {
    /// `NewClient`: starts `run` (client.go:94). The calling task may `Close` it.
    pub fn new(conn: Conn, ledger: SharedLedger) -> Rc<Client> {
        let c = Rc::new(Client {
            channel: Channel::new(conn, LINES_V1_0),
            calls: Chan::new("c.calls", 0),
            done: Chan::signal("c.ctx.Done()"),
            closed: Cell::new(false),
            ledger,
        });
        c.done.declare_sender();
        crate::spawn_background("Client.run", c.clone().run());
        c
    }

    /// `Client.Call` -> `dispatch` (client.go:146-171), in the caller's goroutine.
    pub async fn call(self: &Rc<Self>, call: u32, registered: bool, payload: u64) -> Answer {
        dispatch(&self.calls, &self.done, call, registered, payload).await
    }

    /// `Client.Close` (client.go:173): cancels `c.ctx`; `run` closes the connection.
    pub async fn close(&self) {
        crate::access(self.done.id(), true);
        if !self.closed.replace(true) {
            self.done.close().await;
        }
    }

    /// `Client.run` (client.go:236-301).
    async fn run(self: Rc<Self>) {
        let _f = frame_at("Client.run", "client.go:236");
        let incoming: Chan<Frame> = Chan::new("incoming", 0);
        let receivers_done = Chan::signal("receiversDone");
        self.calls.declare_receiver();
        incoming.declare_receiver();
        self.done.declare_sender(); // run calls c.Close() when the receiver ends
        self.channel.declare_writer();
        // Closes the connection as it returns.
        self.channel.declare_closer();
        at("client.go:262");
        crate::spawn_background("receiver.run", receive(self.clone(), incoming.clone(), receivers_done.clone()));
        let mut waiters: BTreeMap<u32, CallRequest> = BTreeMap::new();
        let mut stream_id = 1u32;
        loop {
            at("client.go:271");
            let mut call = self.calls.recv_case();
            let mut msg = incoming.recv_case();
            let mut rdone = receivers_done.recv_case();
            let mut closed = self.done.recv_case();
            match select(&mut [&mut call, &mut msg, &mut rdone, &mut closed], false).await {
                Some(0) => {
                    let Some(call) = call.take() else { continue };
                    // run now holds the call's `errs`: it answers on it.
                    call.errs.declare_sender();
                    at("client.go:273");
                    let frame = Frame {
                        stream_id,
                        typ: MessageType::Request,
                        payload: call.payload,
                        call: call.call,
                        registered: call.registered,
                        code: super::wire::Code::Ok,
                    };
                    let sent = {
                        let _g = frame_at("Client.send", "client.go:324");
                        self.channel.send(frame).await
                    };
                    if sent.is_err() {
                        at("client.go:274");
                        call.errs.send(Answer::Closed).await;
                        continue;
                    }
                    waiters.insert(stream_id, call);
                    stream_id += 2;
                }
                Some(1) => {
                    let Some(msg) = msg.take() else { continue };
                    at("client.go:281");
                    let Some(call) = waiters.remove(&msg.stream_id) else { continue };
                    *self.ledger.borrow_mut().delivered.entry(call.call).or_default() += 1;
                    at("client.go:287");
                    call.errs.send(super::answer_of(&msg)).await;
                }
                Some(2) => {
                    // The receiver ended (server closed): setError, c.Close().
                    at("client.go:295");
                    self.close().await;
                }
                _ => {
                    at("client.go:297");
                    for (_, call) in std::mem::take(&mut waiters) {
                        call.errs.send(Answer::Closed).await;
                    }
                    at("client.go:265");
                    self.channel.conn.close().await;
                    return;
                }
            }
        }
    }
}

/// `dispatch` (client.go:146-171) of v1.0.x and v1.1.x, the same code in
/// both: hand the call to the client's goroutine over `c.calls`, then wait
/// for its answer on `errs` (capacity 1).
pub async fn dispatch(calls: &Chan<CallRequest>, done: &Chan<()>, call: u32, registered: bool, payload: u64) -> Answer {
    let _f = frame_at("Client.dispatch", "client.go:146");
    let errs: Chan<Answer> = Chan::new(crate::numbered!("errs#{}", call), 1);
    errs.declare_receiver();
    calls.declare_sender();
    done.declare_receiver();
    at("client.go:155");
    let mut hand = calls.send_case(CallRequest { call, registered, payload, errs: errs.clone() });
    let mut closed = done.recv_case();
    if select(&mut [&mut hand, &mut closed], false).await != Some(0) {
        return Answer::Closed;
    }
    at("client.go:163");
    let mut answer = errs.recv_case();
    let mut closed = done.recv_case();
    match select(&mut [&mut answer, &mut closed], false).await {
        Some(0) => answer.take().unwrap_or(Answer::Closed),
        _ => Answer::Closed,
    }
}

/// `receiver.run` (client.go:203-234): reads frames, hands each to `run`.
async fn receive(c: Rc<Client>, incoming: Chan<Frame>, receivers_done: Chan<()>) {
    let _f = frame_at("receiver.run", "client.go:203");
    incoming.declare_sender();
    receivers_done.declare_sender();
    c.done.declare_receiver();
    c.channel.declare_reader();
    loop {
        at("client.go:212");
        let Ok(msg) = c.channel.recv().await else { break };
        at("client.go:222");
        let mut hand = incoming.send_case(msg);
        let mut closed = c.done.recv_case();
        if select(&mut [&mut hand, &mut closed], false).await != Some(0) {
            break;
        }
    }
    // wg.Done(); the wait group's goroutine closes receiversDone (client.go:258-261).
    receivers_done.close().await;
}
