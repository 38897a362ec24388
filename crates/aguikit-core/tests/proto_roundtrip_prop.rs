//! Property tests: for generated events of many types, `decode_event(encode_event(e)) == e`
//! (protobuf), JSON encode→decode is the identity, and the events' own JSON writer writes
//! the bytes serde_json writes.
//!
//! Generated shapes stay within what the reference's own protobuf round trip keeps: no
//! `RUN_STARTED.input` (the reference adds empty `tools`/`context`/`resume`), no unknown
//! members on patch operations, no object keys that are array indices (JavaScript puts
//! them first), no integral floats (`2.0` comes back as `2`) and no `null` where an
//! optional value reads `null` as absent.
#![cfg(feature = "proto")]

use aguikit_core::Event;
use aguikit_core::codec::proto::{decode_event, encode_event};
use aguikit_core::event::*;
use aguikit_core::patch::{JsonPatch, JsonPointer, PatchOp};
use proptest::prelude::*;
use serde_json::{Map, Value};

fn id() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_.:-]{1,16}"
}

/// Free text: ASCII with escapes, and arbitrary Unicode (astral planes included).
fn text() -> BoxedStrategy<String> {
    prop_oneof![
        "[a-z \"\\\\\n\t/<>&']{0,24}",
        "\\PC{0,16}",
        any::<String>(),
        Just("naïve 東京 🚀 \u{1F1E7}\u{1F1F7} \u{200D}".to_owned()),
    ]
    .boxed()
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof!["[a-zA-Z_][a-zA-Z0-9_-]{0,8}", "[a-z]?\\PC{0,6}"]
        .prop_filter("array-index keys are reordered", |k| {
            k.is_empty() || !k.chars().all(|c| c.is_ascii_digit())
        })
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-(1i64 << 53)..(1i64 << 53)).prop_map(Value::from),
        // Non-integral doubles, exactly representable.
        (-100_000i64..100_000).prop_map(|n| Value::from((2 * n + 1) as f64 / 16.0)),
        any::<f64>()
            .prop_filter("finite, non-integral", |f| f.is_finite()
                && f.fract() != 0.0)
            .prop_map(Value::from),
    ]
}

fn json() -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
    .boxed()
}

fn object() -> BoxedStrategy<Map<String, Value>> {
    prop::collection::vec((key(), json()), 0..5)
        .prop_map(|kv| kv.into_iter().collect())
        .boxed()
}

/// A value for an optional field, where `null` would read back as absent.
fn some_json() -> BoxedStrategy<Value> {
    json().prop_filter("not null", |v| !v.is_null()).boxed()
}

fn pointer() -> impl Strategy<Value = JsonPointer> {
    prop::collection::vec("[a-z0-9~]{0,4}|-", 0..4).prop_map(|tokens| {
        let mut p = JsonPointer::parse("").unwrap();
        for t in &tokens {
            p.push(t);
        }
        p
    })
}

fn patch() -> impl Strategy<Value = JsonPatch> {
    let op = prop_oneof![
        (pointer(), json()).prop_map(|(p, v)| PatchOp::add(p, v)),
        pointer().prop_map(PatchOp::remove),
        (pointer(), json()).prop_map(|(p, v)| PatchOp::replace(p, v)),
        (pointer(), pointer()).prop_map(|(f, p)| PatchOp::move_from(f, p)),
        (pointer(), pointer()).prop_map(|(f, p)| PatchOp::copy_from(f, p)),
        (pointer(), json()).prop_map(|(p, v)| PatchOp::test(p, v)),
    ];
    prop::collection::vec(op, 0..4)
}

/// The base fields every event carries.
#[derive(Debug, Clone)]
struct Base {
    subagent: Option<String>,
    timestamp: Option<i64>,
    raw: Option<Value>,
    metadata: Option<Map<String, Value>>,
}

fn base() -> impl Strategy<Value = Base> {
    (
        prop::option::of(id()),
        prop::option::of(0i64..(1i64 << 53)),
        prop::option::weighted(0.2, some_json()),
        prop::option::weighted(0.2, object()),
    )
        .prop_map(|(subagent, timestamp, raw, metadata)| Base {
            subagent,
            timestamp,
            raw,
            metadata,
        })
}

macro_rules! with_base {
    ($e:expr, $b:expr) => {{
        let mut e = $e;
        e.timestamp = $b.timestamp;
        e.raw_event = $b.raw.map(Box::new);
        e.metadata = $b.metadata.map(Box::new);
        e
    }};
    ($e:expr, $b:expr, sub) => {{
        let mut e = with_base!($e, $b);
        e.subagent_run_id = $b.subagent;
        e
    }};
}

fn text_role() -> impl Strategy<Value = TextMessageRole> {
    prop_oneof![
        Just(TextMessageRole::Developer),
        Just(TextMessageRole::System),
        Just(TextMessageRole::Assistant),
        Just(TextMessageRole::User),
    ]
}

