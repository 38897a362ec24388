//! Steps: a guard that finishes its step.

use crate::context::RunContext;
use crate::error::EmitError;
use crate::open::Open;
use aguikit_core::event::{StepFinished, StepStarted};

/// A started step. Dropping it sends `STEP_FINISHED`.
#[derive(Debug)]
#[must_use = "the step finishes when this guard is dropped"]
pub struct Step {
    /// Open under the step's name.
    open: Open,
}

impl Step {
    pub(crate) async fn start(ctx: RunContext, name: String) -> Result<Step, EmitError> {
        let started = StepStarted::new(name.clone());
        let open = Open::start(ctx, name, started, |name| StepFinished::new(name).into()).await?;
        Ok(Step { open })
    }

    /// The step name.
    pub fn name(&self) -> &str {
        self.open.id()
    }

    /// Sends `STEP_FINISHED`.
    pub async fn finish(mut self) -> Result<(), EmitError> {
        self.open.close().await
    }
}
