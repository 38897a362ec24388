//! A2UI in front of any agent, sans I/O: the conventions of the official
//! `@ag-ui/a2ui-middleware` (0.0.10) over aguikit's events.
//!
//! - [`A2uiMiddleware::prepare`] rewrites the run input: a user's action on a surface
//!   (`forwardedProps.a2uiAction.userAction`) becomes a `log_a2ui_event` tool call and its
//!   result at the end of the messages, so the agent sees what the user did; optionally the
//!   `render_a2ui` tool is offered.
//! - [`A2uiMiddleware::push`] takes the agent's events and returns them with the surface
//!   activities a `render_a2ui` call gives as its arguments stream in (`building` as the call
//!   starts, progress, the surface once its components are complete and valid, again with
//!   its data; `retrying` when they are not), each before the event that caused it. A tool
//!   result carrying `a2ui_operations` becomes surfaces too, and one carrying the
//!   `a2ui_recovery_exhausted` code a `failed` lifecycle.
//! - `RUN_FINISHED` is held back until [`A2uiMiddleware::finish`] (or the next event): a
//!   `render_a2ui` call the agent left unanswered gets the result `{"status":"rendered"}`
//!   first, so the conversation stays well formed.

use crate::agui::OPERATIONS_KEY;
use crate::emit::{RENDER_TOOL, RenderStep, RenderToolCall, SurfaceEmitter, render_tool};
use crate::message::ServerMessage;
use crate::validate::Validator;
use aguikit_core::event::Event;
use aguikit_core::input::RunAgentInput;
use aguikit_core::message::Message;
use indexmap::IndexMap;
use serde_json::{Value, json};
use std::collections::HashSet;

/// The tool call that stands for a user's action in the conversation.
pub const LOG_EVENT_TOOL: &str = "log_a2ui_event";

/// How the middleware behaves.
#[derive(Debug, Clone)]
pub struct MiddlewareConfig {
    /// The tools whose calls are surfaces (default: `render_a2ui`).
    pub tool_names: Vec<String>,
    /// The catalog id surfaces name (default: the one the arguments name, else the basic
    /// catalog's).
    pub catalog_id: Option<String>,
    /// Offer the `render_a2ui` tool to the agent.
    pub inject_tool: bool,
    /// The attempts a `retrying` lifecycle counts up to.
    pub max_attempts: u64,
    /// The checks a surface must pass before it is shown.
    pub validator: Validator,
}

impl Default for MiddlewareConfig {
    fn default() -> Self {
        MiddlewareConfig {
            tool_names: vec![RENDER_TOOL.to_string()],
            catalog_id: None,
            inject_tool: false,
            max_attempts: 3,
            validator: Validator::new(),
        }
    }
}

/// The middleware's state over one run.
#[derive(Debug, Clone)]
pub struct A2uiMiddleware {
    config: MiddlewareConfig,
    calls: IndexMap<String, RenderToolCall>,
    attempts: IndexMap<String, u64>,
    answered: HashSet<String>,
    held: Option<Event>,
    surfaces: HashSet<String>,
}

impl A2uiMiddleware {
    /// A middleware with this configuration.
    pub fn new(config: MiddlewareConfig) -> Self {
        A2uiMiddleware {
            config,
            calls: IndexMap::new(),
            attempts: IndexMap::new(),
            answered: HashSet::new(),
            held: None,
            surfaces: HashSet::new(),
        }
    }

    /// Rewrites the run input before it reaches the agent: the user's action (if any)
    /// becomes a `log_a2ui_event` call and result; the `render_a2ui` tool is offered when
    /// configured.
    pub fn prepare(&self, input: &mut RunAgentInput) {
        let action = input
            .forwarded_props
            .as_ref()
            .and_then(|p| p.get("a2uiAction"))
            .and_then(|a| a.get("userAction"))
            .cloned();
        if let Some(action) = action {
            let call_id = aguikit_core::id::random_uuid();
            let call: Result<Message, _> = serde_json::from_value(json!({
                "id": aguikit_core::id::random_uuid(),
                "role": "assistant",
                "content": "",
                "toolCalls": [{"id": call_id, "type": "function", "function": {"name": LOG_EVENT_TOOL, "arguments": action.to_string()}}]
            }));
            let result: Result<Message, _> = serde_json::from_value(json!({
                "id": aguikit_core::id::random_uuid(),
                "role": "tool",
                "toolCallId": call_id,
                "content": action_text(&action),
            }));
            if let (Ok(call), Ok(result)) = (call, result) {
                input.messages.push(call);
                input.messages.push(result);
            }
        }
        if self.config.inject_tool {
            let tool = render_tool();
            let tools = input.tools.get_or_insert_with(Vec::new);
            tools.retain(|t| t.name != tool.name);
            tools.push(tool);
        }
    }

