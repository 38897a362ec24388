//! Tests of the patch module.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::apply::*;
use super::equal::*;
use super::error::*;
use super::lenient::*;
use super::ops::*;
use super::pointer::*;
use serde_json::json;

fn ptr(s: &str) -> JsonPointer {
    JsonPointer::parse(s).unwrap()
}

fn patch(v: Value) -> JsonPatch {
    serde_json::from_value(v).unwrap()
}

/// Applies `ops` to `doc`; on failure also checks the document is byte-identical.
fn apply(doc: Value, ops: Value) -> Result<Value, PatchError> {
    let ops = patch(ops);
    let before = serde_json::to_string(&doc).unwrap();
    let mut doc = doc;
    match apply_patch(&mut doc, &ops) {
        Ok(()) => Ok(doc),
        Err(e) => {
            assert_eq!(
                serde_json::to_string(&doc).unwrap(),
                before,
                "not rolled back"
            );
            Err(e)
        }
    }
}

fn kind(doc: Value, ops: Value) -> PatchErrorKind {
    apply(doc, ops).unwrap_err().kind
}

/// Applies each single operation to a copy of `doc` (through [`apply`] and its checks) and
/// compares the outcome: the document it gives, or the kind of its error.
fn check_ops(doc: &Value, cases: Vec<(Value, Result<Value, PatchErrorKind>)>) {
    for (op, want) in cases {
        let got = apply(doc.clone(), json!([op])).map_err(|e| e.kind);
        assert_eq!(got, want, "{op}");
    }
}

// --- pointers -----------------------------------------------------------------------

#[test]
fn pointer_validation() {
    for ok in [
        "",
        "/",
        "//",
        "/a",
        "/a/b",
        "/~0",
        "/~1",
        "/~01",
        "/a~1b~0c",
        "/ü/日本",
    ] {
        assert!(JsonPointer::parse(ok).is_ok(), "{ok:?}");
    }
    let e = JsonPointer::parse("a").unwrap_err();
    assert_eq!(e.kind, PointerErrorKind::MissingLeadingSlash);
    assert_eq!(
        e.to_string(),
        "invalid JSON Pointer \"a\": a non-empty pointer must start with '/'"
    );
    for (bad, offset) in [("/~", 1), ("/~2", 1), ("/a~", 2), ("/a/~x", 3), ("/~0~", 3)] {
        assert_eq!(
            JsonPointer::parse(bad).unwrap_err().kind,
            PointerErrorKind::InvalidEscape { offset },
            "{bad:?}"
        );
    }
}

#[test]
fn pointer_tokens() {
    let toks = |s: &str| ptr(s).tokens().map(Cow::into_owned).collect::<Vec<_>>();
    assert!(toks("").is_empty());
    assert_eq!(toks("/"), [""]);
    assert_eq!(toks("//"), ["", ""]);
    assert_eq!(toks("/a~1b/~0/~01/c"), ["a/b", "~", "~1", "c"]);
    assert_eq!(toks("/a/"), ["a", ""]);
    assert_eq!(toks("/é/x~1/"), ["é", "x/", ""]);
    assert_eq!(toks("/~0~1"), ["~/"]);
    assert!(matches!(
        ptr("/abc").tokens().next(),
        Some(Cow::Borrowed("abc"))
    ));
    assert_eq!(ptr("/a/b/c").len(), 3);
    assert!(ptr("").is_root() && ptr("").is_empty() && !ptr("/").is_root());
}

#[test]
fn pointer_push_round_trips() {
    let mut p = JsonPointer::root();
    for t in ["a/b", "~", "", "~1"] {
        p.push(t);
    }
    assert_eq!(p.as_str(), "/a~1b/~0//~01");
    assert_eq!(p.tokens().collect::<Vec<_>>(), ["a/b", "~", "", "~1"]);
    assert_eq!(JsonPointer::parse(p.as_str()).unwrap(), p);
}

#[test]
fn pointer_serde() {
    let p: JsonPointer = serde_json::from_str("\"/a~1b\"").unwrap();
    assert_eq!(p.to_string(), "/a~1b");
    assert_eq!(serde_json::to_string(&p).unwrap(), "\"/a~1b\"");
    let err = serde_json::from_str::<JsonPointer>("\"x/y\"").unwrap_err();
    assert!(err.to_string().contains("\"x/y\""), "{err}");
    assert!(serde_json::from_str::<JsonPointer>("5").is_err());
    assert_eq!("/q".parse::<JsonPointer>().unwrap().as_str(), "/q");
    assert_eq!(String::from(ptr("/z")), "/z");
}

// --- parsing ------------------------------------------------------------------------

#[test]
fn parses_every_op() {
    let ops = patch(json!([
        {"op": "add", "path": "/a", "value": 1},
        {"op": "remove", "path": "/a"},
        {"op": "replace", "path": "/a", "value": null},
        {"op": "move", "from": "/a", "path": "/b"},
        {"op": "copy", "from": "/a", "path": "/b"},
        {"op": "test", "path": "/a", "value": [1]},
    ]));
    let names: Vec<_> = ops.iter().map(PatchOp::op).collect();
    assert_eq!(names, OP_NAMES);
    assert_eq!(ops[2].value(), Some(&Value::Null));
    assert_eq!(ops[3].from(), Some(&ptr("/a")));
    assert_eq!(ops[3].path(), &ptr("/b"));
    assert_eq!(ops[1].value(), None);
    assert_eq!(ops[0], PatchOp::add(ptr("/a"), json!(1)));
    assert_eq!(ops[4], PatchOp::copy_from(ptr("/a"), ptr("/b")));
}

