//! Comparing two event streams: two recordings, two runs of a thread, or a recording and
//! what an agent answers when its inputs are sent again (`agui diff`, `agui replay`).
//!
//! [`compare`] finds the first event where two streams part ([`Divergence`]: the event's
//! index, the JSON Pointer of the first field that differs, both values) and folds each
//! stream with the engine ([`Folded`]: messages, state, open interrupts), saying whether
//! the folds are equal. [`unified_diff`] shows two texts (the folds, pretty-printed) as a
//! unified diff.
//!
//! By default ([`DiffOptions::default`]) the comparison leaves out what differs between two
//! runs of one conversation by nature: ids ([`ID_FIELDS`]) are compared by the order in
//! which each stream first uses them (the first id a stream names is `#1` in it, wherever
//! it appears again), not by their values, and `timestamp` fields are left out.
//! [`DiffOptions::exact`] compares everything as it is.
//!
//! ```
//! use aguikit_core::diff::{DiffOptions, compare};
//! use serde_json::json;
//! let a = [
//!     json!({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}),
//!     json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "Hello"}),
//!     json!({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}),
//! ];
//! let b = [
//!     json!({"type": "RUN_STARTED", "threadId": "t2", "runId": "r2", "timestamp": 5}),
//!     json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m9", "delta": "Hi"}),
//!     json!({"type": "RUN_FINISHED", "threadId": "t2", "runId": "r2"}),
//! ];
//! let c = compare(&a[..], &b[..], &DiffOptions::default());
//! let d = c.divergence.as_ref().unwrap();
//! assert_eq!((d.index, d.path.as_str()), (1, "/delta"));
//! assert_eq!((d.left.as_ref().unwrap(), d.right.as_ref().unwrap()), (&json!("Hello"), &json!("Hi")));
//! assert!(!c.messages_equal && c.state_equal);
//! // Streams that differ only in their ids and timestamps are equal, unless compared exactly.
//! let mut b = b;
//! b[1]["delta"] = json!("Hello");
//! assert!(compare(&a[..], &b[..], &DiffOptions::default()).is_equal());
//! assert!(!compare(&a[..], &b[..], &DiffOptions::exact()).is_equal());
//! ```

use crate::engine::pipeline::Pipeline;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The fields whose values are ids: compared by their order of first appearance unless
/// [`DiffOptions::exact`].
pub const ID_FIELDS: &[&str] = &[
    "id",
    "threadId",
    "runId",
    "parentRunId",
    "messageId",
    "parentMessageId",
    "toolCallId",
    "parentToolCallId",
    "subagentRunId",
    "parentSubagentRunId",
    "interruptId",
];

/// How two streams are compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffOptions {
    /// Compare ids by value (else by their order of first appearance, see the module).
    pub exact_ids: bool,
    /// Field names left out of the comparison wherever they appear (in events and folds).
    pub ignore: Vec<String>,
}

impl Default for DiffOptions {
    /// Ids by order of appearance; `timestamp` left out.
    fn default() -> Self {
        DiffOptions {
            exact_ids: false,
            ignore: vec!["timestamp".to_owned()],
        }
    }
}

impl DiffOptions {
    /// Everything compared as it is: ids by value, no field left out.
    pub fn exact() -> Self {
        DiffOptions {
            exact_ids: true,
            ignore: Vec::new(),
        }
    }
}

/// Rewrites one stream's values for comparison: ids renamed `#N` by their order of first
/// appearance in the stream, ignored fields removed. One per stream, fed in stream order.
#[derive(Debug, Clone)]
pub struct Normaliser {
    options: DiffOptions,
    ids: HashMap<String, String>,
}

impl Normaliser {
    /// A normaliser that has seen no id yet.
    pub fn new(options: &DiffOptions) -> Self {
        Normaliser {
            options: options.clone(),
            ids: HashMap::new(),
        }
    }

