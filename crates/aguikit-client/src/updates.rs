//! Turning events into UI updates: the pure part of a [`SessionRun`](crate::SessionRun).
//!
//! [`UpdateTracker`] follows one run's events (already expanded, verified and applied) and
//! says which typed [`Update`]s each implies: text and reasoning deltas, tool-call progress
//! with the partial arguments parsed, the run's end as a [`RunStatus`]. It does no I/O and
//! holds no conversation: the session applies the events and reads the statuses.
//!
//! ```
//! use aguikit_client::updates::UpdateTracker;
//! use aguikit_client::{RunStatus, Update};
//! use aguikit_core::event::{RunFinished, RunStarted, ToolCallArgs, ToolCallStart};
//!
//! let mut t = UpdateTracker::default();
//! t.updates(&RunStarted::new("t", "r").into(), false);
//! t.updates(&ToolCallStart::new("c1", "search").into(), false);
//! let args = t.updates(&ToolCallArgs::new("c1", r#"{"q": "ru"#).into(), false);
//! assert!(matches!(&args[0], Update::ToolCallArgs { partial_args: Some(a), .. } if a["q"] == "ru"));
//! let end = t.updates(&RunFinished::new("t", "r").into(), false);
//! // The call was never answered: the run finished with it pending.
//! assert!(matches!(&end[0], Update::RunFinished { status: RunStatus::Finished { pending_tool_call_ids, .. } }
//!     if pending_tool_call_ids == &["c1"]));
//! ```

use crate::partial_json::PartialJson;
use crate::session::{DEFAULT_PARTIAL_ARGS_LIMIT, RunStatus, Update};
use aguikit_core::{Event, RunOutcome};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Tool calls of the current run, for `pendingToolCallIds` (AP28).
#[derive(Debug, Default)]
struct ToolTally {
    started: Vec<String>,
    started_set: HashSet<String>,
    answered: HashSet<String>,
}

impl ToolTally {
    fn unanswered(&self) -> Vec<String> {
        self.started
            .iter()
            .filter(|id| !self.answered.contains(*id))
            .cloned()
            .collect()
    }
}

#[derive(Debug)]
struct ArgsInProgress {
    name: String,
    parser: PartialJson,
}

/// What the events of one stream imply for a UI (see the [module](self) documentation).
#[derive(Debug)]
pub struct UpdateTracker {
    tally: ToolTally,
    args: HashMap<String, ArgsInProgress>,
    /// The status set by the last RUN_FINISHED/RUN_ERROR, cleared by a RUN_STARTED.
    terminal: Option<RunStatus>,
    partial_args_limit: usize,
}

impl Default for UpdateTracker {
    fn default() -> Self {
        UpdateTracker::new(DEFAULT_PARTIAL_ARGS_LIMIT)
    }
}

impl UpdateTracker {
    /// A tracker that parses partial tool-call arguments up to `partial_args_limit` bytes
    /// (past it [`Update::ToolCallArgs`] carries no `partial_args`).
    pub fn new(partial_args_limit: usize) -> Self {
        UpdateTracker {
            tally: ToolTally::default(),
            args: HashMap::new(),
            terminal: None,
            partial_args_limit,
        }
    }

