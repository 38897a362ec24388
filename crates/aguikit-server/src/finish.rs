//! How an agent ends a run: the content of `RUN_FINISHED`.

use aguikit_core::metadata::Metadata;
use aguikit_core::{Interrupt, RunOutcome, TokenUsage};
use serde_json::Value;

/// The successful end of a run, turned into `RUN_FINISHED` by the runtime.
///
/// ```
/// use aguikit_server::Finish;
/// use serde_json::json;
/// let done = Finish::success().with_result(json!({"answer": 42}));
/// let paused = Finish::interrupt(vec![aguikit_core::Interrupt::new("i1", "confirmation")]);
/// let stopped = Finish::cancelled();
/// # let _ = (done, paused, stopped);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finish {
    pub(crate) result: Option<Value>,
    pub(crate) outcome: Option<RunOutcome>,
    pub(crate) usage: Vec<TokenUsage>,
    pub(crate) metadata: Option<Metadata>,
}

impl Finish {
    /// Success, with no `outcome` field (absent means success).
    pub fn success() -> Self {
        Finish::default()
    }

    /// Success naming the tool calls left for the client to answer (front-end tools).
    pub fn pending_tool_calls(ids: Vec<String>) -> Self {
        Finish {
            outcome: Some(RunOutcome::Success {
                pending_tool_call_ids: Some(ids),
            }),
            ..Finish::default()
        }
    }

    /// Paused on these interrupts (plus any raised with
    /// [`RunContext::interrupt`](crate::RunContext::interrupt)); the next run on the thread
    /// must answer all of them in `resume`.
    pub fn interrupt(interrupts: Vec<Interrupt>) -> Self {
        Finish {
            outcome: Some(RunOutcome::Interrupt { interrupts }),
            ..Finish::default()
        }
    }

    /// Stopped on purpose: not a failure, nothing to resume.
    pub fn cancelled() -> Self {
        Finish {
            outcome: Some(RunOutcome::Cancelled),
            ..Finish::default()
        }
    }

    /// Sets the run's `result`.
    pub fn with_result(mut self, result: Value) -> Self {
        self.result = Some(result);
        self
    }

    /// Adds token usage (summed per provider and model with what the run already reported
    /// through [`RunContext::add_usage`](crate::RunContext::add_usage)).
    pub fn with_usage(mut self, usage: TokenUsage) -> Self {
        self.usage.push(usage);
        self
    }

    /// Sets the metadata of `RUN_FINISHED`.
    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = Some(metadata);
        self
    }
}

/// The end another agent reported: its `RUN_FINISHED`'s result, outcome (interrupts
/// included), usage and metadata, for an agent that relays a run (a gateway, a stream
/// adapter). The runtime writes the run's own ids.
impl From<aguikit_core::event::RunFinished> for Finish {
    fn from(f: aguikit_core::event::RunFinished) -> Self {
        Finish {
            result: f.result,
            outcome: f.outcome,
            usage: f.usage.unwrap_or_default(),
            metadata: f.metadata.map(|m| *m),
        }
    }
}

impl From<()> for Finish {
    fn from((): ()) -> Self {
        Finish::success()
    }
}
