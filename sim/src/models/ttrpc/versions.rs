//! Real ttrpc tags and the client and server designs they ship.
//!
//! Frames cite the line numbers of one representative tag per form (v1.0.2,
//! v1.1.0, v1.2.0, v1.2.2, v1.2.3, v1.2.4 for clients, the v1.2.0-v1.2.3
//! design having two forms, before and after `recvClose`, and v1.2.3's
//! interceptor chaining moving v1.2.2's lines; v1.0.2 and v1.2.3 for
//! servers), read from the tagged sources; tags that share a form share its
//! code paths, not always its exact line numbers.

/// Every tag from v1.0.0 to v1.2.8, oldest first.
pub const TAGS: &[&str] = &[
    "v1.0.0", "v1.0.1", "v1.0.2", "v1.1.0", "v1.1.1", "v1.1.2", "v1.2.0", "v1.2.1", "v1.2.2", "v1.2.3", "v1.2.4",
    "v1.2.5", "v1.2.6", "v1.2.7", "v1.2.8",
];

/// The four client designs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClientDesign {
    /// v1.0.x: one `run` goroutine writes requests and dispatches responses (#72).
    V1_0,
    /// v1.1.x: separate sender and receiver goroutines (#94).
    V1_1,
    /// v1.2.0-v1.2.3: callers write under `sendLock`, taken while holding
    /// `streamLock` (#107). Its streams have `recvClose` from v1.2.2.
    V1_2_0,
    /// v1.2.4-v1.2.8: `sendLock` outer, `streamLock` inner (#168, as merged).
    V1_2_4,
}

/// The two server designs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ServerDesign {
    /// v1.0.x and v1.1.x: the reader hands each request to the main loop.
    V1_0,
    /// v1.2.x: the reader dispatches requests itself (streaming, #107).
    V1_2,
}

impl ClientDesign {
    /// The design a tag ships, or `None` for an unknown tag.
    pub fn of(tag: &str) -> Option<ClientDesign> {
        let tag = canonical(tag)?;
        Some(match tag {
            "v1.0.0" | "v1.0.1" | "v1.0.2" => ClientDesign::V1_0,
            "v1.1.0" | "v1.1.1" | "v1.1.2" => ClientDesign::V1_1,
            "v1.2.0" | "v1.2.1" | "v1.2.2" | "v1.2.3" => ClientDesign::V1_2_0,
            _ => ClientDesign::V1_2_4,
        })
    }

    pub const ALL: [ClientDesign; 4] =
        [ClientDesign::V1_0, ClientDesign::V1_1, ClientDesign::V1_2_0, ClientDesign::V1_2_4];
}

impl ServerDesign {
    /// The design a tag ships, or `None` for an unknown tag.
    pub fn of(tag: &str) -> Option<ServerDesign> {
        let tag = canonical(tag)?;
        Some(if tag.starts_with("v1.2.") { ServerDesign::V1_2 } else { ServerDesign::V1_0 })
    }
}

/// Accepts `v1.2.3` and `1.2.3`.
fn canonical(tag: &str) -> Option<&'static str> {
    let t = tag.strip_prefix('v').unwrap_or(tag);
    TAGS.iter().copied().find(|x| &x[1..] == t)
}

/// The accepted tag given as `tag` (normalized), or an error listing them all.
pub fn parse_tag(flag: &str, tag: &str) -> Result<&'static str, String> {
    canonical(tag).ok_or_else(|| format!("--{flag}: `{tag}` is not a ttrpc tag (accepted: {})", TAGS.join(", ")))
}