fn opt<T: std::fmt::Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    prop::option::of(s)
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        // Run and step lifecycle.
        (id(), id(), opt(id()), base()).prop_map(|(t, r, parent, b)| {
            let mut e = RunStarted::new(t, r);
            e.parent_run_id = parent;
            with_base!(e, b).into()
        }),
        (id(), id(), opt(some_json()), base()).prop_map(|(t, r, result, b)| {
            let mut e = RunFinished::new(t, r);
            e.result = result;
            with_base!(e, b).into()
        }),
        (text(), opt(id()), base()).prop_map(|(m, code, b)| {
            let mut e = RunError::new(m);
            e.code = code;
            with_base!(e, b).into()
        }),
        (text(), base()).prop_map(|(n, b)| with_base!(StepStarted::new(n), b, sub).into()),
        (text(), base()).prop_map(|(n, b)| with_base!(StepFinished::new(n), b, sub).into()),
        // Text messages.
        (id(), opt(text_role()), opt(text()), base()).prop_map(|(m, role, name, b)| {
            let mut e = TextMessageStart::new(m);
            e.role = role;
            e.name = name;
            with_base!(e, b, sub).into()
        }),
        (id(), text(), base()).prop_map(|(m, d, b)| with_base!(
            TextMessageContent::new(m, d),
            b,
            sub
        )
        .into()),
        (id(), base()).prop_map(|(m, b)| with_base!(TextMessageEnd::new(m), b, sub).into()),
        (
            opt(id()),
            opt(text_role()),
            opt(text()),
            opt(text()),
            base()
        )
            .prop_map(|(m, role, delta, name, b)| {
                let mut e = TextMessageChunk::new();
                e.message_id = m;
                e.role = role;
                e.delta = delta;
                e.name = name;
                with_base!(e, b, sub).into()
            }),
        // Tool calls.
        (id(), text(), opt(id()), base()).prop_map(|(t, n, parent, b)| {
            let mut e = ToolCallStart::new(t, n);
            e.parent_message_id = parent;
            with_base!(e, b, sub).into()
        }),
        (id(), text(), base())
            .prop_map(|(t, d, b)| with_base!(ToolCallArgs::new(t, d), b, sub).into()),
        (id(), base()).prop_map(|(t, b)| with_base!(ToolCallEnd::new(t), b, sub).into()),
        (opt(id()), opt(text()), opt(id()), opt(text()), base()).prop_map(
            |(t, n, parent, delta, b)| {
                let mut e = ToolCallChunk::new();
                e.tool_call_id = t;
                e.tool_call_name = n;
                e.parent_message_id = parent;
                e.delta = delta;
                with_base!(e, b, sub).into()
            }
        ),
        (id(), id(), text(), base())
            .prop_map(|(m, t, c, b)| { with_base!(ToolCallResult::new(m, t, c), b, sub).into() }),
        // State, activity, custom.
        (json(), base()).prop_map(|(s, b)| with_base!(StateSnapshot::new(s), b, sub).into()),
        (patch(), base()).prop_map(|(p, b)| with_base!(StateDelta::new(p), b, sub).into()),
        (id(), id(), object(), opt(any::<bool>()), base()).prop_map(|(m, t, c, replace, b)| {
            let mut e = ActivitySnapshot::new(m, t, c);
            e.replace = replace;
            with_base!(e, b, sub).into()
        }),
        (id(), id(), patch(), base()).prop_map(|(m, t, p, b)| with_base!(
            ActivityDelta::new(m, t, p),
            b,
            sub
        )
        .into()),
        (text(), json(), base()).prop_map(|(n, v, b)| with_base!(Custom::new(n, v), b, sub).into()),
        (json(), opt(text()), base()).prop_map(|(v, source, b)| {
            let mut e = Raw::new(v);
            e.source = source;
            with_base!(e, b, sub).into()
        }),
        // Reasoning.
        (id(), base()).prop_map(|(m, b)| with_base!(ReasoningStart::new(m), b, sub).into()),
        (id(), base()).prop_map(|(m, b)| {
            with_base!(ReasoningMessageStart::new(m, ReasoningRole), b, sub).into()
        }),
        (id(), text(), base()).prop_map(|(m, d, b)| {
            with_base!(ReasoningMessageContent::new(m, d), b, sub).into()
        }),
        (id(), base()).prop_map(|(m, b)| with_base!(ReasoningMessageEnd::new(m), b, sub).into()),
        (opt(id()), opt(text()), base()).prop_map(|(m, d, b)| {
            let mut e = ReasoningMessageChunk::new();
            e.message_id = m;
            e.delta = d;
            with_base!(e, b, sub).into()
        }),
        (id(), base()).prop_map(|(m, b)| with_base!(ReasoningEnd::new(m), b, sub).into()),
        (any::<bool>(), id(), text(), base()).prop_map(|(tool, entity, value, b)| {
            let subtype = if tool {
                EncryptedValueSubtype::ToolCall
            } else {
                EncryptedValueSubtype::Message
            };
            with_base!(ReasoningEncryptedValue::new(subtype, entity, value), b, sub).into()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn proto_encode_decode_is_identity(event in event()) {
        let body = encode_event(&event).expect("every typed event has a protobuf form");
        let back = decode_event(&body);
        prop_assert_eq!(back, Ok(Some(event)));
    }

    #[test]
    fn json_encode_decode_is_identity(event in event()) {
        let json = event.to_json_vec();
        let back = Event::from_json_slice(&json);
        prop_assert!(back.is_ok(), "{:?}: {}", back, String::from_utf8_lossy(&json));
        let back = back.unwrap();
        prop_assert_eq!(&back, &event);
        prop_assert_eq!(back.to_json_vec(), json);
    }

    #[test]
    fn the_events_own_writer_writes_serde_jsons_bytes(event in event()) {
        let mut own = Vec::new();
        event.write_json(&mut own);
        let serde = serde_json::to_vec(&event).unwrap();
        prop_assert_eq!(String::from_utf8_lossy(&own), String::from_utf8_lossy(&serde));
    }
}
