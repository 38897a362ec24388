//! Validation of A2UI messages: the message schema (`A1`), the catalog (`A2`–`A5`) and the
//! semantic checks over a surface's component tree and data model (`A6`–`A16`).
//!
//! [`Validator::validate`] checks a batch of messages the way the A2UI conformance suites
//! do: each message on its own, then each surface's tree once the batch is applied. A
//! surface the batch creates is complete (it must have a `root` that reaches every
//! component); one the batch only updates is an incremental update (no root needed).

use crate::catalog::{Catalog, Reference, default_references};
use crate::message::{Component, ServerMessage};
use crate::pointer;
use crate::rules::Violation;
use crate::surface::{Surface, Surfaces};
use indexmap::IndexMap;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Limits of the semantic checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deepest component tree, counted from `root` (`A14`).
    pub max_tree_depth: usize,
    /// Deepest data model or property value (`A14`).
    pub max_data_depth: usize,
    /// Deepest nesting of function calls (`A15`).
    pub max_function_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_tree_depth: 50,
            max_data_depth: 50,
            max_function_depth: 5,
        }
    }
}

/// A violation found in a batch, with the index of the message it is about (`None` when it
/// is about a surface's tree as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The index of the message in the batch.
    pub message: Option<usize>,
    /// The violation.
    pub violation: Violation,
}

/// Checks messages against the message schema, a catalog (optional) and the semantic rules.
#[derive(Debug, Clone, Default)]
pub struct Validator {
    catalog: Option<Catalog>,
    limits: Limits,
}

impl Validator {
    /// A validator without a catalog: message schema and semantic rules only (components
    /// refer to each other through `child` and `children`).
    pub fn new() -> Self {
        Self::default()
    }

    /// A validator that also checks components against `catalog`.
    pub fn with_catalog(catalog: Catalog) -> Self {
        Validator {
            catalog: Some(catalog),
            limits: Limits::default(),
        }
    }

    /// Sets the limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The catalog, if any.
    pub fn catalog(&self) -> Option<&Catalog> {
        self.catalog.as_ref()
    }

    /// Checks one batch of messages (JSON values, in order) and returns every finding, in
    /// the order found. Empty means valid (warnings included: see [`Violation::is_error`]).
    pub fn validate(&self, messages: &[Value]) -> Vec<Finding> {
        self.validate_with_surfaces(messages).0
    }

    /// Like [`validate`](Self::validate), and also returns the surfaces the batch folds into.
    pub fn validate_with_surfaces(&self, messages: &[Value]) -> (Vec<Finding>, Surfaces) {
        let mut out = Vec::new();
        let mut surfaces = Surfaces::new();
        // Components reachable from root after some update: a component that a later
        // update orphans (a loading placeholder replaced) is not an error.
        let mut reached: HashMap<String, HashSet<String>> = HashMap::new();
        for (i, raw) in messages.iter().enumerate() {
            let found = |v: Violation| Finding {
                message: Some(i),
                violation: v,
            };
            let msg = match ServerMessage::parse(raw) {
                Ok(m) => m,
                Err(errs) => {
                    out.extend(errs.into_iter().map(found));
                    continue;
                }
            };
            for v in self.check_message(&msg) {
                out.push(found(v));
            }
            if let Err(v) = surfaces.apply_lenient(&msg) {
                out.push(found(v));
            }
            if let ServerMessage::UpdateComponents(u) = &msg
                && let Some(s) = surfaces.get(&u.surface_id)
            {
                let now = self.reachable(s);
                reached.entry(s.id.clone()).or_default().extend(now);
            }
        }
        for s in surfaces.iter() {
            let ever = reached.get(&s.id);
            for v in self.check_surface(s, s.created) {
                if v.rule == "A10"
                    && let (Some(ever), Some(c)) = (ever, &v.component_id)
                    && ever.contains(c)
                {
                    continue;
                }
                out.push(Finding {
                    message: None,
                    violation: v,
                });
            }
        }
        (out, surfaces)
    }

