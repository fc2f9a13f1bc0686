//! The model parameters as command-line flags, shared by `run`, `hunt`,
//! `replay` and `bench`. Values stay text here; each model checks its own
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
        out
    }
}