    /// `value` as compared.
    pub fn normalise(&mut self, value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut out = Map::with_capacity(map.len());
                for (k, v) in map {
                    if self.options.ignore.iter().any(|i| i == k) {
                        continue;
                    }
                    let v = match v {
                        Value::String(id)
                            if !self.options.exact_ids && ID_FIELDS.contains(&k.as_str()) =>
                        {
                            Value::String(self.id(id))
                        }
                        v => self.normalise(v),
                    };
                    out.insert(k.clone(), v);
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.normalise(v)).collect()),
            v => v.clone(),
        }
    }

    /// The name of id `id` in this stream.
    fn id(&mut self, id: &str) -> String {
        let next = self.ids.len() + 1;
        self.ids
            .entry(id.to_owned())
            .or_insert_with(|| format!("#{next}"))
            .clone()
    }
}

/// Where two streams part: the first event that differs, and in it the first field.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Divergence {
    /// The event's index (from 0) in both streams.
    pub index: usize,
    /// The event's type in the left stream (`None`: the left stream ended before it).
    pub left_type: Option<String>,
    /// The event's type in the right stream (`None`: the right stream ended before it).
    pub right_type: Option<String>,
    /// The JSON Pointer of the first field that differs within the event (`""`: the whole
    /// event, when a stream has none at this index).
    pub path: String,
    /// The left stream's value there, as it is in the stream (`None`: absent).
    pub left: Option<Value>,
    /// The right stream's value there (`None`: absent).
    pub right: Option<Value>,
    /// The left value as compared, when that is not the value itself (an id's `#N`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_compared: Option<Value>,
    /// The right value as compared, when that is not the value itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right_compared: Option<Value>,
}

/// A stream folded by the engine (chunks expanded, verified, applied).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Folded {
    /// How many events the stream has (its history not counted).
    pub events: usize,
    /// The messages, as the engine folds them; after a history, only those the events added
    /// or changed.
    pub messages: Value,
    /// The state.
    pub state: Value,
    /// The interrupts the last run left open.
    pub pending_interrupts: Value,
    /// Why the fold stopped before the end (the event and the rule), if it did: the fold is
    /// what came before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One side of a comparison: its events, and the history they follow (the thread's earlier
/// runs, folded first but not compared event by event).
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// Events folded before [`events`](Self::events), not compared.
    pub history: &'a [Value],
    /// The events compared.
    pub events: &'a [Value],
}

impl<'a> From<&'a [Value]> for Side<'a> {
    fn from(events: &'a [Value]) -> Self {
        Side {
            history: &[],
            events,
        }
    }
}

/// What [`compare`] found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The first divergence of the events, `None` when they are equal (as compared).
    pub divergence: Option<Divergence>,
    /// The left stream folded.
    pub left: Folded,
    /// The right stream folded.
    pub right: Folded,
    /// Whether the folded messages are equal (as compared).
    pub messages_equal: bool,
    /// Whether the folded states are equal (as compared).
    pub state_equal: bool,
    /// Whether the open interrupts are equal (as compared).
    pub interrupts_equal: bool,
    /// The left fold as compared (ids renamed, ignored fields left out).
    #[serde(skip)]
    pub left_compared: Folded,
    /// The right fold as compared.
    #[serde(skip)]
    pub right_compared: Folded,
}

impl Comparison {
    /// Whether the events are equal (as compared); then the folds are too.
    pub fn is_equal(&self) -> bool {
        self.divergence.is_none()
    }

    /// Whether the folds (messages, state, open interrupts) are equal, whatever the events
    /// (deltas split otherwise, other ids...).
    pub fn folds_equal(&self) -> bool {
        self.messages_equal && self.state_equal && self.interrupts_equal
    }
}

