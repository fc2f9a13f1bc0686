//! The JSON reader and writer.
//!
//! The writer fixes the layout (one event per line, fields in declaration
//! order) so that committed traces diff well and a trace read back and
//! written again is byte-identical.

use std::fmt;
use std::io::Write;
use std::path::Path;

use super::{Trace, FORMAT, VERSION};

/// Why a trace could not be read. Displays as one line naming the problem.
#[derive(Debug)]
pub struct TraceError(pub String);

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TraceError {}

fn write_value<W: Write + ?Sized>(out: &mut W, v: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer(out, v).map_err(std::io::Error::from)
}

fn write_list<W: Write + ?Sized, T: serde::Serialize>(out: &mut W, key: &str, items: &[T]) -> std::io::Result<()> {
    write!(out, "\"{key}\":[")?;
    for (i, item) in items.iter().enumerate() {
        out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
        write_value(out, item)?;
    }
    out.write_all(b"],\n")
}

/// The element on line `line` (1-based) of a trace in the writer's layout,
/// one list item per line: ` at events[12]`; empty when the line is not an
/// item of a list (or the file is laid out otherwise).
fn where_in(text: &str, line: usize) -> String {
    let mut list: Option<(&str, usize)> = None;
    for (i, l) in text.lines().enumerate().take(line) {
        let n = i + 1;
        let key = l.strip_prefix('"').and_then(|k| k.strip_suffix("\":["));
        if let Some(key) = key.filter(|k| ["tasks", "resources", "frames", "events"].contains(k)) {
            list = Some((key, n));
        }
        if n == line {
            return match list {
                Some((key, start)) if l.starts_with('{') => format!(" at {key}[{}]", n - start - 1),
                _ => format!(" at line {line}"),
            };
        }
    }
    String::new()
}

/// The two fields that say what a file is, read before the trace itself so
/// that another file or version gets its own error, not a type error deep in
/// the events. Every other field is skipped unread: building a
/// `serde_json::Value` of the whole file for this took ten times the file's
/// size in memory (2 GB for a 169 MB trace).
struct Header {
    format: Option<serde_json::Value>,
    version: Option<serde_json::Value>,
}

impl<'de> serde::Deserialize<'de> for Header {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Header, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Header;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Header, A::Error> {
                let mut h = Header { format: None, version: None };
                // As a JSON object reads, the last of a repeated key counts.
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match &*key {
                        "format" => h.format = Some(map.next_value()?),
                        "version" => h.version = Some(map.next_value()?),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(h)
            }
        }
        d.deserialize_map(Fields)
    }
}

