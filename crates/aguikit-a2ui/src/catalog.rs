//! Catalogs: the components (and functions) a surface may use, loaded from their JSON
//! Schema documents — the spec's `basic` and `minimal` catalogs or any custom one.
//!
//! A catalog refers to the spec's common types (`common_types.json`: `ComponentId`,
//! `DynamicString`, `ChildList`…); add that document with [`Catalog::add_schema`] so that
//! those references resolve. Which properties hold component references (a child, a list of
//! children, a template, a tab's child, a modal's trigger…) is read from the schemas
//! (`ComponentId` and `ChildList`), plus the conventional `child` and `children`.

use crate::message::Component;
use crate::rules::Violation;
use crate::schema::{DocId, ErrorKind, SchemaError, SchemaSet};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Why a document is not a catalog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError(pub String);

impl std::fmt::Display for CatalogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CatalogError {}

/// Where a component type keeps references to other components.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RefSlot {
    /// A property: an id, a list of ids, or a template `{componentId, path}`.
    Prop(String),
    /// A property of each object of an array property (`tabs[].child`).
    Items(String, String),
}

/// A reference from one component to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// A JSON Pointer to the reference inside the referring component.
    pub path: String,
    /// The referenced component id.
    pub target: String,
    /// For a template (`children: {componentId, path}`): the data path it iterates.
    pub template_path: Option<String>,
}

/// A loaded catalog.
#[derive(Debug, Clone)]
pub struct Catalog {
    id: String,
    schemas: SchemaSet,
    doc: DocId,
    slots: BTreeMap<String, Vec<RefSlot>>,
}

impl Catalog {
    /// Loads a catalog document (`catalogId`, or else `$id`, names it; `components` maps
    /// each type to its schema).
    pub fn from_value(catalog: Value) -> Result<Catalog, CatalogError> {
        let Some(obj) = catalog.as_object() else {
            return Err(CatalogError("a catalog is a JSON object".into()));
        };
        let id = obj
            .get("catalogId")
            .or_else(|| obj.get("$id"))
            .and_then(Value::as_str)
            .ok_or_else(|| CatalogError("the catalog has no catalogId (nor $id)".into()))?
            .to_string();
        match obj.get("components") {
            Some(Value::Object(_)) => {}
            Some(_) => {
                return Err(CatalogError(
                    "the catalog's components is not an object".into(),
                ));
            }
            None => return Err(CatalogError("the catalog has no components".into())),
        }
        let mut schemas = SchemaSet::new();
        let doc = schemas.add(Some("catalog.json"), catalog);
        let mut c = Catalog {
            id,
            schemas,
            doc,
            slots: BTreeMap::new(),
        };
        c.find_slots();
        Ok(c)
    }

