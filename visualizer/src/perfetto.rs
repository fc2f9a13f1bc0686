//! Chrome Trace Event JSON, for Perfetto (ui.perfetto.dev) and chrome://tracing.
//!
//! One process for the run; per task, a thread lane named after the task
//! with `running` and `wait <resource>` slices, and below it one lane per
//! lock held at the same time (`hold <lock>` slices, nesting is never
//! required). Flow arrows go from each release of a lock to its next
//! acquire; a counter per pipe follows its buffered bytes (and one per
//! channel its buffered messages); a global instant marks the deadlock, the
//! broken invariant, the panic or the step limit. `otherData` names the run:
//! model, parameters, seed (null for a run a schedule fixed), strategy,
//! verdict, message and schedule string.
//! Waits and holds still open at the end end with the run (their `dur` is
//! what they lasted), and a slice named `still blocked: …` or `still held:
//! …` goes on past the end by a twentieth of the run, so the state a
//! deadlock leaves has a width to see.
//! Timestamps are microseconds of virtual time (the trace's nanoseconds / 1000).
//!
//! ```
//! let trace = visualizer::load("../traces/abba-deadlock.json".as_ref()).unwrap();
//! let json = visualizer::perfetto::export(&trace).unwrap();
//! let v: serde_json::Value = serde_json::from_str(&json).unwrap();
//! assert!(v["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == "hold A"));
//! ```

use std::collections::BTreeMap;

use sim::trace::{EventKind, Trace};

use crate::model::{Hold, Mode, Model, State};
use crate::Error;

const PID: u32 = 1;
/// Thread ids: `1 + task * STRIDE + lane` (lane 0: the task, 1..: its locks).
const STRIDE: u32 = 16;

fn tid(task: u32, lane: u32) -> u32 {
    1 + task * STRIDE + lane.min(STRIDE - 1)
}