    /// The checks of one message on its own: catalog (`A2`–`A5`), duplicate ids (`A11`),
    /// path syntax (`A12`), depth (`A14`) and function nesting (`A15`).
    pub fn check_message(&self, msg: &ServerMessage) -> Vec<Violation> {
        let sid = msg.surface_id().to_string();
        let mut out = Vec::new();
        match msg {
            ServerMessage::CreateSurface(c) => {
                if let (Some(cat), Some(theme)) = (&self.catalog, &c.theme) {
                    out.extend(cat.validate_theme(theme).into_iter().map(|v| {
                        let p = format!("/createSurface{}", v.path);
                        v.at(p)
                    }));
                }
            }
            ServerMessage::UpdateComponents(u) => {
                let mut seen = HashSet::new();
                for c in &u.components {
                    if !seen.insert(c.id.as_str()) {
                        out.push(
                            Violation::new("A11", format!("Duplicate component ID: {}", c.id))
                                .component(c.id.clone())
                                .at("/id"),
                        );
                    }
                    if let Some(cat) = &self.catalog {
                        out.extend(cat.validate_component(c));
                    }
                    self.check_properties(c, &mut out);
                }
            }
            ServerMessage::UpdateDataModel(u) => {
                if let Some(p) = &u.path
                    && let Err(e) = pointer::parse(p)
                {
                    out.push(Violation::new("A12", e.to_string()).at("/updateDataModel/path"));
                }
                if let Some(v) = &u.value
                    && depth(v, self.limits.max_data_depth + 1) > self.limits.max_data_depth
                {
                    out.push(
                        Violation::new(
                            "A14",
                            format!(
                                "Global recursion limit exceeded: logical depth of the data model exceeds {}",
                                self.limits.max_data_depth
                            ),
                        )
                        .at("/updateDataModel/value"),
                    );
                }
            }
            ServerMessage::DeleteSurface(_) => {}
        }
        out.into_iter().map(|v| v.surface(sid.clone())).collect()
    }

    fn check_properties(&self, c: &Component, out: &mut Vec<Violation>) {
        for (k, v) in &c.properties {
            let path = format!("/{}", pointer::escape(k));
            if depth(v, self.limits.max_data_depth + 1) > self.limits.max_data_depth {
                out.push(
                    Violation::new(
                        "A14",
                        format!(
                            "Global recursion limit exceeded: logical depth of property '{k}' exceeds {}",
                            self.limits.max_data_depth
                        ),
                    )
                    .component(c.id.clone())
                    .at(path),
                );
                continue;
            }
            let mut visit = Visit {
                component: &c.id,
                limits: &self.limits,
                out,
                fn_reported: false,
            };
            visit.walk(v, &path, 0);
        }
    }

    /// The ids reachable from `root` (none without a root).
    pub fn reachable(&self, s: &Surface) -> HashSet<String> {
        let mut seen = HashSet::new();
        if s.root().is_none() {
            return seen;
        }
        let mut todo = vec!["root".to_string()];
        while let Some(id) = todo.pop() {
            let Some(c) = s.components.get(&id) else {
                continue;
            };
            if !seen.insert(id) {
                continue;
            }
            let refs = match &self.catalog {
                Some(cat) => cat.references(c),
                None => default_references(c),
            };
            todo.extend(refs.into_iter().map(|r| r.target));
        }
        seen
    }

    /// The checks of a surface's tree: self-references (`A8`), dangling references (`A7`),
    /// cycles (`A9`), and for a complete surface a `root` (`A6`) that reaches every component
    /// (`A10`) within the depth limit (`A14`); data bindings that resolve to nothing in a
    /// data model that was set (`A13`, a warning).
    pub fn check_surface(&self, s: &Surface, complete: bool) -> Vec<Violation> {
        let mut out = Vec::new();
        let refs: IndexMap<&str, Vec<Reference>> = s
            .components
            .values()
            .map(|c| {
                let r = match &self.catalog {
                    Some(cat) => cat.references(c),
                    None => default_references(c),
                };
                (c.id.as_str(), r)
            })
            .collect();
        let mut edges: HashMap<&str, Vec<&str>> = HashMap::new();
        for (id, rs) in &refs {
            for r in rs {
                if r.target == *id {
                    out.push(
                        Violation::new(
                            "A8",
                            format!("Self-reference detected: component '{id}' references itself"),
                        )
                        .component(*id)
                        .at(r.path.clone()),
                    );
                } else if !s.components.contains_key(&r.target) {
                    out.push(
                        Violation::new(
                            "A7",
                            format!(
                                "Component '{id}' references non-existent component '{}'",
                                r.target
                            ),
                        )
                        .component(*id)
                        .at(r.path.clone()),
                    );
                } else {
                    edges.entry(id).or_default().push(r.target.as_str());
                }
            }
        }
        let cyclic = find_cycles(&refs, &edges, &mut out);
        if complete && !s.components.is_empty() && s.root().is_none() {
            out.push(Violation::new(
                "A6",
                format!(
                    "Missing root component: surface '{}' has no component with id 'root'",
                    s.id
                ),
            ));
        }
        if s.root().is_some() && (complete || !cyclic) {
            let reached = self.reach(&edges, cyclic, &mut out);
            if complete {
                for id in s.components.keys() {
                    if !reached.contains(id.as_str()) {
                        out.push(
                            Violation::new(
                                "A10",
                                format!("Component '{id}' is not reachable from 'root'"),
                            )
                            .component(id.clone()),
                        );
                    }
                }
            }
        }
        if complete && s.data.as_object().is_some_and(|m| !m.is_empty()) {
            for c in s.components.values() {
                for (k, v) in &c.properties {
                    unresolved(
                        &s.data,
                        v,
                        &format!("/{}", pointer::escape(k)),
                        &c.id,
                        0,
                        &mut out,
                    );
                }
            }
        }
        out.into_iter().map(|v| v.surface(s.id.clone())).collect()
    }

