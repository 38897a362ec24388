// The reducer (client.md §6): events -> messages, state, pending interrupts, as the
// reference client (@ag-ui/client 1.0) folds them after chunk expansion. Pure: no DOM, no
// I/O, importable under Node (the conformance corpus runs it there, see test/).
//
// Besides what the reference keeps (messages, state, pendingInterrupts), a Fold keeps what
// the console shows: open streams, steps, subagents and "notes" (interrupt and run-error
// cards, anchored after the message that was last when they appeared). Warnings collect
// what the reference client would only log; the timeline shows them next to the event.

import { hasOwn, isObject, clone } from "./util.js";
import { KNOWN } from "./events.js";
import { Expander } from "./expand.js";
import { applyPatch } from "./patch.js";

/** A copy of a message or interrupt without a `subagentRunId: null` (the reference drops it). */
export function stripNullTag(m) {
  const c = clone(m);
  if (c && c.subagentRunId === null) delete c.subagentRunId;
  return c;
}

function mergeMetadata(target, ev) {
  if (target && isObject(ev.metadata)) target.metadata = { ...(target.metadata ?? {}), ...clone(ev.metadata) };
}
function withTag(obj, ev) {
  if (typeof ev.subagentRunId === "string") obj.subagentRunId = ev.subagentRunId;
  return obj;
}

/** The run fields a Fold updates on the run it is told about (`fold.run`). */
const RUN_FIELDS = ["id", "started", "status", "terminal", "outcome", "result", "usage", "error"];

/** A conversation being folded: feed it events with `push(ev)`. */
export class Fold {
  /** @param {{messages?: object[], state?: any}} [start] the history to fold into */
  constructor({ messages = [], state = {} } = {}) {
    this.messages = clone(messages);
    this.state = clone(state);
    this.pendingInterrupts = [];
    /** subagentRunId -> {id, name, description, parent, parentToolCallId, status, after, seq, error?, result?} */
    this.subagents = new Map();
    /** owner ("" = parent agent) -> Map(stepName -> "running" | "done") */
    this.steps = new Map();
    /** chat items that are not messages: {kind: "interrupt" | "error", key, after, seq, ...} */
    this.notes = [];
    /** ids of the streams still open */
    this.open = { text: new Set(), tool: new Set(), reasoning: new Set() };
    this.expander = new Expander();
    /** the run events are folded into (the caller's object: the fold sets its status fields), or null */
    this.run = null;
    this.anchorSeq = 0;
  }

  /** A deep copy (the run becomes a detached copy of its status fields). */
  copy() {
    const f = new Fold();
    f.messages = clone(this.messages);
    f.state = clone(this.state);
    f.pendingInterrupts = clone(this.pendingInterrupts);
    for (const [k, v] of this.subagents) f.subagents.set(k, { ...v });
    for (const [k, v] of this.steps) f.steps.set(k, new Map(v));
    f.notes = clone(this.notes);
    for (const k of Object.keys(this.open)) f.open[k] = new Set(this.open[k]);
    f.expander = this.expander.copy();
    if (this.run) {
      f.run = {};
      for (const k of RUN_FIELDS) if (this.run[k] !== undefined) f.run[k] = clone(this.run[k]);
      const t = this.run.toolTally;
      if (t) f.run.toolTally = { started: [...t.started], answered: new Set(t.answered) };
    }
    f.anchorSeq = this.anchorSeq;
    return f;
  }

  /** Forgets the open streams and pending chunk streams (a new run starts from here). */
  closeStreams() {
    this.expander.clear();
    for (const k of Object.keys(this.open)) this.open[k].clear();
  }

  /** Where a non-message item goes in the chat: after the message that is last right now. */
  anchorHere() {
    const last = this.messages[this.messages.length - 1];
    return { after: last ? last.id : null, seq: ++this.anchorSeq };
  }

