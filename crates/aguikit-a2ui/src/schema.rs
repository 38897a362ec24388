//! The subset of JSON Schema (2020-12) that A2UI catalogs use, evaluated over untrusted
//! instances: `type`, `const`, `enum`, `properties`, `required`, `additionalProperties`,
//! `unevaluatedProperties`, `items`, `minItems`/`maxItems`, `minProperties`/`maxProperties`,
//! `minimum`/`maximum` (and exclusive), `minLength`/`maxLength`, `pattern`, `allOf`, `anyOf`,
//! `oneOf` (with the OpenAPI `discriminator` as a shortcut), `not`, `if`/`then`/`else` and
//! `$ref` across documents (by `$id`, or by file name as the spec's relative references use
//! it). `format`, `default`, `title` and `description` are annotations and are not checked.
//!
//! Error messages follow the wording of the reference validator (`'x' is a required
//! property`, `123 is not of type 'string'`), so that the A2UI conformance suites' expected
//! errors match. Evaluation is bounded: a nesting limit and a work budget turn a hostile
//! schema or instance into an error, never a stack overflow or a hang.

use serde_json::{Map, Value};
use std::cell::Cell;
use std::collections::HashMap;

/// How deep `$ref`s and subschemas may nest while evaluating one instance.
pub const MAX_EVAL_DEPTH: usize = 256;
/// How many subschema evaluations one call may make.
pub const EVAL_BUDGET: usize = 2_000_000;

/// What kind of constraint failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `type`.
    Type,
    /// `required`.
    Required,
    /// `const`.
    Const,
    /// `enum`.
    Enum,
    /// `additionalProperties: false` (or its schema).
    Additional,
    /// `unevaluatedProperties: false` (or its schema).
    Unevaluated,
    /// No branch of `anyOf`/`oneOf` matched.
    NoneMatched,
    /// Several branches of `oneOf` matched.
    SeveralMatched,
    /// A `discriminator` value names no branch.
    UnknownDiscriminator,
    /// `not`, or the `false` schema.
    Not,
    /// `pattern`.
    Pattern,
    /// `minimum`, `maximum` and their exclusive forms.
    Range,
    /// `minItems`, `maxItems`, `minProperties`, `maxProperties`, `minLength`, `maxLength`.
    Size,
    /// The schema itself is unusable (an unresolvable `$ref`, a bad pattern) or evaluation
    /// hit a limit.
    Schema,
}

/// One failed constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// What kind of constraint.
    pub kind: ErrorKind,
    /// A JSON Pointer to the failing value inside the instance.
    pub path: String,
    /// The reference validator's wording.
    pub message: String,
}

/// A set of schema documents that refer to each other.
#[derive(Debug, Clone, Default)]
pub struct SchemaSet {
    docs: Vec<Value>,
    names: HashMap<String, usize>,
}

/// A document of a [`SchemaSet`].
pub type DocId = usize;

impl SchemaSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a document, known by its `$id` and by the last segment of that `$id` (the file
    /// name the spec's relative references use), and by `name` when given.
    pub fn add(&mut self, name: Option<&str>, doc: Value) -> DocId {
        let id = self.docs.len();
        if let Some(full) = doc.get("$id").and_then(Value::as_str) {
            self.names.insert(full.to_string(), id);
            if let Some(last) = full.rsplit('/').next() {
                self.names.entry(last.to_string()).or_insert(id);
            }
        }
        if let Some(n) = name {
            self.names.insert(n.to_string(), id);
        }
        self.docs.push(doc);
        id
    }

    /// The document.
    pub fn doc(&self, id: DocId) -> &Value {
        self.docs.get(id).unwrap_or(&Value::Null)
    }

    /// Resolves a `$ref` written in document `base`.
    pub fn resolve(&self, base: DocId, reference: &str) -> Option<(DocId, &Value)> {
        let (uri, fragment) = match reference.split_once('#') {
            Some((u, f)) => (u, f),
            None => (reference, ""),
        };
        let doc = if uri.is_empty() {
            base
        } else {
            match self.names.get(uri) {
                Some(d) => *d,
                None => *self.names.get(uri.rsplit('/').next().unwrap_or(uri))?,
            }
        };
        let tokens = crate::pointer::parse(fragment).ok()?;
        Some((doc, crate::pointer::get(self.docs.get(doc)?, &tokens)?))
    }

    /// Validates `instance` against `schema` (a value inside document `doc`). Empty when it
    /// is valid.
    pub fn validate(&self, doc: DocId, schema: &Value, instance: &Value) -> Vec<SchemaError> {
        let ctx = Ctx {
            set: self,
            budget: Cell::new(EVAL_BUDGET),
        };
        ctx.eval(doc, schema, instance, "", 0).errors
    }
}

