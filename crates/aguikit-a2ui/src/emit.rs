//! The server side: surfaces as AG-UI events, in the convention of the official A2UI
//! middleware (`ACTIVITY_SNAPSHOT`, `activityType: "a2ui-surface"`, message id
//! `a2ui-surface-<id>`, `replace: true`, `content.a2ui_operations`; lifecycle snapshots with
//! `content.status` before the surface paints).
//!
//! [`SurfaceEmitter`] builds the events; [`RenderToolCall`] follows a `render_a2ui` tool
//! call as its arguments stream in ([`RenderStep`]s: progress, the surface once its
//! components are complete and valid, again with its data, or why it is rejected); the
//! [`middleware`](crate::middleware) puts them together in front of an agent.

use crate::agui::{ACTIVITY_TYPE, OPERATIONS_KEY};
use crate::message::{
    Component, CreateSurface, DeleteSurface, ServerMessage, UpdateComponents, UpdateDataModel,
};
use crate::rules::Violation;
use crate::stream::{RenderArgsParser, RenderItem, StreamError};
use crate::validate::Validator;
use aguikit_core::event::{ActivitySnapshot, Event};
use aguikit_core::input::Tool;
use indexmap::IndexMap;
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

    /// The surface is starting to be generated (`status: building`, no progress yet).
    pub fn building_started(&self) -> Event {
        let mut c = Map::new();
        c.insert("status".into(), json!("building"));
        self.snapshot(c)
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

    /// No attempt produced a valid surface, as a tool result reported it
    /// (`{"code": "a2ui_recovery_exhausted", "error", "attempts"}`): `attempts` as the result
    /// gave them (the official middleware's list of attempt records), `max_attempts`.
    pub fn exhausted(&self, error: &str, attempts: Value, max_attempts: u64) -> Event {
        let mut c = Map::new();
        c.insert("status".into(), json!("failed"));
        c.insert("error".into(), json!(error));
        c.insert("attempts".into(), attempts);
        c.insert("maxAttempts".into(), json!(max_attempts));
        self.snapshot(c)
    }

    /// The surface: these operations, in order (the whole content of the activity).
    pub fn operations(&self, ops: &[ServerMessage]) -> Event {
        self.raw_operations(ops.iter().map(ServerMessage::to_value).collect())
    }

    /// The surface: these operations as JSON, unchecked, in order (the whole content of
    /// the activity).
    pub fn raw_operations(&self, ops: Vec<Value>) -> Event {
        let mut c = Map::new();
        c.insert(OPERATIONS_KEY.into(), Value::Array(ops));
        self.snapshot(c)
    }
}

/// What a streamed `render_a2ui` call gives, step by step.
#[derive(Debug, Clone, PartialEq)]
pub enum RenderStep {
    /// Still generating: about this many tokens of arguments so far.
    Building(u64),
    /// The surface (or a fuller one): these operations, the activity's whole content.
    Surface(Vec<ServerMessage>),
    /// The components do not validate: the caller retries or gives up.
    Rejected(Vec<Violation>),
}

/// Progress is reported every this many (estimated) tokens.
const PROGRESS_STEP: u64 = 20;

/// The tokens the official middleware estimates for arguments of this length in UTF-16
/// code units (a quarter, rounded half up).
fn estimated_tokens(utf16_len: u64) -> u64 {
    (utf16_len + 2) / 4
}