    /// Breadth-first from `root`, reporting a tree deeper than the limit once.
    fn reach<'a>(
        &self,
        edges: &HashMap<&'a str, Vec<&'a str>>,
        cyclic: bool,
        out: &mut Vec<Violation>,
    ) -> HashSet<&'a str> {
        let limit = self.limits.max_tree_depth;
        let mut best: HashMap<&str, usize> = HashMap::new();
        let mut queue = std::collections::VecDeque::new();
        queue.push_back(("root", 1usize));
        best.insert("root", 1);
        let mut reported = false;
        while let Some((id, d)) = queue.pop_front() {
            if d > limit && !reported {
                out.push(
                        Violation::new(
                            "A14",
                            format!(
                                "Global recursion limit exceeded: logical depth > {limit} at component '{id}'"
                            ),
                        )
                        .component(id),
                    );
                reported = true;
            }
            for next in edges.get(id).map(Vec::as_slice).unwrap_or(&[]) {
                let deeper = best
                    .get(next)
                    .is_none_or(|b| !cyclic && d + 1 > *b && d < limit);
                if deeper {
                    best.insert(next, d + 1);
                    queue.push_back((next, d + 1));
                }
            }
        }
        best.into_keys().collect()
    }
}

/// Reports each cycle once (as the path that closes it); true when there is one.
fn find_cycles(
    refs: &IndexMap<&str, Vec<Reference>>,
    edges: &HashMap<&str, Vec<&str>>,
    out: &mut Vec<Violation>,
) -> bool {
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let mut state: HashMap<&str, u8> = HashMap::new();
    let mut any = false;
    for start in refs.keys() {
        if state.get(start).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
        state.insert(start, 1);
        while let Some((node, i)) = stack.last().copied() {
            let next = edges.get(node).and_then(|e| e.get(i)).copied();
            match next {
                None => {
                    state.insert(node, 2);
                    stack.pop();
                }
                Some(n) => {
                    if let Some(top) = stack.last_mut() {
                        top.1 += 1;
                    }
                    match state.get(n).copied().unwrap_or(0) {
                        0 => {
                            state.insert(n, 1);
                            stack.push((n, 0));
                        }
                        1 => {
                            any = true;
                            let from = stack.iter().position(|(s, _)| *s == n).unwrap_or(0);
                            let mut chain: Vec<&str> =
                                stack[from..].iter().map(|(s, _)| *s).collect();
                            chain.push(n);
                            out.push(
                                Violation::new(
                                    "A9",
                                    format!("Circular reference detected: {}", chain.join(" -> ")),
                                )
                                .component(node),
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    any
}

/// The nesting depth of a value, counted up to `cap`.
fn depth(v: &Value, cap: usize) -> usize {
    let mut max = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        if max >= cap {
            return max;
        }
        match v {
            Value::Object(m) => stack.extend(m.values().map(|c| (c, d + 1))),
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    max
}

struct Visit<'a> {
    component: &'a str,
    limits: &'a Limits,
    out: &'a mut Vec<Violation>,
    fn_reported: bool,
}

impl Visit<'_> {
    /// Data paths (`{"path": …}`, template paths) must parse; function calls (`{"call": …}`)
    /// must not nest too deep.
    fn walk(&mut self, v: &Value, at: &str, calls: usize) {
        match v {
            Value::Object(m) => {
                let calls = if m.get("call").is_some_and(Value::is_string) {
                    calls + 1
                } else {
                    calls
                };
                if calls > self.limits.max_function_depth && !self.fn_reported {
                    self.fn_reported = true;
                    self.out.push(
                        Violation::new(
                            "A15",
                            format!(
                                "Recursion limit exceeded: functionCall depth > {}",
                                self.limits.max_function_depth
                            ),
                        )
                        .component(self.component)
                        .at(at),
                    );
                }
                if let Some(Value::String(p)) = m.get("path")
                    && let Err(e) = pointer::parse(p)
                {
                    self.out.push(
                        Violation::new("A12", e.to_string())
                            .component(self.component)
                            .at(format!("{at}/path")),
                    );
                }
                for (k, c) in m {
                    self.walk(c, &format!("{at}/{}", pointer::escape(k)), calls);
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    self.walk(c, &format!("{at}/{i}"), calls);
                }
            }
            _ => {}
        }
    }
}

/// Absolute data bindings (`{"path": "/…"}` alone) that point at nothing.
fn unresolved(
    data: &Value,
    v: &Value,
    at: &str,
    component: &str,
    d: usize,
    out: &mut Vec<Violation>,
) {
    if d > 64 {
        return;
    }
    match v {
        Value::Object(m) => {
            if m.len() == 1
                && let Some(Value::String(p)) = m.get("path")
                && p.starts_with('/')
                && let Ok(tokens) = pointer::parse(p)
                && pointer::get(data, &tokens).is_none()
            {
                out.push(
                    Violation::new(
                        "A13",
                        format!("Data binding '{p}' resolves to nothing in the data model"),
                    )
                    .component(component)
                    .at(format!("{at}/path")),
                );
                return;
            }
            for (k, c) in m {
                unresolved(
                    data,
                    c,
                    &format!("{at}/{}", pointer::escape(k)),
                    component,
                    d + 1,
                    out,
                );
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                unresolved(data, c, &format!("{at}/{i}"), component, d + 1, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(msgs: Vec<Value>) -> Vec<&'static str> {
        Validator::new()
            .validate(&msgs)
            .into_iter()
            .map(|f| f.violation.rule)
            .collect()
    }

    fn create() -> Value {
        json!({"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": "c"}})
    }

    fn update(components: Value) -> Value {
        json!({"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": components}})
    }

    #[test]
    fn tree_rules() {
        assert!(rules(vec![create(), update(json!([{"id": "root", "component": "Card", "child": "t"}, {"id": "t", "component": "Text"}]))]).is_empty());
        assert_eq!(
            rules(vec![
                create(),
                update(json!([{"id": "t", "component": "Text"}]))
            ]),
            vec!["A6"]
        );
        assert_eq!(
            rules(vec![update(json!([{"id": "t", "component": "Text"}]))]),
            Vec::<&str>::new()
        );
        assert_eq!(
            rules(vec![
                create(),
                update(json!([{"id": "root", "component": "Column", "children": ["x"]}]))
            ]),
            vec!["A7"]
        );
        assert_eq!(
            rules(vec![
                create(),
                update(json!([{"id": "root", "component": "Card", "child": "root"}]))
            ]),
            vec!["A8"]
        );
        let r = rules(vec![
            create(),
            update(
                json!([{"id": "root", "component": "Card", "child": "a"}, {"id": "a", "component": "Card", "child": "root"}]),
            ),
        ]);
        assert_eq!(r, vec!["A9"]);
        assert_eq!(
            rules(vec![
                create(),
                update(
                    json!([{"id": "root", "component": "Text"}, {"id": "o", "component": "Text"}])
                )
            ]),
            vec!["A10"]
        );
        assert_eq!(
            rules(vec![
                create(),
                update(
                    json!([{"id": "root", "component": "Text"}, {"id": "root", "component": "Text"}])
                )
            ]),
            vec!["A11"]
        );
        assert_eq!(
            rules(vec![
                create(),
                update(json!([{"id": "root", "component": "Text", "text": {"path": "/a/~2"}}]))
            ]),
            vec!["A12"]
        );
    }

    #[test]
    fn depth_and_binding_rules() {
        let mut chain: Vec<Value> = (0..60)
            .map(|i| json!({"id": format!("c{i}"), "component": "Card", "child": format!("c{}", i + 1)}))
            .collect();
        chain[0]["id"] = json!("root");
        chain.push(json!({"id": "c60", "component": "Text"}));
        assert_eq!(
            rules(vec![create(), update(Value::Array(chain))]),
            vec!["A14"]
        );
        let mut deep = json!(1);
        for _ in 0..60 {
            deep = json!({"n": deep});
        }
        assert_eq!(
            rules(vec![
                json!({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": deep}})
            ]),
            vec!["A14"]
        );
        let mut call = json!({"call": "f", "args": {}});
        for _ in 0..6 {
            call = json!({"call": "f", "args": {"v": call}});
        }
        assert_eq!(
            rules(vec![update(
                json!([{"id": "root", "component": "Text", "text": call}])
            )]),
            vec!["A15"]
        );
        let r = rules(vec![
            create(),
            update(json!([{"id": "root", "component": "Text", "text": {"path": "/missing"}}])),
            json!({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": {"name": "x"}}}),
        ]);
        assert_eq!(r, vec!["A13"]);
        let f = Validator::new().validate(&[create(), create()]);
        assert_eq!(f[0].violation.rule, "A16");
        assert_eq!(f[0].message, Some(1));
    }
}
