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

/// A step on an array: insert at, remove at, or replace at a position (taken modulo the
/// length, so that most steps land).
#[derive(Debug, Clone)]
enum Step {
    Insert(usize),
    Remove(usize),
    Set(usize),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    // Half the positions fall in the first blocks, so that blocks there shrink far enough
    // to be joined and grow far enough to be split.
    let at = || prop_oneof![0usize..150, any::<usize>()];
    prop::collection::vec(
        prop_oneof![
            3 => at().prop_map(Step::Insert),
            4 => at().prop_map(Step::Remove),
            1 => at().prop_map(Step::Set),
        ],
        0..600,
    )
}

/// The block list's own rules: the length is the elements', no block is empty or over
/// the limit, and a short array is one vector.
fn check_blocks(items: &DocItems) -> Result<(), TestCaseError> {
    if let DocItems::Blocks {
        len,
        blocks,
        starts,
    } = items
    {
        prop_assert_eq!(*len, blocks.iter().map(Vec::len).sum::<usize>());
        let want: Vec<usize> = blocks
            .iter()
            .scan(0, |start, block| {
                let this = *start;
                *start += block.len();
                Some(this)
            })
            .collect();
        prop_assert_eq!(starts, &want);
        prop_assert!(*len > BLOCK / 2, "{} elements left in blocks", len);
        for block in blocks {
            prop_assert!(
                !block.is_empty() && block.len() <= BLOCK,
                "a block of {}",
                block.len()
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// An array in blocks reads, inserts, removes and replaces as a vector does, around
    /// every size where it changes shape.
    #[test]
    fn items_behave_as_a_vector(start in 0usize..700, steps in steps()) {
        let mut model: Vec<i64> = (0..start as i64).collect();
        let mut items = DocItems::from_vec(model.iter().map(|&n| Doc::Number(n.into())).collect());
        check_blocks(&items)?;
        let mut next = start as i64;
        for step in steps {
            match step {
                Step::Insert(at) => {
                    let at = at % (model.len() + 1);
                    model.insert(at, next);
                    items.insert(at, Doc::Number(next.into()));
                    next += 1;
                }
                Step::Remove(at) => {
                    let at = if model.is_empty() { at % 2 } else { at % model.len() };
                    let want = (at < model.len()).then(|| model.remove(at));
                    let got = items.remove(at).map(|d| d.to_value());
                    prop_assert_eq!(got, want.map(|n| json!(n)));
                }
                Step::Set(at) if !model.is_empty() => {
                    let at = at % model.len();
                    model[at] = -model[at];
                    items[at] = Doc::Number(model[at].into());
                }
                Step::Set(_) => {}
            }
            check_blocks(&items)?;
            prop_assert_eq!(items.len(), model.len());
        }
        let values: Vec<Value> = Items::iter(&items).map(Doc::to_value).collect();
        prop_assert_eq!(&values, &model.iter().map(|&n| json!(n)).collect::<Vec<_>>());
        for (i, n) in model.iter().enumerate() {
            prop_assert_eq!(items[i].to_value(), json!(n));
        }
        prop_assert_eq!(Doc::Array(Box::new(items)).into_value(), json!(model));
    }
}

#[test]
fn long_arrays_patch_as_values_do() {
    // Patches on arrays long enough to be kept in blocks: removals and insertions across
    // block edges, a move within the array, a failing patch rolled back.
    let start = json!({"l": (0..1000).collect::<Vec<_>>()});
    let mut ops = Vec::new();
    for i in 0..300 {
        ops.push(json!({"op": "remove", "path": format!("/l/{}", (i * 7) % (1000 - i))}));
        ops.push(json!({"op": "add", "path": format!("/l/{}", (i * 13) % 700), "value": {"i": i}}));
    }
    ops.push(json!({"op": "move", "from": "/l/5", "path": "/l/600"}));
    ops.push(json!({"op": "copy", "from": "/l/599", "path": "/l/-"}));
    let good: JsonPatch = serde_json::from_value(Value::Array(ops.clone())).unwrap();
    ops.push(json!({"op": "test", "path": "/l/0", "value": "no"}));
    let bad: JsonPatch = serde_json::from_value(Value::Array(ops)).unwrap();
    for patch in [good, bad] {
        let (mut value, mut doc) = (start.clone(), Doc::from(start.clone()));
        let by_value = apply_owned_to(&mut value, patch.clone());
        assert_eq!(apply_owned_to(&mut doc, patch), by_value);
        assert!(matches!(&doc, Doc::Object(m) if matches!(
            m.get("l"), Some(Doc::Array(items)) if matches!(**items, DocItems::Blocks { .. }))));
        assert_eq!(text(&doc.to_value()), text(&value));
    }
}