#[test]
fn extra_members_are_kept_and_written_back() {
    let raw = json!({"xyz": 1, "value": "v", "path": "/p", "op": "remove", "from": "/f"});
    let op: PatchOp = serde_json::from_value(raw).unwrap();
    assert_eq!(
        op.extra(),
        json!({"xyz": 1, "value": "v", "from": "/f"})
            .as_object()
            .unwrap()
    );
    assert_eq!(
        serde_json::to_string(&op).unwrap(),
        r#"{"op":"remove","path":"/p","xyz":1,"from":"/f","value":"v"}"#
    );
    // An extra `from` on add is not validated as a pointer.
    let op: PatchOp =
        serde_json::from_value(json!({"op": "add", "path": "/a", "value": 1, "from": 7})).unwrap();
    assert_eq!(op.extra()["from"], json!(7));
    // Canonical order: op, from, path, value, extras.
    let op: PatchOp =
        serde_json::from_value(json!({"path": "/b", "k": true, "from": "/a", "op": "move"}))
            .unwrap();
    assert_eq!(
        serde_json::to_string(&op).unwrap(),
        r#"{"op":"move","from":"/a","path":"/b","k":true}"#
    );
    // Extras shadowing a typed member are not written twice.
    let mut op = PatchOp::test(ptr("/a"), json!(1));
    op.extra_mut().insert("value".into(), json!(2));
    op.extra_mut().insert("op".into(), json!("add"));
    assert_eq!(
        serde_json::to_string(&op).unwrap(),
        r#"{"op":"test","path":"/a","value":1}"#
    );
}

#[test]
fn shape_errors_name_the_member() {
    let err = |v: Value| {
        serde_json::from_value::<PatchOp>(v)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(json!({"op": "add", "value": 1})),
        "`add` operation is missing the `path` member"
    );
    assert_eq!(
        err(json!({"op": "copy", "path": "/a"})),
        "`copy` operation is missing the `from` member"
    );
    assert_eq!(
        err(json!({"op": "move", "path": ""})),
        "`move` operation is missing the `from` member"
    );
    for op in ["add", "replace", "test"] {
        assert_eq!(
            err(json!({"op": op, "path": "/a"})),
            format!("`{op}` operation is missing the `value` member")
        );
    }
    assert_eq!(
        err(json!({"op": "add", "path": null, "value": 1})),
        "invalid `path`: expected a JSON Pointer string, found null"
    );
    assert_eq!(
        err(json!({"op": "add", "path": "a", "value": 1})),
        "invalid `path`: invalid JSON Pointer \"a\": a non-empty pointer must start with '/'"
    );
    assert!(err(json!({"op": "move", "from": "/~2", "path": "/a"})).starts_with("invalid `from`"));
    assert_eq!(err(json!({"path": "/a"})), "missing field `op`");
    assert!(
        err(json!({"op": "spam", "path": "/a"}))
            .starts_with("unknown JSON Patch operation \"spam\"")
    );
    assert_eq!(
        err(json!({"op": 3})),
        "invalid `op`: expected a string, found a number"
    );
    assert!(err(json!(["op", "add"])).contains("expected a JSON Patch operation object"));
    // `remove` needs no value; `value: null` is present.
    assert!(serde_json::from_value::<PatchOp>(json!({"op": "remove", "path": "/a"})).is_ok());
    assert!(
        serde_json::from_value::<PatchOp>(json!({"op": "test", "path": "", "value": null})).is_ok()
    );
}

#[test]
fn repeated_members_keep_the_last_value() {
    let op: PatchOp = serde_json::from_str(
        r#"{"op":"remove","path":"/a","op":"add","value":1,"path":"/b","x":1,"x":2}"#,
    )
    .unwrap();
    assert_eq!(op.op(), "add");
    assert_eq!(op.path().as_str(), "/b");
    assert_eq!(op.extra()["x"], json!(2));
}

