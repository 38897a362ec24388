//! The rule table: every rule the engine's stages check, with a one-line explanation and
//! what the reference client (`@ag-ui/client` 1.0) does when an event breaks it.
//!
//! Rule ids are the labels of the client specification: `V1`–`V55` (verification,
//! client.md §5.1), `CH3`–`CH8` (chunk expansion, §4) and `schema` (enforcement of the
//! event schema at decode time, §3). A [`Violation`](super::Violation) carries one of these
//! ids; [`rule`] finds its entry. Tools use the table to explain violations: `agui rules`
//! prints it, `agui serve` serves it at `GET /rules`, `agui check --format sarif` links to it.
//!
//! ```
//! use aguikit_core::engine::rules::{rule, Verdict};
//! let r = rule("V49").unwrap();
//! assert_eq!(r.verdict, Verdict::Reject);
//! assert!(r.title.contains("text message"));
//! ```

/// The engine stage that checks a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Stage {
    /// Decoding and schema enforcement: a malformed event cannot be represented.
    Decode,
    /// Chunk expansion ([`super::expand`]).
    Expansion,
    /// Verification ([`super::verify`]).
    Verification,
}

/// What the rule decides for the events it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// The event is rejected: the run fails.
    Reject,
    /// The event is allowed; the rule describes what it does to the verifier's state.
    Allow,
}

/// One rule of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// The label in the client specification (`V13`, `CH8`, `schema`).
    pub id: &'static str,
    /// The stage that checks it.
    pub stage: Stage,
    /// Reject or allow.
    pub verdict: Verdict,
    /// What the rule is about, in a few words.
    pub title: &'static str,
    /// Why an event breaks it, in one line.
    pub explanation: &'static str,
    /// What the reference client does with such an event.
    pub reference: &'static str,
    /// Where the specification states it.
    pub section: &'static str,
}

/// What the reference client does with an event a verification rule rejects.
const REJECTS: &str = "verifyEvents throws an AGUIError: the run fails (onRunFailed, then runAgent rejects); the events before this one stay applied, this one and the rest of the stream are not.";
/// What the reference client does with a chunk that expansion rejects.
const EXPANSION_REJECTS: &str = "transformChunks throws: the run fails (onRunFailed, then runAgent rejects); the events before this chunk stay applied, the chunk and the rest of the stream are not.";
/// What the reference client does with an event enforcement rejects.
const ENFORCEMENT_REJECTS: &str = "enforceEvents rejects the malformed event: the run fails (onRunFailed, then runAgent rejects); the events before it stay applied.";
/// A rule enforced at decode time (a null where the schema has none cannot be represented).
const AT_DECODE: &str = "Rejected already by enforcement (EN4): on the wire such an event fails schema validation, so the engine reports it as `schema`.";

const fn v(
    id: &'static str,
    verdict: Verdict,
    title: &'static str,
    explanation: &'static str,
    reference: &'static str,
) -> Rule {
    Rule {
        id,
        stage: Stage::Verification,
        verdict,
        title,
        explanation,
        reference,
        section: "client.md §5.1",
    }
}

const fn reject(id: &'static str, title: &'static str, explanation: &'static str) -> Rule {
    v(id, Verdict::Reject, title, explanation, REJECTS)
}

const fn decode(id: &'static str, title: &'static str, explanation: &'static str) -> Rule {
    Rule {
        id,
        stage: Stage::Decode,
        verdict: Verdict::Reject,
        title,
        explanation,
        reference: AT_DECODE,
        section: "client.md §5.1, §3",
    }
}

const fn chunk(id: &'static str, title: &'static str, explanation: &'static str) -> Rule {
    Rule {
        id,
        stage: Stage::Expansion,
        verdict: Verdict::Reject,
        title,
        explanation,
        reference: EXPANSION_REJECTS,
        section: "client.md §4",
    }
}

