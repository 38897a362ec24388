//! Rust values to Python objects, through serde: an [`Event`](aguikit_core::Event), a message
//! or any `serde_json::Value` becomes the dicts, lists, strings, numbers, booleans and `None`
//! that `json.loads` would give for its JSON, without writing or parsing any JSON.
//!
//! Struct field names (`type`, `messageId`, `delta`, ...) are `&'static str`s: each becomes a
//! Python string once per thread and is reused (the field cache, looked up by the name's
//! address), so a dict costs its values only. Each field also remembers the last short
//! string it held: a stream repeats its event type and message id from one event to the
//! next, and a repeat is the same Python string again (strings are immutable: only `is`
//! can tell). Integers beyond 64 bits cannot occur (serde_json reads them as floats).

use aguikit_core::EventType;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::type_object::PyTypeCheck;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde::ser::{self, Serialize};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The longest string value a field remembers (ids and type names are shorter).
const MAX_REMEMBERED: usize = 64;

/// One struct field name's Python string, and the last short string value it held.
struct Field {
    name: Py<PyString>,
    last_text: String,
    last: Option<Py<PyString>>,
}

/// A hasher for the address and length of a `&'static str` (a pair of integers: no need
/// for SipHash's defence against chosen keys).
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// The Python strings kept between conversions (see the module docs).
#[derive(Default)]
struct Cache {
    /// Field number by the address and length of the field name.
    index: HashMap<(usize, usize), usize, BuildHasherDefault<AddrHasher>>,
    fields: Vec<Field>,
}

impl Cache {
    /// The number of the field `key`, added on first sight.
    fn field(&mut self, py: Python<'_>, key: &'static str) -> usize {
        let fields = &mut self.fields;
        *self
            .index
            .entry((key.as_ptr() as usize, key.len()))
            .or_insert_with(|| {
                fields.push(Field {
                    name: PyString::intern(py, key).unbind(),
                    last_text: String::new(),
                    last: None,
                });
                fields.len() - 1
            })
    }
}

thread_local! {
    /// This thread's cache, taken out for the length of a conversion (a conversion that
    /// starts inside another, from a finalizer run by the garbage collector, starts with
    /// an empty one).
    static CACHE: Cell<Cache> = Cell::new(Cache::default());
}

/// Converts values into Python objects with this thread's cache (see the module docs);
/// made by [`with_converter`].
pub struct Converter<'a, 'py> {
    ser: Ser<'a, 'py>,
    /// The fields of the content events ([`Converter::content`]), once looked up.
    content_fields: Cell<Option<ContentFields>>,
}

/// The field numbers of `type`, `messageId`, `toolCallId` and `delta`.
#[derive(Clone, Copy)]
struct ContentFields {
    kind: usize,
    message_id: usize,
    tool_call_id: usize,
    delta: usize,
}

/// Runs `f` with a converter holding this thread's cache.
pub fn with_converter<'py, R>(py: Python<'py>, f: impl FnOnce(&Converter<'_, 'py>) -> R) -> R {
    let cache = RefCell::new(CACHE.try_with(Cell::take).unwrap_or_default());
    let result = f(&Converter {
        ser: Ser {
            py,
            cache: &cache,
            field: None,
        },
        content_fields: Cell::new(None),
    });
    // At thread exit there is nowhere to keep it: it is dropped.
    let _ = CACHE.try_with(|c| c.set(cache.into_inner()));
    result
}

impl<'py> Converter<'_, 'py> {
    /// `value` as Python objects.
    pub fn value<T: Serialize + ?Sized>(&self, value: &T) -> PyResult<Bound<'py, PyAny>> {
        value.serialize(self.ser).map_err(|e| e.0)
    }

    /// The dict of a content event from its parts ([`Event::content_parts`]): exactly what
    /// [`Converter::value`] gives for the event, without building it.
    ///
    /// [`Event::content_parts`]: aguikit_core::Event::content_parts
    pub fn content(
        &self,
        event_type: EventType,
        id: &str,
        delta: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let f = match self.content_fields.get() {
            Some(f) => f,
            None => {
                let f = ContentFields {
                    kind: self.ser.field(TYPE),
                    message_id: self.ser.field(MESSAGE_ID),
                    tool_call_id: self.ser.field(TOOL_CALL_ID),
                    delta: self.ser.field(DELTA),
                };
                self.content_fields.set(Some(f));
                f
            }
        };
        let id_field = match event_type {
            EventType::ToolCallArgs => f.tool_call_id,
            _ => f.message_id,
        };
        let dict = PyDict::new(self.ser.py);
        let kind = self.ser.string(Some(f.kind), event_type.as_str());
        self.ser.set_field(&dict, f.kind, kind)?;
        let id = self.ser.string(Some(id_field), id);
        self.ser.set_field(&dict, id_field, id)?;
        let delta = self.ser.string(Some(f.delta), delta);
        self.ser.set_field(&dict, f.delta, delta)?;
        Ok(dict.into_any())
    }
}

