//! Wire codecs: Server-Sent Events carrying JSON, and protobuf.

pub mod sse;
