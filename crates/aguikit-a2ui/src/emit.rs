//! The server side: surfaces as AG-UI events, in the convention of the official A2UI
//! middleware (`ACTIVITY_SNAPSHOT`, `activityType: "a2ui-surface"`, message id
//! `a2ui-surface-<id>`, `replace: true`, `content.a2ui_operations`; lifecycle snapshots with
//! `content.status` before the surface paints).
//!
//! [`SurfaceEmitter`] builds the events; [`RenderToolCall`] turns a `render_a2ui` tool call
//! into them as its arguments stream in: a `building` snapshot at the first delta, the
//! surface as soon as the components received so far form a tree that paints (a `root`, no
//! dangling reference), updated as more arrive, and the final, validated surface at the end.

use crate::agui::{ACTIVITY_TYPE, OPERATIONS_KEY};
use crate::message::{
    Component, CreateSurface, DeleteSurface, ServerMessage, UpdateComponents, UpdateDataModel,
};
use crate::rules::Violation;
use crate::stream::{RenderArgsParser, RenderItem, StreamError};
use crate::validate::Validator;
use aguikit_core::event::{ActivitySnapshot, Event};
use aguikit_core::input::Tool;
use serde_json::{Map, Value, json};

/// The name of the tool whose calls become surfaces.
pub const RENDER_TOOL: &str = "render_a2ui";

/// The activity message id of a surface made by a tool call (or named by a surface id).
pub fn message_id(id: &str) -> String {
    format!("a2ui-surface-{id}")
}

/// The `render_a2ui` tool an agent is offered: `surfaceId`, `components` (the adjacency list,
/// one with id `root`), optional `data` (the initial data model) and `catalogId`.
pub fn render_tool() -> Tool {
    Tool::new(
        RENDER_TOOL,
        "Show the user a UI surface (a form, a card, a list) built from the catalog's components. \
         components is a flat list; each has an id, a component type and its properties; \
         children refer to other components by id, and one component has the id 'root'. \
         Bind values to data with {\"path\": \"/pointer\"} and give the data in data.",
        json!({
            "type": "object",
            "properties": {
                "surfaceId": {"type": "string", "description": "A unique id for the surface."},
                "catalogId": {"type": "string", "description": "The catalog the components come from."},
                "components": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"id": {"type": "string"}, "component": {"type": "string"}},
                        "required": ["id", "component"]
                    }
                },
                "data": {"type": "object", "description": "The initial data model."}
            },
            "required": ["surfaceId", "components"]
        }),
    )
}

/// `createSurface`.
pub fn create_surface(surface_id: &str, catalog_id: &str) -> ServerMessage {
    ServerMessage::CreateSurface(CreateSurface {
        surface_id: surface_id.to_string(),
        catalog_id: catalog_id.to_string(),
        theme: None,
        send_data_model: None,
    })
}

/// `updateComponents`.
pub fn update_components(surface_id: &str, components: Vec<Component>) -> ServerMessage {
    ServerMessage::UpdateComponents(UpdateComponents {
        surface_id: surface_id.to_string(),
        components,
    })
}

/// `updateDataModel` (`path` `None`: the whole model; `value` `None`: remove).
pub fn update_data(surface_id: &str, path: Option<&str>, value: Option<Value>) -> ServerMessage {
    ServerMessage::UpdateDataModel(UpdateDataModel {
        surface_id: surface_id.to_string(),
        path: path.map(str::to_string),
        value,
    })
}

/// `deleteSurface`.
pub fn delete_surface(surface_id: &str) -> ServerMessage {
    ServerMessage::DeleteSurface(DeleteSurface {
        surface_id: surface_id.to_string(),
    })
}

/// Builds the `a2ui-surface` snapshots of one activity message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfaceEmitter {
    message_id: String,
}

impl SurfaceEmitter {
    /// The emitter of the activity `a2ui-surface-<id>` (`id`: the tool call's id, or the
    /// surface's).
    pub fn new(id: &str) -> Self {
        SurfaceEmitter {
            message_id: message_id(id),
        }
    }

    /// The activity's message id.
    pub fn message_id(&self) -> &str {
        &self.message_id
    }

    fn snapshot(&self, content: Map<String, Value>) -> Event {
        ActivitySnapshot::new(self.message_id.clone(), ACTIVITY_TYPE, content)
            .with_replace(true)
            .into()
    }

    /// The surface is being generated: `progress_tokens` received so far.
    pub fn building(&self, progress_tokens: u64) -> Event {
        let mut c = Map::new();
        c.insert("status".into(), json!("building"));
        c.insert("progressTokens".into(), json!(progress_tokens));
        self.snapshot(c)
    }

