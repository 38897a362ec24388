//! Typed A2UI v0.9 messages: server to client (`createSurface`, `updateComponents`,
//! `updateDataModel`, `deleteSurface`) and client to server (`action`, `error`).
//!
//! Every message is an envelope `{"version": "v0.9", "<kind>": {...}}`. [`ServerMessage::parse`]
//! checks it against the v0.9 message schema and reports what is wrong as [`A1`](crate::rules)
//! violations (several at once, each with its path), never panicking on any JSON.

use crate::rules::Violation;
use crate::schema::repr;
use serde_json::{Map, Value, json};

/// The protocol version this crate speaks.
pub const VERSION: &str = "v0.9";

/// A component of a surface: its id, its type (`component`) and its other properties.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    /// The component's id, unique in its surface (`root` is the tree's root).
    pub id: String,
    /// The component type, a name of the surface's catalog (`Text`, `Column`…).
    pub component: String,
    /// The other properties, as sent (`id` and `component` left out).
    pub properties: Map<String, Value>,
}

impl Component {
    /// A component with no other property.
    pub fn new(id: impl Into<String>, component: impl Into<String>) -> Self {
        Component {
            id: id.into(),
            component: component.into(),
            properties: Map::new(),
        }
    }

    /// Adds a property.
    pub fn with(mut self, name: impl Into<String>, value: Value) -> Self {
        self.properties.insert(name.into(), value);
        self
    }

    /// Reads a component object; `Err` lists what is missing or mistyped (rule `A1`, paths
    /// relative to the component).
    pub fn from_value(v: &Value) -> Result<Component, Vec<Violation>> {
        let Some(obj) = v.as_object() else {
            return Err(vec![Violation::new(
                "A1",
                format!("{} is not of type 'object'", repr(v)),
            )]);
        };
        let mut errs = Vec::new();
        let id = required_string(obj, "id", "", &mut errs);
        let component = required_string(obj, "component", "", &mut errs);
        if !errs.is_empty() {
            if let Some(id) = &id {
                errs = errs.into_iter().map(|e| e.component(id.clone())).collect();
            }
            return Err(errs);
        }
        let mut properties = obj.clone();
        properties.shift_remove("id");
        properties.shift_remove("component");
        Ok(Component {
            id: id.unwrap_or_default(),
            component: component.unwrap_or_default(),
            properties,
        })
    }

    /// The component as JSON (`id`, `component`, then the properties).
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), Value::String(self.id.clone()));
        m.insert("component".into(), Value::String(self.component.clone()));
        for (k, v) in &self.properties {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }
}

/// `createSurface`: starts a surface rendered with a catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateSurface {
    /// The new surface's id.
    pub surface_id: String,
    /// The catalog its components come from.
    pub catalog_id: String,
    /// Theme parameters (checked against the catalog's `theme`).
    pub theme: Option<Map<String, Value>>,
    /// Whether the client sends the surface's data model back with every message.
    pub send_data_model: Option<bool>,
}

/// `updateComponents`: adds or replaces components of a surface (by id).
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateComponents {
    /// The surface.
    pub surface_id: String,
    /// The components, in the order sent.
    pub components: Vec<Component>,
}

/// `updateDataModel`: sets (or, without a value, removes) the data at a path.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateDataModel {
    /// The surface.
    pub surface_id: String,
    /// A JSON Pointer into the data model; absent or `/` is the whole model.
    pub path: Option<String>,
    /// The new value; absent removes the key at `path`.
    pub value: Option<Value>,
}

/// `deleteSurface`: removes a surface.
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteSurface {
    /// The surface.
    pub surface_id: String,
}

/// A server-to-client A2UI message.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerMessage {
    /// `createSurface`.
    CreateSurface(CreateSurface),
    /// `updateComponents`.
    UpdateComponents(UpdateComponents),
    /// `updateDataModel`.
    UpdateDataModel(UpdateDataModel),
    /// `deleteSurface`.
    DeleteSurface(DeleteSurface),
}

