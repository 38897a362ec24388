//! Choosing the wire format from the request's `Accept` header.
//!
//! The reference encoder picks protobuf whenever the header admits it at all, `*/*`
//! included. This server follows the project's ruling instead: protobuf only when the
//! client names `application/vnd.ag-ui.event+proto` explicitly, with a quality at least as
//! high as the best quality it gives `text/event-stream` (directly or through `text/*` or
//! `*/*`). Everything else, a missing or unparsable header included, gets SSE.

use aguikit_core::codec::media;

/// The wire format of a response, its media types: aguikit-core's, under the names this crate
/// has always used.
pub use aguikit_core::codec::media::{PROTO_MEDIA_TYPE, SSE_MEDIA_TYPE, WireFormat};

/// Whether this build writes protobuf responses (the `proto` feature).
pub(crate) const PROTO_AVAILABLE: bool = cfg!(feature = "proto");

/// Picks the encoding for an `Accept` header (see the module documentation). Protobuf is
/// only chosen when `proto_available` and this crate has its `proto` feature.
///
/// ```
/// use aguikit_server::{negotiate, WireFormat};
/// assert_eq!(negotiate(None, true), WireFormat::Sse);
/// assert_eq!(negotiate(Some("*/*"), true), WireFormat::Sse);
/// # #[cfg(feature = "proto")]
/// assert_eq!(negotiate(Some("application/vnd.ag-ui.event+proto, text/event-stream;q=0.5"), true), WireFormat::Proto);
/// assert_eq!(negotiate(Some("application/vnd.ag-ui.event+proto"), false), WireFormat::Sse);
/// ```
pub fn negotiate(accept: Option<&str>, proto_available: bool) -> WireFormat {
    match media::negotiate(accept) {
        WireFormat::Sse => WireFormat::Sse,
        // Protobuf. Another crate of the build may turn on aguikit-core's `proto` without
        // this crate's, which writes it: then it is not chosen.
        other if proto_available && PROTO_AVAILABLE => other,
        _ => WireFormat::Sse,
    }
}

#[cfg(all(test, feature = "proto"))]
mod tests {
    use super::*;

    fn pick(accept: &str) -> WireFormat {
        negotiate(Some(accept), true)
    }

    #[test]
    fn sse_unless_protobuf_is_named_and_preferred() {
        let cases = [
            ("", WireFormat::Sse),
            ("text/event-stream", WireFormat::Sse),
            ("application/json", WireFormat::Sse),
            ("text/*", WireFormat::Sse),
            ("invalid", WireFormat::Sse),
            ("*/*", WireFormat::Sse),
            ("application/*", WireFormat::Sse),
            ("application/vnd.ag-ui.event+proto", WireFormat::Proto),
            ("  APPLICATION/VND.AG-UI.EVENT+PROTO  ", WireFormat::Proto),
            ("application/vnd.ag-ui.event+proto;q=0", WireFormat::Sse),
            (
                "application/vnd.ag-ui.event+proto;q=0.001",
                WireFormat::Proto,
            ),
            ("application/vnd.ag-ui.event+proto;q=abc", WireFormat::Sse),
            (
                "application/vnd.ag-ui.event+proto; charset=utf-8",
                WireFormat::Sse,
            ),
            (
                "application/vnd.ag-ui.event+proto;level=*",
                WireFormat::Proto,
            ),
            (
                "application/vnd.ag-ui.event+proto;q=1;level=1",
                WireFormat::Proto,
            ),
            (
                "application/vnd.ag-ui.event+proto, text/event-stream;q=0.5",
                WireFormat::Proto,
            ),
            (
                "text/event-stream, application/vnd.ag-ui.event+proto;q=0.5",
                WireFormat::Sse,
            ),
            (
                "text/event-stream, application/vnd.ag-ui.event+proto",
                WireFormat::Proto,
            ),
            ("text/event-stream;q=1, */*;q=0.1", WireFormat::Sse),
            (
                "*/*, application/vnd.ag-ui.event+proto;q=0",
                WireFormat::Sse,
            ),
            (
                "application/vnd.ag-ui.event+proto;q=0.5, */*",
                WireFormat::Sse,
            ),
            (
                "application/vnd.ag-ui.event+proto, */*;q=0.1",
                WireFormat::Proto,
            ),
        ];
        for (accept, want) in cases {
            assert_eq!(pick(accept), want, "Accept: {accept:?}");
        }
    }

    #[test]
    fn no_header_or_no_codec_means_sse() {
        assert_eq!(negotiate(None, true), WireFormat::Sse);
        assert_eq!(
            negotiate(Some("application/vnd.ag-ui.event+proto"), false),
            WireFormat::Sse
        );
    }

    #[test]
    fn quoted_commas_do_not_split() {
        assert_eq!(
            pick(r#"text/plain;x="a,b";q=0.1, application/vnd.ag-ui.event+proto"#),
            WireFormat::Proto
        );
    }
}
