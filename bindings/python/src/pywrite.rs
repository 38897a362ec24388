//! Python objects to JSON bytes, as pydantic writes them: the JSON that
//! `ag_ui.encoder.EventEncoder` (`model_dump_json(by_alias=True)`) produces, without the
//! models' Python-level serializers.
//!
//! - dicts, lists, tuples, sets, strings, `bytes` (UTF-8), booleans, integers of any size,
//!   floats (pydantic's spelling: `1.0`, `1e+16`, `1e-7`; `null` for NaN and infinities),
//!   `None` and enums (their value);
//! - the SDK's own models (classes from `ag_ui.*`): declared fields in declaration order
//!   under their wire names, the optional ones without a value left out, then the extra
//!   members the model kept;
//! - a plain dict given where the protocol has a model is written in that model's member
//!   order ([`crate::layout`]), so that a dict event gives the bytes its model would.
//!
//! Anything else (other pydantic models, dataclasses, datetimes, ...) is
//! [`WriteError::Unsupported`]: the encoder then asks the model itself, or reports it.
//! Nesting deeper than [`MAX_DEPTH`] (or a container that holds itself) is an error, never
//! a stack overflow.

use crate::layout::{self, Field, Shape};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString,
    PyTuple, PyType,
};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// The deepest nesting of containers written (JSON parsers commonly stop at 128 to 512).
pub const MAX_DEPTH: usize = 256;

/// Why a value could not be written.
#[derive(Debug)]
pub enum WriteError {
    /// A value of a type with no JSON form here, at this path.
    Unsupported {
        /// Where (`$.value.when`).
        path: String,
        /// The value's type.
        type_name: String,
    },
    /// Something else, with the path it happened at.
    Invalid {
        /// Where.
        path: String,
        /// What.
        message: String,
    },
    /// A Python exception raised while reading the value.
    Py(PyErr),
}

impl WriteError {
    fn invalid(message: impl Into<String>) -> Self {
        WriteError::Invalid {
            path: String::new(),
            message: message.into(),
        }
    }

    /// Prefixes the path with `segment`.
    fn at(mut self, segment: &dyn std::fmt::Display) -> Self {
        match &mut self {
            WriteError::Unsupported { path, .. } | WriteError::Invalid { path, .. } => {
                *path = format!("{segment}{path}");
            }
            WriteError::Py(_) => {}
        }
        self
    }

    /// The message for people (`$.path: ...`).
    pub fn message(&self, py: Python<'_>) -> String {
        match self {
            WriteError::Unsupported { path, type_name } => format!(
                "$ {}: a value of type {type_name} has no JSON form (use dicts, lists, strings, numbers, booleans, None or ag_ui.core models)",
                if path.is_empty() { "" } else { path.as_str() }
            )
            .replacen("$ ", "$", 1),
            WriteError::Invalid { path, message } => format!("${path}: {message}"),
            WriteError::Py(e) => e.value(py).to_string(),
        }
    }
}

impl From<PyErr> for WriteError {
    fn from(e: PyErr) -> Self {
        WriteError::Py(e)
    }
}

type W = Result<(), WriteError>;

/// A path segment: `.name`.
struct Key<'a>(&'a str);
impl std::fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, ".{}", self.0)
    }
}

/// A path segment: `[i]`.
struct Index(usize);
impl std::fmt::Display for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}]", self.0)
    }
}

/// How a Python type outside the JSON builtins is written.
#[derive(Clone)]
enum Kind {
    /// A model of the official SDK.
    Model(Arc<ModelLayout>),
    /// An enum: its `value`.
    Enum,
    /// No JSON form.
    Unsupported,
}

/// The declared fields of an SDK model, in order.
struct ModelLayout {
    fields: Vec<ModelField>,
}

struct ModelField {
    /// The attribute name (`message_id`), to read `__dict__`.
    name: Py<PyString>,
    /// `"messageId":`.
    key: Vec<u8>,
    /// Left out when `None`.
    omit: bool,
}

