//! A2UI in model output: `<a2ui-json>` blocks between text, read all at once, and the repair
//! of the small JSON slips models make (trailing commas, typographic quotes).

use crate::stream::{CLOSE_TAG, OPEN_TAG};
use serde_json::Value;

/// One part of a model's answer: the text before a block, and the block's messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// The text (trimmed).
    pub text: String,
    /// The block's messages (`None` for the text after the last block).
    pub a2ui: Option<Vec<Value>>,
}

/// Why an answer could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError(pub String);

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TextError {}

/// Whether the text holds at least one complete block (an opening tag, then a closing one).
pub fn has_parts(text: &str) -> bool {
    text.find(OPEN_TAG)
        .is_some_and(|i| text[i + OPEN_TAG.len()..].contains(CLOSE_TAG))
}

/// Splits an answer into its parts. An answer without a complete block, an empty block, or
/// a block that is not JSON (after [`fix_payload`]) is an error.
pub fn parse_full(text: &str) -> Result<Vec<Part>, TextError> {
    if !has_parts(text) {
        return Err(TextError(format!(
            "the A2UI tags '{OPEN_TAG}' and '{CLOSE_TAG}' are not found in response"
        )));
    }
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(OPEN_TAG) {
        let after = &rest[open + OPEN_TAG.len()..];
        let Some(close) = after.find(CLOSE_TAG) else {
            break;
        };
        let body = strip_fences(&after[..close]);
        if body.trim().is_empty() {
            return Err(TextError("A2UI JSON part is empty".into()));
        }
        let messages = fix_payload(&body)?;
        parts.push(Part {
            text: rest[..open].trim().to_string(),
            a2ui: Some(messages),
        });
        rest = &after[close + CLOSE_TAG.len()..];
    }
    let tail = rest.trim();
    if !tail.is_empty() {
        parts.push(Part {
            text: tail.to_string(),
            a2ui: None,
        });
    }
    Ok(parts)
}

fn strip_fences(body: &str) -> String {
    body.lines()
        .filter(|l| {
            let t = l.trim();
            !(t.starts_with("```") && t[3..].chars().all(|c| c.is_ascii_alphanumeric()))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads a block's JSON as a list of messages, repairing what models commonly get wrong:
/// typographic quotes become ASCII ones, commas before a closing bracket go, and a single
/// object becomes a one-element list.
pub fn fix_payload(text: &str) -> Result<Vec<Value>, TextError> {
    let normalized: String = text
        .chars()
        .map(|c| match c {
            '\u{201C}' | '\u{201D}' => '"',
            '\u{2018}' | '\u{2019}' => '\'',
            other => other,
        })
        .collect();
    let cleaned = drop_trailing_commas(&normalized);
    let v: Value = serde_json::from_str(cleaned.trim())
        .map_err(|e| TextError(format!("Failed to parse the A2UI JSON: {e}")))?;
    Ok(match v {
        Value::Array(items) => items,
        other => vec![other],
    })
}

/// Removes a comma that is followed (after whitespace) by `]` or `}`, outside strings.
fn drop_trailing_commas(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_str = false;
    let mut escape = false;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_str {
            out.push(c);
            if escape {
                escape = false;
            } else if c == '\\' {
                escape = true;
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        if c == '"' {
            in_str = true;
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some(']') | Some('}')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_and_repairs() {
        let p = parse_full("Hi\n<a2ui-json>[{\"id\": 1},]</a2ui-json>\nBye").unwrap();
        assert_eq!(p[0].text, "Hi");
        assert_eq!(p[0].a2ui, Some(vec![json!({"id": 1})]));
        assert_eq!(p[1].text, "Bye");
        assert!(parse_full("none").is_err());
        assert!(
            parse_full("<a2ui-json> </a2ui-json>")
                .unwrap_err()
                .0
                .contains("empty")
        );
        assert!(
            parse_full("<a2ui-json>x</a2ui-json>")
                .unwrap_err()
                .0
                .contains("Failed to parse")
        );
        assert_eq!(
            fix_payload("{\"a\": \u{201C}b\u{201D}, \"c\": \"d,]\",}").unwrap(),
            vec![json!({"a": "b", "c": "d,]"})]
        );
        assert!(has_parts("a <a2ui-json>[]</a2ui-json>"));
        assert!(!has_parts("a <a2ui-json> b"));
    }
}
