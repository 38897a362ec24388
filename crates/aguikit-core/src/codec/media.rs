//! Media types and choosing the wire format from an `Accept` header.
//!
//! Our ruling (see DESIGN): SSE unless the client explicitly prefers protobuf. A wildcard
//! (`*/*`, `application/*`) never selects protobuf — generic HTTP clients send `*/*` and
//! cannot read it — whereas the reference encoder picks protobuf for them. The reference's
//! exact evaluation is available as [`negotiate_reference`]. Without the `proto` feature
//! there is no protobuf to choose: both give SSE.
//!
//! ```
//! use aguikit_core::codec::media::{negotiate, WireFormat};
//! assert_eq!(negotiate(None), WireFormat::Sse);
//! assert_eq!(negotiate(Some("*/*")), WireFormat::Sse);
//! #[cfg(feature = "proto")]
//! assert_eq!(negotiate(Some("application/vnd.ag-ui.event+proto")), WireFormat::Proto);
//! assert_eq!(negotiate(Some("text/event-stream, application/vnd.ag-ui.event+proto;q=0.5")), WireFormat::Sse);
//! ```

/// `text/event-stream`: Server-Sent Events carrying JSON.
pub const SSE_MEDIA_TYPE: &str = "text/event-stream";
/// `application/vnd.ag-ui.event+proto`: length-prefixed protobuf envelopes.
pub const PROTO_MEDIA_TYPE: &str = "application/vnd.ag-ui.event+proto";
/// The `Accept` header of a client that prefers protobuf and still admits SSE.
pub const PROTO_ACCEPT: &str = "application/vnd.ag-ui.event+proto, text/event-stream;q=0.5";

/// The two AG-UI event-stream encodings.
///
/// `WireFormat::Proto` exists only with the `proto` feature, so a build that
/// cannot encode or decode protobuf cannot ask for it. The enum is `#[non_exhaustive]`:
/// since another crate in a build may turn the feature on, a `match` outside this crate
/// needs a `_` arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum WireFormat {
    /// Server-Sent Events carrying JSON (the default).
    #[default]
    Sse,
    /// Length-prefixed protobuf envelopes (feature `proto`).
    #[cfg(feature = "proto")]
    Proto,
}

impl WireFormat {
    /// The media type to send as `Content-Type` (no parameters: the reference client
    /// compares the protobuf type by exact string equality).
    pub fn media_type(self) -> &'static str {
        match self {
            WireFormat::Sse => SSE_MEDIA_TYPE,
            #[cfg(feature = "proto")]
            WireFormat::Proto => PROTO_MEDIA_TYPE,
        }
    }

    /// The `Accept` header that asks for this format. A protobuf request still admits SSE,
    /// since many servers only speak SSE.
    ///
    /// ```
    /// use aguikit_core::codec::media::WireFormat;
    /// assert_eq!(WireFormat::Sse.accept_header(), "text/event-stream");
    /// # #[cfg(feature = "proto")]
    /// assert_eq!(
    ///     WireFormat::Proto.accept_header(),
    ///     "application/vnd.ag-ui.event+proto, text/event-stream;q=0.5"
    /// );
    /// ```
    pub fn accept_header(self) -> &'static str {
        match self {
            WireFormat::Sse => SSE_MEDIA_TYPE,
            #[cfg(feature = "proto")]
            WireFormat::Proto => PROTO_ACCEPT,
        }
    }

    /// The format a `Content-Type` names, or `None` when it is not an AG-UI event stream
    /// this build reads (the protobuf media type without the `proto` feature: see
    /// [`is_proto_media_type`] to tell it apart). Only the essence counts (type/subtype, any
    /// case); parameters are ignored.
    ///
    /// ```
    /// use aguikit_core::codec::media::WireFormat;
    /// assert_eq!(WireFormat::from_media_type("text/event-stream; charset=utf-8"), Some(WireFormat::Sse));
    /// # #[cfg(feature = "proto")]
    /// assert_eq!(WireFormat::from_media_type("application/vnd.ag-ui.event+proto"), Some(WireFormat::Proto));
    /// assert_eq!(WireFormat::from_media_type("application/json"), None);
    /// ```
    pub fn from_media_type(content_type: &str) -> Option<WireFormat> {
        let essence = content_type.split(';').next().unwrap_or("").trim();
        if essence.eq_ignore_ascii_case(SSE_MEDIA_TYPE) {
            return Some(WireFormat::Sse);
        }
        #[cfg(feature = "proto")]
        if essence.eq_ignore_ascii_case(PROTO_MEDIA_TYPE) {
            return Some(WireFormat::Proto);
        }
        None
    }

    /// Reads a response `Content-Type`: protobuf when its essence (type/subtype, any case,
    /// parameters ignored) is the protobuf media type (with the `proto` feature), SSE
    /// otherwise. (The reference client
    /// compares the whole header exactly, so a `; charset=...` parameter makes it read a
    /// protobuf body as SSE and see no events; we read what the server said.)
    pub fn from_content_type(content_type: Option<&str>) -> WireFormat {
        content_type
            .and_then(WireFormat::from_media_type)
            .unwrap_or(WireFormat::Sse)
    }
}