/// A `render_a2ui` tool call becoming surface events as its arguments stream in, with the
/// official middleware's timing:
///
/// - progress (`Building`) every 20 estimated tokens of arguments (a quarter of their
///   UTF-16 length) until the surface is shown or rejected;
/// - the surface (`createSurface` + `updateComponents`) once `surfaceId` is known and the
///   `components` list is closed and valid, else `Rejected` with the violations;
/// - again with `updateDataModel` (path `/`, `{key: items}`) each time more elements of the
///   list the first repeating template binds (`children: {"componentId", "path": "/key"}`;
///   `items` without one) have arrived in `data`;
/// - again with the whole `data` (path `/`) once the `data` object is complete.
///
/// Like the official middleware, it looks at the arguments only at deltas holding `"`, `}`
/// or `]` (the complete `data` only at `}` or `]`), so the same deltas give the same steps.
/// Arguments that stop being JSON are rejected (`A17`) where the official middleware
/// waits; components are checked with this crate's [`Validator`].
#[derive(Debug, Clone)]
pub struct RenderToolCall {
    parser: RenderArgsParser,
    validator: Validator,
    catalog_id: String,
    args_catalog: Option<String>,
    surface_id: Option<String>,
    components: Vec<Component>,
    components_closed: bool,
    invalid: Vec<Violation>,
    data_lists: IndexMap<String, Vec<Value>>,
    data: Option<Value>,
    utf16_len: u64,
    progress: u64,
    ready: bool,
    items_key: String,
    items_shown: usize,
    emitted: bool,
    rejected: bool,
    data_done: bool,
    failed: Option<StreamError>,
}

impl RenderToolCall {
    /// A call whose surfaces name `catalog_id` (empty: the catalog the arguments name,
    /// unless it is `basic`, else [`DEFAULT_CATALOG_ID`]); components are checked with
    /// `validator`.
    pub fn new(catalog_id: &str, validator: Validator) -> Self {
        RenderToolCall {
            parser: RenderArgsParser::default(),
            validator,
            catalog_id: catalog_id.to_string(),
            args_catalog: None,
            surface_id: None,
            components: Vec::new(),
            components_closed: false,
            invalid: Vec::new(),
            data_lists: IndexMap::new(),
            data: None,
            utf16_len: 0,
            progress: 0,
            ready: false,
            items_key: String::new(),
            items_shown: 0,
            emitted: false,
            rejected: false,
            data_done: false,
            failed: None,
        }
    }

    /// Whether the surface has been given (its components were valid).
    pub fn emitted(&self) -> bool {
        self.emitted
    }

    /// The surface id, once the arguments named it.
    pub fn surface_id(&self) -> Option<&str> {
        self.surface_id.as_deref()
    }

    /// Takes an arguments delta; returns the steps it gives. Arguments that stop being
    /// JSON give one `Rejected` step (A17), then nothing more.
    pub fn push_args(&mut self, delta: &str) -> Vec<RenderStep> {
        if self.failed.is_some() {
            return Vec::new();
        }
        let mut out = Vec::new();
        self.utf16_len += delta.encode_utf16().count() as u64;
        let tokens = estimated_tokens(self.utf16_len);
        if !self.emitted
            && !self.rejected
            && !self.data_done
            && tokens >= self.progress + PROGRESS_STEP
        {
            self.progress = tokens;
            out.push(RenderStep::Building(tokens));
        }
        match self.parser.push(delta) {
            Ok(items) => self.take(items),
            Err(e) => {
                self.failed = Some(e.clone());
                if !self.emitted {
                    self.rejected = true;
                }
                out.push(RenderStep::Rejected(vec![e.to_violation()]));
                return out;
            }
        }
        if delta.contains(['"', '}', ']']) {
            self.steps(delta.contains(['}', ']']), &mut out);
        }
        out
    }

    /// Ends the arguments: what is wrong with the call, if its surface was never given
    /// (no surfaceId, components never closed, invalid components).
    pub fn finish(&mut self) -> Vec<Violation> {
        if self.emitted {
            return Vec::new();
        }
        if let Some(e) = &self.failed {
            return vec![e.to_violation()];
        }
        let mut out = Vec::new();
        if let Err(e) = self.parser.finish() {
            out.push(e.to_violation());
        }
        if self.surface_id.is_none() {
            out.push(Violation::new(
                "A1",
                "the render_a2ui arguments have no surfaceId",
            ));
        }
        if self.components.is_empty() {
            out.push(Violation::new(
                "A1",
                "the render_a2ui arguments have no components",
            ));
        }
        out.extend(self.invalid.iter().cloned());
        out
    }

