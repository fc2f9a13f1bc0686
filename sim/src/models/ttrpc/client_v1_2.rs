//! `client.go` at v1.2.x: callers write their own requests under `sendLock`.
//!
//! v1.2.0-v1.2.3 (#107): `createStream` takes `sendLock` while still holding
//! the `streamLock` write lock. When a write blocks under `sendLock`, a second
//! caller waits for `sendLock` holding `streamLock`, and the receive loop
//! waits for `streamLock.RLock` behind that writer: it stops reading.
//!
//! v1.2.4-v1.2.8 (#168, as merged): `sendLock` is the outer lock, held across
//! the id allocation and the write; `streamLock` is taken inside it only for
//! the map insert, so the receive loop never waits behind a write.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use super::channel::{Channel, Conn, LINES_V1_2};
use super::stream::Stream;
use super::versions::ClientDesign;
use super::wire::{Answer, Code, Frame, MessageType, SharedLedger};
use crate::sync::{select, Chan, Mutex, RwMutex};
use crate::{at, frame_at, TaskId};

/// The client.go lines of one v1.2 design.
struct Lines {
    dispatch: &'static str,
    create_stream_call: &'static str,
    delete_stream_call: &'static str,
    wait_response: &'static str,
    delete_stream_lock: &'static str,
    get_stream_rlock: &'static str,
    cleanup_lock: &'static str,
}

const LINES_V1_2_3: Lines = Lines {
    dispatch: "client.go:513",
    create_stream_call: "client.go:519",
    delete_stream_call: "client.go:523",
    wait_response: "client.go:526",
    delete_stream_lock: "client.go:417",
    get_stream_rlock: "client.go:424",
    cleanup_lock: "client.go:431",
};

const LINES_V1_2_4: Lines = Lines {
    dispatch: "client.go:532",
    create_stream_call: "client.go:538",
    delete_stream_call: "client.go:542",
    wait_response: "client.go:545",
    delete_stream_lock: "client.go:436",
    get_stream_rlock: "client.go:443",
    cleanup_lock: "client.go:450",
};

/// `Client` (v1.2.x).
pub struct Client {
    channel: Channel,
    /// `streamLock sync.RWMutex` (client.go:42).
    stream_lock: RwMutex,
    /// `sendLock sync.Mutex` (client.go:45).
    send_lock: Mutex,
    streams: RefCell<BTreeMap<u32, Rc<Stream>>>,
    next_stream_id: Cell<u32>,
    done: Chan<()>,
    closed: Cell<bool>,
    /// After #168: `sendLock` outer.
    send_lock_outer: bool,
    lines: &'static Lines,
    run_task: Cell<TaskId>,
    ledger: SharedLedger,
}

impl Client {
    /// `NewClient`: starts `run` (client.go:134).
    pub fn new(conn: Conn, design: ClientDesign, ledger: SharedLedger) -> Rc<Client> {
        let fixed = design == ClientDesign::V1_2_4;
        let c = Rc::new(Client {
            channel: Channel::new(conn, LINES_V1_2),
            stream_lock: RwMutex::new("streamLock"),
            send_lock: Mutex::new("sendLock"),
            streams: RefCell::new(BTreeMap::new()),
            next_stream_id: Cell::new(1),
            done: Chan::signal("c.ctx.Done()"),
            closed: Cell::new(false),
            send_lock_outer: fixed,
            lines: if fixed { &LINES_V1_2_4 } else { &LINES_V1_2_3 },
            run_task: Cell::new(0),
            ledger,
        });
        c.done.declare_sender();
        let h = crate::spawn_background("Client.run", c.clone().run());
        c.run_task.set(h.id());
        c
    }

    /// `Client.Call` -> `dispatch`, in the caller's goroutine.
    pub async fn call(self: &Rc<Self>, call: u32, registered: bool, payload: u64) -> Answer {
        let _f = frame_at("Client.dispatch", self.lines.dispatch);
        at(self.lines.create_stream_call);
        let Some(s) = self.create_stream(call, registered, payload).await else { return Answer::Closed };
        at(self.lines.wait_response);
        let mut recv = s.recv.recv_case();
        let mut rclose = s.recv_close.recv_case();
        let mut cdone = self.done.recv_case();
        let got = match select(&mut [&mut recv, &mut rclose, &mut cdone], false).await {
            Some(0) => recv.take(),
            Some(1) => {
                // A message already queued wins over the close.
                let mut recv = s.recv.recv_case();
                match select(&mut [&mut recv], true).await {
                    Some(0) => recv.take(),
                    _ => None,
                }
            }
            _ => None,
        };
        // defer c.deleteStream(s)
        at(self.lines.delete_stream_call);
        self.delete_stream(&s).await;
        match got {
            Some(msg) => {
                *self.ledger.borrow_mut().delivered.entry(call).or_default() += 1;
                super::answer_of(&msg)
            }
            None => Answer::Closed,
        }
    }

