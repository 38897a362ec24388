// Redaction of recordings before they are shared (pure: importable under Node).
//
// An allowlist: a field is kept only where it is known to be safe to share: event types,
// ids, roles, times, the names of protocol things (steps, tools, subagents, custom
// events), JSON Patch operations and paths, outcomes, interrupt reasons, error codes, token
// counts. Every other field, at any depth, is replaced by its shape, and so is every field
// a later version of the protocol (or an agent) adds: a new field is redacted until it is
// added here. What people type and what tools see goes that way: message text and content
// parts, tool arguments and results, state values, activity content, run results, error
// messages, reasoning and encrypted values, metadata, raw events. Text deltas, message text
// and tool arguments keep their length (so that the text still adds up).
//
// A redacted stream breaks the same verification rules at the same events as the
// original: the rules look at types, ids and structure, which stay. (A JSON Patch `test`
// compares shapes after redaction, so a failing `test` may pass: the state is not what is
// being shared.)

import { isObject } from "./util.js";

/**
 * The shape of a JSON value: containers keep their structure and keys; each leaf becomes
 * a placeholder naming its type (`"‹string 12›"` with the string's length, `"‹number›"`,
 * `"‹boolean›"`; null stays null).
 */
export function shape(v) {
  if (v === null || v === undefined) return v;
  if (Array.isArray(v)) return v.map(shape);
  if (isObject(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shape(x)]));
  if (typeof v === "string") return `‹string ${v.length}›`;
  return `‹${typeof v}›`;
}

/** A string of the same length hidden (text deltas: lengths still add up); anything else, its shape. */
function hide(s) {
  if (typeof s !== "string") return shape(s);
  if (s.length === 0) return s;
  return s.length === 1 ? "·" : "‹" + "·".repeat(s.length - 2) + "›";
}

/** A field kept as it is: a scalar (an id, a type, a time); a container in its place is shaped. */
const KEEP = (v) => (v !== null && typeof v === "object" ? shape(v) : v);

/** A copy of object `o` with the fields `spec` allows, each through its rule; every other field shaped. */
function allow(o, spec) {
  if (!isObject(o)) return shape(o);
  const out = {};
  for (const [k, v] of Object.entries(o)) {
    const rule = Object.prototype.hasOwnProperty.call(spec, k) ? spec[k] : shape;
    out[k] = rule(v);
  }
  return out;
}
/** A rule for a list whose items go through `rule`. */
const listOf = (rule) => (v) => (Array.isArray(v) ? v.map(rule) : shape(v));
/** A rule for an object with the fields `spec` allows. */
const fields = (spec) => (v) => allow(v, spec);

/** Token counts and the provider and model they are for (types.md 8: labels and counts only). */
const USAGE = listOf(fields({
  provider: KEEP, model: KEEP, inputTokens: KEEP, outputTokens: KEEP, totalTokens: KEEP,
  reasoningTokens: KEEP, cachedInputTokens: KEEP, cacheWriteInputTokens: KEEP,
}));

/** A JSON Patch: operations and paths kept, values shaped. */
const PATCH = listOf(fields({ op: KEEP, path: KEEP, from: KEEP }));

/** Message content: a string (length kept), or parts with their type and media type. */
function content(c) {
  if (typeof c === "string") return hide(c);
  return listOf(fields({
    type: KEEP, id: KEEP, text: hide,
    source: fields({ type: KEEP, mimeType: KEEP, provider: KEEP }),
  }))(c);
}

const TOOL_CALLS = listOf(fields({
  id: KEEP, type: KEEP,
  function: fields({ name: KEEP, arguments: hide }),
}));

/** A message of MESSAGES_SNAPSHOT or RunAgentInput. */
function message(m) {
  if (!isObject(m)) return shape(m);
  return allow(m, {
    id: KEEP, role: KEEP, toolCallId: KEEP, activityType: KEEP, subagentRunId: KEEP,
    content: m.role === "activity" ? shape : content,
    toolCalls: TOOL_CALLS,
  });
}

const INTERRUPTS = listOf(fields({
  id: KEEP, reason: KEEP, toolCallId: KEEP, subagentRunId: KEEP, expiresAt: KEEP,
}));