/// One parsed `Accept` entry.
struct Entry<'a> {
    kind: &'a str,
    subtype: &'a str,
    /// Parameters before `q`, lower-cased names.
    params: Vec<(&'a str, &'a str)>,
    q: f64,
    position: usize,
}

/// Splits on commas outside double quotes.
fn split_unquoted(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn parse_accept(header: &str) -> Vec<Entry<'_>> {
    let mut out = Vec::new();
    for (position, raw) in split_unquoted(header, ',').into_iter().enumerate() {
        let mut parts = split_unquoted(raw.trim(), ';').into_iter();
        let Some(full) = parts.next().map(str::trim) else {
            continue;
        };
        let Some((kind, subtype)) = full.split_once('/') else {
            continue;
        };
        let (kind, subtype) = (kind.trim(), subtype.trim());
        let token = |t: &str| !t.is_empty() && !t.contains(char::is_whitespace);
        if !token(kind) || !token(subtype) {
            continue;
        }
        let mut params = Vec::new();
        let mut q = 1.0;
        for p in parts {
            let Some((name, value)) = p.split_once('=') else {
                continue;
            };
            let (name, value) = (name.trim(), value.trim().trim_matches('"'));
            if name.eq_ignore_ascii_case("q") {
                q = value.parse::<f64>().unwrap_or(f64::NAN);
                break;
            }
            params.push((name, value));
        }
        out.push(Entry {
            kind,
            subtype,
            params,
            q,
            position,
        });
    }
    out
}

/// The q an `Accept` header gives `kind/subtype` (a candidate without parameters): the most
/// specific matching entry wins (exact type, exact subtype, parameters), then the higher q,
/// then the later entry. `allow_wildcards: false` ignores `*` entries. `None` = no match.
fn quality(entries: &[Entry<'_>], kind: &str, subtype: &str, allow_wildcards: bool) -> Option<f64> {
    let mut best: Option<(u8, f64, usize)> = None;
    for e in entries {
        let type_exact = e.kind.eq_ignore_ascii_case(kind);
        let sub_exact = e.subtype.eq_ignore_ascii_case(subtype);
        if !(type_exact || allow_wildcards && e.kind == "*") {
            continue;
        }
        if !(sub_exact || allow_wildcards && e.subtype == "*") {
            continue;
        }
        // The candidate has no parameters: an entry's parameter matches only if it is `*`.
        if e.params.iter().any(|(_, v)| *v != "*") {
            continue;
        }
        let specificity =
            (type_exact as u8) * 4 + (sub_exact as u8) * 2 + (!e.params.is_empty() as u8);
        let q = if e.q.is_nan() { 0.0 } else { e.q };
        let better = match best {
            None => true,
            Some((s, bq, bp)) => (specificity, q, e.position) > (s, bq, bp),
        };
        if better {
            best = Some((specificity, q, e.position));
        }
    }
    best.map(|(_, q, _)| q)
}

/// Chooses the wire format for a response: protobuf only when the client names the protobuf
/// media type explicitly with a q greater than zero and at least the q it gives SSE (and
/// the build has the `proto` feature).
pub fn negotiate(accept: Option<&str>) -> WireFormat {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return WireFormat::Sse;
    };
    // What SSE clients send, answered without parsing (the parse gives the same answer):
    // about 1% of a server's instructions per run of the demo agent.
    if accept.trim().eq_ignore_ascii_case(SSE_MEDIA_TYPE) {
        return WireFormat::Sse;
    }
    let entries = parse_accept(accept);
    let (pk, ps) = PROTO_MEDIA_TYPE.split_once('/').unwrap_or_default();
    let proto = quality(&entries, pk, ps, false).unwrap_or(0.0);
    let sse = quality(&entries, "text", "event-stream", true).unwrap_or(0.0);
    if proto > 0.0 && proto >= sse {
        proto_format()
    } else {
        WireFormat::Sse
    }
}

/// Whether a `Content-Type` (or its essence) names the protobuf media type (type/subtype,
/// any case, parameters ignored), whether or not this build has the `proto` feature: for
/// an error that says why such a response cannot be read.
///
/// ```
/// use aguikit_core::codec::media::is_proto_media_type;
/// assert!(is_proto_media_type("Application/Vnd.Ag-Ui.Event+Proto; charset=x"));
/// assert!(!is_proto_media_type("text/event-stream"));
/// ```
pub fn is_proto_media_type(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case(PROTO_MEDIA_TYPE)
}

/// Protobuf when this build has it, else SSE.
fn proto_format() -> WireFormat {
    #[cfg(feature = "proto")]
    return WireFormat::Proto;
    #[cfg(not(feature = "proto"))]
    WireFormat::Sse
}

