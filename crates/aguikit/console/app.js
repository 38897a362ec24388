// agui console: a one-page AG-UI client, inspector and debugger.
//
// It POSTs a RunAgentInput to an AG-UI endpoint (default: /agent on this origin, or
// ?agent=URL), reads the Server-Sent Events answer incrementally, folds the events into
// messages and state the way the reference client (@ag-ui/client 1.0) does, and renders
// the result: chat, tool calls, state, activities, reasoning, subagents, interrupts and an
// event timeline. Where the agent offers agui serve's thread routes, a thread list opens,
// continues and deletes stored threads; where the console's own origin lists several
// agents (GET /agents), a picker switches between them.
//
// The debugger: selecting an event shows the conversation, state and pending interrupts as
// they were right after it and the state change it made (time travel); violations of the
// verification rules are marked where they happen (the Rust engine of agui serve verifies,
// POST /api/inspect); recordings open offline (file picker or drag and drop); a thread
// exports as JSON Lines, SSE or HAR (redacted by default, by an allowlist); any finished run
// can be forked, and a user message edited and sent again as a fork; two runs compare
// side by side; each run's latency shows in the inspector; threads are searched, renamed
// and show where they were forked from; the panes resize.
//
// ES modules, no dependencies, no build step, no network access other than the agent
// endpoint and the console's own origin: the files are embedded as they are in the agui
// binary. The engine modules (sse.js, patch.js, expand.js, fold.js, events.js, util.js,
// redact.js, recording.js) are pure and run under Node against the conformance corpus
// (test/corpus.test.mjs).

import { isObject, clone, truncate, uuid } from "./util.js";
import { SseParser } from "./sse.js";
import { applyPatch, diff } from "./patch.js";
import { Fold, History, stripNullTag } from "./fold.js";
import { redactEvent, redactInput } from "./redact.js";
import { parseRecording, toJsonLines, toSse, toHar } from "./recording.js";
import { h, reconcile, fmtMs, fmtAgo } from "./dom.js";
import { renderChatInto, clearChatCache, jsonTree, renderStepChips, isExpired } from "./render.js";
import { Timeline } from "./timeline.js";
import { Inspector } from "./inspector.js";
import { Layout } from "./layout.js";
import { Finder } from "./find.js";
import { compareEvents } from "./compare.js";
import { latency } from "./latency.js";
import { renderLatency, renderCompare, renderCapabilities } from "./views.js";
import { RunFailure, authHeaders, apiFetch, errorText, readSse, inspectRemotely } from "./api.js";

const params = new URLSearchParams(location.search);
const agentParam = params.get("agent");
const $ = (id) => document.getElementById(id);

function resolveEndpoint(s) {
  try {
    return new URL(s, location.href).href;
  } catch {
    return s;
  }
}

// ---------------------------------------------------------------------------
// Session model
// ---------------------------------------------------------------------------

const session = {
  endpoint: resolveEndpoint(agentParam || "/agent"),
  threadId: uuid(),
  fold: new Fold(), // messages, state, interrupts, subagents, steps, notes, open streams
  history: new History(), // every event folded, with checkpoints: time travel
  run: null, // the run in flight (or the last one)
  runCount: 0, // runs started from this page (all threads)
  runNumber: 0, // runs of this thread, stored ones included (labels "run N")
  busy: false,
  controller: null, // aborts what is in flight: a run, or the opening of a thread
  epoch: 0, // bumped when the session switches threads: late work of the old one is dropped
  loading: null, // {threadId, events} while a stored thread is being opened
  opened: null, // {threadId, title, runs, events, problem} once a stored thread is open
  recording: null, // {name, format, events, runs, violations, verified, note} once a recording is open
  forkedFrom: null, // {threadId, run, runId, title, messages, edited, recording, firstText, marked} after "Fork" or "Edit"
  title: null, // the open thread's title (as the server has it), null before it has one
  forkOf: null, // {threadId, runId}: where the open thread was forked from, as the server has it
  editing: null, // {id, text}: the user message being edited (sent again as a fork)
  stick: true, // keep the last message in view (off once the reader scrolls up)
  pinned: null, // {key, epoch, label, events, messages, state}: the run pinned for comparison (kept across threads)
  travel: null, // {index, before, after} while an event is selected (time travel)
};

// ---------------------------------------------------------------------------
// UI elements
// ---------------------------------------------------------------------------

const ui = {
  chat: $("chat"),
  empty: $("chat-empty"),
  status: $("run-status"),
  statusText: $("run-status-text"),
  statusDetail: $("run-status-detail"),
  steps: $("steps"),
  stateTree: $("state-tree"),
  stateRaw: $("state-raw"),
  stateAt: $("state-at"),
  timeline: $("timeline"),
  input: $("input"),
  send: $("send"),
  stop: $("stop"),
  hint: $("composer-hint"),
  endpointForm: $("endpoint-form"),
  endpoint: $("endpoint"),
  agentPick: $("agent-pick"),
  agentPicker: $("agent-picker"),
  thread: $("thread-id"),
  newThread: $("new-thread"),
  tryList: $("try-list"),
  tryPanel: $("try"),
  followTimeline: $("follow-timeline"),
  layout: $("layout"),
  threadsToggle: $("threads-toggle"),
  threadsPane: $("threads-pane"),
  threadsRefresh: $("threads-refresh"),
  threadsNote: $("threads-note"),
  threadsError: $("threads-error"),
  threadList: $("thread-list"),
  threadsMore: $("threads-more"),
  recordingFile: $("recording-file"),
  recordingBanner: $("recording-banner"),
  forkBanner: $("fork-banner"),
  travelBanner: $("time-travel"),
  travelText: $("time-travel-text"),
  backToLive: $("back-to-live"),
  exportMenu: $("export"),
  exportRedact: $("export-redact"),
  exportDownload: $("export-download"),
  dropZone: $("drop-zone"),
  side: $("side"),
  timelinePanel: $("timeline-panel"),
  threadsSearch: $("threads-search"),
  chatTitle: $("chat-title"),
  renameCurrent: $("rename-current"),
  chatLineage: $("chat-lineage"),
  jumpLatest: $("jump-latest"),
  editBar: $("edit-bar"),
  editText: $("edit-text"),
  editCancel: $("edit-cancel"),
  compare: $("compare"),
  compareBody: $("compare-body"),
  compareSub: $("compare-sub"),
  compareClose: $("compare-close"),
  compareBanner: $("compare-banner"),
  compareBannerText: $("compare-banner-text"),
  compareClear: $("compare-clear"),
  latency: $("latency"),
  caps: $("caps"),
  capsMenu: $("caps-menu"),
  capsLabel: $("caps-label"),
};

const inspector = new Inspector({
  root: $("inspector"),
  tabs: $("inspector-tabs"),
  violation: $("violation"),
  title: $("event-json-title"),
  json: $("event-json"),
  diff: $("state-diff"),
  messages: $("tt-messages"),
  interrupts: $("tt-interrupts"),
  eventPanel: $("panel-event"),
  diffPanel: $("panel-diff"),
  messagesPanel: $("panel-messages"),
  interruptsPanel: $("panel-interrupts"),
  latencyPanel: $("panel-latency"),
});
inspector.onShow = (tab) => {
  if (tab === "latency") drawLatency(true);
};

