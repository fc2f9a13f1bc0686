//! The model parameters as command-line flags, shared by `run`, `hunt`,
//! `replay`, `explore` and `shrink`. Values stay text here; each model checks its own
//! (range, choices) so the error names the model and the accepted values.

use clap::Args;

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "Model parameters (see `deadsim models`)")]
pub struct ModelArgs {
    /// abba: both threads take A then B (the fix)
    #[arg(long)]
    pub fixed: bool,
    /// abba, philosophers: rounds (meals) per thread
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub rounds: Option<String>,
    /// philosophers: number of philosophers
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub philosophers: Option<String>,
    /// philosophers: take the lower-numbered fork first (the fix)
    #[arg(long)]
    pub ordered: bool,
    /// ttrpc: server tag (v1.0.0 to v1.2.8)
    #[arg(long, value_name = "TAG", allow_hyphen_values = true)]
    pub server: Option<String>,
    /// ttrpc: client tag (v1.0.0 to v1.2.8)
    #[arg(long, value_name = "TAG", allow_hyphen_values = true)]
    pub client: Option<String>,
    /// ttrpc: calling goroutines
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub callers: Option<String>,
    /// ttrpc: calls per caller
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub calls: Option<String>,
    /// ttrpc: request payload bytes
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    pub request_bytes: Option<String>,
    /// ttrpc: response payload bytes
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    pub response_bytes: Option<String>,
    /// ttrpc: sets both request and response payload bytes
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    pub payload: Option<String>,
    /// ttrpc: bytes each pipe direction buffers (0: net.Pipe)
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    pub pipe_buffer: Option<String>,
    /// ttrpc: share of calls to a method the server does not register (0 to 1)
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub unregistered_fraction: Option<String>,
    /// flink: release (1.12.5, 1.13.0, 1.13.1, 1.13.2, 1.13.3, 1.13.5, 1.14.0)
    #[arg(long, value_name = "VERSION", allow_hyphen_values = true)]
    pub flink_version: Option<String>,
    /// flink: a proposed fix on top of 1.13.0/1.13.1 (self-assign, self-assign-clear)
    #[arg(long, value_name = "FIX", allow_hyphen_values = true)]
    pub fix: Option<String>,
    /// flink: minimal, pipeline or reentry
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub scenario: Option<String>,
    /// flink: input channels (pipeline)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub channels: Option<String>,
    /// flink: exclusive buffers per channel
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub exclusive: Option<String>,
    /// flink: floating buffers in the pool (pipeline)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub floating: Option<String>,
    /// flink: buffers each channel receives (pipeline)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub buffers_per_channel: Option<String>,
    /// flink: buffers consumed between checkpoints (pipeline)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub checkpoint_interval: Option<String>,
    /// flink: the largest sender backlog (pipeline)
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub max_backlog: Option<String>,
}

impl ModelArgs {
    /// The flags given, as (name, value) pairs for `Model::configure`.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut flag = |name: &str, on: bool| {
            if on {
                out.push((name.to_string(), "true".to_string()));
            }
        };
        flag("fixed", self.fixed);
        flag("ordered", self.ordered);
        let mut value = |name: &str, v: &Option<String>| {
            if let Some(v) = v {
                out.push((name.to_string(), v.clone()));
            }
        };
        value("rounds", &self.rounds);
        value("philosophers", &self.philosophers);
        value("server", &self.server);
        value("client", &self.client);
        value("callers", &self.callers);
        value("calls", &self.calls);
        value("request-bytes", &self.request_bytes);
        value("response-bytes", &self.response_bytes);
        value("payload", &self.payload);
        value("pipe-buffer", &self.pipe_buffer);
        value("unregistered-fraction", &self.unregistered_fraction);
        value("flink-version", &self.flink_version);
        value("fix", &self.fix);
        value("scenario", &self.scenario);
        value("channels", &self.channels);
        value("exclusive", &self.exclusive);
        value("floating", &self.floating);
        value("buffers-per-channel", &self.buffers_per_channel);
        value("checkpoint-interval", &self.checkpoint_interval);
        value("max-backlog", &self.max_backlog);
        out
    }
}