/// The four operation names, in the schema's order.
pub const SERVER_OPERATIONS: [&str; 4] = [
    "createSurface",
    "updateComponents",
    "updateDataModel",
    "deleteSurface",
];

impl ServerMessage {
    /// The surface the message is about.
    pub fn surface_id(&self) -> &str {
        match self {
            ServerMessage::CreateSurface(m) => &m.surface_id,
            ServerMessage::UpdateComponents(m) => &m.surface_id,
            ServerMessage::UpdateDataModel(m) => &m.surface_id,
            ServerMessage::DeleteSurface(m) => &m.surface_id,
        }
    }

    /// The operation's wire name (`createSurface` …).
    pub fn operation(&self) -> &'static str {
        match self {
            ServerMessage::CreateSurface(_) => "createSurface",
            ServerMessage::UpdateComponents(_) => "updateComponents",
            ServerMessage::UpdateDataModel(_) => "updateDataModel",
            ServerMessage::DeleteSurface(_) => "deleteSurface",
        }
    }

    /// Reads and checks one message against the v0.9 message schema. `Err` holds every `A1`
    /// violation found (with the surface id when it could be read).
    pub fn parse(v: &Value) -> Result<ServerMessage, Vec<Violation>> {
        let Some(obj) = v.as_object() else {
            return Err(vec![Violation::new(
                "A1",
                format!("{} is not of type 'object'", repr(v)),
            )]);
        };
        let mut errs = Vec::new();
        check_version(obj, &mut errs);
        let ops: Vec<&str> = SERVER_OPERATIONS
            .iter()
            .copied()
            .filter(|k| obj.contains_key(*k))
            .collect();
        for k in obj.keys() {
            if k != "version" && !SERVER_OPERATIONS.contains(&k.as_str()) {
                errs.push(
                    Violation::new(
                        "A1",
                        format!("Additional properties are not allowed ('{k}' was unexpected)"),
                    )
                    .at(format!("/{}", crate::pointer::escape(k))),
                );
            }
        }
        let op = match ops.as_slice() {
            [op] => *op,
            [] => {
                errs.push(Violation::new(
                    "A1",
                    "the message has none of createSurface, updateComponents, updateDataModel, deleteSurface",
                ));
                return Err(errs);
            }
            _ => {
                errs.push(Violation::new(
                    "A1",
                    format!(
                        "the message has {} operations ({}); it must have exactly one",
                        ops.len(),
                        ops.join(", ")
                    ),
                ));
                return Err(errs);
            }
        };
        let base = format!("/{op}");
        let Some(body) = obj.get(op).and_then(Value::as_object) else {
            errs.push(
                Violation::new(
                    "A1",
                    format!(
                        "{} is not of type 'object'",
                        repr(obj.get(op).unwrap_or(&Value::Null))
                    ),
                )
                .at(base),
            );
            return Err(errs);
        };
        let surface_id = required_string(body, "surfaceId", &base, &mut errs);
        let allowed: &[&str] = match op {
            "createSurface" => &["surfaceId", "catalogId", "theme", "sendDataModel"],
            "updateComponents" => &["surfaceId", "components"],
            "updateDataModel" => &["surfaceId", "path", "value"],
            _ => &["surfaceId"],
        };
        for k in body.keys() {
            if !allowed.contains(&k.as_str()) {
                errs.push(
                    Violation::new(
                        "A1",
                        format!("Additional properties are not allowed ('{k}' was unexpected)"),
                    )
                    .at(format!("{base}/{}", crate::pointer::escape(k))),
                );
            }
        }
        let msg = match op {
            "createSurface" => {
                let catalog_id = required_string(body, "catalogId", &base, &mut errs);
                let theme = match body.get("theme") {
                    None => None,
                    Some(Value::Object(t)) => Some(t.clone()),
                    Some(other) => {
                        errs.push(type_error(other, "object", &format!("{base}/theme")));
                        None
                    }
                };
                let send_data_model = match body.get("sendDataModel") {
                    None => None,
                    Some(Value::Bool(b)) => Some(*b),
                    Some(other) => {
                        errs.push(type_error(
                            other,
                            "boolean",
                            &format!("{base}/sendDataModel"),
                        ));
                        None
                    }
                };
                ServerMessage::CreateSurface(CreateSurface {
                    surface_id: surface_id.clone().unwrap_or_default(),
                    catalog_id: catalog_id.unwrap_or_default(),
                    theme,
                    send_data_model,
                })
            }
            "updateComponents" => {
                let mut components = Vec::new();
                match body.get("components") {
                    None => errs.push(
                        Violation::new("A1", "'components' is a required property").at(&base),
                    ),
                    Some(Value::Array(items)) => {
                        if items.is_empty() {
                            errs.push(
                                Violation::new("A1", "[] should be non-empty")
                                    .at(format!("{base}/components")),
                            );
                        }
                        for (i, item) in items.iter().enumerate() {
                            match Component::from_value(item) {
                                Ok(c) => components.push(c),
                                Err(es) => errs.extend(es.into_iter().map(|e| {
                                    let p = format!("{base}/components/{i}{}", e.path);
                                    e.at(p)
                                })),
                            }
                        }
                    }
                    Some(other) => {
                        errs.push(type_error(other, "array", &format!("{base}/components")))
                    }
                }
                ServerMessage::UpdateComponents(UpdateComponents {
                    surface_id: surface_id.clone().unwrap_or_default(),
                    components,
                })
            }
            "updateDataModel" => {
                let path = match body.get("path") {
                    None => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(other) => {
                        errs.push(type_error(other, "string", &format!("{base}/path")));
                        None
                    }
                };
                ServerMessage::UpdateDataModel(UpdateDataModel {
                    surface_id: surface_id.clone().unwrap_or_default(),
                    path,
                    value: body.get("value").cloned(),
                })
            }
            _ => ServerMessage::DeleteSurface(DeleteSurface {
                surface_id: surface_id.clone().unwrap_or_default(),
            }),
        };
        if errs.is_empty() {
            Ok(msg)
        } else {
            Err(match surface_id {
                Some(s) => errs.into_iter().map(|e| e.surface(s.clone())).collect(),
                None => errs,
            })
        }
    }

    /// The message as its v0.9 JSON envelope.
    pub fn to_value(&self) -> Value {
        let (op, body) = match self {
            ServerMessage::CreateSurface(m) => {
                let mut b = Map::new();
                b.insert("surfaceId".into(), json!(m.surface_id));
                b.insert("catalogId".into(), json!(m.catalog_id));
                if let Some(t) = &m.theme {
                    b.insert("theme".into(), Value::Object(t.clone()));
                }
                if let Some(s) = m.send_data_model {
                    b.insert("sendDataModel".into(), json!(s));
                }
                ("createSurface", b)
            }
            ServerMessage::UpdateComponents(m) => {
                let mut b = Map::new();
                b.insert("surfaceId".into(), json!(m.surface_id));
                b.insert(
                    "components".into(),
                    Value::Array(m.components.iter().map(Component::to_value).collect()),
                );
                ("updateComponents", b)
            }
            ServerMessage::UpdateDataModel(m) => {
                let mut b = Map::new();
                b.insert("surfaceId".into(), json!(m.surface_id));
                if let Some(p) = &m.path {
                    b.insert("path".into(), json!(p));
                }
                if let Some(v) = &m.value {
                    b.insert("value".into(), v.clone());
                }
                ("updateDataModel", b)
            }
            ServerMessage::DeleteSurface(m) => {
                let mut b = Map::new();
                b.insert("surfaceId".into(), json!(m.surface_id));
                ("deleteSurface", b)
            }
        };
        let mut env = Map::new();
        env.insert("version".into(), json!(VERSION));
        env.insert(op.into(), Value::Object(body));
        Value::Object(env)
    }
}