const timeline = new Timeline({
  list: ui.timeline,
  toolbar: $("timeline-tools"),
  follow: () => ui.followTimeline.checked && !session.travel,
  onSelect: (e) => travelTo(e),
  onSelectRun: (g) => {
    leaveTravel();
    const n = g.run?.n ?? "?";
    if (g.kind === "live") inspector.showValue(`request of run ${n} (RunAgentInput)`, g.input);
    else if (g.input) inspector.showValue(`${g.kind} run ${n}: its input, as RUN_STARTED recorded it`, g.input);
    else inspector.showValue(`${g.kind} run ${n}`, { runId: g.run?.id });
  },
  onSelectNote: (n) => {
    leaveTravel();
    inspector.showValue(n.kind, { error: n.text });
  },
  onFork: (g) => fork(g),
  onCompare: (g) => compareRun(g),
  isPinned: (g) => Boolean(session.pinned && session.pinned.epoch === session.epoch && session.pinned.key === g.key),
  onVerify: () => verifyRuns(timeline.groups.map((g) => g.run).filter(Boolean)),
  requestLabel: (g) => (g.kind === "live" ? session.endpoint.replace(location.origin, "") : g.run?.id ?? ""),
});

const finder = new Finder({ chat: ui.chat, input: $("find-input"), count: $("find-count"), prev: $("find-prev"), next: $("find-next") });
let tryCollapsed = false; // "What to try" folds away once, at the first run
let layout = null; // the resizable panes (set up once the page is wired)

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

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
  const travel = session.travel;
  const changed = renderChatInto(ui.chat, ui.empty, travel ? travel.after : session.fold, {
    busy: session.busy,
    readOnly: Boolean(travel || session.recording),
    travel: Boolean(travel),
    onAnswer: answerInterrupts,
    onA2uiAction: sendA2uiAction,
    onEdit: editMessage,
    stick: session.stick && !travel,
  });
  if (changed && session.stick && !travel) requestAnimationFrame(() => {
    if (session.stick) ui.chat.scrollTop = ui.chat.scrollHeight; // after late layout (fonts, cards)
  });
  if (changed && !session.stick && !travel) ui.jumpLatest.hidden = false;
  if (changed && finder.query) finder.refresh();
  renderState();
  renderStatus();
  renderBanners();
  renderHead();
  if (inspector.tab === "latency") drawLatency();
  timeline.schedule();
}

let renderedState; // the state as last drawn
let renderedAt = null; // "live" or the event index it was drawn for
let stateVersion = 0;
let stateDrawn = -1;
function renderState() {
  const travel = session.travel;
  const at = travel ? travel.index : "live";
  const s = travel ? travel.after.state : session.fold.state;
  if (stateDrawn >= 0 && at === renderedAt && (travel || deepSame(s, renderedState))) return;
  let changed;
  if (travel) changed = new Map(diff(travel.before.state, s).filter((c) => c.kind !== "removed").map((c) => [c.path, c.kind]));
  else changed = stateDrawn < 0 || renderedAt !== "live" ? new Set() : new Set(diff(renderedState, s).map((c) => c.path));
  renderedState = clone(s);
  renderedAt = at;
  stateVersion++;
  stateDrawn = stateVersion;
  ui.stateTree.replaceChildren(jsonTree(s, { id: "state", changed }));
  ui.stateTree.dataset.version = String(stateVersion);
  ui.stateTree.dataset.at = String(at);
  ui.stateRaw.textContent = JSON.stringify(s, null, 2) ?? "undefined";
  ui.stateAt.textContent = travel ? `right after ${timeline.entries[travel.index]?.label ?? "#" + travel.index}` : "live";
  ui.stateAt.classList.toggle("travel", Boolean(travel));
}
const deepSame = (a, b) => JSON.stringify(a) === JSON.stringify(b);

