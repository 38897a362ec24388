// Rendering of a conversation (chat) and of JSON trees (browser only). The chat is drawn
// from a "view": the live Fold, or in time travel the fold as it was right after an event.

import { h } from "./dom.js";
import { isObject, truncate, jsonText, escapeToken } from "./util.js";
import { ACTIVITY_TYPE as A2UI_ACTIVITY } from "./a2ui.js";
import { renderA2uiActivity, resetSurfaces } from "./a2ui-view.js";

/** UI open/closed choices (details, tree nodes), kept across redraws: key -> boolean. */
export const expanded = new Map();

/** Whether an interrupt has expired (its expiresAt is past). */
export function isExpired(i) {
  if (typeof i.expiresAt !== "string") return false;
  return Date.parse(i.expiresAt) <= Date.now();
}

// The view and context being drawn (set by renderChatInto; drawing is synchronous).
let view = null;
let ctx = { busy: false, readOnly: false, onAnswer: () => {}, onEdit: null };

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
  for (const m of view.messages) if (m.role === "tool" && typeof m.toolCallId === "string" && !map.has(m.toolCallId)) map.set(m.toolCallId, m);
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
  const streaming = view.open.tool.has(tc.id);
  const status = result ? (result.error !== undefined ? "error" : "done") : streaming ? "streaming" : "called";
  const label = { streaming: "streaming arguments…", called: "waiting for result", done: "done", error: "failed" }[status];
  // A call whose arguments are drawn as an A2UI surface (the middleware's convention: the
  // activity `a2ui-surface-<call id>`) keeps its JSON folded: the surface shows it.
  const surface = view.messages.some((m) => m.role === "activity" && m.activityType === A2UI_ACTIVITY && m.id === `a2ui-surface-${tc.id}`);
  const body = [
    h("div", { class: "card-label" }, "arguments"),
    h("pre", { class: "json args", testid: "tool-call-args" }, streaming ? tc.function?.arguments ?? "" : prettyArgs(tc.function?.arguments ?? "")),
    result
      ? [h("div", { class: "card-label" }, result.error !== undefined ? "result (error)" : "result"),
        h("div", { class: "result", testid: "tool-call-result" }, renderResult(result.content), result.error !== undefined ? h("div", { class: "error-text" }, result.error) : null)]
      : null,
  ];
  const key = `tool:${tc.id}`;
  return h("div", { class: `tool-call status-${status}${surface ? " drawn" : ""}`, testid: "tool-call", "data-tool-call-id": tc.id, "data-status": status },
    h("div", { class: "card-head" },
      h("span", { class: "icon", "aria-hidden": "true" }, "⚙"),
      h("span", { class: "tool-name", testid: "tool-call-name" }, tc.function?.name ?? "?"),
      h("span", { class: `pill ${status}` }, label),
      surface ? h("span", { class: "tool-drawn" }, "drawn as the interface below") : null,
      tc.encryptedValue !== undefined ? h("span", { class: "badge lock" }, "encrypted") : null),
    surface
      ? h("details", { class: "tool-json", open: expanded.get(key) ?? false, "data-key": key, ontoggle: rememberToggle }, h("summary", null, "arguments and result"), body)
      : body);
}

function renderMessage(m, results, renderedCalls) {
  const streaming = (m.role === "reasoning" ? view.open.reasoning : view.open.text).has(m.id);
  const base = { "data-message-id": m.id, "data-role": m.role, "data-streaming": String(streaming) };
  switch (m.role) {
    case "user":
      return h("div", { ...base, class: "msg user", testid: "message-user" },
        h("div", { class: "who" }, m.name ?? "you", tagBadge(m)),
        renderContent(m.content),
        !ctx.readOnly && ctx.onEdit && typeof textOf(m.content) === "string"
          ? h("button", { type: "button", class: "msg-edit", testid: "edit-message", title: "Edit this message and send it again, in a new thread forked from before it", onclick: () => ctx.onEdit(m) }, "Edit")
          : null);
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
      return m.activityType === A2UI_ACTIVITY ? renderA2uiActivity(m, base, ctx, { jsonTree }) : renderActivity(m, base);
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
    pending && !ctx.readOnly
      ? h("div", { class: "actions" },
        h("button", { type: "button", class: "btn primary", testid: "approve", disabled: ctx.busy, onclick: () => ctx.onAnswer(true) }, "Approve"),
        h("button", { type: "button", class: "btn danger", testid: "deny", disabled: ctx.busy, onclick: () => ctx.onAnswer(false) }, "Deny"))
      : null);
}