/// Compares two streams: the first divergence of their events, and their folds.
pub fn compare<'a>(
    left: impl Into<Side<'a>>,
    right: impl Into<Side<'a>>,
    options: &DiffOptions,
) -> Comparison {
    let (left, right) = (left.into(), right.into());
    let (mut nl, mut nr) = (Normaliser::new(options), Normaliser::new(options));
    let mut divergence = None;
    let n = left.events.len().max(right.events.len());
    for index in 0..n {
        // Both normalisers see every event in order, so ids keep their names.
        let l = left.events.get(index);
        let r = right.events.get(index);
        let lc = l.map(|v| nl.normalise(v));
        let rc = r.map(|v| nr.normalise(v));
        if divergence.is_some() {
            continue;
        }
        divergence = match (&lc, &rc) {
            (Some(a), Some(b)) => first_difference(a, b).map(|path| {
                let at = |v: Option<&Value>| v.and_then(|v| v.pointer(&path)).cloned();
                let (left_v, right_v) = (at(l), at(r));
                let (lcv, rcv) = (a.pointer(&path).cloned(), b.pointer(&path).cloned());
                Divergence {
                    index,
                    left_type: type_of(l),
                    right_type: type_of(r),
                    path,
                    left_compared: lcv.filter(|c| Some(c) != left_v.as_ref()),
                    right_compared: rcv.filter(|c| Some(c) != right_v.as_ref()),
                    left: left_v,
                    right: right_v,
                }
            }),
            _ => Some(Divergence {
                index,
                left_type: type_of(l),
                right_type: type_of(r),
                path: String::new(),
                left: l.cloned(),
                right: r.cloned(),
                left_compared: None,
                right_compared: None,
            }),
        };
    }
    let (lf, rf) = (fold(left), fold(right));
    let (lc, rc) = (compared(&lf, &mut nl), compared(&rf, &mut nr));
    Comparison {
        divergence,
        messages_equal: lc.messages == rc.messages,
        state_equal: lc.state == rc.state,
        interrupts_equal: lc.pending_interrupts == rc.pending_interrupts,
        left: lf,
        right: rf,
        left_compared: lc,
        right_compared: rc,
    }
}

/// A fold as compared, by the normaliser of its stream.
fn compared(f: &Folded, n: &mut Normaliser) -> Folded {
    Folded {
        events: f.events,
        messages: n.normalise(&f.messages),
        state: n.normalise(&f.state),
        pending_interrupts: n.normalise(&f.pending_interrupts),
        error: f.error.clone(),
    }
}

fn type_of(v: Option<&Value>) -> Option<String> {
    v.map(|v| {
        v.get("type")
            .and_then(Value::as_str)
            .unwrap_or("(no type)")
            .to_owned()
    })
}

/// Folds a side with the engine: its history, then its events. A stream that breaks a
/// rule is folded up to that event ([`Folded::error`] names it).
///
/// With a history, [`Folded::messages`] holds only what the events added or changed: two
/// runs of a thread are compared by what each said, not by the conversation before them.
pub fn fold(side: Side<'_>) -> Folded {
    let mut p = Pipeline::new();
    let mut error = None;
    let history = side.history.len();
    // The history's messages, by id, as they stood before the events.
    let mut before: Option<HashMap<String, Value>> = None;
    for (i, v) in side.history.iter().chain(side.events).enumerate() {
        if i == history && history > 0 {
            before = Some(messages_by_id(&p));
        }
        if let Err(e) = p.push_value(v.clone()) {
            error = Some(if i < history {
                format!(
                    "history event {i} ({}): {}: {}",
                    e.event_type,
                    e.rule(),
                    e.kind
                )
            } else {
                format!(
                    "event {} ({}): {}: {}",
                    i - history,
                    e.event_type,
                    e.rule(),
                    e.kind
                )
            });
            break;
        }
    }
    if error.is_none()
        && let Err(e) = p.finish()
    {
        error = Some(format!("end of stream: {}: {}", e.rule(), e.kind));
    }
    let a = p.applier();
    let mut messages: Vec<Value> = a
        .messages()
        .iter()
        .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
        .collect();
    if let Some(before) = before {
        messages.retain(|m| {
            let id = m.get("id").and_then(Value::as_str).unwrap_or("");
            before.get(id) != Some(m)
        });
    }
    Folded {
        events: side.events.len(),
        messages: Value::Array(messages),
        state: a.state().clone(),
        pending_interrupts: serde_json::to_value(a.pending_interrupts()).unwrap_or(Value::Null),
        error,
    }
}

