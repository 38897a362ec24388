//! A2UI in front of any agent, sans I/O: the conventions of the official
//! `@ag-ui/a2ui-middleware` (0.0.10) over aguikit's events.
//!
//! - [`A2uiMiddleware::prepare`] rewrites the run input: a user's action on a surface
//!   (`forwardedProps.a2uiAction.userAction`) becomes a `log_a2ui_event` tool call and its
//!   result at the end of the messages, so the agent sees what the user did; the catalog a
//!   client names in the run's context is read; optionally the `render_a2ui` tool is offered.
//! - [`A2uiMiddleware::push`] takes the agent's events and returns them with the surface
//!   activities a `render_a2ui` call gives as its arguments stream in (`building` as the call
//!   starts, progress, the surface once its components are complete and valid, again as the
//!   items of its list arrive and with its whole data; `retrying` when they are not valid),
//!   each before the event that caused it. A tool result carrying `a2ui_operations` becomes
//!   surfaces (after the result), and one carrying the `a2ui_recovery_exhausted` code a
//!   `failed` lifecycle. A `render_a2ui` call made while another tool call is open (a tool
//!   that generates the surface) paints on that call's activity, `a2ui-surface-<outer id>`.
//! - `RUN_FINISHED` is held back until [`A2uiMiddleware::finish`] (or the next event): a
//!   `render_a2ui` call the agent left unanswered gets the result `{"status":"rendered"}`
//!   first, so the conversation stays well formed. A runtime that sends `RUN_FINISHED`
//!   itself asks for those results with [`A2uiMiddleware::unanswered`].
//!
//! Where the two differ: components are checked by this crate's [`Validator`] (rules
//! `A1`–`A17`, the retry's errors are their one-line texts) where the official middleware
//! checks the structure only; arguments that stop being JSON are rejected (`A17`) where it
//! waits; an unanswered call is one of this run (it also answers calls of earlier runs that
//! the conversation left open).

use crate::agui::OPERATIONS_KEY;
use crate::emit::{RENDER_TOOL, RenderStep, RenderToolCall, SurfaceEmitter, render_tool};
use crate::validate::Validator;
use aguikit_core::event::Event;
use aguikit_core::input::RunAgentInput;
use aguikit_core::message::Message;
use indexmap::IndexMap;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// The tool call that stands for a user's action in the conversation.
pub const LOG_EVENT_TOOL: &str = "log_a2ui_event";

/// The description of the run context entry that names the client's catalog (its value: a
/// JSON object with `catalogId`), as the official middleware reads it.
pub const SCHEMA_CONTEXT_DESCRIPTION: &str = "A2UI Component Schema \u{2014} available components for generating UI surfaces. Use these component names and properties when creating A2UI operations.";

/// How the middleware behaves.
#[derive(Debug, Clone)]
pub struct MiddlewareConfig {
    /// The tools whose calls are surfaces (default: `render_a2ui`).
    pub tool_names: Vec<String>,
    /// The catalog id surfaces name (default: the one the run's context names, else the
    /// one the arguments name, else the basic catalog's).
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

/// One `render_a2ui` call.
#[derive(Debug, Clone)]
struct Call {
    render: RenderToolCall,
    /// The tool call open when it started, whose activity it paints on.
    outer: Option<String>,
}

/// The lifecycle of one activity (a call's own, or an outer call's).
#[derive(Debug, Clone, Default)]
struct Activity {
    /// `render_a2ui` calls started on it.
    starts: u64,
    /// Between a rejected attempt and a painted surface (or a failure).
    retrying: bool,
}

/// The middleware's state over one run.
#[derive(Debug, Clone)]
pub struct A2uiMiddleware {
    config: MiddlewareConfig,
    context_catalog: Option<String>,
    calls: IndexMap<String, Call>,
    activities: HashMap<String, Activity>,
    /// The last tool call started that is neither a surface nor a logged action, until its
    /// result.
    outer: Option<String>,
    /// The tool call `TOOL_CALL_CHUNK`s without an id continue.
    chunked: Option<String>,
    answered: HashSet<String>,
    held: Option<Event>,
    /// Surfaces painted from arguments (a result's operations on them are not repeated).
    surfaces: HashSet<String>,
}

impl A2uiMiddleware {
    /// A middleware with this configuration.
    pub fn new(config: MiddlewareConfig) -> Self {
        A2uiMiddleware {
            config,
            context_catalog: None,
            calls: IndexMap::new(),
            activities: HashMap::new(),
            outer: None,
            chunked: None,
            answered: HashSet::new(),
            held: None,
            surfaces: HashSet::new(),
        }
    }

