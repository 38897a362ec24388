//! JSON Pointers (RFC 6901) as A2UI uses them: data-binding paths, template paths and
//! `updateDataModel` paths. `""` and `"/"` both name the whole data model; a path without a
//! leading `/` is relative (inside a template, to the current item).

use serde_json::{Map, Value};

/// Why a path is not a valid JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointerError {
    /// The path as given.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

impl std::fmt::Display for PointerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Invalid path syntax: {:?} ({})", self.path, self.reason)
    }
}

impl std::error::Error for PointerError {}

/// Whether the path is absolute (starts with `/`) or empty (the whole model).
pub fn is_absolute(path: &str) -> bool {
    path.is_empty() || path.starts_with('/')
}

/// Splits a path into its unescaped tokens. `""` and `"/"` give no token (the whole model);
/// a relative path (`name`, `./name` is not special) is split the same way.
pub fn parse(path: &str) -> Result<Vec<String>, PointerError> {
    let body = path.strip_prefix('/').unwrap_or(path);
    if body.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for raw in body.split('/') {
        let mut token = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '~' {
                match chars.next() {
                    Some('0') => token.push('~'),
                    Some('1') => token.push('/'),
                    Some(other) => {
                        return Err(PointerError {
                            path: path.to_string(),
                            reason: format!("'~{other}' is not an escape (only ~0 and ~1 are)"),
                        });
                    }
                    None => {
                        return Err(PointerError {
                            path: path.to_string(),
                            reason: "a '~' ends a token".to_string(),
                        });
                    }
                }
            } else {
                token.push(c);
            }
        }
        out.push(token);
    }
    Ok(out)
}

/// Escapes one token for a pointer (`~` → `~0`, `/` → `~1`).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The value at `tokens` inside `root`, if there is one.
pub fn get<'a>(root: &'a Value, tokens: &[String]) -> Option<&'a Value> {
    let mut cur = root;
    for t in tokens {
        cur = match cur {
            Value::Object(m) => m.get(t)?,
            Value::Array(a) => a.get(array_index(t)?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn array_index(token: &str) -> Option<usize> {
    if token.is_empty() || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    if !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

/// Why a value could not be set or removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateError(pub String);

impl std::fmt::Display for UpdateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UpdateError {}

/// Sets the value at `tokens` (creating missing objects on the way; `-` or the length
/// appends to an array). No token replaces the whole model.
pub fn set(root: &mut Value, tokens: &[String], value: Value) -> Result<(), UpdateError> {
    let Some((last, parents)) = tokens.split_last() else {
        *root = value;
        return Ok(());
    };
    let mut cur = root;
    for t in parents {
        if cur.is_null() {
            *cur = Value::Object(Map::new());
        }
        cur = match cur {
            Value::Object(m) => m
                .entry(t.clone())
                .or_insert_with(|| Value::Object(Map::new())),
            Value::Array(a) => {
                let i = array_index(t)
                    .filter(|i| *i < a.len())
                    .ok_or_else(|| UpdateError(format!("no array element {t:?}")))?;
                &mut a[i]
            }
            _ => {
                return Err(UpdateError(format!(
                    "cannot descend into a scalar at {t:?}"
                )));
            }
        };
    }
    if cur.is_null() {
        *cur = Value::Object(Map::new());
    }
    match cur {
        Value::Object(m) => {
            m.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(a) => {
            if last == "-" {
                a.push(value);
                return Ok(());
            }
            match array_index(last) {
                Some(i) if i < a.len() => {
                    a[i] = value;
                    Ok(())
                }
                Some(i) if i == a.len() => {
                    a.push(value);
                    Ok(())
                }
                _ => Err(UpdateError(format!("no array element {last:?}"))),
            }
        }
        _ => Err(UpdateError(format!("cannot set {last:?} inside a scalar"))),
    }
}

/// Removes the value at `tokens` (no token clears the whole model to `{}`). Removing what is
/// not there is not an error.
pub fn remove(root: &mut Value, tokens: &[String]) {
    let Some((last, parents)) = tokens.split_last() else {
        *root = Value::Object(Map::new());
        return;
    };
    let mut cur = root;
    for t in parents {
        let next = match cur {
            Value::Object(m) => m.get_mut(t),
            Value::Array(a) => match array_index(t) {
                Some(i) => a.get_mut(i),
                None => None,
            },
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    match cur {
        Value::Object(m) => {
            m.shift_remove(last);
        }
        Value::Array(a) => {
            if let Some(i) = array_index(last).filter(|i| *i < a.len()) {
                a.remove(i);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_escapes_and_rejects_bad_ones() {
        assert_eq!(parse("/a~1b/c~0d").unwrap(), vec!["a/b", "c~d"]);
        assert!(parse("/").unwrap().is_empty());
        assert!(parse("").unwrap().is_empty());
        assert_eq!(parse("name").unwrap(), vec!["name"]);
        let e = parse("/invalid/escape/~2").unwrap_err();
        assert!(e.to_string().contains("Invalid path syntax"), "{e}");
        assert!(parse("/a~").is_err());
    }

    #[test]
    fn set_get_remove() {
        let mut v = json!({});
        set(&mut v, &parse("/user/name").unwrap(), json!("Ada")).unwrap();
        set(&mut v, &parse("/list").unwrap(), json!([1])).unwrap();
        set(&mut v, &parse("/list/-").unwrap(), json!(2)).unwrap();
        set(&mut v, &parse("/list/0").unwrap(), json!(0)).unwrap();
        assert_eq!(v, json!({"user": {"name": "Ada"}, "list": [0, 2]}));
        assert_eq!(get(&v, &parse("/list/1").unwrap()), Some(&json!(2)));
        assert_eq!(get(&v, &parse("/list/01").unwrap()), None);
        assert!(set(&mut v, &parse("/user/name/x").unwrap(), json!(1)).is_err());
        assert!(set(&mut v, &parse("/list/9").unwrap(), json!(1)).is_err());
        remove(&mut v, &parse("/user/name").unwrap());
        remove(&mut v, &parse("/nothing/here").unwrap());
        remove(&mut v, &parse("/list/0").unwrap());
        assert_eq!(v, json!({"user": {}, "list": [2]}));
        remove(&mut v, &[]);
        assert_eq!(v, json!({}));
    }
}
