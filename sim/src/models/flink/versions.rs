//! Flink releases and the line numbers the frames cite.
//!
//! 1.13.0 and 1.13.1 recycle the surplus floating buffer inside
//! `synchronized (bufferQueue)`; 1.12.5, 1.13.2 and later return it from
//! `addExclusiveBuffer` and recycle it after the monitor is left (PR #16174).
//! Frames cite 1.13.1's lines for the first group and 1.13.3's for the second,
//! but 1.14.0's for 1.14.0, which also has another listener protocol
//! (FLINK-23466: `notifyBufferAvailable` returns a boolean and the manager
//! registers itself again; see [`ListenerApi`]).

/// Every accepted `--flink-version`.
pub const VERSIONS: &[&str] = &["1.12.5", "1.13.0", "1.13.1", "1.13.2", "1.13.3", "1.13.5", "1.14.0"];

/// Whether a release has the FLINK-22946 fix.
pub fn is_fixed(version: &str) -> Option<bool> {
    match version {
        "1.13.0" | "1.13.1" => Some(false),
        "1.12.5" | "1.13.2" | "1.13.3" | "1.13.5" | "1.14.0" => Some(true),
        _ => None,
    }
}

/// How `LocalBufferPool` and a `BufferManager` hand over a floating buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListenerApi {
    /// Up to 1.13: `notifyBufferAvailable` returns a `NotificationResult`,
    /// and on `BUFFER_USED_NEED_MORE` the pool puts the listener back in its
    /// queue (`fireBufferAvailableNotification`, under the pool lock).
    NotificationResult,
    /// 1.14 (FLINK-23466): it returns whether the buffer was taken, clears
    /// `isWaitingForFloatingBuffers` at once, and the manager asks for more
    /// itself (`tryRequestBuffers`, under its `bufferQueue`), registering
    /// again if the pool is empty. `requestBuffer` also lowers
    /// `numRequiredBuffers` (FLINK-16641).
    Boolean,
}

/// The listener protocol of a release.
pub fn listener_api(version: &str) -> ListenerApi {
    if version.starts_with("1.14.") {
        ListenerApi::Boolean
    } else {
        ListenerApi::NotificationResult
    }
}

/// The lines a release's frames cite.
pub fn lines_of(version: &str) -> &'static Lines {
    match version {
        "1.13.0" | "1.13.1" => &LINES_1_13_1,
        v if v.starts_with("1.14.") => &LINES_1_14_0,
        _ => &LINES_1_13_3,
    }
}

/// The `file:line` of each place the model marks.
#[derive(Debug)]
pub struct Lines {
    pub bm_recycle: &'static str,
    pub bm_recycle_lock: &'static str,
    pub bm_recycle_add: &'static str,
    pub bm_recycle_outside: &'static str,
    pub add_exclusive: &'static str,
    pub add_exclusive_recycle: &'static str,
    pub notify: &'static str,
    pub notify_lock: &'static str,
    pub request_floating: &'static str,
    pub request_floating_lock: &'static str,
    pub request_floating_request: &'static str,
    pub request_floating_listener: &'static str,
    pub pool_recycle_public: &'static str,
    pub pool_recycle: &'static str,
    pub pool_recycle_lock: &'static str,
    pub pool_recycle_fire: &'static str,
    pub pool_fire: &'static str,
    pub pool_fire_notify: &'static str,
    pub pool_fire_register: &'static str,
    pub pool_request: &'static str,
    pub pool_add_listener: &'static str,
    pub ric_on_buffer: &'static str,
    pub ric_maybe_persist: &'static str,
    pub ric_on_backlog: &'static str,
    /// `onBuffer`'s calls of `notifyChannelNonEmpty` and `onSenderBacklog`,
    /// after the `receivedBuffers` block; empty where no copy of the
    /// release's file was read (the frame then cites `onBuffer`'s first line).
    pub ric_notify_non_empty: &'static str,
    pub ric_on_buffer_backlog: &'static str,
    pub ric_checkpoint_started: &'static str,
    pub ric_inflight_retain: &'static str,
    /// `requestBuffer`.
    pub request_buffer: &'static str,
    /// 1.14 only (empty before): `tryRequestBuffers`, its call in
    /// `requestFloatingBuffers`, and its call in `notifyBufferAvailable`.
    pub try_request: &'static str,
    pub request_floating_try: &'static str,
    pub notify_try: &'static str,
}