    /// Records what the arguments gave; nothing is decided here.
    fn take(&mut self, items: Vec<RenderItem>) {
        for item in items {
            match item {
                RenderItem::SurfaceId(s) => self.surface_id = Some(s),
                RenderItem::CatalogId(c) => self.args_catalog = Some(c),
                RenderItem::Component(_, c) => self.components.push(c),
                RenderItem::InvalidComponent(i, errs) => {
                    self.invalid.extend(errs.into_iter().map(|e| {
                        let p = format!("/components/{i}{}", e.path);
                        e.at(p)
                    }))
                }
                RenderItem::ComponentsDone(_) => self.components_closed = true,
                RenderItem::DataItem(key, _, v) => self.data_lists.entry(key).or_default().push(v),
                RenderItem::Data(d) => {
                    if d.is_object() {
                        self.data = Some(d);
                    }
                }
                RenderItem::Other(..) => {}
            }
        }
    }

    /// The steps the arguments received so far give (at a delta holding `"`, `}` or `]`;
    /// `closing`: one holding `}` or `]`).
    fn steps(&mut self, closing: bool, out: &mut Vec<RenderStep>) {
        let Some(sid) = self.surface_id.clone() else {
            return;
        };
        if !self.emitted
            && !self.rejected
            && self.components_closed
            && (!self.components.is_empty() || !self.invalid.is_empty())
        {
            let errors = self.check(&sid);
            if errors.is_empty() {
                self.ready = true;
                self.items_key = self
                    .components
                    .iter()
                    .find_map(|c| {
                        let path = c.properties.get("children")?.get("path")?.as_str()?;
                        (!path.is_empty())
                            .then(|| path.strip_prefix('/').unwrap_or(path).to_string())
                    })
                    .unwrap_or_else(|| "items".to_string());
            } else {
                self.rejected = true;
                out.push(RenderStep::Rejected(errors));
            }
        }
        let mut items = None;
        if self.ready
            && !self.data_done
            && let Some(list) = self.data_lists.get(&self.items_key)
            && list.len() > self.items_shown
        {
            items = Some(list.clone());
        }
        if (self.ready && !self.emitted) || items.is_some() {
            let mut ops = self.ops(&sid);
            self.emitted = true;
            if let Some(list) = items.filter(|l| !l.is_empty()) {
                self.items_shown = list.len();
                let mut value = Map::new();
                value.insert(self.items_key.clone(), Value::Array(list));
                ops.push(update_data(&sid, Some("/"), Some(Value::Object(value))));
            }
            out.push(RenderStep::Surface(ops));
        }
        if self.emitted
            && !self.data_done
            && closing
            && let Some(d) = &self.data
        {
            let d = d.clone();
            self.data_done = true;
            let mut ops = self.ops(&sid);
            ops.push(update_data(&sid, Some("/"), Some(d)));
            out.push(RenderStep::Surface(ops));
        }
    }

    /// The errors of the components as a new surface (catalog, references, root).
    fn check(&self, sid: &str) -> Vec<Violation> {
        let mut errors = self.invalid.clone();
        let values: Vec<Value> = self.ops(sid).iter().map(ServerMessage::to_value).collect();
        errors.extend(
            self.validator
                .validate(&values)
                .into_iter()
                .filter(|f| f.violation.is_error())
                .map(|f| f.violation),
        );
        errors
    }

    /// The catalog the surface names.
    fn catalog(&self) -> &str {
        if !self.catalog_id.is_empty() {
            return &self.catalog_id;
        }
        match self.args_catalog.as_deref() {
            Some(c) if !c.is_empty() && c != "basic" => c,
            _ => DEFAULT_CATALOG_ID,
        }
    }

