//! `flink`: Apache Flink's network buffers, FLINK-22946 before and after the
//! fix, and the report's first proposed fix.
//!
//! One file per real class: [`network_buffer`] (`NetworkBuffer`, reference
//! counted), [`local_buffer_pool`] (`LocalBufferPool`), [`buffer_manager`]
//! (`BufferManager` with `AvailableBufferQueue`), [`remote_input_channel`]
//! (`RemoteInputChannel`), and the threads: [`stream_task`] (the task
//! thread), [`netty`] and [`channel_state_writer`].
//!
//! Invariants checked in every run: no segment is lost or recycled twice,
//! the pool's and the channels' segments add up to the total at the end, and
//! every manager in the pool's listener queue is waiting for floating
//! buffers (`checkState(isWaitingForFloatingBuffers)` in `notifyBufferAvailable`).

pub mod buffer_manager;
pub mod channel_state_writer;
pub mod local_buffer_pool;
pub mod netty;
pub mod network_buffer;
pub mod remote_input_channel;
pub mod stream_task;
pub mod versions;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use super::{Configured, Expect, Model, ParamKind, ParamSpec, Params, Variant};
use crate::sync::Monitor;
use local_buffer_pool::LocalBufferPool;
use network_buffer::{NetworkBuffer, Recycler};
use remote_input_channel::RemoteInputChannel;
use versions::{Lines, ListenerApi, VERSIONS};

/// Where a memory segment is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// Free in the `LocalBufferPool`.
    Pool,
    /// A floating buffer queued in channel `i`'s `BufferManager`.
    Floating(usize),
    /// An exclusive buffer queued in channel `i`'s `BufferManager`.
    Exclusive(usize),
    /// Out of every queue: holding data, or being recycled.
    InFlight,
}

/// A proposed fix applied on top of a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fix {
    None,
    /// The report's first proposal, as it is worded: a recycling manager
    /// that is itself waiting for floating buffers keeps its surplus
    /// floating buffer. Nothing else changes: it stays registered and
    /// waiting, as a manager with a surplus may already be (the pool's next
    /// notification finds it has enough and lets the buffer go on).
    SelfAssign,
    /// The same, and the manager also clears `isWaitingForFloatingBuffers`
    /// when it now has enough, as `notifyBufferAvailable` would; it stays in
    /// the pool's listener queue all the same.
    SelfAssignClear,
}

/// One input gate: its pool, its channels, and the threads' queues.
pub struct Gate {
    pub pool: LocalBufferPool,
    pub channels: Vec<RemoteInputChannel>,
    pub lines: &'static Lines,
    /// The release has the merged fix (1.12.5, 1.13.2 and later).
    pub fixed: bool,
    /// How the pool and the managers hand over floating buffers.
    pub api: ListenerApi,
    pub fix: Fix,
    pub locations: RefCell<Vec<Location>>,
    /// `ChannelStateWriteRequestExecutorImpl`'s blocking deque (its thread
    /// loops on `deque.take()`): this monitor stands for the deque's own
    /// lock, which Java code does not name.
    pub writer_lock: Monitor,
    pub writer_queue: RefCell<VecDeque<NetworkBuffer>>,
    pub writer_done: Cell<bool>,
    /// `SingleInputGate.inputChannelsWithData` and its lock: the channels
    /// with queued buffers, as the task thread polls them.
    pub input_lock: Monitor,
    pub channels_with_data: RefCell<VecDeque<usize>>,
    pub netty_done: Cell<bool>,
}

impl Gate {
    /// A segment leaves a queue (pool or manager) and is in flight.
    pub fn take(&self, segment: u32) {
        let mut l = self.locations.borrow_mut();
        let at = l[segment as usize];
        crate::check(at != Location::InFlight, format_args!("segment {segment} taken twice"));
        l[segment as usize] = Location::InFlight;
    }

