// Comparing two runs (pure: importable under Node): where their event streams first
// diverge, and their messages and state at the end side by side.
//
// Two runs of one agent never carry the same ids (run, message, tool call ids are fresh
// each time) nor the same times, so events are compared after normalising: every id is
// replaced by its order of first appearance in its run (`#1`, `#2`, ...; the same value
// gets the same alias wherever it appears), and `timestamp` and `rawEvent` are left out.
// RUN_STARTED's `input` (the request) is compared on its own: a run is usually compared
// with another because their requests differ, and the interesting part is what came back.

import { isObject, deepEqual } from "./util.js";
import { diff } from "./patch.js";

/** Fields whose values are ids (any depth). */
const ID_KEYS = new Set([
  "threadId", "runId", "parentRunId", "messageId", "parentMessageId", "toolCallId", "parentToolCallId",
  "subagentRunId", "parentSubagentRunId", "entityId", "interruptId", "id", "pendingToolCallIds",
]);
/** Fields left out of the comparison. */
const DROP = new Set(["timestamp", "rawEvent"]);

/** An id aliaser: the same id gets the same alias, in order of first appearance. */
export function aliaser() {
  const seen = new Map();
  return (v) => {
    if (typeof v !== "string") return v;
    if (!seen.has(v)) seen.set(v, `#${seen.size + 1}`);
    return seen.get(v);
  };
}

/** `v` with ids replaced by `alias` and DROP fields left out (a new value). */
export function normalize(v, alias, key = null) {
  if (Array.isArray(v)) return v.map((x) => normalize(x, alias, key === "pendingToolCallIds" ? key : null));
  if (isObject(v)) {
    const out = {};
    for (const [k, x] of Object.entries(v)) if (!DROP.has(k)) out[k] = normalize(x, alias, k);
    return out;
  }
  return key !== null && ID_KEYS.has(key) ? alias(v) : v;
}

/**
 * Compares the events of run `a` with those of run `b` (arrays of events). Returns
 * `{count: [na, nb], input: [changes], divergence}`: `input` the differences between their
 * RUN_STARTED inputs (normalised; `[]` when equal or absent), `divergence` null when the
 * streams are equal after normalising, else `{index, a, b, changes}`: the first position
 * where they differ, the event of each there (null past the end of one) and the paths
 * that differ (`diff` of the normalised events).
 */
export function compareEvents(a, b) {
  const aliasA = aliaser();
  const aliasB = aliaser();
  const strip = (ev) => {
    if (!isObject(ev) || ev.type !== "RUN_STARTED") return ev;
    const { input: _, ...rest } = ev;
    return rest;
  };
  const inputOf = (evs) => evs.find((e) => isObject(e) && e.type === "RUN_STARTED" && isObject(e.input))?.input;
  const ia = inputOf(a);
  const ib = inputOf(b);
  const input = ia === undefined && ib === undefined ? [] : diff(normalize(ia ?? null, aliaser()), normalize(ib ?? null, aliaser()));
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = i < a.length ? normalize(strip(a[i]), aliasA) : undefined;
    const y = i < b.length ? normalize(strip(b[i]), aliasB) : undefined;
    if (x !== undefined && y !== undefined && deepEqual(x, y)) continue;
    return {
      count: [a.length, b.length],
      input,
      divergence: { index: i, a: i < a.length ? a[i] : null, b: i < b.length ? b[i] : null, changes: x === undefined || y === undefined ? [] : diff(x, y) },
    };
  }
  return { count: [a.length, b.length], input, divergence: null };
}

/** The text of a message for a side-by-side view: its content, or its tool calls. */
export function messageText(m) {
  if (!isObject(m)) return String(m);
  const parts = [];
  if (typeof m.content === "string") parts.push(m.content);
  else if (Array.isArray(m.content)) parts.push(m.content.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : `[${isObject(p) ? p.type : "?"}]`)).join(""));
  else if (m.content !== undefined) parts.push(JSON.stringify(m.content));
  if (Array.isArray(m.toolCalls)) for (const c of m.toolCalls) parts.push(`${c?.function?.name ?? "?"}(${c?.function?.arguments ?? ""})`);
  if (m.error !== undefined) parts.push(`error: ${typeof m.error === "string" ? m.error : JSON.stringify(m.error)}`);
  return parts.join("\n");
}

/**
 * Messages of two runs side by side: rows `{a, b, same}` pairing the i-th message of each
 * (by position), `same` when role and text agree.
 */
export function pairMessages(a, b) {
  const rows = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    const same = x !== undefined && y !== undefined && x.role === y.role && messageText(x) === messageText(y);
    rows.push({ a: x ?? null, b: y ?? null, same });
  }
  return rows;
}
