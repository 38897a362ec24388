//! A JSON diff producing RFC 6902 operations: what `STATE_DELTA` and `ACTIVITY_DELTA` carry.
//!
//! Objects are compared key by key (removals first, then additions and changes in the
//! target's key order). Arrays are compared after trimming their common prefix and suffix,
//! so a single insertion or removal anywhere is a single `add` or `remove`; what remains is
//! compared element by element, with trailing additions or removals (removals from the
//! highest index down, so every index is valid when applied). A change of kind (object to
//! array, number to string, ...) is a `replace`. Numbers compare by value (`1` equals `1.0`),
//! as JavaScript does.

use super::{JsonPatch, JsonPointer, PatchOp, json_equal};
use serde_json::Value;

/// The operations that turn `from` into `to`. Empty when they are equal.
///
/// ```
/// use aguikit_core::patch::diff::diff;
/// use aguikit_core::patch::apply_patch;
/// use serde_json::json;
/// let from = json!({"todos": ["a", "c"], "n": 1});
/// let to = json!({"todos": ["a", "b", "c"], "n": 2});
/// let ops = diff(&from, &to);
/// assert_eq!(ops.len(), 2);
/// let mut doc = from.clone();
/// apply_patch(&mut doc, &ops).unwrap();
/// assert_eq!(doc, to);
/// ```
pub fn diff(from: &Value, to: &Value) -> JsonPatch {
    let mut out = Vec::new();
    diff_into(from, to, &JsonPointer::root(), &mut out);
    out
}

fn child(path: &JsonPointer, token: &str) -> JsonPointer {
    let mut p = path.clone();
    p.push(token);
    p
}

fn diff_into(from: &Value, to: &Value, path: &JsonPointer, out: &mut JsonPatch) {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys() {
                if !b.contains_key(key) {
                    out.push(PatchOp::remove(child(path, key)));
                }
            }
            for (key, bv) in b {
                match a.get(key) {
                    None => out.push(PatchOp::add(child(path, key), bv.clone())),
                    Some(av) => diff_into(av, bv, &child(path, key), out),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => diff_arrays(a, b, path, out),
        _ => {
            if !json_equal(from, to) {
                out.push(PatchOp::replace(path.clone(), to.clone()));
            }
        }
    }
}

fn diff_arrays(a: &[Value], b: &[Value], path: &JsonPointer, out: &mut JsonPatch) {
    let prefix = a
        .iter()
        .zip(b)
        .take_while(|(x, y)| json_equal(x, y))
        .count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| json_equal(x, y))
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let common = ma.len().min(mb.len());
    for i in 0..common {
        diff_into(&ma[i], &mb[i], &child(path, &(prefix + i).to_string()), out);
    }
    for (k, v) in mb.iter().enumerate().skip(common) {
        out.push(PatchOp::add(
            child(path, &(prefix + k).to_string()),
            v.clone(),
        ));
    }
    for k in (common..ma.len()).rev() {
        out.push(PatchOp::remove(child(path, &(prefix + k).to_string())));
    }
}

/// What to send to bring a peer from `from` to `to`: a patch, or the whole value when that
/// is no larger on the wire (or when there is nothing to diff against).
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Nothing changed.
    None,
    /// Send these operations.
    Patch(JsonPatch),
    /// Send the whole new value.
    Snapshot,
}