  findMessage(id) {
    return this.messages.find((m) => m.id === id);
  }
  findToolCall(id) {
    for (const m of this.messages) {
      if (!Array.isArray(m.toolCalls)) continue;
      const tc = m.toolCalls.find((c) => c.id === id);
      if (tc) return { message: m, toolCall: tc };
    }
    return null;
  }

  /**
   * Folds one event as received (chunks are expanded first); returns the warnings the
   * reference client would log for it (an unknown type is ignored, a chunk the reference
   * rejects is not applied).
   */
  push(ev) {
    const warnings = [];
    const warn = (w) => warnings.push(w);
    if (!isObject(ev) || !KNOWN.has(ev.type)) {
      warn("unknown event type: ignored");
      return warnings;
    }
    let events;
    try {
      events = this.expander.expand(ev);
    } catch (e) {
      warn(`chunk not applied: ${e.message}`);
      events = [];
    }
    for (const e of events) this.apply(e, warn);
    return warnings;
  }

  /** Applies one expanded event (client.md §6). */
  apply(ev, warn = () => {}) {
    const run = this.run;
    switch (ev.type) {
      case "RUN_STARTED": {
        if (run) {
          run.started = true;
          run.toolTally = { started: [], answered: new Set() };
          run.status = "running";
        }
        for (const k of Object.keys(this.open)) this.open[k].clear();
        const input = ev.input;
        if (input && Array.isArray(input.messages)) {
          for (const m of input.messages) {
            if (isObject(m) && typeof m.id === "string" && !this.findMessage(m.id)) this.messages.push(stripNullTag(m));
          }
        }
        break;
      }
      case "RUN_FINISHED": {
        const outcome = isObject(ev.outcome) ? ev.outcome : undefined;
        const type = outcome?.type ?? "success";
        if (type === "interrupt" && Array.isArray(outcome.interrupts)) {
          this.pendingInterrupts = outcome.interrupts.map(stripNullTag);
          const at = this.anchorHere();
          this.notes.push({ kind: "interrupt", key: `interrupt-${run?.id ?? "n" + at.seq}`, ...at, interrupts: this.pendingInterrupts, status: "pending" });
        } else {
          this.pendingInterrupts = [];
        }
        if (run) {
          run.terminal = "RUN_FINISHED";
          run.status = type === "interrupt" ? "interrupted" : type === "cancelled" ? "cancelled" : "finished";
          run.outcome = outcome;
          run.result = ev.result;
          run.usage = ev.usage;
        }
        break;
      }
      case "RUN_ERROR": {
        if (run) {
          run.terminal = "RUN_ERROR";
          run.status = "error";
          run.error = ev.message + (ev.code ? ` (${ev.code})` : "");
          run.usage = ev.usage;
        }
        const at = this.anchorHere();
        this.notes.push({ kind: "error", key: `error-${run?.id ?? "n" + at.seq}`, ...at, message: String(ev.message), code: ev.code });
        break;
      }

      case "STEP_STARTED":
      case "STEP_FINISHED": {
        const owner = ev.subagentRunId ?? "";
        if (!this.steps.has(owner)) this.steps.set(owner, new Map());
        const steps = this.steps.get(owner);
        if (ev.type === "STEP_FINISHED" && !steps.has(ev.stepName)) warn(`step "${ev.stepName}" was not started`);
        steps.set(String(ev.stepName), ev.type === "STEP_STARTED" ? "running" : "done");
        break;
      }

      case "TEXT_MESSAGE_START": {
        const m = this.findMessage(ev.messageId);
        if (m) {
          if (m.role === "activity") warn(`message '${ev.messageId}' is an activity; ignored`);
          else mergeMetadata(m, ev);
        } else {
          const msg = withTag({ id: ev.messageId, role: ev.role ?? "assistant", content: "" }, ev);
          if (ev.name !== undefined) msg.name = ev.name;
          mergeMetadata(msg, ev);
          this.messages.push(msg);
        }
        this.open.text.add(ev.messageId);
        break;
      }
      case "TEXT_MESSAGE_CONTENT":
      case "REASONING_MESSAGE_CONTENT": {
        const m = this.findMessage(ev.messageId);
        if (!m) warn(`no message '${ev.messageId}'`);
        else if (m.role === "activity") warn(`message '${ev.messageId}' is an activity; ignored`);
        else {
          m.content = (typeof m.content === "string" ? m.content : "") + String(ev.delta ?? "");
          mergeMetadata(m, ev);
        }
        break;
      }
      case "TEXT_MESSAGE_END":
      case "REASONING_MESSAGE_END": {
        const m = this.findMessage(ev.messageId);
        if (!m) warn(`no message '${ev.messageId}'`);
        else if (m.role === "activity") warn(`message '${ev.messageId}' is an activity; ignored`);
        else mergeMetadata(m, ev);
        this.open[ev.type === "TEXT_MESSAGE_END" ? "text" : "reasoning"].delete(ev.messageId);
        break;
      }

      case "TOOL_CALL_START": {
        if (run?.toolTally && !run.toolTally.started.includes(ev.toolCallId)) run.toolTally.started.push(ev.toolCallId);
        const existing = this.findToolCall(ev.toolCallId);
        if (existing) {
          if (existing.toolCall.function.name !== ev.toolCallName) {
            warn(`tool call '${ev.toolCallId}' renamed to '${ev.toolCallName}'`);
            existing.toolCall.function.name = ev.toolCallName;
          }
          mergeMetadata(existing.toolCall, ev);
        } else {
          let parent;
          const pid = ev.parentMessageId;
          if (typeof pid === "string" && pid !== "") {
            const m = this.findMessage(pid);
            if (m && m.role === "assistant") parent = m;
            else if (m) {
              warn(`parent message '${pid}' is not an assistant message`);
              parent = withTag({ id: ev.toolCallId, role: "assistant", toolCalls: [] }, ev);
              this.messages.push(parent);
            } else {
              parent = withTag({ id: pid, role: "assistant", toolCalls: [] }, ev);
              this.messages.push(parent);
            }
          } else {
            parent = withTag({ id: ev.toolCallId, role: "assistant", toolCalls: [] }, ev);
            this.messages.push(parent);
          }
          if (!Array.isArray(parent.toolCalls)) parent.toolCalls = [];
          const tc = { id: ev.toolCallId, type: "function", function: { name: ev.toolCallName, arguments: "" } };
          mergeMetadata(tc, ev);
          parent.toolCalls.push(tc);
        }
        this.open.tool.add(ev.toolCallId);
        break;
      }
      case "TOOL_CALL_ARGS": {
        const found = this.findToolCall(ev.toolCallId);
        if (!found) warn(`no tool call '${ev.toolCallId}'`);
        else {
          found.toolCall.function.arguments += String(ev.delta ?? "");
          mergeMetadata(found.toolCall, ev);
        }
        break;
      }
      case "TOOL_CALL_END": {
        const found = this.findToolCall(ev.toolCallId);
        if (!found) warn(`no tool call '${ev.toolCallId}'`);
        else mergeMetadata(found.toolCall, ev);
        this.open.tool.delete(ev.toolCallId);
        break;
      }
      case "TOOL_CALL_RESULT": {
        run?.toolTally?.answered.add(ev.toolCallId);
        const msg = withTag({ id: ev.messageId, toolCallId: ev.toolCallId, role: ev.role || "tool", content: clone(ev.content) }, ev);
        mergeMetadata(msg, ev);
        const list = this.messages;
        const at = list.findIndex((m) => m.role === "assistant" && Array.isArray(m.toolCalls) && m.toolCalls.some((c) => c.id === ev.toolCallId));
        if (at < 0) list.push(msg);
        else {
          let i = at + 1;
          while (i < list.length && list[i].role === "tool") i++;
          list.splice(i, 0, msg);
        }
        break;
      }

      case "STATE_SNAPSHOT":
        this.state = clone(ev.snapshot);
        break;
      case "STATE_DELTA":
        try {
          this.state = applyPatch(this.state, ev.delta);
        } catch (e) {
          warn(`patch not applied, state unchanged: ${e.message}`);
        }
        break;

      case "MESSAGES_SNAPSHOT":
        this.applyMessagesSnapshot(ev);
        break;

      case "ACTIVITY_SNAPSHOT": {
        const list = this.messages;
        const i = list.findIndex((m) => m.id === ev.messageId);
        const replace = ev.replace !== false;
        const fresh = () => {
          const m = withTag({ id: ev.messageId, role: "activity", activityType: ev.activityType, content: clone(ev.content) }, ev);
          mergeMetadata(m, ev);
          return m;
        };
        if (i < 0) list.push(fresh());
        else if (list[i].role === "activity") {
          const m = list[i];
          if (replace) {
            m.activityType = ev.activityType;
            m.content = clone(ev.content);
            if (typeof ev.subagentRunId === "string") m.subagentRunId = ev.subagentRunId;
            else delete m.subagentRunId;
          }
          mergeMetadata(m, ev);
        } else if (replace) list[i] = fresh();
        break;
      }
      case "ACTIVITY_DELTA": {
        const m = this.findMessage(ev.messageId);
        if (!m) break; // silently ignored, as the reference does
        if (m.role !== "activity") {
          warn(`message '${ev.messageId}' is not an activity`);
          break;
        }
        mergeMetadata(m, ev);
        try {
          m.content = applyPatch(m.content, ev.patch);
          m.activityType = ev.activityType;
        } catch (e) {
          warn(`patch not applied, activity unchanged: ${e.message}`);
        }
        break;
      }

      case "REASONING_START":
      case "REASONING_END":
        break; // spans create no message
      case "REASONING_MESSAGE_START": {
        const m = this.findMessage(ev.messageId);
        if (m) {
          if (m.role === "activity") warn(`message '${ev.messageId}' is an activity; ignored`);
          else mergeMetadata(m, ev);
        } else {
          const msg = withTag({ id: ev.messageId, role: "reasoning", content: "" }, ev);
          mergeMetadata(msg, ev);
          this.messages.push(msg);
        }
        this.open.reasoning.add(ev.messageId);
        break;
      }
      case "REASONING_ENCRYPTED_VALUE": {
        if (ev.subtype === "tool-call") {
          const found = this.findToolCall(ev.entityId);
          if (found) found.toolCall.encryptedValue = ev.encryptedValue;
        } else {
          const m = this.findMessage(ev.entityId);
          if (m && m.role !== "activity") m.encryptedValue = ev.encryptedValue;
        }
        break;
      }

      case "SUBAGENT_STARTED": {
        const id = ev.subagentRunId;
        const prev = this.subagents.get(id);
        this.subagents.set(id, {
          id,
          name: ev.name,
          description: ev.description,
          parent: ev.parentSubagentRunId,
          parentToolCallId: ev.parentToolCallId,
          status: "running",
          ...(prev ? { after: prev.after, seq: prev.seq } : this.anchorHere()),
        });
        break;
      }
      case "SUBAGENT_FINISHED":
      case "SUBAGENT_ERROR": {
        const id = ev.subagentRunId;
        let sa = this.subagents.get(id);
        if (!sa) {
          warn(`subagent '${id}' was not started`);
          sa = { id, name: id, status: "running", ...this.anchorHere() };
          this.subagents.set(id, sa);
        }
        if (ev.type === "SUBAGENT_ERROR") {
          sa.status = "error";
          sa.error = ev.message + (ev.code ? ` (${ev.code})` : "");
        } else {
          sa.status = ev.outcome?.type === "suspended" ? "suspended" : "finished";
          if (ev.result !== undefined) sa.result = ev.result;
        }
        break;
      }

      case "RAW":
      case "CUSTOM":
        break; // timeline only
      default:
        break;
    }
  }