/// Virtual nanoseconds as a JSON number of microseconds (exact, no float).
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn js(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// The trace as Chrome Trace Event JSON.
pub fn export(trace: &Trace) -> Result<String, Error> {
    Ok(export_model(&Model::new(trace)?))
}

/// The same, from a derived model.
pub fn export_model(m: &Model) -> String {
    let mut out = Vec::new();
    write_model(m, &mut out).expect("a Vec takes every write");
    String::from_utf8(out).expect("the export is UTF-8")
}

/// [`export_model`]'s text written to `out` as it goes: a long run's export
/// (hundreds of MB) is not also held whole in memory.
///
/// # Errors
/// What `out` returns.
pub fn write_model<W: std::io::Write + ?Sized>(m: &Model, out: &mut W) -> std::io::Result<()> {
    let t = m.trace;
    let mut ev: Vec<String> = Vec::new();
    let meta = &t.meta;
    ev.push(format!(
        r#"{{"ph":"M","pid":{PID},"name":"process_name","args":{{"name":{}}}}}"#,
        js(&format!(
            "deadsim {} {} ({}, strategy {})",
            meta.model,
            crate::layout::run_name(meta),
            meta.verdict,
            meta.strategy
        ))
    ));

    // Lanes: every task, and as many lock lanes as it holds locks at once.
    let mut flows = 0usize;
    // The lane of each hold, by (task, resource, start, mode).
    let mut hold_tid: BTreeMap<(u32, u32, u64, Mode), u32> = BTreeMap::new();
    for i in 0..t.tasks.len() as u32 {
        ev.push(format!(
            r#"{{"ph":"M","pid":{PID},"tid":{},"name":"thread_name","args":{{"name":{}}}}}"#,
            tid(i, 0),
            js(m.task_name(i))
        ));
        ev.push(format!(
            r#"{{"ph":"M","pid":{PID},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}}"#,
            tid(i, 0),
            tid(i, 0)
        ));
        let tt = &m.tasks[i as usize];
        // Lock lanes by interval partitioning (holds are sorted by start).
        let mut lane_end: Vec<u64> = Vec::new();
        for h in &tt.holds {
            let lane = match lane_end.iter().position(|&e| e <= h.start) {
                Some(k) => k,
                None => {
                    lane_end.push(0);
                    let k = lane_end.len() - 1;
                    let name = if k == 0 {
                        format!("{} · locks", m.task_name(i))
                    } else {
                        format!("{} · locks {}", m.task_name(i), k + 1)
                    };
                    let id = tid(i, k as u32 + 1);
                    ev.push(format!(
                        r#"{{"ph":"M","pid":{PID},"tid":{id},"name":"thread_name","args":{{"name":{}}}}}"#,
                        js(&name)
                    ));
                    ev.push(format!(
                        r#"{{"ph":"M","pid":{PID},"tid":{id},"name":"thread_sort_index","args":{{"sort_index":{id}}}}}"#
                    ));
                    k
                }
            };
            // An open hold has a tail past the end (see `still`): its lane
            // takes no later hold.
            lane_end[lane] = if h.open { u64::MAX } else { h.end };
            hold_tid.insert((i, h.resource, h.start, h.mode), tid(i, lane as u32 + 1));
        }
    }

    // Waits and holds still open when the run ends (at a deadlock, the
    // state the report is about) end with it, and may have lasted no time
    // (a wait that began in the last step): a tail slice after each, a
    // twentieth of the run long as the charts' final column, shows them.
    // The tail is a slice of its own, so the open one's `dur` stays what
    // it lasted, for whoever measures it.
    let end_t = m.time(m.end);
    let tail = (end_t / 20).max(1);
    let still = |tid: u32, what: &str, cat: &str| {
        format!(
            r#"{{"ph":"X","pid":{PID},"tid":{tid},"ts":{},"dur":{},"name":{},"cat":"{cat}","args":{{"after_the_end":true}}}}"#,
            us(end_t),
            us(tail),
            js(what)
        )
    };
    let mut body: Vec<(u64, String)> = Vec::new();
    let frame_arg = |f: Option<u32>| -> String {
        match f {
            Some(f) => format!(r#","frame":{}"#, js(&t.frames[f as usize].to_string())),
            None => String::new(),
        }
    };
    for (i, tt) in m.tasks.iter().enumerate() {
        let i = i as u32;
        // Running slices: from the start of the first step (after a clock
        // jump before it) to the end of the last (see `Model::spans`).
        for sp in m.spans(i, 0) {
            if sp.state != State::Running {
                continue;
            }
            let (p, e) = (sp.start.0, sp.end.0);
            let (t0, t1) = (m.time_at(sp.start), m.time_at(sp.end));
            body.push((
                t0,
                format!(
                    r#"{{"ph":"X","pid":{PID},"tid":{},"ts":{},"dur":{},"name":"running","cat":"state","args":{{"steps":"{}..{}"}}}}"#,
                    tid(i, 0),
                    us(t0),
                    us(t1 - t0),
                    p + 1,
                    e
                ),
            ));
        }
        // Waiting slices.
        for b in &tt.blocks {
            let what = match b.resource {
                Some(r) => format!("wait {}", m.resource_name(r)),
                None => format!("wait ({})", b.op),
            };
            // Until the wake, which may come after a clock jump at its step.
            let (t0, t1) = (m.time(b.start), if b.open { end_t } else { m.resume(b.end) });
            let res = b.resource.map(|r| format!(r#","resource":{}"#, js(m.resource_name(r)))).unwrap_or_default();
            body.push((
                t0,
                format!(
                    r#"{{"ph":"X","pid":{PID},"tid":{},"ts":{},"dur":{},"name":{},"cat":"wait","args":{{"op":{}{res}{}{}}}}}"#,
                    tid(i, 0),
                    us(t0),
                    us(t1 - t0),
                    js(&what),
                    js(&b.op),
                    frame_arg(b.frame),
                    if b.open { r#","still_blocked_at_end":true"# } else { "" }
                ),
            ));
            if b.open {
                body.push((end_t, still(tid(i, 0), &format!("still blocked: {what}"), "wait")));
            }
        }
        // Hold slices.
        for h in &tt.holds {
            let lane = hold_tid.get(&(i, h.resource, h.start, h.mode)).copied().unwrap_or(tid(i, 1));
            let name = match h.mode {
                Mode::Exclusive => format!("hold {}", m.resource_name(h.resource)),
                Mode::Read => format!("read-hold {}", m.resource_name(h.resource)),
            };
            let (t0, t1) = (m.time(h.start), if h.open { end_t } else { m.time(h.end) });
            body.push((
                t0,
                format!(
                    r#"{{"ph":"X","pid":{PID},"tid":{lane},"ts":{},"dur":{},"name":{},"cat":"lock","args":{{"resource":{},"kind":{}{}{}}}}}"#,
                    us(t0),
                    us(t1 - t0),
                    js(&name),
                    js(m.resource_name(h.resource)),
                    js(&m.trace.resources[h.resource as usize].kind),
                    frame_arg(h.frame),
                    if h.open { r#","still_held_at_end":true"# } else { "" }
                ),
            ));
            if h.open {
                body.push((end_t, still(lane, &format!("still held: {name}"), "lock")));
            }
        }
    }

    // Flows: each release of a lock to the next acquire of it.
    let lane_of = |h: &Hold| hold_tid.get(&(h.task, h.resource, h.start, h.mode)).copied().unwrap_or(0);
    for r in m.locks() {
        let holds = &m.resources[r as usize].holds;
        for (k, h) in holds.iter().enumerate().filter(|(_, h)| !h.open) {
            // Holds are sorted by start: the next acquire is the first that starts at or after the release.
            let j = holds.partition_point(|n| n.start < h.end);
            let next = holds[j..].iter().enumerate().find(|(o, _)| j + o != k).map(|(_, n)| n);
            if let Some(n) = next {
                flows += 1;
                let (t_rel, t_acq) = (m.time(h.end), m.time(n.start));
                let start_t = m.time(h.start);
                // Bind the start inside the releasing slice, the end to the acquiring one.
                let ts_s = if t_rel > start_t { t_rel - 1 } else { t_rel };
                let id = flows;
                let name = js(&format!("{} handed over", m.resource_name(r)));
                body.push((
                    ts_s,
                    format!(
                        r#"{{"ph":"s","pid":{PID},"tid":{},"ts":{},"id":{id},"name":{name},"cat":"handover"}}"#,
                        lane_of(h),
                        us(ts_s)
                    ),
                ));
                body.push((
                    t_acq,
                    format!(
                        r#"{{"ph":"f","bp":"e","pid":{PID},"tid":{},"ts":{},"id":{id},"name":{name},"cat":"handover"}}"#,
                        lane_of(n),
                        us(t_acq)
                    ),
                ));
            }
        }
    }

    // Counters: pipe bytes, channel messages.
    for (r, res) in t.resources.iter().enumerate() {
        if res.kind == "pipe" {
            for o in &m.resources[r].pipe_ops {
                let ts = m.time(o.pos);
                body.push((
                    ts,
                    format!(
                        r#"{{"ph":"C","pid":{PID},"ts":{},"name":{},"args":{{"buffered bytes":{}}}}}"#,
                        us(ts),
                        js(&format!("pipe {}", res.name)),
                        o.buffered
                    ),
                ));
            }
        }
    }
    for e in &t.events {
        if let (EventKind::Send | EventKind::Recv, Some(r), Some(n)) = (e.kind, e.resource, e.amount) {
            let res = &t.resources[r as usize];
            if res.kind == "chan" {
                body.push((
                    e.time,
                    format!(
                        r#"{{"ph":"C","pid":{PID},"ts":{},"name":{},"args":{{"buffered messages":{n}}}}}"#,
                        us(e.time),
                        js(&format!("chan {}", res.name))
                    ),
                ));
            }
        }
    }
    // Where an invariant broke or a task panicked (the run's one failure:
    // the engine records the first), and the step limit, as the deadlock.
    let end = |name: &str, task: u32, time: u64| {
        format!(
            r#"{{"ph":"i","s":"g","pid":{PID},"tid":{},"ts":{},"name":{},"cat":"outcome","args":{{"message":{}}}}}"#,
            tid(task, 0),
            us(time),
            js(name),
            js(&meta.message)
        )
    };
    for e in &t.events {
        let name = match e.kind {
            EventKind::Check => "invariant violated",
            EventKind::Panic => "panic",
            _ => continue,
        };
        body.push((e.time, end(name, e.task, e.time)));
    }
    if meta.verdict == "step-limit" {
        let last = t.events.last().map_or(0, |e| e.task);
        body.push((meta.time_ns, end("step limit", last, meta.time_ns)));
    }
    if let Some(d) = &t.deadlock {
        body.push((
            d.time,
            format!(
                r#"{{"ph":"i","s":"g","pid":{PID},"tid":{},"ts":{},"name":"deadlock","cat":"deadlock","args":{{"message":{}}}}}"#,
                tid(d.cycle.first().map_or(0, |b| b.task), 0),
                us(d.time),
                js(&meta.message)
            ),
        ));
    }
    // Stable order: by time, then as generated.
    let mut idx: Vec<usize> = (0..body.len()).collect();
    idx.sort_by_key(|&i| (body[i].0, i));

    // The run's identity, as the charts' title block gives it: a run a
    // schedule string fixed (a replay, explore's, a shrunk one) has no seed.
    let params: Vec<String> = meta.params.iter().map(|p| format!("{}={}", p.name, p.value)).collect();
    let seed = if crate::layout::named_by_schedule(meta) { "null".to_string() } else { meta.seed.to_string() };
    write!(
        out,
        "{{\"displayTimeUnit\":\"ns\",\n\"otherData\":{{\"model\":{},\"params\":{},\"seed\":{seed},\"strategy\":{},\
         \"verdict\":{},\"message\":{},\"schedule\":{},\"deadsim\":{}}},\n\"traceEvents\":[\n",
        js(&meta.model),
        js(&params.join(" ")),
        js(&meta.strategy),
        js(&meta.verdict),
        js(&meta.message),
        js(&meta.replay),
        js(&meta.deadsim)
    )?;
    let n = ev.len() + idx.len();
    for (k, line) in ev.iter().chain(idx.iter().map(|&i| &body[i].1)).enumerate() {
        out.write_all(line.as_bytes())?;
        out.write_all(if k + 1 < n { b",\n" } else { b"\n" })?;
    }
    out.write_all(b"]}\n")
}