/// Every rule, in the specification's order: `schema`, the chunk rules, then V1–V55.
pub const RULES: &[Rule] = &[
    Rule {
        id: "schema",
        stage: Stage::Decode,
        verdict: Verdict::Reject,
        title: "Malformed event",
        explanation: "The event does not match its schema: a wrong type, a missing required field, an enum value out of range, or a null where none is allowed.",
        reference: ENFORCEMENT_REJECTS,
        section: "client.md §3 (EN4)",
    },
    chunk(
        "CH3",
        "Chunk continues another subagent's stream",
        "A chunk names a stream that is open in another lane, with a subagentRunId that differs from that lane's.",
    ),
    chunk(
        "CH6",
        "Ambiguous chunk",
        "A chunk carries neither an id nor a subagentRunId while several lanes have an open stream of its kind.",
    ),
    chunk(
        "CH7",
        "Chunk contradicts its open stream",
        "A continuing chunk repeats a role, name, toolCallName or parentMessageId that differs from the open stream's.",
    ),
    chunk(
        "CH8",
        "First chunk incomplete",
        "The chunk that opens a stream lacks its id (messageId, toolCallId) or, for a tool call, its toolCallName.",
    ),
    reject(
        "V1",
        "Event after RUN_ERROR",
        "After RUN_ERROR only a new RUN_STARTED may follow.",
    ),
    reject(
        "V2",
        "Event after RUN_FINISHED",
        "After RUN_FINISHED only RUN_ERROR or a new RUN_STARTED may follow.",
    ),
    reject(
        "V3",
        "First event is not RUN_STARTED",
        "A stream starts with RUN_STARTED (or RUN_ERROR).",
    ),
    reject(
        "V4",
        "RUN_STARTED during a run",
        "A new run starts only after the previous one finished or errored.",
    ),
    v(
        "V5",
        Verdict::Allow,
        "A new run after the last one ended",
        "RUN_STARTED after RUN_FINISHED or RUN_ERROR starts a new run: every open set, owner and step is forgotten.",
        "Allowed; verification state is reset.",
    ),
    decode(
        "V6",
        "subagentRunId: null",
        "An event's subagentRunId is null; absent means the parent agent.",
    ),
    decode(
        "V7",
        "Null subagent lifecycle field",
        "SUBAGENT_STARTED with description, parentSubagentRunId, parentToolCallId or parentMessageId null.",
    ),
    decode(
        "V8",
        "Null subagent outcome or code",
        "SUBAGENT_FINISHED with outcome null, or SUBAGENT_ERROR with code null.",
    ),
    decode(
        "V9",
        "Unknown subagent outcome type",
        "A subagent outcome whose type is neither success nor suspended.",
    ),
    decode(
        "V10",
        "interruptIds: null",
        "A subagent outcome's interruptIds is null.",
    ),
    decode(
        "V11",
        "Non-string interrupt id",
        "A subagent outcome's interruptIds holds something that is not a string.",
    ),
    decode(
        "V12",
        "Interrupt with subagentRunId: null",
        "An interrupt of a RUN_FINISHED interrupt outcome carries subagentRunId null.",
    ),
    reject(
        "V13",
        "Text message already open",
        "TEXT_MESSAGE_START for a message id that is still open (no TEXT_MESSAGE_END yet).",
    ),
    reject(
        "V14",
        "Text message reopened by another owner",
        "TEXT_MESSAGE_START tagged with a subagent other than the one that owns the message id.",
    ),
    v(
        "V15",
        Verdict::Allow,
        "Text message opens",
        "TEXT_MESSAGE_START otherwise opens the message and records its owner if none is recorded.",
        "Allowed.",
    ),
    reject(
        "V16",
        "Text content for no open message",
        "TEXT_MESSAGE_CONTENT for a message id that is not open.",
    ),
    reject(
        "V17",
        "Text end for no open message",
        "TEXT_MESSAGE_END for a message id that is not open.",
    ),
    reject(
        "V18",
        "Text event from another owner",
        "TEXT_MESSAGE_CONTENT or END tagged with a subagent other than the message's opener.",
    ),
    reject(
        "V19",
        "Tool call already open",
        "TOOL_CALL_START for a tool call id that is still open (no TOOL_CALL_END yet).",
    ),
    reject(
        "V20",
        "Tool call tagged against its parent message",
        "TOOL_CALL_START tagged with a subagent other than the owner of its parentMessageId: a tool call belongs to the message that carries it.",
    ),
    reject(
        "V21",
        "Tool call reopened by another owner",
        "TOOL_CALL_START tagged with a subagent other than the one that owns the tool call id.",
    ),
    reject(
        "V22",
        "Untagged tool call reopened under another parent owner",
        "An untagged TOOL_CALL_START for an owned tool call id whose parent message has a different owner.",
    ),
    v(
        "V23",
        Verdict::Allow,
        "Tool call opens",
        "TOOL_CALL_START otherwise opens the call; its owner is its tag, else its parent message's owner, else the parent agent.",
        "Allowed.",
    ),
    reject(
        "V24",
        "Tool call event for no open call",
        "TOOL_CALL_ARGS or TOOL_CALL_END for a tool call id that is not open.",
    ),
    reject(
        "V25",
        "Tool call event from another owner",
        "TOOL_CALL_ARGS or END tagged with a subagent other than the call's opener.",
    ),
    v(
        "V26",
        Verdict::Allow,
        "Tool call result",
        "TOOL_CALL_RESULT is always allowed, for unknown or still-open calls too; its message is owned by its tag.",
        "Allowed.",
    ),
    reject(
        "V27",
        "Step already open",
        "STEP_STARTED for a step name that is already open for the same owner.",
    ),
    reject(
        "V28",
        "Step finished by another owner",
        "STEP_FINISHED for a step that is open, but under another owner: a step is finished by whoever started it.",
    ),
    reject(
        "V29",
        "Step finished that was not started",
        "STEP_FINISHED for a step name that is not open at all.",
    ),
    v(
        "V30",
        Verdict::Allow,
        "Activity snapshot",
        "ACTIVITY_SNAPSHOT is always allowed; a new or replacing snapshot records the activity's owner.",
        "Allowed.",
    ),
    reject(
        "V31",
        "Activity delta from another owner",
        "ACTIVITY_DELTA tagged with a subagent other than the activity's owner.",
    ),
    reject(
        "V32",
        "Reasoning span already open",
        "REASONING_START for a span id that is still open.",
    ),
    reject(
        "V33",
        "Reasoning message already open",
        "REASONING_MESSAGE_START for a reasoning message id that is still open.",
    ),
    reject(
        "V34",
        "Reasoning opened by another owner",
        "REASONING_START or REASONING_MESSAGE_START tagged with a subagent other than the id's recorded owner.",
    ),
    reject(
        "V35",
        "Reasoning content for no open message",
        "REASONING_MESSAGE_CONTENT or END for an id that is not an open reasoning message.",
    ),
    reject(
        "V36",
        "Reasoning end for no open span",
        "REASONING_END for an id that is not an open reasoning span.",
    ),
    reject(
        "V37",
        "Reasoning event from another owner",
        "REASONING_MESSAGE_CONTENT, END or REASONING_END tagged with a subagent other than the opener's.",
    ),
    reject(
        "V38",
        "Encrypted value from another owner",
        "REASONING_ENCRYPTED_VALUE tagged with a subagent other than the owner of the tool call or message it names.",
    ),
    decode(
        "V39",
        "Subagent without an id",
        "SUBAGENT_STARTED without a string subagentRunId.",
    ),
    decode(
        "V40",
        "Subagent without a name",
        "SUBAGENT_STARTED without a string name.",
    ),
    reject(
        "V41",
        "Subagent already active",
        "SUBAGENT_STARTED for a subagentRunId that is active.",
    ),
    reject(
        "V42",
        "Subagent id reused",
        "SUBAGENT_STARTED for a subagentRunId that already finished in this run: subagent ids are per invocation.",
    ),
    reject(
        "V43",
        "Unknown parent subagent",
        "SUBAGENT_STARTED whose parentSubagentRunId was never started in this run.",
    ),
    decode(
        "V44",
        "Subagent end without an id",
        "SUBAGENT_FINISHED or SUBAGENT_ERROR without a string subagentRunId.",
    ),
    decode(
        "V45",
        "Subagent error without a message",
        "SUBAGENT_ERROR without a string message.",
    ),
    reject(
        "V46",
        "Subagent end for no active subagent",
        "SUBAGENT_FINISHED or SUBAGENT_ERROR for a subagentRunId that is not active (never started, or already closed).",
    ),
    decode(
        "V47",
        "Message with subagentRunId: null",
        "A message in MESSAGES_SNAPSHOT or RUN_STARTED.input carries subagentRunId null.",
    ),
    reject(
        "V48",
        "Run finished with a step open",
        "RUN_FINISHED while a step (of any owner) is still open.",
    ),
    reject(
        "V49",
        "Run finished with a text message open",
        "RUN_FINISHED while a text message is still open.",
    ),
    reject(
        "V50",
        "Run finished with a reasoning message open",
        "RUN_FINISHED while a reasoning message is still open.",
    ),
    reject(
        "V51",
        "Run finished with a reasoning span open",
        "RUN_FINISHED while a reasoning span is still open.",
    ),
    reject(
        "V52",
        "Run finished with a tool call open",
        "RUN_FINISHED while a tool call is still open.",
    ),
    reject(
        "V53",
        "Run finished with a subagent active",
        "RUN_FINISHED while a subagent is still active.",
    ),
    v(
        "V54",
        Verdict::Allow,
        "Run finishes",
        "RUN_FINISHED with nothing open ends the run.",
        "Allowed.",
    ),
    v(
        "V55",
        Verdict::Allow,
        "Run error",
        "RUN_ERROR is allowed at any time V1 does not forbid: first, after RUN_FINISHED, with anything open.",
        "Allowed; the run ends with an error (runAgent resolves, onRunErrorEvent fires).",
    ),
];