    /// An in-flight segment goes into a queue; anything else is a segment
    /// recycled twice.
    pub fn place(&self, segment: u32, to: Location) {
        let mut l = self.locations.borrow_mut();
        let at = l[segment as usize];
        crate::check(
            at == Location::InFlight,
            format_args!("segment {segment} recycled twice: already in {at:?}, recycled into {to:?}"),
        );
        l[segment as usize] = to;
    }

    /// `ChannelStateWriteRequestExecutorImpl.submit`: queue a buffer for the writer.
    pub async fn hand_to_writer(&self, buffer: NetworkBuffer) {
        let lock = self.writer_lock.enter().await;
        self.writer_queue.borrow_mut().push_back(buffer);
        lock.notify_all();
        lock.exit().await;
    }

    /// The task is done: the writer drains its queue and stops.
    pub async fn writer_finish(&self) {
        let lock = self.writer_lock.enter().await;
        self.writer_done.set(true);
        lock.notify_all();
        lock.exit().await;
    }

    /// `SingleInputGate.notifyChannelNonEmpty`: channel `c` has data.
    pub async fn notify_channel_non_empty(&self, c: usize) {
        let lock = self.input_lock.enter().await;
        {
            let mut q = self.channels_with_data.borrow_mut();
            if !q.contains(&c) {
                q.push_back(c);
            }
        }
        lock.notify_all();
        lock.exit().await;
    }

    /// The end-of-run invariants.
    fn check_end(&self, total: u32) {
        let l = self.locations.borrow();
        let in_flight = l.iter().filter(|&&x| x == Location::InFlight).count();
        crate::check(in_flight == 0, format_args!("{in_flight} segment(s) lost: never recycled"));
        let pool = self.pool.available.borrow().len();
        let managers: usize = self.channels.iter().map(|c| c.bm.available() as usize).sum();
        crate::check(
            pool + managers == total as usize,
            format_args!("segments do not add up: pool {pool} + channels {managers} != {total}"),
        );
        for &c in self.pool.listeners.borrow().iter() {
            let bm = &self.channels[c].bm;
            if bm.waiting.get() {
                continue;
            }
            // Where the flag was cleared: the code that broke the invariant.
            let by = bm.cleared_by.get().map_or(String::new(), |(t, at)| {
                let name = crate::rt::with(|s| s.tasks[t as usize].name.to_string());
                match at {
                    Some(f) => format!(" (\"{name}\" cleared it at {f})"),
                    None => format!(" (\"{name}\" cleared it)"),
                }
            });
            crate::check(
                false,
                format_args!(
                    "{} is in the pool's listener queue but not waiting for floating buffers{by}: \
                     the pool's next notification fails checkState(isWaitingForFloatingBuffers)",
                    self.channels[c].name
                ),
            );
        }
    }
}

/// The scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// Two channels already registered as listeners, each with a surplus
    /// once its exclusive buffer returns; the task thread and the writer
    /// each release one of two in-flight buffers last.
    Minimal,
    /// The full dynamics from an empty listener queue.
    Pipeline,
    /// One thread recycles into its own manager, which is at the head of the
    /// listener queue: the monitor is re-entered, not deadlocked.
    Reentry,
}

/// Settings of one run.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub fixed: bool,
    pub api: ListenerApi,
    pub lines: &'static Lines,
    pub fix: Fix,
    pub scenario: Scenario,
    pub channels: u32,
    pub exclusive: u32,
    pub floating: u32,
    pub per_channel: u32,
    pub checkpoint_interval: u32,
    pub max_backlog: u32,
    /// Buffers the Netty thread persists after a checkpoint starts, before the barrier.
    pub persist_next: u32,
}

