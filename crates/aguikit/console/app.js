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
// exports as JSON Lines (redacted by default); any finished run can be forked.
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
import { redactEvent } from "./redact.js";
import { parseRecording, toJsonLines } from "./recording.js";
import { h, reconcile, fmtMs, fmtAgo } from "./dom.js";
import { renderChatInto, clearChatCache, jsonTree, renderStepChips, isExpired } from "./render.js";
import { Timeline } from "./timeline.js";
import { Inspector } from "./inspector.js";
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
  forkedFrom: null, // {threadId, run, messages} after "Fork"
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
});

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
  onVerify: () => verifyRuns(timeline.groups.map((g) => g.run).filter(Boolean)),
  requestLabel: (g) => (g.kind === "live" ? session.endpoint.replace(location.origin, "") : g.run?.id ?? ""),
});

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
  renderChatInto(ui.chat, ui.empty, travel ? travel.after : session.fold, {
    busy: session.busy,
    readOnly: Boolean(travel || session.recording),
    travel: Boolean(travel),
    onAnswer: answerInterrupts,
    onA2uiAction: sendA2uiAction,
  });
  renderState();
  renderStatus();
  renderBanners();
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
  ui.hint.textContent = rec
    ? "A recording is open (read-only): fork one of its finished runs to continue from there, or start a new thread."
    : pending && !session.busy ? `The agent is waiting for an answer to ${pending === 1 ? "an interrupt" : pending + " interrupts"}: use Approve or Deny.` : "";
  ui.thread.textContent = session.threadId.slice(0, 8);
  ui.thread.title = `thread ${session.threadId}${opened?.title ? "\n" + opened.title : ""}`;
  ui.thread.dataset.threadId = session.threadId;
}

function renderBanners() {
  const rec = session.recording;
  ui.recordingBanner.hidden = !rec;
  if (rec) {
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
  if (f) ui.forkBanner.textContent = `Forked from thread ${f.threadId.slice(0, 8)} after run ${f.run}: this new thread starts with its ${f.messages} message${f.messages === 1 ? "" : "s"} and its state. Send a message to continue it differently.`;
  const t = session.travel;
  ui.travelBanner.hidden = !t;
  if (t) {
    const e = timeline.entries[t.index];
    ui.travelBanner.dataset.index = String(t.index);
    ui.travelText.textContent = `Time travel: the conversation right after ${e?.label ?? "#" + t.index} ${e?.type ?? ""}${e?.violation ? ` (breaks ${e.violation.rule})` : ""}`;
  }
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
  const runId = uuid();
  const input = buildInput(runId, resume, forwardedProps);
  const controller = new AbortController();
  const run = newRun(runId, controller, { live: true });
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
  const f = session.fold;
  const i = session.history.record(f, ev);
  f.run = run;
  const warnings = f.push(ev);
  run.indices.push(i);
  timeline.addEvent(i, ev, timeLabel, warnings);
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

function threadItem(t, current) {
  const title = typeof t.title === "string" && t.title !== "" ? t.title : null;
  const runs = Number(t.runCount) || 0;
  const status = typeof t.lastStatus === "string" ? t.lastStatus : "new";
  const when = Number(t.updatedMs) || 0;
  const label = title ?? `thread ${t.threadId.slice(0, 8)}`;
  return h("li", { class: "thread-item", testid: "thread-item", "data-thread-id": t.threadId, "data-status": status, "aria-current": current ? "true" : undefined },
    h("button", { type: "button", class: "thread-open", testid: "thread-open", title: `${label}\nthread ${t.threadId}`, onclick: () => openThread(t.threadId, t.owner) },
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
  reconcile(ui.threadList, nodes);
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
    threadId, fold: new Fold(), history: new History(),
    run: null, runNumber: 0, busy: false, controller: null, loading: null, opened: null,
    recording: null, forkedFrom: null, travel: null,
  });
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
  Object.assign(session, { busy: false, controller: null, loading: null, run: null, opened: { threadId, title, runs, events: load.events, problem } });
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
    session.recording = { name: file.name, format: "?", events: 0, runs: 0, violations: 0, verified: false, note: e.message };
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

/** Downloads the thread's events (as received) as JSON Lines, redacted unless unticked. */
function exportThread() {
  const redact = ui.exportRedact.checked;
  const events = timeline.events();
  const text = toJsonLines(redact ? events.map(redactEvent) : events);
  const base = session.recording ? session.recording.name.replace(/\.[^.]*$/, "") : `agui-thread-${session.threadId.slice(0, 8)}`;
  const a = h("a", { href: URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" })), download: `${base}${redact ? "-redacted" : ""}.jsonl`, hidden: true });
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
  const from = { threadId: session.threadId, run: g.run?.n ?? "?" };
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
  startRun({ text });
}

$("composer").addEventListener("submit", (e) => {
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
if (agentParam) ui.tryPanel.open = false; // inspecting someone else's agent

// For debugging from the devtools console (and the browser test).
window.aguiConsole = { session, threads, timeline, applyPatch, SseParser };

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