/// The wire names of the content events' members (see [`Converter::content`]).
const TYPE: &str = "type";
const MESSAGE_ID: &str = "messageId";
const TOOL_CALL_ID: &str = "toolCallId";
const DELTA: &str = "delta";

/// Converts `value` into Python objects.
pub fn to_py<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    with_converter(py, |c| c.value(value))
}

/// Converts each of `values` into Python objects: a list.
pub fn list_to_py<'py, T: Serialize>(
    py: Python<'py>,
    values: &[T],
) -> PyResult<Bound<'py, PyList>> {
    let items = with_converter(py, |c| {
        values
            .iter()
            .map(|v| c.value(v))
            .collect::<PyResult<Vec<_>>>()
    })?;
    PyList::new(py, items)
}

/// A conversion error (a `PyErr`, or a message from a `Serialize` impl).
#[derive(Debug)]
pub struct Error(PyErr);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error(PyValueError::new_err(msg.to_string()))
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error(e)
    }
}

/// The serializer into Python objects. Its cache belongs to this conversion alone (one that
/// Python code run meanwhile starts, from a finalizer, takes another), so a borrow of it
/// may be held across calls into Python.
#[derive(Clone, Copy)]
struct Ser<'a, 'py> {
    py: Python<'py>,
    cache: &'a RefCell<Cache>,
    /// The struct field whose value this is (its strings are remembered), if any.
    field: Option<usize>,
}

impl<'a, 'py> Ser<'a, 'py> {
    /// The serializer of a value nested in this one (not a field's own string).
    fn nested(self) -> Self {
        Ser {
            field: None,
            ..self
        }
    }

    /// The number of the field named `key` (its name is interned, made a Python string
    /// once per thread).
    fn field(self, key: &'static str) -> usize {
        self.cache.borrow_mut().field(self.py, key)
    }

    /// The Python string of `v`, the value of `field` (remembered when short).
    fn string(self, field: Option<usize>, v: &str) -> Bound<'py, PyString> {
        let Some(i) = field.filter(|_| v.len() <= MAX_REMEMBERED) else {
            return PyString::new(self.py, v);
        };
        let mut cache = self.cache.borrow_mut();
        let field = &mut cache.fields[i];
        if let Some(last) = &field.last
            && field.last_text == v
        {
            return last.bind(self.py).clone();
        }
        let s = PyString::new(self.py, v);
        field.last_text.clear();
        field.last_text.push_str(v);
        field.last = Some(s.clone().unbind());
        s
    }

    /// Sets the field number `field` of `dict` (a new key) to `value`.
    fn set_field(
        self,
        dict: &Bound<'py, PyDict>,
        field: usize,
        value: Bound<'py, impl PyTypeCheck>,
    ) -> PyResult<()> {
        let cache = self.cache.borrow();
        dict.set_item(cache.fields[field].name.bind(self.py), value)
    }

    /// The Python string of a name the Rust types fix (an enum variant's).
    fn name(self, key: &'static str) -> Bound<'py, PyString> {
        let mut cache = self.cache.borrow_mut();
        let i = cache.field(self.py, key);
        cache.fields[i].name.bind(self.py).clone()
    }
}

type R<'py> = Result<Bound<'py, PyAny>, Error>;

