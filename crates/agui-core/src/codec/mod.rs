//! Wire codecs: Server-Sent Events carrying JSON, and protobuf.

#[cfg(feature = "proto")]
pub mod proto;
pub mod sse;