/// A user's action on a component (client to server).
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// The action's name (from the component's `action.event.name`).
    pub name: String,
    /// The surface.
    pub surface_id: String,
    /// The component that raised it.
    pub source_component_id: String,
    /// When (ISO 8601).
    pub timestamp: String,
    /// The resolved `context` values.
    pub context: Map<String, Value>,
}

/// An error the client reports (client to server).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientError {
    /// `VALIDATION_FAILED` or another code.
    pub code: String,
    /// The surface.
    pub surface_id: String,
    /// For `VALIDATION_FAILED`: the path of the failing value.
    pub path: Option<String>,
    /// What went wrong.
    pub message: String,
}

/// A client-to-server A2UI message.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMessage {
    /// `action`.
    Action(Action),
    /// `error`.
    Error(ClientError),
}

impl ClientMessage {
    /// Reads and checks one client message against the v0.9 schema (`A1` violations).
    pub fn parse(v: &Value) -> Result<ClientMessage, Vec<Violation>> {
        let Some(obj) = v.as_object() else {
            return Err(vec![Violation::new(
                "A1",
                format!("{} is not of type 'object'", repr(v)),
            )]);
        };
        let mut errs = Vec::new();
        check_version(obj, &mut errs);
        let (has_action, has_error) = (obj.contains_key("action"), obj.contains_key("error"));
        if has_action == has_error {
            errs.push(Violation::new(
                "A1",
                "a client message has exactly one of 'action' and 'error'",
            ));
            return Err(errs);
        }
        for k in obj.keys() {
            if !["version", "action", "error"].contains(&k.as_str()) {
                errs.push(Violation::new(
                    "A1",
                    format!("Additional properties are not allowed ('{k}' was unexpected)"),
                ));
            }
        }
        let op = if has_action { "action" } else { "error" };
        let base = format!("/{op}");
        let Some(body) = obj.get(op).and_then(Value::as_object) else {
            errs.push(type_error(
                obj.get(op).unwrap_or(&Value::Null),
                "object",
                &base,
            ));
            return Err(errs);
        };
        let surface_id = required_string(body, "surfaceId", &base, &mut errs).unwrap_or_default();
        let msg = if has_action {
            let name = required_string(body, "name", &base, &mut errs).unwrap_or_default();
            let source_component_id =
                required_string(body, "sourceComponentId", &base, &mut errs).unwrap_or_default();
            let timestamp =
                required_string(body, "timestamp", &base, &mut errs).unwrap_or_default();
            let context = match body.get("context") {
                Some(Value::Object(c)) => c.clone(),
                Some(other) => {
                    errs.push(type_error(other, "object", &format!("{base}/context")));
                    Map::new()
                }
                None => {
                    errs.push(Violation::new("A1", "'context' is a required property").at(&base));
                    Map::new()
                }
            };
            ClientMessage::Action(Action {
                name,
                surface_id,
                source_component_id,
                timestamp,
                context,
            })
        } else {
            let code = required_string(body, "code", &base, &mut errs).unwrap_or_default();
            let message = required_string(body, "message", &base, &mut errs).unwrap_or_default();
            let path = if code == "VALIDATION_FAILED" {
                required_string(body, "path", &base, &mut errs)
            } else {
                body.get("path").and_then(Value::as_str).map(str::to_string)
            };
            ClientMessage::Error(ClientError {
                code,
                surface_id,
                path,
                message,
            })
        };
        if errs.is_empty() { Ok(msg) } else { Err(errs) }
    }