/// The pipeline's messages so far, by id.
fn messages_by_id(p: &Pipeline) -> HashMap<String, Value> {
    p.applier()
        .messages()
        .iter()
        .map(|m| {
            (
                m.id().to_owned(),
                serde_json::to_value(m).unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// The JSON Pointer of the first place where `a` and `b` differ (`None`: equal). Objects
/// are walked in `a`'s key order, then `b`'s keys that `a` lacks; arrays by index.
pub fn first_difference(a: &Value, b: &Value) -> Option<String> {
    let mut path = String::new();
    if walk(a, b, &mut path) {
        Some(path)
    } else {
        None
    }
}

/// Whether `a` and `b` differ; if so, `path` is extended to where.
fn walk(a: &Value, b: &Value, path: &mut String) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k)));
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => {
                        let len = path.len();
                        push_token(path, k);
                        if walk(p, q, path) {
                            return true;
                        }
                        path.truncate(len);
                    }
                    _ => {
                        push_token(path, k);
                        return true;
                    }
                }
            }
            false
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let len = path.len();
                path.push('/');
                path.push_str(&i.to_string());
                match (x.get(i), y.get(i)) {
                    (Some(p), Some(q)) => {
                        if walk(p, q, path) {
                            return true;
                        }
                        path.truncate(len);
                    }
                    _ => return true,
                }
            }
            false
        }
        (a, b) => a != b,
    }
}

/// Appends `/key` to a JSON Pointer, escaped (`~0`, `~1`).
fn push_token(path: &mut String, key: &str) {
    path.push('/');
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// One line of a [`unified_diff`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// In both texts.
    Same(&'a str),
    /// Only in the left text.
    Left(&'a str),
    /// Only in the right text.
    Right(&'a str),
}

/// A group of changed lines with their context: what a unified diff's `@@` block shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk<'a> {
    /// The first left line shown (from 1; the line before, for an empty range).
    pub left_start: usize,
    /// Left lines shown.
    pub left_len: usize,
    /// The first right line shown.
    pub right_start: usize,
    /// Right lines shown.
    pub right_len: usize,
    /// The lines.
    pub lines: Vec<Line<'a>>,
}

/// The edit script from `a`'s lines to `b`'s (a shortest one, by Myers' algorithm, past
/// the common start and end; past 1000 changes, the middle is replaced whole).
pub fn line_diff<'a>(a: &'a str, b: &'a str) -> Vec<Line<'a>> {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let start = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let end = a[start..]
        .iter()
        .rev()
        .zip(b[start..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[start..a.len() - end], &b[start..b.len() - end]);
    let mut out: Vec<Line<'a>> = a[..start].iter().map(|l| Line::Same(l)).collect();
    out.extend(myers(am, bm));
    out.extend(a[a.len() - end..].iter().map(|l| Line::Same(l)));
    out
}

/// The most edits [`myers`] searches for before replacing the middle whole (its work and
/// memory grow with the square of the edits).
const MAX_EDITS: usize = 1000;

/// Myers' shortest edit script between `a` and `b`.
fn myers<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Line<'a>> {
    let whole = || {
        let mut out: Vec<Line<'a>> = a.iter().map(|l| Line::Left(l)).collect();
        out.extend(b.iter().map(|l| Line::Right(l)));
        out
    };
    if a.is_empty() || b.is_empty() {
        return whole();
    }
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m).min(MAX_EDITS as isize);
    // v[k + max]: the furthest x reached on diagonal k = x - y.
    let at = |k: isize| (k + max) as usize;
    let mut v = vec![0isize; 2 * max as usize + 2];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut found = None;
    'search: for d in 0..=max {
        trace.push(v.clone());
        for k in (-d..=d).step_by(2) {
            let mut x = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
                v[at(k + 1)]
            } else {
                v[at(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[at(k)] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'search;
            }
        }
    }
    let Some(depth) = found else {
        return whole();
    };
    // Back through the trace, from the end.
    let mut out = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (1..=depth).rev() {
        let v = &trace[d as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && v[at(k - 1)] < v[at(k + 1)]) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = v[at(prev_k)];
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            x -= 1;
            y -= 1;
            out.push(Line::Same(a[x as usize]));
        }
        if x == prev_x {
            y -= 1;
            out.push(Line::Right(b[y as usize]));
        } else {
            x -= 1;
            out.push(Line::Left(a[x as usize]));
        }
    }
    while x > 0 && y > 0 {
        x -= 1;
        y -= 1;
        out.push(Line::Same(a[x as usize]));
    }
    out.reverse();
    out
}