/// The reference encoder's choice (`@ag-ui/encoder` 1.0.0): protobuf whenever the header
/// gives the protobuf media type a q above zero, wildcards included (SSE without the
/// `proto` feature).
pub fn negotiate_reference(accept: Option<&str>) -> WireFormat {
    let Some(accept) = accept.filter(|a| !a.is_empty()) else {
        return WireFormat::Sse;
    };
    let (pk, ps) = PROTO_MEDIA_TYPE.split_once('/').unwrap_or_default();
    match quality(&parse_accept(accept), pk, ps, true) {
        Some(q) if q > 0.0 => proto_format(),
        _ => WireFormat::Sse,
    }
}

#[cfg(all(test, not(feature = "proto")))]
mod tests_without_proto {
    use super::*;

    #[test]
    fn no_protobuf_to_choose_or_read() {
        for accept in [PROTO_MEDIA_TYPE, PROTO_ACCEPT, "*/*"] {
            assert_eq!(negotiate(Some(accept)), WireFormat::Sse, "{accept}");
            assert_eq!(
                negotiate_reference(Some(accept)),
                WireFormat::Sse,
                "{accept}"
            );
        }
        assert_eq!(WireFormat::from_media_type(PROTO_MEDIA_TYPE), None);
        assert!(is_proto_media_type(PROTO_MEDIA_TYPE));
        assert_eq!(
            WireFormat::from_content_type(Some(PROTO_MEDIA_TYPE)),
            WireFormat::Sse
        );
    }
}

#[cfg(all(test, feature = "proto"))]
mod tests {
    use super::*;
    use WireFormat::{Proto, Sse};

    #[test]
    fn reference_table() {
        let table = [
            (None, Sse),
            (Some(""), Sse),
            (Some("text/event-stream"), Sse),
            (Some("application/json"), Sse),
            (Some("text/*"), Sse),
            (Some("application/x-protobuf"), Sse),
            (Some("invalid"), Sse),
            (Some("*/*"), Proto),
            (Some("application/*"), Proto),
            (Some("  APPLICATION/VND.AG-UI.EVENT+PROTO "), Proto),
            (Some("application/vnd.ag-ui.event+proto;q=0"), Sse),
            (Some("application/vnd.ag-ui.event+proto;q=0.001"), Proto),
            (Some("application/vnd.ag-ui.event+proto;q=abc"), Sse),
            (
                Some("application/vnd.ag-ui.event+proto; charset=utf-8"),
                Sse,
            ),
            (Some("application/vnd.ag-ui.event+proto;level=*"), Proto),
            (Some("application/vnd.ag-ui.event+proto;q=1;level=1"), Proto),
            (
                Some("text/event-stream, application/vnd.ag-ui.event+proto;q=0.5"),
                Proto,
            ),
            (Some("text/event-stream;q=1, */*;q=0.1"), Proto),
            (Some("*/*, application/vnd.ag-ui.event+proto;q=0"), Sse),
        ];
        for (accept, want) in table {
            assert_eq!(negotiate_reference(accept), want, "{accept:?}");
        }
    }

    #[test]
    fn our_ruling() {
        let table = [
            (None, Sse),
            (Some("*/*"), Sse),
            (Some("application/*"), Sse),
            (Some("text/event-stream"), Sse),
            (Some(" TEXT/Event-Stream "), Sse),
            (Some("text/event-stream;q=0"), Sse),
            (Some("text/event-stream;q=0, */*"), Sse),
            (Some("application/vnd.ag-ui.event+proto"), Proto),
            (
                Some("application/vnd.ag-ui.event+proto, text/event-stream"),
                Proto,
            ),
            (
                Some("text/event-stream;q=0.9, application/vnd.ag-ui.event+proto"),
                Proto,
            ),
            (
                Some("text/event-stream, application/vnd.ag-ui.event+proto;q=0.5"),
                Sse,
            ),
            (Some("*/*;q=0.1, application/vnd.ag-ui.event+proto"), Proto),
            (Some("application/vnd.ag-ui.event+proto;q=0"), Sse),
            (Some("application/json"), Sse),
        ];
        for (accept, want) in table {
            assert_eq!(negotiate(accept), want, "{accept:?}");
        }
    }

    #[test]
    fn content_type_essence() {
        assert_eq!(WireFormat::from_content_type(Some(PROTO_MEDIA_TYPE)), Proto);
        assert_eq!(
            WireFormat::from_content_type(Some("Application/Vnd.Ag-Ui.Event+Proto; charset=x")),
            Proto
        );
        assert_eq!(
            WireFormat::from_content_type(Some("text/event-stream")),
            Sse
        );
        assert_eq!(WireFormat::from_content_type(None), Sse);
    }

    #[test]
    fn media_types() {
        assert_eq!(WireFormat::from_media_type("TEXT/EVENT-STREAM"), Some(Sse));
        assert_eq!(
            WireFormat::from_media_type("application/vnd.ag-ui.event+proto; v=1"),
            Some(Proto)
        );
        assert_eq!(WireFormat::from_media_type("text/html"), None);
        assert_eq!(WireFormat::from_media_type(""), None);
    }
}
