//! Collects events while an execution runs (only when recording is on).

use std::borrow::Cow;
use std::collections::HashMap;

use super::{Event, EventKind, FrameInfo};
use crate::frame::Frame;

#[derive(Default)]
pub(crate) struct Recorder {
    pub events: Vec<Event>,
    pub frames: Vec<FrameInfo>,
    pub schedule: Vec<u32>,
    /// Every choice that had alternatives, in order: the replay schedule.
    pub choices: Vec<u32>,
    /// Keyed by the frame's text, not its address: identical string literals
    /// may or may not be merged by the compiler, and ids must not depend on it.
    frame_ids: HashMap<(&'static str, &'static str), u32>,
}

impl Recorder {
    pub fn frame_id(&mut self, f: Frame) -> u32 {
        if let Some(&id) = self.frame_ids.get(&(f.name, f.site)) {
            return id;
        }
        let id = self.frames.len() as u32;
        self.frames.push(f.into());
        self.frame_ids.insert((f.name, f.site), id);
        id
    }

    #[allow(clippy::too_many_arguments)]
    pub fn event(
        &mut self,
        step: u64,
        time: u64,
        task: u32,
        kind: EventKind,
        resource: Option<u32>,
        amount: Option<u64>,
        buffered: Option<u64>,
        frame: Option<Frame>,
        peer: Option<u32>,
        op: Option<&'static str>,
    ) {
        let frame = frame.map(|f| self.frame_id(f));
        self.events.push(Event {
            step,
            time,
            task,
            kind,
            resource,
            amount,
            buffered,
            frame,
            peer,
            op: op.map(Cow::Borrowed),
            cases: Vec::new(),
        });
    }
}