/// The changes from `a` to `b` in hunks, each with up to `context` unchanged lines around
/// (none when the texts are equal).
pub fn hunks<'a>(a: &'a str, b: &'a str, context: usize) -> Vec<Hunk<'a>> {
    let lines = line_diff(a, b);
    let changed: Vec<usize> = (0..lines.len())
        .filter(|&i| !matches!(lines[i], Line::Same(_)))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < changed.len() {
        let from = changed[i].saturating_sub(context);
        let mut last = changed[i];
        while i + 1 < changed.len() && changed[i + 1] <= last + 2 * context + 1 {
            i += 1;
            last = changed[i];
        }
        let to = (last + context + 1).min(lines.len());
        // Line numbers of the hunk's first line on each side.
        let (mut l, mut r) = (1, 1);
        for line in &lines[..from] {
            match line {
                Line::Same(_) => {
                    l += 1;
                    r += 1;
                }
                Line::Left(_) => l += 1,
                Line::Right(_) => r += 1,
            }
        }
        let shown = &lines[from..to];
        let left_len = shown
            .iter()
            .filter(|x| !matches!(x, Line::Right(_)))
            .count();
        let right_len = shown.iter().filter(|x| !matches!(x, Line::Left(_))).count();
        out.push(Hunk {
            left_start: if left_len == 0 { l - 1 } else { l },
            left_len,
            right_start: if right_len == 0 { r - 1 } else { r },
            right_len,
            lines: shown.to_vec(),
        });
        i += 1;
    }
    out
}

/// `a` and `b` as a unified diff (`--- LEFT`, `+++ RIGHT`, `@@` hunks with 3 lines of
/// context); empty when they are equal.
///
/// ```
/// let d = aguikit_core::diff::unified_diff("a\nb\nc\n", "a\nB\nc\n", "A", "B");
/// assert_eq!(d, "--- A\n+++ B\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
/// ```
pub fn unified_diff(a: &str, b: &str, left_name: &str, right_name: &str) -> String {
    let hunks = hunks(a, b, 3);
    if hunks.is_empty() {
        return String::new();
    }
    let mut out = format!("--- {left_name}\n+++ {right_name}\n");
    for h in hunks {
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(h.left_start, h.left_len),
            range(h.right_start, h.right_len)
        ));
        for line in h.lines {
            let (mark, text) = match line {
                Line::Same(t) => (' ', t),
                Line::Left(t) => ('-', t),
                Line::Right(t) => ('+', t),
            };
            out.push(mark);
            out.push_str(text);
            out.push('\n');
        }
    }
    out
}

