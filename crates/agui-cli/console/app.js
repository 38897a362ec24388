// agui console: a one-page AG-UI client and inspector.
//
// It POSTs a RunAgentInput to an AG-UI endpoint (default: /agent on this
// origin, or ?agent=URL), reads the Server-Sent Events answer incrementally,
// folds the events into messages and state the way the reference client
// (@ag-ui/client 1.0) does, and renders the result: chat, tool calls, state,
// activities, reasoning, subagents, interrupts and an event timeline. Where the
// agent offers agui serve's thread routes, a thread list opens, continues and
// deletes stored threads; where the console's own origin lists several agents
// (GET /agents), a picker switches between them.
//
// Plain browser JavaScript, no dependencies, no build step, no network access
// other than the agent endpoint and the console's own origin: the file is
// embedded as is in the agui binary.
"use strict";

(() => {
  // ---------------------------------------------------------------------------
  // Small helpers
  // ---------------------------------------------------------------------------

  const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

  function deepEqual(a, b) {
    if (a === b) return true;
    if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    if (Array.isArray(a)) {
      if (a.length !== b.length) return false;
      for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
      return true;
    }
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) if (!hasOwn(b, k) || !deepEqual(a[k], b[k])) return false;
    return true;
  }

  // UUID v4: crypto.randomUUID() where the browser offers it (secure contexts:
  // https, localhost), else from getRandomValues (the console may be opened over
  // plain http on a LAN address, where randomUUID does not exist).
  function uuid() {
    if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  // h("div", {class: "x", testid: "y", onclick: fn}, child, "text", [more])
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === "testid") node.setAttribute("data-testid", v);
        else if (k === "class") node.className = v;
        else if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
        else if (k === "open" || k === "disabled" || k === "hidden") node[k] = Boolean(v);
        else node.setAttribute(k, v === true ? "" : String(v));
      }
    }
    appendAll(node, children);
    return node;
  }
  function appendAll(node, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) appendAll(node, c);
      else node.append(c instanceof Node ? c : String(c));
    }
  }

  function truncate(s, n) {
    s = String(s);
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }
  function fmtMs(ms) {
    return ms < 10000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
  }
  function jsonText(v) {
    try {
      return JSON.stringify(v, null, 2) ?? String(v);
    } catch {
      return String(v);
    }
  }

  // ---------------------------------------------------------------------------
  // SSE parsing (incremental; LF, CRLF and CR line endings; comments; multi-line
  // data). Like the reference client, a trailing event without the blank line
  // still counts at the end of the body. onData(data, lastEventId): the id is the
  // last `id:` field seen (agui serve numbers stored events with it).
  // ---------------------------------------------------------------------------

  class SseParser {
    constructor(onData) {
      this.onData = onData;
      this.tail = "";
      this.data = [];
      this.lastId = "";
      this.skipLF = false; // the previous chunk ended in CR: a leading LF belongs to it
      this.started = false;
    }
    push(text) {
      if (!text) return;
      if (!this.started) {
        this.started = true;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      let s = this.tail + text;
      this.tail = "";
      let i = 0;
      if (this.skipLF) {
        this.skipLF = false;
        if (s.charCodeAt(0) === 10) i = 1;
      }
      let start = i;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        this.line(s.slice(start, i));
        if (c === 13) {
          if (i + 1 < s.length) {
            if (s.charCodeAt(i + 1) === 10) i++;
          } else this.skipLF = true;
        }
        start = i + 1;
      }
      this.tail = s.slice(start);
    }
    end() {
      if (this.tail) this.line(this.tail);
      this.tail = "";
      this.dispatch();
    }
    line(l) {
      if (l === "") return this.dispatch();
      if (l.charCodeAt(0) === 58 /* ':' */) return; // comment / keep-alive
      const colon = l.indexOf(":");
      const field = colon < 0 ? l : l.slice(0, colon);
      let value = colon < 0 ? "" : l.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === "data") this.data.push(value);
      else if (field === "id" && !value.includes("\0")) this.lastId = value;
      // event: and retry: carry nothing AG-UI uses
    }
    dispatch() {
      if (this.data.length === 0) return;
      const payload = this.data.join("\n");
      this.data = [];
      this.onData(payload, this.lastId);
    }
  }

  // ---------------------------------------------------------------------------
  // JSON Patch (RFC 6902) with JSON Pointers (RFC 6901). Atomic: works on a copy
  // and throws on the first failing operation, so the caller keeps the old
  // document. Follows the reference patcher's rules (fast-json-patch, validate).
  // ---------------------------------------------------------------------------

  function parsePointer(p) {
    if (typeof p !== "string") throw new Error("path is not a string");
    if (p === "") return [];
    if (p[0] !== "/") throw new Error(`"${p}" is not a JSON Pointer`);
    return p
      .slice(1)
      .split("/")
      .map((t) => {
        if (/~[^01]|~$/.test(t)) throw new Error(`bad escape in "${p}"`);
        return t.replace(/~1/g, "/").replace(/~0/g, "~");
      });
  }

  function checkTokens(tokens) {
    for (let i = 0; i < tokens.length; i++) {
      if (tokens[i] === "__proto__") throw new Error("__proto__ is not allowed");
      if (tokens[i] === "prototype" && i > 0 && tokens[i - 1] === "constructor")
        throw new Error("constructor/prototype is not allowed");
    }
  }

  const INDEX = /^(0|[1-9][0-9]*)$/;

  // Walks to the container holding the last token. box.root holds the document.
  function locate(box, tokens, path) {
    let node = box;
    let key = "root";
    for (const t of tokens) {
      const cur = node[key];
      if (Array.isArray(cur)) {
        if (!INDEX.test(t) || Number(t) >= cur.length) throw new Error(`${path}: no such element`);
        node = cur;
        key = Number(t);
      } else if (isObject(cur)) {
        if (!hasOwn(cur, t)) throw new Error(`${path}: no such member`);
        node = cur;
        key = t;
      } else throw new Error(`${path}: cannot walk into a ${cur === null ? "null" : typeof cur}`);
    }
    return { node, key };
  }
  function parentOf(box, tokens, path) {
    if (tokens.length === 0) return { container: box, key: "root", isRoot: true };
    const { node, key } = locate(box, tokens.slice(0, -1), path);
    const container = node[key];
    if (container === null || typeof container !== "object")
      throw new Error(`${path}: parent is not a container`);
    return { container, key: tokens[tokens.length - 1], isRoot: false };
  }
  function getAt(box, tokens, path) {
    const { node, key } = locate(box, tokens, path);
    return node[key];
  }
  function addAt(box, tokens, value, path) {
    const { container, key, isRoot } = parentOf(box, tokens, path);
    if (isRoot) return void (box.root = value);
    if (Array.isArray(container)) {
      if (key === "-") return void container.push(value);
      if (!INDEX.test(key) || Number(key) > container.length) throw new Error(`${path}: index out of range`);
      container.splice(Number(key), 0, value);
    } else container[key] = value;
  }
  function removeAt(box, tokens, path) {
    const { container, key, isRoot } = parentOf(box, tokens, path);
    if (isRoot) {
      const old = box.root;
      box.root = null;
      return old;
    }
    if (Array.isArray(container)) {
      if (!INDEX.test(key) || Number(key) >= container.length) throw new Error(`${path}: no such element`);
      return container.splice(Number(key), 1)[0];
    }
    if (!hasOwn(container, key)) throw new Error(`${path}: no such member`);
    const old = container[key];
    delete container[key];
    return old;
  }

  function applyPatch(doc, ops) {
    if (!Array.isArray(ops)) throw new Error("the patch is not an array");
    // Reference quirks: a null document cannot be patched below the root; a
    // scalar document silently ignores operations below the root.
    const scalar = doc !== null && typeof doc !== "object";
    const box = { root: clone(doc) };
    for (const op of ops) {
      if (!isObject(op)) throw new Error("an operation is not an object");
      const path = op.path;
      const tokens = parsePointer(path);
      checkTokens(tokens);
      if (scalar && tokens.length > 0) continue;
      switch (op.op) {
        case "add":
          if (!hasOwn(op, "value")) throw new Error(`add ${path}: no value`);
          addAt(box, tokens, clone(op.value), path);
          break;
        case "remove":
          removeAt(box, tokens, path);
          break;
        case "replace": {
          if (!hasOwn(op, "value")) throw new Error(`replace ${path}: no value`);
          if (tokens.length === 0) {
            box.root = clone(op.value);
            break;
          }
          const { node, key } = locate(box, tokens, path);
          node[key] = clone(op.value);
          break;
        }
        case "move": {
          const from = parsePointer(op.from);
          checkTokens(from);
          if (path !== op.from && path.startsWith(op.from + "/"))
            throw new Error(`move ${op.from} -> ${path}: cannot move into a child`);
          const value = removeAt(box, from, op.from);
          addAt(box, tokens, value, path);
          break;
        }
        case "copy": {
          const from = parsePointer(op.from);
          checkTokens(from);
          addAt(box, tokens, clone(getAt(box, from, op.from)), path);
          break;
        }
        case "test":
          if (!deepEqual(getAt(box, tokens, path), op.value)) throw new Error(`test ${path} failed`);
          break;
        default:
          throw new Error(`unknown operation "${op.op}"`);
      }
    }
    return box.root;
  }

  // ---------------------------------------------------------------------------
  // Event vocabulary
  // ---------------------------------------------------------------------------

  const KNOWN = new Set([
    "RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "STEP_STARTED", "STEP_FINISHED",
    "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK",
    "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK", "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT", "STATE_DELTA", "MESSAGES_SNAPSHOT", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
    "RAW", "CUSTOM", "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END", "REASONING_MESSAGE_CHUNK", "REASONING_END", "REASONING_ENCRYPTED_VALUE",
    "SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR",
  ]);

  function category(type) {
    if (!KNOWN.has(type)) return "unknown";
    if (type.startsWith("RUN_")) return "run";
    if (type.startsWith("TEXT_")) return "text";
    if (type.startsWith("TOOL_")) return "tool";
    if (type.startsWith("STATE_") || type === "MESSAGES_SNAPSHOT") return "state";
    if (type.startsWith("ACTIVITY_")) return "activity";
    if (type.startsWith("REASONING_")) return "reasoning";
    if (type.startsWith("SUBAGENT_")) return "subagent";
    if (type.startsWith("STEP_")) return "step";
    return "other";
  }

  // Lanes whose pending chunk stream an event closes (client.md §4.2).
  const CLOSES_OWN_LANE = new Set([
    "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
    "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
    "STATE_SNAPSHOT", "STATE_DELTA", "CUSTOM", "STEP_STARTED", "STEP_FINISHED",
    "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END", "REASONING_END",
  ]);
  const CLOSES_ALL_LANES = new Set(["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"]);

  const CHUNK_KINDS = {
    TEXT_MESSAGE_CHUNK: { kind: "text", idKey: "messageId", label: "text message" },
    TOOL_CALL_CHUNK: { kind: "tool", idKey: "toolCallId", label: "tool call" },
    REASONING_MESSAGE_CHUNK: { kind: "reasoning", idKey: "messageId", label: "reasoning message" },
  };

  // ---------------------------------------------------------------------------
  // Session model
  // ---------------------------------------------------------------------------

  const params = new URLSearchParams(location.search);
  const agentParam = params.get("agent");

  // The API token: agui serve prints the console's URL with it in the fragment
  // (#token=...), which never reaches logs or Referer. It is kept for this tab only and
  // taken out of the address bar.
  const apiToken = (() => {
    const frag = new URLSearchParams(location.hash.slice(1));
    const t = frag.get("token");
    if (t) {
      try {
        sessionStorage.setItem("agui-token", t);
      } catch {}
      frag.delete("token");
      const url = new URL(location.href);
      url.hash = frag.toString();
      history.replaceState(null, "", url);
      return t;
    }
    try {
      return sessionStorage.getItem("agui-token");
    } catch {
      return null;
    }
  })();

  /** The Authorization header for `url`: only ever for the console's own origin. */
  function authHeaders(url) {
    try {
      if (apiToken && new URL(url, location.href).origin === location.origin) {
        return { Authorization: `Bearer ${apiToken}` };
      }
    } catch {}
    return {};
  }

  const session = {
    endpoint: resolveEndpoint(agentParam || "/agent"),
    threadId: uuid(),
    messages: [],
    state: {},
    pendingInterrupts: [],
    subagents: new Map(), // subagentRunId -> {id, name, description, parent, status, ...}
    steps: new Map(), // owner ("" = parent agent) -> Map(stepName -> "running"|"done")
    notes: [], // chat items that are not messages: interrupts, run errors
    open: { text: new Set(), tool: new Set(), reasoning: new Set() },
    lanes: new Map(), // chunk expansion: lane (tag or null) -> pending stream
    run: null, // the run in flight (or the last one)
    runCount: 0, // runs started from this page (all threads)
    runNumber: 0, // runs of this thread, stored ones included (labels "run N")
    busy: false,
    controller: null, // aborts what is in flight: a run, or the opening of a thread
    epoch: 0, // bumped when the session switches threads: late work of the old one is dropped
    loading: null, // {threadId, events} while a stored thread is being opened
    opened: null, // {threadId, title, runs, events, problem} once a stored thread is open
  };

  function resolveEndpoint(s) {
    try {
      return new URL(s, location.href).href;
    } catch {
      return s;
    }
  }

  // ---------------------------------------------------------------------------
  // Chunk expansion (client.md §4): TEXT_MESSAGE_CHUNK, TOOL_CALL_CHUNK and
  // REASONING_MESSAGE_CHUNK become START / CONTENT / END, one pending stream per
  // lane (lane = subagentRunId, or the parent agent).
  // ---------------------------------------------------------------------------

  function closeLane(lane, out) {
    const p = session.lanes.get(lane);
    if (!p) return;
    session.lanes.delete(lane);
    const end =
      p.kind === "text" ? { type: "TEXT_MESSAGE_END", messageId: p.id }
      : p.kind === "tool" ? { type: "TOOL_CALL_END", toolCallId: p.id }
      : { type: "REASONING_MESSAGE_END", messageId: p.id };
    if (p.tag !== undefined) end.subagentRunId = p.tag;
    out.push(end);
  }

  function expand(ev) {
    const out = [];
    const spec = CHUNK_KINDS[ev.type];
    if (!spec) {
      if (CLOSES_ALL_LANES.has(ev.type)) for (const lane of [...session.lanes.keys()]) closeLane(lane, out);
      else if (CLOSES_OWN_LANE.has(ev.type)) closeLane(ev.subagentRunId ?? null, out);
      else if (ev.type === "SUBAGENT_FINISHED" || ev.type === "SUBAGENT_ERROR") {
        if (typeof ev.subagentRunId === "string") closeLane(ev.subagentRunId, out);
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
      for (const [k, p] of session.lanes) {
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
    } else if (session.lanes.get(null)?.kind === kind) {
      lane = null;
    } else {
      const candidates = [...session.lanes].filter(([, p]) => p.kind === kind);
      if (candidates.length > 1)
        throw new Error(`Ambiguous ${ev.type}: it carries neither a ${idKey} nor a subagentRunId, but ${candidates.length} lanes have an open ${label}.`);
      lane = candidates.length === 1 ? candidates[0][0] : null;
    }

    let p = session.lanes.get(lane);
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
      closeLane(lane, out);
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
      session.lanes.set(lane, p);
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

  // ---------------------------------------------------------------------------
  // The reducer (client.md §6): events -> messages, state, interrupts.
  // `warn` collects what the reference client would only log; the timeline
  // shows it next to the event.
  // ---------------------------------------------------------------------------

  const findMessage = (id) => session.messages.find((m) => m.id === id);
  function findToolCall(id) {
    for (const m of session.messages) {
      if (!Array.isArray(m.toolCalls)) continue;
      const tc = m.toolCalls.find((c) => c.id === id);
      if (tc) return { message: m, toolCall: tc };
    }
    return null;
  }
  function mergeMetadata(target, ev) {
    if (target && isObject(ev.metadata)) target.metadata = { ...(target.metadata ?? {}), ...clone(ev.metadata) };
  }
  function withTag(obj, ev) {
    if (typeof ev.subagentRunId === "string") obj.subagentRunId = ev.subagentRunId;
    return obj;
  }
  // Where a non-message item (interrupt, error, subagent group) goes in the chat:
  // after the message that is last right now.
  let anchorSeq = 0;
  function anchorHere() {
    const last = session.messages[session.messages.length - 1];
    return { after: last ? last.id : null, seq: ++anchorSeq };
  }
  function stripNullTag(m) {
    const c = clone(m);
    if (c && c.subagentRunId === null) delete c.subagentRunId;
    return c;
  }

  function apply(ev, warn) {
    const run = session.run;
    switch (ev.type) {
      case "RUN_STARTED": {
        if (run) {
          run.started = true;
          run.toolTally = { started: [], answered: new Set() };
          run.status = "running";
        }
        for (const k of Object.keys(session.open)) session.open[k].clear();
        const input = ev.input;
        if (input && Array.isArray(input.messages)) {
          for (const m of input.messages) {
            if (isObject(m) && typeof m.id === "string" && !findMessage(m.id)) session.messages.push(stripNullTag(m));
          }
        }
        break;
      }
      case "RUN_FINISHED": {
        const outcome = isObject(ev.outcome) ? ev.outcome : undefined;
        const type = outcome?.type ?? "success";
        if (type === "interrupt" && Array.isArray(outcome.interrupts)) {
          session.pendingInterrupts = outcome.interrupts.map(stripNullTag);
          session.notes.push({
            kind: "interrupt",
            key: `interrupt-${run ? run.id : uuid()}`,
            ...anchorHere(),
            interrupts: session.pendingInterrupts,
            status: "pending",
          });
        } else {
          session.pendingInterrupts = [];
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
      case "RUN_ERROR":
        if (run) {
          run.terminal = "RUN_ERROR";
          run.status = "error";
          run.error = ev.message + (ev.code ? ` (${ev.code})` : "");
          run.usage = ev.usage;
        }
        session.notes.push({ kind: "error", key: `error-${run ? run.id : uuid()}`, ...anchorHere(), message: String(ev.message), code: ev.code });
        break;

      case "STEP_STARTED":
      case "STEP_FINISHED": {
        const owner = ev.subagentRunId ?? "";
        if (!session.steps.has(owner)) session.steps.set(owner, new Map());
        const steps = session.steps.get(owner);
        if (ev.type === "STEP_FINISHED" && !steps.has(ev.stepName)) warn(`step "${ev.stepName}" was not started`);
        steps.set(String(ev.stepName), ev.type === "STEP_STARTED" ? "running" : "done");
        break;
      }

      case "TEXT_MESSAGE_START": {
        const m = findMessage(ev.messageId);
        if (m) {
          if (m.role === "activity") warn(`message '${ev.messageId}' is an activity; ignored`);
          else mergeMetadata(m, ev);
        } else {
          const msg = withTag({ id: ev.messageId, role: ev.role ?? "assistant", content: "" }, ev);
          if (ev.name !== undefined) msg.name = ev.name;
          mergeMetadata(msg, ev);
          session.messages.push(msg);
        }
        session.open.text.add(ev.messageId);
        break;
      }
      case "TEXT_MESSAGE_CONTENT":
      case "REASONING_MESSAGE_CONTENT": {
        const m = findMessage(ev.messageId);
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
        const m = findMessage(ev.messageId);
        if (!m) warn(`no message '${ev.messageId}'`);
        else if (m.role === "activity") warn(`message '${ev.messageId}' is an activity; ignored`);
        else mergeMetadata(m, ev);
        session.open[ev.type === "TEXT_MESSAGE_END" ? "text" : "reasoning"].delete(ev.messageId);
        break;
      }

      case "TOOL_CALL_START": {
        if (run?.toolTally && !run.toolTally.started.includes(ev.toolCallId)) run.toolTally.started.push(ev.toolCallId);
        const existing = findToolCall(ev.toolCallId);
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
            const m = findMessage(pid);
            if (m && m.role === "assistant") parent = m;
            else if (m) {
              warn(`parent message '${pid}' is not an assistant message`);
              parent = withTag({ id: ev.toolCallId, role: "assistant", toolCalls: [] }, ev);
              session.messages.push(parent);
            } else {
              parent = withTag({ id: pid, role: "assistant", toolCalls: [] }, ev);
              session.messages.push(parent);
            }
          } else {
            parent = withTag({ id: ev.toolCallId, role: "assistant", toolCalls: [] }, ev);
            session.messages.push(parent);
          }
          if (!Array.isArray(parent.toolCalls)) parent.toolCalls = [];
          const tc = { id: ev.toolCallId, type: "function", function: { name: ev.toolCallName, arguments: "" } };
          mergeMetadata(tc, ev);
          parent.toolCalls.push(tc);
        }
        session.open.tool.add(ev.toolCallId);
        break;
      }
      case "TOOL_CALL_ARGS": {
        const found = findToolCall(ev.toolCallId);
        if (!found) warn(`no tool call '${ev.toolCallId}'`);
        else {
          found.toolCall.function.arguments += String(ev.delta ?? "");
          mergeMetadata(found.toolCall, ev);
        }
        break;
      }
      case "TOOL_CALL_END": {
        const found = findToolCall(ev.toolCallId);
        if (!found) warn(`no tool call '${ev.toolCallId}'`);
        else mergeMetadata(found.toolCall, ev);
        session.open.tool.delete(ev.toolCallId);
        break;
      }
      case "TOOL_CALL_RESULT": {
        run?.toolTally?.answered.add(ev.toolCallId);
        const msg = withTag({ id: ev.messageId, toolCallId: ev.toolCallId, role: ev.role || "tool", content: clone(ev.content) }, ev);
        mergeMetadata(msg, ev);
        const list = session.messages;
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
        session.state = clone(ev.snapshot);
        break;
      case "STATE_DELTA":
        try {
          session.state = applyPatch(session.state, ev.delta);
        } catch (e) {
          warn(`patch not applied, state unchanged: ${e.message}`);
        }
        break;

      case "MESSAGES_SNAPSHOT":
        applyMessagesSnapshot(ev);
        break;

      case "ACTIVITY_SNAPSHOT": {
        const list = session.messages;
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
        const m = findMessage(ev.messageId);
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
        const m = findMessage(ev.messageId);
        if (m) {
          if (m.role === "activity") warn(`message '${ev.messageId}' is an activity; ignored`);
          else mergeMetadata(m, ev);
        } else {
          const msg = withTag({ id: ev.messageId, role: "reasoning", content: "" }, ev);
          mergeMetadata(msg, ev);
          session.messages.push(msg);
        }
        session.open.reasoning.add(ev.messageId);
        break;
      }
      case "REASONING_ENCRYPTED_VALUE": {
        if (ev.subtype === "tool-call") {
          const found = findToolCall(ev.entityId);
          if (found) found.toolCall.encryptedValue = ev.encryptedValue;
        } else {
          const m = findMessage(ev.entityId);
          if (m && m.role !== "activity") m.encryptedValue = ev.encryptedValue;
        }
        break;
      }

      case "SUBAGENT_STARTED": {
        const id = ev.subagentRunId;
        const prev = session.subagents.get(id);
        session.subagents.set(id, {
          id,
          name: ev.name,
          description: ev.description,
          parent: ev.parentSubagentRunId,
          parentToolCallId: ev.parentToolCallId,
          status: "running",
          ...(prev ? { after: prev.after, seq: prev.seq } : anchorHere()),
        });
        break;
      }
      case "SUBAGENT_FINISHED":
      case "SUBAGENT_ERROR": {
        const id = ev.subagentRunId;
        let sa = session.subagents.get(id);
        if (!sa) {
          warn(`subagent '${id}' was not started`);
          sa = { id, name: id, status: "running", ...anchorHere() };
          session.subagents.set(id, sa);
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

  function applyMessagesSnapshot(ev) {
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
    for (const m of session.messages) {
      if (byId.has(m.id)) {
        kept.push(clone(byId.get(m.id)));
        keptIds.add(m.id);
      } else if (keepLocal(m)) kept.push(m);
    }
    for (const m of snap) if (!keptIds.has(m.id)) kept.push(clone(m));
    session.messages = kept;
  }

  // ---------------------------------------------------------------------------
  // Running an agent
  // ---------------------------------------------------------------------------

  class RunFailure extends Error {}

  function buildInput(runId, resume) {
    const input = {
      threadId: session.threadId,
      runId,
      protocolVersion: "1.0",
      state: clone(session.state),
      messages: session.messages.filter((m) => m.role !== "activity").map(stripNullTag),
      tools: [],
      context: [],
      forwardedProps: {},
    };
    if (resume) input.resume = resume;
    return input;
  }

  // A run of the current thread: one this page starts, or a stored one replayed.
  function newRun(id, controller, extra = {}) {
    return {
      id,
      n: ++session.runNumber,
      epoch: session.epoch,
      t0: performance.now(),
      status: "running",
      started: false,
      terminal: null,
      eventCount: 0,
      controller,
      toolTally: { started: [], answered: new Set() },
      ...extra,
    };
  }

  // Reads an SSE response body to its end, handing each frame to onData(data, id).
  async function readSse(res, onData) {
    if (!res.body) throw new RunFailure("The response has no readable body.");
    const reader = res.body.getReader();
    const decoder = new TextDecoder("utf-8");
    const parser = new SseParser(onData);
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (e && e.name === "AbortError") throw e;
        throw new RunFailure(`The stream broke: ${e?.message ?? e}`);
      }
      if (chunk.done) break;
      parser.push(decoder.decode(chunk.value, { stream: true }));
    }
    parser.push(decoder.decode());
    parser.end();
  }

  async function startRun({ text, resume } = {}) {
    if (session.busy) return;
    if (text !== undefined) session.messages.push({ id: uuid(), role: "user", content: text });
    const runId = uuid();
    const input = buildInput(runId, resume);
    const controller = new AbortController();
    const run = newRun(runId, controller);
    session.runCount++;
    session.run = run;
    session.busy = true;
    session.controller = controller;
    session.lanes.clear();
    for (const k of Object.keys(session.open)) session.open[k].clear();
    if (threads.state === "ok") setUrlThread(session.threadId);
    timelineRunHeader(run, input);
    scheduleRender();
    // False once the console has switched to another thread: the rest of this run is not shown.
    const live = () => run.epoch === session.epoch;

    try {
      let res;
      try {
        res = await fetch(session.endpoint, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            Accept: "text/event-stream",
            ...authHeaders(session.endpoint),
          },
          body: JSON.stringify(input),
          signal: controller.signal,
          cache: "no-store",
        });
      } catch (e) {
        if (e && e.name === "AbortError") throw e;
        throw new RunFailure(`Cannot reach ${session.endpoint}: ${e?.message ?? e}`);
      }
      run.httpStatus = res.status;
      if (!res.ok) {
        let body = "";
        try {
          body = (await res.text()).trim();
        } catch {}
        throw new RunFailure(`HTTP ${res.status}${res.statusText ? " " + res.statusText : ""}${body ? ": " + truncate(body, 400) : ""}`);
      }
      const ctype = res.headers.get("content-type") ?? "";
      if (ctype === "application/vnd.ag-ui.event+proto") throw new RunFailure("The agent answered in protobuf; the console reads only text/event-stream.");
      await readSse(res, (payload) => {
        if (live()) onFrame(run, payload);
      });
      if (!run.terminal) {
        run.status = "incomplete";
        run.error = run.started ? "The stream ended without RUN_FINISHED or RUN_ERROR." : "The stream ended without any event.";
      }
    } catch (e) {
      if (e && e.name === "AbortError") {
        run.status = "cancelled";
        run.error = "Stopped.";
      } else {
        run.status = "error";
        run.error = e instanceof RunFailure || e instanceof SyntaxError ? e.message : String(e?.message ?? e);
        if (live()) timelineNote(run, "error", run.error);
      }
      try {
        controller.abort();
      } catch {}
    } finally {
      run.t1 = performance.now();
      if (live()) {
        session.busy = false;
        session.controller = null;
        // A resume whose run never got to RUN_FINISHED leaves the interrupts
        // open (the reference keeps them pending): offer the buttons again.
        if (run.terminal !== "RUN_FINISHED") {
          for (const note of session.notes) if (note.kind === "interrupt" && note.status !== "pending" && note.answeredBy === run.id) {
            note.status = "pending";
            note.retry = true;
          }
        }
        if (run.status === "error" && !run.terminal) {
          session.notes.push({ kind: "error", key: `error-${run.id}`, ...anchorHere(), message: run.error });
        }
        scheduleRender();
      }
      // The thread's run count, status and time changed: show it in the list.
      if (threads.state === "ok") loadThreads();
    }
  }

  // Parses one SSE frame into an event (or throws a RunFailure naming what is wrong).
  function parseFrame(payload, where) {
    let ev;
    try {
      ev = JSON.parse(payload);
    } catch (e) {
      throw new RunFailure(`Invalid JSON in ${where}: ${e.message} (${truncate(payload, 80)})`);
    }
    if (!isObject(ev)) throw new RunFailure(`Invalid event in ${where}: the frame is not a JSON object.`);
    if (typeof ev.type !== "string" || ev.type === "") throw new RunFailure(`Invalid event in ${where}: the frame carries no event type.`);
    return ev;
  }

  function onFrame(run, payload) {
    const ev = parseFrame(payload, "an SSE frame");
    ingest(run, ev, `+${Math.round(performance.now() - run.t0)} ms`);
  }

  // Folds one event into the session and lists it in the timeline.
  function ingest(run, ev, timeLabel) {
    run.eventCount++;
    const warnings = [];
    const warn = (w) => warnings.push(w);
    if (!KNOWN.has(ev.type)) warn("unknown event type: ignored");
    else {
      let events;
      try {
        events = expand(ev);
      } catch (e) {
        warn(`chunk not applied: ${e.message}`);
        events = [];
      }
      for (const e of events) apply(e, warn);
    }
    timelineEvent(timeLabel, ev, warnings);
    scheduleRender();
  }

  // ---------------------------------------------------------------------------
  // Interrupts
  // ---------------------------------------------------------------------------

  function isExpired(i) {
    if (typeof i.expiresAt !== "string") return false;
    return Date.parse(i.expiresAt) <= Date.now();
  }

  function answerInterrupts(approved) {
    if (session.busy || session.pendingInterrupts.length === 0) return;
    const resume = session.pendingInterrupts.map((i) =>
      approved && !isExpired(i)
        ? { interruptId: i.id, status: "resolved", payload: { approved: true } }
        : { interruptId: i.id, status: "cancelled" });
    const note = [...session.notes].reverse().find((n) => n.kind === "interrupt" && n.status === "pending");
    startRun({ resume }); // creates session.run synchronously, before its first await
    if (note) {
      note.status = approved ? "approved" : "denied";
      note.retry = false;
      note.answeredBy = session.run.id;
    }
    scheduleRender();
  }

  // ---------------------------------------------------------------------------
  // Rendering: chat
  // ---------------------------------------------------------------------------

  const ui = {
    chat: document.getElementById("chat"),
    empty: document.getElementById("chat-empty"),
    status: document.getElementById("run-status"),
    statusText: document.getElementById("run-status-text"),
    statusDetail: document.getElementById("run-status-detail"),
    steps: document.getElementById("steps"),
    stateTree: document.getElementById("state-tree"),
    stateRaw: document.getElementById("state-raw"),
    timeline: document.getElementById("timeline"),
    eventJson: document.getElementById("event-json"),
    eventJsonTitle: document.getElementById("event-json-title"),
    input: document.getElementById("input"),
    send: document.getElementById("send"),
    stop: document.getElementById("stop"),
    hint: document.getElementById("composer-hint"),
    endpointForm: document.getElementById("endpoint-form"),
    endpoint: document.getElementById("endpoint"),
    agentPick: document.getElementById("agent-pick"),
    agentPicker: document.getElementById("agent-picker"),
    thread: document.getElementById("thread-id"),
    newThread: document.getElementById("new-thread"),
    tryList: document.getElementById("try-list"),
    tryPanel: document.getElementById("try"),
    followTimeline: document.getElementById("follow-timeline"),
    layout: document.getElementById("layout"),
    threadsToggle: document.getElementById("threads-toggle"),
    threadsPane: document.getElementById("threads-pane"),
    threadsRefresh: document.getElementById("threads-refresh"),
    threadsNote: document.getElementById("threads-note"),
    threadsError: document.getElementById("threads-error"),
    threadList: document.getElementById("thread-list"),
    threadsMore: document.getElementById("threads-more"),
  };

  const expanded = new Map(); // UI open/closed choices: key -> boolean
  let renderQueued = false;
  function scheduleRender() {
    if (renderQueued) return;
    renderQueued = true;
    const go = () => {
      if (!renderQueued) return;
      renderQueued = false;
      render();
    };
    requestAnimationFrame(go);
    setTimeout(go, 100); // rAF does not fire in background tabs
  }

  function render() {
    renderChat();
    renderState();
    renderStatus();
  }

  function textOf(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) return content.filter((p) => p && p.type === "text").map((p) => p.text).join("");
    return "";
  }

  function renderContent(content) {
    if (typeof content === "string") return h("div", { class: "text", testid: "message-text" }, content);
    if (Array.isArray(content)) {
      return h("div", { class: "text", testid: "message-text" },
        content.map((p) => {
          if (!isObject(p)) return null;
          if (p.type === "text") return h("span", null, p.text);
          const src = isObject(p.source) ? p.source : {};
          const what = src.type === "url" ? truncate(src.value, 60) : src.type === "file" ? `file ${truncate(src.value, 40)}` : `${String(src.value ?? "").length} bytes`;
          return h("span", { class: "part" }, `[${p.type}${src.mimeType ? " " + src.mimeType : ""}: ${what}]`);
        }));
    }
    if (content === undefined) return null;
    return h("pre", { class: "json" }, jsonText(content));
  }

  function tagBadge(m) {
    return m.encryptedValue !== undefined ? h("span", { class: "badge lock", title: "carries an encrypted value", testid: "encrypted" }, "encrypted") : null;
  }

  // Tool results keyed by toolCallId (rendered inside the call's card).
  function resultsByCall() {
    const map = new Map();
    for (const m of session.messages) if (m.role === "tool" && typeof m.toolCallId === "string" && !map.has(m.toolCallId)) map.set(m.toolCallId, m);
    return map;
  }

  function prettyArgs(args) {
    if (args === "") return "";
    try {
      return JSON.stringify(JSON.parse(args), null, 2);
    } catch {
      return args;
    }
  }

  // Tool results are strings by convention, often JSON: pretty-print those.
  function renderResult(content) {
    if (typeof content === "string" && /^\s*[[{]/.test(content)) {
      try {
        return h("pre", { class: "json", testid: "message-text" }, JSON.stringify(JSON.parse(content), null, 2));
      } catch {}
    }
    return renderContent(content);
  }

  function renderToolCall(tc, results) {
    const result = results.get(tc.id);
    const streaming = session.open.tool.has(tc.id);
    const status = result ? (result.error !== undefined ? "error" : "done") : streaming ? "streaming" : "called";
    const label = { streaming: "streaming arguments…", called: "waiting for result", done: "done", error: "failed" }[status];
    return h("div", { class: `tool-call status-${status}`, testid: "tool-call", "data-tool-call-id": tc.id, "data-status": status },
      h("div", { class: "card-head" },
        h("span", { class: "icon", "aria-hidden": "true" }, "⚙"),
        h("span", { class: "tool-name", testid: "tool-call-name" }, tc.function?.name ?? "?"),
        h("span", { class: `pill ${status}` }, label),
        tc.encryptedValue !== undefined ? h("span", { class: "badge lock" }, "encrypted") : null),
      h("div", { class: "card-label" }, "arguments"),
      h("pre", { class: "json args", testid: "tool-call-args" }, streaming ? tc.function?.arguments ?? "" : prettyArgs(tc.function?.arguments ?? "")),
      result
        ? [h("div", { class: "card-label" }, result.error !== undefined ? "result (error)" : "result"),
          h("div", { class: "result", testid: "tool-call-result" }, renderResult(result.content), result.error !== undefined ? h("div", { class: "error-text" }, result.error) : null)]
        : null);
  }

  function renderMessage(m, results, renderedCalls) {
    const streaming = (m.role === "reasoning" ? session.open.reasoning : session.open.text).has(m.id);
    const base = { "data-message-id": m.id, "data-role": m.role, "data-streaming": String(streaming) };
    switch (m.role) {
      case "user":
        return h("div", { ...base, class: "msg user", testid: "message-user" },
          h("div", { class: "who" }, m.name ?? "you", tagBadge(m)),
          renderContent(m.content));
      case "assistant": {
        const hasText = typeof m.content === "string" ? m.content !== "" || streaming : m.content !== undefined;
        const calls = Array.isArray(m.toolCalls) ? m.toolCalls : [];
        for (const c of calls) renderedCalls.add(c.id);
        return h("div", { ...base, class: `msg assistant${streaming ? " streaming" : ""}`, testid: "message-assistant" },
          h("div", { class: "who" }, m.name ?? "assistant", tagBadge(m)),
          hasText ? renderContent(m.content ?? "") : null,
          calls.length ? h("div", { class: "tool-calls" }, calls.map((c) => renderToolCall(c, results))) : null);
      }
      case "tool":
        if (renderedCalls.has(m.toolCallId)) return null; // shown inside its call's card
        return h("div", { ...base, class: "msg tool", testid: "message-tool" },
          h("div", { class: "who" }, `tool result · ${m.toolCallId}`, tagBadge(m)),
          renderContent(m.content),
          m.error !== undefined ? h("div", { class: "error-text" }, m.error) : null);
      case "activity":
        return renderActivity(m, base);
      case "reasoning":
        return renderReasoning(m, base, streaming);
      default: // system, developer
        return h("div", { ...base, class: `msg meta ${m.role}`, testid: `message-${m.role}` },
          h("div", { class: "who" }, m.role, tagBadge(m)),
          renderContent(m.content));
    }
  }

  // A list of steps in an activity's content, if it has a recognisable one.
  function stepList(content) {
    if (!isObject(content)) return null;
    for (const v of Object.values(content)) {
      if (!Array.isArray(v) || v.length === 0) continue;
      if (v.every((s) => typeof s === "string")) return v.map((s) => ({ label: s }));
      if (v.every((s) => isObject(s) && ["title", "label", "name", "description", "text", "step"].some((k) => typeof s[k] === "string"))) {
        return v.map((s) => ({
          label: ["title", "label", "name", "description", "text", "step"].map((k) => s[k]).find((x) => typeof x === "string"),
          status: typeof s.status === "string" ? s.status : s.done === true ? "done" : s.done === false ? "pending" : undefined,
        }));
      }
    }
    return null;
  }

  function renderActivity(m, base) {
    const steps = stepList(m.content);
    const titleKey = isObject(m.content) ? ["title", "name", "label"].find((k) => typeof m.content[k] === "string") : undefined;
    const key = `activity:${m.id}`;
    return h("div", { ...base, class: "card activity", testid: "activity", "data-activity-type": m.activityType },
      h("div", { class: "card-head" },
        h("span", { class: "icon", "aria-hidden": "true" }, "◆"),
        h("span", { class: "activity-type", testid: "activity-type" }, m.activityType),
        titleKey ? h("span", { class: "activity-title" }, m.content[titleKey]) : null),
      steps
        ? h("ol", { class: "steps-list", testid: "activity-steps" },
          steps.map((s) => h("li", { class: `step-item ${s.status ? "st-" + s.status.replace(/[^a-z_-]/gi, "") : ""}`, "data-status": s.status ?? "" },
            h("span", { class: "step-mark", "aria-hidden": "true" }, markFor(s.status)),
            h("span", null, s.label),
            s.status ? h("span", { class: "step-status" }, s.status.replace(/_/g, " ")) : null)))
        : null,
      h("details", { class: "activity-content", open: expanded.get(key) ?? !steps, "data-key": key, ontoggle: rememberToggle },
        h("summary", null, "content"),
        jsonTree(m.content, { id: key })));
  }
  function markFor(status) {
    switch (status) {
      case "done": case "completed": case "complete": case "finished": return "✓";
      case "in_progress": case "running": case "active": case "in-progress": return "●";
      case "failed": case "error": return "✗";
      default: return "○";
    }
  }
  function rememberToggle(e) {
    const key = e.currentTarget.dataset.key;
    if (key) expanded.set(key, e.currentTarget.open);
  }

  function renderReasoning(m, base, streaming) {
    const key = `reasoning:${m.id}`;
    const text = textOf(m.content);
    return h("details", { ...base, class: `msg reasoning${streaming ? " streaming" : ""}`, testid: "reasoning", open: expanded.get(key) ?? false, "data-key": key, ontoggle: rememberToggle },
      h("summary", null,
        h("span", { class: "reasoning-label" }, streaming ? "Thinking…" : "Reasoning"),
        h("span", { class: "reasoning-preview" }, truncate(text.replace(/\s+/g, " "), 90)),
        tagBadge(m)),
      h("div", { class: "text", testid: "reasoning-text" }, text));
  }

  function renderInterruptNote(note) {
    const pending = note.status === "pending";
    return h("div", { class: `card interrupt status-${note.status}`, testid: "interrupt", "data-status": note.status, role: "group", "aria-label": "Interrupt: the agent is waiting for your answer" },
      h("div", { class: "card-head" },
        h("span", { class: "icon", "aria-hidden": "true" }, pending ? "?" : note.status === "approved" ? "✓" : note.status === "closed" ? "–" : "✗"),
        h("span", null, pending ? (note.retry ? "Still waiting for your answer (the last attempt did not finish)" : "The agent is waiting for your answer")
          : note.status === "approved" ? "Approved" : note.status === "closed" ? "No longer waiting for an answer" : "Denied")),
      h("ul", { class: "interrupt-list" },
        note.interrupts.map((i) => h("li", { testid: "interrupt-item", "data-interrupt-id": i.id },
          h("div", { class: "interrupt-message" }, i.message ?? `Interrupt ${i.id}`),
          h("div", { class: "interrupt-meta" },
            h("span", { class: "pill" }, i.reason),
            i.toolCallId ? h("span", null, `tool call ${i.toolCallId}`) : null,
            i.subagentRunId ? h("span", null, `subagent ${i.subagentRunId}`) : null,
            i.expiresAt ? h("span", { class: isExpired(i) ? "expired" : "" }, `${isExpired(i) ? "expired" : "expires"} ${i.expiresAt}`) : null),
          i.responseSchema ? h("details", null, h("summary", null, "response schema"), h("pre", { class: "json" }, jsonText(i.responseSchema))) : null))),
      pending
        ? h("div", { class: "actions" },
          h("button", { type: "button", class: "btn primary", testid: "approve", disabled: session.busy, onclick: () => answerInterrupts(true) }, "Approve"),
          h("button", { type: "button", class: "btn danger", testid: "deny", disabled: session.busy, onclick: () => answerInterrupts(false) }, "Deny"))
        : null);
  }

  function renderErrorNote(note) {
    return h("div", { class: "card run-error", testid: "run-error", role: "alert" },
      h("div", { class: "card-head" }, h("span", { class: "icon", "aria-hidden": "true" }, "!"), h("span", null, "Run failed")),
      h("div", { class: "error-text" }, note.message + (note.code ? ` (${note.code})` : "")));
  }

  function renderSubagent(sa, members, children, results, renderedCalls) {
    const steps = session.steps.get(sa.id);
    const statusLabel = { running: "running", finished: "finished", suspended: "suspended", error: "error" }[sa.status] ?? sa.status;
    return h("section", { class: `card subagent status-${sa.status}`, testid: "subagent", "data-subagent-run-id": sa.id, "data-status": sa.status, "aria-label": `Subagent ${sa.name}` },
      h("div", { class: "card-head" },
        h("span", { class: "icon", "aria-hidden": "true" }, "◎"),
        h("span", { class: "subagent-name", testid: "subagent-name" }, sa.name),
        h("span", { class: `pill ${sa.status}`, testid: "subagent-status" }, statusLabel),
        h("span", { class: "subagent-id" }, sa.id)),
      sa.description ? h("div", { class: "subagent-desc" }, sa.description) : null,
      steps && steps.size ? renderStepChips(steps) : null,
      h("div", { class: "subagent-body" },
        members.map((m) => renderMessage(m, results, renderedCalls)),
        children),
      sa.error ? h("div", { class: "error-text" }, sa.error) : null,
      sa.result !== undefined ? h("details", { class: "subagent-result" }, h("summary", null, "result"), h("pre", { class: "json" }, jsonText(sa.result))) : null);
  }

  function renderStepChips(steps) {
    return h("div", { class: "step-chips" },
      [...steps].map(([name, st]) => h("span", { class: `chip ${st}`, testid: "step", "data-status": st }, st === "running" ? "● " : "✓ ", name)));
  }

  // Builds the chat's top-level blocks in order, each with a stable key.
  function chatBlocks() {
    const results = resultsByCall();
    const renderedCalls = new Set();
    // Subagent groups: known ones plus ids seen only as message tags.
    const groups = new Map();
    for (const sa of session.subagents.values()) groups.set(sa.id, { sa, members: [], children: [] });
    session.messages.forEach((m, i) => {
      if (typeof m.subagentRunId !== "string") return;
      if (!groups.has(m.subagentRunId)) groups.set(m.subagentRunId, { sa: { id: m.subagentRunId, name: m.subagentRunId, status: "attributed" }, members: [], children: [] });
      groups.get(m.subagentRunId).members.push(m);
    });
    // Nesting by parentSubagentRunId (a cycle, which a broken producer could
    // announce, is cut so that every group still has a top-level ancestor).
    for (const g of groups.values()) g.up = (g.sa.parent !== g.sa.id && groups.get(g.sa.parent)) || null;
    for (const g of groups.values()) {
      const seen = new Set([g]);
      for (let x = g.up; x; x = x.up) {
        if (seen.has(x)) {
          g.up = null;
          break;
        }
        seen.add(x);
      }
    }
    for (const g of groups.values()) if (g.up) g.up.children.push(g);
    const topLevel = (g) => !g.up;

    // Tool calls first, so that their results are known to be rendered in cards.
    for (const m of session.messages) if (m.role === "assistant" && Array.isArray(m.toolCalls)) for (const c of m.toolCalls) renderedCalls.add(c.id);

    const blocks = [];
    const emitted = new Set();
    const buildGroup = (g, depth = 0) => {
      emitted.add(g.sa.id);
      const kids = g.children.map((c) => buildGroup(c, depth + 1));
      return renderSubagent(g.sa, g.members, kids, results, new Set(renderedCalls));
    };
    const emitGroup = (g) => {
      if (emitted.has(g.sa.id)) return;
      const sig = JSON.stringify([g.sa, g.members, collectGroupSig(g, results)]);
      blocks.push({ key: `subagent:${g.sa.id}`, sig, build: () => buildGroup(g) });
      emitted.add(g.sa.id);
    };
    const emittedNotes = new Set();
    const emitNote = (note) => {
      if (emittedNotes.has(note)) return;
      emittedNotes.add(note);
      blocks.push({ key: note.key, sig: JSON.stringify([note.status, note.retry, session.busy]), build: () => (note.kind === "interrupt" ? renderInterruptNote(note) : renderErrorNote(note)) });
    };
    // Notes and announced subagents sit after the message that was last when
    // they appeared (in the order they appeared); a group whose first message
    // comes earlier shows up there instead.
    const anchored = [
      ...session.notes.map((note) => ({ after: note.after, seq: note.seq, emit: () => emitNote(note) })),
      ...[...groups.values()].filter((g) => topLevel(g) && g.sa.seq !== undefined).map((g) => ({ after: g.sa.after, seq: g.sa.seq, emit: () => emitGroup(g) })),
    ].sort((a, b) => a.seq - b.seq);
    const emitAfter = (id) => {
      for (const a of anchored) if (a.after === id) a.emit();
    };

    emitAfter(null);
    session.messages.forEach((m, i) => {
      if (typeof m.subagentRunId === "string") {
        let g = groups.get(m.subagentRunId);
        while (g.up) g = g.up;
        emitGroup(g);
      } else if (!(m.role === "tool" && renderedCalls.has(m.toolCallId))) {
        const streaming = (m.role === "reasoning" ? session.open.reasoning : session.open.text).has(m.id);
        const extra = m.role === "assistant" && Array.isArray(m.toolCalls) ? m.toolCalls.map((c) => [results.get(c.id), session.open.tool.has(c.id)]) : null;
        blocks.push({ key: `msg:${m.id}:${i}`, sig: JSON.stringify([m, streaming, extra]), build: () => renderMessage(m, results, new Set(renderedCalls)) });
      }
      emitAfter(m.id);
    });
    for (const a of anchored) a.emit(); // anchors that no longer exist
    for (const g of groups.values()) if (topLevel(g)) emitGroup(g);
    return blocks;
  }
  // Everything a subagent group's rendering depends on besides its messages.
  function collectGroupSig(g, results) {
    const parts = [];
    const walk = (x) => {
      parts.push(x.sa, session.steps.has(x.sa.id) ? [...session.steps.get(x.sa.id)] : null);
      for (const m of x.members) {
        if (Array.isArray(m.toolCalls)) for (const c of m.toolCalls) parts.push([c.id, results.get(c.id), session.open.tool.has(c.id)]);
        if (session.open.text.has(m.id) || session.open.reasoning.has(m.id)) parts.push(m.id);
      }
      for (const c of x.children) walk(c);
    };
    walk(g);
    return parts;
  }

  const blockCache = new Map(); // key -> {sig, node}
  function renderChat() {
    const blocks = chatBlocks();
    const wasAtBottom = ui.chat.scrollHeight - ui.chat.scrollTop - ui.chat.clientHeight < 40;
    const seen = new Set();
    const nodes = [];
    for (const b of blocks) {
      seen.add(b.key);
      let c = blockCache.get(b.key);
      if (!c || c.sig !== b.sig) {
        const node = b.build();
        if (!node) continue;
        c = { sig: b.sig, node };
        blockCache.set(b.key, c);
      }
      nodes.push(c.node);
    }
    for (const k of [...blockCache.keys()]) if (!seen.has(k)) blockCache.delete(k);
    // Reconcile children without touching nodes that are already in place.
    const list = ui.chat;
    const wanted = new Set(nodes);
    for (const child of [...list.children]) if (child !== ui.empty && !wanted.has(child)) child.remove();
    let ref = ui.empty.nextSibling;
    for (const n of nodes) {
      if (n === ref) ref = ref.nextSibling;
      else list.insertBefore(n, ref);
    }
    ui.empty.hidden = nodes.length > 0;
    if (wasAtBottom) ui.chat.scrollTop = ui.chat.scrollHeight;
  }

  // ---------------------------------------------------------------------------
  // Rendering: JSON tree (state, activity content)
  // ---------------------------------------------------------------------------

  function changedPaths(a, b, path = "", out = new Set()) {
    if (deepEqual(a, b)) return out;
    if (isObject(a) && isObject(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) changedPaths(a[k], b[k], `${path}/${escapeToken(k)}`, out);
      return out;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const n = Math.max(a.length, b.length);
      for (let i = 0; i < n; i++) changedPaths(a[i], b[i], `${path}/${i}`, out);
      return out;
    }
    out.add(path);
    return out;
  }
  const escapeToken = (k) => String(k).replace(/~/g, "~0").replace(/\//g, "~1");

  function jsonTree(value, { id, changed = new Set(), testid } = {}) {
    const root = h("div", { class: "json-tree", role: "tree", testid });
    root.append(jsonNode(undefined, value, "", 0, id, changed));
    return root;
  }
  function scalarNode(v) {
    const t = v === null ? "null" : typeof v;
    return h("span", { class: `jv ${t}` }, t === "string" ? JSON.stringify(v) : String(v));
  }
  function jsonNode(key, v, path, depth, id, changed) {
    const keyEl = key === undefined ? null : h("span", { class: "jk" }, Array.isArray(key) ? key[0] : JSON.stringify(key), ": ");
    const flash = changed.has(path) ? " flash" : "";
    const container = v !== null && typeof v === "object";
    if (!container) {
      return h("div", { class: `jrow${flash}`, role: "treeitem", "data-path": path }, keyEl, scalarNode(v));
    }
    const arr = Array.isArray(v);
    const entries = arr ? v.map((x, i) => [[String(i)], x, `${path}/${i}`]) : Object.keys(v).map((k) => [k, v[k], `${path}/${escapeToken(k)}`]);
    const openKey = `${id}:${path}`;
    const open = expanded.get(openKey) ?? depth < 3;
    const summary = arr ? `[${v.length}]` : `{${entries.length}}`;
    const node = h("div", { class: `jnode${flash}`, role: "treeitem", "aria-expanded": String(open), "data-path": path });
    const toggle = h("button", { type: "button", class: "jtoggle", "aria-label": `${open ? "Collapse" : "Expand"} ${path || "root"}`, "aria-expanded": String(open) }, open ? "▾" : "▸");
    const head = h("div", { class: "jrow jhead" }, toggle, keyEl, h("span", { class: "jsum" }, entries.length === 0 ? (arr ? "[]" : "{}") : summary));
    node.append(head);
    if (entries.length) {
      const body = h("div", { class: "jchildren", role: "group", hidden: !open });
      for (const [k, x, p] of entries) body.append(jsonNode(k, x, p, depth + 1, id, changed));
      node.append(body);
      toggle.addEventListener("click", () => {
        const now = body.hidden;
        body.hidden = !now;
        expanded.set(openKey, now);
        toggle.textContent = now ? "▾" : "▸";
        toggle.setAttribute("aria-expanded", String(now));
        toggle.setAttribute("aria-label", `${now ? "Collapse" : "Expand"} ${path || "root"}`);
        node.setAttribute("aria-expanded", String(now));
      });
    } else toggle.disabled = true;
    return node;
  }

  let renderedState; // the state as last drawn
  let stateVersion = 0;
  let stateDrawn = -1;
  function renderState() {
    const s = session.state;
    if (stateDrawn >= 0 && deepEqual(s, renderedState)) return;
    const changed = stateDrawn < 0 ? new Set() : changedPaths(renderedState, s);
    renderedState = clone(s);
    stateVersion++;
    stateDrawn = stateVersion;
    const tree = jsonTree(s, { id: "state", changed });
    ui.stateTree.replaceChildren(tree);
    ui.stateTree.dataset.version = String(stateVersion);
    ui.stateRaw.textContent = jsonText(s);
  }

  // ---------------------------------------------------------------------------
  // Rendering: run status
  // ---------------------------------------------------------------------------

  let ticker = null;
  function renderStatus() {
    const run = session.run;
    const opened = session.opened;
    const status = session.loading ? "loading" : run ? run.status : opened ? (opened.problem ? "error" : "opened") : "idle";
    ui.status.dataset.status = status;
    if (run) ui.status.dataset.runId = run.id;
    ui.status.dataset.runs = String(session.runCount);
    ui.status.dataset.busy = String(session.busy);
    ui.status.dataset.loaded = opened ? opened.threadId : "";
    let text;
    const detail = [];
    if (session.loading) {
      text = "Opening the thread…";
      detail.push(`${session.loading.events} stored event${session.loading.events === 1 ? "" : "s"}`);
    } else if (!run && opened) {
      text = opened.problem ? `Opened with a problem: ${opened.problem}` : "Thread opened";
      detail.push(`${opened.runs} run${opened.runs === 1 ? "" : "s"}`, `${opened.events} stored event${opened.events === 1 ? "" : "s"}`);
    } else if (!run) text = "Ready";
    else {
      const elapsed = (run.t1 ?? performance.now()) - run.t0;
      switch (status) {
        case "running": text = session.busy ? `Running… ${fmtMs(elapsed)}` : "Running"; break;
        case "finished": text = `Finished in ${fmtMs(elapsed)}`; break;
        case "interrupted": text = "Interrupted: waiting for your answer"; break;
        case "cancelled": text = run.error === "Stopped." ? "Stopped" : "Cancelled by the agent"; break;
        case "incomplete": text = `Ended early: ${run.error}`; break;
        case "error": text = `Error: ${run.error}`; break;
        default: text = status;
      }
      detail.push(`run ${run.n}`, `${run.eventCount} event${run.eventCount === 1 ? "" : "s"}`);
      const tokens = Array.isArray(run.usage) ? run.usage.reduce((n, u) => n + (Number(u?.totalTokens) || 0), 0) : 0;
      if (tokens) detail.push(`${tokens} tokens`);
      if (run.status === "finished" && run.toolTally) {
        const pending = Array.isArray(run.outcome?.pendingToolCallIds) && run.outcome.pendingToolCallIds.length
          ? run.outcome.pendingToolCallIds
          : run.toolTally.started.filter((id) => !run.toolTally.answered.has(id));
        if (pending.length) detail.push(`pending tool calls: ${pending.join(", ")}`);
      }
    }
    ui.statusText.textContent = text;
    ui.statusDetail.textContent = detail.join(" · ");
    ui.status.title = (session.loading ? "" : run?.error ?? opened?.problem) ?? "";
    if (session.busy && !ticker) ticker = setInterval(renderStatus, 250);
    if (!session.busy && ticker) {
      clearInterval(ticker);
      ticker = null;
    }
    // parent-agent steps
    const steps = session.steps.get("");
    ui.steps.replaceChildren(steps && steps.size ? renderStepChips(steps) : "");
    // composer
    ui.send.disabled = session.busy;
    ui.stop.title = session.loading ? "Stop opening the thread (what has arrived stays)" : "Stop the run";
    ui.stop.hidden = !session.busy;
    const pending = session.pendingInterrupts.length;
    ui.hint.textContent = pending && !session.busy ? `The agent is waiting for an answer to ${pending === 1 ? "an interrupt" : pending + " interrupts"}: use Approve or Deny.` : "";
    ui.thread.textContent = session.threadId.slice(0, 8);
    ui.thread.title = `thread ${session.threadId}${opened?.title ? "\n" + opened.title : ""}`;
    ui.thread.dataset.threadId = session.threadId;
  }

  // ---------------------------------------------------------------------------
  // Timeline
  // ---------------------------------------------------------------------------

  let selectedRow = null;
  function selectRow(row, title, value) {
    if (selectedRow) selectedRow.setAttribute("aria-selected", "false");
    selectedRow = row;
    row.setAttribute("aria-selected", "true");
    ui.eventJsonTitle.textContent = title;
    ui.eventJson.textContent = jsonText(value);
  }

  function timelineAppend(node) {
    const tl = ui.timeline;
    const follow = ui.followTimeline.checked;
    tl.append(node);
    if (follow) tl.scrollTop = tl.scrollHeight;
  }

  function timelineRunHeader(run, input) {
    const row = h("li", { class: "tl-run", testid: "timeline-run", "data-run-id": run.id },
      h("button", { type: "button", class: "tl-row", testid: "timeline-request", "aria-selected": "false" },
        h("span", { class: "tl-time" }, "+0 ms"),
        h("span", { class: "tl-type cat-request" }, input.resume ? "POST (resume)" : "POST"),
        h("span", { class: "tl-sum" }, `run ${run.n} · ${truncate(session.endpoint.replace(location.origin, ""), 40)}`)));
    row.firstChild.addEventListener("click", () => selectRow(row.firstChild, `request of run ${run.n} (RunAgentInput)`, input));
    timelineAppend(row);
  }

  function timelineNote(run, kind, text) {
    const t = performance.now() - run.t0;
    const row = h("li", null,
      h("button", { type: "button", class: `tl-row tl-${kind}`, testid: "timeline-note", "aria-selected": "false" },
        h("span", { class: "tl-time" }, `+${Math.round(t)} ms`),
        h("span", { class: "tl-type cat-error" }, kind),
        h("span", { class: "tl-sum" }, truncate(text, 120))));
    row.firstChild.addEventListener("click", () => selectRow(row.firstChild, kind, { error: text }));
    timelineAppend(row);
  }

  function summarize(ev) {
    const q = (s) => JSON.stringify(truncate(s, 48));
    switch (ev.type) {
      case "RUN_STARTED": return `run ${truncate(ev.runId, 12)}`;
      case "RUN_FINISHED": return isObject(ev.outcome) ? ev.outcome.type : "success";
      case "RUN_ERROR": return truncate(ev.message, 80);
      case "TEXT_MESSAGE_CONTENT": case "REASONING_MESSAGE_CONTENT": case "TOOL_CALL_ARGS": return q(ev.delta ?? "");
      case "TEXT_MESSAGE_CHUNK": case "REASONING_MESSAGE_CHUNK": return ev.delta !== undefined ? q(ev.delta) : ev.messageId ?? "";
      case "TOOL_CALL_CHUNK": return [ev.toolCallName, ev.delta !== undefined ? q(ev.delta) : null].filter(Boolean).join(" ");
      case "TOOL_CALL_START": return `${ev.toolCallName} (${ev.toolCallId})`;
      case "TOOL_CALL_RESULT": return typeof ev.content === "string" ? q(ev.content) : `${Array.isArray(ev.content) ? ev.content.length : 0} parts`;
      case "STATE_DELTA": return Array.isArray(ev.delta) ? ev.delta.map((o) => `${o?.op} ${o?.path}`).join(", ") : "";
      case "ACTIVITY_DELTA": return `${ev.activityType}: ` + (Array.isArray(ev.patch) ? ev.patch.map((o) => `${o?.op} ${o?.path}`).join(", ") : "");
      case "ACTIVITY_SNAPSHOT": return ev.activityType;
      case "MESSAGES_SNAPSHOT": return `${Array.isArray(ev.messages) ? ev.messages.length : 0} messages`;
      case "STEP_STARTED": case "STEP_FINISHED": return ev.stepName;
      case "SUBAGENT_STARTED": return `${ev.name} (${ev.subagentRunId})`;
      case "SUBAGENT_FINISHED": return `${ev.subagentRunId}${isObject(ev.outcome) ? " " + ev.outcome.type : ""}`;
      case "SUBAGENT_ERROR": return `${ev.subagentRunId}: ${truncate(ev.message, 60)}`;
      case "CUSTOM": return ev.name;
      case "RAW": return ev.source ?? "";
      case "REASONING_ENCRYPTED_VALUE": return `${ev.subtype} ${ev.entityId}`;
      default: return ev.messageId ?? ev.toolCallId ?? "";
    }
  }

  // A stored run of an opened thread: its events carry their sequence (#N), not a time.
  function timelineStoredRun(run, ev) {
    const input = ev.type === "RUN_STARTED" && isObject(ev.input) ? ev.input : null;
    const row = h("li", { class: "tl-run stored", testid: "timeline-run", "data-run-id": run.id, "data-stored": "true" },
      h("button", { type: "button", class: "tl-row", testid: "timeline-request", "aria-selected": "false", title: "A stored run: the thread's events as the server keeps them" },
        h("span", { class: "tl-time" }, run.firstSeq ? `#${run.firstSeq}` : ""),
        h("span", { class: "tl-type cat-request" }, input?.resume ? "STORED (resume)" : "STORED"),
        h("span", { class: "tl-sum" }, `run ${run.n} · ${truncate(run.id, 40)}`)));
    row.firstChild.addEventListener("click", () =>
      selectRow(row.firstChild, input ? `stored run ${run.n}: its input, as RUN_STARTED recorded it` : `stored run ${run.n}`, input ?? { runId: run.id }));
    timelineAppend(row);
  }

  function timelineEvent(timeLabel, ev, warnings) {
    const cat = category(ev.type);
    const btn = h("button", { type: "button", class: `tl-row${warnings.length ? " warn" : ""}`, testid: "timeline-event", "data-type": ev.type, "aria-selected": "false", title: warnings.join("\n") || undefined },
      h("span", { class: "tl-time" }, timeLabel),
      h("span", { class: `tl-type cat-${cat}` }, ev.type),
      h("span", { class: "tl-sum" },
        typeof ev.subagentRunId === "string" && !ev.type.startsWith("SUBAGENT_") ? h("span", { class: "tl-tag" }, ev.subagentRunId) : null,
        summarize(ev)),
      warnings.length ? h("span", { class: "tl-warn", "aria-label": "warning" }, "⚠") : null);
    btn.addEventListener("click", () => selectRow(btn, `${ev.type} · ${timeLabel}${warnings.length ? " · ⚠ " + warnings.join("; ") : ""}`, ev));
    timelineAppend(h("li", null, btn));
  }

  // ---------------------------------------------------------------------------
  // Threads: the list of stored threads (`GET P/threads`, P = the agent's path),
  // opening one (`GET P/threads/ID/connect` for the timeline, `GET P/threads/ID`
  // for the server's fold), deleting one (`DELETE P/threads/ID`). An agent without
  // these routes (another server, another origin) gets a note instead of a list.
  // ---------------------------------------------------------------------------

  const PAGE_SIZE = 25;
  const threads = {
    state: "unknown", // "unknown" (first page not in yet) | "ok" | "unavailable"
    items: [], // ThreadInfo objects, newest activity first, each thread once
    next: null, // the cursor of the next page, if there is one
    loading: false,
    again: false, // a refresh was asked for while a page was loading
    gen: 0, // bumped when the endpoint changes: answers for the old one are dropped
    note: "", // why there is no list
    error: "", // the last failed action (delete, load more)
  };

  function threadsUrl(suffix = "", query) {
    const u = new URL(session.endpoint, location.href);
    u.pathname = u.pathname.replace(/\/+$/, "") + "/threads" + suffix;
    u.search = query ? new URLSearchParams(query).toString() : "";
    u.hash = "";
    return u.href;
  }
  const threadPath = (id) => `/${encodeURIComponent(id)}`;

  // fetch with the token (for the console's own origin only, see authHeaders).
  function apiFetch(url, init = {}) {
    return fetch(url, { ...init, headers: { Accept: "application/json", ...(init.headers ?? {}), ...authHeaders(url) }, cache: "no-store" });
  }

  async function errorText(res) {
    let body = "";
    try {
      body = (await res.text()).trim();
      const j = JSON.parse(body);
      if (isObject(j) && typeof j.message === "string") body = j.message;
    } catch {}
    return `HTTP ${res.status}${body ? ": " + truncate(body, 200) : ""}`;
  }

  // Loads the first page again (as many threads as are listed, at least a page), or
  // with `more` the next page. Resolves to whether the agent has a thread list.
  async function loadThreads({ more = false } = {}) {
    if (threads.loading) {
      if (!more) threads.again = true;
      return threads.state === "ok";
    }
    if (more && !threads.next) return true;
    const gen = threads.gen;
    threads.loading = true;
    renderThreads();
    const listed = Math.ceil(threads.items.length / PAGE_SIZE) * PAGE_SIZE;
    const query = { limit: more ? PAGE_SIZE : Math.min(1000, Math.max(PAGE_SIZE, listed)) };
    if (more) query.cursor = threads.next;
    let outcome;
    try {
      const res = await apiFetch(threadsUrl("", query));
      if (res.status === 401) outcome = { unavailable: "Not signed in: open the console with the URL `agui serve` prints (the one with #token=…)." };
      else if (!res.ok) outcome = { unavailable: `No thread list for this agent (${await errorText(res)}).` };
      else {
        const body = await res.json();
        if (!isObject(body) || !Array.isArray(body.threads)) outcome = { unavailable: "No thread list for this agent (its answer is not a thread list)." };
        else {
          outcome = {
            page: body.threads.filter((t) => isObject(t) && typeof t.threadId === "string" && t.threadId !== ""),
            next: typeof body.nextCursor === "string" && body.nextCursor !== "" ? body.nextCursor : null,
          };
        }
      }
    } catch {
      outcome = { unavailable: "No thread list for this agent." };
    }
    if (gen !== threads.gen) return false; // the endpoint changed meanwhile
    threads.loading = false;
    if (outcome.unavailable) {
      if (more && threads.state === "ok") threads.error = `Cannot load more: ${outcome.unavailable}`;
      else Object.assign(threads, { state: "unavailable", note: outcome.unavailable, items: [], next: null });
    } else {
      const seen = new Set(more ? threads.items.map((t) => t.threadId) : []);
      const fresh = outcome.page.filter((t) => !seen.has(t.threadId) && seen.add(t.threadId));
      threads.items = more ? threads.items.concat(fresh) : fresh;
      threads.next = outcome.next;
      threads.state = "ok";
      if (!more) threads.error = "";
    }
    renderThreads();
    if (threads.again) {
      threads.again = false;
      loadThreads();
    }
    return threads.state === "ok";
  }

  function resetThreads() {
    Object.assign(threads, { state: "unknown", items: [], next: null, loading: false, again: false, note: "", error: "" });
    threads.gen++;
    threadNodes.clear();
    threadsView.shownAnyway = false;
  }

  function fmtAgo(ms) {
    if (typeof ms !== "number" || !(ms > 0)) return "";
    const s = (Date.now() - ms) / 1000;
    if (s < 45) return "just now";
    if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
    if (s < 86400) return `${Math.round(s / 3600)} h ago`;
    if (s < 7 * 86400) return `${Math.round(s / 86400)} d ago`;
    return new Date(ms).toLocaleDateString();
  }

  function threadItem(t, current) {
    const title = typeof t.title === "string" && t.title !== "" ? t.title : null;
    const runs = Number(t.runCount) || 0;
    const status = typeof t.lastStatus === "string" ? t.lastStatus : "new";
    const when = Number(t.updatedMs) || 0;
    const label = title ?? `thread ${t.threadId.slice(0, 8)}`;
    return h("li", { class: "thread-item", testid: "thread-item", "data-thread-id": t.threadId, "data-status": status, "aria-current": current ? "true" : undefined },
      h("button", { type: "button", class: "thread-open", testid: "thread-open", title: `${label}\nthread ${t.threadId}`, onclick: () => openThread(t.threadId) },
        h("span", { class: `thread-title${title ? "" : " untitled"}`, testid: "thread-title" }, label),
        h("span", { class: "thread-meta" },
          h("span", { class: `pill ${status}`, testid: "thread-status" }, status),
          h("span", { testid: "thread-runs" }, `${runs} run${runs === 1 ? "" : "s"}`),
          when ? h("time", { datetime: new Date(when).toISOString(), title: new Date(when).toLocaleString() }, fmtAgo(when)) : null)),
      h("button", { type: "button", class: "thread-delete", testid: "thread-delete", title: "Delete this thread", "aria-label": `Delete the thread ${label}`, onclick: () => deleteThread(t) }, "✕"));
  }

  // The pane shows when the user wants it (remembered for this browser); for an agent
  // without a thread list it folds away unless the user opens it to read why.
  const threadsView = { wanted: true, shownAnyway: false };
  function applyThreadsView() {
    const unavailable = threads.state === "unavailable";
    const show = unavailable ? threadsView.shownAnyway : threadsView.wanted;
    ui.threadsPane.hidden = !show;
    ui.layout.classList.toggle("threads-hidden", !show);
    ui.threadsToggle.setAttribute("aria-expanded", String(show));
    ui.threadsToggle.title = unavailable ? threads.note : show ? "Hide the thread list" : "Show the thread list";
  }

  const threadNodes = new Map(); // threadId -> {sig, node}
  function renderThreads() {
    applyThreadsView();
    const ok = threads.state === "ok";
    ui.threadsPane.dataset.state = threads.state;
    ui.threadsPane.setAttribute("aria-busy", String(threads.loading));
    const note = threads.state === "unavailable" ? threads.note
      : threads.state === "unknown" ? "Loading the threads…"
      : threads.items.length === 0 ? "No threads yet: send a message to start one." : "";
    ui.threadsNote.textContent = note;
    ui.threadsNote.hidden = note === "";
    ui.threadsError.textContent = threads.error;
    ui.threadsError.hidden = threads.error === "";
    const nodes = [];
    const seen = new Set();
    for (const t of ok ? threads.items : []) {
      const current = t.threadId === session.threadId;
      const sig = JSON.stringify([t, current, fmtAgo(t.updatedMs)]);
      let c = threadNodes.get(t.threadId);
      if (!c || c.sig !== sig) {
        c = { sig, node: threadItem(t, current) };
        threadNodes.set(t.threadId, c);
      }
      seen.add(t.threadId);
      nodes.push(c.node);
    }
    for (const id of [...threadNodes.keys()]) if (!seen.has(id)) threadNodes.delete(id);
    const list = ui.threadList;
    const wanted = new Set(nodes);
    for (const child of [...list.children]) if (!wanted.has(child)) child.remove();
    let ref = list.firstChild;
    for (const n of nodes) {
      if (n === ref) ref = ref.nextSibling;
      else list.insertBefore(n, ref);
    }
    ui.threadsMore.hidden = !(ok && threads.next);
    ui.threadsMore.disabled = threads.loading;
    ui.threadsMore.textContent = threads.loading && threads.next ? "Loading…" : "Load more";
  }

  // Puts the open thread in the address (#thread=ID), so a reload opens it again.
  function setUrlThread(id) {
    const url = new URL(location.href);
    const frag = new URLSearchParams(url.hash.slice(1));
    if (id) frag.set("thread", id);
    else frag.delete("thread");
    url.hash = frag.toString();
    if (url.href !== location.href) history.replaceState(null, "", url);
  }

  // Empties the chat, state and timeline for `threadId`; whatever was in flight is
  // aborted and its late events are dropped (see session.epoch).
  function resetSession(threadId) {
    session.controller?.abort();
    session.epoch++;
    Object.assign(session, {
      threadId, messages: [], state: {}, pendingInterrupts: [], notes: [],
      run: null, runNumber: 0, busy: false, controller: null, loading: null, opened: null,
    });
    session.subagents.clear();
    session.steps.clear();
    session.lanes.clear();
    for (const k of Object.keys(session.open)) session.open[k].clear();
    blockCache.clear();
    stateDrawn = -1; // draw the next state without flashing what "changed"
    ui.timeline.replaceChildren();
    selectedRow = null;
    ui.eventJson.textContent = "";
    ui.eventJsonTitle.textContent = "Click an event to see its JSON.";
    scheduleRender();
    renderThreads();
  }

  // A resume stored in a RUN_STARTED answers the interrupt card before it.
  function markAnswered(resume, runId) {
    const note = [...session.notes].reverse().find((n) => n.kind === "interrupt" && n.status === "pending");
    if (!note) return;
    note.status = resume.length > 0 && resume.every((r) => isObject(r) && r.status === "resolved") ? "approved" : "denied";
    note.answeredBy = runId;
  }

  function replayFrame(load, payload, seq) {
    const ev = parseFrame(payload, `stored event ${seq || load.events + 1}`);
    load.events++;
    if (ev.type === "RUN_STARTED" || !session.run) {
      session.run = newRun(typeof ev.runId === "string" && ev.runId !== "" ? ev.runId : `stored-${seq}`, load.controller, { stored: true, firstSeq: seq });
      timelineStoredRun(session.run, ev);
      if (ev.type === "RUN_STARTED" && Array.isArray(ev.input?.resume)) markAnswered(ev.input.resume, session.run.id);
    }
    ingest(session.run, ev, seq ? `#${seq}` : "stored");
  }

  // Opens a stored thread: its events through the console's reducer (timeline, chat
  // as it was streamed), then the server's fold of it (messages, state and open
  // interrupts) as the word that counts. A run still in progress streams live.
  async function openThread(threadId) {
    resetSession(threadId);
    const epoch = session.epoch;
    const live = () => epoch === session.epoch;
    const controller = new AbortController();
    const load = { threadId, events: 0, controller };
    Object.assign(session, { busy: true, controller, loading: load });
    setUrlThread(threadId);
    scheduleRender();
    let problem = null;
    let gone = false;
    try {
      const res = await apiFetch(threadsUrl(threadPath(threadId) + "/connect"), { headers: { Accept: "text/event-stream" }, signal: controller.signal });
      if (res.status === 404) gone = true;
      else if (!res.ok) problem = `its events: ${await errorText(res)}`;
      else await readSse(res, (payload, seq) => {
        if (live()) replayFrame(load, payload, seq);
      });
    } catch (e) {
      if (!live()) return;
      problem = e && e.name === "AbortError" ? "stopped before all events arrived" : `its events: ${e?.message ?? e}`;
    }
    if (!live()) return;
    let folded = null;
    if (!gone) {
      try {
        const res = await apiFetch(threadsUrl(threadPath(threadId)));
        if (res.status === 404) gone = true;
        else if (!res.ok) problem ??= `its messages: ${await errorText(res)}`;
        else folded = await res.json();
      } catch (e) {
        problem ??= `its messages: ${e?.message ?? e}`;
      }
    }
    if (!live()) return;
    if (gone) {
      resetSession(uuid());
      setUrlThread(null);
      threads.error = `Thread ${threadId} is not on the server (deleted?).`;
      loadThreads();
      return;
    }
    if (isObject(folded)) {
      if (Array.isArray(folded.messages)) applyMessagesSnapshot({ messages: folded.messages });
      if (hasOwn(folded, "state")) session.state = clone(folded.state) ?? {};
      const pending = Array.isArray(folded.pendingInterrupts) ? folded.pendingInterrupts.filter(isObject).map(stripNullTag) : [];
      session.pendingInterrupts = pending;
      const open = new Set(pending.map((i) => i.id));
      let shown = false;
      for (const note of session.notes) {
        if (note.kind !== "interrupt" || note.status !== "pending") continue;
        if (note.interrupts.some((i) => open.has(i.id))) shown = true;
        else note.status = "closed";
      }
      if (pending.length && !shown) session.notes.push({ kind: "interrupt", key: `interrupt-open-${threadId}`, ...anchorHere(), interrupts: pending, status: "pending" });
    }
    const runs = isObject(folded) && Array.isArray(folded.runs) ? folded.runs.length : session.runNumber;
    session.runNumber = Math.max(session.runNumber, runs);
    const title = isObject(folded) && typeof folded.title === "string" ? folded.title : null;
    Object.assign(session, { busy: false, controller: null, loading: null, run: null, opened: { threadId, title, runs, events: load.events, problem } });
    session.lanes.clear();
    for (const k of Object.keys(session.open)) session.open[k].clear();
    scheduleRender();
    renderThreads();
  }

  async function deleteThread(t) {
    const label = typeof t.title === "string" && t.title !== "" ? `“${truncate(t.title, 80)}”` : t.threadId;
    if (!confirm(`Delete the thread ${label}?\n\nIts messages and events are removed from the server. This cannot be undone.`)) return;
    threads.error = "";
    let res;
    try {
      res = await apiFetch(threadsUrl(threadPath(t.threadId)), { method: "DELETE" });
    } catch (e) {
      threads.error = `Cannot delete the thread: ${e?.message ?? e}`;
      renderThreads();
      return;
    }
    if (res.ok || res.status === 404) {
      threads.items = threads.items.filter((x) => x.threadId !== t.threadId);
      if (t.threadId === session.threadId) {
        resetSession(uuid());
        setUrlThread(null);
      }
    } else if (res.status === 409) threads.error = "That thread has a run in progress: delete it once the run has ended.";
    else threads.error = `Cannot delete the thread: ${await errorText(res)}`;
    renderThreads();
    loadThreads();
  }

  // ---------------------------------------------------------------------------
  // Wiring
  // ---------------------------------------------------------------------------

  function send() {
    const text = ui.input.value;
    if (session.busy || text.trim() === "") return;
    if (session.pendingInterrupts.length) {
      renderStatus();
      ui.hint.classList.remove("nudge");
      void ui.hint.offsetWidth;
      ui.hint.classList.add("nudge");
      return;
    }
    ui.input.value = "";
    startRun({ text });
  }

  document.getElementById("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    send();
  });
  ui.input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  ui.stop.addEventListener("click", () => session.controller?.abort());
  ui.newThread.addEventListener("click", () => {
    resetSession(uuid());
    setUrlThread(null);
    ui.input.focus();
  });

  // Points the console at another agent endpoint (kept in the address as ?agent=) and
  // loads that agent's thread list.
  function setEndpoint(v) {
    session.endpoint = resolveEndpoint(v);
    ui.endpoint.value = session.endpoint;
    const url = new URL(location.href);
    if (session.endpoint === resolveEndpoint("/agent")) url.searchParams.delete("agent");
    else url.searchParams.set("agent", v);
    history.replaceState(null, "", url);
    resetThreads();
    renderThreads();
    loadThreads();
    renderPicker();
  }

  ui.endpoint.value = session.endpoint;
  ui.endpointForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const v = ui.endpoint.value.trim();
    if (v) setEndpoint(v);
  });

  // The agent picker: `agui serve` lists the agents it serves at GET /agents
  // ({"agents":[{name, path, kind, upstream?}]}), on the console's own origin (so the
  // token goes along). With more than one, a <select> switches between them; another
  // server (no /agents, or not signed in) or a single agent leaves it hidden.
  const agents = { list: [] };
  async function loadAgents() {
    let list = [];
    try {
      const res = await apiFetch(new URL("/agents", location.href).href);
      if (res.ok) {
        const body = await res.json();
        if (isObject(body) && Array.isArray(body.agents)) {
          // Only paths on this origin: the picker never leads the token elsewhere.
          const here = (p) => {
            try {
              return p.startsWith("/") && new URL(p, location.href).origin === location.origin;
            } catch {
              return false;
            }
          };
          list = body.agents.filter((a) => isObject(a) && typeof a.name === "string" && typeof a.path === "string" && here(a.path));
        }
      }
    } catch {}
    agents.list = list;
    ui.agentPick.dataset.agents = String(list.length); // the listing is in (tests wait for it)
    renderPicker();
  }
  function renderPicker() {
    const show = agents.list.length > 1;
    ui.agentPick.hidden = !show;
    if (!show) return;
    const options = agents.list.map((a) => {
      const kind = typeof a.kind === "string" ? a.kind : "";
      const title = [`POST ${a.path}`, kind, typeof a.upstream === "string" ? a.upstream : ""].filter(Boolean).join(" · ");
      return h("option", { value: a.path, title, "data-kind": kind }, kind ? `${a.name} (${kind})` : a.name);
    });
    const current = agents.list.find((a) => resolveEndpoint(a.path) === session.endpoint);
    if (!current) options.unshift(h("option", { value: "", disabled: true }, "other endpoint"));
    ui.agentPicker.replaceChildren(...options);
    ui.agentPicker.value = current ? current.path : "";
  }
  ui.agentPicker.addEventListener("change", () => {
    const a = agents.list.find((x) => x.path === ui.agentPicker.value);
    if (!a) return;
    resetSession(uuid());
    setUrlThread(null);
    setEndpoint(a.path);
    ui.input.focus();
  });

  ui.threadsRefresh.addEventListener("click", () => loadThreads());
  ui.threadsMore.addEventListener("click", () => loadThreads({ more: true }));
  setInterval(() => {
    if (threads.items.length) renderThreads(); // relative times
  }, 30000);

  ui.threadsToggle.addEventListener("click", () => {
    const show = ui.threadsPane.hidden;
    if (threads.state === "unavailable") threadsView.shownAnyway = show;
    else {
      threadsView.wanted = show;
      try {
        localStorage.setItem("agui-threads-hidden", show ? "0" : "1");
      } catch {}
    }
    applyThreadsView();
  });
  try {
    if (localStorage.getItem("agui-threads-hidden") === "1") threadsView.wanted = false;
  } catch {}

  document.getElementById("state-view-toggle").addEventListener("change", (e) => {
    const raw = e.currentTarget.checked;
    ui.stateTree.hidden = raw;
    ui.stateRaw.hidden = !raw;
  });

  for (const btn of ui.tryList.querySelectorAll("button[data-prompt]")) {
    btn.addEventListener("click", () => {
      if (session.busy) return;
      ui.input.value = btn.dataset.prompt;
      send();
    });
  }
  if (agentParam) ui.tryPanel.open = false; // inspecting someone else's agent

  // For debugging from the devtools console.
  window.aguiConsole = { session, threads, applyPatch, SseParser };

  scheduleRender();
  renderThreads();
  ui.input.focus();
  // The thread list; then the thread named in the address (#thread=ID), if any.
  loadAgents();
  const initialThread = new URLSearchParams(location.hash.slice(1)).get("thread");
  loadThreads().then((ok) => {
    if (!initialThread) return;
    if (ok && session.runNumber === 0 && !session.busy) openThread(initialThread);
    else if (!ok) setUrlThread(null);
  });
})();