    /// The typed updates `event` implies (without [`Update::Event`] and the
    /// messages/state changes, which the applier knows). `aborted`: whether the caller
    /// aborted the run (then `RUN_ERROR` with code `abort` is [`RunStatus::Aborted`]).
    pub fn updates(&mut self, event: &Event, aborted: bool) -> Vec<Update> {
        let mut derived = Vec::new();
        match event {
            Event::RunStarted(e) => {
                self.tally = ToolTally::default();
                self.args.clear();
                self.terminal = None;
                derived.push(Update::RunStarted {
                    thread_id: e.thread_id.clone(),
                    run_id: e.run_id.clone(),
                });
            }
            Event::TextMessageStart(e) => derived.push(Update::TextMessageStarted {
                message_id: e.message_id.clone(),
            }),
            Event::TextMessageContent(e) => derived.push(Update::TextDelta {
                message_id: e.message_id.clone(),
                delta: e.delta.clone(),
            }),
            Event::TextMessageEnd(e) => derived.push(Update::TextMessageEnded {
                message_id: e.message_id.clone(),
            }),
            Event::ReasoningMessageContent(e) => derived.push(Update::ReasoningDelta {
                message_id: e.message_id.clone(),
                delta: e.delta.clone(),
            }),
            Event::ToolCallStart(e) => {
                if self.tally.started_set.insert(e.tool_call_id.clone()) {
                    self.tally.started.push(e.tool_call_id.clone());
                }
                self.args.insert(
                    e.tool_call_id.clone(),
                    ArgsInProgress {
                        name: e.tool_call_name.clone(),
                        parser: PartialJson::new(),
                    },
                );
                derived.push(Update::ToolCallStarted {
                    tool_call_id: e.tool_call_id.clone(),
                    name: e.tool_call_name.clone(),
                    parent_message_id: e.parent_message_id.clone(),
                });
            }
            Event::ToolCallArgs(e) => {
                let limit = self.partial_args_limit;
                let entry =
                    self.args
                        .entry(e.tool_call_id.clone())
                        .or_insert_with(|| ArgsInProgress {
                            name: String::new(),
                            parser: PartialJson::new(),
                        });
                entry.parser.push(&e.delta);
                let partial_args = if entry.parser.text().len() <= limit {
                    entry.parser.value()
                } else {
                    None
                };
                derived.push(Update::ToolCallArgs {
                    tool_call_id: e.tool_call_id.clone(),
                    name: entry.name.clone(),
                    delta: e.delta.clone(),
                    partial_args,
                });
            }
            Event::ToolCallEnd(e) => {
                let (name, args) = match self.args.remove(&e.tool_call_id) {
                    Some(a) => (
                        a.name,
                        serde_json::from_str(a.parser.text()).unwrap_or_else(|_| empty_object()),
                    ),
                    None => (String::new(), empty_object()),
                };
                derived.push(Update::ToolCallEnded {
                    tool_call_id: e.tool_call_id.clone(),
                    name,
                    args,
                });
            }
            Event::ToolCallResult(e) => {
                self.tally.answered.insert(e.tool_call_id.clone());
                derived.push(Update::ToolCallResult {
                    tool_call_id: e.tool_call_id.clone(),
                    message_id: e.message_id.clone(),
                    content: e.content.to_text(),
                });
            }
            Event::RunFinished(e) => {
                let status = match &e.outcome {
                    None | Some(RunOutcome::Success { .. }) => {
                        let listed = match &e.outcome {
                            Some(RunOutcome::Success {
                                pending_tool_call_ids: Some(ids),
                            }) if !ids.is_empty() => Some(ids.clone()),
                            _ => None,
                        };
                        RunStatus::Finished {
                            result: e.result.clone(),
                            pending_tool_call_ids: listed
                                .unwrap_or_else(|| self.tally.unanswered()),
                        }
                    }
                    Some(RunOutcome::Interrupt { interrupts }) => RunStatus::Interrupted {
                        interrupts: interrupts.clone(),
                    },
                    Some(RunOutcome::Cancelled) => RunStatus::Cancelled,
                };
                self.terminal = Some(status.clone());
                derived.push(Update::RunFinished { status });
            }
            Event::RunError(e) => {
                let status = if aborted && e.code.as_deref() == Some("abort") {
                    RunStatus::Aborted
                } else {
                    RunStatus::Errored {
                        message: e.message.clone(),
                        code: e.code.clone(),
                    }
                };
                self.terminal = Some(status.clone());
                derived.push(Update::RunFailed { status });
            }
            _ => {}
        }
        derived
    }

    /// The status the last `RUN_FINISHED` or `RUN_ERROR` set (cleared by a `RUN_STARTED`),
    /// taken out.
    pub fn take_terminal(&mut self) -> Option<RunStatus> {
        self.terminal.take()
    }
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use aguikit_core::event::{
        ReasoningMessageContent, RunError, RunFinished, RunStarted, TextMessageContent,
        TextMessageEnd, TextMessageStart, ToolCallArgs, ToolCallEnd, ToolCallResult, ToolCallStart,
    };
    use aguikit_core::{Interrupt, RunOutcome};
    use serde_json::json;

    fn one(t: &mut UpdateTracker, e: impl Into<Event>) -> Update {
        let mut u = t.updates(&e.into(), false);
        assert_eq!(u.len(), 1, "{u:?}");
        u.remove(0)
    }

    #[test]
    fn text_and_reasoning() {
        let mut t = UpdateTracker::default();
        assert!(
            matches!(one(&mut t, TextMessageStart::new("m")), Update::TextMessageStarted { message_id } if message_id == "m")
        );
        assert!(
            matches!(one(&mut t, TextMessageContent::new("m", "Hi")), Update::TextDelta { delta, .. } if delta == "Hi")
        );
        assert!(matches!(
            one(&mut t, TextMessageEnd::new("m")),
            Update::TextMessageEnded { .. }
        ));
        assert!(
            matches!(one(&mut t, ReasoningMessageContent::new("r", "hm")), Update::ReasoningDelta { delta, .. } if delta == "hm")
        );
    }