    /// `createSurface` and `updateComponents`.
    fn ops(&self, sid: &str) -> Vec<ServerMessage> {
        vec![
            create_surface(sid, self.catalog()),
            update_components(sid, self.components.clone()),
        ]
    }
}

/// The catalog id surfaces name when nothing names another (the official middleware's).
pub const DEFAULT_CATALOG_ID: &str = "https://a2ui.org/specification/v0_9/basic_catalog.json";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agui::{ActivityFolder, Lifecycle};

    #[test]
    fn a_streamed_tool_call_gives_progress_then_the_surface_then_its_data() {
        let filler = "x".repeat(200);
        let args = format!(
            r#"{{"surfaceId": "flight", "components": [{{"id": "root", "component": "Card", "child": "t"}}, {{"id": "t", "component": "Text", "text": {{"path": "/status"}}, "note": "{filler}"}}], "data": {{"status": "On time"}}}}"#
        );
        let mut call = RenderToolCall::new("", Validator::new());
        let mut steps = Vec::new();
        for chunk in args.as_bytes().chunks(16) {
            steps.extend(call.push_args(std::str::from_utf8(chunk).unwrap()));
        }
        assert!(call.finish().is_empty());
        let building = steps
            .iter()
            .filter(|s| matches!(s, RenderStep::Building(_)))
            .count();
        assert!(building >= 2, "{steps:?}");
        let surfaces: Vec<&Vec<ServerMessage>> = steps
            .iter()
            .filter_map(|s| match s {
                RenderStep::Surface(ops) => Some(ops),
                _ => None,
            })
            .collect();
        assert_eq!(surfaces.len(), 2);
        assert_eq!(surfaces[0].len(), 2);
        assert_eq!(
            surfaces[1][2],
            update_data("flight", Some("/"), Some(json!({"status": "On time"})))
        );
        assert_eq!(surfaces[1][0], create_surface("flight", DEFAULT_CATALOG_ID));
        // No progress once the surface is out.
        let last_surface = steps
            .iter()
            .rposition(|s| matches!(s, RenderStep::Surface(_)));
        let last_building = steps
            .iter()
            .rposition(|s| matches!(s, RenderStep::Building(_)));
        assert!(last_building < last_surface);
    }

    #[test]
    fn an_invalid_call_is_rejected_with_its_rules() {
        let mut call = RenderToolCall::new("basic", Validator::new());
        let steps = call.push_args(
            r#"{"surfaceId": "s", "components": [{"id": "root", "component": "Column", "children": ["x"]}]}"#,
        );
        assert_eq!(steps[0], RenderStep::Building(23));
        let RenderStep::Rejected(errs) = &steps[1] else {
            panic!("{steps:?}");
        };
        assert_eq!(errs[0].rule, "A7");
        let e = SurfaceEmitter::new("tc");
        let mut folder = ActivityFolder::default();
        folder.push(0, &e.retrying(2, 3, errs));
        assert!(matches!(
            folder.activities().next().and_then(|a| a.status.clone()),
            Some(Lifecycle::Retrying {
                attempt: Some(2),
                max_attempts: Some(3),
                ..
            })
        ));
        folder.push(1, &e.failed("no valid surface", 3));
        assert!(matches!(
            folder.activities().next().and_then(|a| a.status.clone()),
            Some(Lifecycle::Failed {
                attempts: Some(3),
                ..
            })
        ));
        let mut call = RenderToolCall::new("basic", Validator::new());
        call.push_args(r#"{"components": [5]"#);
        let errs = call.finish();
        assert!(errs.iter().any(|v| v.rule == "A1"), "{errs:?}");
        let mut call = RenderToolCall::new("basic", Validator::new());
        assert!(
            matches!(&call.push_args("{oops")[0], RenderStep::Rejected(v) if v[0].rule == "A17")
        );
        assert!(call.push_args("more").is_empty());
        assert_eq!(call.finish()[0].rule, "A17");
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