thread_local! {
    /// Kinds by type object address (the type itself is kept alive with it).
    static KINDS: RefCell<HashMap<usize, (Py<PyType>, Kind)>> = RefCell::new(HashMap::new());
    /// Python strings of the layouts' wire names, by address.
    static NAMES: RefCell<HashMap<usize, Py<PyString>>> = RefCell::new(HashMap::new());
}

/// The Python string of a `&'static str` wire name (made once per thread).
fn name<'py>(py: Python<'py>, s: &'static str) -> Bound<'py, PyString> {
    NAMES.with(|n| {
        n.borrow_mut()
            .entry(s.as_ptr() as usize ^ (s.len() << 48))
            .or_insert_with(|| PyString::intern(py, s).unbind())
            .bind(py)
            .clone()
    })
}

fn kind_of(obj: &Bound<'_, PyAny>) -> PyResult<Kind> {
    let ty = obj.get_type();
    let id = ty.as_ptr() as usize;
    if let Some(k) = KINDS.with(|k| k.borrow().get(&id).map(|(_, k)| k.clone())) {
        return Ok(k);
    }
    let kind = classify(&ty)?;
    KINDS.with(|k| {
        k.borrow_mut().insert(id, (ty.unbind(), kind.clone()));
    });
    Ok(kind)
}

fn classify(ty: &Bound<'_, PyType>) -> PyResult<Kind> {
    let py = ty.py();
    let module: String = ty
        .getattr("__module__")
        .and_then(|m| m.extract())
        .unwrap_or_default();
    if ty.hasattr("model_fields")? && ty.hasattr("__pydantic_serializer__")? {
        // Only the SDK's models: their serialization is known (declared fields, optional
        // ones without a value left out, extras last). Any other model may serialize itself
        // differently.
        if module == "ag_ui" || module.starts_with("ag_ui.") {
            return Ok(Kind::Model(Arc::new(model_layout(ty)?)));
        }
        return Ok(Kind::Unsupported);
    }
    let enum_type = py.import("enum")?.getattr("Enum")?;
    if ty.is_subclass(&enum_type)? {
        return Ok(Kind::Enum);
    }
    Ok(Kind::Unsupported)
}

fn model_layout(ty: &Bound<'_, PyType>) -> PyResult<ModelLayout> {
    let py = ty.py();
    let omittable = match ty.getattr("_omittable_keys") {
        Ok(f) => Some(f.call0()?),
        Err(_) => None,
    };
    let fields_map = ty.getattr("model_fields")?;
    let fields_map = fields_map.cast::<PyDict>()?;
    let mut fields = Vec::with_capacity(fields_map.len());
    for (name, info) in fields_map.iter() {
        let name: Bound<'_, PyString> = name.cast_into()?;
        let mut wire = name.clone().into_any();
        for attr in ["serialization_alias", "alias"] {
            let a = info.getattr(attr)?;
            if !a.is_none() {
                wire = a;
                break;
            }
        }
        let omit = match &omittable {
            Some(keys) => keys.contains(&wire)? || keys.contains(&name)?,
            None => false,
        };
        let wire: Cow<'_, str> = wire.cast::<PyString>()?.to_cow()?;
        let mut key = Vec::with_capacity(wire.len() + 3);
        write_str(&mut key, &wire);
        key.push(b':');
        fields.push(ModelField {
            name: PyString::intern(py, &name.to_cow()?).unbind(),
            key,
            omit,
        });
    }
    Ok(ModelLayout { fields })
}

/// Whether `obj` is one of the official SDK's models.
pub fn is_sdk_model(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if is_builtin(obj) {
        return Ok(false);
    }
    Ok(matches!(kind_of(obj)?, Kind::Model(_)))
}

fn is_builtin(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyDict>()
        || obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyInt>()
        || obj.is_instance_of::<PyFloat>()
        || obj.is_none()
}

/// Writes Python objects as JSON.
pub struct Writer<'py> {
    py: Python<'py>,
    /// The bytes written so far.
    pub out: Vec<u8>,
    depth: usize,
}