    #[test]
    fn tool_calls_parse_their_arguments_as_they_come() {
        let mut t = UpdateTracker::default();
        assert!(
            matches!(one(&mut t, ToolCallStart::new("c", "f")), Update::ToolCallStarted { name, .. } if name == "f")
        );
        match one(&mut t, ToolCallArgs::new("c", r#"{"a": [1, 2"#)) {
            Update::ToolCallArgs {
                name, partial_args, ..
            } => {
                assert_eq!(name, "f");
                assert_eq!(partial_args, Some(json!({"a": [1, 2]})));
            }
            other => panic!("{other:?}"),
        }
        one(&mut t, ToolCallArgs::new("c", "]}"));
        match one(&mut t, ToolCallEnd::new("c")) {
            Update::ToolCallEnded { name, args, .. } => {
                assert_eq!(name, "f");
                assert_eq!(args, json!({"a": [1, 2]}));
            }
            other => panic!("{other:?}"),
        }
        // An end without a start, and arguments that are not JSON, give `{}`.
        assert!(
            matches!(one(&mut t, ToolCallEnd::new("x")), Update::ToolCallEnded { args, name, .. } if args == json!({}) && name.is_empty())
        );
        one(&mut t, ToolCallStart::new("d", "g"));
        one(&mut t, ToolCallArgs::new("d", "nope"));
        assert!(
            matches!(one(&mut t, ToolCallEnd::new("d")), Update::ToolCallEnded { args, .. } if args == json!({}))
        );
    }

    #[test]
    fn partial_arguments_stop_past_the_limit() {
        let mut t = UpdateTracker::new(4);
        one(&mut t, ToolCallStart::new("c", "f"));
        assert!(matches!(
            one(&mut t, ToolCallArgs::new("c", "[1")),
            Update::ToolCallArgs {
                partial_args: Some(_),
                ..
            }
        ));
        assert!(matches!(
            one(&mut t, ToolCallArgs::new("c", ", 2")),
            Update::ToolCallArgs {
                partial_args: None,
                ..
            }
        ));
    }

    #[test]
    fn unanswered_calls_are_pending_at_the_end() {
        let mut t = UpdateTracker::default();
        one(&mut t, RunStarted::new("t", "r"));
        one(&mut t, ToolCallStart::new("a", "f"));
        one(&mut t, ToolCallStart::new("b", "f"));
        one(&mut t, ToolCallResult::new("m", "a", "ok"));
        match one(&mut t, RunFinished::new("t", "r")) {
            Update::RunFinished {
                status:
                    RunStatus::Finished {
                        pending_tool_call_ids,
                        ..
                    },
            } => assert_eq!(pending_tool_call_ids, ["b"]),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            t.take_terminal(),
            Some(RunStatus::Finished { .. })
        ));
        assert!(t.take_terminal().is_none());
        // A new run forgets the old calls.
        one(&mut t, RunStarted::new("t", "r2"));
        match one(&mut t, RunFinished::new("t", "r2")) {
            Update::RunFinished {
                status:
                    RunStatus::Finished {
                        pending_tool_call_ids,
                        ..
                    },
            } => assert!(pending_tool_call_ids.is_empty()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn outcomes_and_errors() {
        let mut t = UpdateTracker::default();
        let mut interrupted = RunFinished::new("t", "r");
        interrupted.outcome = Some(RunOutcome::Interrupt {
            interrupts: vec![Interrupt::new("i", "confirmation")],
        });
        assert!(
            matches!(one(&mut t, interrupted), Update::RunFinished { status: RunStatus::Interrupted { interrupts } } if interrupts.len() == 1)
        );
        let mut cancelled = RunFinished::new("t", "r");
        cancelled.outcome = Some(RunOutcome::Cancelled);
        assert!(matches!(
            one(&mut t, cancelled),
            Update::RunFinished {
                status: RunStatus::Cancelled
            }
        ));
        let abort = RunError::new("stopped").with_code("abort");
        assert!(
            matches!(one(&mut t, abort.clone()), Update::RunFailed { status: RunStatus::Errored { code: Some(c), .. } } if c == "abort")
        );
        assert!(matches!(
            t.updates(&abort.into(), true)[0],
            Update::RunFailed {
                status: RunStatus::Aborted
            }
        ));
    }
}