let ticker = null;
function renderStatus() {
  const run = session.run;
  const opened = session.opened;
  const rec = session.recording;
  const status = session.loading ? "loading" : rec && !run?.live ? "recording" : run ? run.status : opened ? (opened.problem ? "error" : "opened") : "idle";
  ui.status.dataset.status = status;
  if (run) ui.status.dataset.runId = run.id;
  ui.status.dataset.runs = String(session.runCount);
  ui.status.dataset.busy = String(session.busy);
  ui.status.dataset.loaded = opened ? opened.threadId : rec ? "recording" : "";
  let text;
  const detail = [];
  if (session.loading) {
    text = session.loading.recording ? "Reading the recording…" : "Opening the thread…";
    detail.push(`${session.loading.events} ${session.loading.recording ? "" : "stored "}event${session.loading.events === 1 ? "" : "s"}`);
  } else if (rec && rec.unreadable) {
    text = `Cannot read ${truncate(rec.name, 40)}`;
    detail.push(rec.note ?? "");
  } else if (rec && !run?.live) {
    text = `Recording ${truncate(rec.name, 40)}`;
    detail.push(rec.format, `${rec.events} events`, `${rec.runs} run${rec.runs === 1 ? "" : "s"}`);
    if (rec.verified) detail.push(rec.violations ? `${rec.violations} violation${rec.violations === 1 ? "" : "s"}` : "verifies");
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
  ui.status.title = (session.loading ? "" : run?.error ?? opened?.problem ?? rec?.note) ?? "";
  if (session.busy && !ticker) ticker = setInterval(renderStatus, 250);
  if (!session.busy && ticker) {
    clearInterval(ticker);
    ticker = null;
  }
  // parent-agent steps
  const steps = (session.travel ? session.travel.after : session.fold).steps.get("");
  ui.steps.replaceChildren(steps && steps.size ? renderStepChips(steps) : "");
  // composer
  ui.send.disabled = session.busy || Boolean(rec);
  ui.input.disabled = Boolean(rec);
  ui.stop.title = session.loading ? "Stop opening the thread (what has arrived stays)" : "Stop the run";
  ui.stop.hidden = !session.busy;
  const pending = session.fold.pendingInterrupts.length;
  const forkable = timeline.groups.some((g) => g.run?.terminal === "RUN_FINISHED");
  ui.hint.textContent = rec
    ? rec.unreadable
      ? "That file is not a recording this console reads (SSE, JSON Lines, JSON array, case file or, with agui serve, protobuf): open another, or start a new thread."
      : forkable
        ? "A recording is open (read-only): fork one of its finished runs to continue from there, or start a new thread."
        : "A recording is open (read-only): none of its runs finished, so none can be forked; start a new thread to talk to the agent."
    : pending && !session.busy ? `The agent is waiting for an answer to ${pending === 1 ? "an interrupt" : pending + " interrupts"}: use Approve or Deny.` : "";
  ui.editBar.hidden = !session.editing;
  if (session.editing) ui.editText.textContent = `Editing “${truncate(session.editing.text.replace(/\s+/g, " "), 80)}”: Send starts a new thread, forked from before it.`;
  ui.send.textContent = session.editing ? "Send as fork" : "Send";
  ui.thread.textContent = session.threadId.slice(0, 8);
  ui.thread.title = `thread ${session.threadId}${opened?.title ? "\n" + opened.title : ""}`;
  ui.thread.dataset.threadId = session.threadId;
}

function renderBanners() {
  const rec = session.recording;
  ui.recordingBanner.hidden = !rec;
  if (rec && rec.unreadable) {
    ui.recordingBanner.dataset.violations = "0";
    ui.recordingBanner.dataset.unreadable = "true";
    ui.recordingBanner.replaceChildren(h("strong", { class: "bad" }, "Cannot read "), h("code", null, truncate(rec.name, 60)), `: ${rec.note ?? "not a recording"}`);
  } else if (rec) {
    delete ui.recordingBanner.dataset.unreadable;
    ui.recordingBanner.dataset.violations = String(rec.violations);
    ui.recordingBanner.replaceChildren(
      h("strong", null, "Recording "), h("code", null, truncate(rec.name, 60)),
      ` · ${rec.format} · ${rec.events} events · ${rec.runs} run${rec.runs === 1 ? "" : "s"} · `,
      rec.verified
        ? rec.violations
          ? h("span", { class: "bad" }, `${rec.violations} violation${rec.violations === 1 ? "" : "s"} (first at #${rec.firstViolation})`)
          : h("span", { class: "good" }, "verifies with the reference client's rules")
        : h("span", { class: "muted", title: rec.note ?? "" }, `not verified: ${rec.note ?? "no verifier"}`));
  }
  const f = session.forkedFrom;
  ui.forkBanner.hidden = !f;
  if (f) {
    const from = f.recording ? `the recording ${truncate(f.recording, 40)}` : f.title ? `“${truncate(f.title, 50)}”` : `thread ${f.threadId.slice(0, 8)}`;
    const n = `${f.messages} message${f.messages === 1 ? "" : "s"}`;
    ui.forkBanner.textContent = f.edited
      ? `Edited and sent again: a new thread forked from ${from} before run ${f.run}, with its ${n} before the edited one and the state then.`
      : session.runNumber > 0
        ? `Forked from ${from} after run ${f.run}.`
        : `Forked from ${from} after run ${f.run}: this new thread starts with its ${n} and its state. Send a message to continue it differently.`;
  }
  const p = session.pinned;
  ui.compareBanner.hidden = !p || !ui.compare.hidden;
  if (p) ui.compareBannerText.textContent = `${p.label} is pinned for comparison: choose ⇄ on another run (of this or any other thread, or a recording).`;
  const t = session.travel;
  ui.travelBanner.hidden = !t;
  if (t) {
    const e = timeline.entries[t.index];
    ui.travelBanner.dataset.index = String(t.index);
    ui.travelText.textContent = `Time travel: the conversation right after ${e?.label ?? "#" + t.index} ${e?.type ?? ""}${e?.violation ? ` (breaks ${e.violation.rule})` : ""}`;
  }
}

// The chat's head: the thread's title (renamable once the server has the thread) and where
// it was forked from.
let headRename = null; // the title's input while renaming
function renderHead() {
  const listed = threads.items.find((t) => t.threadId === session.threadId);
  const title = listed && typeof listed.title === "string" && listed.title !== "" ? listed.title : session.title;
  const stored = Boolean(listed || session.opened);
  if (!headRename) {
    const f = session.forkedFrom;
    const forkName = f ? (f.recording ? `the recording ${f.recording}` : f.title ? `“${truncate(f.title, 60)}”` : `thread ${f.threadId.slice(0, 8)}`) : "";
    const text = session.recording ? `Recording ${session.recording.name}`
      : title ?? (f ? `${f.edited ? "Edit of" : "Fork of"} ${forkName}` : stored || session.runNumber ? `Thread ${session.threadId.slice(0, 8)}` : "New thread");
    ui.chatTitle.textContent = text;
    ui.chatTitle.title = text;
    ui.chatTitle.classList.toggle("untitled", !title && !session.recording);
  }
  ui.renameCurrent.hidden = !stored || threads.state !== "ok" || Boolean(headRename);
  const forkOf = (listed && isObject(listed.forkOf) ? listed.forkOf : null) ?? session.forkOf;
  const f = session.forkedFrom;
  const parentId = forkOf?.threadId ?? (f && !f.recording ? f.threadId : null);
  const sig = JSON.stringify([parentId, f?.title, f?.recording, f?.edited, threadTitle(parentId)]);
  if (ui.chatLineage.dataset.sig === sig) return;
  ui.chatLineage.dataset.sig = sig;
  ui.chatLineage.hidden = !parentId && !f?.recording;
  if (ui.chatLineage.hidden) return ui.chatLineage.replaceChildren();
  if (f?.recording && !parentId) return ui.chatLineage.replaceChildren(`↳ forked from the recording ${truncate(f.recording, 40)}`);
  const name = threadTitle(parentId) ?? f?.title ?? `thread ${parentId.slice(0, 8)}`;
  const parent = threads.items.find((t) => t.threadId === parentId);
  ui.chatLineage.replaceChildren(`↳ ${f?.edited ? "edited from" : "forked from"} `,
    parent ? h("button", { type: "button", testid: "chat-lineage-open", title: `Open ${name}`, onclick: () => openThread(parent.threadId, parent.owner) }, `“${truncate(name, 48)}”`) : `“${truncate(name, 48)}”`);
}
const threadTitle = (id) => {
  const t = id ? threads.items.find((x) => x.threadId === id) : null;
  return t && typeof t.title === "string" && t.title !== "" ? t.title : null;
};

/** The run the latency tab is about: the selected one, else the last. */
function latencyGroup() {
  const sel = timeline.selected;
  if (sel?.kind === "event") return timeline.entries[sel.id]?.g ?? null;
  if (sel?.kind === "run") return timeline.groups.find((g) => g.key === sel.id) ?? null;
  return [...timeline.groups].reverse().find((g) => g.entries.length) ?? null;
}
let latencySig = "";
function drawLatency(force = false) {
  const g = latencyGroup();
  const sig = g ? `${session.epoch}|${g.key}|${g.entries.length}|${g.run?.status}` : "";
  if (!force && sig === latencySig) return;
  latencySig = sig;
  if (!g) return renderLatency(ui.latency, null);
  let items;
  let origin;
  if (g.kind === "live") {
    items = g.entries.map((e) => ({ ev: e.ev, t: Number.isFinite(e.t) ? e.t : null }));
    origin = "request";
  } else {
    const stamped = g.entries.filter((e) => Number.isFinite(e.ev?.timestamp));
    const t0 = stamped.length ? stamped[0].ev.timestamp : null;
    items = g.entries.map((e) => ({ ev: e.ev, t: t0 !== null && Number.isFinite(e.ev?.timestamp) ? e.ev.timestamp - t0 : null }));
    origin = t0 === null ? "none" : "first-event";
  }
  const where = origin === "request" ? "times from sending the request"
    : origin === "first-event" ? "times from the events' timestamps, after the run's first event (when the request was sent is not stored)"
      : "its events carry no timestamp: only counts and tokens";
  renderLatency(ui.latency, latency(items, origin), g.run?.n ?? "?", where);
}

// ---------------------------------------------------------------------------
// Time travel
// ---------------------------------------------------------------------------

/** Shows event `e` in the inspector and the conversation and state right after it. */
function travelTo(e) {
  const run = e.g.run;
  if (run && !run.verified && !session.busy) verifyRuns([run]);
  const before = session.history.before(e.i);
  const after = session.history.after(e.i);
  session.travel = { index: e.i, before, after };
  const where = e.label;
  const problems = [e.violation ? `✖ ${e.violation.rule}` : null, ...e.warnings.map((w) => `⚠ ${w}`)].filter(Boolean);
  inspector.showEvent(e, `${e.type} · ${where}${problems.length ? " · " + problems.join("; ") : ""}`, { before, after });
  render(); // at once: what is shown is what was clicked
}

/** Back to the live conversation. */
function leaveTravel() {
  if (!session.travel) return;
  session.travel = null;
  timeline.selected = timeline.selected?.kind === "event" ? null : timeline.selected;
  render();
}
ui.backToLive.addEventListener("click", () => {
  leaveTravel();
  inspector.clear();
});

// ---------------------------------------------------------------------------
// Running an agent
// ---------------------------------------------------------------------------

function buildInput(runId, resume, forwardedProps = {}) {
  const input = {
    threadId: session.threadId,
    runId,
    protocolVersion: "1.0",
    state: clone(session.fold.state),
    messages: session.fold.messages.filter((m) => m.role !== "activity").map(stripNullTag),
    tools: [],
    context: [],
    forwardedProps,
  };
  if (resume) input.resume = resume;
  return input;
}

// A run of the current thread: one this page starts, or a stored or recorded one replayed.
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
    indices: [], // the history index of each of its events
    ...extra,
  };
}