impl<'py> Writer<'py> {
    /// A writer with an empty buffer.
    pub fn new(py: Python<'py>) -> Self {
        Writer {
            py,
            out: Vec::with_capacity(256),
            depth: 0,
        }
    }

    /// Writes one event: a dict in its model's member order when its `type` is one of the
    /// 31, an SDK model as the SDK writes it, anything else as it is.
    pub fn event(&mut self, obj: &Bound<'py, PyAny>) -> W {
        if let Ok(dict) = obj.cast::<PyDict>() {
            let ty = dict.get_item(name(self.py, "type"))?;
            if let Some(ty) = ty
                && let Ok(ty) = ty.cast::<PyString>()
                && let Some(fields) = layout::event(&ty.to_cow()?)
            {
                return self.obj(dict, fields);
            }
        }
        self.any(obj)
    }

    /// Writes `obj` with the layout of `shape` where it applies.
    pub fn shaped(&mut self, obj: &Bound<'py, PyAny>, shape: Shape) -> W {
        match shape {
            Shape::Any => self.any(obj),
            Shape::Obj(fields) => match obj.cast::<PyDict>() {
                Ok(d) => self.obj(d, fields),
                Err(_) => self.any(obj),
            },
            Shape::List(inner) => {
                if let Ok(list) = obj.cast::<PyList>() {
                    self.enter()?;
                    self.out.push(b'[');
                    for (i, item) in list.iter().enumerate() {
                        if i > 0 {
                            self.out.push(b',');
                        }
                        self.shaped(&item, *inner).map_err(|e| e.at(&Index(i)))?;
                    }
                    self.out.push(b']');
                    self.depth -= 1;
                    Ok(())
                } else {
                    self.any(obj)
                }
            }
            Shape::Tagged(tag, variants) => {
                if let Ok(d) = obj.cast::<PyDict>()
                    && let Some(t) = d.get_item(name(self.py, tag))?
                    && let Ok(t) = t.cast::<PyString>()
                {
                    let t = t.to_cow()?;
                    if let Some((_, fields)) = variants.iter().find(|(v, _)| *v == t) {
                        return self.obj(d, fields);
                    }
                }
                self.any(obj)
            }
        }
    }