    /// Takes one event of the agent; returns what goes to the client, in order.
    pub fn push(&mut self, event: Event) -> Vec<Event> {
        let mut out = Vec::new();
        match &event {
            Event::ToolCallStart(s) if self.is_render_tool(&s.tool_call_name) => {
                let catalog = self.config.catalog_id.clone().unwrap_or_default();
                self.calls.insert(
                    s.tool_call_id.clone(),
                    RenderToolCall::new(&catalog, self.config.validator.clone()),
                );
                *self.attempts.entry(s.tool_call_id.clone()).or_insert(0) += 1;
                out.push(SurfaceEmitter::new(&s.tool_call_id).building_started());
            }
            Event::ToolCallArgs(a) => {
                if let Some(call) = self.calls.get_mut(&a.tool_call_id) {
                    let steps = call.push_args(&a.delta);
                    let emitter = SurfaceEmitter::new(&a.tool_call_id);
                    let attempt = self.attempts.get(&a.tool_call_id).copied().unwrap_or(1);
                    for step in steps {
                        out.push(match step {
                            RenderStep::Building(t) => emitter.building(t),
                            RenderStep::Surface(ops) => {
                                self.surfaces
                                    .extend(ops.iter().map(|o| o.surface_id().to_string()));
                                emitter.operations(&ops)
                            }
                            RenderStep::Rejected(errors) => emitter.retrying(
                                (attempt + 1).min(self.config.max_attempts),
                                self.config.max_attempts,
                                &errors,
                            ),
                        });
                    }
                }
            }
            Event::ToolCallResult(r) => {
                self.answered.insert(r.tool_call_id.clone());
                let painted = self.calls.get(&r.tool_call_id).is_some_and(|c| c.emitted());
                if !painted {
                    out.extend(self.result_surfaces(&r.tool_call_id, &r.content.to_text()));
                }
            }
            _ => {}
        }
        if let Some(held) = self.held.take() {
            out.insert(0, held);
        }
        if matches!(event, Event::RunFinished(_)) {
            self.held = Some(event);
        } else {
            out.push(event);
        }
        out
    }