const CHANNEL_NAMES: [&str; 16] = [
    "channel-0",
    "channel-1",
    "channel-2",
    "channel-3",
    "channel-4",
    "channel-5",
    "channel-6",
    "channel-7",
    "channel-8",
    "channel-9",
    "channel-10",
    "channel-11",
    "channel-12",
    "channel-13",
    "channel-14",
    "channel-15",
];
const BQ_NAMES: [&str; 16] = [
    "channel-0.bufferQueue",
    "channel-1.bufferQueue",
    "channel-2.bufferQueue",
    "channel-3.bufferQueue",
    "channel-4.bufferQueue",
    "channel-5.bufferQueue",
    "channel-6.bufferQueue",
    "channel-7.bufferQueue",
    "channel-8.bufferQueue",
    "channel-9.bufferQueue",
    "channel-10.bufferQueue",
    "channel-11.bufferQueue",
    "channel-12.bufferQueue",
    "channel-13.bufferQueue",
    "channel-14.bufferQueue",
    "channel-15.bufferQueue",
];

fn gate(st: &Settings, channels: u32, pool: VecDeque<u32>, listeners: VecDeque<usize>, segments: u32) -> Rc<Gate> {
    Rc::new(Gate {
        pool: LocalBufferPool::new(pool, listeners),
        channels: (0..channels as usize)
            .map(|i| RemoteInputChannel::new(i, CHANNEL_NAMES[i], BQ_NAMES[i], st.exclusive))
            .collect(),
        lines: st.lines,
        fixed: st.fixed,
        api: st.api,
        fix: st.fix,
        locations: RefCell::new(vec![Location::Pool; segments as usize]),
        writer_lock: Monitor::new("ChannelStateWriteRequestExecutorImpl.deque"),
        writer_queue: RefCell::new(VecDeque::new()),
        writer_done: Cell::new(false),
        input_lock: Monitor::new("SingleInputGate.inputChannelsWithData"),
        channels_with_data: RefCell::new(VecDeque::new()),
        netty_done: Cell::new(false),
    })
}

/// Gives channel `c` its queued buffers directly (setup, before any thread runs).
fn setup_channel(g: &Gate, c: usize, exclusive: &[u32], floating: &[u32], num_required: u32, waiting: bool) {
    let bm = &g.channels[c].bm;
    let mut q = bm.queue.borrow_mut();
    for &s in exclusive {
        g.locations.borrow_mut()[s as usize] = Location::Exclusive(c);
        q.exclusive.push_back(s);
    }
    for &s in floating {
        g.locations.borrow_mut()[s as usize] = Location::Floating(c);
        q.floating.push_back(s);
    }
    bm.set_num_required(num_required);
    bm.set_waiting(g, waiting);
}

/// The test program of each scenario.
pub async fn main(st: Settings) {
    let _f = crate::frame("main");
    match st.scenario {
        Scenario::Minimal | Scenario::Reentry => small(st).await,
        Scenario::Pipeline => pipeline(st).await,
    }
}