  /** MESSAGES_SNAPSHOT (client.md §6.5, AP14–AP18). */
  applyMessagesSnapshot(ev) {
    const snap = (Array.isArray(ev.messages) ? ev.messages : []).filter(isObject).map(stripNullTag);
    const byId = new Map();
    for (const m of snap) byId.set(m.id, m);
    const snapHasReasoning = snap.some((m) => m.role === "reasoning");
    const snapHasActivity = snap.some((m) => m.role === "activity");
    const meta = isObject(ev.metadata) ? ev.metadata["@ag-ui/client"] : undefined;
    let authoritative; // undefined | null | string[]
    if (isObject(meta) && hasOwn(meta, "authoritativeActivityTypes")) {
      const a = meta.authoritativeActivityTypes;
      authoritative = a === null ? null : Array.isArray(a) && a.every((x) => typeof x === "string") ? a : [];
    } else if (meta !== undefined && !isObject(meta)) authoritative = [];
    const keepLocal = (m) => {
      if (m.role === "reasoning") return !snapHasReasoning;
      if (m.role === "activity") {
        if (authoritative === undefined) return !snapHasActivity;
        if (authoritative === null) return false;
        return !authoritative.includes(m.activityType);
      }
      return false;
    };
    const kept = [];
    const keptIds = new Set();
    for (const m of this.messages) {
      if (byId.has(m.id)) {
        kept.push(clone(byId.get(m.id)));
        keptIds.add(m.id);
      } else if (keepLocal(m)) kept.push(m);
    }
    for (const m of snap) if (!keptIds.has(m.id)) kept.push(clone(m));
    this.messages = kept;
  }
}

