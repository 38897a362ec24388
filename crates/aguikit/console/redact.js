// Redaction of recordings before they are shared (pure: importable under Node).
//
// What people type and what tools see is replaced by its shape: message text and content
// parts, tool arguments and results, state values, activity content, run results, error
// messages, reasoning and encrypted values. Everything the protocol's rules look at stays:
// event types, ids, roles, names, tags, JSON Patch operations and paths, outcomes and
// interrupt ids, so a redacted stream breaks the same verification rules at the same
// events as the original. (A JSON Patch `test` compares shapes after redaction, so a
// failing `test` may pass: the state is not what is being shared.)

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

/** A string of the same length hidden (text deltas: lengths still add up). */
function hide(s) {
  if (typeof s !== "string" || s.length === 0) return s;
  return s.length === 1 ? "·" : "‹" + "·".repeat(s.length - 2) + "›";
}

function redactContent(c) {
  if (typeof c === "string") return hide(c);
  if (Array.isArray(c)) {
    return c.map((p) => {
      if (!isObject(p)) return shape(p);
      const q = { ...p };
      if (typeof q.text === "string") q.text = hide(q.text);
      if (isObject(q.source)) q.source = { ...q.source, value: shape(q.source.value) };
      for (const k of ["data", "url"]) if (q[k] !== undefined) q[k] = shape(q[k]);
      return q;
    });
  }
  return shape(c);
}

function redactMessage(m) {
  if (!isObject(m)) return m;
  const r = { ...m };
  if (r.content !== undefined) r.content = r.role === "activity" ? shape(r.content) : redactContent(r.content);
  if (Array.isArray(r.toolCalls)) {
    r.toolCalls = r.toolCalls.map((c) => (isObject(c) && isObject(c.function) ? { ...c, function: { ...c.function, arguments: hide(c.function.arguments) } } : c));
  }
  if (r.error !== undefined) r.error = shape(r.error);
  if (r.encryptedValue !== undefined) r.encryptedValue = shape(r.encryptedValue);
  return r;
}

function redactPatch(ops) {
  return Array.isArray(ops) ? ops.map((o) => (isObject(o) && o.value !== undefined ? { ...o, value: shape(o.value) } : o)) : ops;
}

/** One event with its content replaced by shapes (a new object; `ev` is not changed). */
export function redactEvent(ev) {
  if (!isObject(ev)) return ev;
  const r = { ...ev };
  switch (ev.type) {
    case "TEXT_MESSAGE_CONTENT": case "TEXT_MESSAGE_CHUNK":
    case "REASONING_MESSAGE_CONTENT": case "REASONING_MESSAGE_CHUNK":
    case "TOOL_CALL_ARGS": case "TOOL_CALL_CHUNK":
      if (r.delta !== undefined) r.delta = hide(r.delta);
      break;
    case "TOOL_CALL_RESULT":
      r.content = redactContent(r.content);
      break;
    case "STATE_SNAPSHOT":
      r.snapshot = shape(r.snapshot);
      break;
    case "STATE_DELTA":
      r.delta = redactPatch(r.delta);
      break;
    case "MESSAGES_SNAPSHOT":
      if (Array.isArray(r.messages)) r.messages = r.messages.map(redactMessage);
      break;
    case "ACTIVITY_SNAPSHOT":
      r.content = shape(r.content);
      break;
    case "ACTIVITY_DELTA":
      r.patch = redactPatch(r.patch);
      break;
    case "RUN_STARTED":
      if (isObject(r.input)) {
        const input = { ...r.input };
        if (Array.isArray(input.messages)) input.messages = input.messages.map(redactMessage);
        if (input.state !== undefined) input.state = shape(input.state);
        for (const k of ["context", "forwardedProps"]) if (input[k] !== undefined) input[k] = shape(input[k]);
        if (Array.isArray(input.resume)) input.resume = input.resume.map((x) => (isObject(x) && x.payload !== undefined ? { ...x, payload: shape(x.payload) } : x));
        r.input = input;
      }
      break;
    case "RUN_FINISHED":
      if (r.result !== undefined) r.result = shape(r.result);
      if (isObject(r.outcome) && Array.isArray(r.outcome.interrupts)) {
        r.outcome = { ...r.outcome, interrupts: r.outcome.interrupts.map((i) => (isObject(i) ? { ...i, ...(i.message !== undefined ? { message: shape(i.message) } : {}), ...(i.payload !== undefined ? { payload: shape(i.payload) } : {}) } : i)) };
      }
      break;
    case "RUN_ERROR": case "SUBAGENT_ERROR":
      if (r.message !== undefined) r.message = hide(r.message);
      break;
    case "SUBAGENT_FINISHED":
      if (r.result !== undefined) r.result = shape(r.result);
      break;
    case "REASONING_ENCRYPTED_VALUE":
      r.encryptedValue = hide(r.encryptedValue);
      break;
    case "CUSTOM":
      if (r.value !== undefined) r.value = shape(r.value);
      break;
    case "RAW":
      if (r.event !== undefined) r.event = shape(r.event);
      break;
    default:
      break;
  }
  if (r.rawEvent !== undefined) r.rawEvent = shape(r.rawEvent);
  return r;
}
