//! JSON Patch application for the engine (state deltas, activity deltas, compaction).
//!
//! Interim implementation over untyped operations, used until the crate's `patch` module
//! provides `apply_patch`; it is replaced by a thin wrapper then.

use crate::patch::JsonPatch;
use serde_json::Value;

/// Applies `ops` to `doc` atomically: on error `doc` is unchanged.
pub(crate) fn apply(doc: &mut Value, ops: &JsonPatch) -> Result<(), String> {
    let mut work = doc.clone();
    for (i, op) in ops.iter().enumerate() {
        apply_one(&mut work, op).map_err(|e| format!("operation {i}: {e}"))?;
    }
    *doc = work;
    Ok(())
}

/// True when an operation of `ops` writes the document root (so it may change its type).
pub(crate) fn writes_root(ops: &JsonPatch) -> bool {
    ops.iter()
        .any(|op| op.get("path").and_then(Value::as_str) == Some(""))
}

fn parse(pointer: &str) -> Result<Vec<String>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!("invalid pointer {pointer:?}"));
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn index(token: &str, len: usize, allow_end: bool) -> Result<usize, String> {
    if token == "-" && allow_end {
        return Ok(len);
    }
    if token.is_empty()
        || (token.len() > 1 && token.starts_with('0'))
        || !token.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!("bad array index {token:?}"));
    }
    let i: usize = token
        .parse()
        .map_err(|_| format!("bad array index {token:?}"))?;
    if i > len || (!allow_end && i == len) {
        return Err(format!("index {i} out of bounds"));
    }
    Ok(i)
}

fn parent<'a>(doc: &'a mut Value, tokens: &[String]) -> Result<&'a mut Value, String> {
    let mut cur = doc;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => m.get_mut(t).ok_or("path not found")?,
            Value::Array(a) => {
                let i = index(t, a.len(), false)?;
                &mut a[i]
            }
            _ => return Err("path not found".into()),
        };
    }
    Ok(cur)
}

fn get(doc: &Value, tokens: &[String]) -> Result<Value, String> {
    let mut cur = doc;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => m.get(t).ok_or("path not found")?,
            Value::Array(a) => &a[index(t, a.len(), false)?],
            _ => return Err("path not found".into()),
        };
    }
    Ok(cur.clone())
}

fn add(doc: &mut Value, tokens: &[String], value: Value) -> Result<(), String> {
    let Some((last, init)) = tokens.split_last() else {
        *doc = value;
        return Ok(());
    };
    match parent(doc, init)? {
        Value::Object(m) => {
            m.insert(last.clone(), value);
        }
        Value::Array(a) => {
            let i = index(last, a.len(), true)?;
            a.insert(i, value);
        }
        _ => return Err("parent is not a container".into()),
    }
    Ok(())
}

fn remove(doc: &mut Value, tokens: &[String]) -> Result<Value, String> {
    let Some((last, init)) = tokens.split_last() else {
        return Ok(std::mem::take(doc));
    };
    match parent(doc, init)? {
        Value::Object(m) => m.shift_remove(last).ok_or_else(|| "path not found".into()),
        Value::Array(a) => {
            let i = index(last, a.len(), false)?;
            Ok(a.remove(i))
        }
        _ => Err("path not found".into()),
    }
}

fn apply_one(doc: &mut Value, op: &Value) -> Result<(), String> {
    let kind = op.get("op").and_then(Value::as_str).unwrap_or("");
    let path = parse(op.get("path").and_then(Value::as_str).ok_or("no path")?)?;
    let value = || op.get("value").cloned().ok_or("no value");
    match kind {
        "add" => add(doc, &path, value()?),
        "remove" => remove(doc, &path).map(drop),
        "replace" => {
            get(doc, &path)?;
            if path.is_empty() {
                *doc = value()?;
                return Ok(());
            }
            remove(doc, &path)?;
            add(doc, &path, value()?)
        }
        "test" => {
            if get(doc, &path)? == value()? {
                Ok(())
            } else {
                Err("test failed".into())
            }
        }
        "move" | "copy" => {
            let from = parse(op.get("from").and_then(Value::as_str).ok_or("no from")?)?;
            let v = if kind == "move" {
                remove(doc, &from)?
            } else {
                get(doc, &from)?
            };
            add(doc, &path, v)
        }
        other => Err(format!("unknown op {other:?}")),
    }
}