/**
 * Time travel over a list of events: remembers every event pushed to a live Fold and copies
 * of that fold every `every` events (and wherever the caller changed the fold outside the
 * events, see `touch`), so the fold right after any event is a copy plus a short replay.
 */
export class History {
  constructor(every = 200) {
    this.every = every;
    /** the events, as pushed */
    this.events = [];
    /** [{at, fold}]: `fold` is the fold right before event `at` */
    this.checkpoints = [];
    this.dirty = true;
  }

  /** The live fold changed outside the events (a user message, a snapshot from elsewhere). */
  touch() {
    this.dirty = true;
  }

  /** Records `ev`, about to be pushed to the live `fold`; returns its index. */
  record(fold, ev) {
    const at = this.events.length;
    const last = this.checkpoints[this.checkpoints.length - 1];
    if (this.dirty || !last || at - last.at >= this.every) {
      this.checkpoints.push({ at, fold: fold.copy() });
      this.dirty = false;
    }
    this.events.push(ev);
    return at;
  }

  /** The fold right before event `i` (a fresh copy). */
  before(i) {
    if (i <= 0) return this.checkpoints.length ? this.checkpoints[0].fold.copy() : new Fold();
    return this.after(i - 1);
  }

  /** The fold right after event `i` (a fresh copy), with the warnings of that event. */
  after(i) {
    let lo = 0;
    let hi = this.checkpoints.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.checkpoints[mid].at <= i) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    const start = best >= 0 ? this.checkpoints[best] : { at: 0, fold: new Fold() };
    const f = start.fold.copy();
    let warnings = [];
    for (let k = start.at; k <= i && k < this.events.length; k++) {
      if (this.events[k].type === "RUN_STARTED") f.run = { id: this.events[k].runId };
      warnings = f.push(this.events[k]);
    }
    f.warnings = warnings;
    return f;
  }
}

/**
 * Folds a whole stream from nothing (the corpus test and offline recordings): returns the
 * fold and each event's warnings.
 */
export function foldAll(events, start) {
  const f = new Fold(start);
  const warnings = [];
  for (const ev of events) {
    if (isObject(ev) && ev.type === "RUN_STARTED") f.run = { id: ev.runId };
    warnings.push(f.push(ev));
  }
  return { fold: f, warnings };
}