#[test]
fn lenient_patch_drops_unknown_ops_only() {
    let text = r#"[{"op":"add","path":"/a","value":1},{"op":"spam","path":"/a"},
        {"path":"/x"},{"op":null},{"op":"test","path":"/a","value":1}]"#;
    let p: LenientPatch = serde_json::from_str(text).unwrap();
    assert_eq!(
        p.ops.iter().map(PatchOp::op).collect::<Vec<_>>(),
        ["add", "test"]
    );
    let dropped: Vec<_> = p.dropped.iter().map(|d| (d.index, d.op.clone())).collect();
    assert_eq!(
        dropped,
        [(1, Some(json!("spam"))), (2, None), (3, Some(Value::Null))]
    );
    assert_eq!(
        p.dropped[0].to_string(),
        "operation 1 has unknown `op` \"spam\""
    );
    assert_eq!(p.dropped[1].to_string(), "operation 2 has no `op`");
    assert_eq!(
        serde_json::to_string(&p).unwrap(),
        r#"[{"op":"add","path":"/a","value":1},{"op":"test","path":"/a","value":1}]"#
    );
    // Other defects stay fatal, even next to an unknown op.
    for bad in [
        r#"[{"op":"spam"},{"op":"add","path":"a","value":1}]"#,
        r#"[{"op":"add","path":"/a"}]"#,
        r#"[{"op":"spam"}, 5]"#,
        r#"{"op":"add"}"#,
    ] {
        assert!(serde_json::from_str::<LenientPatch>(bad).is_err(), "{bad}");
    }
    assert_eq!(
        PatchOp::deserialize_lenient(&json!({"op": "copy", "from": "/a", "path": "/b"}))
            .unwrap()
            .map(|op| op.op()),
        Some("copy")
    );
}

#[test]
fn value_helpers_name_the_index() {
    let raw = [
        json!({"op": "add", "path": "/a", "value": 1}),
        json!({"op": "x"}),
    ];
    let err = parse_patch(&raw).unwrap_err();
    assert_eq!(err.index, 1);
    assert!(
        err.to_string()
            .starts_with("operation 1: unknown JSON Patch operation")
    );
    let lenient = parse_patch_lenient(&raw).unwrap();
    assert_eq!((lenient.ops.len(), lenient.dropped[0].index), (1, 1));
    let err = parse_patch_lenient(&[json!({"op": "x"}), json!("add")]).unwrap_err();
    assert_eq!(err.index, 1);
}

// --- application --------------------------------------------------------------------

#[test]
fn missing_locations_fail() {
    let doc = json!({"a": {"b": 1}, "l": [1, 2]});
    assert_eq!(
        kind(
            doc.clone(),
            json!([{"op": "replace", "path": "/x", "value": 1}])
        ),
        PatchErrorKind::PathNotFound
    );
    assert_eq!(
        kind(doc.clone(), json!([{"op": "remove", "path": "/a/x"}])),
        PatchErrorKind::PathNotFound
    );
    assert_eq!(
        kind(
            doc.clone(),
            json!([{"op": "test", "path": "/x", "value": null}])
        ),
        PatchErrorKind::PathNotFound
    );
    assert_eq!(
        kind(
            doc.clone(),
            json!([{"op": "move", "from": "/x", "path": "/y"}])
        ),
        PatchErrorKind::FromNotFound
    );
    assert_eq!(
        kind(
            doc.clone(),
            json!([{"op": "copy", "from": "/l/2", "path": "/y"}])
        ),
        PatchErrorKind::FromNotFound
    );
    assert_eq!(
        kind(
            doc.clone(),
            json!([{"op": "add", "path": "/x/y", "value": 1}])
        ),
        PatchErrorKind::PathNotFound
    );
    // Through a scalar or null member.
    assert_eq!(
        kind(
            json!({"a": 5}),
            json!([{"op": "add", "path": "/a/b", "value": 1}])
        ),
        PatchErrorKind::PathNotFound
    );
    assert_eq!(
        kind(
            json!({"a": null}),
            json!([{"op": "add", "path": "/a/b", "value": 1}])
        ),
        PatchErrorKind::PathNotFound
    );
}