    /// The message as its v0.9 JSON envelope.
    pub fn to_value(&self) -> Value {
        match self {
            ClientMessage::Action(a) => json!({
                "version": VERSION,
                "action": {
                    "name": a.name,
                    "surfaceId": a.surface_id,
                    "sourceComponentId": a.source_component_id,
                    "timestamp": a.timestamp,
                    "context": a.context,
                }
            }),
            ClientMessage::Error(e) => {
                let mut b = Map::new();
                b.insert("code".into(), json!(e.code));
                b.insert("surfaceId".into(), json!(e.surface_id));
                if let Some(p) = &e.path {
                    b.insert("path".into(), json!(p));
                }
                b.insert("message".into(), json!(e.message));
                json!({"version": VERSION, "error": b})
            }
        }
    }
}

fn check_version(obj: &Map<String, Value>, errs: &mut Vec<Violation>) {
    match obj.get("version") {
        None => errs.push(Violation::new("A1", "'version' is a required property")),
        Some(Value::String(s)) if s == VERSION => {}
        Some(other) => errs.push(
            Violation::new(
                "A1",
                format!("'{VERSION}' was expected (found {})", repr(other)),
            )
            .at("/version"),
        ),
    }
}

fn type_error(v: &Value, ty: &str, path: &str) -> Violation {
    Violation::new("A1", format!("{} is not of type '{ty}'", repr(v))).at(path)
}

