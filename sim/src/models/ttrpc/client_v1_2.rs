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

/// The client.go lines of one v1.2 form.
struct Lines {
    /// `Call`'s `c.interceptor(ctx, creq, cresp, info, c.dispatch)`.
    call: &'static str,
    dispatch: &'static str,
    create_stream_call: &'static str,
    delete_stream_call: &'static str,
    wait_response: &'static str,
    delete_stream_lock: &'static str,
    get_stream_rlock: &'static str,
    cleanup_lock: &'static str,
    /// `createStream` before #168: the function, its `streamLock.Lock`,
    /// `sendLock.Lock`, `streamLock.Unlock` and the write.
    create_stream: [&'static str; 5],
    /// `run`: its `receiveLoop`, `Close` and `cleanupStreams` calls.
    run: [&'static str; 3],
    /// `receiveLoop`: the function, its `channel.recv`, `getStream` and `s.receive`.
    receive_loop: [&'static str; 4],
}

/// v1.2.0 and v1.2.1: no interceptor chaining yet and no `recvClose` form
/// of `RecvMsg` (39 and 6 lines: 45 fewer before `createStream`). Checked against v1.2.1's file; v1.2.0's
/// own is not stored (see the model's README).
const LINES_V1_2_0: Lines = Lines {
    call: "client.go:134",
    dispatch: "client.go:468",
    create_stream_call: "client.go:474",
    delete_stream_call: "client.go:478",
    wait_response: "client.go:480",
    delete_stream_lock: "client.go:372",
    get_stream_rlock: "client.go:379",
    cleanup_lock: "client.go:386",
    create_stream: ["client.go:343", "client.go:344", "client.go:360", "client.go:362", "client.go:364"],
    run: ["client.go:295", "client.go:296", "client.go:297"],
    receive_loop: ["client.go:303", "client.go:314", "client.go:324", "client.go:333"],
};

/// v1.2.2: `recvClose` (ttrpc#140) and no interceptor chaining yet, so 6
/// lines below v1.2.0 in `run` and after, and 39 above v1.2.3. Read from a
/// vendored v1.2.2 client.go; the stored ttrpc repository has no copy at a tag.
const LINES_V1_2_2: Lines = Lines {
    call: "client.go:134",
    dispatch: "client.go:474",
    create_stream_call: "client.go:480",
    delete_stream_call: "client.go:484",
    wait_response: "client.go:487",
    delete_stream_lock: "client.go:378",
    get_stream_rlock: "client.go:385",
    cleanup_lock: "client.go:392",
    create_stream: ["client.go:349", "client.go:350", "client.go:366", "client.go:368", "client.go:370"],
    run: ["client.go:301", "client.go:302", "client.go:303"],
    receive_loop: ["client.go:309", "client.go:320", "client.go:330", "client.go:339"],
};

/// v1.2.3: checked against `client.go` at f984c9b (#152), the last change
/// to it before the tag; v1.2.4's file with `createStream` before #168.
const LINES_V1_2_3: Lines = Lines {
    call: "client.go:173",
    dispatch: "client.go:513",
    create_stream_call: "client.go:519",
    delete_stream_call: "client.go:523",
    wait_response: "client.go:526",
    delete_stream_lock: "client.go:417",
    get_stream_rlock: "client.go:424",
    cleanup_lock: "client.go:431",
    create_stream: ["client.go:388", "client.go:389", "client.go:405", "client.go:407", "client.go:409"],
    run: ["client.go:340", "client.go:341", "client.go:342"],
    receive_loop: ["client.go:348", "client.go:359", "client.go:369", "client.go:378"],
};

/// v1.2.4 to v1.2.8, cited at v1.2.4 (its `createStream` is cited in place).
const LINES_V1_2_4: Lines = Lines {
    call: "client.go:173",
    dispatch: "client.go:532",
    create_stream_call: "client.go:538",
    delete_stream_call: "client.go:542",
    wait_response: "client.go:545",
    delete_stream_lock: "client.go:436",
    get_stream_rlock: "client.go:443",
    cleanup_lock: "client.go:450",
    create_stream: ["client.go:388", "", "", "", ""],
    run: ["client.go:340", "client.go:341", "client.go:342"],
    receive_loop: ["client.go:348", "client.go:359", "client.go:369", "client.go:378"],
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
    /// From v1.2.2: streams have `recvClose`.
    recv_close: bool,
    lines: &'static Lines,
    run_task: Cell<TaskId>,
    ledger: SharedLedger,
}

impl Client {
    /// `NewClient`: starts `run` (client.go:134; v1.2.0 to v1.2.2: client.go:95).
    /// `tag` picks the form within the design: before v1.2.2, no `recvClose`.
    pub fn new(conn: Conn, design: ClientDesign, tag: &str, ledger: SharedLedger) -> Rc<Client> {
        let fixed = design == ClientDesign::V1_2_4;
        let recv_close = !matches!(tag, "v1.2.0" | "v1.2.1");
        let c = Rc::new(Client {
            channel: Channel::new(conn, LINES_V1_2),
            stream_lock: RwMutex::new("streamLock"),
            send_lock: Mutex::new("sendLock"),
            streams: RefCell::new(BTreeMap::new()),
            next_stream_id: Cell::new(1),
            done: Chan::signal("c.ctx.Done()"),
            closed: Cell::new(false),
            send_lock_outer: fixed,
            recv_close,
            lines: match (fixed, tag) {
                (true, _) => &LINES_V1_2_4,
                (false, "v1.2.0" | "v1.2.1") => &LINES_V1_2_0,
                (false, "v1.2.2") => &LINES_V1_2_2,
                (false, _) => &LINES_V1_2_3,
            },
            run_task: Cell::new(0),
            ledger,
        });
        c.done.declare_sender();
        let h = crate::spawn_background("Client.run", c.clone().run());
        c.run_task.set(h.id());
        c
    }

    /// The line of `Call`'s call of the interceptor that runs `dispatch`.
    pub fn call_site(&self) -> &'static str {
        self.lines.call
    }

    /// `Client.Call` -> `dispatch`, in the caller's goroutine.
    pub async fn call(self: &Rc<Self>, call: u32, registered: bool, payload: u64) -> Answer {
        let _f = frame_at("Client.dispatch", self.lines.dispatch);
        at(self.lines.create_stream_call);
        let Some(s) = self.create_stream(call, registered, payload).await else { return Answer::Closed };
        at(self.lines.wait_response);
        let mut recv = s.recv.recv_case();
        let mut cdone = self.done.recv_case();
        let got = match &s.recv_close {
            Some(recv_close) => {
                let mut rclose = recv_close.recv_case();
                match select(&mut [&mut recv, &mut rclose, &mut cdone], false).await {
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
                }
            }
            // Before v1.2.2: `msg, ok := <-s.recv`, closed by closeWithError.
            None => match select(&mut [&mut recv, &mut cdone], false).await {
                Some(0) => recv.take(),
                _ => None,
            },
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
        let _f = frame_at("Client.createStream", self.lines.create_stream[0]);
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
            let [_, at_stream_lock, at_send_lock, at_stream_unlock, at_send] = self.lines.create_stream;
            at(at_stream_lock);
            let streams = self.stream_lock.lock().await;
            crate::access(self.done.id(), false);
            if self.closed.get() {
                streams.unlock().await;
                return None;
            }
            let s = self.new_stream();
            at(at_send_lock);
            let send = self.send_lock.lock().await;
            at(at_stream_unlock);
            streams.unlock().await;
            at(at_send);
            let sent = self.channel.send(frame_for(s.id)).await;
            send.unlock().await;
            sent.ok().map(|_| s)
        }
    }

    /// `newStream`, registered under `streamLock` (held by the caller).
    fn new_stream(&self) -> Rc<Stream> {
        let id = self.next_stream_id.get();
        self.next_stream_id.set(id + 2);
        let s = Rc::new(Stream::new(id, self.recv_close));
        // The caller receives on it and closes it; the receive loop sends on it
        // and may close it (cleanupStreams) once it finds it in the map.
        s.recv.declare_receiver();
        s.recv.declare_sender_for(self.run_task.get());
        if let Some(c) = &s.recv_close {
            c.declare_sender();
            c.declare_sender_for(self.run_task.get());
        } else {
            // Before v1.2.2 the caller's deleteStream closes `recv` itself.
            s.recv.declare_sender();
        }
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

    /// The current goroutine calls: from v1.2 a caller writes its own
    /// request to the connection.
    pub fn declare_caller(&self) {
        self.channel.declare_writer();
    }

    /// `Client.run` (client.go:339-346): `receiveLoop`, then `Close` and
    /// `cleanupStreams`.
    async fn run(self: Rc<Self>) {
        let [receive_loop, close, cleanup] = self.lines.run;
        let _f = frame_at("Client.run", receive_loop);
        self.channel.declare_reader();
        // Closes the connection (`Client.Close`) as the loop ends.
        self.channel.declare_closer();
        self.receive_loop().await;
        at(close);
        self.close().await;
        at(cleanup);
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
        let [func, recv, get_stream, receive] = self.lines.receive_loop;
        let _f = frame_at("Client.receiveLoop", func);
        self.done.declare_receiver();
        loop {
            at(recv);
            let Ok(msg) = self.channel.recv().await else { return };
            at(get_stream);
            let Some(s) = self.get_stream(msg.stream_id).await else { continue };
            at(receive);
            s.receive(&self.done, msg).await;
        }
    }
}
