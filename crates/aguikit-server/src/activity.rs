//! Activities: structured progress shown in the conversation, updated by deltas.

use crate::context::RunContext;
use crate::diff::{self, Change};
use crate::error::EmitError;
use aguikit_core::event::{ActivityDelta, ActivitySnapshot};
use aguikit_core::patch::{JsonPatch, apply_patch};
use serde_json::{Map, Value};

/// A created activity. Updates go out as `ACTIVITY_DELTA` (or a replacing
/// `ACTIVITY_SNAPSHOT` when that is smaller). Activities are never "open", so dropping the
/// handle sends nothing.
#[derive(Debug)]
pub struct Activity {
    ctx: RunContext,
    id: String,
    activity_type: String,
    content: Value,
}

impl Activity {
    pub(crate) async fn create(
        ctx: RunContext,
        id: String,
        activity_type: String,
        content: Map<String, Value>,
    ) -> Result<Activity, EmitError> {
        ctx.emit(ActivitySnapshot::new(
            id.clone(),
            activity_type.clone(),
            content.clone(),
        ))
        .await?;
        Ok(Activity {
            ctx,
            id,
            activity_type,
            content: Value::Object(content),
        })
    }

    /// The activity message id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The activity type.
    pub fn activity_type(&self) -> &str {
        &self.activity_type
    }

    /// The content as last sent.
    pub fn content(&self) -> &Map<String, Value> {
        match &self.content {
            Value::Object(m) => m,
            _ => unreachable!("activity content is always an object"),
        }
    }

    /// Replaces the content, sending the smaller of a delta and a snapshot.
    pub async fn set(&mut self, content: Map<String, Value>) -> Result<(), EmitError> {
        let next = Value::Object(content);
        match diff::change(Some(&self.content), &next) {
            Change::None => return Ok(()),
            Change::Patch(ops) => {
                self.ctx
                    .emit(ActivityDelta::new(
                        self.id.clone(),
                        self.activity_type.clone(),
                        ops,
                    ))
                    .await?
            }
            Change::Snapshot => {
                let Value::Object(m) = &next else {
                    unreachable!()
                };
                self.ctx
                    .emit(ActivitySnapshot::new(
                        self.id.clone(),
                        self.activity_type.clone(),
                        m.clone(),
                    ))
                    .await?
            }
        }
        self.content = next;
        Ok(())
    }

    /// Edits the content in place and sends the change.
    pub async fn update(
        &mut self,
        edit: impl FnOnce(&mut Map<String, Value>),
    ) -> Result<(), EmitError> {
        let mut next = self.content().clone();
        edit(&mut next);
        self.set(next).await
    }

    /// Sends an `ACTIVITY_DELTA` as given (and applies it to the tracked content).
    pub async fn patch(&mut self, patch: JsonPatch) -> Result<(), EmitError> {
        let mut next = self.content.clone();
        if apply_patch(&mut next, &patch).is_ok() && next.is_object() {
            self.content = next;
        }
        self.ctx
            .emit(ActivityDelta::new(
                self.id.clone(),
                self.activity_type.clone(),
                patch,
            ))
            .await
    }
}
