//! The surface reducer: A2UI messages folded into surfaces (components by id, in arrival
//! order, plus the data model).

use crate::message::{Component, ServerMessage};
use crate::pointer;
use crate::rules::Violation;
use indexmap::IndexMap;
use serde_json::{Map, Value, json};

/// Most components one surface may hold (content is untrusted).
pub const MAX_COMPONENTS: usize = 10_000;

/// One surface: what a renderer draws.
#[derive(Debug, Clone, PartialEq)]
pub struct Surface {
    /// The surface's id.
    pub id: String,
    /// The catalog its components come from (empty for a surface known only from updates).
    pub catalog_id: String,
    /// Theme parameters.
    pub theme: Option<Map<String, Value>>,
    /// Whether the client sends the data model back with its messages.
    pub send_data_model: Option<bool>,
    /// Whether a `createSurface` made it (else it is known only from updates).
    pub created: bool,
    /// The components by id, in the order they first arrived.
    pub components: IndexMap<String, Component>,
    /// The data model (`{}` until set).
    pub data: Value,
}

impl Surface {
    /// An empty surface.
    pub fn new(id: impl Into<String>, catalog_id: impl Into<String>) -> Self {
        Surface {
            id: id.into(),
            catalog_id: catalog_id.into(),
            theme: None,
            send_data_model: None,
            created: false,
            components: IndexMap::new(),
            data: Value::Object(Map::new()),
        }
    }

    /// The root component, if it has arrived.
    pub fn root(&self) -> Option<&Component> {
        self.components.get("root")
    }

    /// The surface as JSON: `surfaceId`, `catalogId`, `theme`, `components` (in order) and
    /// `dataModel`.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("surfaceId".into(), json!(self.id));
        m.insert("catalogId".into(), json!(self.catalog_id));
        if let Some(t) = &self.theme {
            m.insert("theme".into(), Value::Object(t.clone()));
        }
        if let Some(s) = self.send_data_model {
            m.insert("sendDataModel".into(), json!(s));
        }
        m.insert(
            "components".into(),
            Value::Array(self.components.values().map(Component::to_value).collect()),
        );
        m.insert("dataModel".into(), self.data.clone());
        Value::Object(m)
    }

    /// Adds or replaces components (by id).
    pub fn update_components(&mut self, components: &[Component]) -> Result<(), Violation> {
        for c in components {
            if !self.components.contains_key(&c.id) && self.components.len() >= MAX_COMPONENTS {
                return Err(Violation::new(
                    "A17",
                    format!("the surface has more than {MAX_COMPONENTS} components"),
                )
                .surface(self.id.clone())
                .component(c.id.clone()));
            }
            self.components.insert(c.id.clone(), c.clone());
        }
        Ok(())
    }

    /// Sets (or, without a value, removes) the data at `path` (absent or `/`: the whole
    /// model).
    pub fn update_data(
        &mut self,
        path: Option<&str>,
        value: Option<&Value>,
    ) -> Result<(), Violation> {
        let p = path.unwrap_or("/");
        let tokens = pointer::parse(p).map_err(|e| {
            Violation::new("A12", e.to_string())
                .surface(self.id.clone())
                .at("/updateDataModel/path")
        })?;
        match value {
            Some(v) => pointer::set(&mut self.data, &tokens, v.clone()).map_err(|e| {
                Violation::new("A12", format!("cannot set {p:?} in the data model: {e}"))
                    .surface(self.id.clone())
                    .at("/updateDataModel/path")
            }),
            None => {
                pointer::remove(&mut self.data, &tokens);
                Ok(())
            }
        }
    }
}

/// Every surface of a conversation, folded from its messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Surfaces {
    surfaces: IndexMap<String, Surface>,
}

impl Surfaces {
    /// No surface.
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one message. A message for a surface that does not exist, or a
    /// `createSurface` for one that does, is refused (`A16`) and changes nothing; so is an
    /// invalid data path (`A12`).
    pub fn apply(&mut self, msg: &ServerMessage) -> Result<(), Violation> {
        self.apply_with(msg, false)
    }

    /// Like [`apply`](Self::apply), but an update for an unknown surface creates it
    /// (incomplete, `created == false`): how a checker reads an incremental batch.
    pub fn apply_lenient(&mut self, msg: &ServerMessage) -> Result<(), Violation> {
        self.apply_with(msg, true)
    }