fn required_string(
    obj: &Map<String, Value>,
    key: &str,
    base: &str,
    errs: &mut Vec<Violation>,
) -> Option<String> {
    match obj.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            errs.push(type_error(other, "string", &format!("{base}/{key}")));
            None
        }
        None => {
            errs.push(Violation::new("A1", format!("'{key}' is a required property")).at(base));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_operation() {
        let msgs = [
            json!({"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c", "theme": {"primaryColor": "#00BFFF"}, "sendDataModel": true}}),
            json!({"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [{"id": "root", "component": "Text", "text": "hi"}]}}),
            json!({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": "/a", "value": {"b": 1}}}),
            json!({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": "/a"}}),
            json!({"version": "v0.9", "deleteSurface": {"surfaceId": "s"}}),
        ];
        for m in msgs {
            let parsed = ServerMessage::parse(&m).unwrap();
            assert_eq!(parsed.surface_id(), "s");
            assert_eq!(parsed.to_value(), m);
        }
    }

    #[test]
    fn reports_schema_errors_like_the_schema_does() {
        let e =
            ServerMessage::parse(&json!({"createSurface": {"surfaceId": "1", "catalogId": "c"}}))
                .unwrap_err();
        assert_eq!(e[0].message, "'version' is a required property");
        let e = ServerMessage::parse(
            &json!({"version": "v0.8", "createSurface": {"surfaceId": "1", "catalogId": "c"}}),
        )
        .unwrap_err();
        assert!(e[0].message.starts_with("'v0.9' was expected"));
        let e = ServerMessage::parse(
            &json!({"version": "v0.9", "createSurface": {"surfaceId": 123, "catalogId": "c"}}),
        )
        .unwrap_err();
        assert_eq!(e[0].message, "123 is not of type 'string'");
        assert_eq!(e[0].path, "/createSurface/surfaceId");
        let e =
            ServerMessage::parse(&json!({"version": "v0.9", "createSurface": {"surfaceId": "1"}}))
                .unwrap_err();
        assert_eq!(e[0].message, "'catalogId' is a required property");
        assert_eq!(e[0].surface_id.as_deref(), Some("1"));
        let e = ServerMessage::parse(&json!({"unknownMessage": "x"})).unwrap_err();
        assert!(e.iter().all(|v| v.rule == "A1") && e.len() == 3, "{e:?}");
        let e = ServerMessage::parse(&json!({"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [{"id": "a"}, 5]}}))
            .unwrap_err();
        assert_eq!(e[0].path, "/updateComponents/components/0");
        assert_eq!(e[0].component_id.as_deref(), Some("a"));
        assert_eq!(e[1].message, "5 is not of type 'object'");
        assert!(ServerMessage::parse(&json!([1])).is_err());
    }

    #[test]
    fn client_messages() {
        let a = json!({"version": "v0.9", "action": {"name": "submit", "surfaceId": "s", "sourceComponentId": "b", "timestamp": "2025-01-01T00:00:00Z", "context": {"x": 1}}});
        assert_eq!(ClientMessage::parse(&a).unwrap().to_value(), a);
        let e = json!({"version": "v0.9", "error": {"code": "VALIDATION_FAILED", "surfaceId": "s", "path": "/x", "message": "bad"}});
        assert_eq!(ClientMessage::parse(&e).unwrap().to_value(), e);
        let bad = json!({"version": "v0.9", "error": {"code": "VALIDATION_FAILED", "surfaceId": "s", "message": "bad"}});
        assert!(ClientMessage::parse(&bad).is_err());
        assert!(ClientMessage::parse(&json!({"version": "v0.9"})).is_err());
    }
}
