//! Steps: a guard that finishes its step.

use crate::context::RunContext;
use crate::error::EmitError;
use agui_core::event::{StepFinished, StepStarted};

/// A started step. Dropping it sends `STEP_FINISHED`.
#[derive(Debug)]
#[must_use = "the step finishes when this guard is dropped"]
pub struct Step {
    ctx: RunContext,
    name: String,
    finished: bool,
}

impl Step {
    pub(crate) async fn start(ctx: RunContext, name: String) -> Result<Step, EmitError> {
        ctx.emit(StepStarted::new(name.clone())).await?;
        Ok(Step {
            ctx,
            name,
            finished: false,
        })
    }

    /// The step name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sends `STEP_FINISHED`.
    pub async fn finish(mut self) -> Result<(), EmitError> {
        self.finished = true;
        self.ctx.emit(StepFinished::new(self.name.clone())).await
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self
                .ctx
                .emit_now(StepFinished::new(std::mem::take(&mut self.name)));
        }
    }
}