/// 1.13.1 (before the fix).
pub const LINES_1_13_1: Lines = Lines {
    bm_recycle: "BufferManager.java:190",
    bm_recycle_lock: "BufferManager.java:192",
    bm_recycle_add: "BufferManager.java:200",
    bm_recycle_outside: "BufferManager.java:211",
    add_exclusive: "BufferManager.java:394",
    add_exclusive_recycle: "BufferManager.java:399",
    notify: "BufferManager.java:277",
    notify_lock: "BufferManager.java:296",
    request_floating: "BufferManager.java:151",
    request_floating_lock: "BufferManager.java:153",
    request_floating_request: "BufferManager.java:166",
    request_floating_listener: "BufferManager.java:170",
    pool_recycle_public: "LocalBufferPool.java:460",
    pool_recycle: "LocalBufferPool.java:463",
    pool_recycle_lock: "LocalBufferPool.java:468",
    pool_recycle_fire: "LocalBufferPool.java:494",
    pool_fire: "LocalBufferPool.java:500",
    pool_fire_notify: "LocalBufferPool.java:507",
    pool_fire_register: "LocalBufferPool.java:509",
    pool_request: "LocalBufferPool.java:330",
    pool_add_listener: "LocalBufferPool.java:553",
    ric_on_buffer: "RemoteInputChannel.java:450",
    ric_maybe_persist: "RemoteInputChannel.java:497",
    ric_on_backlog: "RemoteInputChannel.java:440",
    ric_notify_non_empty: "",
    ric_on_buffer_backlog: "",
    ric_checkpoint_started: "RemoteInputChannel.java:561",
    ric_inflight_retain: "RemoteInputChannel.java:660",
    // 1.13.1's file was not found: its lines before requestFloatingBuffers
    // are 7 fewer than 1.13.3's, and where they differ is not known.
    request_buffer: "",
    try_request: "",
    request_floating_try: "",
    notify_try: "",
};

/// 1.13.3 (after the fix).
pub const LINES_1_13_3: Lines = Lines {
    bm_recycle: "BufferManager.java:197",
    bm_recycle_lock: "BufferManager.java:199",
    bm_recycle_add: "BufferManager.java:208",
    bm_recycle_outside: "BufferManager.java:219",
    add_exclusive: "BufferManager.java:410",
    add_exclusive_recycle: "BufferManager.java:413",
    notify: "BufferManager.java:289",
    notify_lock: "BufferManager.java:308",
    request_floating: "BufferManager.java:158",
    request_floating_lock: "BufferManager.java:160",
    request_floating_request: "BufferManager.java:173",
    request_floating_listener: "BufferManager.java:177",
    pool_recycle_public: "LocalBufferPool.java:465",
    pool_recycle: "LocalBufferPool.java:468",
    pool_recycle_lock: "LocalBufferPool.java:473",
    pool_recycle_fire: "LocalBufferPool.java:499",
    pool_fire: "LocalBufferPool.java:505",
    pool_fire_notify: "LocalBufferPool.java:512",
    pool_fire_register: "LocalBufferPool.java:514",
    pool_request: "LocalBufferPool.java:335",
    pool_add_listener: "LocalBufferPool.java:558",
    ric_on_buffer: "RemoteInputChannel.java:450",
    ric_maybe_persist: "RemoteInputChannel.java:501",
    ric_on_backlog: "RemoteInputChannel.java:440",
    ric_notify_non_empty: "",
    ric_on_buffer_backlog: "",
    ric_checkpoint_started: "RemoteInputChannel.java:565",
    ric_inflight_retain: "RemoteInputChannel.java:664",
    request_buffer: "BufferManager.java:86",
    try_request: "",
    request_floating_try: "",
    notify_try: "",
};

/// 1.14.0: the merged fix, and the boolean listener protocol. Read from a
/// 1.14 snapshot of the sources (with FLINK-24035, before the renames of
/// FLINK-25407, which move BufferManager's lines after 142 one down in
/// 1.14.3 and later); no copy at the release tag itself was found. The pool
/// no longer puts a listener back, so `pool_fire_register` cites the
/// manager's own registration in `tryRequestBuffers`.
pub const LINES_1_14_0: Lines = Lines {
    bm_recycle: "BufferManager.java:209",
    bm_recycle_lock: "BufferManager.java:211",
    bm_recycle_add: "BufferManager.java:220",
    bm_recycle_outside: "BufferManager.java:231",
    add_exclusive: "BufferManager.java:425",
    add_exclusive_recycle: "BufferManager.java:428",
    notify: "BufferManager.java:306",
    notify_lock: "BufferManager.java:324",
    request_floating: "BufferManager.java:163",
    request_floating_lock: "BufferManager.java:165",
    request_floating_request: "BufferManager.java:186",
    request_floating_listener: "BufferManager.java:190",
    pool_recycle_public: "LocalBufferPool.java:488",
    pool_recycle: "LocalBufferPool.java:491",
    pool_recycle_lock: "LocalBufferPool.java:495",
    pool_recycle_fire: "LocalBufferPool.java:521",
    pool_fire: "LocalBufferPool.java:526",
    pool_fire_notify: "LocalBufferPool.java:532",
    pool_fire_register: "BufferManager.java:190",
    pool_request: "LocalBufferPool.java:358",
    pool_add_listener: "LocalBufferPool.java:566",
    ric_on_buffer: "RemoteInputChannel.java:507",
    ric_maybe_persist: "RemoteInputChannel.java:563",
    ric_on_backlog: "RemoteInputChannel.java:500",
    ric_notify_non_empty: "RemoteInputChannel.java:571",
    ric_on_buffer_backlog: "RemoteInputChannel.java:575",
    ric_checkpoint_started: "RemoteInputChannel.java:627",
    ric_inflight_retain: "RemoteInputChannel.java:726",
    request_buffer: "BufferManager.java:87",
    try_request: "BufferManager.java:179",
    request_floating_try: "BufferManager.java:174",
    notify_try: "BufferManager.java:344",
};
