//! `ttrpc`: containerd/ttrpc clients and servers over a bounded pipe (#72,
//! #94, #107, #168).
//!
//! One file per real component: [`channel`] (`channel.go` with Go's bufio),
//! the client designs [`client_v1_0`], [`client_v1_1`], [`client_v1_2`] and
//! [`stream`], the server designs [`server_v1_0`] and [`server_v1_2`].
//! Server and client versions are chosen independently by tag; the
//! workload is `callers` goroutines making `calls` unary calls each.
//!
//! Invariants checked in every run: each call gets exactly one answer (its
//! own response, or an error status for an unregistered method), and stream
//! ids reach the server in increasing order.

pub mod channel;
pub mod client_v1_0;
pub mod client_v1_1;
pub mod client_v1_2;
pub mod server_v1_0;
pub mod server_v1_2;
pub mod stream;
pub mod versions;
pub mod wire;

use std::cell::RefCell;
use std::rc::Rc;

use super::{Configured, Expect, Matrix, Model, ParamKind, ParamSpec, Params, Variant};
use versions::{ClientDesign, ServerDesign, TAGS};
use wire::{Answer, Code, Frame, Ledger, SharedLedger};

/// Bytes of a response that carries only a status.
pub const STATUS_BYTES: u64 = 16;

/// The workload and transport settings.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    pub callers: u32,
    pub calls: u32,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub pipe_buffer: u64,
    pub unregistered_fraction: f64,
}

impl Workload {
    /// Whether call `i` (0-based, over all callers) goes to a registered
    /// method: the unregistered ones are spread evenly, the first at
    /// `1/fraction`.
    pub fn registered(&self, i: u32) -> bool {
        let f = self.unregistered_fraction;
        ((i as f64 + 1.0) * f).floor() == (i as f64 * f).floor()
    }
}

/// The `ttrpc` model.
pub struct Ttrpc;

const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "server", kind: ParamKind::Choice(TAGS), default: "v1.0.2", help: "server tag" },
    ParamSpec { name: "client", kind: ParamKind::Choice(TAGS), default: "v1.0.2", help: "client tag" },
    ParamSpec { name: "callers", kind: ParamKind::Int { min: 1, max: 256 }, default: "6", help: "calling goroutines" },
    ParamSpec { name: "calls", kind: ParamKind::Int { min: 1, max: 10_000 }, default: "2", help: "calls per caller" },
    ParamSpec {
        name: "request-bytes",
        kind: ParamKind::Int { min: 0, max: 4 << 20 },
        default: "4000",
        help: "request payload bytes",
    },
    ParamSpec {
        name: "response-bytes",
        kind: ParamKind::Int { min: 0, max: 4 << 20 },
        default: "4000",
        help: "response payload bytes",
    },
    ParamSpec {
        name: "payload",
        kind: ParamKind::Int { min: 0, max: 4 << 20 },
        default: "4000",
        help: "sets both --request-bytes and --response-bytes (either, given too, wins)",
    },
    ParamSpec {
        name: "pipe-buffer",
        kind: ParamKind::Int { min: 0, max: 1 << 30 },
        default: "0",
        help: "bytes each direction buffers (0: net.Pipe)",
    },
    ParamSpec {
        name: "unregistered-fraction",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "0",
        help: "share of calls to a method the server does not register",
    },
];

const MATRIX_TAGS: [&str; 4] = ["v1.0.2", "v1.1.0", "v1.2.3", "v1.2.4"];

/// The verdict for valid unary calls (design note A.5).
fn expected(server: ServerDesign, client: ClientDesign) -> Expect {
    match (server, client) {
        (ServerDesign::V1_0, ClientDesign::V1_0 | ClientDesign::V1_2_0) => Expect::Deadlock,
        _ => Expect::NoDeadlock,
    }
}

impl Model for Ttrpc {
    fn name(&self) -> &'static str {
        "ttrpc"
    }
    fn about(&self) -> &'static str {
        "containerd/ttrpc client and server over a pipe; --server/--client pick the tags (#72, #94, #107, #168)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn label_params(&self) -> &'static [&'static str] {
        &["server", "client"]
    }
    fn variants(&self) -> Vec<Variant> {
        let mut out = Vec::new();
        for server in ["v1.0.2", "v1.2.3"] {
            for client in MATRIX_TAGS {
                let e = expected(ServerDesign::of(server).unwrap(), ClientDesign::of(client).unwrap());
                out.push(Variant {
                    label: format!("--server {server} --client {client}"),
                    params: vec![("server".into(), server.into()), ("client".into(), client.into())],
                    expect: e,
                });
            }
        }
        out
    }
    fn matrix(&self) -> Option<Matrix> {
        let expect = MATRIX_TAGS
            .iter()
            .map(|s| {
                MATRIX_TAGS
                    .iter()
                    .map(|c| expected(ServerDesign::of(s).unwrap(), ClientDesign::of(c).unwrap()))
                    .collect()
            })
            .collect();
        Some(Matrix {
            row_param: "server",
            rows: MATRIX_TAGS.to_vec(),
            col_param: "client",
            cols: MATRIX_TAGS.to_vec(),
            expect,
        })
    }
    fn configure(&self, given: &[(String, String)]) -> Result<Configured, String> {
        let p = Params::new("ttrpc", PARAMS, given)?;
        let server_tag = versions::parse_tag("server", p.text("server"))?;
        let client_tag = versions::parse_tag("client", p.text("client"))?;
        let payload = p.int("payload")?;
        let request_bytes =
            if p.given("request-bytes") || !p.given("payload") { p.int("request-bytes")? } else { payload };
        let response_bytes =
            if p.given("response-bytes") || !p.given("payload") { p.int("response-bytes")? } else { payload };
        let work = Workload {
            callers: p.int("callers")? as u32,
            calls: p.int("calls")? as u32,
            request_bytes,
            response_bytes,
            pipe_buffer: p.int("pipe-buffer")?,
            unregistered_fraction: p.float("unregistered-fraction")?,
        };
        let server = ServerDesign::of(server_tag).unwrap();
        let client = ClientDesign::of(client_tag).unwrap();
        let mut params = p.normalized();
        for q in params.iter_mut() {
            match q.name.as_str() {
                "server" => q.value = server_tag.to_string(),
                "client" => q.value = client_tag.to_string(),
                "request-bytes" => q.value = request_bytes.to_string(),
                "response-bytes" => q.value = response_bytes.to_string(),
                _ => {}
            }
        }
        params.retain(|q| q.name != "payload");
        Ok(Configured::new("ttrpc", params, move |sim| sim.run(move || main(server, client, client_tag, work))))
    }
}

