//! Frames of the virtual call stack.
//!
//! A model marks where it is with [`frame`] or [`frame_at`]; the guard pops
//! the frame when it goes out of scope. Reports and charts show these frames,
//! so name them as the real code does (`BufferManager.recycle`,
//! `Client.createStream`) and give the real source's `file:line` where known.
//!
//! ```
//! # sim::Sim::new(0).run(|| async {
//! let _f = sim::frame_at("Client.createStream", "client.go:405");
//! # });
//! ```

use crate::rt;

/// One frame: a function name and, where the model knows it, the real source's `file:line`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    /// `Type.method` as the real code names it.
    pub name: &'static str,
    /// `file.go:123` of the real source, or "" when unknown.
    pub site: &'static str,
}

impl std::fmt::Display for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.site.is_empty() {
            write!(f, "{}", self.name)
        } else {
            write!(f, "{} ({})", self.name, self.site)
        }
    }
}

/// Pops its frame when dropped.
#[must_use = "the frame is popped when this guard is dropped"]
pub struct FrameGuard {
    _private: (),
}

/// Pushes a frame without a source location onto the current task's stack.
#[inline]
pub fn frame(name: &'static str) -> FrameGuard {
    frame_at(name, "")
}

/// Pushes a frame with the real source's `file:line` onto the current task's stack.
#[inline]
pub fn frame_at(name: &'static str, site: &'static str) -> FrameGuard {
    rt::with(|s| {
        let t = s.current;
        s.tasks[t as usize].frames.push(Frame { name, site });
    });
    FrameGuard { _private: () }
}

impl Drop for FrameGuard {
    #[inline]
    fn drop(&mut self) {
        // While a task unwinds from a panic its frames stay, so the outcome
        // shows the stack where it panicked.
        if std::thread::panicking() {
            return;
        }
        rt::with_live(|s| {
            let t = s.current;
            let task = &mut s.tasks[t as usize];
            let depth = task.frames.len();
            task.frames.pop();
            if !task.held.is_empty() {
                s.frame_returned(t, depth);
            }
        });
    }
}

/// Sets the source line of the current task's innermost frame: call it
/// before a blocking operation so stacks show the line the task is at, as a
/// real stack trace does.
///
/// ```
/// # sim::Sim::new(0).run(|| async {
/// let _f = sim::frame("Client.run");
/// sim::at("client.go:273");
/// # });
/// ```
#[inline]
pub fn at(site: &'static str) {
    rt::with(|s| {
        let t = s.current;
        if let Some(top) = s.tasks[t as usize].frames.last_mut() {
            top.site = site;
        }
    })
}

/// `here!()`: `file:line` of the place this macro is written, for a
/// model's own frames. `here!(op)`: sets the current frame's line to the
/// line `here!(` is written on ([`at`]), then evaluates `op`, so a report
/// of a wait in `op` cites the line of the operation itself (an
/// `at(here!())` on the line before would cite that line). As with
/// `line!()`, that is the line the outermost macro call starts on: inside
/// another macro, that macro's. Like [`at`], it marks the innermost frame
/// (none: it does nothing) when `op` is evaluated, which for a future is
/// when it is made, not when it is awaited.
///
/// ```
/// let run = sim::Sim::new(0).run(|| async {
///     let mu = sim::sync::Mutex::new("mu");
///     let _f = sim::frame("main");
///     let _g = mu.lock().await;
///     let _again = sim::here!(mu.lock()).await; // locked twice: a deadlock cited here
/// });
/// let sim::Outcome::Deadlock(d) = &run.outcome else { panic!("{}", run.outcome) };
/// let at = d.behind.iter().chain(&d.cycle).next().unwrap().stack[0].site.clone();
/// assert_eq!(at, format!("{}:{}", file!(), line!() - 4));
/// ```
#[macro_export]
macro_rules! here {
    () => {
        concat!(file!(), ":", line!())
    };
    ($op:expr) => {{
        $crate::at($crate::here!());
        $op
    }};
}