impl<'a, 'py> ser::Serializer for Ser<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Seq<'a, 'py>;
    type SerializeTuple = Seq<'a, 'py>;
    type SerializeTupleStruct = Seq<'a, 'py>;
    type SerializeTupleVariant = Seq<'a, 'py>;
    type SerializeMap = Map<'a, 'py>;
    type SerializeStruct = Map<'a, 'py>;
    type SerializeStructVariant = Map<'a, 'py>;

    fn serialize_bool(self, v: bool) -> R<'py> {
        Ok(PyBool::new(self.py, v).to_owned().into_any())
    }
    fn serialize_i8(self, v: i8) -> R<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> R<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> R<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> R<'py> {
        Ok(pyo3::types::PyInt::new(self.py, v).into_any())
    }
    fn serialize_u8(self, v: u8) -> R<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_u16(self, v: u16) -> R<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_u32(self, v: u32) -> R<'py> {
        self.serialize_i64(v.into())
    }
    fn serialize_u64(self, v: u64) -> R<'py> {
        Ok(pyo3::types::PyInt::new(self.py, v).into_any())
    }
    fn serialize_f32(self, v: f32) -> R<'py> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> R<'py> {
        Ok(PyFloat::new(self.py, v).into_any())
    }
    fn serialize_char(self, v: char) -> R<'py> {
        let mut b = [0u8; 4];
        self.serialize_str(v.encode_utf8(&mut b))
    }
    fn serialize_str(self, v: &str) -> R<'py> {
        Ok(self.string(self.field, v).into_any())
    }
    fn serialize_bytes(self, v: &[u8]) -> R<'py> {
        Ok(pyo3::types::PyBytes::new(self.py, v).into_any())
    }
    fn serialize_none(self) -> R<'py> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> R<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> R<'py> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> R<'py> {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> R<'py> {
        Ok(self.name(variant).into_any())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> R<'py> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> R<'py> {
        let dict = PyDict::new(self.py);
        dict.set_item(self.name(variant), value.serialize(self.nested())?)?;
        Ok(dict.into_any())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'a, 'py>, Error> {
        Ok(Seq {
            ser: self.nested(),
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'a, 'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq<'a, 'py>, Error> {
        let mut s = self.serialize_seq(Some(len))?;
        s.variant = Some(variant);
        Ok(s)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Map<'a, 'py>, Error> {
        Ok(Map {
            ser: self.nested(),
            dict: PyDict::new(self.py),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Map<'a, 'py>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Map<'a, 'py>, Error> {
        let mut m = self.serialize_map(Some(len))?;
        m.variant = Some(variant);
        Ok(m)
    }
}

/// A list being built.
pub struct Seq<'a, 'py> {
    ser: Ser<'a, 'py>,
    items: Vec<Bound<'py, PyAny>>,
    variant: Option<&'static str>,
}

impl<'a, 'py> Seq<'a, 'py> {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(value.serialize(self.ser)?);
        Ok(())
    }
    fn done(self) -> R<'py> {
        let list = PyList::new(self.ser.py, self.items)?.into_any();
        match self.variant {
            None => Ok(list),
            Some(v) => {
                let dict = PyDict::new(self.ser.py);
                dict.set_item(self.ser.name(v), list)?;
                Ok(dict.into_any())
            }
        }
    }
}

impl<'a, 'py> ser::SerializeSeq for Seq<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'a, 'py> ser::SerializeTuple for Seq<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'a, 'py> ser::SerializeTupleStruct for Seq<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'a, 'py> ser::SerializeTupleVariant for Seq<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

/// A dict being built.
pub struct Map<'a, 'py> {
    ser: Ser<'a, 'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyAny>>,
    variant: Option<&'static str>,
}

impl<'a, 'py> Map<'a, 'py> {
    fn done(self) -> R<'py> {
        match self.variant {
            None => Ok(self.dict.into_any()),
            Some(v) => {
                let outer = PyDict::new(self.ser.py);
                outer.set_item(self.ser.name(v), self.dict)?;
                Ok(outer.into_any())
            }
        }
    }
}

/// A map key: only strings are keys in JSON; numbers and booleans are written as JSON
/// writes them (serde_json does the same).
struct KeySer<'a, 'py> {
    ser: Ser<'a, 'py>,
}

impl<'a, 'py> KeySer<'a, 'py> {
    fn text(self, s: &str) -> R<'py> {
        Ok(PyString::new(self.ser.py, s).into_any())
    }
}

macro_rules! key_display {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> R<'py> {
            self.text(&v.to_string())
        }
    )*};
}

impl<'a, 'py> ser::Serializer for KeySer<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = ser::Impossible<Bound<'py, PyAny>, Error>;
    type SerializeTuple = ser::Impossible<Bound<'py, PyAny>, Error>;
    type SerializeTupleStruct = ser::Impossible<Bound<'py, PyAny>, Error>;
    type SerializeTupleVariant = ser::Impossible<Bound<'py, PyAny>, Error>;
    type SerializeMap = ser::Impossible<Bound<'py, PyAny>, Error>;
    type SerializeStruct = ser::Impossible<Bound<'py, PyAny>, Error>;
    type SerializeStructVariant = ser::Impossible<Bound<'py, PyAny>, Error>;

    key_display!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_f32: f32, serialize_f64: f64, serialize_char: char);

    fn serialize_str(self, v: &str) -> R<'py> {
        self.text(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> R<'py> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_none(self) -> R<'py> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> R<'py> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> R<'py> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_unit_struct(self, _: &'static str) -> R<'py> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> R<'py> {
        Ok(self.ser.name(variant).into_any())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> R<'py> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> R<'py> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(ser::Error::custom("a map key must be a string"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(ser::Error::custom("a map key must be a string"))
    }
}

impl<'a, 'py> ser::SerializeMap for Map<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeySer { ser: self.ser })?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| <Error as ser::Error>::custom("a map value without its key"))?;
        self.dict.set_item(key, value.serialize(self.ser)?)?;
        Ok(())
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'a, 'py> ser::SerializeStruct for Map<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let field = self.ser.field(key);
        let value = value.serialize(Ser {
            field: Some(field),
            ..self.ser
        })?;
        self.ser.set_field(&self.dict, field, value)?;
        Ok(())
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'a, 'py> ser::SerializeStructVariant for Map<'a, 'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        ser::SerializeStruct::serialize_field(self, key, value)
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}