async function startRun({ text, resume, forwardedProps } = {}) {
  if (session.busy || session.recording) return;
  leaveTravel();
  const f = session.fold;
  if (text !== undefined) f.messages.push({ id: uuid(), role: "user", content: text });
  if (text !== undefined && session.forkedFrom && session.forkedFrom.firstText === undefined) session.forkedFrom.firstText = text;
  const runId = uuid();
  const input = buildInput(runId, resume, forwardedProps);
  const controller = new AbortController();
  const run = newRun(runId, controller, { live: true, url: session.endpoint, startedAt: Date.now() });
  session.stick = true;
  ui.jumpLatest.hidden = true;
  if (!tryCollapsed && ui.tryPanel.open) {
    // Room for the timeline once the agent has been tried (and on later visits).
    tryCollapsed = true;
    ui.tryPanel.open = false;
    try {
      localStorage.setItem("agui-try-folded", "1");
    } catch {}
  }
  session.runCount++;
  session.run = run;
  session.busy = true;
  session.controller = controller;
  f.closeStreams();
  f.run = run;
  session.history.touch();
  if (threads.state === "ok") setUrlThread(session.threadId);
  run.group = timeline.addRun("live", run, input, "+0 ms");
  scheduleRender();
  // False once the console has switched to another thread: the rest of this run is not shown.
  const live = () => run.epoch === session.epoch;

  try {
    let res;
    try {
      res = await fetch(session.endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...authHeaders(session.endpoint) },
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
      if (live()) timeline.addNote("error", run.error, `+${Math.round(performance.now() - run.t0)} ms`);
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
        for (const note of session.fold.notes) if (note.kind === "interrupt" && note.status !== "pending" && note.answeredBy === run.id) {
          note.status = "pending";
          note.retry = true;
        }
      }
      if (run.status === "error" && !run.terminal) {
        session.fold.notes.push({ kind: "error", key: `error-${run.id}`, ...session.fold.anchorHere(), message: run.error });
        session.history.touch();
      }
      scheduleRender();
      if (suspicious(run)) verifyRuns([run]);
    }
    // The thread's run count, status and time changed: show it in the list (after saying
    // where a fork comes from, on its first run).
    if (threads.state === "ok") markFork(run).then(() => loadThreads());
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
  const f = session.fold;
  const i = session.history.record(f, ev);
  f.run = run;
  const warnings = f.push(ev);
  run.indices.push(i);
  const e = timeline.addEvent(i, ev, timeLabel, warnings);
  if (run.live) e.t = performance.now() - run.t0;
  scheduleRender();
}

// ---------------------------------------------------------------------------
// Verification by the engine (agui serve's POST /api/inspect)
// ---------------------------------------------------------------------------

/** Marks a violation report's violations on the timeline; `indices[k]` is the history index of the k-th event sent. */
function markViolations(report, indices) {
  const map = new Map();
  for (const v of report.violations ?? []) {
    const i = indices[Math.min(v.index, indices.length - 1)];
    if (i !== undefined && !map.has(i)) map.set(i, v);
  }
  timeline.setViolations(map);
  return map;
}

/**
 * Asks the engine to verify these runs' events (each run on its own, as a client receives
 * it) and marks what breaks. A run is verified once (`run.verified`: "pending", "ok",
 * "violation", or "unavailable" without a verifier here).
 */
async function verifyRuns(runs) {
  const epoch = session.epoch;
  for (const run of runs) {
    if (run.indices.length === 0 || run.verified) continue;
    run.verified = "pending";
    const events = run.indices.map((i) => session.history.events[i]);
    let report;
    try {
      report = await inspectRemotely(toJsonLines(events), "application/x-ndjson");
    } catch {
      report = null;
    }
    if (epoch !== session.epoch) return;
    if (!report) {
      run.verified = "unavailable";
      continue;
    }
    run.verified = report.violations?.length ? "violation" : "ok";
    markViolations(report, run.indices);
  }
  scheduleRender();
}

/** Whether a run ended in a way worth verifying right away (the others are verified when looked at). */
const suspicious = (run) => run.status === "error" || run.status === "incomplete" || run.indices.some((i) => timeline.entries[i]?.warnings.length);

// ---------------------------------------------------------------------------
// A2UI actions: a button of a surface sends its action as a new run
// ---------------------------------------------------------------------------

/** Starts a run carrying `forwardedProps.a2uiAction.userAction` (the A2UI convention on AG-UI); false when none can start. */
function sendA2uiAction(userAction, extra = {}) {
  if (session.busy || session.recording) return false;
  startRun({ forwardedProps: { ...extra, a2uiAction: { userAction } } });
  return true;
}

// ---------------------------------------------------------------------------
// Interrupts
// ---------------------------------------------------------------------------

function answerInterrupts(approved) {
  const f = session.fold;
  if (session.busy || f.pendingInterrupts.length === 0) return;
  const resume = f.pendingInterrupts.map((i) =>
    approved && !isExpired(i)
      ? { interruptId: i.id, status: "resolved", payload: { approved: true } }
      : { interruptId: i.id, status: "cancelled" });
  const note = [...f.notes].reverse().find((n) => n.kind === "interrupt" && n.status === "pending");
  startRun({ resume }); // creates session.run synchronously, before its first await
  if (note) {
    note.status = approved ? "approved" : "denied";
    note.retry = false;
    note.answeredBy = session.run.id;
  }
  scheduleRender();
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
  error: "", // the last failed action (delete, load more, rename)
  search: "", // the search the list shows (`?q=`)
  editing: null, // the id of the thread being renamed in the list
};

function threadsUrl(suffix = "", query) {
  const u = new URL(session.endpoint, location.href);
  u.pathname = u.pathname.replace(/\/+$/, "") + "/threads" + suffix;
  u.search = query ? new URLSearchParams(query).toString() : "";
  u.hash = "";
  return u.href;
}
const threadPath = (id) => `/${encodeURIComponent(id)}`;
// A thread id names a thread within its owner's namespace: a thread picked from the list
// is named with its owner (`?owner=`, empty for a thread without one), so that an admin
// opens the one listed, not a thread of that id of its own.
const ownerQuery = (owner) => (owner === undefined ? undefined : { owner: owner ?? "" });

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
  const search = threads.search;
  if (search) query.q = search;
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
  if (search !== threads.search) {
    // The search changed meanwhile: this answer is for the old one.
    threads.again = false;
    return loadThreads();
  }
  if (outcome.unavailable) {
    if (more && threads.state === "ok") threads.error = `Cannot load more: ${outcome.unavailable}`;
    else Object.assign(threads, { state: "unavailable", note: outcome.unavailable, items: [], next: null });
  } else {
    const seen = new Set(more ? threads.items.map((t) => t.threadId) : []);
    const fresh = outcome.page.filter((t) => !seen.has(t.threadId) && seen.add(t.threadId));
    threads.items = more ? threads.items.concat(fresh) : fresh;
    threads.next = outcome.next;
    threads.state = "ok";
    threads.shownSearch = search;
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
  Object.assign(threads, { state: "unknown", items: [], next: null, loading: false, again: false, note: "", error: "", editing: null });
  threads.gen++;
  threadNodes.clear();
  threadsView.shownAnyway = false;
}

