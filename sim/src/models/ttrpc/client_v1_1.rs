//! `client.go` at v1.1.0 (same design in v1.1.1 and v1.1.2), after #94.
//!
//! Sending and receiving run in separate goroutines that share only the
//! `callMap` mutex, held briefly and never across I/O, so the receiver keeps
//! draining responses while the sender is blocked in a write.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use super::channel::{Channel, Conn, LINES_V1_0};
use super::client_v1_0::CallRequest;
use super::wire::{Answer, Code, Frame, MessageType, SharedLedger};
use crate::sync::{select, Chan, Mutex};

use crate::{at, frame_at};

/// `callMap` (client.go:197-251): calls by stream id, behind `m`. Once
/// aborted it holds no call: `set` and `get` fail with `closeErr`, and a
/// second `abort` does nothing.
struct CallMap {
    m: Mutex,
    calls: RefCell<BTreeMap<u32, CallRequest>>,
    /// `closeErr != nil`: always `ErrClosed` here, so a flag.
    closed: Cell<bool>,
}

impl CallMap {
    /// `callMap.set` (client.go:212): refused after `abort`, handing the call back.
    async fn set(&self, id: u32, call: CallRequest) -> Result<(), CallRequest> {
        let _f = frame_at("callMap.set", "client.go:213");
        let g = self.m.lock().await;
        let r = if self.closed.get() {
            Err(call)
        } else {
            self.calls.borrow_mut().insert(id, call);
            Ok(())
        };
        g.unlock().await;
        r
    }

    /// `callMap.get` (client.go:224): removes and returns the call; after
    /// `abort`, an error (`Err`).
    async fn get(&self, id: u32) -> Result<Option<CallRequest>, ()> {
        let _f = frame_at("callMap.get", "client.go:225");
        let g = self.m.lock().await;
        let call = if self.closed.get() { Err(()) } else { Ok(self.calls.borrow_mut().remove(&id)) };
        g.unlock().await;
        call
    }

    /// `callMap.abort` (client.go:239): answers every waiting call with `err`.
    async fn abort(&self) {
        let _f = frame_at("callMap.abort", "client.go:240");
        let g = self.m.lock().await;
        if !self.closed.get() {
            let calls = std::mem::take(&mut *self.calls.borrow_mut());
            for (_, call) in calls {
                at("client.go:246");
                // Client.run answers here (declared a sender by func1, see `sender`).
                call.errs.send(Answer::Closed).await;
            }
            self.closed.set(true);
        }
        g.unlock().await;
    }
}

/// `Client` (v1.1.x).
pub struct Client {
    channel: Channel,
    calls: Chan<CallRequest>,
    done: Chan<()>,
    closed: Cell<bool>,
    waiters: CallMap,
    ledger: SharedLedger,
    /// Client.run, func1 and func2: any of them may answer a call on its
    /// `errs`, so func1 declares all three its senders as it takes the call.
    goroutines: Cell<[crate::TaskId; 3]>,
}

impl Client {
    /// `NewClient`: starts `run` (client.go:94).
    pub fn new(conn: Conn, ledger: SharedLedger) -> Rc<Client> {
        let c = Rc::new(Client {
            channel: Channel::new(conn, LINES_V1_0),
            calls: Chan::new("c.calls", 0),
            done: Chan::signal("c.ctx.Done()"),
            closed: Cell::new(false),
            waiters: CallMap {
                m: Mutex::new("callMap.m"),
                calls: RefCell::new(BTreeMap::new()),
                closed: Cell::new(false),
            },
            ledger,
            goroutines: Cell::new([0; 3]),
        });
        c.done.declare_sender();
        crate::spawn_background("Client.run", c.clone().run());
        c
    }

    /// `dispatch` (client.go:146-171): unchanged from v1.0.2.
    pub async fn call(self: &Rc<Self>, call: u32, registered: bool, payload: u64) -> Answer {
        super::client_v1_0::dispatch(&self.calls, &self.done, call, registered, payload).await
    }

    /// `Client.Close` (client.go:173): cancels `c.ctx`.
    pub async fn close(&self) {
        crate::access(self.done.id(), true);
        if !self.closed.replace(true) {
            self.done.close().await;
        }
    }