/// A hunk's range as unified diffs write it: `START,LEN`, or `START` for one line.
fn range(start: usize, len: usize) -> String {
    if len == 1 {
        start.to_string()
    } else {
        format!("{start},{len}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(thread: &str, run: &str, msg: &str, parts: &[&str]) -> Vec<Value> {
        let mut v = vec![json!({"type": "RUN_STARTED", "threadId": thread, "runId": run})];
        v.push(json!({"type": "TEXT_MESSAGE_START", "messageId": msg, "role": "assistant"}));
        for p in parts {
            v.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": msg, "delta": p}));
        }
        v.push(json!({"type": "TEXT_MESSAGE_END", "messageId": msg}));
        v.push(json!({"type": "RUN_FINISHED", "threadId": thread, "runId": run}));
        v
    }

    #[test]
    fn equal_streams_are_equal_and_ids_count_by_order() {
        let a = run("t", "r", "m", &["Hel", "lo"]);
        let b = run("u", "s", "n", &["Hel", "lo"]);
        let c = compare(&a[..], &b[..], &DiffOptions::default());
        assert!(c.is_equal() && c.folds_equal(), "{c:?}");
        assert_eq!(c.left.messages[0]["content"], "Hello");
        // Exactly: the thread id differs at once.
        let c = compare(&a[..], &b[..], &DiffOptions::exact());
        let d = c.divergence.unwrap();
        assert_eq!((d.index, d.path.as_str()), (0, "/threadId"));
        assert_eq!((d.left, d.right), (Some(json!("t")), Some(json!("u"))));
        assert!(!c.messages_equal && c.state_equal);
    }

    #[test]
    fn an_id_used_in_another_place_diverges_with_both_names() {
        // In b, the message reuses the run's id: same values, other order of appearance.
        let a = run("t", "r", "m", &["x"]);
        let b = run("t", "r", "r", &["x"]);
        let d = compare(&a[..], &b[..], &DiffOptions::default())
            .divergence
            .unwrap();
        assert_eq!((d.index, d.path.as_str()), (1, "/messageId"));
        assert_eq!(
            (d.left_compared, d.right_compared),
            (Some(json!("#3")), Some(json!("#2")))
        );
    }

    #[test]
    fn a_shorter_stream_diverges_where_it_ends() {
        let a = run("t", "r", "m", &["a", "b"]);
        let b = run("t", "r", "m", &["a"]);
        let d = compare(&a[..], &b[..], &DiffOptions::default())
            .divergence
            .unwrap();
        assert_eq!((d.index, d.path.as_str()), (3, "/type"));
        assert_eq!(
            (d.left_type.as_deref(), d.right_type.as_deref()),
            (Some("TEXT_MESSAGE_CONTENT"), Some("TEXT_MESSAGE_END"))
        );
        let mut short = a.clone();
        short.truncate(4);
        let c = compare(&a[..], &short[..], &DiffOptions::default());
        let d = c.divergence.unwrap();
        assert_eq!((d.index, d.path.as_str()), (4, ""));
        assert_eq!(d.left_type.as_deref(), Some("TEXT_MESSAGE_END"));
        assert_eq!((d.right_type, d.right), (None, None));
        assert_eq!(c.right.error, None);
        // A stream that breaks a rule is folded up to there, and says so.
        let mut bad = a.clone();
        bad[2]["messageId"] = json!("zz");
        let c = compare(&a[..], &bad[..], &DiffOptions::default());
        assert_eq!(c.divergence.unwrap().path, "/messageId");
        let error = c.right.error.unwrap();
        assert!(
            error.starts_with("event 2 (TEXT_MESSAGE_CONTENT): V"),
            "{error}"
        );
        assert_eq!(c.right.messages[0]["content"], "");
    }

    #[test]
    fn ignored_fields_and_timestamps() {
        let mut a = run("t", "r", "m", &["x"]);
        let b = a.clone();
        a[2]["timestamp"] = json!(123);
        a[2]["rawEvent"] = json!({"x": 1});
        let c = compare(&a[..], &b[..], &DiffOptions::default());
        assert_eq!(c.divergence.unwrap().path, "/rawEvent");
        let mut o = DiffOptions::default();
        o.ignore.push("rawEvent".into());
        assert!(compare(&a[..], &b[..], &o).is_equal());
        let d = compare(&a[..], &b[..], &DiffOptions::exact())
            .divergence
            .unwrap();
        assert_eq!((d.path.as_str(), d.left), ("/timestamp", Some(json!(123))));
    }

    #[test]
    fn folds_compare_after_their_history() {
        let first = run("t", "r1", "m1", &["one"]);
        let a = run("t", "r2", "m2", &["two"]);
        let b = run("t", "r2", "m3", &["two"]);
        let left = Side {
            history: &first,
            events: &a,
        };
        let right = Side {
            history: &first,
            events: &b,
        };
        let c = compare(left, right, &DiffOptions::default());
        assert!(c.is_equal() && c.folds_equal(), "{c:?}");
        // The messages the run added, not the history's.
        assert_eq!(c.left.messages.as_array().unwrap().len(), 1);
        assert_eq!(c.left.messages[0]["content"], "two");
        assert_eq!(c.left.events, a.len());
        // The same run without its history folds alike.
        let c = compare(left, &b[..], &DiffOptions::default());
        assert!(c.is_equal() && c.folds_equal(), "{c:?}");
        // A run that changes a message of its history shows it.
        let mut more = vec![json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r3"})];
        more.push(json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}));
        more.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "!"}));
        more.push(json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"}));
        more.push(json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r3"}));
        let f = fold(Side {
            history: &first,
            events: &more,
        });
        assert_eq!(f.error, None);
        assert_eq!(f.messages.as_array().unwrap().len(), 1, "{:?}", f.messages);
        // Pointers are escaped.
        let x = json!({"a/b": {"c~d": [1, 2]}});
        let y = json!({"a/b": {"c~d": [1, 3]}});
        assert_eq!(first_difference(&x, &y).unwrap(), "/a~1b/c~0d/1");
        assert_eq!(first_difference(&x, &x), None);
        assert_eq!(
            first_difference(&json!({"a": 1}), &json!({"a": 1, "b": 2})).unwrap(),
            "/b"
        );
        assert_eq!(first_difference(&json!([1]), &json!([1, 2])).unwrap(), "/1");
    }

    #[test]
    fn unified_diffs() {
        assert_eq!(unified_diff("a\nb\n", "a\nb\n", "A", "B"), "");
        assert_eq!(
            unified_diff("", "x\n", "A", "B"),
            "--- A\n+++ B\n@@ -0,0 +1 @@\n+x\n"
        );
        let a: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let b: String = (1..=20)
            .filter(|&i| i != 18)
            .map(|i| match i {
                3 => "three\n".to_owned(),
                i => format!("{i}\n"),
            })
            .collect();
        assert_eq!(
            unified_diff(&a, &b, "A", "B"),
            "--- A\n+++ B\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n\
             @@ -15,6 +15,5 @@\n 15\n 16\n 17\n-18\n 19\n 20\n"
        );
        // Every line of the script is one of the texts' lines, in order.
        let (x, y) = ("a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n");
        let script = line_diff(x, y);
        let left: Vec<&str> = script
            .iter()
            .filter_map(|l| match l {
                Line::Same(t) | Line::Left(t) => Some(*t),
                Line::Right(_) => None,
            })
            .collect();
        let right: Vec<&str> = script
            .iter()
            .filter_map(|l| match l {
                Line::Same(t) | Line::Right(t) => Some(*t),
                Line::Left(_) => None,
            })
            .collect();
        assert_eq!(left, x.lines().collect::<Vec<_>>());
        assert_eq!(right, y.lines().collect::<Vec<_>>());
        // Myers' example: 5 edits.
        assert_eq!(
            script
                .iter()
                .filter(|l| !matches!(l, Line::Same(_)))
                .count(),
            5
        );
    }
}
