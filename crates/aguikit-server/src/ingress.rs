//! Checks on what a client sends, before anything runs or is stored: nesting depth and id
//! lengths, so that whatever is accepted can also be read back (the store decodes events
//! with serde_json's 128-level limit, and a stored `RUN_STARTED` embeds the input one
//! level deeper).

use aguikit_core::{Message, RunAgentInput};

/// How deep a JSON document nests, and where its deepest point is when it passes `max`.
///
/// Returns `Err(path)` with a JSONPath-like location (`forwardedProps.a[0][0]`, cut to a
/// readable length) of the first value nested deeper than `max` levels. Strings are skipped
/// correctly (escaped quotes included); the input is assumed to be otherwise well-formed
/// JSON or is rejected later by the parser.
pub(crate) fn check_depth(bytes: &[u8], max: usize) -> Result<(), String> {
    // Nothing can nest deeper than the number of opening brackets (counting those inside
    // strings too), and a well-formed document no deeper than half its length (each level
    // opens and closes; a malformed one is refused by the parser). The length settles most
    // events, and a count that vectorises almost every other document, without the walk.
    if bytes.len() / 2 <= max || bytes.iter().filter(|&&b| b == b'{' || b == b'[').count() <= max {
        return Ok(());
    }
    // One entry per open container: the key or index leading to it.
    let mut path: Vec<Step> = Vec::new();
    // Per open container: whether it is an array and the index of the current element.
    let mut frames: Vec<(bool, usize)> = Vec::new();
    let mut last_key: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
                let end = i.min(bytes.len());
                // A string directly followed by ':' is a key.
                let mut j = end + 1;
                while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                    j += 1;
                }
                if bytes.get(j) == Some(&b':') {
                    last_key = Some((start, end));
                }
            }
            open @ (b'{' | b'[') => {
                let step = match frames.last() {
                    Some((true, index)) => Step::Index(*index),
                    Some((false, _)) => match last_key.take() {
                        Some((s, e)) => Step::Key(s, e),
                        None => Step::Index(0),
                    },
                    None => Step::Root,
                };
                path.push(step);
                frames.push((open == b'[', 0));
                if frames.len() > max {
                    return Err(render(bytes, &path));
                }
            }
            b'}' | b']' => {
                frames.pop();
                path.pop();
            }
            b',' => {
                if let Some((true, index)) = frames.last_mut() {
                    *index += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// How much of a path [`check_depth`] names (in bytes, before the ellipsis).
pub(crate) const MAX_PATH_BYTES: usize = 200;

enum Step {
    Root,
    Key(usize, usize),
    Index(usize),
}

fn render(bytes: &[u8], path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Root => {}
            Step::Key(s, e) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&String::from_utf8_lossy(&bytes[*s..*e]));
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
        if out.len() > MAX_PATH_BYTES {
            // Keys are client text: cut where a character starts, never inside one.
            out.truncate(out.floor_char_boundary(MAX_PATH_BYTES));
            out.push('…');
            break;
        }
    }
    if out.is_empty() {
        "(the body)".into()
    } else {
        out
    }
}