#[test]
fn add_semantics() {
    // Existing member: replaced in place (position kept).
    let out = apply(
        json!({"a": 1, "b": 2}),
        json!([{"op": "add", "path": "/a", "value": 9}]),
    )
    .unwrap();
    assert_eq!(serde_json::to_string(&out).unwrap(), r#"{"a":9,"b":2}"#);
    // New member: appended.
    let out = apply(
        json!({"b": 1}),
        json!([{"op": "add", "path": "/a", "value": 2}]),
    )
    .unwrap();
    assert_eq!(serde_json::to_string(&out).unwrap(), r#"{"b":1,"a":2}"#);
    // Array positions: inside, at the end (by index or `-`), past the end.
    check_ops(
        &json!({"l": [1, 2]}),
        vec![
            (
                json!({"op": "add", "path": "/l/2", "value": 3}),
                Ok(json!({"l": [1, 2, 3]})),
            ),
            (
                json!({"op": "add", "path": "/l/-", "value": 3}),
                Ok(json!({"l": [1, 2, 3]})),
            ),
            (
                json!({"op": "add", "path": "/l/0", "value": 0}),
                Ok(json!({"l": [0, 1, 2]})),
            ),
            (
                json!({"op": "add", "path": "/l/3", "value": 3}),
                Err(PatchErrorKind::IndexOutOfBounds { index: 3, len: 2 }),
            ),
            (
                json!({"op": "add", "path": "/l/99999999999999999999999", "value": 3}),
                Err(PatchErrorKind::IndexOutOfBounds {
                    index: usize::MAX,
                    len: 2,
                }),
            ),
        ],
    );
    // A member named "-" on an object is just a member.
    assert_eq!(
        apply(json!({}), json!([{"op": "add", "path": "/-", "value": 1}])).unwrap(),
        json!({"-": 1})
    );
}

#[test]
fn dash_only_works_for_add() {
    let doc = json!({"l": [1, 2]});
    for op in [
        json!({"op": "replace", "path": "/l/-", "value": 0}),
        json!({"op": "remove", "path": "/l/-"}),
        json!({"op": "test", "path": "/l/-", "value": 2}),
        json!({"op": "copy", "from": "/l/-", "path": "/x"}),
        json!({"op": "move", "from": "/l/-", "path": "/x"}),
        json!({"op": "add", "path": "/l/-/x", "value": 0}),
    ] {
        assert!(apply(doc.clone(), json!([op])).is_err(), "{op}");
    }
}

#[test]
fn replace_and_remove_bounds() {
    check_ops(
        &json!({"l": [1, 2]}),
        vec![
            (
                json!({"op": "replace", "path": "/l/2", "value": 0}),
                Err(PatchErrorKind::PathNotFound),
            ),
            (
                json!({"op": "remove", "path": "/l/2"}),
                Err(PatchErrorKind::PathNotFound),
            ),
            (
                json!({"op": "replace", "path": "/l/1", "value": 0}),
                Ok(json!({"l": [1, 0]})),
            ),
            (
                json!({"op": "remove", "path": "/l/0"}),
                Ok(json!({"l": [2]})),
            ),
        ],
    );
}

#[test]
fn bad_array_indexes_fail() {
    let doc = json!({"l": [[1], 2]});
    for token in ["01", "00", "1e0", "x", "", " 1", "+1", "-1", "0x1"] {
        let p = format!("/l/{token}");
        for op in [
            json!({"op": "add", "path": p, "value": 0}),
            json!({"op": "replace", "path": p, "value": 0}),
            json!({"op": "remove", "path": p}),
            json!({"op": "test", "path": p, "value": 2}),
            json!({"op": "copy", "from": p, "path": "/x"}),
            json!({"op": "move", "from": p, "path": "/x"}),
            json!({"op": "copy", "from": "/l/1", "path": p}),
            json!({"op": "test", "path": format!("{p}/0"), "value": 1}),
        ] {
            assert!(apply(doc.clone(), json!([op])).is_err(), "{op}");
        }
    }
    assert_eq!(
        kind(doc, json!([{"op": "replace", "path": "/l/01", "value": 0}])),
        PatchErrorKind::InvalidArrayIndex { token: "01".into() }
    );
}

#[test]
fn escapes_are_decoded() {
    let doc = json!({"a/b": {"~c": 1}});
    assert!(
        apply(
            doc.clone(),
            json!([{"op": "test", "path": "/a~1b/~0c", "value": 1}])
        )
        .is_ok()
    );
    let out = apply(doc, json!([{"op": "add", "path": "/~1~0", "value": 2}])).unwrap();
    assert_eq!(out["/~"], json!(2));
}

#[test]
fn test_uses_json_equality() {
    let doc = json!({"n": 1, "f": 1.0, "o": {"a": 1, "b": [1, {"c": null}]}, "neg": -0.0});
    let ok = |p: &str, v: Value| {
        apply(doc.clone(), json!([{"op": "test", "path": p, "value": v}])).is_ok()
    };
    assert!(ok("/n", json!(1.0)));
    assert!(ok("/f", json!(1)));
    assert!(ok("/neg", json!(0)));
    assert!(ok("/o", json!({"b": [1.0, {"c": null}], "a": 1})));
    assert!(!ok("/o", json!({"a": 1})));
    assert!(!ok("/o", json!({"a": 1, "b": [1, {"c": null}], "d": 1})));
    assert!(!ok("/n", json!("1")));
    assert!(!ok("/o/b", json!([{"c": null}, 1])));
    assert!(!ok("/o/b/1/c", json!(false)));
    assert!(ok("", doc.clone()));
    assert_eq!(
        kind(
            doc.clone(),
            json!([{"op": "test", "path": "/n", "value": 2}])
        ),
        PatchErrorKind::TestFailed
    );
    assert!(json_equal(&json!(u64::MAX), &json!(u64::MAX as f64)));
    assert!(!json_equal(&json!(-1), &json!(1)));
}

#[test]
fn move_and_copy() {
    let doc = json!({"a": {"x": 1}, "b": 2, "l": [1, 2, 3]});
    let out = apply(
        doc.clone(),
        json!([{"op": "move", "from": "/a", "path": "/c"}]),
    )
    .unwrap();
    assert_eq!(
        serde_json::to_string(&out).unwrap(),
        r#"{"b":2,"l":[1,2,3],"c":{"x":1}}"#
    );
    let out = apply(
        doc.clone(),
        json!([{"op": "move", "from": "/b", "path": "/b"}]),
    )
    .unwrap();
    assert_eq!(out, doc);
    let out = apply(
        doc.clone(),
        json!([{"op": "move", "from": "/l/0", "path": "/l/2"}]),
    )
    .unwrap();
    assert_eq!(out["l"], json!([2, 3, 1]));
    let out = apply(
        doc.clone(),
        json!([{"op": "move", "from": "/a/x", "path": "/a"}]),
    )
    .unwrap();
    assert_eq!(out["a"], json!(1));
    let out = apply(
        doc.clone(),
        json!([{"op": "copy", "from": "/a", "path": "/l/1"}]),
    )
    .unwrap();
    assert_eq!(out["l"], json!([1, {"x": 1}, 2, 3]));
    // The copy is independent of its source.
    let out = apply(
        doc.clone(),
        json!([{"op": "copy", "from": "/a", "path": "/c"}, {"op": "replace", "path": "/c/x", "value": 5}]),
    )
    .unwrap();
    assert_eq!(
        (out["a"]["x"].clone(), out["c"]["x"].clone()),
        (json!(1), json!(5))
    );
    // Copy the whole document into a member of itself.
    let out = apply(
        json!({"a": 1}),
        json!([{"op": "copy", "from": "", "path": "/b"}]),
    )
    .unwrap();
    assert_eq!(out, json!({"a": 1, "b": {"a": 1}}));
    // Reference quirk: a move/copy target beyond the end appends.
    let out = apply(
        doc.clone(),
        json!([{"op": "copy", "from": "/b", "path": "/l/9"}]),
    )
    .unwrap();
    assert_eq!(out["l"], json!([1, 2, 3, 2]));
    let out = apply(doc, json!([{"op": "move", "from": "/l/0", "path": "/l/3"}])).unwrap();
    assert_eq!(out["l"], json!([2, 3, 1]));
}

#[test]
fn move_into_own_child_fails() {
    let doc = json!({"a": {"b": {}}, "l": [[1], 2]});
    for (from, path) in [
        ("/a", "/a/c"),
        ("/a", "/a/b/c"),
        ("", "/x"),
        ("/l/0", "/l/0/0"),
    ] {
        assert_eq!(
            kind(
                doc.clone(),
                json!([{"op": "move", "from": from, "path": path}])
            ),
            PatchErrorKind::MoveIntoOwnChild,
            "{from} -> {path}"
        );
    }
    // Not a child: a sibling sharing a prefix of the name.
    assert!(
        apply(
            json!({"a": 1}),
            json!([{"op": "move", "from": "/a", "path": "/ab"}])
        )
        .is_ok()
    );
    // Reference quirk: after removing /0 the path /0/1 points into the former /1.
    let out = apply(
        json!([[], [1, 2]]),
        json!([{"op": "move", "from": "/0", "path": "/0/1"}]),
    )
    .unwrap();
    assert_eq!(out, json!([[1, [], 2]]));
}

#[test]
fn root_operations() {
    let doc = json!({"a": [1], "b": 2});
    assert_eq!(
        apply(
            doc.clone(),
            json!([{"op": "add", "path": "", "value": [1]}])
        )
        .unwrap(),
        json!([1])
    );
    assert_eq!(
        apply(
            doc.clone(),
            json!([{"op": "replace", "path": "", "value": 3}])
        )
        .unwrap(),
        json!(3)
    );
    assert_eq!(
        apply(doc.clone(), json!([{"op": "remove", "path": ""}])).unwrap(),
        Value::Null
    );
    assert_eq!(
        apply(
            doc.clone(),
            json!([{"op": "move", "from": "/a", "path": ""}])
        )
        .unwrap(),
        json!([1])
    );
    assert_eq!(
        apply(
            doc.clone(),
            json!([{"op": "copy", "from": "/a/0", "path": ""}])
        )
        .unwrap(),
        json!(1)
    );
    assert_eq!(
        apply(doc.clone(), json!([{"op": "move", "from": "", "path": ""}])).unwrap(),
        doc
    );
    assert_eq!(
        apply(doc.clone(), json!([{"op": "copy", "from": "", "path": ""}])).unwrap(),
        doc
    );
    assert_eq!(
        kind(
            doc.clone(),
            json!([{"op": "move", "from": "/x", "path": ""}])
        ),
        PatchErrorKind::FromNotFound
    );
    // Root ops work on any document, null and scalars included.
    assert_eq!(
        apply(Value::Null, json!([{"op": "add", "path": "", "value": {}}])).unwrap(),
        json!({})
    );
    assert_eq!(
        apply(
            json!(5),
            json!([{"op": "replace", "path": "", "value": "x"}])
        )
        .unwrap(),
        json!("x")
    );
    assert!(
        apply(
            Value::Null,
            json!([{"op": "test", "path": "", "value": null}])
        )
        .is_ok()
    );
    // Later operations see the new root.
    let out = apply(
        json!(null),
        json!([{"op": "add", "path": "", "value": {}}, {"op": "add", "path": "/a", "value": 1}]),
    )
    .unwrap();
    assert_eq!(out, json!({"a": 1}));
}

#[test]
fn banned_tokens() {
    let doc = json!({"a": {"constructor": {"prototype": 1}}, "prototype": 2, "constructor": 3});
    for op in [
        json!({"op": "add", "path": "/__proto__", "value": {}}),
        json!({"op": "add", "path": "/a/__proto__/x", "value": 1}),
        json!({"op": "test", "path": "/__proto__", "value": {}}),
        json!({"op": "copy", "from": "/__proto__", "path": "/x"}),
        json!({"op": "move", "from": "/a", "path": "/__proto__"}),
        json!({"op": "replace", "path": "/a/constructor/prototype", "value": 1}),
        json!({"op": "test", "path": "/a/constructor/prototype", "value": 1}),
        json!({"op": "add", "path": "/__pr~1oto__", "value": 1}),
    ] {
        let expected = if op["path"] == "/__pr~1oto__" {
            None // "__pr/oto__" is an ordinary name
        } else {
            Some(PatchErrorKind::BannedToken)
        };
        assert_eq!(
            apply(doc.clone(), json!([op])).err().map(|e| e.kind),
            expected,
            "{op}"
        );
    }
    // `constructor` and `prototype` on their own are ordinary member names.
    for op in [
        json!({"op": "replace", "path": "/constructor", "value": 0}),
        json!({"op": "remove", "path": "/prototype"}),
        json!({"op": "test", "path": "/a/constructor", "value": {"prototype": 1}}),
        json!({"op": "add", "path": "/x/constructor", "value": 0}),
    ] {
        let result = apply(
            json!({"constructor": 3, "prototype": 2, "a": {"constructor": {"prototype": 1}}, "x": {}}),
            json!([op]),
        );
        assert!(result.is_ok(), "{op}: {result:?}");
    }
}

#[test]
fn null_document_fails_non_root_ops() {
    for op in [
        json!({"op": "add", "path": "/a", "value": 1}),
        json!({"op": "remove", "path": "/a"}),
        json!({"op": "test", "path": "/a", "value": null}),
        json!({"op": "copy", "from": "", "path": "/a"}),
    ] {
        assert_eq!(kind(Value::Null, json!([op])), PatchErrorKind::NullDocument);
    }
}

#[test]
fn scalar_document_quirks() {
    let ok = |doc: Value, op: Value| -> bool {
        match apply(doc.clone(), json!([op])) {
            Ok(out) => {
                assert_eq!(out, doc, "a scalar document never changes");
                true
            }
            Err(e) => {
                assert_eq!(e.kind, PatchErrorKind::ScalarDocument);
                false
            }
        }
    };
    let truthy = [json!(5), json!(-1.5), json!("s"), json!(true)];
    let falsy = [json!(0), json!(0.0), json!(""), json!(false)];
    for (docs, is_truthy) in [(truthy, true), (falsy, false)] {
        for doc in docs {
            let d = || doc.clone();
            // One token: add succeeds; replace/remove only on a falsy scalar.
            assert!(ok(d(), json!({"op": "add", "path": "/a", "value": 1})));
            assert_eq!(
                ok(d(), json!({"op": "replace", "path": "/a", "value": 1})),
                !is_truthy
            );
            assert_eq!(ok(d(), json!({"op": "remove", "path": "/a"})), !is_truthy);
            assert!(!ok(d(), json!({"op": "test", "path": "/a", "value": 1})));
            assert!(ok(d(), json!({"op": "move", "from": "", "path": "/a"})));
            assert!(ok(d(), json!({"op": "copy", "from": "", "path": "/a"})));
            assert_eq!(
                ok(d(), json!({"op": "move", "from": "/b", "path": "/a"})),
                !is_truthy
            );
            assert_eq!(
                ok(d(), json!({"op": "copy", "from": "/b", "path": "/a"})),
                !is_truthy
            );
            assert!(!ok(
                d(),
                json!({"op": "copy", "from": "/b/c", "path": "/a"})
            ));
            // Two or more tokens: always fails.
            assert!(!ok(d(), json!({"op": "add", "path": "/a/b", "value": 1})));
            assert!(!ok(d(), json!({"op": "remove", "path": "/a/b"})));
        }
    }
    // A whole patch of harmless operations on a scalar state succeeds unchanged.
    assert_eq!(
        apply(json!(7), json!([{"op": "add", "path": "/a", "value": 1}, {"op": "add", "path": "/b", "value": 2}])).unwrap(),
        json!(7)
    );
}

#[test]
fn empty_patch_is_a_no_op() {
    assert_eq!(apply(json!({"a": 1}), json!([])).unwrap(), json!({"a": 1}));
    assert_eq!(apply(Value::Null, json!([])).unwrap(), Value::Null);
}

#[test]
fn object_order_is_kept_on_remove() {
    let out = apply(
        json!({"a": 1, "b": 2, "c": 3}),
        json!([{"op": "remove", "path": "/b"}]),
    )
    .unwrap();
    assert_eq!(serde_json::to_string(&out).unwrap(), r#"{"a":1,"c":3}"#);
}

#[test]
fn failing_third_op_leaves_the_document_byte_identical() {
    let doc = json!({"z": 1, "a": {"m": [1, 2, {"k": "v"}], "b": true}, "c": null, "d": "s"});
    let before = serde_json::to_string(&doc).unwrap();
    let prefixes = [
        json!([{"op": "remove", "path": "/a/b"}, {"op": "add", "path": "/new", "value": 1}]),
        json!([{"op": "replace", "path": "/z", "value": 2}, {"op": "remove", "path": "/a/m/0"}]),
        json!([{"op": "move", "from": "/z", "path": "/a/z"}, {"op": "move", "from": "/a/m/2", "path": "/a/m/0"}]),
        json!([{"op": "move", "from": "/c", "path": "/d"}, {"op": "copy", "from": "/a", "path": "/a/m/1"}]),
        json!([{"op": "add", "path": "/a/m/-", "value": 3}, {"op": "add", "path": "/a/b", "value": false}]),
        json!([{"op": "remove", "path": "/z"}, {"op": "replace", "path": "", "value": [1]}]),
        json!([{"op": "move", "from": "/a", "path": ""}, {"op": "remove", "path": "/m"}]),
        json!([{"op": "remove", "path": ""}, {"op": "add", "path": "", "value": {"q": 1}}]),
        json!([{"op": "move", "from": "/z", "path": "/z"}, {"op": "move", "from": "/a/m/0", "path": "/a/m/-"}]),
    ];
    let failing = [
        json!({"op": "replace", "path": "/a/b/missing", "value": 0}),
        json!({"op": "test", "path": "", "value": null}),
        json!({"op": "move", "from": "/nope", "path": "/x"}),
    ];
    for prefix in &prefixes {
        for third in &failing {
            let mut ops = prefix.as_array().unwrap().clone();
            ops.push(third.clone());
            let ops = patch(Value::Array(ops));
            let mut d = doc.clone();
            let err = apply_patch(&mut d, &ops).unwrap_err();
            assert_eq!(err.index, 2);
            assert_eq!(
                serde_json::to_string(&d).unwrap(),
                before,
                "{prefix} + {third}"
            );
            // The same holds for the owning variant.
            let mut d = doc.clone();
            assert!(apply_patch_owned(&mut d, ops.clone()).is_err());
            assert_eq!(serde_json::to_string(&d).unwrap(), before);
        }
    }
}

#[test]
fn failed_move_insertion_puts_the_value_back() {
    // The removal succeeds, the insertion fails: the moved value must return.
    let doc = json!({"a": 1, "b": {"c": 2}, "l": [[0], 5]});
    for (from, path) in [("/a", "/b/c/d"), ("/l/0", "/l/0/-"), ("/b", "/l/x")] {
        let before = serde_json::to_string(&doc).unwrap();
        let mut d = doc.clone();
        let ops = vec![PatchOp::move_from(ptr(from), ptr(path))];
        assert!(apply_patch(&mut d, &ops).is_err(), "{from} -> {path}");
        assert_eq!(serde_json::to_string(&d).unwrap(), before);
    }
}

#[test]
fn error_messages() {
    let e = apply(
        json!({"a": {}}),
        json!([{"op": "test", "path": "/a", "value": {}}, {"op": "add", "path": "/b", "value": 1},
               {"op": "replace", "path": "/a/b", "value": 1}]),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "operation 2 (replace /a/b): path not found");
    assert_eq!((e.index, e.op, e.path.as_str()), (2, "replace", "/a/b"));
    let e = apply(json!({}), json!([{"op": "move", "from": "/x", "path": ""}])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "operation 0 (move /x -> \"\"): `from` location not found"
    );
    let e = apply(json!([]), json!([{"op": "add", "path": "/1", "value": 1}])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "operation 0 (add /1): array index 1 is out of bounds (length 0)"
    );
}

#[test]
fn owned_and_copying_variants_agree() {
    let doc = json!({"a": [1, 2], "b": {"c": "d"}});
    let ops = patch(json!([
        {"op": "add", "path": "/a/1", "value": {"big": [1, 2, 3]}},
        {"op": "replace", "path": "/b/c", "value": "e"},
        {"op": "copy", "from": "/a/1", "path": "/f"},
        {"op": "test", "path": "/f/big/2", "value": 3},
    ]));
    let expected = apply_patch_to(&doc, &ops).unwrap();
    assert_eq!(
        doc,
        json!({"a": [1, 2], "b": {"c": "d"}}),
        "apply_patch_to leaves its input"
    );
    let mut owned = doc.clone();
    apply_patch_owned(&mut owned, ops).unwrap();
    assert_eq!(owned, expected);
    assert_eq!(expected["f"], json!({"big": [1, 2, 3]}));
}

/// Small deterministic generator (xorshift) for the randomized rollback check.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn value(&mut self, depth: usize) -> Value {
        match self.below(if depth > 2 { 4 } else { 7 }) {
            0 => Value::Null,
            1 => json!(self.below(3)),
            2 => json!(["", "s", "t"][self.below(3)]),
            3 => json!(self.below(2) == 0),
            4 | 5 => {
                let mut m = Map::new();
                for _ in 0..self.below(4) {
                    m.insert(
                        ["a", "b", "c", "d"][self.below(4)].into(),
                        self.value(depth + 1),
                    );
                }
                Value::Object(m)
            }
            _ => Value::Array((0..self.below(4)).map(|_| self.value(depth + 1)).collect()),
        }
    }
    fn pointer(&mut self, doc: &Value) -> JsonPointer {
        let mut p = JsonPointer::root();
        let mut cur = Some(doc);
        for _ in 0..self.below(4) {
            let token = match cur {
                Some(Value::Object(m)) if !m.is_empty() && self.below(4) > 0 => {
                    m.keys().nth(self.below(m.len())).unwrap().clone()
                }
                Some(Value::Array(a)) if self.below(5) > 0 => (self.below(a.len() + 2)).to_string(),
                _ => ["a", "b", "-", "0", "1", "01"][self.below(6)].to_owned(),
            };
            cur = cur.and_then(|c| match c {
                Value::Object(m) => m.get(&token),
                Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            });
            p.push(&token);
        }
        p
    }
    fn op(&mut self, doc: &Value) -> PatchOp {
        let path = self.pointer(doc);
        match self.below(6) {
            0 => PatchOp::add(path, self.value(1)),
            1 => PatchOp::remove(path),
            2 => PatchOp::replace(path, self.value(1)),
            3 => PatchOp::move_from(self.pointer(doc), path),
            4 => PatchOp::copy_from(self.pointer(doc), path),
            _ => {
                let value = match self.below(2) {
                    0 => walk(doc, path.tokens())
                        .ok()
                        .cloned()
                        .unwrap_or(Value::Null),
                    _ => self.value(1),
                };
                PatchOp::test(path, value)
            }
        }
    }
}

#[test]
fn randomized_patches_are_atomic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut ok, mut failed) = (0, 0);
    for _ in 0..20_000 {
        let doc = match rng.below(10) {
            0 => rng.value(3),
            _ => {
                let mut m = Map::new();
                for k in ["a", "b", "c"] {
                    m.insert(k.into(), rng.value(1));
                }
                Value::Object(m)
            }
        };
        let ops: JsonPatch = (0..1 + rng.below(5)).map(|_| rng.op(&doc)).collect();
        let before = serde_json::to_string(&doc).unwrap();
        let mut d = doc.clone();
        match apply_patch(&mut d, &ops) {
            Ok(()) => ok += 1,
            Err(e) => {
                failed += 1;
                assert_eq!(serde_json::to_string(&d).unwrap(), before, "{ops:?}");
                // Everything before the failing operation applies on its own.
                let mut prefix = doc.clone();
                apply_patch(&mut prefix, &ops[..e.index]).unwrap();
                assert!(apply_patch(&mut prefix, &ops[e.index..=e.index]).is_err());
            }
        }
    }
    assert!(ok > 1_000 && failed > 1_000, "ok {ok}, failed {failed}");
}