    fn enter(&mut self) -> W {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth = 0;
            return Err(WriteError::invalid(format!(
                "nested deeper than {MAX_DEPTH} levels (or a container that contains itself)"
            )));
        }
        Ok(())
    }

    /// A dict with the members of `fields` in their order, then its other members.
    ///
    /// Members are looked up by their wire names; only a dict that turns out to hold a
    /// snake_case name of a member (`message_id`, which the SDK's models accept too) is
    /// written again, looking those up as well.
    fn obj(&mut self, d: &Bound<'py, PyDict>, fields: &'static [Field]) -> W {
        let start = self.out.len();
        if self.obj_pass(d, fields, false)? {
            return Ok(());
        }
        self.out.truncate(start);
        self.obj_pass(d, fields, true).map(drop)
    }

    /// One pass of [`obj`](Self::obj); `Ok(false)` when, looking up wire names only, a
    /// snake_case member name was found (written again with `snake_names`).
    fn obj_pass(
        &mut self,
        d: &Bound<'py, PyDict>,
        fields: &'static [Field],
        snake_names: bool,
    ) -> Result<bool, WriteError> {
        self.enter()?;
        let len = d.len();
        let mut matched = 0usize;
        self.out.push(b'{');
        let mut first = true;
        for f in fields {
            let mut value = d.get_item(name(self.py, f.alias))?;
            if value.is_none() && snake_names && f.alias.bytes().any(|b| b.is_ascii_uppercase()) {
                value = d.get_item(layout::snake(f.alias))?;
            }
            let Some(value) = value else {
                if let Some(json) = f.default {
                    self.sep(&mut first);
                    self.key(f.alias);
                    self.out.extend_from_slice(json.as_bytes());
                }
                continue;
            };
            matched += 1;
            if f.omit && value.is_none() {
                continue;
            }
            self.sep(&mut first);
            self.key(f.alias);
            self.shaped(&value, f.shape)
                .map_err(|e| e.at(&Key(f.alias)))?;
        }
        if matched < len {
            // Members the model does not declare: kept, in the order given.
            for (k, v) in d.iter() {
                let key = dict_key(&k)?;
                if fields.iter().any(|f| f.alias == key) {
                    continue;
                }
                if key.contains('_') && fields.iter().any(|f| layout::snake(f.alias) == key) {
                    if !snake_names {
                        self.depth -= 1;
                        return Ok(false);
                    }
                    continue;
                }
                self.sep(&mut first);
                write_str(&mut self.out, &key);
                self.out.push(b':');
                self.any(&v).map_err(|e| e.at(&Key(&key)))?;
            }
        }
        self.out.push(b'}');
        self.depth -= 1;
        Ok(true)
    }

    #[inline]
    fn sep(&mut self, first: &mut bool) {
        if !*first {
            self.out.push(b',');
        }
        *first = false;
    }

    #[inline]
    fn key(&mut self, alias: &str) {
        self.out.push(b'"');
        self.out.extend_from_slice(alias.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    /// Any value, by its runtime type.
    pub fn any(&mut self, obj: &Bound<'py, PyAny>) -> W {
        if let Ok(s) = obj.cast::<PyString>() {
            let s = s.to_cow().map_err(|e| WriteError::invalid(e.to_string()))?;
            write_str(&mut self.out, &s);
            return Ok(());
        }
        if let Ok(d) = obj.cast::<PyDict>() {
            self.enter()?;
            self.out.push(b'{');
            let mut first = true;
            for (k, v) in d.iter() {
                let key = dict_key(&k)?;
                self.sep(&mut first);
                write_str(&mut self.out, &key);
                self.out.push(b':');
                self.any(&v).map_err(|e| e.at(&Key(&key)))?;
            }
            self.out.push(b'}');
            self.depth -= 1;
            return Ok(());
        }
        if obj.is_none() {
            self.out.extend_from_slice(b"null");
            return Ok(());
        }
        if let Ok(b) = obj.cast::<PyBool>() {
            self.out
                .extend_from_slice(if b.is_true() { b"true" } else { b"false" });
            return Ok(());
        }
        if obj.is_instance_of::<PyInt>() {
            return self.int(obj);
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            write_float(&mut self.out, f.value());
            return Ok(());
        }
        if let Ok(list) = obj.cast::<PyList>() {
            return self.seq(list.iter());
        }
        if let Ok(t) = obj.cast::<PyTuple>() {
            return self.seq(t.iter());
        }
        if let Ok(b) = obj.cast::<PyBytes>() {
            let s = std::str::from_utf8(b.as_bytes())
                .map_err(|_| WriteError::invalid("bytes that are not UTF-8"))?;
            write_str(&mut self.out, s);
            return Ok(());
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            let bytes = b.to_vec();
            let s = std::str::from_utf8(&bytes)
                .map_err(|_| WriteError::invalid("bytes that are not UTF-8"))?;
            write_str(&mut self.out, s);
            return Ok(());
        }
        if obj.is_instance_of::<PySet>() || obj.is_instance_of::<PyFrozenSet>() {
            let items: Vec<Bound<'py, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
            return self.seq(items.into_iter());
        }
        match kind_of(obj)? {
            Kind::Model(layout) => self.model(obj, &layout),
            Kind::Enum => {
                self.enter()?;
                let r = self.any(&obj.getattr("value")?);
                self.depth -= 1;
                r
            }
            Kind::Unsupported => Err(WriteError::Unsupported {
                path: String::new(),
                type_name: obj
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "?".into()),
            }),
        }
    }

    fn seq(&mut self, items: impl Iterator<Item = Bound<'py, PyAny>>) -> W {
        self.enter()?;
        self.out.push(b'[');
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.any(&item).map_err(|e| e.at(&Index(i)))?;
        }
        self.out.push(b']');
        self.depth -= 1;
        Ok(())
    }

    fn int(&mut self, obj: &Bound<'py, PyAny>) -> W {
        if let Ok(v) = obj.extract::<i64>() {
            self.out
                .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        } else if let Ok(v) = obj.extract::<u64>() {
            self.out
                .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        } else {
            // Beyond 64 bits: the digits of the exact integer (an int subclass's own
            // `__str__` may say something else).
            let exact = self.py.get_type::<PyInt>().call1((obj,))?;
            let digits = exact.str()?;
            self.out.extend_from_slice(digits.to_cow()?.as_bytes());
        }
        Ok(())
    }

    /// An SDK model: its declared fields (optional ones without a value left out), then the
    /// extra members it kept.
    fn model(&mut self, obj: &Bound<'py, PyAny>, layout: &ModelLayout) -> W {
        self.enter()?;
        let values = obj.getattr("__dict__")?;
        let values = values
            .cast::<PyDict>()
            .map_err(|_| WriteError::invalid("a model without a __dict__"))?;
        self.out.push(b'{');
        let mut first = true;
        for f in &layout.fields {
            let value = match values.get_item(f.name.bind(self.py))? {
                Some(v) => v,
                None => self.py.None().into_bound(self.py),
            };
            if f.omit && value.is_none() {
                continue;
            }
            self.sep(&mut first);
            self.out.extend_from_slice(&f.key);
            self.any(&value).map_err(|e| {
                let key = String::from_utf8_lossy(&f.key[1..f.key.len() - 2]).into_owned();
                e.at(&Key(&key))
            })?;
        }
        let extra = obj.getattr("__pydantic_extra__")?;
        if let Ok(extra) = extra.cast::<PyDict>() {
            for (k, v) in extra.iter() {
                let key = dict_key(&k)?;
                self.sep(&mut first);
                write_str(&mut self.out, &key);
                self.out.push(b':');
                self.any(&v).map_err(|e| e.at(&Key(&key)))?;
            }
        }
        self.out.push(b'}');
        self.depth -= 1;
        Ok(())
    }
}