/// A value as the reference validator prints it: strings in single quotes, `True`, `None`,
/// objects and arrays as compact JSON (cut at 80 characters).
pub fn repr(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{}'", s.replace('\'', "\\'")),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        Value::Number(n) => n.to_string(),
        other => {
            let s = other.to_string();
            if s.chars().count() > 80 {
                let cut: String = s.chars().take(77).collect();
                format!("{cut}...")
            } else {
                s
            }
        }
    }
}

#[derive(Default)]
struct Out {
    errors: Vec<SchemaError>,
    evaluated: Vec<String>,
}

impl Out {
    fn fail(&mut self, kind: ErrorKind, path: &str, message: String) {
        self.errors.push(SchemaError {
            kind,
            path: path.to_string(),
            message,
        });
    }
}

struct Ctx<'a> {
    set: &'a SchemaSet,
    budget: Cell<usize>,
}

fn type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p == q,
            _ => x == y,
        },
        _ => a == b,
    }
}

fn child(path: &str, key: &str) -> String {
    format!("{path}/{}", crate::pointer::escape(key))
}

impl Ctx<'_> {
    fn spend(&self) -> bool {
        let b = self.budget.get();
        if b == 0 {
            return false;
        }
        self.budget.set(b - 1);
        true
    }

    /// Follows `$ref` chains and `allOf` members to find a `const` the schema requires of
    /// property `prop`: a quick way to rule out a branch (and the discriminator's lookup).
    fn const_of<'s>(
        &'s self,
        doc: usize,
        schema: &'s Value,
        prop: &str,
        depth: usize,
    ) -> Option<&'s Value> {
        if depth > 16 {
            return None;
        }
        let obj = schema.as_object()?;
        if let Some(c) = obj
            .get("properties")
            .and_then(|p| p.get(prop))
            .and_then(|p| p.get("const"))
        {
            return Some(c);
        }
        if let Some(r) = obj.get("$ref").and_then(Value::as_str)
            && let Some((d, s)) = self.set.resolve(doc, r)
            && let Some(c) = self.const_of(d, s, prop, depth + 1)
        {
            return Some(c);
        }
        if let Some(all) = obj.get("allOf").and_then(Value::as_array) {
            for s in all {
                if let Some(c) = self.const_of(doc, s, prop, depth + 1) {
                    return Some(c);
                }
            }
        }
        None
    }

    /// Whether a branch is ruled out at once: it requires a `const` for a property whose
    /// value in the instance differs.
    fn ruled_out(&self, doc: usize, branch: &Value, inst: &Value) -> bool {
        let Some(obj) = inst.as_object() else {
            return false;
        };
        for key in ["call", "component"] {
            if let Some(v) = obj.get(key)
                && let Some(c) = self.const_of(doc, branch, key, 0)
                && !json_eq(c, v)
            {
                return true;
            }
        }
        false
    }

    fn eval(&self, doc: usize, schema: &Value, inst: &Value, path: &str, depth: usize) -> Out {
        let mut out = Out::default();
        if depth > MAX_EVAL_DEPTH || !self.spend() {
            out.fail(
                ErrorKind::Schema,
                path,
                "validation exceeded its nesting or work limit".into(),
            );
            return out;
        }
        let s = match schema {
            Value::Bool(true) => return out,
            Value::Bool(false) => {
                out.fail(
                    ErrorKind::Not,
                    path,
                    format!("False schema does not allow {}", repr(inst)),
                );
                return out;
            }
            Value::Object(s) => s,
            _ => return out,
        };
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            match self.set.resolve(doc, r) {
                Some((d, target)) => {
                    let o = self.eval(d, target, inst, path, depth + 1);
                    out.errors.extend(o.errors);
                    out.evaluated.extend(o.evaluated);
                }
                None => out.fail(
                    ErrorKind::Schema,
                    path,
                    format!("unresolvable schema reference {r:?}"),
                ),
            }
        }
        if let Some(t) = s.get("type") {
            let ok = match t {
                Value::String(ty) => type_matches(ty, inst),
                Value::Array(tys) => tys
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|ty| type_matches(ty, inst)),
                _ => true,
            };
            if !ok {
                let want = match t {
                    Value::String(ty) => format!("'{ty}'"),
                    other => other.to_string(),
                };
                out.fail(
                    ErrorKind::Type,
                    path,
                    format!("{} is not of type {want}", repr(inst)),
                );
                // The other keywords would only repeat the mismatch.
                return out;
            }
        }
        if let Some(c) = s.get("const")
            && !json_eq(c, inst)
        {
            out.fail(ErrorKind::Const, path, format!("{} was expected", repr(c)));
        }
        if let Some(Value::Array(options)) = s.get("enum")
            && !options.iter().any(|o| json_eq(o, inst))
        {
            let list: Vec<String> = options.iter().map(repr).collect();
            out.fail(
                ErrorKind::Enum,
                path,
                format!("{} is not one of [{}]", repr(inst), list.join(", ")),
            );
        }
        match inst {
            Value::Object(m) => self.eval_object(doc, s, m, path, depth, &mut out),
            Value::Array(a) => self.eval_array(doc, s, a, path, depth, &mut out),
            Value::String(st) => self.eval_string(s, st, path, &mut out),
            Value::Number(n) => {
                if let Some(x) = n.as_f64() {
                    self.eval_number(s, x, inst, path, &mut out);
                }
            }
            _ => {}
        }
        if let Some(Value::Array(all)) = s.get("allOf") {
            for sub in all {
                let o = self.eval(doc, sub, inst, path, depth + 1);
                out.errors.extend(o.errors);
                out.evaluated.extend(o.evaluated);
            }
        }
        if let Some(Value::Array(any)) = s.get("anyOf") {
            self.eval_branches(doc, s, any, inst, path, depth, false, &mut out);
        }
        if let Some(Value::Array(one)) = s.get("oneOf") {
            self.eval_branches(doc, s, one, inst, path, depth, true, &mut out);
        }
        if let Some(not) = s.get("not") {
            let o = self.eval(doc, not, inst, path, depth + 1);
            if o.errors.is_empty() {
                out.fail(
                    ErrorKind::Not,
                    path,
                    format!("{} should not be valid under {not}", repr(inst)),
                );
            }
        }
        if let Some(cond) = s.get("if") {
            let o = self.eval(doc, cond, inst, path, depth + 1);
            let branch = if o.errors.is_empty() {
                out.evaluated.extend(o.evaluated);
                s.get("then")
            } else {
                s.get("else")
            };
            if let Some(b) = branch {
                let o = self.eval(doc, b, inst, path, depth + 1);
                out.errors.extend(o.errors);
                out.evaluated.extend(o.evaluated);
            }
        }
        if let (Some(u), Value::Object(m)) = (s.get("unevaluatedProperties"), inst) {
            for (k, v) in m {
                if out.evaluated.iter().any(|e| e == k) {
                    continue;
                }
                match u {
                    Value::Bool(false) => out.fail(
                        ErrorKind::Unevaluated,
                        &child(path, k),
                        format!("Unevaluated properties are not allowed ('{k}' was unexpected)"),
                    ),
                    Value::Object(_) => {
                        let o = self.eval(doc, u, v, &child(path, k), depth + 1);
                        out.errors.extend(o.errors);
                    }
                    _ => {}
                }
            }
            out.evaluated.extend(m.keys().cloned());
        }
        out
    }

    fn eval_object(
        &self,
        doc: usize,
        s: &Map<String, Value>,
        m: &Map<String, Value>,
        path: &str,
        depth: usize,
        out: &mut Out,
    ) {
        let props = s.get("properties").and_then(Value::as_object);
        if let Some(props) = props {
            for (k, sub) in props {
                if let Some(v) = m.get(k) {
                    let o = self.eval(doc, sub, v, &child(path, k), depth + 1);
                    out.errors.extend(o.errors);
                    out.evaluated.push(k.clone());
                }
            }
        }
        if let Some(Value::Array(req)) = s.get("required") {
            for r in req.iter().filter_map(Value::as_str) {
                if !m.contains_key(r) {
                    out.fail(
                        ErrorKind::Required,
                        path,
                        format!("'{r}' is a required property"),
                    );
                }
            }
        }
        if let Some(a) = s.get("additionalProperties") {
            for (k, v) in m {
                if props.is_some_and(|p| p.contains_key(k)) {
                    continue;
                }
                match a {
                    Value::Bool(false) => out.fail(
                        ErrorKind::Additional,
                        &child(path, k),
                        format!("Additional properties are not allowed ('{k}' was unexpected)"),
                    ),
                    Value::Object(_) => {
                        let o = self.eval(doc, a, v, &child(path, k), depth + 1);
                        out.errors.extend(o.errors);
                    }
                    _ => {}
                }
                out.evaluated.push(k.clone());
            }
        }
        let n = m.len() as u64;
        if let Some(min) = s.get("minProperties").and_then(Value::as_u64)
            && n < min
        {
            out.fail(
                ErrorKind::Size,
                path,
                format!("the object has {n} properties, fewer than {min}"),
            );
        }
        if let Some(max) = s.get("maxProperties").and_then(Value::as_u64)
            && n > max
        {
            out.fail(
                ErrorKind::Size,
                path,
                format!("the object has {n} properties, more than {max}"),
            );
        }
    }

    fn eval_array(
        &self,
        doc: usize,
        s: &Map<String, Value>,
        a: &[Value],
        path: &str,
        depth: usize,
        out: &mut Out,
    ) {
        if let Some(items) = s.get("items")
            && (items.is_object() || items.is_boolean())
        {
            for (i, v) in a.iter().enumerate() {
                let o = self.eval(doc, items, v, &format!("{path}/{i}"), depth + 1);
                out.errors.extend(o.errors);
            }
        }
        let n = a.len() as u64;
        if let Some(min) = s.get("minItems").and_then(Value::as_u64)
            && n < min
        {
            let msg = if n == 0 {
                "[] should be non-empty".to_string()
            } else {
                format!("the array has {n} items, fewer than {min}")
            };
            out.fail(ErrorKind::Size, path, msg);
        }
        if let Some(max) = s.get("maxItems").and_then(Value::as_u64)
            && n > max
        {
            out.fail(
                ErrorKind::Size,
                path,
                format!("the array has {n} items, more than {max}"),
            );
        }
    }

    fn eval_string(&self, s: &Map<String, Value>, st: &str, path: &str, out: &mut Out) {
        let n = st.chars().count() as u64;
        if let Some(min) = s.get("minLength").and_then(Value::as_u64)
            && n < min
        {
            out.fail(
                ErrorKind::Size,
                path,
                format!("'{st}' is shorter than {min}"),
            );
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
            && n > max
        {
            out.fail(
                ErrorKind::Size,
                path,
                format!("'{st}' is longer than {max}"),
            );
        }
        if let Some(p) = s.get("pattern").and_then(Value::as_str) {
            match regex::RegexBuilder::new(p).size_limit(1 << 20).build() {
                Ok(re) => {
                    if !re.is_match(st) {
                        out.fail(
                            ErrorKind::Pattern,
                            path,
                            format!("'{st}' does not match '{p}'"),
                        );
                    }
                }
                Err(_) => out.fail(
                    ErrorKind::Schema,
                    path,
                    format!("the schema's pattern {p:?} is not a valid regular expression"),
                ),
            }
        }
    }

    fn eval_number(&self, s: &Map<String, Value>, x: f64, inst: &Value, path: &str, out: &mut Out) {
        type Check = (&'static str, fn(f64, f64) -> bool, &'static str);
        let checks: [Check; 4] = [
            ("minimum", |x, b| x >= b, "is less than the minimum of"),
            ("maximum", |x, b| x <= b, "is greater than the maximum of"),
            (
                "exclusiveMinimum",
                |x, b| x > b,
                "is less than or equal to the minimum of",
            ),
            (
                "exclusiveMaximum",
                |x, b| x < b,
                "is greater than or equal to the maximum of",
            ),
        ];
        for (key, ok, words) in checks {
            if let Some(b) = s.get(key).and_then(Value::as_f64)
                && !ok(x, b)
            {
                out.fail(
                    ErrorKind::Range,
                    path,
                    format!("{} {words} {b}", repr(inst)),
                );
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_branches(
        &self,
        doc: usize,
        s: &Map<String, Value>,
        branches: &[Value],
        inst: &Value,
        path: &str,
        depth: usize,
        exactly_one: bool,
        out: &mut Out,
    ) {
        // The discriminator names the branch outright.
        if let Some(prop) = s
            .get("discriminator")
            .and_then(|d| d.get("propertyName"))
            .and_then(Value::as_str)
            && let Some(tag) = inst.get(prop)
        {
            let chosen = branches.iter().find(|b| {
                self.const_of(doc, b, prop, 0)
                    .is_some_and(|c| json_eq(c, tag))
            });
            match chosen {
                Some(b) => {
                    let o = self.eval(doc, b, inst, path, depth + 1);
                    out.errors.extend(o.errors);
                    out.evaluated.extend(o.evaluated);
                }
                None => out.fail(
                    ErrorKind::UnknownDiscriminator,
                    &child(path, prop),
                    format!("{} is not a known '{prop}'", repr(tag)),
                ),
            }
            return;
        }
        let mut passed = 0;
        let mut failures: Vec<Vec<SchemaError>> = Vec::new();
        for b in branches {
            if self.ruled_out(doc, b, inst) {
                continue;
            }
            let o = self.eval(doc, b, inst, path, depth + 1);
            if o.errors.is_empty() {
                passed += 1;
                out.evaluated.extend(o.evaluated);
                if !exactly_one {
                    return;
                }
            } else {
                failures.push(o.errors);
            }
        }
        if passed == 1 || (passed > 1 && !exactly_one) {
            return;
        }
        if passed > 1 {
            out.fail(
                ErrorKind::SeveralMatched,
                path,
                format!(
                    "{} is valid under each of several given schemas",
                    repr(inst)
                ),
            );
            return;
        }
        // None matched: report the one branch the value was evidently meant for (its
        // failures lie deeper than the value itself), else the value as a whole.
        let deeper: Vec<&Vec<SchemaError>> = failures
            .iter()
            .filter(|errs| {
                errs.iter().all(|e| {
                    e.path.len() > path.len()
                        || !matches!(
                            e.kind,
                            ErrorKind::Type | ErrorKind::Const | ErrorKind::UnknownDiscriminator
                        )
                })
            })
            .collect();
        let best = match deeper.as_slice() {
            [one] => Some(*one),
            [] => None,
            many => {
                let depth_of =
                    |errs: &Vec<SchemaError>| errs.iter().map(|e| e.path.len()).min().unwrap_or(0);
                let top = many.iter().map(|e| depth_of(e)).max().unwrap_or(0);
                let at_top: Vec<_> = many.iter().filter(|e| depth_of(e) == top).collect();
                if at_top.len() == 1 {
                    Some(*at_top[0])
                } else {
                    None
                }
            }
        };
        match best {
            Some(errs) => out.errors.extend(errs.iter().cloned()),
            None => out.fail(
                ErrorKind::NoneMatched,
                path,
                format!("{} is not valid under any of the given schemas", repr(inst)),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, inst: Value) -> Vec<SchemaError> {
        let mut set = SchemaSet::new();
        let d = set.add(None, schema.clone());
        set.validate(d, &schema, &inst)
    }

    #[test]
    fn basic_keywords() {
        assert!(check(json!({"type": "string"}), json!("x")).is_empty());
        assert_eq!(
            check(json!({"type": "string"}), json!(123))[0].message,
            "123 is not of type 'string'"
        );
        let e = check(
            json!({"type": "object", "properties": {"a": {"enum": ["x", "y"]}}, "required": ["b"], "additionalProperties": false}),
            json!({"a": "z", "c": 1}),
        );
        let kinds: Vec<ErrorKind> = e.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            vec![ErrorKind::Enum, ErrorKind::Required, ErrorKind::Additional]
        );
        assert_eq!(e[2].path, "/c");
        assert!(check(json!({"pattern": "^#[0-9a-f]{6}$"}), json!("#00ff00")).is_empty());
        assert_eq!(
            check(json!({"pattern": "^#[0-9a-f]{6}$"}), json!("red"))[0].kind,
            ErrorKind::Pattern
        );
        assert_eq!(
            check(json!({"minimum": 0}), json!(-1))[0].kind,
            ErrorKind::Range
        );
        assert_eq!(check(json!({"type": "integer"}), json!(1.5)).len(), 1);
        assert!(check(json!({"type": "integer"}), json!(2.0)).is_empty());
        assert_eq!(
            check(json!({"minItems": 1}), json!([]))[0].message,
            "[] should be non-empty"
        );
        assert!(check(json!({"if": {"const": 1}, "then": false}), json!(2)).is_empty());
        assert_eq!(
            check(json!({"if": {"const": 1}, "then": false}), json!(1)).len(),
            1
        );
        assert_eq!(
            check(json!({"not": {"const": 1}}), json!(1))[0].kind,
            ErrorKind::Not
        );
    }

    #[test]
    fn unevaluated_properties_see_through_all_of_and_refs() {
        let schema = json!({
            "$defs": {"common": {"properties": {"id": {"type": "string"}}}},
            "allOf": [{"$ref": "#/$defs/common"}, {"properties": {"text": {}}}],
            "unevaluatedProperties": false
        });
        assert!(check(schema.clone(), json!({"id": "a", "text": 1})).is_empty());
        let e = check(schema, json!({"id": "a", "txt": 1}));
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].kind, ErrorKind::Unevaluated);
        assert_eq!(e[0].path, "/txt");
    }

    #[test]
    fn one_of_reports_the_meant_branch() {
        let schema = json!({"oneOf": [
            {"type": "string"},
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"], "additionalProperties": false}
        ]});
        assert!(check(schema.clone(), json!({"path": "/a"})).is_empty());
        let e = check(schema.clone(), json!({"path": 5}));
        assert_eq!(e[0].message, "5 is not of type 'string'");
        assert_eq!(e[0].path, "/path");
        let e = check(schema, json!(5));
        assert_eq!(e[0].kind, ErrorKind::NoneMatched);
        assert_eq!(
            check(
                json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
                json!(1)
            )[0]
            .kind,
            ErrorKind::SeveralMatched
        );
    }

    #[test]
    fn refs_across_documents_and_limits() {
        let mut set = SchemaSet::new();
        set.add(
            None,
            json!({"$id": "https://x/common_types.json", "$defs": {"Id": {"type": "string"}}}),
        );
        let cat = json!({"$id": "https://x/catalog.json", "properties": {"a": {"$ref": "common_types.json#/$defs/Id"}, "b": {"$ref": "https://x/common_types.json#/$defs/Id"}, "c": {"$ref": "nowhere.json#/x"}}});
        let d = set.add(None, cat.clone());
        let e = set.validate(d, &cat, &json!({"a": 1, "b": "x", "c": 1}));
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].kind, ErrorKind::Type);
        assert_eq!(e[1].kind, ErrorKind::Schema);
        // A self-referencing schema ends in an error, not a stack overflow.
        let looping = json!({"$ref": "#"});
        let mut set = SchemaSet::new();
        let d = set.add(None, looping.clone());
        assert_eq!(
            set.validate(d, &looping, &json!(1))[0].kind,
            ErrorKind::Schema
        );
    }

    #[test]
    fn repr_matches_the_reference_wording() {
        assert_eq!(repr(&json!("a")), "'a'");
        assert_eq!(repr(&json!(true)), "True");
        assert_eq!(repr(&json!(null)), "None");
        assert!(repr(&json!({"k": "x".repeat(200)})).ends_with("..."));
    }
}