/// The rule with this id (`V13`, `CH8`, `schema`), if the table has it.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The rule ids a stage's source can emit: string literals like `"V13"` / `"CH8"` in it.
    fn literal_ids(source: &str, prefix: &str) -> HashSet<String> {
        let mut out = HashSet::new();
        let mut rest = source;
        while let Some(at) = rest.find(&format!("\"{prefix}")) {
            let tail = &rest[at + 1..];
            let end = tail.find('"').unwrap_or(0);
            let id = &tail[..end];
            if id.len() > prefix.len() && id[prefix.len()..].bytes().all(|b| b.is_ascii_digit()) {
                out.insert(id.to_owned());
            }
            rest = &tail[end..];
        }
        out
    }

    #[test]
    fn every_rule_the_engine_can_emit_is_in_the_table() {
        let verify = literal_ids(include_str!("verify.rs"), "V");
        let expand = literal_ids(include_str!("expand.rs"), "CH");
        assert!(verify.len() >= 35, "found only {verify:?} in verify.rs");
        assert!(expand.len() >= 4, "found only {expand:?} in expand.rs");
        for id in verify.iter().chain(&expand) {
            let r = rule(id).unwrap_or_else(|| panic!("{id} is emitted but not in RULES"));
            assert_eq!(r.verdict, Verdict::Reject, "{id} is emitted, so it rejects");
        }
        for id in &verify {
            assert_eq!(rule(id).unwrap().stage, Stage::Verification, "{id}");
        }
        for id in &expand {
            assert_eq!(rule(id).unwrap().stage, Stage::Expansion, "{id}");
        }
        // The pipeline's label for a malformed event.
        assert_eq!(rule("schema").unwrap().stage, Stage::Decode);
    }

    #[test]
    fn the_table_has_v1_to_v55_once_each_with_text() {
        let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        let unique: HashSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "a rule id is listed twice");
        for n in 1..=55 {
            assert!(rule(&format!("V{n}")).is_some(), "V{n} is missing");
        }
        for r in RULES {
            for text in [r.title, r.explanation, r.reference, r.section] {
                assert!(!text.is_empty() && !text.contains('\n'), "{}", r.id);
            }
        }
        assert!(rule("V99").is_none());
    }

    #[test]
    fn a_violation_of_the_verifier_finds_its_rule() {
        use crate::engine::verify::Verifier;
        use crate::event::{RunFinished, RunStarted, TextMessageStart};
        let mut v = Verifier::new();
        v.push(&RunStarted::new("t", "r").into()).unwrap();
        v.push(&TextMessageStart::new("m").into()).unwrap();
        let e = v.push(&RunFinished::new("t", "r").into()).unwrap_err();
        assert_eq!(
            rule(e.rule).unwrap().title,
            "Run finished with a text message open"
        );
    }
}
