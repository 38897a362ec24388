// Searching a stream of events for text (pure: importable under Node). Streamed text
// arrives in pieces: a phrase a person reads whole may be split across several deltas
// ("The fjo" + "rds are lovely"). Each stream (a text message, a tool call's arguments, a
// reasoning message) is assembled as its deltas arrive, remembering which event wrote
// which characters, so that a phrase found in the assembled text names exactly the events
// that carry it. Anything else is searched in the event's JSON.

import { isObject } from "./util.js";

/** Delta events: the stream they write to (`kind` and the field naming it). */
const STREAMS = {
  TEXT_MESSAGE_CONTENT: ["text", "messageId"],
  TEXT_MESSAGE_CHUNK: ["text", "messageId"],
  TOOL_CALL_ARGS: ["tool", "toolCallId"],
  TOOL_CALL_CHUNK: ["tool", "toolCallId"],
  REASONING_MESSAGE_CONTENT: ["reasoning", "messageId"],
  REASONING_MESSAGE_CHUNK: ["reasoning", "messageId"],
};

/** The assembled streams of a list of events, for search. Add events in order. */
export class StreamIndex {
  constructor() {
    this.streams = new Map(); // key -> {text, spans: [[start, end, i]]}
    this.lanes = new Map(); // "kind|subagent" -> the stream a chunk without an id continues
  }

  /** Adds event number `i`. */
  add(i, ev) {
    if (!isObject(ev)) return;
    if (ev.type === "RUN_STARTED" || ev.type === "RUN_FINISHED" || ev.type === "RUN_ERROR") {
      this.lanes.clear();
      return;
    }
    const s = STREAMS[ev.type];
    if (!s) return;
    const [kind, idKey] = s;
    const lane = `${kind}|${typeof ev.subagentRunId === "string" ? ev.subagentRunId : ""}`;
    let id = typeof ev[idKey] === "string" ? ev[idKey] : null;
    if (ev.type.endsWith("_CHUNK")) {
      if (id === null) id = this.lanes.get(lane) ?? null;
      else this.lanes.set(lane, id);
    }
    if (id === null || typeof ev.delta !== "string" || ev.delta === "") return;
    const key = `${kind}:${id}`;
    let st = this.streams.get(key);
    if (!st) this.streams.set(key, (st = { text: "", spans: [] }));
    st.spans.push([st.text.length, st.text.length + ev.delta.length, i]);
    st.text += ev.delta;
  }

  /**
   * The events whose deltas carry an occurrence of `phrase` (compared in lower case) in
   * their stream's assembled text: a Set of event numbers.
   */
  find(phrase) {
    const out = new Set();
    const needle = phrase.toLowerCase();
    if (needle === "") return out;
    for (const st of this.streams.values()) {
      // Lower case keeps the offsets of nearly every text; where it would not, the text as it is.
      const lower = st.text.toLowerCase();
      const hay = lower.length === st.text.length ? lower : st.text;
      for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + 1)) {
        const end = at + needle.length;
        for (const [s, e, i] of st.spans) if (s < end && e > at) out.add(i);
      }
    }
    return out;
  }
}