/** The parent a listed thread was forked from: `{threadId, runId}`, or null. */
const forkOfItem = (t) => (isObject(t.forkOf) && typeof t.forkOf.threadId === "string" ? t.forkOf : null);

function threadItem(t, current, editing) {
  const title = typeof t.title === "string" && t.title !== "" ? t.title : null;
  const runs = Number(t.runCount) || 0;
  const status = typeof t.lastStatus === "string" ? t.lastStatus : "new";
  const when = Number(t.updatedMs) || 0;
  const label = title ?? `thread ${t.threadId.slice(0, 8)}`;
  const forkOf = forkOfItem(t);
  const attrs = { class: `thread-item${forkOf ? " forked" : ""}${editing ? " editing" : ""}`, testid: "thread-item", "data-thread-id": t.threadId, "data-status": status, "data-fork-of": forkOf?.threadId, "aria-current": current ? "true" : undefined };
  if (editing) {
    return h("li", attrs, renameInput(label, (v) => renameThread(t, v), () => {
      threads.editing = null;
      renderThreads();
    }));
  }
  const parent = forkOf ? threads.items.find((x) => x.threadId === forkOf.threadId) : null;
  const parentName = parent && typeof parent.title === "string" && parent.title !== "" ? parent.title : forkOf ? `thread ${forkOf.threadId.slice(0, 8)}` : "";
  return h("li", attrs,
    h("button", { type: "button", class: "thread-open", testid: "thread-open", title: `${label}\nthread ${t.threadId}${forkOf ? `\nforked from ${parentName}` : ""}`, onclick: () => openThread(t.threadId, t.owner) },
      h("span", { class: `thread-title${title ? "" : " untitled"}`, testid: "thread-title" }, label),
      forkOf ? h("span", { class: "thread-lineage", testid: "thread-lineage", "data-parent": forkOf.threadId }, `from “${truncate(parentName, 40)}”${parent ? "" : " (not listed)"}`) : null,
      h("span", { class: "thread-meta" },
        h("span", { class: `pill ${status}`, testid: "thread-status" }, status),
        h("span", { testid: "thread-runs" }, `${runs} run${runs === 1 ? "" : "s"}`),
        when ? h("time", { datetime: new Date(when).toISOString(), title: new Date(when).toLocaleString() }, fmtAgo(when)) : null)),
    h("span", { class: "thread-actions" },
      h("button", { type: "button", class: "thread-rename", testid: "thread-rename", title: "Rename this thread", "aria-label": `Rename the thread ${label}`, onclick: () => {
        threads.editing = t.threadId;
        renderThreads();
      } }, "✎"),
      h("button", { type: "button", class: "thread-delete", testid: "thread-delete", title: "Delete this thread", "aria-label": `Delete the thread ${label}`, onclick: () => deleteThread(t) }, "✕")));
}

/**
 * An input to rename with: Enter (or leaving it) saves a changed, non-empty title, Escape
 * cancels; `save(title)` is awaited, `done()` afterwards either way. Focused once drawn.
 */
function renameInput(initial, save, done) {
  const input = h("input", { class: "rename-input", testid: "rename-input", type: "text", maxlength: "200", "aria-label": "New title", spellcheck: "false" });
  input.value = initial;
  let over = false;
  const finish = async (keep) => {
    if (over) return;
    over = true;
    const v = input.value.replace(/\s+/g, " ").trim();
    if (keep && v !== "" && v !== initial) await save(v);
    done();
  };
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      finish(true);
    } else if (e.key === "Escape") {
      e.preventDefault();
      finish(false);
    }
  });
  input.addEventListener("blur", () => finish(true));
  requestAnimationFrame(() => {
    input.focus();
    input.select();
  });
  return input;
}

/** Renames a listed thread (`PATCH P/threads/ID`). */
async function renameThread(t, title) {
  threads.error = "";
  const updated = await patchThread(t.threadId, t.owner, { title });
  if (!updated) return;
  threads.items = threads.items.map((x) => (x.threadId === t.threadId ? { ...x, title: updated.title } : x));
  if (t.threadId === session.threadId) session.title = updated.title;
  scheduleRender();
}

function startHeadRename() {
  const listed = threads.items.find((t) => t.threadId === session.threadId);
  const t = listed ?? { threadId: session.threadId, owner: undefined };
  const initial = currentTitle() ?? "";
  headRename = renameInput(initial, (v) => renameThread(t, v), () => {
    stopHeadRename();
    renderHead();
    renderThreads();
  });
  ui.chatTitle.replaceChildren(headRename);
  renderHead();
}
function stopHeadRename() {
  if (!headRename) return;
  headRename = null;
  ui.chatTitle.textContent = "";
}
ui.renameCurrent.addEventListener("click", startHeadRename);
ui.chatTitle.addEventListener("dblclick", () => {
  if (!ui.renameCurrent.hidden) startHeadRename();
});

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
  layout?.applyAll();
}

const threadNodes = new Map(); // threadId -> {sig, node}
function renderThreads() {
  applyThreadsView();
  const ok = threads.state === "ok";
  ui.threadsPane.dataset.state = threads.state;
  ui.threadsPane.setAttribute("aria-busy", String(threads.loading));
  const searching = threads.shownSearch ?? "";
  const note = threads.state === "unavailable" ? threads.note
    : threads.state === "unknown" ? "Loading the threads…"
    : threads.items.length === 0 ? (searching ? `No thread matches “${truncate(searching, 60)}”.` : "No threads yet: send a message to start one.") : "";
  ui.threadsPane.dataset.search = searching;
  ui.threadsSearch.hidden = threads.state === "unavailable";
  ui.threadsNote.textContent = note;
  ui.threadsNote.hidden = note === "";
  ui.threadsError.textContent = threads.error;
  ui.threadsError.hidden = threads.error === "";
  const nodes = [];
  const seen = new Set();
  for (const t of ok ? threads.items : []) {
    const current = t.threadId === session.threadId;
    const editing = threads.editing === t.threadId;
    const parent = forkOfItem(t) ? threadTitle(forkOfItem(t).threadId) : null;
    const sig = JSON.stringify([t, current, fmtAgo(t.updatedMs), editing, parent]);
    let c = threadNodes.get(t.threadId);
    if (!c || c.sig !== sig) {
      c = { sig, node: threadItem(t, current, editing) };
      threadNodes.set(t.threadId, c);
    }
    seen.add(t.threadId);
    nodes.push(c.node);
  }
  for (const id of [...threadNodes.keys()]) if (!seen.has(id)) threadNodes.delete(id);
  reconcile(ui.threadList, nodes);
  ui.threadsMore.hidden = !(ok && threads.next);
  ui.threadsMore.disabled = threads.loading;
  ui.threadsMore.textContent = threads.loading && threads.next ? "Loading…" : "Load more";
  renderHead();
}