/// Objects small enough to be searched member by member and objects looked up by hash
/// resolve every member the same way: keys of one length, the empty key, keys with `~`
/// and `/`, and a key that is only a prefix of another.
#[test]
fn small_and_large_objects_resolve_members_alike() {
    for size in [1, 7, 8, 9, 20] {
        let mut map = Map::new();
        for i in 0..size - 1 {
            map.insert(format!("k{i:02}"), json!(i));
        }
        map.insert(["", "a/b", "t~x", "k0"][size % 4].to_owned(), json!("odd"));
        let doc = Value::Object(map.clone());
        for (key, value) in &map {
            let mut pointer = JsonPointer::root();
            pointer.push(key);
            let p = pointer.as_str();
            let want_removed = {
                let mut m = map.clone();
                m.shift_remove(key);
                Value::Object(m)
            };
            let mut replaced = map.clone();
            replaced[key] = json!(null);
            check_ops(
                &doc,
                vec![
                    (
                        json!({"op": "test", "path": p, "value": value}),
                        Ok(doc.clone()),
                    ),
                    (
                        json!({"op": "replace", "path": p, "value": null}),
                        Ok(Value::Object(replaced)),
                    ),
                    (json!({"op": "remove", "path": p}), Ok(want_removed)),
                ],
            );
            let nested = json!({"x": doc.clone()});
            let mut inner = JsonPointer::root();
            inner.push("x");
            inner.push(key);
            assert_eq!(
                apply(
                    nested,
                    json!([{"op": "copy", "from": inner.as_str(), "path": "/y"}])
                )
                .unwrap()["y"],
                *value,
                "{size} {key:?}"
            );
        }
        for missing in ["k", "k000", "zz", "a~1"] {
            let p = format!("/{missing}");
            assert_eq!(
                kind(
                    doc.clone(),
                    json!([{"op": "replace", "path": p, "value": 1}])
                ),
                PatchErrorKind::PathNotFound,
                "{size} {missing}"
            );
        }
    }
}

#[test]
fn operations_without_extras_hold_no_map() {
    // A patch is a Vec of operations that are read one after another; an extra-member map
    // held inline made each of them 176 bytes (encoding waited on memory).
    assert!(std::mem::size_of::<PatchOp>() <= 112);
    let op: PatchOp =
        serde_json::from_value(json!({"op": "add", "path": "/a", "value": 1})).unwrap();
    let PatchOp::Add { extra, .. } = &op else {
        panic!("an add: {op:?}")
    };
    assert_eq!(*extra, Extra::new());
    assert_eq!(format!("{extra:?}"), "{}");
    // An empty map made by writing access equals none; members taken out again.
    let mut touched = PatchOp::remove(ptr("/a"));
    touched.extra_mut().clear();
    assert_eq!(touched, PatchOp::remove(ptr("/a")));
    touched.extra_mut().insert("k".into(), json!(1));
    assert_ne!(touched, PatchOp::remove(ptr("/a")));
    let PatchOp::Remove { extra, .. } = touched else {
        unreachable!()
    };
    assert_eq!(Map::from(extra.clone()), extra.into_map());
}
