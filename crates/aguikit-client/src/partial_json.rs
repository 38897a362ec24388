//! Incremental parsing of JSON that is still arriving: tool-call arguments stream in as
//! `TOOL_CALL_ARGS` deltas, and a UI wants to show what they say so far.
//!
//! [`PartialJson`] scans each delta once (linear in the total length, however small the
//! deltas) and keeps enough state to complete the text at any moment into valid JSON: open
//! strings are closed, a dangling escape is dropped, partial literals (`tr`) are finished,
//! numbers ending in `.`/`e`/sign get a `0`, members without a value (`{"a":`) and trailing
//! commas are dropped, and open containers are closed. This is what the reference client
//! passes to `onToolCallArgsEvent` as `partialToolCallArgs` (the untruncate-json algorithm).
//!
//! ```
//! use aguikit_client::partial_json::PartialJson;
//! let mut args = PartialJson::new();
//! args.push(r#"{"city": "Ber"#);
//! assert_eq!(args.completed().as_deref(), Some(r#"{"city": "Ber"}"#));
//! args.push(r#"lin", "days": [1, 2, "#);
//! assert_eq!(args.value(), Some(serde_json::json!({"city": "Berlin", "days": [1, 2]})));
//! args.push("3]}");
//! assert_eq!(args.value(), Some(serde_json::json!({"city": "Berlin", "days": [1, 2, 3]})));
//! ```

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Object: a key (or, unless after a comma, the end) comes next.
    ExpectKey { after_comma: bool },
    /// Object: reading a key.
    InKey,
    /// Object: a key was read, `:` comes next.
    ExpectColon,
    /// A value comes next (object: after `:`; array: after `[` or `,`).
    ExpectValue { after_comma: bool },
    /// Reading a value (a scalar or a nested container).
    InValue,
    /// A value was read; `,` or the end comes next.
    AfterValue,
}

#[derive(Debug, Clone)]
struct Container {
    kind: Kind,
    phase: Phase,
    /// Where to cut the text to drop the member being read: the comma before it, or just
    /// after the opening bracket.
    member_start: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    None,
    Str {
        escape: bool,
        /// Hex digits still expected in a `\u` escape.
        unicode: u8,
        /// Where the current escape starts.
        escape_start: usize,
        /// Where a complete `\uD800`–`\uDBFF` escape not yet followed by its low half starts.
        high_surrogate: Option<usize>,
    },
    Number {
        start: usize,
    },
    Literal {
        start: usize,
        word: &'static str,
    },
}

/// JSON text arriving in pieces, completable into valid JSON at any moment (see the
/// [module](self) docs).
#[derive(Debug, Clone)]
pub struct PartialJson {
    text: String,
    stack: Vec<Container>,
    token: Token,
    /// The top-level value has started.
    started: bool,
    /// The top-level value is complete.
    done: bool,
    /// The text is not JSON (or has something after the top-level value).
    broken: bool,
    /// Hex value of the `\u` escape being read.
    hex: u16,
}

impl Default for PartialJson {
    fn default() -> Self {
        PartialJson::new()
    }
}

impl PartialJson {
    /// Nothing received yet.
    pub fn new() -> Self {
        PartialJson {
            text: String::new(),
            stack: Vec::new(),
            token: Token::None,
            started: false,
            done: false,
            broken: false,
            hex: 0,
        }
    }

    /// Appends a piece of the text. Costs time linear in the piece.
    pub fn push(&mut self, delta: &str) {
        let base = self.text.len();
        self.text.push_str(delta);
        if self.broken {
            return;
        }
        for (offset, &b) in delta.as_bytes().iter().enumerate() {
            self.scan(b, base + offset);
            if self.broken {
                return;
            }
        }
    }

    /// The text received so far, as received.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the text so far can still become JSON.
    pub fn is_valid_prefix(&self) -> bool {
        !self.broken
    }