// Searching the list (`?q=`): the server looks in titles and stored events.
let searchTimer = null;
ui.threadsSearch.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => {
    const q = ui.threadsSearch.value.trim().slice(0, 200);
    if (q === threads.search) return;
    threads.search = q;
    threads.items = [];
    threads.next = null;
    threadNodes.clear();
    loadThreads();
  }, 250);
});

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
    threadId, fold: new Fold(), history: new History(),
    run: null, runNumber: 0, busy: false, controller: null, loading: null, opened: null,
    recording: null, forkedFrom: null, travel: null, title: null, forkOf: null, editing: null, stick: true,
  });
  closeCompare();
  stopHeadRename();
  ui.jumpLatest.hidden = true;
  latencySig = "";
  renderStatus(); // the thread id at once (a check may read it before the next frame)
  clearChatCache();
  stateDrawn = -1; // draw the next state without flashing what "changed"
  timeline.clear();
  inspector.clear();
  scheduleRender();
  renderThreads();
}

// A resume stored in a RUN_STARTED answers the interrupt card before it.
function markAnswered(resume, runId) {
  const note = [...session.fold.notes].reverse().find((n) => n.kind === "interrupt" && n.status === "pending");
  if (!note) return;
  note.status = resume.length > 0 && resume.every((r) => isObject(r) && r.status === "resolved") ? "approved" : "denied";
  note.answeredBy = runId;
}

// One stored or recorded event: a RUN_STARTED (or the first event) opens a run.
function replayEvent(load, ev, label, kind, id) {
  load.events++;
  if ((isObject(ev) && ev.type === "RUN_STARTED") || !session.run) {
    const runId = isObject(ev) && typeof ev.runId === "string" && ev.runId !== "" ? ev.runId : `${kind}-${id}`;
    session.run = newRun(runId, load.controller, { [kind]: true });
    const input = isObject(ev) && ev.type === "RUN_STARTED" && isObject(ev.input) ? ev.input : null;
    session.run.group = timeline.addRun(kind === "stored" ? "stored" : "recording", session.run, input, label);
    if (input && Array.isArray(input.resume)) markAnswered(input.resume, session.run.id);
  }
  ingest(session.run, ev, label);
}