    /// Ends the agent's stream: results for unanswered `render_a2ui` calls, then the held
    /// `RUN_FINISHED`.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        if let Some(held) = self.held.take() {
            for id in self.calls.keys() {
                if self.answered.contains(id) {
                    continue;
                }
                let result: Result<Event, _> = serde_json::from_value(json!({
                    "type": "TOOL_CALL_RESULT",
                    "messageId": aguikit_core::id::random_uuid(),
                    "toolCallId": id,
                    "content": json!({"status": "rendered"}).to_string(),
                }));
                if let Ok(e) = result {
                    out.push(e);
                }
            }
            out.push(held);
        }
        out
    }

    fn is_render_tool(&self, name: &str) -> bool {
        self.config.tool_names.iter().any(|t| t == name)
            || (self.config.inject_tool && name == RENDER_TOOL)
    }

    /// Surfaces from a tool result: `a2ui_operations` (grouped by surface, one activity
    /// each), or a `failed` lifecycle for `{"code": "a2ui_recovery_exhausted"}`.
    fn result_surfaces(&self, call_id: &str, text: &str) -> Vec<Event> {
        let parsed = serde_json::from_str::<Value>(text)
            .ok()
            .map(|v| match v {
                Value::String(inner) => serde_json::from_str(&inner).unwrap_or(Value::Null),
                other => other,
            })
            .unwrap_or(Value::Null);
        if let Some(Value::Array(ops)) = parsed.get(OPERATIONS_KEY) {
            let mut groups: IndexMap<String, Vec<Value>> = IndexMap::new();
            for op in ops.iter().filter(|o| o.is_object()) {
                let sid = ServerMessage::parse(op)
                    .map(|m| m.surface_id().to_string())
                    .unwrap_or_else(|_| "default".to_string());
                if self.surfaces.contains(&sid) {
                    continue;
                }
                groups.entry(sid).or_default().push(op.clone());
            }
            let single = groups.len() == 1;
            return groups
                .into_iter()
                .filter_map(|(sid, ops)| {
                    let id = if single {
                        call_id.to_string()
                    } else {
                        format!("{sid}-{call_id}")
                    };
                    let mut content = serde_json::Map::new();
                    content.insert(OPERATIONS_KEY.into(), Value::Array(ops));
                    serde_json::from_value::<Event>(json!({
                        "type": "ACTIVITY_SNAPSHOT",
                        "messageId": crate::emit::message_id(&id),
                        "activityType": crate::agui::ACTIVITY_TYPE,
                        "content": content,
                        "replace": true,
                    }))
                    .ok()
                })
                .collect();
        }
        if parsed.get("code").and_then(Value::as_str) == Some("a2ui_recovery_exhausted") {
            let error = parsed
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("A2UI generation failed");
            let attempts = parsed
                .get("attempts")
                .and_then(Value::as_array)
                .map_or(self.config.max_attempts, |a| a.len() as u64);
            return vec![SurfaceEmitter::new(call_id).failed(error, attempts)];
        }
        Vec::new()
    }
}