impl Trace {
    /// The trace as JSON text, in the fixed layout.
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(128 + self.events.len() * 80);
        self.write_json(&mut out).expect("a Vec takes every write");
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }

    /// Writes [`Trace::to_json`]'s text to `out` as it goes, with no copy of
    /// the whole text in memory (a million-step trace is some 170 MB of it).
    ///
    /// ```
    /// let t = sim::Sim::new(0).record(true).run(|| async {}).trace.unwrap();
    /// let mut bytes = Vec::new();
    /// t.write_json(&mut bytes).unwrap();
    /// assert_eq!(bytes, t.to_json().as_bytes());
    /// ```
    ///
    /// # Errors
    /// What `out` returns.
    pub fn write_json<W: Write + ?Sized>(&self, out: &mut W) -> std::io::Result<()> {
        out.write_all(b"{\"format\":")?;
        write_value(out, &self.format)?;
        write!(out, ",\"version\":{},\n\"meta\":", self.version)?;
        write_value(out, &self.meta)?;
        out.write_all(b",\n")?;
        write_list(out, "tasks", &self.tasks)?;
        write_list(out, "resources", &self.resources)?;
        write_list(out, "frames", &self.frames)?;
        write_list(out, "events", &self.events)?;
        out.write_all(b"\"schedule\":")?;
        write_value(out, &self.schedule)?;
        out.write_all(b",\n\"deadlock\":")?;
        write_value(out, &self.deadlock)?;
        out.write_all(b"}\n")
    }

    /// Parses and checks a trace. `origin` names the input in errors (a file name).
    pub fn parse(text: &str, origin: &str) -> Result<Trace, TraceError> {
        // Some Windows editors save JSON with a byte-order mark, which JSON
        // readers may ignore (RFC 8259, section 8.1).
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let header: Header = serde_json::from_str(text).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => {
                TraceError(format!("{origin}: not a deadsim trace (the top level is not an object)"))
            }
            _ => TraceError(format!("{origin}: not JSON ({e})")),
        })?;
        match header.format.as_ref().and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            Some(other) => {
                return Err(TraceError(format!(
                    "{origin}: not a deadsim trace (field `format` is \"{other}\", expected \"{FORMAT}\")"
                )))
            }
            None => {
                return Err(TraceError(format!("{origin}: not a deadsim trace (no field `format` = \"{FORMAT}\")")))
            }
        }
        match header.version.as_ref().and_then(|v| v.as_u64()) {
            Some(v) if v == VERSION as u64 => {}
            Some(v) => {
                return Err(TraceError(format!(
                    "{origin}: trace format version {v} is not supported (this deadsim reads version {VERSION})"
                )))
            }
            None => {
                return Err(TraceError(match header.version {
                    Some(v) if v.is_number() => format!(
                        "{origin}: trace format version {v} is not supported (this deadsim reads version {VERSION})"
                    ),
                    _ => format!("{origin}: field `version` is missing or not a number"),
                }))
            }
        }
        // Parsed again from the text, not the value, for the error's line.
        let trace: Trace = serde_json::from_str(text).map_err(|e| {
            // Only on an error: parsed once more, following the path to the
            // field, which names it in any layout (minified, pretty-printed).
            let mut de = serde_json::Deserializer::from_str(text);
            let at = match serde_path_to_error::deserialize::<_, Trace>(&mut de) {
                Err(p) if p.path().iter().next().is_some() => format!(" at {}", p.path()),
                _ => where_in(text, e.line()),
            };
            TraceError(format!("{origin}: invalid trace{at} ({e})"))
        })?;
        trace.validate().map_err(|e| TraceError(format!("{origin}: {e}")))?;
        Ok(trace)
    }

    /// Parses a trace from a string (see [`Trace::parse`]).
    pub fn from_json(text: &str) -> Result<Trace, TraceError> {
        Trace::parse(text, "trace")
    }

    /// Reads a trace file.
    pub fn read_file(path: &Path) -> Result<Trace, TraceError> {
        use std::io::Read;
        let name = path.display().to_string();
        let cannot = |e: std::io::Error| TraceError(format!("{name}: cannot read ({e})"));
        let mut file = std::fs::File::open(path).map_err(cannot)?;
        // A file that does not start the way JSON can is refused from its first
        // bytes, not read whole (/dev/zero never ends); any JSON value is
        // read whole, for the message that names what it is.
        let mut bytes = Vec::new();
        Read::by_ref(&mut file).take(4096).read_to_end(&mut bytes).map_err(cannot)?;
        let body = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes);
        let json_start = |b: u8| b"{[\"-0123456789tfn".contains(&b);
        if body.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|&b| !json_start(b)) {
            return Trace::parse(&String::from_utf8_lossy(&bytes), &name);
        }
        file.read_to_end(&mut bytes).map_err(cannot)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| TraceError(format!("{name}: cannot read (stream did not contain valid UTF-8)")))?;
        Trace::parse(&text, &name)
    }

    /// Writes the trace to `path` whole or not at all (temporary file, then rename).
    pub fn write_file(&self, path: &Path) -> std::io::Result<()> {
        crate::fsutil::write_atomic_with(path, |out| self.write_json(out))
    }

    /// Checks that every id an event refers to exists, that steps and
    /// virtual time never go back, and that the schedule has a task per step.
    fn validate(&self) -> Result<(), String> {
        if self.events.is_empty() {
            return Err("events: the trace has no events (a run records at least the spawn of main)".into());
        }
        for (i, t) in self.tasks.iter().enumerate() {
            if t.id as usize != i {
                return Err(format!("tasks[{i}].id is {}, expected {i}", t.id));
            }
        }
        for (i, r) in self.resources.iter().enumerate() {
            if r.id as usize != i {
                return Err(format!("resources[{i}].id is {}, expected {i}", r.id));
            }
            if !crate::rt::ResKind::ALL.iter().any(|k| k.as_str() == r.kind) {
                let kinds: Vec<&str> = crate::rt::ResKind::ALL.iter().map(|k| k.as_str()).collect();
                return Err(format!("resources[{i}].kind: {:?}, not one of {}", r.kind, kinds.join(", ")));
            }
            // Channels and pipes have a capacity (0: unbuffered, a net.Pipe); nothing else has.
            match (r.kind.as_str(), r.capacity) {
                ("chan" | "pipe", None) => {
                    return Err(format!("resources[{i}].capacity: null, but a {} has one (0 when unbuffered)", r.kind))
                }
                ("chan" | "pipe", Some(_)) | (_, None) => {}
                (kind, Some(c)) => return Err(format!("resources[{i}].capacity: {c}, but a {kind} has none (null)")),
            }
        }
        if self.meta.message.contains('\n') {
            return Err("meta.message: more than one line (it is the report's one-line summary)".into());
        }
        let (nt, nr, nf) = (self.tasks.len() as u64, self.resources.len() as u64, self.frames.len() as u64);
        let (mut last_step, mut last_time) = (0, 0);
        for (i, e) in self.events.iter().enumerate() {
            if e.task as u64 >= nt {
                return Err(format!("events[{i}].task: {} is not a task id", e.task));
            }
            if let Some(r) = e.resource.filter(|&r| r as u64 >= nr) {
                return Err(format!("events[{i}].resource: {r} is not a resource id"));
            }
            if let Some(f) = e.frame.filter(|&f| f as u64 >= nf) {
                return Err(format!("events[{i}].frame: {f} is not a frame id"));
            }
            if let Some(p) = e.peer.filter(|&p| p as u64 >= nt) {
                return Err(format!("events[{i}].peer: {p} is not a task id"));
            }
            if let Some((j, c)) = e.cases.iter().enumerate().find(|(_, c)| c.resource as u64 >= nr) {
                return Err(format!("events[{i}].cases[{j}].resource: {} is not a resource id", c.resource));
            }
            if let (Some(r), Some(want)) = (e.resource, resource_kinds(e.kind)) {
                let kind = self.resources[r as usize].kind.as_str();
                if !want.contains(&kind) {
                    return Err(format!(
                        "events[{i}]: {} on resource {r} (\"{}\"), which is {} {kind}, not a {}",
                        an_event(e.kind),
                        self.resources[r as usize].name,
                        if kind.starts_with('a') { "an" } else { "a" },
                        want.join(" or ")
                    ));
                }
            }
            if e.kind == super::EventKind::Block {
                self.validate_block(i, e)?;
            }
            // A channel never holds more messages than its capacity (none,
            // unbuffered), a pipe no more bytes (nothing, for a net.Pipe).
            if let Some(r) = e.resource {
                let res = &self.resources[r as usize];
                let level = match res.kind.as_str() {
                    "chan" if matches!(e.kind, super::EventKind::Send | super::EventKind::Recv) => {
                        e.amount.map(|n| ("amount", n, "messages buffered", "channel"))
                    }
                    "pipe" => e.buffered.map(|b| ("buffered", b, "bytes", "pipe")),
                    _ => None,
                };
                let cap = res.capacity.unwrap_or(0);
                if let Some((field, n, what, kind)) = level.filter(|&(_, n, _, _)| n > cap) {
                    return Err(format!(
                        "events[{i}].{field}: {n} {what}, but {kind} {r} (\"{}\") holds at most {cap}",
                        res.name
                    ));
                }
            }
            if e.step < last_step {
                return Err(format!("events[{i}].step: {} goes back from {last_step}", e.step));
            }
            if e.time < last_time {
                return Err(format!("events[{i}].time: {} goes back from {last_time}", e.time));
            }
            last_step = e.step;
            last_time = e.time;
        }
        if let Some((i, t)) = self.schedule.iter().enumerate().find(|(_, &t)| t as u64 >= nt) {
            return Err(format!("schedule[{i}]: {t} is not a task id"));
        }
        // One task per step: a chart reads who ran from here.
        if self.schedule.len() as u64 != self.meta.steps {
            return Err(format!(
                "schedule: {} entries, but meta.steps is {} (one task id per step)",
                self.schedule.len(),
                self.meta.steps
            ));
        }
        if let Some(d) = &self.deadlock {
            let lists = [("cycle", &d.cycle), ("behind", &d.behind)];
            for (list, tasks) in lists {
                for (j, b) in tasks.iter().enumerate() {
                    match self.tasks.get(b.task as usize) {
                        None => return Err(format!("deadlock.{list}[{j}].task: {} is not a task id", b.task)),
                        Some(t) if t.name != b.name => {
                            return Err(format!(
                                "deadlock.{list}[{j}].name: \"{}\", but task {} is \"{}\"",
                                b.name, b.task, t.name
                            ))
                        }
                        Some(_) => {}
                    }
                    if let Some(r) = b.resource.filter(|&r| r as u64 >= nr) {
                        return Err(format!("deadlock.{list}[{j}].resource: {r} is not a resource id"));
                    }
                }
            }
        }
        if last_step > self.meta.steps {
            return Err(format!("events: an event at step {last_step}, but meta.steps is {}", self.meta.steps));
        }
        // A task's events lie between its spawn and its finish, each once,
        // and an event that names a lock, channel or pipe names one. (The
        // deadlock is recorded by the last task that ran, finished or not.)
        let mut life = vec![0u8; self.tasks.len()]; // 0 unspawned, 1 live, 2 finished
        for (i, e) in self.events.iter().enumerate() {
            let kind = || an_event(e.kind);
            if e.resource.is_none() && resource_kinds(e.kind).is_some() {
                return Err(format!("events[{i}]: {} without a resource", kind()));
            }
            let t = e.task as usize;
            match (e.kind, life[t]) {
                (super::EventKind::Spawn, 0) => {
                    // Spawned by a task that is still live (main's own spawn has no spawner).
                    if let Some(p) = e.peer.filter(|&p| life[p as usize] != 1) {
                        let why = if life[p as usize] == 0 { "is not spawned yet" } else { "has finished" };
                        return Err(format!("events[{i}]: task {t} is spawned by task {p}, which {why}"));
                    }
                    life[t] = 1
                }
                (super::EventKind::Spawn, _) => return Err(format!("events[{i}]: task {t} is spawned again")),
                (super::EventKind::Deadlock, _) => {}
                (_, 0) => return Err(format!("events[{i}]: {} of task {t} before its spawn", kind())),
                (_, 2) => return Err(format!("events[{i}]: {} of task {t} after it finished", kind())),
                (super::EventKind::Finish, _) => life[t] = 2,
                _ => {}
            }
        }
        // A task wakes only from a wait: a block or a sleep of its own
        // before the wake, with no wake between.
        let mut waiting = vec![false; self.tasks.len()];
        for (i, e) in self.events.iter().enumerate() {
            let t = e.task as usize;
            match e.kind {
                super::EventKind::Block | super::EventKind::Sleep if waiting[t] => {
                    return Err(format!(
                        "events[{i}]: task {t} {} again, with no wake since its last block or sleep",
                        if e.kind == super::EventKind::Block { "blocks" } else { "sleeps" }
                    ));
                }
                super::EventKind::Block | super::EventKind::Sleep => waiting[t] = true,
                super::EventKind::Wake if !waiting[t] => {
                    return Err(format!("events[{i}]: task {t} wakes, but no block or sleep of it comes before"));
                }
                super::EventKind::Wake => waiting[t] = false,
                _ => {}
            }
        }
        let locks = self.validate_locks()?;
        if last_time > self.meta.time_ns {
            return Err(format!("events: an event at {last_time} ns, but meta.time_ns is {}", self.meta.time_ns));
        }
        if let Some(t) = life.iter().position(|&l| l == 0) {
            return Err(format!(
                "tasks[{t}]: \"{}\" is never spawned (the events have no spawn of it)",
                self.tasks[t].name
            ));
        }
        for (i, t) in self.tasks.iter().enumerate() {
            // A task is spawned by one spawned before it.
            if let Some(p) = t.parent.filter(|&p| p as usize >= i) {
                return Err(format!("tasks[{i}].parent: {p} is not a task spawned before task {i}"));
            }
        }
        // The verdict is one the engine gives, and the deadlock report is
        // there exactly for a deadlock.
        use crate::outcome::VERDICTS;
        let verdict = self.meta.verdict.as_str();
        if !VERDICTS.contains(&verdict) {
            return Err(format!("meta.verdict: \"{verdict}\" is not a verdict ({})", VERDICTS.join(", ")));
        }
        // A strategy of the caller's own may have any name but none; one
        // named as PCT has a depth (the library's `PctStrategy` takes any,
        // `deadsim render` runs 1 to 10 again from the seed, others from the
        // schedule string).
        let strategy = self.meta.strategy.as_str();
        if strategy.is_empty() {
            return Err("meta.strategy: empty (random, pct:D, replay, dfs, shrink, or a strategy's own name)".into());
        }
        if let Some(d) = strategy.strip_prefix("pct:") {
            if !d.parse::<u32>().is_ok_and(|d| d >= 1) {
                return Err(format!("meta.strategy: \"{strategy}\": a PCT depth is a whole number from 1 (pct:3)"));
            }
        }
        match (&self.deadlock, verdict == "deadlock") {
            (None, true) => return Err("deadlock: missing, but meta.verdict is \"deadlock\"".into()),
            (Some(_), false) => {
                return Err(format!("deadlock: a deadlock report, but meta.verdict is \"{verdict}\""));
            }
            (Some(d), true) if d.cycle.is_empty() && d.behind.is_empty() => {
                return Err(
                    "deadlock: a report that names no task (deadlock.cycle and deadlock.behind are both empty)".into(),
                );
            }
            (Some(d), true) if d.step > self.meta.steps => {
                return Err(format!("deadlock.step: {}, but meta.steps is {}", d.step, self.meta.steps));
            }
            _ => {}
        }
        self.validate_schedule()?;
        self.validate_levels()?;
        self.validate_replay()?;
        self.validate_outcome()?;
        self.validate_deadlock_tasks(&locks)?;
        self.validate_notifies()
    }

    /// Checks a deadlock report's `notifies`: one entry for each monitor a
    /// task of the report waits on in `wait()`, in resource order, each
    /// with the monitor's last `notify`/`notify_all` event (or none if it
    /// has none) and the tasks the `wake` events right after it woke.
    fn validate_notifies(&self) -> Result<(), String> {
        use super::EventKind::{Notify, NotifyAll, Wake};
        // A trace written before deadsim kept them has none: read as it was.
        let Some(d) = self.deadlock.as_ref().filter(|d| !d.notifies.is_empty()) else { return Ok(()) };
        let want = d.monitors_waited_in();
        let have: Vec<u32> = d.notifies.iter().map(|n| n.resource).collect();
        if have != want {
            return Err(format!(
                "deadlock.notifies: monitors {have:?}, but the report's tasks wait in wait() on monitors {want:?}"
            ));
        }
        for (j, n) in d.notifies.iter().enumerate() {
            let at = |field: &str| format!("deadlock.notifies[{j}].{field}");
            let res = &self.resources[n.resource as usize];
            if n.monitor != res.name {
                return Err(format!(
                    "{}: \"{}\", but resource {} is \"{}\"",
                    at("monitor"),
                    n.monitor,
                    n.resource,
                    res.name
                ));
            }
            let last = self
                .events
                .iter()
                .enumerate()
                .rev()
                .find(|(_, e)| matches!(e.kind, Notify | NotifyAll) && e.resource == Some(n.resource));
            let (l, (i, e)) = match (&n.last, last) {
                (None, None) => continue,
                (None, Some((_, e))) => {
                    return Err(format!("{}: none, but the monitor is notified at step {}", at("last"), e.step))
                }
                (Some(_), None) => {
                    return Err(format!("{}: a notify, but the events never notify the monitor", at("last")))
                }
                (Some(l), Some(ie)) => (l, ie),
            };
            let kind = if e.kind == NotifyAll { "notify_all" } else { "notify" };
            if (l.op.as_str(), l.step, l.task) != (kind, e.step, e.task) {
                return Err(format!(
                    "{}: {} at step {} by task {}, but the monitor's last notify is a {kind} at step {} by task {}",
                    at("last"),
                    l.op,
                    l.step,
                    l.task,
                    e.step,
                    e.task
                ));
            }
            if l.name != self.tasks[l.task as usize].name {
                return Err(format!(
                    "{}: \"{}\", but task {} is \"{}\"",
                    at("last.name"),
                    l.name,
                    l.task,
                    self.tasks[l.task as usize].name
                ));
            }
            let frame = e.frame.map(|f| &self.frames[f as usize]);
            if l.at.as_ref().map(|a| (&a.name, &a.site)) != frame.map(|f| (&f.name, &f.site)) {
                return Err(format!("{}: not the frame of the notify event", at("last.at")));
            }
            let woke: Vec<u32> = self.events[i + 1..]
                .iter()
                .take_while(|w| w.kind == Wake && w.step == e.step && w.peer == Some(e.task))
                .take(e.amount.unwrap_or(0) as usize)
                .map(|w| w.task)
                .collect();
            if l.woke_ids != woke {
                return Err(format!(
                    "{}: {:?}, but the notify's wake events wake tasks {woke:?}",
                    at("last.woke_ids"),
                    l.woke_ids
                ));
            }
            let names: Vec<&str> = woke.iter().map(|&t| self.tasks[t as usize].name.as_str()).collect();
            if l.woke != names {
                return Err(format!("{}: {:?}, but tasks {woke:?} are {names:?}", at("last.woke"), l.woke));
            }
        }
        Ok(())
    }

    /// Checks that locks change hands as the engine lets them: a Go mutex
    /// is held by one task at a time (another task may unlock it, as in
    /// Go); an RWMutex by one writer or by readers; a Java monitor by one
    /// owner, whose entry count each enter, exit and wait states. Gives who
    /// holds what at the end of the events.
    fn validate_locks(&self) -> Result<Locks, String> {
        use super::EventKind::*;
        let n = self.resources.len();
        let mut l = Locks {
            holder: vec![None; n],
            readers: vec![Vec::new(); n],
            owner: vec![None; n],
            saved: vec![Vec::new(); self.tasks.len()],
            waiting: vec![Vec::new(); n],
            handed: vec![false; n],
        };
        // The monitor of a notify that woke a task: the wake right after it
        // names which one left the wait set.
        let mut notified: Option<u32> = None;
        for (i, e) in self.events.iter().enumerate() {
            if let Some(r) = notified.take() {
                let ws = &mut l.waiting[r as usize];
                match ws.iter().position(|&w| w == e.task).filter(|_| e.kind == Wake) {
                    Some(k) => drop(ws.remove(k)),
                    None => {
                        return Err(format!(
                            "events[{i}]: a notify of monitor \"{}\" woke a waiter, but this is not the wake of a task in its wait set",
                            self.resources[r as usize].name
                        ))
                    }
                }
                continue;
            }
            let Some(r) = e.resource else { continue };
            let (res, t, ri) = (&self.resources[r as usize], e.task, r as usize);
            let name = &res.name;
            match (res.kind.as_str(), e.kind) {
                ("mutex", Lock) => match l.holder[ri] {
                    Some(h) => return Err(format!("events[{i}]: task {t} locks \"{name}\", which task {h} holds")),
                    None => l.holder[ri] = Some(t),
                },
                ("mutex", Unlock) => {
                    let Some(_) = l.holder[ri].take() else {
                        return Err(format!("events[{i}]: task {t} unlocks \"{name}\", which no task holds"));
                    };
                    l.handed[ri] = false;
                }
                // By the task that locked, or one the guard was moved to.
                ("mutex" | "rwmutex", Value) if e.op.as_deref() == Some("hand_off") => {
                    if l.holder[ri].is_none() {
                        return Err(format!("events[{i}]: task {t} hands off \"{name}\", which no task holds"));
                    }
                    l.handed[ri] = true;
                }
                ("rwmutex", Lock) => match (l.holder[ri], l.readers[ri].len()) {
                    (Some(h), _) => {
                        return Err(format!("events[{i}]: task {t} write-locks \"{name}\", which task {h} holds"))
                    }
                    (None, k) if k > 0 => {
                        return Err(format!("events[{i}]: task {t} write-locks \"{name}\", which {k} reader(s) hold"))
                    }
                    _ => l.holder[ri] = Some(t),
                },
                ("rwmutex", Unlock) => {
                    let Some(_) = l.holder[ri].take() else {
                        return Err(format!("events[{i}]: task {t} unlocks \"{name}\", which no writer holds"));
                    };
                    l.handed[ri] = false;
                }
                ("rwmutex", RLock) => match l.holder[ri] {
                    Some(h) => {
                        return Err(format!("events[{i}]: task {t} read-locks \"{name}\", which task {h} write-holds"))
                    }
                    None => l.readers[ri].push(t),
                },
                ("rwmutex", RUnlock) => {
                    // Its own read lock, or (any task may, as in Go) the first taken.
                    let rs = &mut l.readers[ri];
                    match rs.iter().position(|&x| x == t).or(if rs.is_empty() { None } else { Some(0) }) {
                        Some(k) => drop(rs.remove(k)),
                        None => {
                            return Err(format!("events[{i}]: task {t} read-unlocks \"{name}\", which no reader holds"))
                        }
                    }
                }
                ("monitor", Enter) => {
                    let c = e.amount.unwrap_or(0);
                    let want = match l.owner[ri] {
                        Some((o, _)) if o != t => {
                            return Err(format!("events[{i}]: task {t} enters monitor \"{name}\", which task {o} owns"))
                        }
                        Some((_, k)) => k + 1,
                        // Back from a wait: the entry count it had.
                        None => l.saved[t as usize].iter().find(|&&(x, _)| x == r).map_or(1, |&(_, k)| k),
                    };
                    if c != want {
                        return Err(format!(
                            "events[{i}]: task {t} enters monitor \"{name}\" with entry count {c}, expected {want}"
                        ));
                    }
                    l.saved[t as usize].retain(|&(x, _)| x != r);
                    l.owner[ri] = Some((t, c));
                }
                ("monitor", Exit | Wait | Notify | NotifyAll) => {
                    let Some((o, k)) = l.owner[ri].filter(|&(o, _)| o == t) else {
                        return Err(format!(
                            "events[{i}]: {} of monitor \"{name}\" by task {t}, which does not own it",
                            an_event(e.kind)
                        ));
                    };
                    let c = e.amount.unwrap_or(0);
                    match e.kind {
                        Exit if c + 1 != k => {
                            return Err(format!(
                                "events[{i}]: task {t} exits monitor \"{name}\" to entry count {c}, but it had entered it {k} time(s)"
                            ))
                        }
                        Exit => l.owner[ri] = (c > 0).then_some((o, c)),
                        Wait if c != k => {
                            return Err(format!(
                                "events[{i}]: task {t} waits on monitor \"{name}\" giving up {c} entries, but it had entered it {k} time(s)"
                            ))
                        }
                        Wait => {
                            l.owner[ri] = None;
                            l.saved[t as usize].push((r, c));
                            l.waiting[ri].push(t);
                        }
                        // A notify wakes one waiter if there is one; a notifyAll every one.
                        Notify | NotifyAll => {
                            let n = l.waiting[ri].len() as u64;
                            let want = if e.kind == Notify { n.min(1) } else { n };
                            if c != want {
                                return Err(format!(
                                    "events[{i}].amount: {} of monitor \"{name}\" wakes {c}, but {n} task(s) wait on it",
                                    an_event(e.kind)
                                ));
                            }
                            if e.kind == NotifyAll {
                                l.waiting[ri].clear();
                            } else if n > 0 {
                                notified = Some(r);
                            }
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        Ok(l)
    }

    /// Checks that the verdict agrees with the events: a deadlock ends them
    /// with the deadlock event at the report's step and time; an invariant
    /// has its check event and a panic its panic event; a run that completed
    /// has every foreground task finished.
    fn validate_outcome(&self) -> Result<(), String> {
        use super::EventKind::*;
        let last = self.events.last();
        if let Some(i) = self.events.iter().position(|e| e.kind == Deadlock).filter(|&i| i + 1 != self.events.len()) {
            return Err(format!("events[{i}]: a deadlock event, but not the last event"));
        }
        match (self.meta.verdict.as_str(), &self.deadlock) {
            ("deadlock", Some(d)) => match last.filter(|e| e.kind == Deadlock) {
                None => {
                    return Err(
                        "events: the verdict is \"deadlock\", but the events do not end in a deadlock event".into()
                    )
                }
                Some(e) if (e.step, e.time) != (d.step, d.time) => {
                    return Err(format!(
                        "deadlock.step/time: {}/{} ns, but the deadlock event is at step {}, {} ns",
                        d.step, d.time, e.step, e.time
                    ))
                }
                _ => {}
            },
            (v, _) if last.is_some_and(|e| e.kind == Deadlock) => {
                return Err(format!("events: a deadlock event, but meta.verdict is \"{v}\""));
            }
            ("invariant", _) if !self.events.iter().any(|e| e.kind == Check) => {
                return Err("meta.verdict: \"invariant\", but no check event failed".into());
            }
            ("panic", _) if !self.events.iter().any(|e| e.kind == Panic) => {
                return Err("meta.verdict: \"panic\", but no task panics in the events".into());
            }
            ("no-deadlock", _) => {
                let mut done = vec![false; self.tasks.len()];
                self.events.iter().filter(|e| e.kind == Finish).for_each(|e| done[e.task as usize] = true);
                if let Some(t) = self.tasks.iter().find(|t| !t.background && !done[t.id as usize]) {
                    return Err(format!(
                        "meta.verdict: \"no-deadlock\", but task {} (\"{}\") never finishes",
                        t.id, t.name
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Checks a deadlock report against the events and the locks held at
    /// their end (see traces/README.md): each task named once and left
    /// blocked, each entry as its last block says, the cycle, `running` and
    /// `global`, and the tasks a report must name.
    fn validate_deadlock_tasks(&self, locks: &Locks) -> Result<(), String> {
        use super::EventKind::*;
        let Some(d) = &self.deadlock else { return Ok(()) };
        #[derive(Clone, Copy, PartialEq)]
        enum Left {
            Unspawned,
            Ready,
            Blocked,
            Asleep,
            Finished,
        }
        // Where the events leave each task.
        let mut left = vec![Left::Unspawned; self.tasks.len()];
        let holder = &locks.holder;
        // Each task's last block: what a report entry must say it waits for.
        let mut blocked_at = vec![None; self.tasks.len()];
        for (i, e) in self.events.iter().enumerate() {
            let t = e.task as usize;
            match e.kind {
                Spawn | Wake => left[t] = Left::Ready,
                Block => {
                    left[t] = Left::Blocked;
                    blocked_at[t] = Some(i);
                }
                Sleep => left[t] = Left::Asleep,
                Finish => left[t] = Left::Finished,
                _ => {}
            }
        }
        // Releasers' ids in every entry that has releasers, or (a trace
        // written before they were kept) in none.
        let has_ids = d.cycle.iter().chain(&d.behind).any(|b| !b.released_by_ids.is_empty());
        // Likewise the names tasks share: those of the tasks, or none.
        let shared = self.shared_names();
        if !d.shared.is_empty() && d.shared != shared {
            return Err(format!(
                "deadlock.shared: {:?}, but the names two or more tasks have are {shared:?}",
                d.shared
            ));
        }
        let mut seen = vec![false; self.tasks.len()];
        for (list, tasks) in [("cycle", &d.cycle), ("behind", &d.behind)] {
            for (j, b) in tasks.iter().enumerate() {
                if has_ids && b.released_by_ids.is_empty() && !b.released_by.is_empty() {
                    return Err(format!(
                        "deadlock.{list}[{j}].released_by_ids: missing, but other entries of the report have them"
                    ));
                }
                let t = b.task as usize;
                if std::mem::replace(&mut seen[t], true) {
                    return Err(format!(
                        "deadlock.{list}[{j}]: task {t} (\"{}\") is named twice in the report",
                        b.name
                    ));
                }
                if left[t] != Left::Blocked {
                    return Err(format!(
                        "deadlock.{list}[{j}]: task {t} (\"{}\") is in the report, but the events do not leave it blocked",
                        b.name
                    ));
                }
                let e = &self.events[blocked_at[t].expect("a blocked task has a block event")];
                self.validate_entry(b, e, locks).map_err(|why| format!("deadlock.{list}[{j}].{why}"))?;
            }
        }
        // The tasks still able to run, by name in task order: none for a
        // global deadlock ("all goroutines are asleep"), which then names
        // every blocked task; a partial one is found by its cycle.
        let able: Vec<&str> = (0..self.tasks.len())
            .filter(|&t| matches!(left[t], Left::Ready | Left::Asleep))
            .map(|t| self.tasks[t].name.as_str())
            .collect();
        if d.running != able {
            return Err(format!("deadlock.running: {:?}, but the events leave {:?} able to run", d.running, able));
        }
        // Their ids, where kept (a trace from before has none).
        let able_ids: Vec<u32> =
            (0..self.tasks.len() as u32).filter(|&t| matches!(left[t as usize], Left::Ready | Left::Asleep)).collect();
        if !d.running_ids.is_empty() && d.running_ids != able_ids {
            return Err(format!(
                "deadlock.running_ids: {:?}, but the events leave tasks {able_ids:?} able to run",
                d.running_ids
            ));
        }
        // The blocked tasks the report leaves out, where kept (a trace from
        // before has none): by name and id, in task order.
        let outside: Vec<u32> =
            (0..self.tasks.len() as u32).filter(|&t| left[t as usize] == Left::Blocked && !seen[t as usize]).collect();
        if !(d.waiting.is_empty() && d.waiting_ids.is_empty()) {
            let names: Vec<&str> = outside.iter().map(|&t| self.tasks[t as usize].name.as_str()).collect();
            if d.waiting_ids != outside || d.waiting != names {
                return Err(format!(
                    "deadlock.waiting_ids: {:?}, but the events leave tasks {outside:?} blocked outside the report",
                    d.waiting_ids
                ));
            }
        }

        if d.global != able.is_empty() {
            return Err(if d.global {
                format!("deadlock.global: true, but the events leave {able:?} able to run")
            } else {
                "deadlock.global: false, but the events leave no task able to run".to_string()
            });
        }
        if d.global {
            if let Some(t) = (0..self.tasks.len()).find(|&t| left[t] == Left::Blocked && !seen[t]) {
                return Err(format!(
                    "deadlock: task {t} (\"{}\") is left blocked, but a report of a global deadlock does not name it",
                    self.tasks[t].name
                ));
            }
        } else {
            // A task that waits for a lock held by a task that can never run
            // can never run either: a partial report names it too.
            for t in (0..self.tasks.len()).filter(|&t| left[t] == Left::Blocked && !seen[t]) {
                let e = &self.events[blocked_at[t].expect("a blocked task has a block event")];
                // A join waits for the task it joins.
                if let (Some("join"), Some(u)) = (e.op.as_deref(), e.peer) {
                    if seen[u as usize] {
                        return Err(format!(
                            "deadlock.behind: task {t} (\"{}\") joins task {u}, which the report says can never run, but the report does not name it",
                            self.tasks[t].name
                        ));
                    }
                    continue;
                }
                let Some(r) = e.resource.filter(|_| matches!(e.op.as_deref(), Some("lock" | "rlock"))) else {
                    continue;
                };
                let ri = r as usize;
                let holder = match (self.resources[ri].kind.as_str(), e.op.as_deref()) {
                    ("mutex", _) => locks.holder[ri],
                    ("monitor", _) => locks.owner[ri].map(|(o, _)| o),
                    // A writer waits for the writer, else for every reader to leave.
                    ("rwmutex", Some("lock")) => locks.holder[ri].or_else(|| {
                        let rs = &locks.readers[ri];
                        rs.iter().all(|&x| seen[x as usize]).then(|| rs.first().copied()).flatten()
                    }),
                    ("rwmutex", _) => locks.holder[ri],
                    _ => None,
                };
                // Handed to another task to unlock: any task might.
                let handed = locks.handed[ri];
                if let Some(h) = holder.filter(|&h| seen[h as usize] && h as usize != t && !handed) {
                    return Err(format!(
                        "deadlock.behind: task {t} (\"{}\") waits for \"{}\", held by task {h}, which the report says can never run, but the report does not name it",
                        self.tasks[t].name, self.resources[r as usize].name
                    ));
                }
            }
        }
        // A partial deadlock is found by its cycle, or by a wait nobody
        // alive may serve (a wait() whose declared notifiers are gone, a
        // channel or pipe wait whose other end's declared holders are).
        let dead_by_itself = |b: &&crate::outcome::BlockedTask| {
            crate::outcome::dead_by_itself(&b.op).is_some() && b.released_by.is_empty()
        };
        if !d.global && d.cycle.is_empty() && !d.behind.iter().any(|b| dead_by_itself(&b)) {
            return Err(
                "deadlock.cycle: empty, but deadlock.global is false (a partial deadlock is found by its cycle, or by a wait nobody left may serve)".into(),
            );
        }
        // The cycle starts at the task spawned first, and each of its tasks
        // can be released by the next.
        if let Some(first) = d.cycle.first().filter(|f| d.cycle.iter().any(|b| b.task < f.task)) {
            return Err(format!(
                "deadlock.cycle[0]: task {}, but the cycle starts at its task spawned first",
                first.task
            ));
        }
        for (j, b) in d.cycle.iter().enumerate() {
            let next = &d.cycle[(j + 1) % d.cycle.len()];
            // A task alone in its cycle waits on a channel or pipe it holds
            // every end of: the report leaves it out of its own releasers
            // (it cannot release itself while it waits).
            let names_next = if b.released_by_ids.is_empty() {
                b.released_by.contains(&next.name)
            } else {
                b.released_by_ids.contains(&next.task)
            };
            if !names_next && next.task != b.task {
                return Err(if b.released_by_ids.is_empty() {
                    format!(
                        "deadlock.cycle[{j}].released_by: {:?} does not name \"{}\", the next task of the cycle",
                        b.released_by, next.name
                    )
                } else {
                    format!(
                        "deadlock.cycle[{j}].released_by_ids: {:?} does not hold task {} (\"{}\"), the next task of the cycle",
                        b.released_by_ids, next.task, next.name
                    )
                });
            }
        }
        // Each task of the cycle waits for the next; for a Go mutex that
        // next task is its holder.
        for (j, b) in d.cycle.iter().enumerate() {
            let next = &d.cycle[(j + 1) % d.cycle.len()];
            let Some(r) = b.resource.filter(|&r| b.op == "lock" && self.resources[r as usize].kind == "mutex") else {
                continue;
            };
            if holder[r as usize] != Some(next.task) {
                let held = match holder[r as usize] {
                    Some(h) => format!("task {h} holds it"),
                    None => "no task holds it".to_string(),
                };
                return Err(format!(
                    "deadlock.cycle[{j}]: task {} waits for mutex \"{}\" and the cycle goes on to task {}, but {held} at the end of the events",
                    b.task, self.resources[r as usize].name, next.task
                ));
            }
        }
        if d.cycle.is_empty() {
            // "No cycle" must be so: blocked tasks that wait, through Go
            // mutexes alone, for one another form one (each such wait has
            // one holder to follow).
            // (Not one handed to another task to unlock: any task might.)
            let waits_for_holder = |t: usize| {
                let b = d.behind.iter().find(|b| b.task as usize == t)?;
                let r = b.resource.filter(|&r| b.op == "lock" && self.resources[r as usize].kind == "mutex")?;
                holder[r as usize].filter(|_| !locks.handed[r as usize]).map(|h| h as usize)
            };
            for b in &d.behind {
                let (mut t, mut path) = (b.task as usize, vec![b.task as usize]);
                while let Some(h) = waits_for_holder(t) {
                    if let Some(i) = path.iter().position(|&p| p == h) {
                        let names: Vec<String> =
                            path[i..].iter().map(|&p| format!("\"{}\"", self.tasks[p].name)).collect();
                        return Err(format!(
                            "deadlock.cycle: empty, but {} wait for one another's mutexes",
                            names.join(", ")
                        ));
                    }
                    path.push(h);
                    t = h;
                }
            }
        }
        Ok(())
    }

    /// Checks that block event `e` (`events[i]`) waits in an operation the
    /// engine has, on a resource of the kind that operation takes: a lock on
    /// a lock or monitor, a wait on a monitor, a send or receive on a
    /// channel, a write or read on a pipe; a select on its cases; a join on
    /// the task it joins (`peer`).
    fn validate_block(&self, i: usize, e: &super::Event) -> Result<(), String> {
        let op = e.op.as_deref().unwrap_or("");
        let kinds: Option<&[&str]> = match op {
            "lock" => Some(&["mutex", "rwmutex", "monitor"]),
            "rlock" => Some(&["rwmutex"]),
            "wait" => Some(&["monitor"]),
            "send" | "recv" => Some(&["chan"]),
            "write" | "read" => Some(&["pipe"]),
            "select" | "join" => None,
            _ => {
                return Err(format!(
                    "events[{i}].op: a block in {op:?}, not an operation a task waits in \
                     (lock, rlock, wait, send, recv, select, write, read, join)"
                ))
            }
        };
        match (kinds, e.resource) {
            (Some(kinds), Some(r)) => {
                let res = &self.resources[r as usize];
                if !kinds.contains(&res.kind.as_str()) {
                    return Err(format!(
                        "events[{i}]: a block in {op} on resource {r} (\"{}\"), which is a {}, not a {}",
                        res.name,
                        res.kind,
                        kinds.join(" or ")
                    ));
                }
            }
            (Some(_), None) => return Err(format!("events[{i}]: a block in {op} without a resource")),
            (None, Some(r)) => {
                return Err(format!(
                    "events[{i}]: a block in {op} on resource {r}, but a {op} waits on no one resource"
                ))
            }
            (None, None) if op == "select" && e.cases.is_empty() => {
                return Err(format!("events[{i}]: a block in select without its cases"))
            }
            (None, None) if op == "join" && e.peer.is_none() => {
                return Err(format!("events[{i}]: a block in join without the task it joins (peer)"))
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// Checks one entry of a deadlock report against the task's last block
    /// event `e` and the locks held at the end: the operation, the resource,
    /// its kind and name (or the joined task, or the select's cases), the
    /// innermost frame, and the locks it holds. The error names the field.
    fn validate_entry(&self, b: &crate::outcome::BlockedTask, e: &super::Event, locks: &Locks) -> Result<(), String> {
        let op = e.op.as_deref().unwrap_or("");
        if b.op != op {
            return Err(format!("op: \"{}\", but the task's block event is a {op}", b.op));
        }
        if b.resource != e.resource {
            let id = |r: Option<u32>| r.map_or("null".to_string(), |r| r.to_string());
            return Err(format!(
                "resource: {}, but the task's block event is on {}",
                id(b.resource),
                match e.resource {
                    Some(r) => format!("resource {r} (\"{}\")", self.resources[r as usize].name),
                    None => "no one resource".to_string(),
                }
            ));
        }
        let (kind, waits_for) = match (e.resource, e.peer) {
            (Some(r), _) => {
                let res = &self.resources[r as usize];
                (res.kind.as_str(), res.name.clone())
            }
            (None, Some(u)) => ("", self.tasks[u as usize].name.clone()),
            (None, None) => {
                let cases: Vec<String> = e
                    .cases
                    .iter()
                    .map(|c| format!("{} {}", c.dir.as_str(), self.resources[c.resource as usize].name))
                    .collect();
                ("", cases.join(" | "))
            }
        };
        if b.kind != kind {
            return Err(format!("kind: \"{}\", but the resource it waits on is a {kind:?}", b.kind));
        }
        if b.waits_for != waits_for {
            return Err(format!("waits_for: \"{}\", but the task's block event says \"{waits_for}\"", b.waits_for));
        }
        match (b.stack.first(), e.frame.map(|f| &self.frames[f as usize])) {
            (Some(top), Some(f)) if (&top.name, &top.site) != (&f.name, &f.site) => {
                return Err(format!(
                    "stack[0]: {} ({}), but the task blocked in {} ({})",
                    top.name, top.site, f.name, f.site
                ));
            }
            (None, Some(f)) => return Err(format!("stack: empty, but the task blocked in {} ({})", f.name, f.site)),
            (Some(top), None) => {
                return Err(format!("stack[0]: {} ({}), but the task blocked outside any frame", top.name, top.site))
            }
            _ => {}
        }
        for name in &b.released_by {
            if !self.tasks.iter().any(|t| &t.name == name) {
                return Err(format!("released_by: \"{name}\" is not a task"));
            }
        }
        // A counter is a WaitGroup's, which only its Wait waits on.
        // A WaitGroup's counter and a Cond's flag belong to a Wait on one.
        let waits_in = |class: &str| {
            b.op == "wait"
                && b.resource.and_then(|r| self.resources.get(r as usize)).and_then(|r| r.class.as_deref())
                    == Some(class)
        };
        if b.counter.is_some() && !waits_in(crate::sync::WAITGROUP_CLASS) {
            return Err("counter: given, but the task is not in a Wait on a WaitGroup (a monitor of class \
                        sync.WaitGroup)"
                .into());
        }
        // A full buffer is a channel send's, and as large as the channel's.
        if let Some(n) = b.full {
            let cap = b.resource.and_then(|r| self.resources.get(r as usize)).and_then(|r| r.capacity);
            if b.op != "send" || b.kind != "chan" || cap != Some(n) {
                return Err(format!(
                    "full: {n}, but the task is not in a send on a channel of capacity {n} (its op is {:?})",
                    b.op
                ));
            }
        }
        if b.cond && !waits_in(crate::sync::COND_CLASS) {
            return Err("cond: true, but the task is not in a Wait on a Cond (a monitor of class sync.Cond)".into());
        }
        // A closer is one of the releasers, of a channel or pipe wait, once;
        // and a wait whose releasers are all closers, or not all known, has
        // none set apart.
        if b.only_itself
            && (!b.released_by.is_empty()
                || b.undeclared
                || !matches!(b.op.as_str(), "send" | "recv" | "select" | "write" | "read"))
        {
            return Err(
                "only_itself: true, but the wait is not a channel or pipe wait with no releaser, its ends declared"
                    .into(),
            );
        }
        if !b.closing.is_empty() && (b.undeclared || b.closers_only) {
            let flag = if b.undeclared { "undeclared" } else { "closers_only" };
            return Err(format!("closing: given with {flag}: true, whose releasers are not split so"));
        }
        for (i, &c) in b.closing.iter().enumerate() {
            if !matches!(b.op.as_str(), "send" | "recv" | "select" | "write" | "read")
                || b.released_by_ids.len() != b.released_by.len()
                || !b.released_by_ids.contains(&c)
            {
                return Err(format!(
                    "closing[{i}]: task {c} is not a releaser (released_by_ids) of this channel or pipe wait"
                ));
            }
            if b.closing[..i].contains(&c) {
                return Err(format!("closing[{i}]: task {c} is given twice"));
            }
        }
        // Who forgot Done: tasks, in order, named as they are, of a WaitGroup wait.
        if !b.forgot_done.is_empty() {
            if !b.in_wait_group() {
                return Err("forgot_done: given for a wait that is not in a WaitGroup (no `counter`)".into());
            }
            self.check_named_ids(("forgot_done", &b.forgot_done), ("forgot_done_names", &b.forgot_done_names))?;
            if let Some(i) = (1..b.forgot_done.len()).find(|&i| b.forgot_done[i - 1] >= b.forgot_done[i]) {
                return Err(format!("forgot_done[{i}]: ids are ascending, each once"));
            }
        } else if !b.forgot_done_names.is_empty() {
            return Err("forgot_done_names: names without forgot_done ids".into());
        }
        // A holder that returned is one of the releasers, of a lock wait.
        for (i, r) in b.returned.iter().enumerate() {
            if !matches!(b.op.as_str(), "lock" | "rlock") || !b.released_by_ids.contains(&r.task) {
                return Err(format!(
                    "returned[{i}]: task {} is not a releaser (released_by_ids) of this lock wait",
                    r.task
                ));
            }
            if self.tasks.get(r.task as usize).is_none() {
                return Err(format!("returned[{i}]: {} is not a task id", r.task));
            }
            if r.read && b.kind != "rwmutex" {
                return Err(format!("returned[{i}]: a read lock (read: true) of a {}, not an rwmutex", b.kind));
            }
        }
        // The ids say which task of a shared name; a trace from before they
        // were kept has none.
        if !b.released_by_ids.is_empty() {
            self.check_named_ids(("released_by_ids", &b.released_by_ids), ("released_by", &b.released_by))?;
            // Where the events name the one task that could release the
            // wait: a join's joined task, a Go mutex's holder.
            let one = match (e.op.as_deref(), e.resource, e.peer) {
                (Some("join"), None, Some(u)) => Some((u, "joins")),
                (Some("lock"), Some(r), _) if self.resources[r as usize].kind == "mutex" => {
                    locks.holder[r as usize].map(|h| (h, "waits for a mutex held by"))
                }
                _ => None,
            };
            if let Some((u, how)) = one.filter(|&(u, _)| b.released_by_ids != [u]) {
                return Err(format!("released_by_ids: {:?}, but the task {how} task {u}", b.released_by_ids));
            }
        }
        // Every lock the events leave the task holding, in resource order,
        // as the engine lists them (a read lock taken twice, twice).
        let t = b.task;
        let mut held: Vec<(&str, &str, &str)> = Vec::new();
        for (r, res) in self.resources.iter().enumerate() {
            let (name, kind) = (res.name.as_str(), res.kind.as_str());
            match kind {
                "mutex" if locks.holder[r] == Some(t) => held.push((name, kind, "")),
                "monitor" if locks.owner[r].is_some_and(|(o, _)| o == t) => held.push((name, kind, "")),
                "rwmutex" => {
                    if locks.holder[r] == Some(t) {
                        held.push((name, kind, "write"));
                    }
                    for _ in locks.readers[r].iter().filter(|&&x| x == t) {
                        held.push((name, kind, "read"));
                    }
                }
                _ => {}
            }
        }
        let said: Vec<(&str, &str, &str)> =
            b.holds.iter().map(|h| (h.resource.as_str(), h.kind.as_str(), h.mode.as_str())).collect();
        if said != held {
            let list = |v: &[(&str, &str, &str)]| {
                let items: Vec<String> = v
                    .iter()
                    .map(|(n, k, m)| if m.is_empty() { format!("{k} \"{n}\"") } else { format!("{k} \"{n}\" ({m})") })
                    .collect();
                if items.is_empty() {
                    "nothing".to_string()
                } else {
                    items.join(", ")
                }
            };
            return Err(format!("holds: {}, but the events leave task {t} holding {}", list(&said), list(&held)));
        }
        // A hold's frame is one of the stack's, and one of that function.
        for (i, h) in b.holds.iter().enumerate() {
            let Some(f) = h.frame else { continue };
            let took = h.at.as_ref().map(|a| a.name.as_str());
            match b.stack.get(f) {
                None => {
                    let n = b.stack.len();
                    return Err(format!(
                        "holds[{i}].frame: {f}, but the stack has {n} frame{}",
                        if n == 1 { "" } else { "s" }
                    ));
                }
                Some(fr) if Some(fr.name.as_str()) != took => {
                    let by = took.map_or_else(|| "outside any frame".to_string(), |t| format!("in {t}"));
                    return Err(format!("holds[{i}].frame: {f} ({}), but the lock was taken {by}", fr.name));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Checks that channels and pipes fill and drain as the engine moves
    /// messages and bytes. Each send and receive states the messages its
    /// channel buffers after it, each pipe event the bytes its pipe buffers
    /// after it, and that follows from the level before and the event; a
    /// task blocks in a send only on a full channel, in a receive only on an
    /// empty one, in a pipe write only when its bytes did not all fit or
    /// another write is in progress, and in a read only on an empty pipe
    /// with no write in progress.
    /// A list of task ids and the list of those tasks' names beside it
    /// (`released_by_ids` and `released_by`): as long as each other, each
    /// id a task, each name that task's.
    fn check_named_ids(
        &self,
        (ids_field, ids): (&str, &[u32]),
        (names_field, names): (&str, &[String]),
    ) -> Result<(), String> {
        if ids.len() != names.len() {
            return Err(format!("{ids_field}: {} ids, but {names_field} has {} names", ids.len(), names.len()));
        }
        for (i, (&id, name)) in ids.iter().zip(names).enumerate() {
            match self.tasks.get(id as usize) {
                None => return Err(format!("{ids_field}[{i}]: {id} is not a task id")),
                Some(t) if &t.name != name => {
                    return Err(format!(
                        "{ids_field}[{i}]: task {id} is \"{}\", but {names_field}[{i}] is \"{name}\"",
                        t.name
                    ))
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn validate_levels(&self) -> Result<(), String> {
        use super::EventKind::*;
        let n = self.resources.len();
        let mut level = vec![0u64; n];
        // A pipe's write in progress (its writer blocked until the rest is
        // read), and the pipe each such writer writes to.
        let mut active: Vec<Option<u32>> = vec![None; n];
        let mut writing: Vec<Option<u32>> = vec![None; self.tasks.len()];
        // The pipe whose write the task made in this step (a write that did
        // not all fit blocks right after it).
        let mut wrote: Option<(u32, u32, u64)> = None;
        // A waiting sender's message moved into a channel by a receiver, in
        // the receiver's step, its receive still to come (that receive leaves
        // the level as it was): (event, channel, receiver, step).
        let mut moved: Option<(usize, u32, u32, u64)> = None;
        for (i, e) in self.events.iter().enumerate() {
            let t = e.task;
            if e.kind == Wake {
                // The writer of a write in progress is woken when the rest is read.
                if let Some(p) = writing[t as usize].take() {
                    active[p as usize] = None;
                }
                continue;
            }
            if let Some((j, _, p, step)) = moved {
                // The receiver of a waiting sender's message receives it in that step.
                if e.step != step {
                    return Err(format!(
                        "events[{j}]: a waiting sender's message moved into a channel by task {p}, which then receives nothing in that step"
                    ));
                }
            }
            if e.kind == Block && e.op.as_deref() == Some("select") {
                // A select blocks only when no case is ready: as far as the
                // buffers tell, every send case full and every receive case empty.
                for (j, c) in e.cases.iter().enumerate() {
                    let (l, cap) =
                        (level[c.resource as usize], self.resources[c.resource as usize].capacity.unwrap_or(0));
                    let ready = match c.dir {
                        super::CaseDir::Send => l < cap,
                        super::CaseDir::Recv => l > 0,
                    };
                    if ready {
                        return Err(format!(
                            "events[{i}].cases[{j}]: task {t} blocks in a select, but its {} case on channel {} (\"{}\") is ready ({l} of {cap} messages buffered)",
                            c.dir.as_str(),
                            c.resource,
                            self.resources[c.resource as usize].name
                        ));
                    }
                }
            }
            let Some(r) = e.resource else { continue };
            let (ri, res) = (r as usize, &self.resources[r as usize]);
            let cap = res.capacity.unwrap_or(0);
            let name = &res.name;
            let l = level[ri];
            let field = |f: &str, v: Option<u64>| {
                v.ok_or_else(|| {
                    format!("events[{i}]: {} on {} {r} (\"{name}\") without {f}", an_event(e.kind), res.kind)
                })
            };
            match (res.kind.as_str(), e.kind, e.peer) {
                // A send: into the buffer, or handed to a parked receiver.
                ("chan", Send, None) => {
                    let a = field("amount", e.amount)?;
                    if a != l + 1 && !(a == 0 && l == 0) {
                        return Err(format!(
                            "events[{i}].amount: {a} messages buffered after a send into channel {r} (\"{name}\"), which buffered {l} (a send leaves {} there, or 0 when it hands the message to a waiting receiver)",
                            l + 1
                        ));
                    }
                    level[ri] = a;
                }
                // A parked sender's message moved in by receiver `p`.
                ("chan", Send, Some(p)) => {
                    let a = field("amount", e.amount)?;
                    if a != l {
                        return Err(format!(
                            "events[{i}].amount: {a} messages buffered after a waiting sender's message moved into channel {r} (\"{name}\"), which buffered {l} (the receive took one, the sender put one)"
                        ));
                    }
                    moved = Some((i, r, p, e.step));
                }
                ("chan", Recv, None) => {
                    let a = field("amount", e.amount)?;
                    let refilled = moved.is_some_and(|(_, c, p, _)| (c, p) == (r, t));
                    if refilled {
                        moved = None;
                    }
                    let ok = if refilled {
                        a == l
                    } else if l > 0 {
                        a == l - 1
                    } else {
                        a == 0
                    };
                    if !ok {
                        return Err(format!(
                            "events[{i}].amount: {a} messages buffered after a receive from channel {r} (\"{name}\"), which buffered {l}"
                        ));
                    }
                    level[ri] = a;
                }
                // A message handed to a parked receiver by the send just before.
                ("chan", Recv, Some(p)) => {
                    let a = field("amount", e.amount)?;
                    let prev = i.checked_sub(1).map(|j| &self.events[j]);
                    if !prev.is_some_and(|s| (s.kind, s.task, s.resource, s.peer) == (Send, p, Some(r), None)) {
                        return Err(format!(
                            "events[{i}]: task {t} receives from channel {r} (\"{name}\") what task {p} handed it, but the event before is not that send"
                        ));
                    }
                    if (a, l) != (0, 0) {
                        return Err(format!(
                            "events[{i}].amount: {a}, a message handed to a waiting receiver through channel {r} (\"{name}\"), which buffered {l} (a receiver waits only on an empty channel)"
                        ));
                    }
                }
                ("pipe", Write, peer) => {
                    let (a, b) = (field("amount", e.amount)?, field("buffered", e.buffered)?);
                    match (peer, active[ri]) {
                        (None, Some(w)) if w != t => {
                            return Err(format!(
                                "events[{i}]: task {t} writes to pipe {r} (\"{name}\") while the write of task {w} is in progress"
                            ))
                        }
                        (Some(_), w) if w != Some(t) => {
                            return Err(format!(
                                "events[{i}]: bytes of task {t} moved into pipe {r} (\"{name}\"), but no write of it is in progress there"
                            ))
                        }
                        _ => {}
                    }
                    if a > cap - l.min(cap) || b != l + a {
                        return Err(format!(
                            "events[{i}]: a write of {a} bytes into pipe {r} (\"{name}\"), which buffered {l} of {cap}, leaves {b} buffered"
                        ));
                    }
                    level[ri] = b;
                    wrote = Some((t, r, e.step));
                }
                ("pipe", Read, _) => {
                    let (k, b) = (field("amount", e.amount)?, field("buffered", e.buffered)?);
                    // (A read of at most 0 bytes reads nothing and does not block.)
                    let ok = if l > 0 {
                        k <= l && b == l - k
                    } else if cap == 0 && active[ri].is_some() {
                        // net.Pipe: straight from the write in progress.
                        b == 0
                    } else {
                        // Only the end of the stream reads nothing.
                        k == 0 && b == 0
                    };
                    if !ok {
                        return Err(format!(
                            "events[{i}]: a read of {k} bytes from pipe {r} (\"{name}\"), which buffered {l}{}, leaves {b} buffered",
                            if active[ri].is_some() { " with a write in progress" } else { "" }
                        ));
                    }
                    level[ri] = b;
                }
                ("pipe", Close, _) => {
                    let b = field("buffered", e.buffered)?;
                    if b != l {
                        return Err(format!(
                            "events[{i}].buffered: {b}, but pipe {r} (\"{name}\") buffered {l} when it was closed"
                        ));
                    }
                }
                (_, Block, _) => {
                    let op = e.op.as_deref().unwrap_or("");
                    let why = match (res.kind.as_str(), op) {
                        ("chan", "send") if l < cap => Some(format!("it buffers {l} of {cap} messages")),
                        ("chan", "recv") if l > 0 => Some(format!("it buffers {l} messages")),
                        ("pipe", "write") => {
                            // Its own write filled the pipe, in this step: the rest waits.
                            let filled = wrote == Some((t, r, e.step)) && l == cap;
                            match active[ri] {
                                None if filled => {
                                    active[ri] = Some(t);
                                    writing[t as usize] = Some(r);
                                    None
                                }
                                Some(w) if w != t && !filled => None,
                                _ => Some(format!(
                                    "it buffers {l} of {cap} bytes and {}",
                                    match active[ri] {
                                        Some(w) => format!("task {w}'s write is in progress"),
                                        None => "no write is in progress".to_string(),
                                    }
                                )),
                            }
                        }
                        ("pipe", "read") if l > 0 || active[ri].is_some() => Some(format!(
                            "it buffers {l} bytes{}",
                            if active[ri].is_some() { " and a write is in progress" } else { "" }
                        )),
                        _ => None,
                    };
                    if let Some(why) = why {
                        return Err(format!(
                            "events[{i}]: task {t} blocks in {op} on {} {r} (\"{name}\"), but {why}",
                            if res.kind == "chan" { "channel" } else { "pipe" }
                        ));
                    }
                }
                _ => {}
            }
        }
        if let Some((j, _, p, _)) = moved {
            return Err(format!(
                "events[{j}]: a waiting sender's message moved into a channel by task {p}, which then receives nothing in that step"
            ));
        }
        Ok(())
    }

    /// Checks that `meta.replay` is a schedule string of this trace's model
    /// and parameters (`ds1:MODEL:FINGERPRINT:...`, the fingerprint of
    /// `meta.model` and `meta.params`). Only its head is read: a model a
    /// library user labels freely may not be one a schedule string can name
    /// for the CLI.
    fn validate_replay(&self) -> Result<(), String> {
        let (model, replay) = (&self.meta.model, &self.meta.replay);
        let Some(rest) = replay.strip_prefix(&format!("ds1:{model}:")) else {
            return Err(format!(
                "meta.replay: \"{replay}\" is not a schedule string of model {model} (ds1:{model}:...)"
            ));
        };
        let given = rest.split(':').next().unwrap_or("");
        let want = crate::scheduler::fingerprint(model, &self.meta.params);
        if given != want {
            return Err(format!(
                "meta.replay: fingerprint {given}, but meta.model and meta.params give {want} (a schedule of other parameters)"
            ));
        }
        Ok(())
    }

    /// Checks that the schedule and the events tell one story. An event a
    /// task makes itself falls at a step the schedule gives that task; one
    /// made for another task (a spawn, a wake, a hand-off) names the task
    /// that ran as its peer; and the schedule runs a task only while it is
    /// spawned, not finished, and neither blocked nor asleep. Only main's
    /// spawn comes before step 1.
    fn validate_schedule(&self) -> Result<(), String> {
        use super::EventKind::*;
        // Whether each task's last wait was a sleep (not a block).
        let mut asleep = vec![false; self.tasks.len()];
        // Whether each task is asleep now: slept, and not woken since.
        let mut sleeping = vec![false; self.tasks.len()];
        // The locks (Go mutexes, monitors) the running task has taken so far
        // in the current step, which hold up the others about to take them.
        // Kept as the events go, not looked for backwards from each block:
        // 100,000 tasks held up in one step took 22 s that way.
        let (mut took_step, mut took) = (0, std::collections::BTreeSet::new());
        let kind_of = |r: Option<u32>| r.map(|r| self.resources[r as usize].kind.as_str());
        // The step each task first ran in (u64::MAX: never).
        let mut first_ran = vec![u64::MAX; self.tasks.len()];
        for (k, &t) in self.schedule.iter().enumerate().rev() {
            if let Some(f) = first_ran.get_mut(t as usize) {
                *f = k as u64 + 1;
            }
        }
        for (i, e) in self.events.iter().enumerate() {
            // Named only for a message: a long trace has a million events.
            let (t, kind) = (e.task, || an_event(e.kind));
            if e.step != took_step {
                took_step = e.step;
                took.clear();
            }
            match e.kind {
                Sleep => asleep[t as usize] = true,
                Block => asleep[t as usize] = false,
                _ => {}
            }
            // Looked at before this event changes it: a finish of a task
            // asleep is one a stop ended there.
            let was_sleeping = sleeping[t as usize];
            sleeping[t as usize] = match e.kind {
                Sleep => true,
                Wake | Block => false,
                _ => was_sleeping,
            };
            if e.step == 0 {
                if (e.kind, t) != (Spawn, 0) {
                    return Err(format!("events[{i}]: {} at step 0, where only main's spawn can be", kind()));
                }
                continue;
            }
            let ran = self.schedule[e.step as usize - 1];
            if t == ran && matches!((e.kind, kind_of(e.resource)), (Lock, Some("mutex")) | (Enter, Some("monitor"))) {
                took.insert(e.resource);
            }
            // A spawn is the spawner's event: the new task has not run yet.
            if t == ran && e.kind != Spawn {
                continue;
            }
            let for_another = match e.kind {
                // Held up by the running task's taking of the lock it was
                // about to take, in this step: no peer.
                // (Only a Go mutex's Lock or a monitor's Enter does.)
                Block => e.peer.is_none() && e.op.as_deref() == Some("lock") && took.contains(&e.resource),
                // A sleeper whose time came wakes itself, between steps.
                // A sleeper is woken by its time, a waiter by the running task.
                Wake if asleep[t as usize] => e.peer == Some(t),
                Wake => e.peer == Some(ran),
                Spawn => e.peer == Some(ran) && t != ran,
                // A timer stopped by the running task (Go's timer.Stop):
                // asleep until its deadline, or never run yet.
                Finish => e.peer == Some(ran) && (was_sleeping || first_ran[t as usize] > e.step),
                // A hand-off: the running task's operation completed this
                // one's send, receive, lock or pipe write.
                Send | Recv | Lock | RLock | Write => e.peer == Some(ran),
                _ => false,
            };
            if !for_another {
                let at = e.step;
                // A task held up by the lock the running task took is so
                // only for a Go mutex or a monitor: name the resource whose
                // kind (edited, say) rules it out, not just the event.
                let held_up = match (e.kind, e.op.as_deref(), e.resource, kind_of(e.resource)) {
                    (Block, Some("lock"), Some(r), Some(k)) if !matches!(k, "mutex" | "monitor") => format!(
                        " (a task held up in another's step waits to lock a mutex or enter a monitor that step \
                         took; resources[{r}] is a {k})"
                    ),
                    _ => String::new(),
                };
                return Err(match e.peer {
                    None => format!(
                        "events[{i}]: {} of task {t} at step {at}, which the schedule gives to task {ran}{held_up}",
                        kind()
                    ),
                    Some(p) => format!(
                        "events[{i}]: {} of task {t} with peer {p} at step {at}, which the schedule gives to task {ran}",
                        kind()
                    ),
                });
            }
        }
        // 0 unspawned, 1 runnable, 2 blocked or asleep, 3 finished; from
        // the events of the steps before each step.
        let mut state = vec![0u8; self.tasks.len()];
        let mut next = 0;
        // Foreground tasks spawned and not finished: a run stops once there
        // are none, so every step has one.
        let mut foreground = 0usize;
        let mut apply = |e: &super::Event, state: &mut [u8]| {
            let s = &mut state[e.task as usize];
            let fg = !self.tasks[e.task as usize].background;
            match e.kind {
                Spawn => {
                    *s = 1;
                    foreground += usize::from(fg);
                }
                Block | Sleep => *s = 2,
                Wake => *s = 1,
                Finish => {
                    *s = 3;
                    foreground -= usize::from(fg);
                }
                _ => {}
            }
            foreground
        };
        for (i, &t) in self.schedule.iter().enumerate() {
            let step = i as u64 + 1;
            let mut live = None;
            while let Some(e) = self.events.get(next).filter(|e| e.step < step) {
                live = Some(apply(e, &mut state));
                next += 1;
            }
            if live == Some(0) {
                return Err(format!(
                    "schedule[{i}]: step {step} runs, but every foreground task has returned by then, \
                     where a run stops (tasks[].background says otherwise of some task)"
                ));
            }
            let why = match state[t as usize] {
                1 => continue,
                0 => "it is not spawned yet",
                2 => "it is blocked or asleep",
                _ => "it has finished",
            };
            return Err(format!("schedule[{i}]: task {t} runs at step {step}, but {why}"));
        }
        // (That every foreground task returns in a completed run,
        // validate_outcome checks.)
        Ok(())
    }
}

/// The name of an event kind as traces spell it.
fn event_kind_name(kind: super::EventKind) -> String {
    serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// "a lock event", "an unlock event": an event of `kind`, for messages.
/// Who holds each lock at the end of a trace's events (by resource id).
struct Locks {
    /// A Go mutex's holder, or an RWMutex's writer.
    holder: Vec<Option<u32>>,
    /// An RWMutex's readers, in the order they took it.
    readers: Vec<Vec<u32>>,
    /// A monitor's owner and its entry count.
    owner: Vec<Option<(u32, u64)>>,
    /// By task: the monitors it waits on, with the entry count it gave up.
    saved: Vec<Vec<(u32, u64)>>,
    /// A monitor's wait set: the tasks in `wait` not yet notified.
    waiting: Vec<Vec<u32>>,
    /// A Go mutex its holder handed to another task to unlock (a `value`
    /// event `hand_off` on it), until the unlock.
    handed: Vec<bool>,
}

fn an_event(kind: super::EventKind) -> String {
    let name = event_kind_name(kind);
    let an = if name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{an} {name} event")
}

/// The resource kinds an event of `kind` can be about (`None`: any, or none).
fn resource_kinds(kind: super::EventKind) -> Option<&'static [&'static str]> {
    use super::EventKind::*;
    Some(match kind {
        Lock | Unlock => &["mutex", "rwmutex"],
        RLock | RUnlock => &["rwmutex"],
        Enter | Exit | Wait | Notify | NotifyAll => &["monitor"],
        Send | Recv => &["chan"],
        Close => &["chan", "pipe"],
        Write | Read => &["pipe"],
        _ => return None,
    })
}
