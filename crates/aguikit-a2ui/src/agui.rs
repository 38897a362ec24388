//! A2UI on AG-UI: the `a2ui-surface` activities of the official A2UI middleware's convention.
//!
//! An `ACTIVITY_SNAPSHOT` with `activityType: "a2ui-surface"` carries, in
//! `content.a2ui_operations`, the list of v0.9 messages that builds its surface(s); before a
//! surface paints, snapshots on the same message id carry a lifecycle `content.status`
//! (`building`, `retrying`, `failed`). [`ActivityFolder`] follows these activities through a
//! stream of events (snapshots and RFC 6902 deltas), and [`surfaces_from_messages`] reads
//! them from the messages of a folded conversation.

use crate::rules::Violation;
use crate::surface::Surfaces;
use crate::validate::{Finding, Validator};
use aguikit_core::event::Event;
use aguikit_core::message::Message;
use indexmap::IndexMap;
use serde_json::{Map, Value};

/// The activity type of A2UI surfaces.
pub const ACTIVITY_TYPE: &str = "a2ui-surface";
/// The content key of the operations list.
pub const OPERATIONS_KEY: &str = "a2ui_operations";

/// A surface's lifecycle before it paints (`content.status`).
#[derive(Debug, Clone, PartialEq)]
pub enum Lifecycle {
    /// The surface is being generated (`progressTokens`: how far).
    Building {
        /// Tokens received so far, when given.
        progress_tokens: Option<u64>,
    },
    /// An attempt failed validation and the agent retries.
    Retrying {
        /// This attempt's number.
        attempt: Option<u64>,
        /// How many attempts there will be at most.
        max_attempts: Option<u64>,
        /// The previous attempt's errors.
        errors: Vec<Value>,
    },
    /// No attempt produced a valid surface.
    Failed {
        /// Why.
        error: Option<String>,
        /// How many attempts were made.
        attempts: Option<u64>,
    },
    /// Another status word.
    Other(String),
}

/// One `a2ui-surface` activity, read.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceActivity {
    /// The activity's message id (`a2ui-surface-<id>`).
    pub message_id: String,
    /// The lifecycle status, when the content carries one.
    pub status: Option<Lifecycle>,
    /// The surfaces its operations build.
    pub surfaces: Surfaces,
    /// What is wrong with its operations (empty when valid).
    pub findings: Vec<Finding>,
}