    /// `Client.run` (client.go:253-342).
    async fn run(self: Rc<Self>) {
        let _f = frame_at("Client.run", "client.go:253");
        let receiver_done = Chan::signal("receiverDone");
        self.done.declare_sender();
        self.done.declare_receiver();
        // Closes the connection as it returns.
        self.channel.declare_closer();
        at("client.go:262");
        let func1 = crate::spawn_background("Client.run.func1", sender(self.clone()));
        at("client.go:286");
        let func2 = crate::spawn_background("Client.run.func2", receiver(self.clone(), receiver_done.clone()));
        // Known before either runs: a spawn is no scheduling point.
        self.goroutines.set([crate::task::current(), func1.id(), func2.id()]);
        at("client.go:330");
        let mut rdone = receiver_done.recv_case();
        let mut closed = self.done.recv_case();
        if select(&mut [&mut rdone, &mut closed], false).await == Some(0) {
            at("client.go:334");
            self.close().await;
        } else {
            at("client.go:338");
            self.waiters.abort().await;
        }
        at("client.go:324");
        self.channel.conn.close().await;
    }
}

/// The sender goroutine (client.go:262-281): takes calls, writes them.
async fn sender(c: Rc<Client>) {
    let _f = frame_at("Client.run.func1", "client.go:262");
    c.calls.declare_receiver();
    c.done.declare_receiver();
    c.channel.declare_writer();
    let mut stream_id = 1u32;
    loop {
        at("client.go:265");
        let mut closed = c.done.recv_case();
        let mut call = c.calls.recv_case();
        if select(&mut [&mut closed, &mut call], false).await != Some(1) {
            return;
        }
        let Some(call) = call.take() else { return };
        // The call's answerers, declared as it is taken (its caller declared
        // only the receiving end): this goroutine on a failed write, func2
        // with the response, Client.run's abort.
        for g in c.goroutines.get() {
            call.errs.declare_sender_for(g);
        }
        let (id, errs, payload, call_id, registered) =
            (stream_id, call.errs.clone(), call.payload, call.call, call.registered);
        stream_id += 2;
        at("client.go:271");
        if let Err(call) = c.waiters.set(id, call).await {
            // Client.run aborted the calls: errs is buffered, so should not block.
            at("client.go:272");
            call.errs.send(Answer::Closed).await;
            continue;
        }
        at("client.go:275");
        let frame =
            Frame { stream_id: id, typ: MessageType::Request, payload, call: call_id, registered, code: Code::Ok };
        let sent = {
            let _g = frame_at("Client.send", "client.go:365");
            c.channel.send(frame).await
        };
        if sent.is_err() {
            at("client.go:276");
            errs.send(Answer::Closed).await;
            at("client.go:277");
            let _ = c.waiters.get(id).await;
        }
    }
}

/// The receiver goroutine (client.go:286-321): reads frames, answers calls.
async fn receiver(c: Rc<Client>, receiver_done: Chan<()>) {
    let _f = frame_at("Client.run.func2", "client.go:286");
    receiver_done.declare_sender();
    c.channel.declare_reader();
    loop {
        at("client.go:294");
        let Ok(msg) = c.channel.recv().await else { break };
        at("client.go:309");
        // An error (the calls were aborted) or an unknown stream: logged, and the loop goes on.
        let Ok(Some(call)) = c.waiters.get(msg.stream_id).await else { continue };
        *c.ledger.borrow_mut().delivered.entry(call.call).or_default() += 1;
        at("client.go:318");
        call.errs.send(super::answer_of(&msg)).await;
    }
    receiver_done.close().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As Go's `callMap` after #94: once aborted, `set` and `get` fail (the
    /// sender then answers the call itself) and a second `abort` sends nothing.
    #[test]
    fn an_aborted_call_map_refuses_new_calls_and_aborts_once() {
        let run = crate::Sim::new(0).run(|| async {
            let cm =
                CallMap { m: Mutex::new("callMap.m"), calls: RefCell::new(BTreeMap::new()), closed: Cell::new(false) };
            let call = |n| CallRequest { call: n, registered: true, payload: 1, errs: Chan::new("errs", 1) };
            let first = call(1);
            let errs = first.errs.clone();
            assert!(cm.set(1, first).await.is_ok());
            cm.abort().await;
            assert_eq!(errs.len(), 1);
            assert_eq!(errs.recv().await, Some(Answer::Closed));
            let refused = cm.set(3, call(3)).await.expect_err("set after abort");
            assert_eq!(refused.call, 3);
            assert!(cm.get(1).await.is_err());
            // A second abort answers nothing: the refused call is not in the map.
            cm.abort().await;
            assert!(refused.errs.is_empty());
        });
        assert_eq!(run.outcome, crate::Outcome::Completed);
    }
}
