use super::*;
use crate::event::write_value;
use crate::patch::{JsonPatch, PatchOp, apply_owned_to};
use proptest::prelude::*;
use serde_json::json;

/// The JSON text of a `Value`, members in order (what the state's output shows).
fn text(value: &Value) -> String {
    serde_json::to_string(value).unwrap()
}

#[test]
fn a_doc_takes_24_bytes() {
    // The reason the type exists: an array removal moves its elements.
    assert_eq!(std::mem::size_of::<Doc>(), 24);
}

#[test]
fn converts_both_ways_without_loss() {
    let wide: Map<String, Value> = (0..20)
        .map(|i| (format!("k{}", 19 - i), json!(i)))
        .collect();
    let value = json!({
        "z": null, "b": true, "n": [1, -2, 1.5, 18446744073709551615u64, -9223372036854775808i64],
        "s": "é \" \\ \u{1}", "few": {"y": 1, "x": [{}, []]}, "wide": wide,
        "eight": {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8},
    });
    let doc = Doc::from(value.clone());
    assert_eq!(text(&doc.to_value()), text(&value));
    assert_eq!(text(&doc.clone().into_value()), text(&value));
    let mut written = Vec::new();
    write_value(&mut written, &doc);
    assert_eq!(written, serde_json::to_vec(&value).unwrap());
}

#[test]
fn reads_text_as_a_value_does() {
    // A repeated key keeps its first place and its last value, in a small object and in
    // one past the list limit (and in one that crosses the limit on the repeat).
    let many: String = (0..12).map(|i| format!("\"k{i}\":{i},")).collect();
    for json in [
        r#"{"a":1,"b":2,"a":3}"#.to_owned(),
        format!(r#"{{{many}"k3":"again","z":[1,{{"q":1,"q":2}}]}}"#),
        r#"{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"1":0,"9":9}"#.to_owned(),
        r#"[1.0,1e300,-0.0,"\ud83d\ude00",{"":null}]"#.to_owned(),
    ] {
        let want: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            text(&Doc::of_text(json.as_bytes()).into_value()),
            text(&want),
            "{json}"
        );
    }
}

#[test]
fn members_grow_past_the_list_and_keep_their_order() {
    let mut members = DocMembers::with_capacity(0);
    for i in 0..SCAN_MEMBERS + 3 {
        Members::push(&mut members, format!("k{i}"), Doc::Number(i.into()));
        assert_eq!(members.len(), i + 1);
        assert!(matches!(members, DocMembers::Few(_)) == (i < SCAN_MEMBERS));
    }
    let keys = |m: &DocMembers| m.iter().map(|(k, _)| k.to_owned()).collect::<Vec<_>>();
    let before = keys(&members);
    let (pos, value) = members.take("k2").unwrap();
    assert_eq!((pos, value.to_value()), (2, json!(2)));
    assert!(members.get("k2").is_none());
    members.put(pos, "k2".into(), value);
    assert_eq!(keys(&members), before);
    // A list that is full takes a member at a position by becoming a map.
    let mut full = DocMembers::with_capacity(0);
    for i in 0..SCAN_MEMBERS {
        Members::push(&mut full, format!("k{i}"), Doc::Null);
    }
    full.put(1, "new".into(), Doc::Bool(true));
    assert!(matches!(full, DocMembers::Many(_)));
    assert_eq!(keys(&full)[..3], ["k0", "new", "k1"]);
    assert_eq!(full.get("new").map(Doc::to_value), Some(json!(true)));
}

/// A small JSON document: few keys, so that random pointers often resolve.
fn document() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..4).prop_map(|n| json!(n)),
        Just(json!(1.0)),
        Just(json!(0.5)),
        prop::sample::select(vec!["", "a", "é"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 48, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            // Up to 12 members: objects on both sides of the list limit.
            prop::collection::vec((key(), inner), 0..12)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "0", "1", "~", "/",
    ])
    .prop_map(str::to_owned)
}

/// A pointer of up to three tokens from the keys, indexes and odd tokens.
fn pointer() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        6 => key().prop_map(|k| k.replace('~', "~0").replace('/', "~1")),
        4 => prop::sample::select(vec!["0", "1", "2", "-", "01", "9"]).prop_map(str::to_owned),
    ];
    prop::collection::vec(token, 0..4)
        .prop_map(|tokens| tokens.iter().map(|t| format!("/{t}")).collect::<String>())
}

fn operation() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["add", "remove", "replace", "move", "copy", "test"]),
        pointer(),
        pointer(),
        document(),
    )
        .prop_map(|(op, path, from, value)| match op {
            "remove" => json!({"op": op, "path": path}),
            "move" | "copy" => json!({"op": op, "path": path, "from": from}),
            _ => json!({"op": op, "path": path, "value": value}),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// A patch does to a compact document exactly what it does to a `Value`: the same
    /// outcome (the failing operation and why) and the same document, members in order,
    /// whether it succeeds or is rolled back.
    #[test]
    fn patches_a_doc_as_a_value(
        start in document(),
        ops in prop::collection::vec(operation(), 1..6),
    ) {
        let ops: JsonPatch = serde_json::from_value(Value::Array(ops)).unwrap();
        let mut value = start.clone();
        let mut doc = Doc::from(start);
        let by_value = apply_owned_to(&mut value, ops.clone());
        let by_doc = apply_owned_to(&mut doc, ops.clone());
        let names: Vec<_> = ops.iter().map(PatchOp::op).collect();
        prop_assert_eq!(&by_doc, &by_value, "{:?}", names);
        prop_assert_eq!(text(&doc.to_value()), text(&value));
        let mut written = Vec::new();
        write_value(&mut written, &doc);
        prop_assert_eq!(written, serde_json::to_vec(&value).unwrap());
    }
}
