//! Charts for deadsim traces (timeline, locks, pipes, wait-for graph).
//!
//! The rendering itself is built in a later change; this crate already
//! depends on `sim` for the trace types so the CLI can wire `render` to it.

pub use sim::trace::Trace;