/// Chooses between a patch and a snapshot by their JSON size.
pub fn change(from: Option<&Value>, to: &Value) -> Change {
    let Some(from) = from else {
        return Change::Snapshot;
    };
    let ops = diff(from, to);
    if ops.is_empty() {
        return Change::None;
    }
    if ops.iter().any(|op| op.path().is_root()) {
        return Change::Snapshot;
    }
    let patch_len = serde_json::to_vec(&ops)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    let snapshot_len = serde_json::to_vec(to).map(|v| v.len()).unwrap_or(0);
    if patch_len < snapshot_len {
        Change::Patch(ops)
    } else {
        Change::Snapshot
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::apply_patch;
    use serde_json::json;

    fn roundtrip(from: Value, to: Value) -> JsonPatch {
        let ops = diff(&from, &to);
        let mut doc = from.clone();
        apply_patch(&mut doc, &ops).unwrap_or_else(|e| panic!("{e}: {ops:?}"));
        assert!(json_equal(&doc, &to), "{doc} != {to} via {ops:?}");
        ops
    }

    fn ops_json(ops: &JsonPatch) -> Value {
        serde_json::to_value(ops).unwrap()
    }

    #[test]
    fn equal_values_give_no_ops() {
        assert!(
            roundtrip(
                json!({"a": [1, {"b": null}]}),
                json!({"a": [1, {"b": null}]})
            )
            .is_empty()
        );
        assert!(roundtrip(json!(1), json!(1.0)).is_empty());
    }

    #[test]
    fn object_members() {
        let ops = roundtrip(
            json!({"a": 1, "b": 2, "c": {"d": 1}}),
            json!({"b": 3, "c": {"d": 1, "e": 2}, "f": []}),
        );
        assert_eq!(
            ops_json(&ops),
            json!([
                {"op": "remove", "path": "/a"},
                {"op": "replace", "path": "/b", "value": 3},
                {"op": "add", "path": "/c/e", "value": 2},
                {"op": "add", "path": "/f", "value": []},
            ])
        );
    }

    #[test]
    fn keys_are_escaped() {
        let ops = roundtrip(json!({}), json!({"a/b": 1, "~": 2}));
        assert_eq!(
            ops_json(&ops),
            json!([{"op": "add", "path": "/a~1b", "value": 1}, {"op": "add", "path": "/~0", "value": 2}])
        );
    }

    #[test]
    fn array_insert_and_remove_in_the_middle_are_single_ops() {
        let ops = roundtrip(json!([1, 2, 4, 5]), json!([1, 2, 3, 4, 5]));
        assert_eq!(
            ops_json(&ops),
            json!([{"op": "add", "path": "/2", "value": 3}])
        );
        let ops = roundtrip(json!([1, 2, 3, 4, 5]), json!([1, 2, 4, 5]));
        assert_eq!(ops_json(&ops), json!([{"op": "remove", "path": "/2"}]));
        let ops = roundtrip(json!(["a"]), json!(["a", "b", "c"]));
        assert_eq!(
            ops_json(&ops),
            json!([{"op": "add", "path": "/1", "value": "b"}, {"op": "add", "path": "/2", "value": "c"}])
        );
    }

    #[test]
    fn array_shrink_removes_from_the_top() {
        let ops = roundtrip(json!([1, 2, 3, 4]), json!([9]));
        assert_eq!(
            ops_json(&ops),
            json!([
                {"op": "replace", "path": "/0", "value": 9},
                {"op": "remove", "path": "/3"},
                {"op": "remove", "path": "/2"},
                {"op": "remove", "path": "/1"},
            ])
        );
    }

    #[test]
    fn kind_changes_replace() {
        roundtrip(json!({"a": [1]}), json!({"a": {"0": 1}}));
        roundtrip(json!({"a": "x"}), json!({"a": null}));
        let ops = roundtrip(json!([1]), json!({"x": 1}));
        assert_eq!(
            ops_json(&ops),
            json!([{"op": "replace", "path": "", "value": {"x": 1}}])
        );
    }

    #[test]
    fn nested_edits_roundtrip() {
        roundtrip(
            json!({"todos": [{"t": "a", "done": false}, {"t": "b", "done": false}], "n": 0}),
            json!({"todos": [{"t": "a", "done": true}, {"t": "c", "done": false}, {"t": "b", "done": false}], "n": 2}),
        );
        roundtrip(json!([[1, 2], [3]]), json!([[1], [3, 4], []]));
    }

    #[test]
    fn pseudo_random_roundtrips() {
        // A small deterministic generator: no extra crates, many shapes.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        fn gen_value(next: &mut dyn FnMut() -> u64, depth: u32) -> Value {
            match next() % if depth == 0 { 4 } else { 6 } {
                0 => Value::Null,
                1 => json!(next() % 5),
                2 => json!(format!("s{}", next() % 3)),
                3 => json!(next().is_multiple_of(2)),
                4 => Value::Array(
                    (0..next() % 5)
                        .map(|_| gen_value(next, depth - 1))
                        .collect(),
                ),
                _ => {
                    let mut m = serde_json::Map::new();
                    for _ in 0..next() % 5 {
                        m.insert(format!("k{}", next() % 6), gen_value(next, depth - 1));
                    }
                    Value::Object(m)
                }
            }
        }
        for _ in 0..2000 {
            let a = gen_value(&mut next, 3);
            let b = gen_value(&mut next, 3);
            roundtrip(a, b);
        }
    }

    #[test]
    fn change_prefers_the_smaller_form() {
        let big = json!({"a": "x".repeat(100), "n": 1});
        let mut to = big.clone();
        to["n"] = json!(2);
        assert!(matches!(change(Some(&big), &to), Change::Patch(_)));
        assert_eq!(
            change(Some(&json!({"a": 1})), &json!({"b": 2})),
            Change::Snapshot
        );
        assert_eq!(change(None, &json!({})), Change::Snapshot);
        assert_eq!(change(Some(&json!({})), &json!({})), Change::None);
    }
}
