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
pub use aguikit_core::codec::media::{PROTO_MEDIA_TYPE, SSE_MEDIA_TYPE, WireFormat as Encoding};

/// Whether this build writes protobuf responses (the `proto` feature).
pub(crate) const PROTO_AVAILABLE: bool = cfg!(feature = "proto");

/// Picks the encoding for an `Accept` header (see the module documentation). Protobuf is
/// only chosen when `proto_available`.
///
/// ```
/// use aguikit_server::{negotiate, Encoding};
/// assert_eq!(negotiate(None, true), Encoding::Sse);
/// assert_eq!(negotiate(Some("*/*"), true), Encoding::Sse);
/// assert_eq!(negotiate(Some("application/vnd.ag-ui.event+proto, text/event-stream;q=0.5"), true), Encoding::Proto);
/// assert_eq!(negotiate(Some("application/vnd.ag-ui.event+proto"), false), Encoding::Sse);
/// ```
pub fn negotiate(accept: Option<&str>, proto_available: bool) -> Encoding {
    match media::negotiate(accept) {
        Encoding::Proto if proto_available => Encoding::Proto,
        _ => Encoding::Sse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(accept: &str) -> Encoding {
        negotiate(Some(accept), true)
    }

    #[test]
    fn sse_unless_protobuf_is_named_and_preferred() {
        let cases = [
            ("", Encoding::Sse),
            ("text/event-stream", Encoding::Sse),
            ("application/json", Encoding::Sse),
            ("text/*", Encoding::Sse),
            ("invalid", Encoding::Sse),
            ("*/*", Encoding::Sse),
            ("application/*", Encoding::Sse),
            ("application/vnd.ag-ui.event+proto", Encoding::Proto),
            ("  APPLICATION/VND.AG-UI.EVENT+PROTO  ", Encoding::Proto),
            ("application/vnd.ag-ui.event+proto;q=0", Encoding::Sse),
            ("application/vnd.ag-ui.event+proto;q=0.001", Encoding::Proto),
            ("application/vnd.ag-ui.event+proto;q=abc", Encoding::Sse),
            (
                "application/vnd.ag-ui.event+proto; charset=utf-8",
                Encoding::Sse,
            ),
            ("application/vnd.ag-ui.event+proto;level=*", Encoding::Proto),
            (
                "application/vnd.ag-ui.event+proto;q=1;level=1",
                Encoding::Proto,
            ),
            (
                "application/vnd.ag-ui.event+proto, text/event-stream;q=0.5",
                Encoding::Proto,
            ),
            (
                "text/event-stream, application/vnd.ag-ui.event+proto;q=0.5",
                Encoding::Sse,
            ),
            (
                "text/event-stream, application/vnd.ag-ui.event+proto",
                Encoding::Proto,
            ),
            ("text/event-stream;q=1, */*;q=0.1", Encoding::Sse),
            ("*/*, application/vnd.ag-ui.event+proto;q=0", Encoding::Sse),
            (
                "application/vnd.ag-ui.event+proto;q=0.5, */*",
                Encoding::Sse,
            ),
            (
                "application/vnd.ag-ui.event+proto, */*;q=0.1",
                Encoding::Proto,
            ),
        ];
        for (accept, want) in cases {
            assert_eq!(pick(accept), want, "Accept: {accept:?}");
        }
    }

    #[test]
    fn no_header_or_no_codec_means_sse() {
        assert_eq!(negotiate(None, true), Encoding::Sse);
        assert_eq!(
            negotiate(Some("application/vnd.ag-ui.event+proto"), false),
            Encoding::Sse
        );
    }

    #[test]
    fn quoted_commas_do_not_split() {
        assert_eq!(
            pick(r#"text/plain;x="a,b";q=0.1, application/vnd.ag-ui.event+proto"#),
            Encoding::Proto
        );
    }
}