    /// The text completed into JSON text: `Some("")` when nothing of a value has arrived,
    /// `None` when the text is not (the start of) one JSON value. Costs time linear in the
    /// text.
    pub fn completed(&self) -> Option<String> {
        if self.broken {
            return None;
        }
        let mut cut = self.text.len();
        let mut suffix = String::new();
        let mut drop_member = false;
        match self.token {
            Token::Str {
                escape,
                unicode,
                escape_start,
                high_surrogate,
            } => {
                if self.top_phase() == Some(Phase::InKey) {
                    drop_member = true;
                } else {
                    if let Some(h) = high_surrogate {
                        cut = h;
                    } else if escape || unicode > 0 {
                        cut = escape_start;
                    }
                    suffix.push('"');
                }
            }
            Token::Number { start } => {
                let number = &self.text[start..];
                if number == "-" {
                    drop_member = true;
                } else if number.ends_with(['.', 'e', 'E', '+', '-']) {
                    suffix.push('0');
                }
            }
            Token::Literal { start, word } => {
                let have = &self.text[start..];
                match word.strip_prefix(have) {
                    Some(rest) => suffix.push_str(rest),
                    None => return None,
                }
            }
            Token::None => match self.stack.last() {
                Some(c) => match (c.kind, c.phase) {
                    (_, Phase::ExpectKey { after_comma: true })
                    | (Kind::Array, Phase::ExpectValue { after_comma: true })
                    | (Kind::Object, Phase::ExpectValue { .. })
                    | (_, Phase::ExpectColon | Phase::InKey) => drop_member = true,
                    _ => {}
                },
                None if !self.started => return Some(String::new()),
                None => {}
            },
        }
        if drop_member {
            match self.stack.last() {
                Some(c) => {
                    cut = c.member_start;
                    suffix.clear();
                }
                None => return Some(String::new()),
            }
        }
        let mut out = String::with_capacity(cut + suffix.len() + self.stack.len());
        out.push_str(&self.text[..cut]);
        out.push_str(&suffix);
        for c in self.stack.iter().rev() {
            out.push(match c.kind {
                Kind::Object => '}',
                Kind::Array => ']',
            });
        }
        Some(out)
    }

    /// The completed text parsed: what the arguments say so far. `None` before any value has
    /// started and when the text is not JSON.
    pub fn value(&self) -> Option<Value> {
        let text = self.completed()?;
        if text.is_empty() {
            return None;
        }
        serde_json::from_str(&text).ok()
    }

    fn top_phase(&self) -> Option<Phase> {
        self.stack.last().map(|c| c.phase)
    }

    fn set_phase(&mut self, phase: Phase) {
        if let Some(c) = self.stack.last_mut() {
            c.phase = phase;
        }
    }

    /// A value starts here; false (and broken) when none may.
    fn begin_value(&mut self) -> bool {
        match self.stack.last() {
            None if self.started => {
                self.broken = true;
                false
            }
            None => {
                self.started = true;
                true
            }
            Some(c) => match c.phase {
                Phase::ExpectValue { .. } => {
                    self.set_phase(Phase::InValue);
                    true
                }
                _ => {
                    self.broken = true;
                    false
                }
            },
        }
    }

    fn value_done(&mut self) {
        match self.stack.last() {
            None => self.done = true,
            Some(c) if c.phase == Phase::InKey => self.set_phase(Phase::ExpectColon),
            Some(_) => self.set_phase(Phase::AfterValue),
        }
    }

    fn scan(&mut self, b: u8, at: usize) {
        match self.token {
            Token::Str {
                escape,
                unicode,
                escape_start,
                high_surrogate,
            } => {
                let mut high = high_surrogate;
                if unicode > 0 {
                    let Some(digit) = (b as char).to_digit(16) else {
                        self.broken = true;
                        return;
                    };
                    self.hex = (self.hex << 4) | digit as u16;
                    let left = unicode - 1;
                    if left == 0 {
                        high = if (0xD800..0xDC00).contains(&self.hex) {
                            Some(escape_start)
                        } else {
                            None
                        };
                    }
                    self.token = Token::Str {
                        escape: false,
                        unicode: left,
                        escape_start,
                        high_surrogate: high,
                    };
                } else if escape {
                    if b == b'u' {
                        self.hex = 0;
                        self.token = Token::Str {
                            escape: false,
                            unicode: 4,
                            escape_start,
                            high_surrogate: high,
                        };
                    } else {
                        self.token = Token::Str {
                            escape: false,
                            unicode: 0,
                            escape_start,
                            high_surrogate: None,
                        };
                    }
                } else if b == b'\\' {
                    self.token = Token::Str {
                        escape: true,
                        unicode: 0,
                        escape_start: at,
                        high_surrogate: high,
                    };
                } else if b == b'"' {
                    self.token = Token::None;
                    self.value_done();
                } else {
                    self.token = Token::Str {
                        escape: false,
                        unicode: 0,
                        escape_start,
                        high_surrogate: None,
                    };
                }
                return;
            }
            Token::Number { .. } => {
                if matches!(b, b'0'..=b'9' | b'+' | b'-' | b'.' | b'e' | b'E') {
                    return;
                }
                self.token = Token::None;
                self.value_done();
            }
            Token::Literal { .. } => {
                if b.is_ascii_alphabetic() {
                    return;
                }
                self.token = Token::None;
                self.value_done();
            }
            Token::None => {}
        }
        self.structural(b, at);
    }

