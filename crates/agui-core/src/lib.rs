//! # agui-core
//!
//! The AG-UI 1.0 protocol for Rust: the complete event vocabulary with JSON exactly as on
//! the wire, the SSE and protobuf codecs, and a sans-I/O protocol engine (chunk expansion,
//! verification, application and compaction) that behaves like the official TypeScript
//! client 1.0.0.

pub mod codec;
pub mod patch;