/// How a user's action reads as the result of its `log_a2ui_event` call.
pub fn action_text(action: &Value) -> String {
    let name = action
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("unknown_action");
    let surface = action
        .get("surfaceId")
        .and_then(Value::as_str)
        .unwrap_or("unknown_surface");
    let mut text = format!("User performed action \"{name}\" on surface \"{surface}\"");
    if let Some(c) = action.get("sourceComponentId").and_then(Value::as_str) {
        text.push_str(&format!(" (component: {c})"));
    }
    let context = action
        .get("context")
        .map_or_else(|| "{}".to_string(), Value::to_string);
    text.push_str(&format!(". Context: {context}"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agui::{ActivityFolder, Lifecycle};
    use aguikit_core::event::{RunFinished, RunStarted, ToolCallArgs, ToolCallEnd, ToolCallStart};

    fn run(mw: &mut A2uiMiddleware, args: &[&str]) -> Vec<Event> {
        let mut out = Vec::new();
        out.extend(mw.push(RunStarted::new("t", "r").into()));
        out.extend(mw.push(ToolCallStart::new("tc1", RENDER_TOOL).into()));
        for a in args {
            out.extend(mw.push(ToolCallArgs::new("tc1", *a).into()));
        }
        out.extend(mw.push(ToolCallEnd::new("tc1").into()));
        out.extend(mw.push(RunFinished::new("t", "r").into()));
        out.extend(mw.finish());
        out
    }

    fn types(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| {
                let v = serde_json::to_value(e).unwrap_or_default();
                v["type"].as_str().unwrap_or("?").to_string()
            })
            .collect()
    }

    #[test]
    fn a_render_call_becomes_a_surface_and_its_result() {
        let mut mw = A2uiMiddleware::new(MiddlewareConfig::default());
        let out = run(
            &mut mw,
            &[
                r#"{"surfaceId": "flight", "components": [{"id": "root", "#,
                r#""component": "Text", "text": {"path": "/s"}}], "#,
                r#""data": {"s": "On time"}}"#,
            ],
        );
        assert_eq!(
            types(&out),
            [
                "RUN_STARTED",
                "ACTIVITY_SNAPSHOT",
                "TOOL_CALL_START",
                "TOOL_CALL_ARGS",
                "ACTIVITY_SNAPSHOT",
                "TOOL_CALL_ARGS",
                "ACTIVITY_SNAPSHOT",
                "TOOL_CALL_ARGS",
                "TOOL_CALL_END",
                "TOOL_CALL_RESULT",
                "RUN_FINISHED"
            ]
        );
        let mut folder = ActivityFolder::default();
        for (i, e) in out.iter().enumerate() {
            assert!(folder.push(i, e).is_empty(), "{e:?}");
        }
        let a = folder.activities().next().unwrap();
        assert_eq!(a.message_id, "a2ui-surface-tc1");
        assert_eq!(
            a.surfaces.get("flight").unwrap().data,
            json!({"s": "On time"})
        );
        let result = serde_json::to_value(&out[9]).unwrap();
        assert_eq!(result["content"], json!(r#"{"status":"rendered"}"#));
        // The pipeline of the reference client accepts the stream.
        let mut p = aguikit_core::engine::pipeline::Pipeline::new();
        for e in &out {
            p.push_json(&e.to_json_vec()).unwrap();
        }
        p.finish().unwrap();
    }

    #[test]
    fn invalid_components_retry_and_results_make_surfaces() {
        let mut mw = A2uiMiddleware::new(MiddlewareConfig::default());
        let out = run(
            &mut mw,
            &[
                r#"{"surfaceId": "s", "components": [{"id": "root", "component": "Card", "child": "x"}]}"#,
            ],
        );
        let mut folder = ActivityFolder::default();
        for (i, e) in out.iter().enumerate() {
            folder.push(i, e);
        }
        assert!(matches!(
            folder.activities().next().and_then(|a| a.status.clone()),
            Some(Lifecycle::Retrying {
                attempt: Some(2),
                max_attempts: Some(3),
                ..
            })
        ));
        let mut mw = A2uiMiddleware::new(MiddlewareConfig::default());
        let ops = json!({"a2ui_operations": [
            {"version": "v0.9", "createSurface": {"surfaceId": "a", "catalogId": "c"}},
            {"version": "v0.9", "createSurface": {"surfaceId": "b", "catalogId": "c"}}
        ]});
        let result: Event = serde_json::from_value(json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "t9", "content": ops.to_string()})).unwrap();
        let out = mw.push(result);
        let ids: Vec<String> = out
            .iter()
            .filter_map(|e| serde_json::to_value(e).ok())
            .filter_map(|v| v["messageId"].as_str().map(str::to_string))
            .collect();
        assert_eq!(ids, ["a2ui-surface-a-t9", "a2ui-surface-b-t9", "m"]);
        let failed: Event = serde_json::from_value(json!({"type": "TOOL_CALL_RESULT", "messageId": "m2", "toolCallId": "t10", "content": json!({"code": "a2ui_recovery_exhausted", "error": "gave up", "attempts": [1, 2]}).to_string()})).unwrap();
        let out = mw.push(failed);
        let mut folder = ActivityFolder::default();
        folder.push(0, &out[0]);
        assert_eq!(
            folder.activities().next().and_then(|a| a.status.clone()),
            Some(Lifecycle::Failed {
                error: Some("gave up".into()),
                attempts: Some(2)
            })
        );
    }

    #[test]
    fn a_user_action_becomes_a_logged_tool_call() {
        let mw = A2uiMiddleware::new(MiddlewareConfig {
            inject_tool: true,
            ..MiddlewareConfig::default()
        });
        let mut input = RunAgentInput::new("t", "r");
        input.forwarded_props = Some(json!({"a2uiAction": {"userAction": {
            "name": "book", "surfaceId": "table", "sourceComponentId": "submit", "context": {"people": 2}
        }}}));
        mw.prepare(&mut input);
        assert_eq!(input.messages.len(), 2);
        let v = serde_json::to_value(&input.messages).unwrap();
        assert_eq!(v[0]["toolCalls"][0]["function"]["name"], LOG_EVENT_TOOL);
        assert_eq!(v[1]["toolCallId"], v[0]["toolCalls"][0]["id"]);
        assert_eq!(
            v[1]["content"],
            r#"User performed action "book" on surface "table" (component: submit). Context: {"people":2}"#
        );
        assert_eq!(
            input.tools.as_ref().map(|t| t[0].name.as_str()),
            Some(RENDER_TOOL)
        );
        mw.prepare(&mut input);
        assert_eq!(
            input.tools.as_ref().map(Vec::len),
            Some(1),
            "the tool is offered once"
        );
    }
}