    fn apply_with(&mut self, msg: &ServerMessage, lenient: bool) -> Result<(), Violation> {
        let sid = msg.surface_id();
        let lifecycle = |what: String| {
            Violation::new("A16", what)
                .surface(sid.to_string())
                .at(format!("/{}/surfaceId", msg.operation()))
        };
        match msg {
            ServerMessage::CreateSurface(c) => {
                if self.surfaces.get(sid).is_some_and(|s| s.created) {
                    return Err(lifecycle(format!(
                        "createSurface for surface '{sid}', which exists (delete it first)"
                    )));
                }
                let s = self
                    .surfaces
                    .entry(sid.to_string())
                    .or_insert_with(|| Surface::new(sid, ""));
                s.catalog_id = c.catalog_id.clone();
                s.theme = c.theme.clone();
                s.send_data_model = c.send_data_model;
                s.created = true;
                Ok(())
            }
            ServerMessage::DeleteSurface(_) => {
                if self.surfaces.shift_remove(sid).is_none() && !lenient {
                    return Err(lifecycle(format!(
                        "deleteSurface for surface '{sid}', which does not exist"
                    )));
                }
                Ok(())
            }
            ServerMessage::UpdateComponents(_) | ServerMessage::UpdateDataModel(_) => {
                if !self.surfaces.contains_key(sid) {
                    if !lenient {
                        return Err(lifecycle(format!(
                            "{} for surface '{sid}', which was not created",
                            msg.operation()
                        )));
                    }
                    self.surfaces.insert(sid.to_string(), Surface::new(sid, ""));
                }
                let Some(s) = self.surfaces.get_mut(sid) else {
                    return Ok(());
                };
                match msg {
                    ServerMessage::UpdateComponents(u) => s.update_components(&u.components),
                    ServerMessage::UpdateDataModel(u) => {
                        s.update_data(u.path.as_deref(), u.value.as_ref())
                    }
                    _ => Ok(()),
                }
            }
        }
    }

    /// The surface with this id.
    pub fn get(&self, id: &str) -> Option<&Surface> {
        self.surfaces.get(id)
    }

    /// Every surface, in creation order.
    pub fn iter(&self) -> impl Iterator<Item = &Surface> {
        self.surfaces.values()
    }

    /// How many surfaces there are.
    pub fn len(&self) -> usize {
        self.surfaces.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.surfaces.is_empty()
    }

    /// Every surface as JSON (an array of [`Surface::to_value`]).
    pub fn to_value(&self) -> Value {
        Value::Array(self.surfaces.values().map(Surface::to_value).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(v: Value) -> ServerMessage {
        ServerMessage::parse(&v).unwrap()
    }

    #[test]
    fn folds_a_surface() {
        let mut s = Surfaces::new();
        s.apply(&msg(
            json!({"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c"}}),
        ))
        .unwrap();
        s.apply(&msg(
            json!({"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
            {"id": "root", "component": "Column", "children": ["t"]},
            {"id": "t", "component": "Text", "text": {"path": "/name"}}]}}),
        ))
        .unwrap();
        s.apply(&msg(
            json!({"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
            {"id": "t", "component": "Text", "text": "replaced"}]}}),
        ))
        .unwrap();
        s.apply(&msg(json!({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": {"name": "Ada", "x": 1}}})))
            .unwrap();
        s.apply(&msg(
            json!({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": "/x"}}),
        ))
        .unwrap();
        s.apply(&msg(json!({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": "/user/age", "value": 3}})))
            .unwrap();
        let surf = s.get("s").unwrap();
        assert_eq!(surf.components.len(), 2);
        assert_eq!(surf.components["t"].properties["text"], json!("replaced"));
        assert_eq!(surf.data, json!({"name": "Ada", "user": {"age": 3}}));
        assert_eq!(surf.root().map(|c| c.component.as_str()), Some("Column"));
        assert_eq!(s.to_value()[0]["components"][1]["id"], json!("t"));
        let e = s
            .apply(&msg(json!({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": "/~2", "value": 1}})))
            .unwrap_err();
        assert_eq!(e.rule, "A12");
        s.apply(&msg(
            json!({"version": "v0.9", "deleteSurface": {"surfaceId": "s"}}),
        ))
        .unwrap();
        assert!(s.is_empty());
    }

    #[test]
    fn lifecycle_violations() {
        let mut s = Surfaces::new();
        let upd = msg(
            json!({"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [{"id": "root", "component": "Text"}]}}),
        );
        assert_eq!(s.apply(&upd).unwrap_err().rule, "A16");
        assert!(s.is_empty());
        s.apply_lenient(&upd).unwrap();
        assert!(!s.get("s").unwrap().created);
        let create =
            msg(json!({"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c"}}));
        s.apply(&create).unwrap();
        assert_eq!(s.apply(&create).unwrap_err().rule, "A16");
        let del = msg(json!({"version": "v0.9", "deleteSurface": {"surfaceId": "x"}}));
        assert_eq!(s.apply(&del).unwrap_err().rule, "A16");
    }
}