/// The first id of `input` longer than `max` bytes: its field path and length.
pub(crate) fn long_id(input: &RunAgentInput, max: usize) -> Option<(String, usize)> {
    let check = |field: String, id: &str| (id.len() > max).then_some((field, id.len()));
    if let Some(hit) = check("threadId".into(), &input.thread_id)
        .or_else(|| check("runId".into(), &input.run_id))
        .or_else(|| {
            input
                .parent_run_id
                .as_deref()
                .and_then(|p| check("parentRunId".into(), p))
        })
    {
        return Some(hit);
    }
    for (i, m) in input.messages.iter().enumerate() {
        if let Some(hit) = check(format!("messages[{i}].id"), m.id()) {
            return Some(hit);
        }
        if let Message::Assistant(a) = m {
            for (k, call) in a.tool_calls.iter().flatten().enumerate() {
                if let Some(hit) = check(format!("messages[{i}].toolCalls[{k}].id"), &call.id) {
                    return Some(hit);
                }
            }
        }
    }
    for (i, r) in input.resume().iter().enumerate() {
        if let Some(hit) = check(format!("resume[{i}].interruptId"), &r.interrupt_id) {
            return Some(hit);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth() {
        assert!(check_depth(br#"{"a":[1,{"b":2}]}"#, 3).is_ok());
        assert_eq!(check_depth(br#"{"a":[1,{"b":2}]}"#, 2).unwrap_err(), "a[1]");
        let deep = format!(
            r#"{{"threadId":"t","forwardedProps":{}{}}}"#,
            "[".repeat(126),
            "]".repeat(126)
        );
        let err = check_depth(deep.as_bytes(), 64).unwrap_err();
        assert!(err.starts_with("forwardedProps[0][0]"), "{err}");
        // Brackets inside strings do not count, escaped quotes do not end strings.
        assert!(check_depth(br#"{"a":"[[[[\"[[[[","b":{"c":1}}"#, 2).is_ok());
        assert_eq!(check_depth(b"[[[]]]", 2).unwrap_err(), "[0][0]");
        assert!(check_depth(b"", 1).is_ok());
        assert!(check_depth(b"[[]]", 2).is_ok());
        // Past the bracket count's shortcut: brackets in strings count there, not here.
        assert!(check_depth(br#"{"a":"[[[[","b":{"c":[1]}}"#, 3).is_ok());
        assert_eq!(
            check_depth(br#"{"a":"[[[[","b":{"c":[[1]]}}"#, 3).unwrap_err(),
            "b.c[0]"
        );
        // Unterminated input does not panic.
        assert!(check_depth(b"{\"a", 1).is_ok());
        assert!(check_depth(b"\"\\", 1).is_ok());
    }

    /// A document of `depth` levels along `steps` (a key for an object, `None` for an
    /// array), with `1` at the bottom.
    fn nest(steps: &[Option<String>]) -> String {
        let mut doc = "1".to_owned();
        for step in steps.iter().rev() {
            doc = match step {
                Some(key) => format!("{{{}: {doc}}}", serde_json::to_string(key).unwrap()),
                None => format!("[0, {doc}]"),
            };
        }
        doc
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// Any keys (quotes, escapes, multi-byte and astral characters), any nesting of
        /// objects and arrays, any limit: no panic, the verdict follows the depth, and the
        /// path named is valid text of bounded length.
        #[test]
        fn any_unicode_path_at_any_depth(
            steps in proptest::collection::vec(
                proptest::option::weighted(0.7, proptest::prelude::any::<String>()),
                0..24,
            ),
            long in proptest::option::of((150usize..260, proptest::prelude::any::<char>())),
            max in 2usize..20,
        ) {
            let mut steps = steps;
            // Keys near the cut, ending in a character of any width.
            if let Some((n, c)) = long {
                steps.insert(0, Some(format!("{}{c}", "k".repeat(n))));
            }
            let doc = nest(&steps);
            let depth = steps.len();
            match check_depth(doc.as_bytes(), max) {
                Ok(()) => proptest::prop_assert!(depth <= max, "{depth} > {max}: {doc}"),
                Err(path) => {
                    proptest::prop_assert!(depth > max, "{depth} <= {max}: {doc}");
                    proptest::prop_assert!(path.len() <= MAX_PATH_BYTES + '…'.len_utf8());
                }
            }
        }

        /// Arbitrary bytes (not JSON, broken UTF-8, unterminated strings): no panic.
        #[test]
        fn any_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512), max in 1usize..8) {
            let _ = check_depth(&bytes, max);
        }
    }

    #[test]
    fn a_path_is_cut_where_a_character_starts() {
        for prefix in 195..205 {
            let key = format!("{}é€😀", "a".repeat(prefix));
            let doc = nest(&[Some(key), None, None, None]);
            let path = check_depth(doc.as_bytes(), 2).unwrap_err();
            assert!(path.ends_with('…'), "{path}");
            assert!(path.len() <= MAX_PATH_BYTES + 3, "{}", path.len());
        }
    }
}
