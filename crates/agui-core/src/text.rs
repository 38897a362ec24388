//! Small text helpers shared by the crates: excerpts of bodies and frames for messages.

/// `text` cut to at most `max` characters (at a character boundary), with `…` appended
/// when cut.
///
/// ```
/// use agui_core::text::excerpt;
/// assert_eq!(excerpt("héllo", 2), "hé…");
/// assert_eq!(excerpt("héllo", 5), "héllo");
/// ```
pub fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn cuts_at_character_boundaries() {
        assert_eq!(excerpt("", 0), "");
        assert_eq!(excerpt("a", 0), "…");
        assert_eq!(excerpt("ab", 1), "a…");
        assert_eq!(excerpt("ééé", 2), "éé…");
        assert_eq!(excerpt("ééé", 3), "ééé");
    }
}