    /// An attempt failed validation; attempt `attempt` of `max_attempts` follows.
    pub fn retrying(&self, attempt: u64, max_attempts: u64, errors: &[Violation]) -> Event {
        let mut c = Map::new();
        c.insert("status".into(), json!("retrying"));
        c.insert("attempt".into(), json!(attempt));
        c.insert("maxAttempts".into(), json!(max_attempts));
        c.insert(
            "errors".into(),
            Value::Array(errors.iter().map(|v| json!(v.to_string())).collect()),
        );
        self.snapshot(c)
    }

    /// No attempt produced a valid surface.
    pub fn failed(&self, error: &str, attempts: u64) -> Event {
        let mut c = Map::new();
        c.insert("status".into(), json!("failed"));
        c.insert("error".into(), json!(error));
        c.insert("attempts".into(), json!(attempts));
        self.snapshot(c)
    }

    /// The surface: these operations, in order (the whole content of the activity).
    pub fn operations(&self, ops: &[ServerMessage]) -> Event {
        let mut c = Map::new();
        c.insert(
            OPERATIONS_KEY.into(),
            Value::Array(ops.iter().map(ServerMessage::to_value).collect()),
        );
        self.snapshot(c)
    }
}

/// A `render_a2ui` tool call becoming surface events as its arguments stream in.
#[derive(Debug, Clone)]
pub struct RenderToolCall {
    emitter: SurfaceEmitter,
    parser: RenderArgsParser,
    validator: Validator,
    catalog_id: String,
    surface_id: Option<String>,
    components: Vec<Component>,
    invalid: Vec<Violation>,
    data: Option<Value>,
    deltas: u64,
    painted: usize,
}

impl RenderToolCall {
    /// The call `tool_call_id`; surfaces name `catalog_id` unless the arguments name
    /// another; the final surface is checked with `validator`.
    pub fn new(tool_call_id: &str, catalog_id: &str, validator: Validator) -> Self {
        RenderToolCall {
            emitter: SurfaceEmitter::new(tool_call_id),
            parser: RenderArgsParser::default(),
            validator,
            catalog_id: catalog_id.to_string(),
            surface_id: None,
            components: Vec::new(),
            invalid: Vec::new(),
            data: None,
            deltas: 0,
            painted: 0,
        }
    }

    /// The emitter (for `retrying` and `failed`).
    pub fn emitter(&self) -> &SurfaceEmitter {
        &self.emitter
    }

    /// Takes an arguments delta; returns the events it gives: `building` at the first
    /// delta, the surface whenever the components so far form a tree that paints and
    /// it grew.
    pub fn push_args(&mut self, delta: &str) -> Result<Vec<Event>, StreamError> {
        self.deltas += 1;
        let items = self.parser.push(delta)?;
        self.take(items);
        let mut out = Vec::new();
        if self.deltas == 1 {
            out.push(self.emitter.building(self.deltas));
        }
        if self.components.len() > self.painted && self.paints() {
            self.painted = self.components.len();
            out.push(self.emitter.operations(&self.ops()));
        }
        Ok(out)
    }

    /// Ends the arguments: the final surface, or what is wrong with it (the caller may
    /// retry with [`SurfaceEmitter::retrying`] or give up with [`SurfaceEmitter::failed`]).
    pub fn finish(&mut self) -> Result<Event, Vec<Violation>> {
        match self.parser.finish() {
            Ok(items) => self.take(items),
            Err(e) => return Err(vec![e.to_violation()]),
        }
        if !self.invalid.is_empty() {
            return Err(self.invalid.clone());
        }
        if self.surface_id.is_none() {
            return Err(vec![Violation::new(
                "A1",
                "the render_a2ui arguments have no surfaceId",
            )]);
        }
        let ops = self.ops();
        let values: Vec<Value> = ops.iter().map(ServerMessage::to_value).collect();
        let errors: Vec<Violation> = self
            .validator
            .validate(&values)
            .into_iter()
            .filter(|f| f.violation.is_error())
            .map(|f| f.violation)
            .collect();
        if errors.is_empty() {
            Ok(self.emitter.operations(&ops))
        } else {
            Err(errors)
        }
    }

    fn take(&mut self, items: Vec<RenderItem>) {
        for item in items {
            match item {
                RenderItem::SurfaceId(s) => self.surface_id = Some(s),
                RenderItem::CatalogId(c) => self.catalog_id = c,
                RenderItem::Component(_, c) => self.components.push(c),
                RenderItem::InvalidComponent(i, errs) => {
                    self.invalid.extend(errs.into_iter().map(|e| {
                        let p = format!("/components/{i}{}", e.path);
                        e.at(p)
                    }))
                }
                RenderItem::Data(d) => self.data = Some(d),
                RenderItem::Other(..) => {}
            }
        }
    }