/// A dict key as JSON has it: strings as they are, integers as their digits (pydantic's
/// choice); other keys are refused.
fn dict_key(k: &Bound<'_, PyAny>) -> Result<String, WriteError> {
    if let Ok(s) = k.cast::<PyString>() {
        return Ok(s
            .to_cow()
            .map_err(|e| WriteError::invalid(e.to_string()))?
            .into_owned());
    }
    if k.is_instance_of::<PyInt>() && !k.is_instance_of::<PyBool>() {
        let exact = k.py().get_type::<PyInt>().call1((k,))?;
        return Ok(exact.str()?.to_cow()?.into_owned());
    }
    Err(WriteError::invalid(format!(
        "a dict key of type {} (JSON object keys are strings)",
        k.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    )))
}

/// Writes `s` as a JSON string: `"` and `\` escaped, control characters as `\n`-style
/// escapes or `\u00xx`, everything else as UTF-8 (what serde_json and pydantic write).
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xf) as usize]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Writes a float as pydantic does: the shortest digits that read back as the same double
/// (`1.0`, `0.1`, `1e+16`, `1.5e-7`), and `null` for NaN and the infinities.
pub fn write_float(out: &mut Vec<u8>, f: f64) {
    if !f.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    let mut buf = ryu::Buffer::new();
    let s = buf.format_finite(f).as_bytes();
    match s.iter().position(|&b| b == b'e') {
        Some(e) if s.get(e + 1) != Some(&b'-') => {
            out.extend_from_slice(&s[..=e]);
            out.push(b'+');
            out.extend_from_slice(&s[e + 1..]);
        }
        _ => out.extend_from_slice(s),
    }
}

/// A `TypeError` for a value that is not an event at all.
pub fn not_an_event(obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!(
        "expected an event (a dict, an ag_ui.core event model or JSON bytes), got {}",
        obj.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    ))
}