const OUTCOME = fields({ type: KEEP, interrupts: INTERRUPTS, pendingToolCallIds: listOf(KEEP) });

const INPUT = fields({
  threadId: KEEP, runId: KEEP, parentRunId: KEEP, protocolVersion: KEEP,
  messages: listOf(message),
  tools: listOf(fields({ name: KEEP })),
  resume: listOf(fields({ interruptId: KEEP, status: KEEP })),
});

/** Fields every event may carry that are safe: its type, time and subagent. */
const BASE = { type: KEEP, timestamp: KEEP, subagentRunId: KEEP };

/** The fields kept for each event type, beyond BASE (the rest is shaped). */
const EVENTS = {
  RUN_STARTED: { threadId: KEEP, runId: KEEP, parentRunId: KEEP, protocolVersion: KEEP, input: INPUT },
  RUN_FINISHED: { threadId: KEEP, runId: KEEP, outcome: OUTCOME, usage: USAGE },
  RUN_ERROR: { message: hide, code: KEEP, usage: USAGE },
  STEP_STARTED: { stepName: KEEP },
  STEP_FINISHED: { stepName: KEEP },
  TEXT_MESSAGE_START: { messageId: KEEP, role: KEEP },
  TEXT_MESSAGE_CONTENT: { messageId: KEEP, delta: hide },
  TEXT_MESSAGE_END: { messageId: KEEP },
  TEXT_MESSAGE_CHUNK: { messageId: KEEP, role: KEEP, delta: hide },
  TOOL_CALL_START: { toolCallId: KEEP, toolCallName: KEEP, parentMessageId: KEEP },
  TOOL_CALL_ARGS: { toolCallId: KEEP, delta: hide },
  TOOL_CALL_END: { toolCallId: KEEP },
  TOOL_CALL_CHUNK: { toolCallId: KEEP, toolCallName: KEEP, parentMessageId: KEEP, delta: hide },
  TOOL_CALL_RESULT: { messageId: KEEP, toolCallId: KEEP, role: KEEP, content },
  STATE_SNAPSHOT: {},
  STATE_DELTA: { delta: PATCH },
  MESSAGES_SNAPSHOT: { messages: listOf(message) },
  ACTIVITY_SNAPSHOT: { messageId: KEEP, activityType: KEEP, replace: KEEP },
  ACTIVITY_DELTA: { messageId: KEEP, activityType: KEEP, patch: PATCH },
  RAW: { source: KEEP },
  CUSTOM: { name: KEEP },
  REASONING_START: { messageId: KEEP },
  REASONING_MESSAGE_START: { messageId: KEEP, role: KEEP },
  REASONING_MESSAGE_CONTENT: { messageId: KEEP, delta: hide },
  REASONING_MESSAGE_END: { messageId: KEEP },
  REASONING_MESSAGE_CHUNK: { messageId: KEEP, delta: hide },
  REASONING_END: { messageId: KEEP },
  REASONING_ENCRYPTED_VALUE: { subtype: KEEP, entityId: KEEP, encryptedValue: hide },
  SUBAGENT_STARTED: { name: KEEP, parentSubagentRunId: KEEP, parentToolCallId: KEEP, parentMessageId: KEEP },
  SUBAGENT_FINISHED: { outcome: OUTCOME },
  SUBAGENT_ERROR: { message: hide, code: KEEP },
};

/** For each event type, the names of the fields redaction keeps as they are (documentation and tests). */
export const KEPT_FIELDS = Object.fromEntries(Object.entries(EVENTS).map(([t, spec]) => [t, Object.keys({ ...BASE, ...spec })]));

/**
 * One event with everything but its allowed fields replaced by shapes (a new object; `ev`
 * is not changed). An event of a type this console does not know keeps its type, time and
 * subagent only.
 */
export function redactEvent(ev) {
  if (!isObject(ev)) return shape(ev);
  const spec = Object.prototype.hasOwnProperty.call(EVENTS, ev.type) ? EVENTS[ev.type] : {};
  return allow(ev, { ...BASE, ...spec });
}

/** A RunAgentInput (a request body) redacted as RUN_STARTED's `input` is. */
export function redactInput(input) {
  return INPUT(input);
}