    /// Loads a catalog from its JSON text.
    pub fn from_json(text: &str) -> Result<Catalog, CatalogError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| CatalogError(format!("the catalog is not JSON: {e}")))?;
        Catalog::from_value(v)
    }

    /// Adds a document the catalog refers to (the spec's `common_types.json`), known by its
    /// `$id` and its file name.
    pub fn add_schema(&mut self, doc: Value) {
        let name = doc
            .get("$id")
            .and_then(Value::as_str)
            .is_none()
            .then_some("common_types.json");
        self.schemas.add(name, doc);
        self.find_slots();
    }

    /// The catalog's id (what `createSurface.catalogId` names).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The component types, in the catalog's order.
    pub fn component_names(&self) -> Vec<&str> {
        self.components()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Whether the catalog defines this component type.
    pub fn has_component(&self, name: &str) -> bool {
        self.components().is_some_and(|m| m.contains_key(name))
    }

    /// The function names (`functions`), in the catalog's order.
    pub fn function_names(&self) -> Vec<&str> {
        self.schemas
            .doc(self.doc)
            .get("functions")
            .and_then(Value::as_object)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    fn components(&self) -> Option<&Map<String, Value>> {
        self.schemas.doc(self.doc).get("components")?.as_object()
    }

    /// Checks one component against its type's schema: `A2` (unknown type), `A3` (missing
    /// required property), `A4` (mistyped), `A5` (unknown property). Paths are relative to
    /// the component.
    pub fn validate_component(&self, c: &Component) -> Vec<Violation> {
        let Some(schema) = self.components().and_then(|m| m.get(&c.component)) else {
            let mut known = self.component_names();
            known.truncate(24);
            return vec![
                Violation::new(
                    "A2",
                    format!(
                        "Unknown component type '{}' (catalog '{}' has: {})",
                        c.component,
                        self.id,
                        known.join(", ")
                    ),
                )
                .component(c.id.clone())
                .at("/component"),
            ];
        };
        self.schemas
            .validate(self.doc, schema, &c.to_value())
            .into_iter()
            .map(|e| schema_violation(e).component(c.id.clone()))
            .collect()
    }

    /// Checks a surface's `theme` against the catalog's `$defs/theme` (`A4`/`A5`; nothing
    /// when the catalog defines no theme).
    pub fn validate_theme(&self, theme: &Map<String, Value>) -> Vec<Violation> {
        let Some(schema) = self
            .schemas
            .doc(self.doc)
            .get("$defs")
            .and_then(|d| d.get("theme"))
        else {
            return Vec::new();
        };
        self.schemas
            .validate(self.doc, schema, &Value::Object(theme.clone()))
            .into_iter()
            .map(|e| {
                let p = format!("/theme{}", e.path);
                schema_violation(e).at(p)
            })
            .collect()
    }

    /// The references a component makes to other components.
    pub fn references(&self, c: &Component) -> Vec<Reference> {
        references_in(c, self.slots.get(&c.component).map(Vec::as_slice))
    }

    fn find_slots(&mut self) {
        let names: Vec<String> = self
            .component_names()
            .into_iter()
            .map(str::to_string)
            .collect();
        let mut slots = BTreeMap::new();
        for name in names {
            let mut found = Vec::new();
            if let Some(schema) = self.components().and_then(|m| m.get(&name)) {
                let mut props = Vec::new();
                collect_props(&self.schemas, self.doc, schema, 0, &mut props);
                for (prop, doc, ps) in props {
                    if is_ref_schema(&self.schemas, doc, ps) {
                        found.push(RefSlot::Prop(prop));
                    } else if let Some(items) = ps.get("items") {
                        let mut inner = Vec::new();
                        collect_props(&self.schemas, doc, items, 0, &mut inner);
                        for (ip, idoc, is) in inner {
                            if is_ref_schema(&self.schemas, idoc, is) {
                                found.push(RefSlot::Items(prop.clone(), ip));
                            }
                        }
                    }
                }
            }
            found.dedup();
            slots.insert(name, found);
        }
        self.slots = slots;
    }
}

/// The references of a component when no catalog is known: `child` and `children`.
pub fn default_references(c: &Component) -> Vec<Reference> {
    references_in(c, None)
}

fn references_in(c: &Component, slots: Option<&[RefSlot]>) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    let defaults = [
        RefSlot::Prop("child".into()),
        RefSlot::Prop("children".into()),
    ];
    for slot in slots.unwrap_or(&[]).iter().chain(defaults.iter()) {
        match slot {
            RefSlot::Prop(p) => {
                if seen.contains(&p.as_str()) {
                    continue;
                }
                seen.push(p);
                let base = format!("/{}", crate::pointer::escape(p));
                match c.properties.get(p) {
                    Some(Value::String(s)) => out.push(Reference {
                        path: base,
                        target: s.clone(),
                        template_path: None,
                    }),
                    Some(Value::Array(items)) => {
                        for (i, it) in items.iter().enumerate() {
                            if let Value::String(s) = it {
                                out.push(Reference {
                                    path: format!("{base}/{i}"),
                                    target: s.clone(),
                                    template_path: None,
                                });
                            }
                        }
                    }
                    Some(Value::Object(o)) => {
                        if let Some(Value::String(s)) = o.get("componentId") {
                            out.push(Reference {
                                path: format!("{base}/componentId"),
                                target: s.clone(),
                                template_path: o
                                    .get("path")
                                    .and_then(Value::as_str)
                                    .map(str::to_string),
                            });
                        }
                    }
                    _ => {}
                }
            }
            RefSlot::Items(p, inner) => {
                if let Some(Value::Array(items)) = c.properties.get(p) {
                    for (i, it) in items.iter().enumerate() {
                        if let Some(Value::String(s)) = it.get(inner) {
                            out.push(Reference {
                                path: format!(
                                    "/{}/{i}/{}",
                                    crate::pointer::escape(p),
                                    crate::pointer::escape(inner)
                                ),
                                target: s.clone(),
                                template_path: None,
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// The properties a schema declares (own, through `$ref`, `allOf`), with the document each
/// subschema lives in.
fn collect_props<'a>(
    set: &'a SchemaSet,
    doc: DocId,
    schema: &'a Value,
    depth: usize,
    out: &mut Vec<(String, DocId, &'a Value)>,
) {
    if depth > 16 {
        return;
    }
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            out.push((k.clone(), doc, v));
        }
    }
    if let Some(r) = obj.get("$ref").and_then(Value::as_str)
        && let Some((d, s)) = set.resolve(doc, r)
    {
        collect_props(set, d, s, depth + 1, out);
    }
    if let Some(all) = obj.get("allOf").and_then(Value::as_array) {
        for s in all {
            collect_props(set, doc, s, depth + 1, out);
        }
    }
}

/// Whether a property schema is a component reference: a `$ref` to `ComponentId` or
/// `ChildList`, or a schema titled `ComponentId` (also behind a `$ref`).
fn is_ref_schema(set: &SchemaSet, doc: DocId, schema: &Value) -> bool {
    let mut cur = (doc, schema);
    for _ in 0..8 {
        let Some(obj) = cur.1.as_object() else {
            return false;
        };
        if obj.get("title").and_then(Value::as_str) == Some("ComponentId") {
            return true;
        }
        let Some(r) = obj.get("$ref").and_then(Value::as_str) else {
            return false;
        };
        if r.ends_with("/ComponentId") || r.ends_with("/ChildList") {
            return true;
        }
        match set.resolve(cur.0, r) {
            Some(next) => cur = next,
            None => return false,
        }
    }
    false
}

/// The rule a schema error breaks: `A3` required, `A5` unknown property, `A2` unknown
/// discriminator value at a component's `component`, `A4` anything else.
fn schema_violation(e: SchemaError) -> Violation {
    let rule = match e.kind {
        ErrorKind::Required => "A3",
        ErrorKind::Additional | ErrorKind::Unevaluated => "A5",
        _ => "A4",
    };
    Violation::new(rule, e.message).at(e.path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tiny() -> Catalog {
        let mut c = Catalog::from_value(json!({
            "catalogId": "tiny",
            "components": {
                "Text": {"type": "object", "allOf": [{"$ref": "common_types.json#/$defs/Common"}],
                          "properties": {"component": {"const": "Text"}, "text": {"type": "string"}},
                          "required": ["component", "text"], "unevaluatedProperties": false},
                "Tabs": {"type": "object", "properties": {"component": {"const": "Tabs"},
                          "tabs": {"type": "array", "items": {"type": "object", "properties": {"child": {"$ref": "common_types.json#/$defs/ComponentId"}}}},
                          "opener": {"$ref": "common_types.json#/$defs/ComponentId"}}}
            },
            "$defs": {"theme": {"type": "object", "properties": {"primaryColor": {"type": "string", "pattern": "^#[0-9a-fA-F]{6}$"}}}}
        }))
        .unwrap();
        c.add_schema(json!({"$defs": {"ComponentId": {"type": "string"}, "Common": {"properties": {"id": {"type": "string"}}, "required": ["id"]}}}));
        c
    }

    #[test]
    fn classifies_component_errors() {
        let c = tiny();
        assert_eq!(c.id(), "tiny");
        assert_eq!(c.component_names(), vec!["Text", "Tabs"]);
        assert!(
            c.validate_component(&Component::new("a", "Text").with("text", json!("x")))
                .is_empty()
        );
        let v = c.validate_component(&Component::new("a", "Txt"));
        assert_eq!((v[0].rule, v[0].path.as_str()), ("A2", "/component"));
        let v = c.validate_component(&Component::new("a", "Text"));
        assert_eq!(v[0].rule, "A3");
        assert_eq!(v[0].message, "'text' is a required property");
        let v = c.validate_component(&Component::new("a", "Text").with("text", json!(1)));
        assert_eq!((v[0].rule, v[0].path.as_str()), ("A4", "/text"));
        let v = c.validate_component(
            &Component::new("a", "Text")
                .with("text", json!("x"))
                .with("colour", json!(1)),
        );
        assert_eq!((v[0].rule, v[0].path.as_str()), ("A5", "/colour"));
        assert_eq!(v[0].component_id.as_deref(), Some("a"));
        let mut theme = Map::new();
        theme.insert("primaryColor".into(), json!("red"));
        assert_eq!(c.validate_theme(&theme)[0].path, "/theme/primaryColor");
    }

    #[test]
    fn finds_references_from_the_schema() {
        let c = tiny();
        let tabs = Component::new("t", "Tabs")
            .with("tabs", json!([{"child": "a"}, {"child": "b"}]))
            .with("opener", json!("o"))
            .with("children", json!({"componentId": "tpl", "path": "/items"}));
        let refs = c.references(&tabs);
        let targets: Vec<&str> = refs.iter().map(|r| r.target.as_str()).collect();
        assert_eq!(targets, vec!["a", "b", "o", "tpl"]);
        assert_eq!(refs[0].path, "/tabs/0/child");
        assert_eq!(refs[3].template_path.as_deref(), Some("/items"));
    }

    #[test]
    fn rejects_non_catalogs() {
        assert!(Catalog::from_value(json!([])).is_err());
        assert!(Catalog::from_value(json!({"catalogId": "x"})).is_err());
        assert!(Catalog::from_json("{").is_err());
    }
}
