//! What the network commands (`run`, `record`, `check`, `load`) share: the check of the
//! agent's URL before any request, the request headers (with `AGUI_TOKEN`), fresh ids, and
//! the exit-code rule.

use std::time::Duration;

/// The exit-code rule and the token, for each network command's `--help`.
pub const AFTER_HELP: &str = "\
Exit codes (every network command: run, record, check, load):
  0  success
  1  the run or check failed: RUN_ERROR, a stream that fails verification or ends without
     RUN_FINISHED/RUN_ERROR (a connection that breaks mid-stream included), a failed check case,
     a thread `load --cleanup` could not delete
  2  usage or connection problems: bad arguments, a URL that is not an absolute http(s) URL
     (rejected before any request), no connection, an HTTP status other than 2xx (check and
     load: when no request got a 2xx answer)

Authentication: when AGUI_TOKEN is set and not empty, every request carries
`Authorization: Bearer $AGUI_TOKEN` (`agui serve` prints its token at start);
an explicit --header 'Authorization: ...' wins over it.";

/// `--header` and `--timeout-ms` of the commands that run an agent several times
/// (`check`, `load`).
#[derive(clap::Args)]
pub struct RequestArgs {
    /// Extra request header, `Name: value` (repeatable; an `Authorization` header here
    /// replaces the one made from AGUI_TOKEN).
    #[arg(long = "header")]
    headers: Vec<String>,
    /// Limit of each run, in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    timeout_ms: u64,
}

impl RequestArgs {
    /// The headers to send (see [`request_headers`]) and the limit of each run.
    pub fn resolve(&self) -> Result<(Vec<(String, String)>, Duration), String> {
        Ok((
            request_headers(&self.headers)?,
            Duration::from_millis(self.timeout_ms),
        ))
    }
}

/// Exit code: the run or check failed.
pub const FAILED: u8 = 1;
/// Exit code: usage or connection problem.
pub const UNREACHABLE: u8 = 2;

/// The environment variable holding the bearer token.
pub const TOKEN_VAR: &str = "AGUI_TOKEN";

/// Accepts only an absolute `http` or `https` URL with a host; the error says what is
/// wrong and what is expected.
pub fn check_url(url: &str) -> Result<reqwest::Url, String> {
    let expected = "expected an absolute http(s) URL such as http://127.0.0.1:8000/agent";
    match reqwest::Url::parse(url.trim()) {
        Err(e) => Err(format!("{url:?} is not a URL ({e}): {expected}")),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => Err(format!(
            "{url:?} has scheme {:?}, not http or https: {expected}",
            u.scheme()
        )),
        Ok(u) if u.host_str().is_none_or(str::is_empty) => {
            Err(format!("{url:?} names no host: {expected}"))
        }
        Ok(u) => Ok(u),
    }
}

/// `Name: value` pairs from `--header`; one without a colon or with an empty name is an
/// error naming it.
pub fn parse_headers(headers: &[String]) -> Result<Vec<(String, String)>, String> {
    headers
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| format!("--header {h:?}: expected `Name: value`"))
        })
        .collect()
}

/// The `--header` pairs plus `Authorization: Bearer TOKEN` when `token` (the value of
/// `AGUI_TOKEN`) is set and not blank and no `--header` names `Authorization` already.
pub fn with_token(
    mut headers: Vec<(String, String)>,
    token: Option<&str>,
) -> Vec<(String, String)> {
    let token = token.map(str::trim).filter(|t| !t.is_empty());
    if let Some(token) = token
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        headers.push(("Authorization".to_owned(), format!("Bearer {token}")));
    }
    headers
}

/// The request headers of a network command: `--header` parsed, then the token from
/// `AGUI_TOKEN` added (see [`with_token`]).
pub fn request_headers(headers: &[String]) -> Result<Vec<(String, String)>, String> {
    let token = std::env::var(TOKEN_VAR).ok();
    Ok(with_token(parse_headers(headers)?, token.as_deref()))
}

/// A fresh random (v4) UUID, for message, run and thread ids.
pub use aguikit_core::id::random_uuid as fresh_id;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_http_urls_pass() {
        for ok in [
            "http://127.0.0.1:8000/agent",
            "https://example.com/agent?x=1",
            " http://localhost/ ",
        ] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        let e = check_url("not a url").unwrap_err();
        assert!(e.contains("\"not a url\" is not a URL"), "{e}");
        assert!(e.contains("absolute http(s) URL"), "{e}");
        assert!(check_url("/agent").is_err());
        assert!(check_url("127.0.0.1:8000/agent").is_err());
        let e = check_url("ftp://example.com/agent").unwrap_err();
        assert!(e.contains("scheme \"ftp\""), "{e}");
        assert!(check_url("file:///x").is_err());
        assert!(check_url("").is_err());
    }

    #[test]
    fn headers_parse_and_reject_what_is_not_a_header() {
        assert_eq!(
            parse_headers(&["X-A: 1".into(), "X-B:two: three".into()]).unwrap(),
            [
                ("X-A".to_owned(), "1".to_owned()),
                ("X-B".to_owned(), "two: three".to_owned())
            ]
        );
        assert!(parse_headers(&["no colon".into()]).is_err());
        assert!(parse_headers(&[": empty name".into()]).is_err());
    }

    #[test]
    fn the_token_is_added_unless_blank_or_overridden() {
        let given = vec![("X-A".to_owned(), "1".to_owned())];
        assert_eq!(
            with_token(given.clone(), Some("s3cret")),
            [
                ("X-A".to_owned(), "1".to_owned()),
                ("Authorization".to_owned(), "Bearer s3cret".to_owned())
            ]
        );
        assert_eq!(with_token(given.clone(), None), given);
        assert_eq!(with_token(given.clone(), Some("  ")), given);
        let explicit = vec![("authorization".to_owned(), "Basic abc".to_owned())];
        assert_eq!(with_token(explicit.clone(), Some("s3cret")), explicit);
    }

    #[test]
    fn fresh_ids_are_distinct_v4_uuids() {
        let (a, b) = (fresh_id(), fresh_id());
        assert_ne!(a, b);
        let u = uuid::Uuid::parse_str(&a).unwrap();
        assert_eq!(u.get_version_num(), 4);
    }
}