/// Reads the content of one `a2ui-surface` activity: its lifecycle status and/or its
/// operations, validated as one batch.
pub fn read_content(
    message_id: &str,
    content: &Map<String, Value>,
    validator: &Validator,
) -> SurfaceActivity {
    let status = content.get("status").and_then(Value::as_str).map(|s| {
        let num = |k: &str| content.get(k).and_then(Value::as_u64);
        match s {
            "building" => Lifecycle::Building {
                progress_tokens: num("progressTokens"),
            },
            "retrying" => Lifecycle::Retrying {
                attempt: num("attempt"),
                max_attempts: num("maxAttempts"),
                errors: match content.get("errors") {
                    Some(Value::Array(a)) => a.clone(),
                    Some(other) => vec![other.clone()],
                    None => Vec::new(),
                },
            },
            "failed" => Lifecycle::Failed {
                error: content.get("error").map(|e| match e {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                // A count, or (the official middleware's) the list of the attempts.
                attempts: num("attempts").or_else(|| {
                    content
                        .get("attempts")
                        .and_then(Value::as_array)
                        .map(|a| a.len() as u64)
                }),
            },
            other => Lifecycle::Other(other.to_string()),
        }
    });
    let (findings, surfaces) = match content.get(OPERATIONS_KEY) {
        Some(Value::Array(ops)) => validator.validate_with_surfaces(ops),
        Some(other) => (
            vec![Finding {
                message: None,
                violation: Violation::new(
                    "A17",
                    format!(
                        "content.{OPERATIONS_KEY} is not a list but {}",
                        crate::schema::repr(other)
                    ),
                )
                .at(format!("/{OPERATIONS_KEY}")),
            }],
            Surfaces::new(),
        ),
        None if status.is_some() => (Vec::new(), Surfaces::new()),
        None => (
            vec![Finding {
                message: None,
                violation: Violation::new(
                    "A17",
                    format!("the content has neither {OPERATIONS_KEY} nor a status"),
                ),
            }],
            Surfaces::new(),
        ),
    };
    SurfaceActivity {
        message_id: message_id.to_string(),
        status,
        surfaces,
        findings,
    }
}

/// The `a2ui-surface` activities among a conversation's messages (as folded by the AG-UI
/// engine), read in order.
pub fn surfaces_from_messages<'a>(
    messages: impl IntoIterator<Item = &'a Message>,
    validator: &Validator,
) -> Vec<SurfaceActivity> {
    messages
        .into_iter()
        .filter_map(|m| match m {
            Message::Activity(a) if a.activity_type == ACTIVITY_TYPE => {
                Some(read_content(&a.id, &a.content, validator))
            }
            _ => None,
        })
        .collect()
}

impl SurfaceActivity {
    /// The activity as JSON: `messageId`, `status` (when any), `surfaces` (as
    /// [`Surfaces::to_value`]) and `violations` (each with its `rule`, `severity`,
    /// `message`, `operation` index, `surfaceId`, `componentId` and `path`).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("messageId".into(), Value::String(self.message_id.clone()));
        if let Some(s) = &self.status {
            let word = match s {
                Lifecycle::Building { .. } => "building",
                Lifecycle::Retrying { .. } => "retrying",
                Lifecycle::Failed { .. } => "failed",
                Lifecycle::Other(w) => w.as_str(),
            };
            m.insert("status".into(), Value::String(word.to_string()));
        }
        m.insert("surfaces".into(), self.surfaces.to_value());
        m.insert(
            "violations".into(),
            Value::Array(
                self.findings
                    .iter()
                    .map(|f| violation_json(&f.violation, f.message))
                    .collect(),
            ),
        );
        Value::Object(m)
    }
}

/// A violation as JSON, with the index of the operation it is about (when any).
pub fn violation_json(v: &Violation, operation: Option<usize>) -> Value {
    let mut m = Map::new();
    m.insert("rule".into(), Value::String(v.rule.to_string()));
    m.insert(
        "severity".into(),
        Value::String(v.severity().as_str().to_string()),
    );
    m.insert("message".into(), Value::String(v.message.clone()));
    if let Some(i) = operation {
        m.insert("operation".into(), Value::from(i));
    }
    if let Some(s) = &v.surface_id {
        m.insert("surfaceId".into(), Value::String(s.clone()));
    }
    if let Some(c) = &v.component_id {
        m.insert("componentId".into(), Value::String(c.clone()));
    }
    m.insert("path".into(), Value::String(v.path.clone()));
    Value::Object(m)
}

/// A violation found in an event stream: the event's index and the activity's message id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFinding {
    /// The index of the event (0-based) that produced the content.
    pub event: usize,
    /// The activity's message id.
    pub message_id: String,
    /// The operation's index in `content.a2ui_operations`, when the finding is about one.
    pub operation: Option<usize>,
    /// The violation.
    pub violation: Violation,
}

/// Follows `a2ui-surface` activities through an AG-UI event stream.
#[derive(Debug, Clone, Default)]
pub struct ActivityFolder {
    validator: Validator,
    contents: IndexMap<String, Map<String, Value>>,
    activities: IndexMap<String, SurfaceActivity>,
}

impl ActivityFolder {
    /// A folder that checks with `validator`.
    pub fn new(validator: Validator) -> Self {
        ActivityFolder {
            validator,
            contents: IndexMap::new(),
            activities: IndexMap::new(),
        }
    }

