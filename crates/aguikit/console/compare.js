// Comparing two runs (pure: importable under Node): where their event streams first
// diverge, and their messages and state at the end side by side. The comparison is the
// one `agui diff` makes (aguikit_core::diff): ids are compared by their order of first
// appearance in each stream (the first id a stream names is `#1` in it, wherever it appears
// again; the fields of ID_FIELDS, string values only), `timestamp` fields are left out,
// and the divergence names the first event that differs and, in it, the JSON Pointer of the
// first field that differs (fields in their order, then the other stream's extra fields).
//
// Two runs usually differ first in their requests (RUN_STARTED's `input`: another message,
// a longer history), so the console also says where the answers part: the same comparison
// with RUN_STARTED's `input` left out.

import { isObject, deepEqual, escapeToken } from "./util.js";
import { diff } from "./patch.js";

/** The fields whose values are ids (as aguikit_core::diff::ID_FIELDS). */
export const ID_FIELDS = new Set([
  "id", "threadId", "runId", "parentRunId", "messageId", "parentMessageId", "toolCallId",
  "parentToolCallId", "subagentRunId", "parentSubagentRunId", "interruptId",
]);
/** Fields left out of the comparison. */
const IGNORE = new Set(["timestamp"]);

/** An id aliaser: the same id gets the same alias, in order of first appearance. */
export function aliaser() {
  const seen = new Map();
  return (v) => {
    if (!seen.has(v)) seen.set(v, `#${seen.size + 1}`);
    return seen.get(v);
  };
}

/** `v` as compared: ids replaced by `alias`, ignored fields left out (a new value). */
export function normalize(v, alias) {
  if (Array.isArray(v)) return v.map((x) => normalize(x, alias));
  if (isObject(v)) {
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      if (IGNORE.has(k)) continue;
      out[k] = typeof x === "string" && ID_FIELDS.has(k) ? alias(x) : normalize(x, alias);
    }
    return out;
  }
  return v;
}

/** The JSON Pointer of the first field where `a` and `b` differ, or null (as agui diff walks them). */
export function firstDifference(a, b, path = "") {
  if (isObject(a) && isObject(b)) {
    for (const k of [...Object.keys(a), ...Object.keys(b).filter((k) => !Object.hasOwn(a, k))]) {
      const p = `${path}/${escapeToken(k)}`;
      if (!Object.hasOwn(a, k) || !Object.hasOwn(b, k)) return p;
      const d = firstDifference(a[k], b[k], p);
      if (d !== null) return d;
    }
    return null;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= a.length || i >= b.length) return `${path}/${i}`;
      const d = firstDifference(a[i], b[i], `${path}/${i}`);
      if (d !== null) return d;
    }
    return null;
  }
  return deepEqual(a, b) ? null : path;
}

/** The value at JSON Pointer `p` in `v` (undefined when absent). */
function at(v, p) {
  if (p === "") return v;
  let x = v;
  for (const t of p.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))) {
    if (x === null || typeof x !== "object" || !Object.hasOwn(x, t)) return undefined;
    x = x[t];
  }
  return x;
}

/** The first divergence of streams `a` and `b` (see compareEvents), each event through `prep` first. */
function divergenceOf(a, b, prep = (e) => e) {
  const aliasA = aliaser();
  const aliasB = aliaser();
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    // Both aliasers see every event in order, so ids keep their names.
    const x = i < a.length ? normalize(prep(a[i]), aliasA) : undefined;
    const y = i < b.length ? normalize(prep(b[i]), aliasB) : undefined;
    const path = x === undefined || y === undefined ? "" : firstDifference(x, y);
    if (path === null) continue;
    const ea = i < a.length ? a[i] : null;
    const eb = i < b.length ? b[i] : null;
    return {
      index: i, path,
      a: ea, b: eb,
      leftType: ea === null ? null : isObject(ea) && typeof ea.type === "string" ? ea.type : "(no type)",
      rightType: eb === null ? null : isObject(eb) && typeof eb.type === "string" ? eb.type : "(no type)",
      left: ea === null ? undefined : at(prep(ea), path),
      right: eb === null ? undefined : at(prep(eb), path),
      changes: x === undefined || y === undefined ? [] : diff(x, y),
    };
  }
  return null;
}

/**
 * Compares the events of run `a` with those of run `b` (arrays of events), as `agui diff`
 * does. Returns `{count: [na, nb], divergence, answer}`: `divergence` null when the streams
 * are equal as compared, else `{index, path, a, b, leftType, rightType, left, right,
 * changes}` (the first event that differs, each stream's event there, null past the end of
 * one, the first field that differs and both values there as they are, every field that
 * differs as compared); `answer` the same with RUN_STARTED's `input` left out (equal to
 * `divergence` unless that is in the input).
 */
export function compareEvents(a, b) {
  const divergence = divergenceOf(a, b);
  const inInput = divergence !== null && divergence.leftType === "RUN_STARTED" && divergence.rightType === "RUN_STARTED" && divergence.path.startsWith("/input");
  const answer = inInput
    ? divergenceOf(a, b, (ev) => {
      if (!isObject(ev) || ev.type !== "RUN_STARTED") return ev;
      const { input: _, ...rest } = ev;
      return rest;
    })
    : divergence;
  return { count: [a.length, b.length], divergence, answer };
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