// Opens a stored thread: its events through the console's reducer (timeline, chat
// as it was streamed), then the server's fold of it (messages, state and open
// interrupts) as the word that counts. A run still in progress streams live.
async function openThread(threadId, owner) {
  const named = ownerQuery(owner);
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
    const res = await apiFetch(threadsUrl(threadPath(threadId) + "/connect", named), { headers: { Accept: "text/event-stream" }, signal: controller.signal });
    if (res.status === 404) gone = true;
    else if (!res.ok) problem = `its events: ${await errorText(res)}`;
    else await readSse(res, (payload, seq) => {
      if (!live()) return;
      const ev = parseFrame(payload, `stored event ${seq || load.events + 1}`);
      replayEvent(load, ev, seq ? `#${seq}` : "stored", "stored", seq);
    });
  } catch (e) {
    if (!live()) return;
    problem = e && e.name === "AbortError" ? "stopped before all events arrived" : `its events: ${e?.message ?? e}`;
  }
  if (!live()) return;
  let folded = null;
  if (!gone) {
    try {
      const res = await apiFetch(threadsUrl(threadPath(threadId), named));
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
  const f = session.fold;
  if (isObject(folded)) {
    if (Array.isArray(folded.messages)) f.applyMessagesSnapshot({ messages: folded.messages });
    if (Object.hasOwn(folded, "state")) f.state = clone(folded.state) ?? {};
    const pending = Array.isArray(folded.pendingInterrupts) ? folded.pendingInterrupts.filter(isObject).map(stripNullTag) : [];
    f.pendingInterrupts = pending;
    const open = new Set(pending.map((i) => i.id));
    let shown = false;
    for (const note of f.notes) {
      if (note.kind !== "interrupt" || note.status !== "pending") continue;
      if (note.interrupts.some((i) => open.has(i.id))) shown = true;
      else note.status = "closed";
    }
    if (pending.length && !shown) f.notes.push({ kind: "interrupt", key: `interrupt-open-${threadId}`, ...f.anchorHere(), interrupts: pending, status: "pending" });
    session.history.touch();
  }
  const runs = isObject(folded) && Array.isArray(folded.runs) ? folded.runs.length : session.runNumber;
  const stored = timeline.groups.map((g) => g.run).filter(Boolean);
  session.runNumber = Math.max(session.runNumber, runs);
  const title = isObject(folded) && typeof folded.title === "string" ? folded.title : null;
  const forkOf = isObject(folded) && isObject(folded.forkOf) && typeof folded.forkOf.threadId === "string" ? folded.forkOf : null;
  Object.assign(session, { busy: false, controller: null, loading: null, run: null, title, forkOf, stick: true, opened: { threadId, title, runs, events: load.events, problem } });
  f.closeStreams();
  scheduleRender();
  renderThreads();
  verifyRuns(stored);
}

async function deleteThread(t) {
  const label = typeof t.title === "string" && t.title !== "" ? `“${truncate(t.title, 80)}”` : t.threadId;
  if (!confirm(`Delete the thread ${label}?\n\nIts messages and events are removed from the server. This cannot be undone.`)) return;
  threads.error = "";
  let res;
  try {
    res = await apiFetch(threadsUrl(threadPath(t.threadId), ownerQuery(t.owner)), { method: "DELETE" });
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
// Recordings: open (file picker, drag and drop), inspect offline, export
// ---------------------------------------------------------------------------

/**
 * Opens a recorded stream: agui serve reads and verifies it (any format `agui inspect`
 * reads, protobuf too); without agui serve the console reads the text formats itself and
 * shows no verdict. No agent is involved.
 */
async function openRecording(file) {
  resetSession(uuid());
  setUrlThread(null);
  const epoch = session.epoch;
  const load = { recording: true, events: 0, controller: null };
  Object.assign(session, { busy: true, loading: load });
  ui.tryPanel.open = false; // room for the timeline
  scheduleRender();
  let report = null;
  let note = null;
  let events;
  let format;
  try {
    const bytes = await file.arrayBuffer();
    try {
      report = await inspectRemotely(bytes);
      if (!report) note = "no verifier here (agui serve's POST /api/inspect verifies recordings)";
    } catch (e) {
      note = `the verifier could not read it: ${e.message}`;
    }
    if (report) ({ events, format } = report);
    else ({ events, format } = parseRecording(new TextDecoder("utf-8").decode(bytes)));
  } catch (e) {
    if (epoch !== session.epoch) return;
    Object.assign(session, { busy: false, loading: null });
    timeline.addNote("error", `Cannot open ${file.name}: ${e.message}`, "");
    session.recording = { name: file.name, unreadable: true, format: null, events: 0, runs: 0, violations: 0, verified: false, note: note ? `${e.message} (${note})` : e.message };
    scheduleRender();
    return;
  }
  if (epoch !== session.epoch) return;
  events.forEach((ev, i) => replayEvent(load, isObject(ev) && !(ev.error && !ev.type) ? ev : { type: "(not JSON)", error: ev?.error ?? String(ev) }, `#${i}`, "recording", i));
  for (const g of timeline.groups) if (g.run && !g.run.terminal) g.run.status = "incomplete";
  const map = report ? markViolations(report, events.map((_, i) => i)) : new Map();
  for (const g of timeline.groups) if (g.run) g.run.verified = !report ? "unavailable" : g.entries.some((e) => e.violation) ? "violation" : "ok";
  const first = [...map.keys()].sort((a, b) => a - b)[0];
  session.recording = {
    name: file.name, format, events: events.length, runs: timeline.groups.length,
    violations: report ? (report.violations ?? []).length : 0, firstViolation: first, verified: Boolean(report), note,
  };
  Object.assign(session, { busy: false, loading: null, run: null });
  session.fold.closeStreams();
  scheduleRender();
  if (first !== undefined) timeline.jumpToViolation();
}

ui.recordingFile.addEventListener("change", () => {
  const file = ui.recordingFile.files?.[0];
  if (file) openRecording(file);
  ui.recordingFile.value = "";
});

// Drag and drop anywhere on the page.
let dragDepth = 0;
const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes("Files");
document.addEventListener("dragenter", (e) => {
  if (!hasFiles(e)) return;
  dragDepth++;
  ui.dropZone.hidden = false;
});
document.addEventListener("dragleave", () => {
  dragDepth = Math.max(0, dragDepth - 1);
  if (dragDepth === 0) ui.dropZone.hidden = true;
});
document.addEventListener("dragover", (e) => {
  if (hasFiles(e)) e.preventDefault();
});
document.addEventListener("drop", (e) => {
  if (!hasFiles(e)) return;
  e.preventDefault();
  dragDepth = 0;
  ui.dropZone.hidden = true;
  const file = e.dataTransfer.files?.[0];
  if (file) openRecording(file);
});

const EXPORTS = {
  jsonl: { ext: "jsonl", type: "application/x-ndjson" },
  sse: { ext: "sse", type: "text/event-stream" },
  har: { ext: "har", type: "application/json" },
};
const exportFormat = () => document.querySelector('input[name="export-format"]:checked')?.value ?? "jsonl";
for (const r of document.querySelectorAll('input[name="export-format"]')) {
  r.addEventListener("change", () => {
    ui.exportDownload.textContent = `Download .${EXPORTS[exportFormat()].ext}`;
  });
}

/** The runs of the timeline as HAR entries want them (see recording.js toHar). */
function harRuns(redact) {
  return timeline.groups.filter((g) => g.entries.length || g.input).map((g) => {
    const run = g.run;
    const events = g.entries.map((e) => e.ev);
    const stamped = events.filter((e) => isObject(e) && Number.isFinite(e.timestamp));
    const live = g.kind === "live" && run;
    const input = g.input ?? null;
    return {
      url: run?.url ?? session.endpoint,
      input: input === null ? null : redact ? redactInput(input) : input,
      events: redact ? events.map(redactEvent) : events,
      startedMs: live ? run.startedAt : stamped[0]?.timestamp ?? null,
      timeMs: live ? (run.t1 ?? performance.now()) - run.t0 : stamped.length ? stamped[stamped.length - 1].timestamp - stamped[0].timestamp : null,
      waitMs: live ? g.entries[0]?.t ?? null : null,
      status: live ? run.httpStatus : undefined,
    };
  });
}

/** Downloads the thread's events (as received) as JSON Lines, SSE or HAR, redacted unless unticked. */
function exportThread() {
  const redact = ui.exportRedact.checked;
  const format = exportFormat();
  const events = timeline.events();
  const shown = redact ? events.map(redactEvent) : events;
  const text = format === "har"
    ? JSON.stringify(toHar(harRuns(redact), { name: "agui console", version: "1" }), null, 2)
    : format === "sse" ? toSse(shown) : toJsonLines(shown);
  const { ext, type } = EXPORTS[format];
  const base = session.recording ? session.recording.name.replace(/\.[^.]*$/, "") : `agui-thread-${session.threadId.slice(0, 8)}`;
  const a = h("a", { href: URL.createObjectURL(new Blob([text], { type })), download: `${base}${redact ? "-redacted" : ""}.${ext}`, hidden: true });
  document.body.append(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 1000);
  ui.exportMenu.open = false;
}
ui.exportDownload.addEventListener("click", exportThread);

// ---------------------------------------------------------------------------
// Fork from here
// ---------------------------------------------------------------------------

/** A new thread whose history is the conversation (messages and state) at the end of run `g`. */
function fork(g) {
  const last = g.entries[g.entries.length - 1];
  if (!last || session.busy) return;
  const at = session.history.after(last.i);
  const from = {
    threadId: session.threadId, run: g.run?.n ?? "?", runId: g.run?.id ?? null, title: currentTitle(),
    recording: session.recording ? session.recording.name : null,
  };
  resetSession(uuid());
  setUrlThread(null);
  const f = session.fold;
  f.messages = at.messages;
  f.state = at.state;
  session.history.touch();
  session.forkedFrom = { ...from, messages: at.messages.length };
  scheduleRender();
  renderThreads();
  ui.input.focus();
}

/** The open thread's title, if it has one. */
function currentTitle() {
  return threadTitle(session.threadId) ?? session.title ?? null;
}

/**
 * "Edit" on a user message: the composer takes its text; sending it starts a new thread
 * forked from right before that message (its earlier messages, and the state the run that
 * answered it started from), which then runs with the edited text.
 */
function editMessage(m) {
  if (session.busy || session.recording || session.travel) return;
  const text = typeof m.content === "string" ? m.content : Array.isArray(m.content) ? m.content.filter((p) => p?.type === "text").map((p) => p.text).join("") : "";
  session.editing = { id: m.id, text };
  ui.input.value = text;
  ui.input.focus();
  ui.input.setSelectionRange(text.length, text.length);
  renderStatus();
}
function cancelEdit() {
  if (!session.editing) return;
  session.editing = null;
  ui.input.value = "";
  renderStatus();
}
ui.editCancel.addEventListener("click", cancelEdit);

function editAndResend(text) {
  const edit = session.editing;
  session.editing = null;
  const f = session.fold;
  const at = f.messages.findIndex((m) => m.id === edit.id);
  if (at < 0) return startRun({ text });
  // The run that answered the message: the first whose request carried it.
  const g = timeline.groups.find((x) => isObject(x.input) && Array.isArray(x.input.messages) && x.input.messages.some((m) => isObject(m) && m.id === edit.id));
  const state = g && g.entries.length ? session.history.before(g.entries[0].i).state : isObject(g?.input) && Object.hasOwn(g.input, "state") ? g.input.state : f.state;
  const from = { threadId: session.threadId, run: g?.run?.n ?? "?", runId: g?.run?.id ?? null, title: currentTitle(), edited: true, recording: null };
  const messages = clone(f.messages.slice(0, at));
  resetSession(uuid());
  setUrlThread(null);
  session.fold.messages = messages;
  session.fold.state = clone(state) ?? {};
  session.history.touch();
  session.forkedFrom = { ...from, messages: messages.length };
  renderThreads();
  startRun({ text });
}

/**
 * After the first run of a forked thread that the server stores: gives the thread the
 * title of its own first message (else it would keep its parent's, the first user message
 * of its history) and records where it comes from (`PATCH P/threads/ID`).
 */
async function markFork(run) {
  const f = session.forkedFrom;
  if (!f || f.marked || !run.started || run.epoch !== session.epoch || threads.state !== "ok") return;
  f.marked = true;
  const body = {};
  if (typeof f.firstText === "string" && f.firstText.trim() !== "") body.title = truncate(f.firstText.replace(/\s+/g, " ").trim(), 80);
  if (!f.recording && f.runId) body.forkOf = { threadId: f.threadId, runId: f.runId };
  if (!body.title && !body.forkOf) return;
  const updated = await patchThread(session.threadId, undefined, body);
  if (updated && run.epoch === session.epoch) {
    session.title = updated.title ?? session.title;
    session.forkOf = isObject(updated.forkOf) ? updated.forkOf : session.forkOf;
  }
}

/** `PATCH P/threads/ID` with `body`: the thread as listed, or null (threads.error says why). */
async function patchThread(threadId, owner, body) {
  try {
    const res = await apiFetch(threadsUrl(threadPath(threadId), ownerQuery(owner)), { method: "PATCH", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (res.ok) return await res.json();
    threads.error = `Cannot update the thread: ${await errorText(res)}`;
  } catch (e) {
    threads.error = `Cannot update the thread: ${e?.message ?? e}`;
  }
  renderThreads();
  return null;
}

// ---------------------------------------------------------------------------
// Compare two runs: ⇄ on one pins it (it stays pinned across threads and recordings),
// ⇄ on another opens the comparison in place of the chat.
// ---------------------------------------------------------------------------

function runSnapshot(g) {
  const last = g.entries[g.entries.length - 1];
  const at = last ? session.history.after(last.i) : { messages: session.fold.messages, state: session.fold.state };
  const where = session.recording ? `recording ${truncate(session.recording.name, 30)}` : currentTitle() ? `“${truncate(currentTitle(), 30)}”` : `thread ${session.threadId.slice(0, 8)}`;
  return {
    key: g.key, epoch: session.epoch, label: `Run ${g.run?.n ?? "?"} of ${where}`,
    events: g.entries.map((e) => e.ev), messages: clone(at.messages), state: clone(at.state),
  };
}

function compareRun(g) {
  const p = session.pinned;
  if (p && p.epoch === session.epoch && p.key === g.key) session.pinned = null;
  else if (!p) session.pinned = runSnapshot(g);
  else openCompare(p, runSnapshot(g));
  timeline.cache.clear(); // the ⇄ buttons' pressed state
  timeline.schedule();
  scheduleRender();
}

function openCompare(a, b) {
  leaveTravel();
  renderCompare(ui.compareBody, compareEvents(a.events, b.events), a, b);
  ui.compareSub.textContent = `${a.label} ↔ ${b.label}`;
  ui.compare.hidden = false;
  ui.chat.hidden = true;
  ui.compare.scrollTop = 0;
  scheduleRender();
}
function closeCompare() {
  ui.compare.hidden = true;
  ui.chat.hidden = false;
  scheduleRender();
}
ui.compareClose.addEventListener("click", closeCompare);
ui.compareClear.addEventListener("click", () => {
  session.pinned = null;
  timeline.cache.clear();
  timeline.schedule();
  scheduleRender();
});

// ---------------------------------------------------------------------------
// Wiring
// ---------------------------------------------------------------------------

function send() {
  const text = ui.input.value;
  if (session.busy || session.recording || text.trim() === "") return;
  if (session.fold.pendingInterrupts.length) {
    renderStatus();
    ui.hint.classList.remove("nudge");
    void ui.hint.offsetWidth;
    ui.hint.classList.add("nudge");
    return;
  }
  ui.input.value = "";
  if (session.editing) editAndResend(text);
  else startRun({ text });
}

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  send();
});
ui.input.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  } else if (e.key === "Escape" && session.editing) cancelEdit();
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
  loadCapabilities();
}

ui.endpoint.value = session.endpoint;
ui.endpointForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const v = ui.endpoint.value.trim();
  if (v) setEndpoint(v);
});