    /// Rewrites the run input before it reaches the agent: the user's action (if any)
    /// becomes a `log_a2ui_event` call and result; the catalog the context names (an entry
    /// described by [`SCHEMA_CONTEXT_DESCRIPTION`]) is the surfaces' unless the
    /// configuration names one; the `render_a2ui` tool is offered when configured.
    pub fn prepare(&mut self, input: &mut RunAgentInput) {
        self.context_catalog = input
            .context
            .iter()
            .flatten()
            .find(|c| c.description == SCHEMA_CONTEXT_DESCRIPTION)
            .and_then(|c| serde_json::from_str::<Value>(&c.value).ok())
            .and_then(|v| v.get("catalogId")?.as_str().map(str::to_string))
            .filter(|c| !c.is_empty());
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

    /// Takes one event of the agent; returns what goes to the client, in order: the
    /// activities it causes, a held `RUN_FINISHED`, the event, and the surfaces of a tool
    /// result.
    pub fn push(&mut self, event: Event) -> Vec<Event> {
        let mut out = Vec::new();
        let mut after = Vec::new();
        match &event {
            Event::ToolCallStart(s) => self.started(&s.tool_call_id, &s.tool_call_name, &mut out),
            Event::ToolCallArgs(a) => self.args(&a.tool_call_id, &a.delta, &mut out),
            Event::ToolCallChunk(c) => {
                let id = c.tool_call_id.clone().or_else(|| self.chunked.clone());
                if let Some(id) = id {
                    if self.chunked.as_deref() != Some(id.as_str()) {
                        self.chunked = Some(id.clone());
                        if let Some(name) = &c.tool_call_name {
                            self.started(&id, name, &mut out);
                        }
                    }
                    if let Some(delta) = &c.delta {
                        self.args(&id, delta, &mut out);
                    }
                }
            }
            Event::ToolCallResult(r) => {
                after = self.result(&r.tool_call_id, &r.content.to_text());
            }
            _ => {}
        }
        if !matches!(event, Event::ToolCallChunk(_)) {
            self.chunked = None;
        }
        if let Some(held) = self.held.take() {
            out.push(held);
        }
        if matches!(event, Event::RunFinished(_)) {
            self.held = Some(event);
        } else {
            out.push(event);
        }
        out.extend(after);
        out
    }

    /// Ends the agent's stream: results for unanswered `render_a2ui` calls, then the held
    /// `RUN_FINISHED`.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        if let Some(held) = self.held.take() {
            out.extend(self.unanswered());
            out.push(held);
        }
        out
    }