function renderErrorNote(note) {
  return h("div", { class: "card run-error", testid: "run-error", role: "alert" },
    h("div", { class: "card-head" }, h("span", { class: "icon", "aria-hidden": "true" }, "!"), h("span", null, "Run failed")),
    h("div", { class: "error-text" }, note.message + (note.code ? ` (${note.code})` : "")));
}

function renderSubagent(sa, members, children, results, renderedCalls) {
  const steps = view.steps.get(sa.id);
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

export function renderStepChips(steps) {
  return h("div", { class: "step-chips" },
    [...steps].map(([name, st]) => h("span", { class: `chip ${st}`, testid: "step", "data-status": st }, st === "running" ? "● " : "✓ ", name)));
}

// Builds the chat's top-level blocks in order, each with a stable key.
function chatBlocks() {
  const results = resultsByCall();
  const renderedCalls = new Set();
  // Subagent groups: known ones plus ids seen only as message tags.
  const groups = new Map();
  for (const sa of view.subagents.values()) groups.set(sa.id, { sa, members: [], children: [] });
  view.messages.forEach((m, i) => {
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
  for (const m of view.messages) if (m.role === "assistant" && Array.isArray(m.toolCalls)) for (const c of m.toolCalls) renderedCalls.add(c.id);

  const blocks = [];
  const emitted = new Set();
  const buildGroup = (g, depth = 0) => {
    emitted.add(g.sa.id);
    const kids = g.children.map((c) => buildGroup(c, depth + 1));
    return renderSubagent(g.sa, g.members, kids, results, new Set(renderedCalls));
  };
  const emitGroup = (g) => {
    if (emitted.has(g.sa.id)) return;
    const surfaces = g.members.some((m) => m.role === "activity" && m.activityType === A2UI_ACTIVITY) ? [ctx.busy, ctx.readOnly, Boolean(ctx.travel)] : null;
    const sig = JSON.stringify([g.sa, g.members, collectGroupSig(g, results), surfaces]);
    blocks.push({ key: `subagent:${g.sa.id}`, sig, build: () => buildGroup(g) });
    emitted.add(g.sa.id);
  };
  const emittedNotes = new Set();
  const emitNote = (note) => {
    if (emittedNotes.has(note)) return;
    emittedNotes.add(note);
    blocks.push({ key: note.key, sig: JSON.stringify([note.status, note.retry, ctx.busy, ctx.readOnly]), build: () => (note.kind === "interrupt" ? renderInterruptNote(note) : renderErrorNote(note)) });
  };
  // Notes and announced subagents sit after the message that was last when
  // they appeared (in the order they appeared); a group whose first message
  // comes earlier shows up there instead.
  const anchored = [
    ...view.notes.map((note) => ({ after: note.after, seq: note.seq, emit: () => emitNote(note) })),
    ...[...groups.values()].filter((g) => topLevel(g) && g.sa.seq !== undefined).map((g) => ({ after: g.sa.after, seq: g.sa.seq, emit: () => emitGroup(g) })),
  ].sort((a, b) => a.seq - b.seq);
  const emitAfter = (id) => {
    for (const a of anchored) if (a.after === id) a.emit();
  };

  emitAfter(null);
  view.messages.forEach((m, i) => {
    if (typeof m.subagentRunId === "string") {
      let g = groups.get(m.subagentRunId);
      while (g.up) g = g.up;
      emitGroup(g);
    } else if (!(m.role === "tool" && renderedCalls.has(m.toolCallId))) {
      const streaming = (m.role === "reasoning" ? view.open.reasoning : view.open.text).has(m.id);
      const extra = m.role === "assistant" && Array.isArray(m.toolCalls) ? m.toolCalls.map((c) => [results.get(c.id), view.open.tool.has(c.id)]) : null;
      // A2UI surfaces draw their buttons and inputs for the context (busy, read-only, time travel).
      const surface = m.role === "activity" && m.activityType === A2UI_ACTIVITY ? [ctx.busy, ctx.readOnly, Boolean(ctx.travel)] : null;
      blocks.push({ key: `msg:${m.id}:${i}`, sig: JSON.stringify([m, streaming, extra, surface, m.role === "user" && !ctx.readOnly && Boolean(ctx.onEdit)]), build: () => renderMessage(m, results, new Set(renderedCalls)) });
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
    parts.push(x.sa, view.steps.has(x.sa.id) ? [...view.steps.get(x.sa.id)] : null);
    for (const m of x.members) {
      if (Array.isArray(m.toolCalls)) for (const c of m.toolCalls) parts.push([c.id, results.get(c.id), view.open.tool.has(c.id)]);
      if (view.open.text.has(m.id) || view.open.reasoning.has(m.id)) parts.push(m.id);
    }
    for (const c of x.children) walk(c);
  };
  walk(g);
  return parts;
}

const blockCache = new Map(); // key -> {sig, node}

/** Forgets the chat's cached blocks (a new thread, or another view). */
export function clearChatCache() {
  blockCache.clear();
  resetSurfaces();
}

/**
 * Draws the conversation `v` (a Fold: messages, subagents, steps, notes, open streams)
 * into `chat` (whose first child `empty` is the placeholder shown when there is nothing).
 * `c`: {busy, readOnly, travel, onAnswer(approved), onA2uiAction(userAction, forwardedProps),
 * onEdit(message), stick}; readOnly leaves out the interrupt buttons and the edit buttons and
 * disables A2UI actions (a conversation as it was, in time travel or a recording); travel
 * also freezes A2UI inputs; `stick` keeps the last message in view (else it stays in view
 * only when it was). Returns whether anything was added or changed.
 */
export function renderChatInto(chat, empty, v, c) {
  view = v;
  ctx = c;
  const blocks = chatBlocks();
  const wasAtBottom = chat.scrollHeight - chat.scrollTop - chat.clientHeight < 40;
  const seen = new Set();
  const nodes = [];
  let changed = false;
  for (const b of blocks) {
    seen.add(b.key);
    let c = blockCache.get(b.key);
    if (!c || c.sig !== b.sig) {
      changed = true;
      const node = b.build();
      if (!node) continue;
      c = { sig: b.sig, node };
      blockCache.set(b.key, c);
    }
    nodes.push(c.node);
  }
  for (const k of [...blockCache.keys()]) if (!seen.has(k)) blockCache.delete(k);
  // Reconcile children without touching nodes that are already in place.
  const list = chat;
  const wanted = new Set(nodes);
  for (const child of [...list.children]) if (child !== empty && !wanted.has(child)) child.remove();
  let ref = empty.nextSibling;
  for (const n of nodes) {
    if (n === ref) ref = ref.nextSibling;
    else list.insertBefore(n, ref);
  }
  empty.hidden = nodes.length > 0;
  if (wasAtBottom || c.stick) chat.scrollTop = chat.scrollHeight;
  return changed;
}


/**
 * A collapsible tree of a JSON value. `changed`: a Set of paths to flash (what just
 * changed), or a Map path -> "added" | "changed" to mark persistently (a diff).
 */
export function jsonTree(value, { id, changed = new Set(), testid } = {}) {
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
  const flash = !changed.has(path) ? "" : changed instanceof Map ? ` diff-${changed.get(path)}` : " flash";
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