// The agent's capabilities (AG-UI AgentCapabilities at `GET {agent path}/capabilities`, as
// agui serve and the ADK integration serve them): a button beside the agent picker opens
// them; an agent that serves none (404, not JSON) shows no button.
let capsGen = 0;
async function loadCapabilities() {
  const gen = ++capsGen;
  ui.caps.hidden = true;
  ui.caps.open = false;
  delete ui.caps.dataset.loaded;
  let caps = null;
  try {
    const u = new URL(session.endpoint, location.href);
    u.pathname = u.pathname.replace(/\/+$/, "") + "/capabilities";
    u.search = "";
    u.hash = "";
    const res = await apiFetch(u.href);
    if (res.ok && /json/i.test(res.headers.get("content-type") ?? "")) {
      const body = await res.json();
      if (isObject(body)) caps = body;
    }
  } catch {}
  if (gen !== capsGen) return;
  ui.caps.dataset.loaded = caps ? "yes" : "no"; // tests wait for it
  if (!caps) return;
  renderCapabilities(ui.capsMenu, caps);
  const name = isObject(caps.identity) && typeof caps.identity.name === "string" && caps.identity.name !== "" ? caps.identity.name : null;
  ui.capsLabel.textContent = name ? truncate(name, 24) : "Capabilities";
  ui.caps.hidden = false;
}

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
  // "What to try" names the built-in demo agent's prompts: only for that agent.
  const here = agents.list.find((a) => resolveEndpoint(a.path) === session.endpoint);
  ui.tryPanel.hidden = !(here && here.kind === "demo");
  ui.tryPanel.dataset.agent = here ? here.kind ?? "" : "other";
  layout?.applyAll();
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

$("state-view-toggle").addEventListener("change", (e) => {
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

// The chat follows the last message unless the reader scrolls up; "↓ Latest" brings it back.
ui.chat.addEventListener("scroll", () => {
  const atBottom = ui.chat.scrollHeight - ui.chat.scrollTop - ui.chat.clientHeight < 40;
  session.stick = atBottom;
  if (atBottom) ui.jumpLatest.hidden = true;
}, { passive: true });
ui.jumpLatest.addEventListener("click", () => {
  session.stick = true;
  ui.jumpLatest.hidden = true;
  ui.chat.scrollTop = ui.chat.scrollHeight;
});

// Resizable panes (kept in localStorage).
layout = new Layout([
  { name: "threads", el: $("split-threads"), target: ui.layout, prop: "--threads-w", axis: "x", def: 240, min: 170, max: () => Math.min(520, innerWidth * 0.35), sign: 1 },
  { name: "side", el: $("split-side"), target: ui.layout, prop: "--side-w", axis: "x", def: () => Math.round(Math.min(560, Math.max(400, innerWidth * 0.34))), min: 320, max: () => Math.max(320, innerWidth - (ui.threadsPane.hidden ? 0 : ui.threadsPane.offsetWidth) - 380), sign: -1 },
  { name: "state", el: $("split-state"), target: ui.side, prop: "--state-h", axis: "y", def: 150, min: 56, max: () => Math.max(56, ui.side.clientHeight - (ui.tryPanel.hidden ? 0 : ui.tryPanel.offsetHeight + 10) - 330), sign: 1 },
  { name: "detail", el: $("split-detail"), target: ui.timelinePanel, prop: "--detail-h", axis: "y", def: () => Math.round(Math.max(200, Math.min(320, ui.timelinePanel.clientHeight * 0.5))), min: 100, max: () => Math.max(100, ui.timelinePanel.clientHeight - 170), sign: -1 },
]);
new ResizeObserver(() => layout.applyAll()).observe(ui.side);
ui.tryPanel.addEventListener("toggle", () => layout.applyAll());
try {
  if (localStorage.getItem("agui-try-folded") === "1") {
    tryCollapsed = true;
    ui.tryPanel.open = false;
  }
} catch {}

// For debugging from the devtools console (and the browser test).
window.aguiConsole = { session, threads, timeline, applyPatch, SseParser, layout, finder };

scheduleRender();
renderThreads();
ui.input.focus();
// The thread list; then the thread named in the address (#thread=ID), if any.
loadAgents();
loadCapabilities();
const initialThread = new URLSearchParams(location.hash.slice(1)).get("thread");
loadThreads().then((ok) => {
  if (!initialThread) return;
  if (ok && session.runNumber === 0 && !session.busy) openThread(initialThread);
  else if (!ok) setUrlThread(null);
});
