// Chunk expansion (client.md §4), pure: importable under Node.
//
// TEXT_MESSAGE_CHUNK, TOOL_CALL_CHUNK and REASONING_MESSAGE_CHUNK become START / CONTENT /
// END, one pending stream per lane (lane = subagentRunId, or null for the parent agent).

import { CHUNK_KINDS, CLOSES_ALL_LANES, CLOSES_OWN_LANE } from "./events.js";

/** The expansion stage: feed it events in order with `expand(ev)`. */
export class Expander {
  constructor() {
    /** lane (tag, or null) -> pending stream {kind, id, role?, name?, parentMessageId?, tag} */
    this.lanes = new Map();
  }

  /** A copy with the same pending streams. */
  copy() {
    const e = new Expander();
    for (const [k, p] of this.lanes) e.lanes.set(k, { ...p });
    return e;
  }

  /** Forgets every pending stream. */
  clear() {
    this.lanes.clear();
  }

  closeLane(lane, out) {
    const p = this.lanes.get(lane);
    if (!p) return;
    this.lanes.delete(lane);
    const end =
      p.kind === "text" ? { type: "TEXT_MESSAGE_END", messageId: p.id }
      : p.kind === "tool" ? { type: "TOOL_CALL_END", toolCallId: p.id }
      : { type: "REASONING_MESSAGE_END", messageId: p.id };
    if (p.tag !== undefined) end.subagentRunId = p.tag;
    out.push(end);
  }

  /** The events `ev` expands to (itself, preceded by the ENDs it causes); throws on a chunk the reference rejects. */
  expand(ev) {
    const out = [];
    const spec = CHUNK_KINDS[ev.type];
    if (!spec) {
      if (CLOSES_ALL_LANES.has(ev.type)) for (const lane of [...this.lanes.keys()]) this.closeLane(lane, out);
      else if (CLOSES_OWN_LANE.has(ev.type)) this.closeLane(ev.subagentRunId ?? null, out);
      else if (ev.type === "SUBAGENT_FINISHED" || ev.type === "SUBAGENT_ERROR") {
        if (typeof ev.subagentRunId === "string") this.closeLane(ev.subagentRunId, out);
      }
      out.push(ev);
      return out;
    }

    const { kind, idKey, label } = spec;
    const id = ev[idKey];
    const tag = ev.subagentRunId;
    let lane = null;
    let found = false;
    if (id !== undefined) {
      for (const [k, p] of this.lanes) {
        if (p.kind === kind && p.id === id) {
          lane = k;
          found = true;
          break;
        }
      }
      if (found && tag !== undefined && tag !== lane)
        throw new Error(`Cannot continue ${label} '${id}': chunk subagentRunId '${tag}' does not match the open stream's subagent '${lane ?? "(the parent agent)"}'.`);
      if (!found) lane = tag ?? null;
    } else if (tag !== undefined) {
      lane = tag;
    } else if (this.lanes.get(null)?.kind === kind) {
      lane = null;
    } else {
      const candidates = [...this.lanes].filter(([, p]) => p.kind === kind);
      if (candidates.length > 1)
        throw new Error(`Ambiguous ${ev.type}: it carries neither a ${idKey} nor a subagentRunId, but ${candidates.length} lanes have an open ${label}.`);
      lane = candidates.length === 1 ? candidates[0][0] : null;
    }

    let p = this.lanes.get(lane);
    const continuing = p && p.kind === kind && (id === undefined || id === p.id);
    if (continuing) {
      if (kind === "text") {
        if (ev.role !== undefined && ev.role !== p.role) throw new Error(`Cannot continue text message '${p.id}': chunk role '${ev.role}' does not match the open stream's role '${p.role}'.`);
        if (ev.name !== undefined && ev.name !== p.name) throw new Error(`Cannot continue text message '${p.id}': chunk name '${ev.name}' does not match the open stream's name '${p.name ?? "(absent)"}'.`);
      } else if (kind === "tool") {
        if (ev.toolCallName !== undefined && ev.toolCallName !== p.name) throw new Error(`Cannot continue tool call '${p.id}': chunk toolCallName does not match.`);
        if (ev.parentMessageId !== undefined && ev.parentMessageId !== p.parentMessageId) throw new Error(`Cannot continue tool call '${p.id}': chunk parentMessageId does not match.`);
      }
    } else {
      this.closeLane(lane, out);
      if (id === undefined) throw new Error(`First ${ev.type} must have a ${idKey}`);
      if (kind === "tool" && ev.toolCallName === undefined) throw new Error("First TOOL_CALL_CHUNK must have a toolCallName");
      let start;
      if (kind === "text") {
        start = { type: "TEXT_MESSAGE_START", messageId: id, role: ev.role ?? "assistant" };
        if (ev.name !== undefined) start.name = ev.name;
        p = { kind, id, role: start.role, name: ev.name, tag };
      } else if (kind === "tool") {
        start = { type: "TOOL_CALL_START", toolCallId: id, toolCallName: ev.toolCallName };
        if (ev.parentMessageId !== undefined) start.parentMessageId = ev.parentMessageId;
        p = { kind, id, name: ev.toolCallName, parentMessageId: ev.parentMessageId, tag };
      } else {
        start = { type: "REASONING_MESSAGE_START", messageId: id, role: "reasoning" };
        p = { kind, id, tag };
      }
      if (tag !== undefined) start.subagentRunId = tag;
      if (ev.metadata !== undefined) start.metadata = ev.metadata;
      out.push(start);
      this.lanes.set(lane, p);
    }

    const contentType = kind === "text" ? "TEXT_MESSAGE_CONTENT" : kind === "tool" ? "TOOL_CALL_ARGS" : "REASONING_MESSAGE_CONTENT";
    if (ev.delta !== undefined || ev.rawEvent !== undefined || (continuing && ev.metadata !== undefined)) {
      const content = { type: contentType, [idKey]: p.id, delta: ev.delta ?? "" };
      const t = tag ?? p.tag;
      if (t !== undefined) content.subagentRunId = t;
      if (ev.metadata !== undefined) content.metadata = ev.metadata;
      if (ev.rawEvent !== undefined) content.rawEvent = ev.rawEvent;
      out.push(content);
    }
    return out;
  }
}