/// The client of the chosen design.
enum Client {
    V1_0(Rc<client_v1_0::Client>),
    V1_1(Rc<client_v1_1::Client>),
    V1_2(Rc<client_v1_2::Client>),
}

impl Client {
    async fn call(&self, call: u32, registered: bool, payload: u64) -> Answer {
        match self {
            Client::V1_0(c) => c.call(call, registered, payload).await,
            Client::V1_1(c) => c.call(call, registered, payload).await,
            Client::V1_2(c) => c.call(call, registered, payload).await,
        }
    }

    /// The current goroutine is a caller: what it will use, declared before
    /// its first step (see [`client_v1_2::Client::declare_caller`]).
    fn declare_caller(&self) {
        if let Client::V1_2(c) = self {
            c.declare_caller();
        }
    }

    /// The line `Client.Call`'s frame cites: its call of the interceptor
    /// that runs `dispatch` (client.go:132 before v1.2, :134 in v1.2.0 to
    /// v1.2.2, :173 from v1.2.3), the line a Go stack gives for `Call`'s
    /// frame. Between it and `dispatch` a Go stack has a
    /// `defaultClientInterceptor` frame, which the model leaves out.
    fn call_site(&self) -> &'static str {
        match self {
            Client::V1_0(_) | Client::V1_1(_) => "client.go:132",
            Client::V1_2(c) => c.call_site(),
        }
    }

    async fn close(&self) {
        match self {
            Client::V1_0(c) => c.close().await,
            Client::V1_1(c) => c.close().await,
            Client::V1_2(c) => c.close().await,
        }
    }
}

/// A response frame as the caller's answer.
pub fn answer_of(msg: &Frame) -> Answer {
    match msg.code {
        Code::Ok => Answer::Response { call: msg.call },
        code => Answer::Status(code),
    }
}

/// The server read a request: its stream id must be above every earlier one.
/// An invariant of the model, checked in both servers: v1.2's server checks
/// it too (server.go:436, answering InvalidArgument), earlier ones do not,
/// and every client design sends ids in order, so it does not fire.
pub fn check_stream_id(ledger: &SharedLedger, id: u32) {
    let mut l = ledger.borrow_mut();
    let last = l.ids_seen.last().copied();
    l.ids_seen.push(id);
    drop(l);
    if let Some(last) = last {
        crate::check(id > last, format_args!("stream id {id} reached the server after {last}"));
    }
}

/// The test program: a server, a client, `callers` goroutines calling; then `Close`.
pub async fn main(server: ServerDesign, client: ClientDesign, client_tag: &'static str, work: Workload) {
    let _f = crate::frame("main");
    let ledger: SharedLedger = Rc::new(RefCell::new(Ledger::default()));
    let (client_conn, server_conn) = channel::pipe_pair(work.pipe_buffer);
    if !matches!(client, ClientDesign::V1_0 | ClientDesign::V1_1) {
        // From v1.2, `Client.Close` closes the connection: main calls it last.
        client_conn.declare_closer();
    }
    match server {
        ServerDesign::V1_0 => {
            crate::spawn_background("serverConn.run", server_v1_0::run(server_conn, work, ledger.clone()))
        }
        ServerDesign::V1_2 => {
            crate::spawn_background("serverConn.run", server_v1_2::run(server_conn, work, ledger.clone()))
        }
    };
    let c = Rc::new(match client {
        ClientDesign::V1_0 => Client::V1_0(client_v1_0::Client::new(client_conn, ledger.clone())),
        ClientDesign::V1_1 => Client::V1_1(client_v1_1::Client::new(client_conn, ledger.clone())),
        d => Client::V1_2(client_v1_2::Client::new(client_conn, d, client_tag, ledger.clone())),
    });
    let mut callers = Vec::new();
    for i in 0..work.callers {
        let c = c.clone();
        callers.push(crate::spawn(crate::numbered!("caller-{}", i), async move {
            let _f = crate::frame_at("Client.Call", c.call_site());
            c.declare_caller();
            for k in 0..work.calls {
                let call = i * work.calls + k;
                let registered = work.registered(call);
                let answer = c.call(call, registered, work.request_bytes).await;
                let ok = match answer {
                    Answer::Response { call: got } => registered && got == call,
                    Answer::Status(code) => !registered && code != Code::Ok,
                    Answer::Closed => false,
                };
                crate::check(ok, format_args!("call {call} got the wrong answer: {answer:?}"));
            }
        }));
    }
    for h in callers {
        h.join().await;
    }
    for call in 0..work.callers * work.calls {
        let n = ledger.borrow().delivered.get(&call).copied().unwrap_or(0);
        crate::check(n == 1, format_args!("call {call} was answered {n} times"));
    }
    c.close().await;
}
