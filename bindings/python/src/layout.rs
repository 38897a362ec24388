//! The shape of every AG-UI object as the official Python SDK (`ag-ui-protocol` 1.0) writes
//! it: the order of its members, which optional members are left out when they are `None`,
//! and the defaults a model fills in. `EventEncoder` writes a plain dict in this order so
//! that its bytes are the bytes the SDK's `EventEncoder` writes for the model the dict
//! validates to.
//!
//! The SDK's models put the base event fields (`type`, `timestamp`, `rawEvent`, `metadata`)
//! first, then `subagentRunId` for the events that can belong to a subagent, then the event's
//! own fields; members a model does not declare come last, in the order given. `Any`-typed
//! values (state, `rawEvent`, `value`, `content` of activities, metadata) are written as
//! given. The test suite checks these tables against the SDK's models (every event of the
//! conformance corpus, written both ways).

/// What a member holds.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// Opaque JSON: written as given.
    Any,
    /// An object with these members (applied when the value is a dict).
    Obj(&'static [Field]),
    /// A list of this shape (applied when the value is a list; a string is written as is,
    /// for the `content` members that are a string or a list of parts).
    List(&'static Shape),
    /// One of several objects, told apart by the string member `tag`.
    Tagged(&'static str, &'static [(&'static str, &'static [Field])]),
}

/// One member of an object.
#[derive(Debug)]
pub struct Field {
    /// The wire name (camelCase).
    pub alias: &'static str,
    /// Left out when its value is `None`.
    pub omit: bool,
    /// The JSON written when the member is absent (a model's default), if any.
    pub default: Option<&'static str>,
    /// What it holds.
    pub shape: Shape,
}

const fn req(alias: &'static str) -> Field {
    Field {
        alias,
        omit: false,
        default: None,
        shape: Shape::Any,
    }
}

const fn opt(alias: &'static str) -> Field {
    Field {
        alias,
        omit: true,
        default: None,
        shape: Shape::Any,
    }
}

const fn req_of(alias: &'static str, shape: Shape) -> Field {
    Field {
        alias,
        omit: false,
        default: None,
        shape,
    }
}

const fn opt_of(alias: &'static str, shape: Shape) -> Field {
    Field {
        alias,
        omit: true,
        default: None,
        shape,
    }
}

const fn defaulted(alias: &'static str, json: &'static str) -> Field {
    Field {
        alias,
        omit: false,
        default: Some(json),
        shape: Shape::Any,
    }
}

// Messages and their parts.
const SOURCES: &[(&str, &[Field])] = &[
    ("data", &[req("type"), req("value"), req("mimeType")]),
    ("url", &[req("type"), req("value"), opt("mimeType")]),
    (
        "file",
        &[req("type"), req("value"), opt("provider"), opt("mimeType")],
    ),
];
const MEDIA_PART: &[Field] = &[
    req("type"),
    opt("id"),
    req_of("source", Shape::Tagged("type", SOURCES)),
    opt("metadata"),
];
const PARTS: Shape = Shape::List(&Shape::Tagged(
    "type",
    &[
        (
            "text",
            &[req("type"), opt("id"), req("text"), opt("metadata")],
        ),
        ("image", MEDIA_PART),
        ("audio", MEDIA_PART),
        ("video", MEDIA_PART),
        ("document", MEDIA_PART),
    ],
));
const FUNCTION: &[Field] = &[req("name"), req("arguments")];
const TOOL_CALL: &[Field] = &[
    req("id"),
    defaulted("type", "\"function\""),
    req_of("function", Shape::Obj(FUNCTION)),
    opt("encryptedValue"),
    opt("metadata"),
];
const PLAIN_MESSAGE: &[Field] = &[
    opt("subagentRunId"),
    req("id"),
    req("role"),
    opt("name"),
    opt("encryptedValue"),
    opt("metadata"),
    req("content"),
];
const MESSAGE: Shape = Shape::Tagged(
    "role",
    &[
        ("developer", PLAIN_MESSAGE),
        ("system", PLAIN_MESSAGE),
        (
            "assistant",
            &[
                opt("subagentRunId"),
                req("id"),
                req("role"),
                opt("name"),
                opt("encryptedValue"),
                opt("metadata"),
                opt("content"),
                opt_of("toolCalls", Shape::List(&Shape::Obj(TOOL_CALL))),
            ],
        ),
        (
            "user",
            &[
                opt("subagentRunId"),
                req("id"),
                req("role"),
                opt("name"),
                opt("encryptedValue"),
                opt("metadata"),
                req_of("content", PARTS),
            ],
        ),
        (
            "tool",
            &[
                opt("subagentRunId"),
                req("id"),
                req("role"),
                req_of("content", PARTS),
                req("toolCallId"),
                opt("error"),
                opt("encryptedValue"),
                opt("metadata"),
            ],
        ),
        (
            "activity",
            &[
                opt("subagentRunId"),
                req("id"),
                req("role"),
                req("activityType"),
                req("content"),
                opt("metadata"),
            ],
        ),
        (
            "reasoning",
            &[
                opt("subagentRunId"),
                req("id"),
                req("role"),
                req("content"),
                opt("encryptedValue"),
                opt("metadata"),
            ],
        ),
    ],
);
const MESSAGES: Shape = Shape::List(&MESSAGE);

// JSON Patch.
const PATCH: Shape = Shape::List(&Shape::Tagged(
    "op",
    &[
        ("add", &[req("op"), req("path"), req("value")]),
        ("remove", &[req("op"), req("path")]),
        ("replace", &[req("op"), req("path"), req("value")]),
        ("move", &[req("op"), req("from"), req("path")]),
        ("copy", &[req("op"), req("from"), req("path")]),
        ("test", &[req("op"), req("path"), req("value")]),
    ],
));

// Run input.
const RUN_AGENT_INPUT: &[Field] = &[
    req("threadId"),
    req("runId"),
    opt("protocolVersion"),
    opt("parentRunId"),
    opt("state"),
    req_of("messages", MESSAGES),
    opt_of(
        "tools",
        Shape::List(&Shape::Obj(&[
            req("name"),
            req("description"),
            opt("parameters"),
            opt("metadata"),
        ])),
    ),
    opt_of(
        "context",
        Shape::List(&Shape::Obj(&[req("description"), req("value")])),
    ),
    opt("forwardedProps"),
    opt_of(
        "resume",
        Shape::List(&Shape::Obj(&[
            req("interruptId"),
            req("status"),
            opt("payload"),
            opt("metadata"),
        ])),
    ),
];

/// The run input (`RunAgentInput`), as the SDK's model writes it.
pub const INPUT: Shape = Shape::Obj(RUN_AGENT_INPUT);

// Outcomes and usage.
const INTERRUPT: &[Field] = &[
    opt("subagentRunId"),
    req("id"),
    req("reason"),
    opt("message"),
    opt("toolCallId"),
    opt("responseSchema"),
    opt("expiresAt"),
    opt("metadata"),
];
const RUN_OUTCOME: Shape = Shape::Tagged(
    "type",
    &[
        ("success", &[req("type"), opt("pendingToolCallIds")]),
        (
            "interrupt",
            &[
                req("type"),
                req_of("interrupts", Shape::List(&Shape::Obj(INTERRUPT))),
            ],
        ),
        ("cancelled", &[req("type")]),
    ],
);
const SUBAGENT_OUTCOME: Shape = Shape::Tagged(
    "type",
    &[
        ("success", &[req("type")]),
        ("suspended", &[req("type"), opt("interruptIds")]),
    ],
);
const USAGE: Shape = Shape::List(&Shape::Obj(&[
    opt("provider"),
    opt("model"),
    opt("inputTokens"),
    opt("outputTokens"),
    opt("totalTokens"),
    opt("reasoningTokens"),
    opt("cachedInputTokens"),
    opt("cacheWriteInputTokens"),
]));

/// The members of an event after the base ones (`type`, `timestamp`, `rawEvent`,
/// `metadata`), by wire type.
macro_rules! events {
    ($($tag:literal => [$($f:expr),* $(,)?]),* $(,)?) => {
        /// The layout of each event type (base members included).
        pub const EVENTS: &[(&str, &[Field])] = &[
            $(($tag, &[req("type"), opt("timestamp"), opt("rawEvent"), opt("metadata"), $($f),*]),)*
        ];
    };
}

events! {
    "TEXT_MESSAGE_START" => [opt("subagentRunId"), req("messageId"), opt("role"), opt("name")],
    "TEXT_MESSAGE_CONTENT" => [opt("subagentRunId"), req("messageId"), req("delta")],
    "TEXT_MESSAGE_END" => [opt("subagentRunId"), req("messageId")],
    "TEXT_MESSAGE_CHUNK" => [opt("subagentRunId"), opt("messageId"), opt("role"), opt("delta"), opt("name")],
    "TOOL_CALL_START" => [opt("subagentRunId"), req("toolCallId"), req("toolCallName"), opt("parentMessageId")],
    "TOOL_CALL_ARGS" => [opt("subagentRunId"), req("toolCallId"), req("delta")],
    "TOOL_CALL_END" => [opt("subagentRunId"), req("toolCallId")],
    "TOOL_CALL_CHUNK" => [opt("subagentRunId"), opt("toolCallId"), opt("toolCallName"), opt("parentMessageId"), opt("delta")],
    "TOOL_CALL_RESULT" => [opt("subagentRunId"), req("messageId"), req("toolCallId"), req_of("content", PARTS), opt("role")],
    "STATE_SNAPSHOT" => [opt("subagentRunId"), req("snapshot")],
    "STATE_DELTA" => [opt("subagentRunId"), req_of("delta", PATCH)],
    "MESSAGES_SNAPSHOT" => [req_of("messages", MESSAGES)],
    "ACTIVITY_SNAPSHOT" => [opt("subagentRunId"), req("messageId"), req("activityType"), req("content"), opt("replace")],
    "ACTIVITY_DELTA" => [opt("subagentRunId"), req("messageId"), req("activityType"), req_of("patch", PATCH)],
    "RAW" => [opt("subagentRunId"), req("event"), opt("source")],
    "CUSTOM" => [opt("subagentRunId"), req("name"), req("value")],
    "RUN_STARTED" => [req("threadId"), req("runId"), opt("protocolVersion"), opt("parentRunId"), opt_of("input", INPUT)],
    "RUN_FINISHED" => [req("threadId"), req("runId"), opt("result"), opt_of("outcome", RUN_OUTCOME), opt_of("usage", USAGE)],
    "RUN_ERROR" => [req("message"), opt("code"), opt_of("usage", USAGE)],
    "STEP_STARTED" => [opt("subagentRunId"), req("stepName")],
    "STEP_FINISHED" => [opt("subagentRunId"), req("stepName")],
    "REASONING_START" => [opt("subagentRunId"), req("messageId")],
    "REASONING_MESSAGE_START" => [opt("subagentRunId"), req("messageId"), defaulted("role", "\"reasoning\"")],
    "REASONING_MESSAGE_CONTENT" => [opt("subagentRunId"), req("messageId"), req("delta")],
    "REASONING_MESSAGE_END" => [opt("subagentRunId"), req("messageId")],
    "REASONING_MESSAGE_CHUNK" => [opt("subagentRunId"), opt("messageId"), opt("delta")],
    "REASONING_END" => [opt("subagentRunId"), req("messageId")],
    "REASONING_ENCRYPTED_VALUE" => [opt("subagentRunId"), req("subtype"), req("entityId"), req("encryptedValue")],
    "SUBAGENT_STARTED" => [req("subagentRunId"), req("name"), opt("description"), opt("parentSubagentRunId"), opt("parentToolCallId"), opt("parentMessageId")],
    "SUBAGENT_FINISHED" => [req("subagentRunId"), opt("result"), opt_of("outcome", SUBAGENT_OUTCOME)],
    "SUBAGENT_ERROR" => [req("subagentRunId"), req("message"), opt("code")],
}

/// The layout of the event of wire type `ty`, if it is one of the 31.
pub fn event(ty: &str) -> Option<&'static [Field]> {
    EVENTS.iter().find(|(t, _)| *t == ty).map(|(_, f)| *f)
}

/// The snake_case spelling of a camelCase wire name (the SDK's models accept both).
pub fn snake(alias: &str) -> String {
    let mut s = String::with_capacity(alias.len() + 4);
    for c in alias.chars() {
        if c.is_ascii_uppercase() {
            s.push('_');
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}