    fn structural(&mut self, b: u8, at: usize) {
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'{' | b'[' => {
                if self.begin_value() {
                    let (kind, phase) = if b == b'{' {
                        (Kind::Object, Phase::ExpectKey { after_comma: false })
                    } else {
                        (Kind::Array, Phase::ExpectValue { after_comma: false })
                    };
                    self.stack.push(Container {
                        kind,
                        phase,
                        member_start: at + 1,
                    });
                }
            }
            b'}' | b']' => {
                let kind = if b == b'}' { Kind::Object } else { Kind::Array };
                let closable = self.stack.last().is_some_and(|c| {
                    c.kind == kind
                        && match c.phase {
                            Phase::AfterValue => true,
                            Phase::ExpectKey { after_comma } => !after_comma,
                            Phase::ExpectValue { after_comma } => {
                                kind == Kind::Array && !after_comma
                            }
                            _ => false,
                        }
                });
                if !closable {
                    self.broken = true;
                    return;
                }
                self.stack.pop();
                self.value_done();
            }
            b',' => match self.stack.last_mut() {
                Some(c) if c.phase == Phase::AfterValue => {
                    c.phase = match c.kind {
                        Kind::Object => Phase::ExpectKey { after_comma: true },
                        Kind::Array => Phase::ExpectValue { after_comma: true },
                    };
                    c.member_start = at;
                }
                _ => self.broken = true,
            },
            b':' => match self.stack.last_mut() {
                Some(c) if c.phase == Phase::ExpectColon => {
                    c.phase = Phase::ExpectValue { after_comma: false };
                }
                _ => self.broken = true,
            },
            b'"' => {
                if matches!(self.top_phase(), Some(Phase::ExpectKey { .. })) {
                    self.set_phase(Phase::InKey);
                } else if !self.begin_value() {
                    return;
                }
                self.token = Token::Str {
                    escape: false,
                    unicode: 0,
                    escape_start: at,
                    high_surrogate: None,
                };
            }
            b'-' | b'0'..=b'9' => {
                if self.begin_value() {
                    self.token = Token::Number { start: at };
                }
            }
            b't' | b'f' | b'n' => {
                if self.begin_value() {
                    let word = match b {
                        b't' => "true",
                        b'f' => "false",
                        _ => "null",
                    };
                    self.token = Token::Literal { start: at, word };
                }
            }
            _ => self.broken = true,
        }
    }
}

