//! Rust values to Python objects, through serde: an [`Event`](aguikit_core::Event), a message
//! or any `serde_json::Value` becomes the dicts, lists, strings, numbers, booleans and `None`
//! that `json.loads` would give for its JSON, without writing or parsing any JSON.
//!
//! Struct field names (`type`, `messageId`, `delta`, ...) are `&'static str`s: each becomes a
//! Python string once per process and is reused (the key cache), so a dict costs its values
//! only. Integers beyond 64 bits cannot occur (serde_json reads them as floats).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use serde::ser::{self, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;

thread_local! {
    /// Python strings of struct field names, by the address and length of the `&'static str`.
    static KEYS: RefCell<HashMap<(usize, usize), Py<PyString>>> = RefCell::new(HashMap::new());
}

/// The Python string of a field name (created once per thread and name).
fn static_key<'py>(py: Python<'py>, key: &'static str) -> Bound<'py, PyString> {
    let id = (key.as_ptr() as usize, key.len());
    KEYS.with(|keys| {
        let mut keys = keys.borrow_mut();
        keys.entry(id)
            .or_insert_with(|| PyString::intern(py, key).unbind())
            .bind(py)
            .clone()
    })
}

/// Converts `value` into Python objects.
pub fn to_py<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    value.serialize(Ser { py }).map_err(|e| e.0)
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

#[derive(Clone, Copy)]
struct Ser<'py> {
    py: Python<'py>,
}

type R<'py> = Result<Bound<'py, PyAny>, Error>;

impl<'py> ser::Serializer for Ser<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    type SerializeSeq = Seq<'py>;
    type SerializeTuple = Seq<'py>;
    type SerializeTupleStruct = Seq<'py>;
    type SerializeTupleVariant = Seq<'py>;
    type SerializeMap = Map<'py>;
    type SerializeStruct = Map<'py>;
    type SerializeStructVariant = Map<'py>;

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
        Ok(PyString::new(self.py, v).into_any())
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
        Ok(static_key(self.py, variant).into_any())
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
        dict.set_item(static_key(self.py, variant), value.serialize(self)?)?;
        Ok(dict.into_any())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq<'py>, Error> {
        Ok(Seq {
            ser: self,
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq<'py>, Error> {
        let mut s = self.serialize_seq(Some(len))?;
        s.variant = Some(variant);
        Ok(s)
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Map<'py>, Error> {
        Ok(Map {
            ser: self,
            dict: PyDict::new(self.py),
            key: None,
            variant: None,
        })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Map<'py>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Map<'py>, Error> {
        let mut m = self.serialize_map(Some(len))?;
        m.variant = Some(variant);
        Ok(m)
    }
}

/// A list being built.
pub struct Seq<'py> {
    ser: Ser<'py>,
    items: Vec<Bound<'py, PyAny>>,
    variant: Option<&'static str>,
}

impl<'py> Seq<'py> {
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
                dict.set_item(static_key(self.ser.py, v), list)?;
                Ok(dict.into_any())
            }
        }
    }
}

impl<'py> ser::SerializeSeq for Seq<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeTuple for Seq<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeTupleStruct for Seq<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.push(value)
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeTupleVariant for Seq<'py> {
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
pub struct Map<'py> {
    ser: Ser<'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Bound<'py, PyAny>>,
    variant: Option<&'static str>,
}

impl<'py> Map<'py> {
    fn done(self) -> R<'py> {
        match self.variant {
            None => Ok(self.dict.into_any()),
            Some(v) => {
                let outer = PyDict::new(self.ser.py);
                outer.set_item(static_key(self.ser.py, v), self.dict)?;
                Ok(outer.into_any())
            }
        }
    }
}

/// A map key: only strings are keys in JSON; numbers and booleans are written as JSON
/// writes them (serde_json does the same).
struct KeySer<'py> {
    py: Python<'py>,
}

impl<'py> KeySer<'py> {
    fn text(self, s: &str) -> R<'py> {
        Ok(PyString::new(self.py, s).into_any())
    }
}

macro_rules! key_display {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> R<'py> {
            self.text(&v.to_string())
        }
    )*};
}

impl<'py> ser::Serializer for KeySer<'py> {
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
        Ok(static_key(self.py, variant).into_any())
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

impl<'py> ser::SerializeMap for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(KeySer { py: self.ser.py })?);
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

impl<'py> ser::SerializeStruct for Map<'py> {
    type Ok = Bound<'py, PyAny>;
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let value = value.serialize(self.ser)?;
        self.dict.set_item(static_key(self.ser.py, key), value)?;
        Ok(())
    }
    fn end(self) -> R<'py> {
        self.done()
    }
}

impl<'py> ser::SerializeStructVariant for Map<'py> {
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