    /// `Client.createStream` with its request write.
    async fn create_stream(self: &Rc<Self>, call: u32, registered: bool, payload: u64) -> Option<Rc<Stream>> {
        let _f = frame_at("Client.createStream", "client.go:388");
        let frame_for =
            |id| Frame { stream_id: id, typ: MessageType::Request, payload, call, registered, code: Code::Ok };
        if self.send_lock_outer {
            at("client.go:394");
            let send = self.send_lock.lock().await;
            crate::access(self.done.id(), false);
            if self.closed.get() {
                send.unlock().await;
                return None;
            }
            let s = {
                let _g = frame_at("Client.createStream.func1", "client.go:406");
                at("client.go:408");
                let streams = self.stream_lock.lock().await;
                let s = self.new_stream();
                streams.unlock().await;
                s
            };
            at("client.go:428");
            let sent = self.channel.send(frame_for(s.id)).await;
            send.unlock().await;
            sent.ok().map(|_| s)
        } else {
            at("client.go:389");
            let streams = self.stream_lock.lock().await;
            crate::access(self.done.id(), false);
            if self.closed.get() {
                streams.unlock().await;
                return None;
            }
            let s = self.new_stream();
            at("client.go:405");
            let send = self.send_lock.lock().await;
            at("client.go:407");
            streams.unlock().await;
            at("client.go:409");
            let sent = self.channel.send(frame_for(s.id)).await;
            send.unlock().await;
            sent.ok().map(|_| s)
        }
    }

    /// `newStream`, registered under `streamLock` (held by the caller).
    fn new_stream(&self) -> Rc<Stream> {
        let id = self.next_stream_id.get();
        self.next_stream_id.set(id + 2);
        let s = Rc::new(Stream::new(id));
        // The caller receives on it and closes it; the receive loop sends on it
        // and may close it (cleanupStreams) once it finds it in the map.
        s.recv.declare_receiver();
        s.recv.declare_sender_for(self.run_task.get());
        s.recv_close.declare_sender();
        s.recv_close.declare_sender_for(self.run_task.get());
        self.streams.borrow_mut().insert(id, s.clone());
        s
    }

    /// `Client.deleteStream`.
    async fn delete_stream(&self, s: &Stream) {
        let _f = frame_at("Client.deleteStream", self.lines.delete_stream_lock);
        let g = self.stream_lock.lock().await;
        self.streams.borrow_mut().remove(&s.id);
        g.unlock().await;
        s.close_with_error().await;
    }

    /// `Client.getStream` (read lock).
    async fn get_stream(&self, id: u32) -> Option<Rc<Stream>> {
        let _f = frame_at("Client.getStream", self.lines.get_stream_rlock);
        let r = self.stream_lock.rlock().await;
        let s = self.streams.borrow().get(&id).cloned();
        r.runlock().await;
        s
    }

    /// `Client.Close` (client.go:319-326): cancels `c.ctx` and closes the connection.
    pub async fn close(&self) {
        crate::access(self.done.id(), true);
        if !self.closed.replace(true) {
            self.done.close().await;
            self.channel.conn.close().await;
        }
    }

    /// `Client.run` (client.go:339-346).
    async fn run(self: Rc<Self>) {
        let _f = frame_at("Client.run", "client.go:340");
        self.receive_loop().await;
        at("client.go:341");
        self.close().await;
        at("client.go:342");
        let _g = frame_at("Client.cleanupStreams", self.lines.cleanup_lock);
        let g = self.stream_lock.lock().await;
        let streams = std::mem::take(&mut *self.streams.borrow_mut());
        for (_, s) in streams {
            s.close_with_error().await;
        }
        g.unlock().await;
    }

    /// `Client.receiveLoop` (client.go:348-384).
    async fn receive_loop(&self) {
        let _f = frame_at("Client.receiveLoop", "client.go:348");
        self.done.declare_receiver();
        loop {
            at("client.go:359");
            let Ok(msg) = self.channel.recv().await else { return };
            at("client.go:369");
            let Some(s) = self.get_stream(msg.stream_id).await else { continue };
            at("client.go:378");
            s.receive(&self.done, msg).await;
        }
    }
}
