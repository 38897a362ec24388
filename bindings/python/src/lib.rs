//! The native half of the Python package `aguikit` (`aguikit._aguikit`): the AG-UI codecs,
//! the protocol engine and the HTTP client of the Rust crates, for Python.
//!
//! Everything public is re-exported by `aguikit/__init__.py`; the package's README and the
//! type stubs (`_aguikit.pyi`) document it.

mod client;
mod decoder;
mod encoder;
mod engine;
mod errors;
mod input;
mod layout;
mod pywrite;
mod stream;
mod topy;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _aguikit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PROTOCOL_VERSION", aguikit_core::PROTOCOL_VERSION)?;
    m.add_class::<encoder::EventEncoder>()?;
    m.add_function(wrap_pyfunction!(decoder::decode, m)?)?;
    m.add_class::<decoder::SseDecoder>()?;
    m.add_class::<decoder::ProtoDecoder>()?;
    m.add_function(wrap_pyfunction!(engine::verify, m)?)?;
    m.add_function(wrap_pyfunction!(engine::apply, m)?)?;
    m.add_function(wrap_pyfunction!(engine::expand, m)?)?;
    m.add_function(wrap_pyfunction!(engine::compact, m)?)?;
    m.add_class::<engine::Verifier>()?;
    m.add_class::<engine::Applier>()?;
    m.add_class::<client::HttpAgent>()?;
    m.add_class::<client::Session>()?;
    m.add_class::<client::RunIter>()?;
    Ok(())
}
