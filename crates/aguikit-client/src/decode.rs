//! The wire format of a response, and its media types: aguikit-core's, re-exported under the
//! names this crate has always used. The body decoder itself is
//! [`aguikit_core::codec::decoder::FrameDecoder`].

pub use aguikit_core::codec::media::{PROTO_MEDIA_TYPE, SSE_MEDIA_TYPE, WireFormat};