/// Completes a truncated JSON text in one go (see [`PartialJson::completed`]).
///
/// ```
/// use aguikit_client::partial_json::untruncate;
/// assert_eq!(untruncate("[1, 2, ").as_deref(), Some("[1, 2]"));
/// assert_eq!(untruncate(r#"{"x": 20, "y": "#).as_deref(), Some(r#"{"x": 20}"#));
/// assert_eq!(untruncate("123.").as_deref(), Some("123.0"));
/// ```
pub fn untruncate(text: &str) -> Option<String> {
    let mut p = PartialJson::new();
    p.push(text);
    p.completed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(s: &str) -> Option<String> {
        untruncate(s)
    }

    #[test]
    fn completes_like_untruncate_json() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("   ", ""),
            ("[1, 2", "[1, 2]"),
            (r#""Hello, Wor"#, r#""Hello, Wor""#),
            (r#"{"votes": [true, fa"#, r#"{"votes": [true, false]}"#),
            ("123.", "123.0"),
            ("[1, 2, ", "[1, 2]"),
            (r#""abc\"#, r#""abc""#),
            (r#"{"x": 20, "y": "#, r#"{"x": 20}"#),
            ("{", "{}"),
            (r#"{"a"#, "{}"),
            (r#"{"a""#, "{}"),
            (r#"{"a":"#, "{}"),
            (r#"{"a": -"#, "{}"),
            (r#"{"a": 1e"#, r#"{"a": 1e0}"#),
            (r#"{"a": 1e-"#, r#"{"a": 1e-0}"#),
            (r#"{"a": {"b": 1, "#, r#"{"a": {"b": 1}}"#),
            (r#"{"a": {"#, r#"{"a": {}}"#),
            (r#"{"a": ["#, r#"{"a": []}"#),
            (r#"{"a": "b"#, r#"{"a": "b"}"#),
            (r#"{"a": "\u00"#, r#"{"a": ""}"#),
            (r#"{"a": "x\u00e9"#, r#"{"a": "x\u00e9"}"#),
            (r#"["\ud83d"#, r#"[""]"#),
            (r#"["\ud83d\ude"#, r#"[""]"#),
            (r#"["\ud83d\ude00"#, r#"["\ud83d\ude00"]"#),
            ("[1 ", "[1 ]"),
            ("nu", "null"),
            ("-", ""),
            (
                "[{}, [], {\"k\": [null, tr",
                "[{}, [], {\"k\": [null, true]}]",
            ),
            ("{\"a\":1}", "{\"a\":1}"),
        ];
        for (input, want) in cases {
            let got = done(input);
            assert_eq!(got.as_deref(), Some(*want), "input {input:?}");
            if !want.is_empty() {
                serde_json::from_str::<Value>(want)
                    .unwrap_or_else(|e| panic!("{want:?} is not JSON: {e}"));
            }
        }
    }

    #[test]
    fn rejects_what_cannot_become_json() {
        for input in [
            "x",
            "{]",
            "[1}",
            "{\"a\" 1",
            "[,",
            "{\"a\":1}{",
            "{1:2}",
            "{\"a\": }",
            "tx",
        ] {
            assert_eq!(done(input), None, "input {input:?}");
        }
    }

    #[test]
    fn every_prefix_of_a_document_completes_to_json() {
        let doc = r#"{"city": "Zürich \"the\" \u00e9 😀", "n": -12.5e+3, "ok": [true, false, null, {"deep": [1, {"x": "y"}]}], "empty": {}, "arr": []}"#;
        for end in (0..=doc.len()).filter(|&i| doc.is_char_boundary(i)) {
            let text = done(&doc[..end]).unwrap_or_else(|| panic!("prefix {end} broke"));
            if !text.is_empty() {
                serde_json::from_str::<Value>(&text)
                    .unwrap_or_else(|e| panic!("prefix {:?} -> {text:?}: {e}", &doc[..end]));
            }
        }
        assert_eq!(
            done(doc).map(|t| serde_json::from_str::<Value>(&t).unwrap()),
            Some(serde_json::from_str::<Value>(doc).unwrap())
        );
    }

    #[test]
    fn incremental_equals_one_shot_for_any_split() {
        let doc = r#"{"a": [1, "two\n", {"b": null}], "c": "\u0041"}"#;
        for size in 1..8 {
            let mut p = PartialJson::new();
            let mut i = 0;
            while i < doc.len() {
                let j = (i + size).min(doc.len());
                p.push(&doc[i..j]);
                assert_eq!(p.completed(), done(&doc[..j]), "size {size} at {j}");
                i = j;
            }
            assert_eq!(p.text(), doc);
        }
    }

    #[test]
    fn value_is_none_before_anything() {
        let mut p = PartialJson::new();
        assert_eq!(p.value(), None);
        p.push(" ");
        assert_eq!(p.value(), None);
        p.push("{");
        assert_eq!(p.value(), Some(serde_json::json!({})));
        assert!(p.is_valid_prefix());
    }
}