    /// Takes one event (its index in the stream): an `a2ui-surface` snapshot or delta is
    /// folded and its content checked; the findings are returned. Other events are ignored.
    pub fn push(&mut self, index: usize, event: &Event) -> Vec<EventFinding> {
        let (id, content) = match event {
            Event::ActivitySnapshot(s) if s.activity_type == ACTIVITY_TYPE => {
                let content = if s.replace == Some(false) {
                    let mut merged = self
                        .contents
                        .get(&s.message_id)
                        .cloned()
                        .unwrap_or_default();
                    for (k, v) in &s.content {
                        merged.insert(k.clone(), v.clone());
                    }
                    merged
                } else {
                    s.content.clone()
                };
                (s.message_id.clone(), content)
            }
            Event::ActivityDelta(d) if d.activity_type == ACTIVITY_TYPE => {
                let mut doc = Value::Object(
                    self.contents
                        .get(&d.message_id)
                        .cloned()
                        .unwrap_or_default(),
                );
                if let Err(e) = aguikit_core::patch::apply_patch(&mut doc, &d.patch) {
                    return vec![EventFinding {
                        event: index,
                        message_id: d.message_id.clone(),
                        operation: None,
                        violation: Violation::new(
                            "A17",
                            format!("the delta does not apply to the activity's content: {e}"),
                        ),
                    }];
                }
                let Value::Object(content) = doc else {
                    return Vec::new();
                };
                (d.message_id.clone(), content)
            }
            _ => return Vec::new(),
        };
        let activity = read_content(&id, &content, &self.validator);
        let found = activity
            .findings
            .iter()
            .map(|f| EventFinding {
                event: index,
                message_id: id.clone(),
                operation: f.message,
                violation: f.violation.clone(),
            })
            .collect();
        self.contents.insert(id.clone(), content);
        self.activities.insert(id, activity);
        found
    }

    /// Every activity seen, in first-seen order, as of the last event.
    pub fn activities(&self) -> impl Iterator<Item = &SurfaceActivity> {
        self.activities.values()
    }

    /// Every surface of every activity, as JSON: one object per activity with its
    /// `messageId`, `status` (when any) and `surfaces`.
    pub fn to_value(&self) -> Value {
        Value::Array(
            self.activities
                .values()
                .map(|a| {
                    let mut m = Map::new();
                    m.insert("messageId".into(), Value::String(a.message_id.clone()));
                    if let Some(s) = self
                        .contents
                        .get(&a.message_id)
                        .and_then(|c| c.get("status"))
                    {
                        m.insert("status".into(), s.clone());
                    }
                    m.insert("surfaces".into(), a.surfaces.to_value());
                    Value::Object(m)
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aguikit_core::event::{ActivityDelta, ActivitySnapshot};
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn folds_snapshots_and_deltas() {
        let mut f = ActivityFolder::default();
        let building = ActivitySnapshot::new(
            "a2ui-surface-t1",
            ACTIVITY_TYPE,
            obj(json!({"status": "building", "progressTokens": 12})),
        );
        assert!(f.push(0, &building.into()).is_empty());
        let a = f.activities().next().unwrap();
        assert_eq!(
            a.status,
            Some(Lifecycle::Building {
                progress_tokens: Some(12)
            })
        );
        let ops = json!({"a2ui_operations": [
            {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "basic"}},
            {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [{"id": "root", "component": "Text", "text": "hi"}]}}
        ]});
        let snap =
            ActivitySnapshot::new("a2ui-surface-t1", ACTIVITY_TYPE, obj(ops)).with_replace(true);
        assert!(f.push(1, &snap.into()).is_empty());
        assert_eq!(f.activities().count(), 1);
        let delta: ActivityDelta = serde_json::from_value(json!({"type": "ACTIVITY_DELTA", "messageId": "a2ui-surface-t1", "activityType": ACTIVITY_TYPE,
            "patch": [{"op": "add", "path": "/a2ui_operations/1/updateComponents/components/0/child", "value": "x"}]})).unwrap();
        let found = f.push(2, &Event::ActivityDelta(delta));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].event, found[0].violation.rule), (2, "A7"));
        let other = ActivitySnapshot::new("p", "PLAN", obj(json!({})));
        assert!(f.push(3, &other.into()).is_empty());
        assert_eq!(f.to_value()[0]["surfaces"][0]["surfaceId"], json!("s"));
        let bad = ActivitySnapshot::new("b", ACTIVITY_TYPE, obj(json!({"a2ui_operations": 5})));
        assert_eq!(f.push(4, &bad.into())[0].violation.rule, "A17");
        let none = ActivitySnapshot::new("c", ACTIVITY_TYPE, obj(json!({})));
        assert_eq!(f.push(5, &none.into())[0].violation.rule, "A17");
    }
}