    /// The results (`{"status":"rendered"}`) of the `render_a2ui` calls of this run that
    /// have none yet, for a runtime that ends the run itself; each is given once.
    pub fn unanswered(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        for id in self.calls.keys() {
            if !self.answered.insert(id.clone()) {
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
        out
    }

    fn is_render_tool(&self, name: &str) -> bool {
        self.config.tool_names.iter().any(|t| t == name)
            || (self.config.inject_tool && name == RENDER_TOOL)
    }

    /// The catalog new surfaces name (empty: the arguments' or the default).
    fn catalog(&self) -> String {
        self.config
            .catalog_id
            .clone()
            .filter(|c| !c.is_empty())
            .or_else(|| self.context_catalog.clone())
            .unwrap_or_default()
    }

    fn started(&mut self, id: &str, name: &str, out: &mut Vec<Event>) {
        if !self.is_render_tool(name) {
            if name != LOG_EVENT_TOOL {
                self.outer = Some(id.to_string());
            }
            return;
        }
        let call = Call {
            render: RenderToolCall::new(&self.catalog(), self.config.validator.clone()),
            outer: self.outer.clone(),
        };
        let activity_id = call.outer.clone().unwrap_or_else(|| id.to_string());
        self.calls.insert(id.to_string(), call);
        let activity = self.activities.entry(activity_id.clone()).or_default();
        activity.starts += 1;
        if !activity.retrying {
            out.push(SurfaceEmitter::new(&activity_id).building_started());
        }
    }

    fn args(&mut self, id: &str, delta: &str, out: &mut Vec<Event>) {
        let Some(call) = self.calls.get_mut(id) else {
            return;
        };
        let steps = call.render.push_args(delta);
        let activity_id = call.outer.clone().unwrap_or_else(|| id.to_string());
        let emitter = SurfaceEmitter::new(&activity_id);
        let activity = self.activities.entry(activity_id).or_default();
        for step in steps {
            match step {
                RenderStep::Building(t) if !activity.retrying => out.push(emitter.building(t)),
                RenderStep::Building(_) => {}
                RenderStep::Surface(ops) => {
                    self.surfaces
                        .extend(ops.iter().map(|o| o.surface_id().to_string()));
                    activity.retrying = false;
                    out.push(emitter.operations(&ops));
                }
                RenderStep::Rejected(errors) => {
                    activity.retrying = true;
                    out.push(emitter.retrying(
                        (activity.starts + 1).min(self.config.max_attempts),
                        self.config.max_attempts,
                        &errors,
                    ));
                }
            }
        }
    }

    /// The surfaces of a tool result that did not paint from its arguments: its
    /// `a2ui_operations` (grouped by surface, one activity each), or a `failed` lifecycle
    /// for `{"code": "a2ui_recovery_exhausted"}`.
    fn result(&mut self, call_id: &str, text: &str) -> Vec<Event> {
        self.answered.insert(call_id.to_string());
        let painted = self.calls.get(call_id).is_some_and(|c| c.render.emitted())
            || self
                .calls
                .values()
                .any(|c| c.render.emitted() && c.outer.as_deref() == Some(call_id));
        let mut out = Vec::new();
        if !painted {
            let activity_id = self.outer.clone().unwrap_or_else(|| call_id.to_string());
            let parsed = parse_result(text);
            if let Some(Value::Array(ops)) = parsed.get(OPERATIONS_KEY) {
                out = self.operations_activities(&activity_id, ops);
            } else if parsed.get("code").and_then(Value::as_str) == Some("a2ui_recovery_exhausted")
            {
                let error = match parsed.get("error") {
                    None | Some(Value::Null) => "A2UI generation failed".to_string(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                };
                let attempts = parsed.get("attempts").cloned().unwrap_or(json!([]));
                let max = match &attempts {
                    Value::Array(a) if !a.is_empty() => a.len() as u64,
                    _ => self.config.max_attempts,
                };
                out.push(SurfaceEmitter::new(&activity_id).exhausted(&error, attempts, max));
                self.activities.entry(activity_id).or_default().retrying = false;
            }
        }
        if self.outer.as_deref() == Some(call_id) {
            self.outer = None;
        }
        out
    }

    /// One activity per surface the operations name (those not painted from arguments):
    /// `a2ui-surface-<id>`, or `a2ui-surface-<surface>-<id>` when there are several.
    fn operations_activities(&self, id: &str, ops: &[Value]) -> Vec<Event> {
        let mut groups: IndexMap<String, Vec<Value>> = IndexMap::new();
        for op in ops.iter().filter(|o| o.is_object()) {
            let sid = operation_surface(op);
            if sid.as_ref().is_some_and(|s| self.surfaces.contains(s)) {
                continue;
            }
            groups
                .entry(sid.unwrap_or_else(|| "default".to_string()))
                .or_default()
                .push(op.clone());
        }
        let single = groups.len() == 1;
        groups
            .into_iter()
            .map(|(sid, ops)| {
                let at = if single {
                    id.to_string()
                } else {
                    format!("{sid}-{id}")
                };
                SurfaceEmitter::new(&at).raw_operations(ops)
            })
            .collect()
    }
}

/// A tool result's text as JSON (a JSON string holding JSON is read once more); `Null`
/// when it is not JSON.
fn parse_result(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(inner)) => serde_json::from_str(&inner).unwrap_or(Value::Null),
        Ok(v) => v,
        Err(_) => Value::Null,
    }
}

/// The surface an operation names (`createSurface`, `updateComponents`, `updateDataModel`
/// or `deleteSurface`), read as it is, valid or not.
fn operation_surface(op: &Value) -> Option<String> {
    [
        "createSurface",
        "updateComponents",
        "updateDataModel",
        "deleteSurface",
    ]
    .iter()
    .find_map(|k| op.get(*k)?.get("surfaceId")?.as_str().map(str::to_string))
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
                // Progress (25 tokens), then the surface, at the delta closing the list.
                "ACTIVITY_SNAPSHOT",
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
        let progress = serde_json::to_value(&out[4]).unwrap();
        assert_eq!(
            progress["content"],
            json!({"status": "building", "progressTokens": 25})
        );
        let result = serde_json::to_value(&out[10]).unwrap();
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
        // The result, then its surfaces.
        assert_eq!(ids, ["m", "a2ui-surface-a-t9", "a2ui-surface-b-t9"]);
        let failed: Event = serde_json::from_value(json!({"type": "TOOL_CALL_RESULT", "messageId": "m2", "toolCallId": "t10", "content": json!({"code": "a2ui_recovery_exhausted", "error": "gave up", "attempts": [1, 2]}).to_string()})).unwrap();
        let out = mw.push(failed);
        let content = serde_json::to_value(&out[1]).unwrap()["content"].clone();
        assert_eq!(
            content,
            json!({"status": "failed", "error": "gave up", "attempts": [1, 2], "maxAttempts": 2})
        );
        let mut folder = ActivityFolder::default();
        folder.push(0, &out[1]);
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
        let mut mw = A2uiMiddleware::new(MiddlewareConfig {
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

    fn contents(events: &[Event]) -> Vec<(String, Value)> {
        events
            .iter()
            .filter_map(|e| serde_json::to_value(e).ok())
            .filter(|v| v["type"] == "ACTIVITY_SNAPSHOT")
            .map(|v| {
                (
                    v["messageId"].as_str().unwrap_or_default().to_string(),
                    v["content"].clone(),
                )
            })
            .collect()
    }

    #[test]
    fn a_templated_list_is_shown_item_by_item() {
        let mut mw = A2uiMiddleware::new(MiddlewareConfig::default());
        let out = run(
            &mut mw,
            &[
                r#"{"surfaceId": "p", "components": [{"id": "root", "component": "List", "#,
                r#""children": {"componentId": "row", "path": "/plans"}}, {"id": "row", "#,
                r#""component": "Text", "text": {"path": "name"}}], "data": {"plans": ["#,
                r#"{"name": "Basic"}, {"name": "Te"#,
                r#"am"}]"#,
                r#", "note": "x"}}"#,
            ],
        );
        let ops: Vec<Value> = contents(&out)
            .into_iter()
            .filter_map(|(_, c)| c.get(OPERATIONS_KEY).cloned())
            .collect();
        assert_eq!(ops.len(), 4, "{ops:#?}");
        assert_eq!(ops[0].as_array().map(Vec::len), Some(2));
        assert_eq!(
            ops[1][2]["updateDataModel"],
            json!({"surfaceId": "p", "path": "/", "value": {"plans": [{"name": "Basic"}]}})
        );
        assert_eq!(
            ops[2][2]["updateDataModel"]["value"],
            json!({"plans": [{"name": "Basic"}, {"name": "Team"}]})
        );
        assert_eq!(
            ops[3][2]["updateDataModel"]["value"],
            json!({"plans": [{"name": "Basic"}, {"name": "Team"}], "note": "x"})
        );
    }

    #[test]
    fn a_render_call_inside_another_tool_paints_on_its_activity() {
        let mut mw = A2uiMiddleware::new(MiddlewareConfig::default());
        let mut input = RunAgentInput::new("t", "r");
        input.context = Some(vec![aguikit_core::input::Context {
            description: SCHEMA_CONTEXT_DESCRIPTION.to_string(),
            value: json!({"catalogId": "https://example.com/cat.json"}).to_string(),
        }]);
        mw.prepare(&mut input);
        let mut out = Vec::new();
        out.extend(mw.push(ToolCallStart::new("outer", "design_ui").into()));
        out.extend(mw.push(ToolCallStart::new("inner", RENDER_TOOL).into()));
        let chunk: Event = serde_json::from_value(json!({"type": "TOOL_CALL_CHUNK", "toolCallId": "inner2", "toolCallName": RENDER_TOOL, "delta": r#"{"surfaceId": "s", "components": [{"id": "root", "#})).unwrap();
        out.extend(mw.push(chunk));
        let chunk: Event = serde_json::from_value(
            json!({"type": "TOOL_CALL_CHUNK", "delta": r#""component": "Text", "text": "x"}]}"#}),
        )
        .unwrap();
        out.extend(mw.push(chunk));
        let result: Event = serde_json::from_value(json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "outer", "content": "done"})).unwrap();
        out.extend(mw.push(result));
        let got = contents(&out);
        // One building per render call, progress (21 tokens); the chunked call's surface on
        // the outer activity, with the catalog the context named.
        assert!(
            got.iter().all(|(id, _)| id == "a2ui-surface-outer"),
            "{got:?}"
        );
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(
            got[2].1,
            json!({"status": "building", "progressTokens": 21})
        );
        assert_eq!(
            got[3].1[OPERATIONS_KEY][0]["createSurface"]["catalogId"],
            json!("https://example.com/cat.json")
        );
        // The outer call's result paints nothing more: its render call did.
        assert_eq!(out.last().map(Event::type_str), Some("TOOL_CALL_RESULT"));
        // Both render calls are unanswered.
        assert_eq!(mw.unanswered().len(), 2);
        assert!(mw.unanswered().is_empty(), "each is answered once");
    }
}
