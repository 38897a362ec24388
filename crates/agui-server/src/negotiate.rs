//! Choosing the wire format from the request's `Accept` header.
//!
//! The reference encoder picks protobuf whenever the header admits it at all, `*/*`
//! included. This server follows the project's ruling instead: protobuf only when the
//! client names `application/vnd.ag-ui.event+proto` explicitly, with a quality at least as
//! high as the best quality it gives `text/event-stream` (directly or through `text/*` or
//! `*/*`). Everything else, a missing or unparsable header included, gets SSE.

/// The media type of the SSE encoding.
pub const SSE_MEDIA_TYPE: &str = "text/event-stream";
/// The media type of the protobuf encoding (compared exactly by the reference client).
pub const PROTO_MEDIA_TYPE: &str = "application/vnd.ag-ui.event+proto";

/// A wire format for the event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    /// `text/event-stream`: one `data: <json>` frame per event.
    Sse,
    /// `application/vnd.ag-ui.event+proto`: length-prefixed protobuf messages.
    Proto,
}

impl Encoding {
    /// The `Content-Type` of a response in this encoding (no parameters: the reference
    /// client compares the protobuf type by exact string equality).
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Sse => SSE_MEDIA_TYPE,
            Encoding::Proto => PROTO_MEDIA_TYPE,
        }
    }

    /// Whether this build can write the encoding.
    pub fn is_available(self) -> bool {
        match self {
            Encoding::Sse => true,
            Encoding::Proto => false,
        }
    }
}

/// Picks the encoding for an `Accept` header (see the module documentation). Protobuf is
/// only chosen when `proto_available`.
///
/// ```
/// use agui_server::{negotiate, Encoding};
/// assert_eq!(negotiate(None, true), Encoding::Sse);
/// assert_eq!(negotiate(Some("*/*"), true), Encoding::Sse);
/// assert_eq!(negotiate(Some("application/vnd.ag-ui.event+proto, text/event-stream;q=0.5"), true), Encoding::Proto);
/// assert_eq!(negotiate(Some("application/vnd.ag-ui.event+proto"), false), Encoding::Sse);
/// ```
pub fn negotiate(accept: Option<&str>, proto_available: bool) -> Encoding {
    let Some(accept) = accept else {
        return Encoding::Sse;
    };
    if !proto_available {
        return Encoding::Sse;
    }
    let ranges: Vec<Range<'_>> = split_entries(accept)
        .enumerate()
        .filter_map(|(i, e)| Range::parse(e, i))
        .collect();
    let proto = best(&ranges, "application", "vnd.ag-ui.event+proto", true);
    let sse = best(&ranges, "text", "event-stream", false);
    match (proto, sse) {
        (Some(p), Some(s)) if p > 0.0 && p >= s => Encoding::Proto,
        (Some(p), None) if p > 0.0 => Encoding::Proto,
        _ => Encoding::Sse,
    }
}

/// One parsed media range.
#[derive(Debug)]
struct Range<'a> {
    ty: &'a str,
    subtype: &'a str,
    /// Parameters other than `q` (those before it; later ones are ignored, as the
    /// reference's negotiator does).
    params: Vec<(&'a str, &'a str)>,
    q: f64,
    index: usize,
}

impl<'a> Range<'a> {
    fn parse(entry: &'a str, index: usize) -> Option<Range<'a>> {
        let mut parts = entry.split(';');
        let media = parts.next()?.trim();
        let (ty, subtype) = media.split_once('/')?;
        let (ty, subtype) = (ty.trim(), subtype.trim());
        if ty.is_empty() || subtype.is_empty() {
            return None;
        }
        let mut params = Vec::new();
        let mut q = 1.0;
        for p in parts {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let (k, v) = (k.trim(), v.trim().trim_matches('"'));
            if k.eq_ignore_ascii_case("q") {
                q = v
                    .parse::<f64>()
                    .ok()
                    .filter(|q| q.is_finite())
                    .unwrap_or(0.0);
                break;
            }
            params.push((k, v));
        }
        Some(Range {
            ty,
            subtype,
            params,
            q,
            index,
        })
    }

    /// Specificity of the match against `ty/subtype`, or `None` when it does not match.
    /// With `exact_only`, wildcards do not match.
    fn matches(&self, ty: &str, subtype: &str, exact_only: bool) -> Option<u32> {
        let mut s = 0;
        if self.ty.eq_ignore_ascii_case(ty) {
            s += 4;
        } else if self.ty != "*" || exact_only {
            return None;
        }
        if self.subtype.eq_ignore_ascii_case(subtype) {
            s += 2;
        } else if self.subtype != "*" || exact_only {
            return None;
        }
        // The candidates carry no parameters: a range's parameter must be `*` to match.
        if self.params.iter().any(|(_, v)| *v != "*") {
            return None;
        }
        if !self.params.is_empty() {
            s += 1;
        }
        Some(s)
    }
}

/// The quality of the most specific range matching `ty/subtype` (ties: higher q, then the
/// later entry), or `None` when nothing matches.
fn best(ranges: &[Range<'_>], ty: &str, subtype: &str, exact_only: bool) -> Option<f64> {
    ranges
        .iter()
        .filter_map(|r| r.matches(ty, subtype, exact_only).map(|s| (s, r)))
        .max_by(|(sa, a), (sb, b)| {
            sa.cmp(sb)
                .then(a.q.total_cmp(&b.q))
                .then(a.index.cmp(&b.index))
        })
        .map(|(_, r)| r.q)
}

/// Splits a header on commas that are not inside double quotes.
fn split_entries(header: &str) -> impl Iterator<Item = &str> {
    let mut entries = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in header.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                entries.push(&header[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    entries.push(&header[start..]);
    entries.into_iter().map(str::trim).filter(|e| !e.is_empty())
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
