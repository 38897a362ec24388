//! The arguments the package's functions take: a recording as bytes (or text), and events
//! as Python objects (dicts, `ag_ui.core` models, JSON bytes).

use crate::errors;
use crate::pywrite::{WriteError, Writer};
use crate::stream::{self, Format};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

/// Bytes lent by Python (or copied from a mutable buffer), readable without the GIL.
pub enum Data {
    /// A `bytes` object, shared.
    Bytes(PyBackedBytes),
    /// A `str`, as UTF-8.
    Str(PyBackedStr),
    /// A copy of a `bytearray` or `memoryview`.
    Owned(Vec<u8>),
}

impl Data {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Data::Bytes(b) => b,
            Data::Str(s) => s.as_bytes(),
            Data::Owned(v) => v,
        }
    }
}

/// `obj` as bytes when it is `bytes`, `bytearray`, `memoryview` or `str`.
pub fn data_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Data>> {
    if obj.is_instance_of::<PyBytes>() {
        return Ok(Some(Data::Bytes(obj.extract()?)));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(Some(Data::Str(obj.extract()?)));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Some(Data::Owned(b.to_vec())));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let bytes = obj.call_method0("tobytes")?;
        return Ok(Some(Data::Bytes(bytes.extract()?)));
    }
    Ok(None)
}

/// Parses a `format=` argument (`None` detects it from the bytes).
pub fn format_arg(format: Option<&str>) -> PyResult<Option<Format>> {
    match format {
        None => Ok(None),
        Some(name) => Format::parse(name).map(Some).ok_or_else(|| {
            PyValueError::new_err(format!(
                "format must be \"sse\", \"proto\", \"json\" or None (detected), not {name:?}"
            ))
        }),
    }
}

/// The JSON text of one event given as a Python object: `bytes` as they are, anything else
/// written as JSON (a model as the SDK writes it). A value with no JSON form is an
/// `EncodeError`.
pub fn event_json(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    let mut w = Writer::new(py);
    match w.any(obj) {
        Ok(()) => Ok(w.out),
        Err(e) => fallback(py, obj, e),
    }
}

/// What a value the writer cannot write becomes: a pydantic model other than the SDK's is
/// asked for its own JSON; anything else is an `EncodeError`.
pub fn fallback(py: Python<'_>, obj: &Bound<'_, PyAny>, e: WriteError) -> PyResult<Vec<u8>> {
    if let WriteError::Py(e) = e {
        return Err(e);
    }
    if obj.hasattr("model_dump_json")? {
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("by_alias", true)?;
        let json = obj.call_method("model_dump_json", (), Some(&kwargs))?;
        let json: PyBackedStr = json.extract()?;
        return Ok(json.as_bytes().to_vec());
    }
    Err(errors::encode_error(py, &e.message(py)))
}

/// A `DecodeError` for input that is no recording, or unreadable past an event.
pub fn unreadable(py: Python<'_>, message: &str, index: Option<usize>) -> PyErr {
    errors::decode_error(py, message, index)
}

/// Reads the events of `data`, handing each to `f` without the GIL; then raises the
/// reading error, if any, unless `f` broke first.
pub fn each_detached<F>(
    py: Python<'_>,
    data: &Data,
    format: Option<Format>,
    max_frame: usize,
    f: F,
) -> PyResult<stream::Broken>
where
    F: FnMut(stream::Item<'_>) -> std::ops::ControlFlow<()> + Send,
{
    let bytes = data.as_slice();
    let result = if bytes.len() >= 64 * 1024 {
        py.detach(|| stream::each(bytes, format, max_frame, f))
    } else {
        stream::each(bytes, format, max_frame, f)
    };
    match result {
        Ok((_, broken)) => Ok(broken),
        Err(message) => Err(unreadable(py, &message, None)),
    }
}
