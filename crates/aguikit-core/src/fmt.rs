//! How the aguikit crates write payloads and errors into their messages: [`excerpt`] cuts a
//! body or frame to a length fit for an error message, [`with_causes`] writes an error with
//! its chain of sources. The client, the OpenAI bridge and the `agui` command use them, so
//! that their messages read alike; use them for messages of your own in the same style.

/// `text` cut to at most `max` characters (at a character boundary), with `…` appended
/// when cut.
///
/// ```
/// use aguikit_core::fmt::excerpt;
/// assert_eq!(excerpt("héllo", 2), "hé…");
/// assert_eq!(excerpt("héllo", 5), "héllo");
/// ```
pub fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// An error with its chain of sources, `a: b: c` (a source whose text the message already
/// holds is left out: many errors repeat their source's text).
///
/// ```
/// use aguikit_core::fmt::with_causes;
/// let e = std::io::Error::other("connection reset");
/// assert_eq!(with_causes(&e), "connection reset");
/// ```
pub fn with_causes(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{excerpt, with_causes};

    #[derive(Debug)]
    struct Chain(&'static str, Option<Box<Chain>>);

    impl std::fmt::Display for Chain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Chain {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|c| c as _)
        }
    }

    #[test]
    fn causes_are_joined_once() {
        let e = Chain(
            "request failed",
            Some(Box::new(Chain(
                "request failed",
                Some(Box::new(Chain("connection refused", None))),
            ))),
        );
        assert_eq!(with_causes(&e), "request failed: connection refused");
        assert_eq!(with_causes(&Chain("alone", None)), "alone");
    }

    #[test]
    fn cuts_at_character_boundaries() {
        assert_eq!(excerpt("", 0), "");
        assert_eq!(excerpt("a", 0), "…");
        assert_eq!(excerpt("ab", 1), "a…");
        assert_eq!(excerpt("ééé", 2), "éé…");
        assert_eq!(excerpt("ééé", 3), "ééé");
    }
}