    /// Whether the components so far form a tree that paints: a root, and every
    /// reference resolves.
    fn paints(&self) -> bool {
        let Some(sid) = &self.surface_id else {
            return false;
        };
        let values: Vec<Value> = self.ops().iter().map(ServerMessage::to_value).collect();
        let (findings, surfaces) = self.validator.validate_with_surfaces(&values);
        surfaces.get(sid).is_some_and(|s| s.root().is_some())
            && !findings
                .iter()
                .any(|f| matches!(f.violation.rule, "A6" | "A7" | "A8" | "A9"))
    }

    fn ops(&self) -> Vec<ServerMessage> {
        let sid = self.surface_id.as_deref().unwrap_or_default();
        let mut ops = vec![create_surface(sid, &self.catalog_id)];
        if !self.components.is_empty() {
            ops.push(update_components(sid, self.components.clone()));
        }
        if let Some(d) = &self.data {
            ops.push(update_data(sid, None, Some(d.clone())));
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agui::{ActivityFolder, Lifecycle};

    #[test]
    fn a_streamed_tool_call_becomes_surface_events() {
        let args = r#"{"surfaceId": "flight", "components": [{"id": "root", "component": "Card", "child": "col"}, {"id": "col", "component": "Column", "children": ["t"]}, {"id": "t", "component": "Text", "text": {"path": "/status"}}], "data": {"status": "On time"}}"#;
        let mut call = RenderToolCall::new("tc1", "basic", Validator::new());
        let mut events = Vec::new();
        for chunk in args.as_bytes().chunks(16) {
            events.extend(call.push_args(std::str::from_utf8(chunk).unwrap()).unwrap());
        }
        events.push(call.finish().unwrap());
        // building, the surface once root, col and t are all there, the final one.
        assert_eq!(events.len(), 3, "{events:#?}");
        let mut folder = ActivityFolder::default();
        let mut statuses = Vec::new();
        for (i, e) in events.iter().enumerate() {
            assert!(folder.push(i, e).is_empty());
            statuses.push(folder.activities().next().and_then(|a| a.status.clone()));
        }
        assert_eq!(
            statuses[0],
            Some(Lifecycle::Building {
                progress_tokens: Some(1)
            })
        );
        let a = folder.activities().next().unwrap();
        assert_eq!(a.message_id, "a2ui-surface-tc1");
        let s = a.surfaces.get("flight").unwrap();
        assert_eq!(s.catalog_id, "basic");
        assert_eq!(s.components.len(), 3);
        assert_eq!(s.data, json!({"status": "On time"}));
    }

    #[test]
    fn an_invalid_call_is_refused_with_its_rules() {
        let mut call = RenderToolCall::new("tc2", "basic", Validator::new());
        call.push_args(r#"{"surfaceId": "s", "components": [{"id": "root", "component": "Column", "children": ["x"]}]}"#)
            .unwrap();
        let errs = call.finish().unwrap_err();
        assert_eq!(errs[0].rule, "A7");
        let retry = call.emitter().retrying(2, 3, &errs);
        let failed = call.emitter().failed("no valid surface", 3);
        let mut folder = ActivityFolder::default();
        folder.push(0, &retry);
        assert!(matches!(
            folder.activities().next().and_then(|a| a.status.clone()),
            Some(Lifecycle::Retrying {
                attempt: Some(2),
                max_attempts: Some(3),
                ..
            })
        ));
        folder.push(1, &failed);
        assert!(matches!(
            folder.activities().next().and_then(|a| a.status.clone()),
            Some(Lifecycle::Failed {
                attempts: Some(3),
                ..
            })
        ));
        let mut call = RenderToolCall::new("tc3", "basic", Validator::new());
        call.push_args(r#"{"components": [5]}"#).unwrap();
        assert_eq!(call.finish().unwrap_err()[0].rule, "A1");
        let mut call = RenderToolCall::new("tc4", "basic", Validator::new());
        assert!(call.push_args("{oops").is_err());
        assert_eq!(call.finish().unwrap_err()[0].rule, "A17");
    }

    #[test]
    fn the_tool_and_the_message_builders() {
        let t = render_tool();
        assert_eq!(t.name, RENDER_TOOL);
        assert_eq!(
            t.parameters.as_ref().map(|p| p["required"].clone()),
            Some(json!(["surfaceId", "components"]))
        );
        let ops = [
            create_surface("s", "c"),
            update_components(
                "s",
                vec![Component::new("root", "Text").with("text", json!("x"))],
            ),
            update_data("s", Some("/a"), Some(json!(1))),
            delete_surface("s"),
        ];
        for op in &ops {
            assert_eq!(ServerMessage::parse(&op.to_value()).as_ref(), Ok(op));
        }
        assert_eq!(SurfaceEmitter::new("x").message_id(), "a2ui-surface-x");
    }
}
