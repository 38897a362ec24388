//! Wire codecs: Server-Sent Events carrying JSON, and protobuf.

pub mod decoder;
pub mod media;
#[cfg(feature = "proto")]
pub mod proto;
pub mod sse;