/// `minimal` and `reentry`: two channels, each with `exclusive` exclusive
/// segments (one of them in flight) and one floating segment; the pool is empty.
async fn small(st: Settings) {
    let e = st.exclusive;
    let total = 2 * (e + 1);
    // Channel c: exclusive segments c*(e+1) .. +e, floating segment c*(e+1)+e.
    let seg = |c: u32, k: u32| c * (e + 1) + k;
    let reentry = st.scenario == Scenario::Reentry;
    let listeners: VecDeque<usize> = if reentry { [0, 1].into() } else { [1, 0].into() };
    let g = gate(&st, 2, VecDeque::new(), listeners, total);
    for c in 0..2u32 {
        let queued: Vec<u32> = (1..e).map(|k| seg(c, k)).collect();
        if reentry && c == 1 {
            // channel-1 still needs a buffer: it takes the one channel-0 gives back.
            setup_channel(&g, 1, &(0..e).map(|k| seg(1, k)).collect::<Vec<_>>(), &[], e + 1, true);
            g.locations.borrow_mut()[seg(1, e) as usize] = Location::Pool;
            g.pool.available.borrow_mut().push_back(seg(1, e));
            continue;
        }
        // available = (e - 1) + 1 = e = numRequired: the returning exclusive buffer is a surplus.
        setup_channel(&g, c as usize, &queued, &[seg(c, e)], e, true);
    }
    if reentry {
        // The pool is empty in this scenario too: channel-1's spare segment is its floating one.
        let s = g.pool.available.borrow_mut().pop_front().unwrap();
        g.locations.borrow_mut()[s as usize] = Location::Floating(1);
        g.channels[1].bm.queue.borrow_mut().floating.push_back(s);
        g.channels[1].bm.set_num_required(e + 2);
        let b = NetworkBuffer::new(seg(0, 0), Recycler::Manager(0));
        g.locations.borrow_mut()[seg(0, 0) as usize] = Location::InFlight;
        let task = {
            let g = g.clone();
            crate::spawn(stream_task::THREAD, async move {
                let _f = stream_task::mailbox_frames();
                let _i = stream_task::input_frames();
                stream_task::consume(&g, b).await
            })
        };
        task.join().await;
        g.check_end(total);
        return;
    }
    // One exclusive buffer of each channel is in flight with two owners: the
    // deserializer and the checkpoint (retained by getInflightBuffersUnsafe).
    let bx = NetworkBuffer::new(seg(0, 0), Recycler::Manager(0));
    let by = NetworkBuffer::new(seg(1, 0), Recycler::Manager(1));
    g.locations.borrow_mut()[seg(0, 0) as usize] = Location::InFlight;
    g.locations.borrow_mut()[seg(1, 0) as usize] = Location::InFlight;
    let (wx, wy) = (bx.retain_buffer().await, by.retain_buffer().await);
    let task = {
        let g = g.clone();
        crate::spawn(stream_task::THREAD, async move {
            let _f = stream_task::mailbox_frames();
            let _i = stream_task::input_frames();
            stream_task::consume(&g, bx).await;
            stream_task::consume(&g, by).await;
        })
    };
    let writer = {
        let g = g.clone();
        crate::spawn(channel_state_writer::THREAD, async move {
            let _f = channel_state_writer::executor_frames();
            channel_state_writer::write_input(&g, wy).await;
            channel_state_writer::write_input(&g, wx).await;
        })
    };
    task.join().await;
    writer.join().await;
    g.check_end(total);
}

/// `pipeline`: every channel starts with its exclusive buffers
/// (`requestExclusiveBuffers`), the pool with the floating ones, no listener.
async fn pipeline(st: Settings) {
    let (c, e) = (st.channels, st.exclusive);
    let total = c * e + st.floating;
    let pool: VecDeque<u32> = (c * e..total).collect();
    let g = gate(&st, c, pool, VecDeque::new(), total);
    for ch in 0..c {
        let ex: Vec<u32> = (ch * e..(ch + 1) * e).collect();
        setup_channel(&g, ch as usize, &ex, &[], e, false);
    }
    let netty = crate::spawn(netty::THREAD, netty::run(g.clone(), st.per_channel, st.max_backlog));
    let task = crate::spawn(stream_task::THREAD, stream_task::run(g.clone(), st.checkpoint_interval, st.persist_next));
    let writer = crate::spawn(channel_state_writer::THREAD, channel_state_writer::run(g.clone()));
    netty.join().await;
    task.join().await;
    writer.join().await;
    g.check_end(total);
}

/// The `flink` model.
pub struct Flink;

