// A run's latency (pure: importable under Node): time to the first event and to the first
// text, the gaps between streamed deltas, and the tokens its terminal event reports.

import { isObject } from "./util.js";

/** Events that carry streamed content: the gaps between them are the streaming's pace. */
const DELTAS = new Set([
  "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK", "TOOL_CALL_ARGS", "TOOL_CALL_CHUNK",
  "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CHUNK",
]);
/** Events that carry text for people. */
const TEXT = new Set(["TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CHUNK"]);

/** The value at quantile `q` (0..1) of sorted numbers (nearest rank). */
export function quantile(sorted, q) {
  if (sorted.length === 0) return null;
  const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[k];
}

/**
 * The latency of one run from its events with times: `items` `[{ev, t}]` in order, `t` the
 * event's time in ms, relative to when the request was sent (`origin: "request"`, a live
 * run) or to the run's first event (`origin: "first-event"`, times from the events'
 * `timestamp`), or null when unknown. Returns `{origin, firstEvent, firstText, total,
 * gaps, gap: {count, p50, p95, max}, deltas, tokens}` (times in ms, null when unknown):
 * `gaps` the times between consecutive delta events, `tokens` the sum per field of the
 * terminal event's `usage` entries (null when it has none) with `models`, the
 * "provider/model" labels named.
 */
export function latency(items, origin = "request") {
  const timed = items.filter((x) => Number.isFinite(x.t));
  const first = timed[0]?.t ?? null;
  const text = timed.find((x) => TEXT.has(x.ev?.type) && typeof x.ev.delta === "string" && x.ev.delta !== "");
  const deltas = timed.filter((x) => DELTAS.has(x.ev?.type));
  const gaps = [];
  for (let k = 1; k < deltas.length; k++) gaps.push(Math.max(0, deltas[k].t - deltas[k - 1].t));
  const sorted = [...gaps].sort((a, b) => a - b);
  const last = timed[timed.length - 1]?.t ?? null;
  return {
    origin,
    firstEvent: origin === "request" ? first : first === null ? null : 0,
    firstText: text ? text.t : null,
    total: last,
    deltas: items.filter((x) => DELTAS.has(x.ev?.type)).length,
    gaps,
    gap: { count: gaps.length, p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), max: sorted.length ? sorted[sorted.length - 1] : null },
    tokens: usageOf(items.map((x) => x.ev)),
  };
}

const COUNTS = ["inputTokens", "outputTokens", "totalTokens", "reasoningTokens", "cachedInputTokens", "cacheWriteInputTokens"];

/** The token counts of a run's terminal event (RUN_FINISHED or RUN_ERROR `usage`), summed per field. */
export function usageOf(events) {
  const end = [...events].reverse().find((e) => isObject(e) && (e.type === "RUN_FINISHED" || e.type === "RUN_ERROR"));
  if (!end || !Array.isArray(end.usage) || end.usage.length === 0) return null;
  const out = { models: [] };
  for (const u of end.usage) {
    if (!isObject(u)) continue;
    const label = [u.provider, u.model].filter((x) => typeof x === "string" && x !== "").join("/");
    if (label && !out.models.includes(label)) out.models.push(label);
    for (const k of COUNTS) if (Number.isFinite(u[k])) out[k] = (out[k] ?? 0) + u[k];
  }
  if (out.totalTokens === undefined && (out.inputTokens !== undefined || out.outputTokens !== undefined)) out.totalTokens = (out.inputTokens ?? 0) + (out.outputTokens ?? 0);
  return out;
}
