//! Run and step lifecycle: `RUN_STARTED`, `RUN_FINISHED`, `RUN_ERROR`, `STEP_STARTED`, `STEP_FINISHED`.
//!
//! Declared with `event_types!` (see `macros.rs`): one row per field.

use crate::input::RunAgentInput;
use crate::interrupt::RunOutcome;
use crate::interrupt::run_outcome;
use crate::serde_util::legacy_null_value;
use crate::usage::TokenUsage;
use serde_json::Value;

super::macros::event_types! {
    /// `RUN_STARTED`: Opens a run.
    RunStarted {
        /// Conversation id.
        thread_id "threadId": String,
        /// This run's id.
        run_id "runId": String,
        /// The producer's own protocol version (`MAJOR.MINOR`).
        protocol_version "protocolVersion" with_protocol_version: Option<String>,
        /// The run that spawned this one.
        parent_run_id "parentRunId" with_parent_run_id: Option<String>,
        /// Echo of the request that started the run.
        input "input" with_input: Option<Box<RunAgentInput>>,
    }

    /// `RUN_FINISHED`: Closes a run that did not fail.
    RunFinished {
        /// Conversation id.
        thread_id "threadId": String,
        /// The run's id.
        run_id "runId": String,
        /// The run's return value.
        result "result" with_result: Option<Value> ["legacy_null_value"],
        /// Why the run ended (absent = success).
        outcome "outcome" with_outcome: Option<RunOutcome> ["run_outcome"],
        /// Token usage, one entry per provider/model.
        usage "usage" with_usage: Option<Vec<TokenUsage>>,
    }

    /// `RUN_ERROR`: Ends a run that failed.
    RunError {
        /// Human-readable message.
        message "message": String,
        /// Open vocabulary error code.
        code "code" with_code: Option<String>,
        /// Usage accrued before the failure.
        usage "usage" with_usage: Option<Vec<TokenUsage>>,
    }

    /// `STEP_STARTED`: A named step began.
    StepStarted {
        /// The step's name.
        step_name "stepName": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }

    /// `STEP_FINISHED`: A named step ended.
    StepFinished {
        /// The step's name.
        step_name "stepName": String,
        /// The subagent invocation that produced this event (absent = the parent agent).
        subagent_run_id "subagentRunId" with_subagent_run_id: Option<String>,
    }
}