const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "flink-version", kind: ParamKind::Choice(VERSIONS), default: "1.13.1", help: "Flink release" },
    ParamSpec {
        name: "fix",
        kind: ParamKind::Choice(&["none", "self-assign", "self-assign-clear"]),
        default: "none",
        help: "a proposed fix on top of 1.13.0/1.13.1",
    },
    ParamSpec {
        name: "scenario",
        kind: ParamKind::Choice(&["minimal", "pipeline", "reentry"]),
        default: "pipeline",
        help: "minimal: the deadlock state, set up; pipeline: the full dynamics; reentry: one thread, own manager",
    },
    ParamSpec {
        name: "channels",
        kind: ParamKind::Int { min: 2, max: 16 },
        default: "2",
        help: "pipeline: input channels",
    },
    ParamSpec {
        name: "exclusive",
        kind: ParamKind::Int { min: 1, max: 8 },
        default: "3",
        help: "exclusive buffers per channel (initialCredit)",
    },
    ParamSpec {
        name: "floating",
        kind: ParamKind::Int { min: 0, max: 64 },
        default: "2",
        help: "pipeline: floating buffers in the pool",
    },
    ParamSpec {
        name: "buffers-per-channel",
        kind: ParamKind::Int { min: 1, max: 100_000 },
        default: "10",
        help: "pipeline: buffers each channel receives",
    },
    ParamSpec {
        name: "checkpoint-interval",
        kind: ParamKind::Int { min: 1, max: 100_000 },
        default: "3",
        help: "pipeline: buffers consumed between checkpoints",
    },
    ParamSpec {
        name: "max-backlog",
        kind: ParamKind::Int { min: 0, max: 64 },
        default: "4",
        help: "pipeline: the largest sender backlog announced",
    },
];

const PIPELINE_ONLY: [&str; 5] = ["channels", "floating", "buffers-per-channel", "checkpoint-interval", "max-backlog"];

impl Model for Flink {
    fn name(&self) -> &'static str {
        "flink"
    }
    fn about(&self) -> &'static str {
        "Apache Flink network buffers under unaligned checkpoints (FLINK-22946); --flink-version, --fix self-assign(-clear)"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn label_params(&self) -> &'static [&'static str] {
        &["flink-version", "scenario"]
    }
    fn variants(&self) -> Vec<Variant> {
        let mut out = Vec::new();
        for scenario in ["minimal", "pipeline"] {
            for (version, expect) in [("1.13.1", Expect::Deadlock), ("1.13.2", Expect::NoDeadlock)] {
                out.push(Variant {
                    label: format!("--flink-version {version} --scenario {scenario}"),
                    params: vec![("flink-version".into(), version.into()), ("scenario".into(), scenario.into())],
                    expect,
                });
            }
        }
        out
    }
    fn configure(&self, given: &[(String, String)]) -> Result<Configured, String> {
        let p = Params::new("flink", PARAMS, given)?;
        let version = p.text("flink-version");
        let fixed = versions::is_fixed(version).ok_or_else(|| {
            format!("--flink-version: `{version}` is not a modelled release (accepted: {})", VERSIONS.join(", "))
        })?;
        let fix = match p.choice("fix")? {
            "none" => Fix::None,
            proposal if fixed => {
                return Err(format!(
                    "--fix {proposal} is a proposal for 1.13.0/1.13.1; {version} already has the merged fix"
                ))
            }
            "self-assign" => Fix::SelfAssign,
            _ => Fix::SelfAssignClear,
        };
        let scenario = match p.choice("scenario")? {
            "minimal" => Scenario::Minimal,
            "reentry" => Scenario::Reentry,
            _ => Scenario::Pipeline,
        };
        if scenario != Scenario::Pipeline {
            if let Some(name) = PIPELINE_ONLY.iter().find(|n| p.given(n)) {
                return Err(format!("--{name} applies to --scenario pipeline only"));
            }
        }
        let st = Settings {
            fixed,
            api: versions::listener_api(version),
            lines: versions::lines_of(version),
            fix,
            scenario,
            channels: p.int("channels")? as u32,
            exclusive: p.int("exclusive")? as u32,
            floating: p.int("floating")? as u32,
            per_channel: p.int("buffers-per-channel")? as u32,
            checkpoint_interval: p.int("checkpoint-interval")? as u32,
            max_backlog: p.int("max-backlog")? as u32,
            persist_next: 1,
        };
        let mut params = p.normalized();
        if scenario != Scenario::Pipeline {
            params.retain(|q| !PIPELINE_ONLY.contains(&q.name.as_str()));
        }
        Ok(Configured::new("flink", params, move |sim| sim.run(move || main(st))))
    }
}
