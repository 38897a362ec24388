// The event timeline (browser only): events grouped by run and, within a run, by subagent
// (both collapsible); each run's outcome, duration and event count; filters by family, a
// text search and "problems only"; violations and warnings marked on their rows. Rows have
// one fixed height, so a long timeline (a recording of thousands of events) is drawn as a
// window of the rows in view (virtualized).

import { h, reconcile, fmtMs } from "./dom.js";
import { category, summarize, FAMILIES } from "./events.js";
import { isObject, truncate } from "./util.js";
import { StreamIndex } from "./search.js";

/** The height of every timeline row, in px (style.css: `.timeline > li`). */
export const ROW_H = 22;
/** From this many rows on, only the rows in view (and a margin) are in the DOM. */
const VIRTUAL_FROM = 400;
const MARGIN_ROWS = 20;

/**
 * A run's group: `kind` "live" | "stored" | "recording"; `run` the console's run object
 * (status, outcome, t0/t1, n, id); `input` its RunAgentInput when known.
 */
function newGroup(key, kind, run, input, label) {
  return { key, kind, run, input, label, entries: [], subs: new Map(), collapsed: false, ts: [null, null] };
}

export class Timeline {
  /**
   * @param {object} o
   * @param {HTMLOListElement} o.list the <ol> rows go into
   * @param {HTMLElement} o.toolbar where the filters go
   * @param {() => boolean} o.follow whether to keep the newest row in view
   * @param {(entry) => void} o.onSelect an event row was chosen
   * @param {(group) => void} o.onSelectRun a run's header was chosen
   * @param {(note) => void} o.onSelectNote a note row was chosen
   * @param {(group) => void} o.onFork "fork" on a finished run
   * @param {(group) => void} o.onCompare "compare" on a run
   * @param {(group) => boolean} o.isPinned whether a run is the one pinned for comparison
   * @param {(group) => string} o.requestLabel the endpoint part of a run header
   */
  constructor(o) {
    Object.assign(this, o);
    this.groups = [];
    this.items = []; // {kind: "run", g} | {kind: "event", e} | {kind: "note", n}
    this.entries = []; // by event index
    this.notes = [];
    this.cache = new Map(); // row key -> {sig, node}
    this.selected = null; // {kind, id}
    this.filter = { hidden: new Set(), search: "", problems: false };
    this.groupSubagents = true;
    this.collapsed = new Set(); // keys of collapsed subagent groups
    this.queued = false;
    this.lastCount = 0;
    this.reveal = null; // a row key to scroll into view on the next draw
    this.streams = new StreamIndex(); // streamed text assembled, for search
    this.found = null; // {search, count, hits}: the events whose streamed text holds the search
    this.buildToolbar();
    this.list.addEventListener("scroll", () => {
      if (this.virtual) this.schedule();
    });
    this.list.addEventListener("keydown", (e) => this.onKey(e));
  }

  // ---- model ----------------------------------------------------------------

  /** Empties the timeline. */
  clear() {
    this.groups = [];
    this.items = [];
    this.entries = [];
    this.notes = [];
    this.cache.clear();
    this.selected = null;
    this.collapsed.clear();
    this.lastCount = 0;
    this.streams = new StreamIndex();
    this.found = null;
    this.list.scrollTop = 0;
    this.schedule();
  }

  /** Starts a run's group and returns it. */
  addRun(kind, run, input, label) {
    const g = newGroup(`g${this.groups.length}`, kind, run, input, label);
    this.groups.push(g);
    this.items.push({ kind: "run", g });
    this.schedule();
    return g;
  }

  /** The group events go into now (a group for events before any run is made on demand). */
  currentGroup() {
    return this.groups[this.groups.length - 1] ?? this.addRun("stored", null, null, "");
  }

  /** Lists event number `i` (its index in the session's history) with its time label. */
  addEvent(i, ev, label, warnings = []) {
    const g = this.currentGroup();
    const type = typeof ev?.type === "string" ? ev.type : "(not an event)";
    const sub = isObject(ev) && typeof ev.subagentRunId === "string" ? ev.subagentRunId : null;
    const e = { i, ev, type, family: category(type), sub, label, warnings, violation: null, g };
    this.entries[i] = e;
    g.entries.push(e);
    this.streams.add(i, ev);
    const t = isObject(ev) && Number.isFinite(ev.timestamp) ? ev.timestamp : null;
    if (t !== null) {
      if (g.ts[0] === null) g.ts[0] = t;
      g.ts[1] = t;
    }
    if (sub) {
      let s = g.subs.get(sub);
      if (!s) g.subs.set(sub, (s = { id: sub, name: sub, status: "running", entries: [] }));
      s.entries.push(e);
      if (type === "SUBAGENT_STARTED" && typeof ev.name === "string") s.name = ev.name;
      if (type === "SUBAGENT_FINISHED") s.status = isObject(ev.outcome) && ev.outcome.type === "suspended" ? "suspended" : "finished";
      if (type === "SUBAGENT_ERROR") s.status = "error";
    }
    this.items.push({ kind: "event", e });
    this.schedule();
    return e;
  }

  /** A note (a broken stream, an HTTP error) after the last row (outside any run when there is none). */
  addNote(kind, text, label) {
    const n = { n: this.notes.length, kind, text, label, g: this.groups[this.groups.length - 1] ?? null };
    this.notes.push(n);
    this.items.push({ kind: "note", n });
    this.schedule();
  }

  /** Marks violations: Map(event index -> violation), replacing earlier marks on those events. */
  setViolations(byIndex) {
    for (const [i, v] of byIndex) if (this.entries[i]) this.entries[i].violation = v;
    this.updateProblems();
    this.schedule();
  }

  /** Every event listed, in order. */
  events() {
    return this.entries.filter(Boolean).map((e) => e.ev);
  }

  // ---- toolbar --------------------------------------------------------------

  buildToolbar() {
    const tb = this.toolbar;
    this.search = h("input", { type: "search", class: "tl-search", testid: "timeline-search", placeholder: "Search events…", "aria-label": "Search the events (type, ids, content)" });
    this.search.addEventListener("input", () => {
      this.filter.search = this.search.value.trim().toLowerCase();
      this.schedule();
    });
    const chips = FAMILIES.map((f) => {
      const box = h("input", { type: "checkbox", checked: true, "data-family": f });
      box.addEventListener("change", () => {
        if (box.checked) this.filter.hidden.delete(f);
        else this.filter.hidden.add(f);
        this.schedule();
      });
      return h("label", { class: `tl-chip cat-${f}`, testid: "timeline-family", "data-family": f, title: `Show ${f} events` }, box, f);
    });
    const problems = h("input", { type: "checkbox", testid: "timeline-problems" });
    problems.addEventListener("change", () => {
      this.filter.problems = problems.checked;
      this.schedule();
    });
    const group = h("input", { type: "checkbox", checked: true, testid: "timeline-group-subagents" });
    group.addEventListener("change", () => {
      this.groupSubagents = group.checked;
      this.schedule();
    });
    this.verify = h("button", { type: "button", class: "btn small", testid: "verify-runs", title: "Verify every run with the engine (agui serve): violations are marked on their events" }, "Verify");
    this.verify.addEventListener("click", () => this.onVerify());
    this.jump = h("button", { type: "button", class: "btn small tl-jump", testid: "jump-violation", hidden: true, title: "Select the first event that breaks a verification rule" });
    this.jump.addEventListener("click", () => this.jumpToViolation());
    tb.replaceChildren(
      h("div", { class: "tl-tools-row" }, this.search,
        h("label", { class: "switch", title: "Only events with a violation or a warning" }, problems, " problems"),
        h("label", { class: "switch", title: "Gather each subagent's events under its own heading within a run" }, group, " by subagent"),
        this.verify, this.jump),
      h("div", { class: "tl-chips", role: "group", "aria-label": "Event families shown" }, chips));
  }

  updateProblems() {
    const n = this.entries.reduce((k, e) => k + (e?.violation ? 1 : 0), 0);
    this.jump.hidden = n === 0;
    this.jump.textContent = `✖ ${n} violation${n === 1 ? "" : "s"}: show`;
    this.jump.dataset.count = String(n);
  }

  /** Selects the first event with a violation (showing it whatever the filters). */
  jumpToViolation() {
    const e = this.entries.find((x) => x?.violation);
    if (!e) return;
    this.show(e);
    this.select(e);
  }

  /** Makes `e`'s row visible: unfolds its run and subagent group, clears filters hiding it. */
  show(e) {
    e.g.collapsed = false;
    if (e.sub) this.collapsed.delete(`${e.g.key}/${e.sub}`);
    if (!this.passes(e)) this.clearFilters();
    this.reveal = `ev:${e.i}`;
    this.schedule();
  }

  // ---- rows -----------------------------------------------------------------

  /** Whether any filter is on. */
  filtering() {
    const f = this.filter;
    return f.hidden.size > 0 || f.problems || f.search !== "";
  }

  passes(e) {
    const f = this.filter;
    if (f.hidden.has(e.family)) return false;
    if (f.problems && !e.violation && e.warnings.length === 0) return false;
    if (f.search) {
      e.hay ??= `${e.type} ${e.label} ${JSON.stringify(e.ev)}`.toLowerCase();
      if (!e.hay.includes(f.search) && !this.streamHits().has(e.i)) return false;
    }
    return true;
  }

  /** The events whose streamed text (assembled across deltas) holds the search. */
  streamHits() {
    const n = this.entries.length;
    if (!this.found || this.found.search !== this.filter.search || this.found.count !== n) {
      this.found = { search: this.filter.search, count: n, hits: this.streams.find(this.filter.search) };
    }
    return this.found.hits;
  }

  /** The rows shown, in order: [{key, kind, ...}]. */
  rows() {
    const rows = [];
    let g = null;
    let done = new Set(); // subagent groups already listed in this run
    for (const it of this.items) {
      if (it.kind === "run") {
        g = it.g;
        done = new Set();
        rows.push({ key: `run:${g.key}`, kind: "run", g });
        continue;
      }
      if (g?.collapsed) continue;
      if (it.kind === "note") {
        rows.push({ key: `note:${it.n.n}`, kind: "note", n: it.n });
        continue;
      }
      const e = it.e;
      if (this.groupSubagents && e.sub) {
        if (done.has(e.sub)) continue;
        done.add(e.sub);
        const s = e.g.subs.get(e.sub);
        const shown = s.entries.filter((x) => this.passes(x));
        if (shown.length === 0) continue;
        const key = `${e.g.key}/${e.sub}`;
        const collapsed = this.collapsed.has(key);
        rows.push({ key: `sub:${key}`, kind: "sub", s, g: e.g, subKey: key, collapsed, count: shown.length });
        if (!collapsed) for (const x of shown) rows.push({ key: `ev:${x.i}`, kind: "event", e: x, inSub: true });
        continue;
      }
      if (this.passes(e)) rows.push({ key: `ev:${e.i}`, kind: "event", e, inSub: false });
    }
    if (!this.filtering()) return rows;
    // Filtered: a run none of whose events is shown is left out; nothing shown at all
    // says so (rather than a list of empty runs).
    const kept = rows.filter((r, k) => r.kind !== "run" || (k + 1 < rows.length && rows[k + 1].kind !== "run"));
    if (kept.length === 0 && this.items.length > 0) return [{ key: "empty", kind: "empty" }];
    return kept;
  }

  schedule() {
    if (this.queued) return;
    this.queued = true;
    const go = () => {
      if (!this.queued) return;
      this.queued = false;
      this.draw();
    };
    requestAnimationFrame(go);
    setTimeout(go, 100); // rAF does not fire in background tabs
  }

  /** Draws now (the rows in view, when there are many). */
  draw() {
    const rows = this.rows();
    this.shownRows = rows;
    const list = this.list;
    const virtual = rows.length > VIRTUAL_FROM;
    this.virtual = virtual;
    list.classList.toggle("virtual", virtual);
    list.dataset.rows = String(rows.length);
    const grew = rows.length > this.lastCount;
    this.lastCount = rows.length;
    const viewH = list.clientHeight || 400;
    let top = list.scrollTop;
    let revealAt = -1;
    if (this.reveal) {
      revealAt = rows.findIndex((r) => r.key === this.reveal);
      this.reveal = null;
      if (revealAt >= 0 && (revealAt * ROW_H < top || (revealAt + 1) * ROW_H > top + viewH)) top = Math.max(0, revealAt * ROW_H - viewH / 2);
    } else if (grew && this.follow()) top = Math.max(0, rows.length * ROW_H - viewH);
    let from = 0;
    let to = rows.length;
    if (virtual) {
      from = Math.max(0, Math.floor(top / ROW_H) - MARGIN_ROWS);
      to = Math.min(rows.length, Math.ceil((top + viewH) / ROW_H) + MARGIN_ROWS);
    }
    const nodes = [];
    if (virtual) nodes.push(this.spacer("top", from * ROW_H));
    for (let k = from; k < to; k++) nodes.push(this.node(rows[k]));
    if (virtual) nodes.push(this.spacer("bottom", (rows.length - to) * ROW_H));
    reconcile(list, nodes);
    if (top !== list.scrollTop) list.scrollTop = top;
  }

  spacer(which, px) {
    this[`${which}Spacer`] ??= h("li", { class: "tl-spacer", "aria-hidden": "true" });
    const s = this[`${which}Spacer`];
    s.style.height = `${px}px`;
    return s;
  }

  isSelected(kind, id) {
    return this.selected?.kind === kind && this.selected.id === id;
  }

  node(r) {
    let sig;
    let build;
    if (r.kind === "event") {
      const e = r.e;
      sig = `${this.isSelected("event", e.i)}|${e.violation?.rule ?? ""}|${e.warnings.length}|${r.inSub}`;
      build = () => this.eventRow(e, r.inSub);
    } else if (r.kind === "run") {
      const g = r.g;
      const info = this.runInfo(g);
      sig = JSON.stringify([info, g.collapsed, this.isSelected("run", g.key), this.isPinned?.(g) ?? false]);
      build = () => this.runRow(g, info);
    } else if (r.kind === "empty") {
      sig = JSON.stringify([this.filter.search, this.filter.problems, [...this.filter.hidden]]);
      build = () => this.emptyRow();
    } else if (r.kind === "sub") {
      sig = JSON.stringify([r.s.name, r.s.status, r.count, r.collapsed]);
      build = () => this.subRow(r);
    } else {
      sig = String(this.isSelected("note", r.n.n));
      build = () => this.noteRow(r.n);
    }
    let c = this.cache.get(r.key);
    if (!c || c.sig !== sig) {
      c = { sig, node: build() };
      this.cache.set(r.key, c);
    }
    return c.node;
  }

  /** What a run's header says: status, duration, event count, whether it can be forked. */
  runInfo(g) {
    const run = g.run;
    const status = run?.status ?? "unknown";
    let ms = null;
    if (g.kind === "live" && run) ms = (run.t1 ?? performance.now()) - run.t0;
    else if (g.ts[0] !== null && g.ts[1] !== null) ms = g.ts[1] - g.ts[0];
    const outcome = run?.terminal === "RUN_FINISHED" ? run.outcome?.type ?? "success" : run?.terminal === "RUN_ERROR" ? "error" : status;
    return { status, outcome, ms: ms === null ? null : Math.round(ms), count: g.entries.length, fork: run?.terminal === "RUN_FINISHED", verified: run?.verified ?? "" };
  }

  runRow(g, info) {
    const run = g.run;
    const n = run?.n ?? "?";
    const resume = Array.isArray(g.input?.resume);
    const what = g.kind === "live" ? (resume ? "POST (resume)" : "POST") : g.kind === "stored" ? (resume ? "STORED (resume)" : "STORED") : "RECORDED";
    const toggle = h("button", { type: "button", class: "tl-collapse", testid: "timeline-collapse", "aria-expanded": String(!g.collapsed), "aria-label": `${g.collapsed ? "Expand" : "Collapse"} run ${n}` }, g.collapsed ? "▸" : "▾");
    toggle.addEventListener("click", () => {
      g.collapsed = !g.collapsed;
      this.schedule();
    });
    const head = h("button", { type: "button", class: "tl-row", testid: "timeline-request", "aria-selected": String(this.isSelected("run", g.key)), title: g.kind === "stored" ? "A stored run: the thread's events as the server keeps them" : undefined },
      h("span", { class: "tl-time" }, g.label),
      h("span", { class: "tl-type cat-request" }, what),
      h("span", { class: "tl-sum" }, `run ${n} · ${truncate(this.requestLabel(g), 40)}`));
    head.addEventListener("click", () => {
      this.selected = { kind: "run", id: g.key };
      this.schedule();
      this.onSelectRun(g);
    });
    const mark = { ok: ["✓", "verifies: no rule broken"], violation: ["✖", "breaks a verification rule"], pending: ["…", "being verified"], unavailable: ["", ""] }[info.verified];
    const meta = h("span", { class: "tl-run-meta", testid: "run-meta", "data-outcome": info.outcome, "data-events": String(info.count), "data-verified": info.verified },
      mark && mark[0] ? h("span", { class: `tl-verified v-${info.verified}`, title: mark[1] }, mark[0]) : null,
      h("span", { class: `pill ${info.outcome}` }, info.outcome),
      info.ms !== null ? h("span", null, fmtMs(info.ms)) : null,
      h("span", null, `${info.count} ev`));
    const fork = info.fork ? h("button", { type: "button", class: "btn small tl-fork", testid: "fork-run", title: "Fork: a new thread whose history is the conversation up to the end of this run" }, "Fork") : null;
    fork?.addEventListener("click", () => this.onFork(g));
    const pinned = this.isPinned?.(g) ?? false;
    const compare = run && info.status !== "running" ? h("button", { type: "button", class: "btn small tl-compare", testid: "compare-run", "aria-pressed": String(pinned), title: pinned ? "This run is pinned for comparison: choose Compare on another run (of any thread or recording)" : "Compare this run with another: pin it, then choose Compare on the other run" }, "⇄") : null;
    compare?.addEventListener("click", () => this.onCompare?.(g));
    const attrs = { class: `tl-run${g.kind === "stored" ? " stored" : ""}`, testid: "timeline-run", "data-run-id": run?.id ?? "", "data-status": info.status, "data-stored": g.kind === "stored" ? "true" : undefined, "data-recorded": g.kind === "recording" ? "true" : undefined };
    return h("li", attrs, toggle, head, meta, compare, fork);
  }

  /** The row shown when the filters leave no event. */
  emptyRow() {
    const f = this.filter;
    const what = f.search ? `No event matches “${truncate(f.search, 60)}”` : "No event matches the filters";
    const extra = [f.problems ? "problems only" : null, f.hidden.size ? `${f.hidden.size} famil${f.hidden.size === 1 ? "y" : "ies"} hidden` : null].filter(Boolean);
    const clear = h("button", { type: "button", class: "btn small", testid: "timeline-clear-filters" }, "Clear filters");
    clear.addEventListener("click", () => this.clearFilters());
    return h("li", { class: "tl-empty", testid: "timeline-empty", role: "status" },
      h("span", null, what + (extra.length ? ` (${extra.join(", ")})` : "") + "."), clear);
  }

  /** Every filter off. */
  clearFilters() {
    this.filter = { hidden: new Set(), search: "", problems: false };
    this.search.value = "";
    for (const b of this.toolbar.querySelectorAll("input[data-family]")) b.checked = true;
    this.toolbar.querySelector('[data-testid="timeline-problems"]').checked = false;
    this.schedule();
  }

  subRow(r) {
    const toggle = h("button", { type: "button", class: "tl-collapse", testid: "timeline-collapse", "aria-expanded": String(!r.collapsed), "aria-label": `${r.collapsed ? "Expand" : "Collapse"} subagent ${r.s.name}` }, r.collapsed ? "▸" : "▾");
    toggle.addEventListener("click", () => {
      if (this.collapsed.has(r.subKey)) this.collapsed.delete(r.subKey);
      else this.collapsed.add(r.subKey);
      this.schedule();
    });
    return h("li", { class: "tl-sub", testid: "timeline-subagent", "data-subagent-run-id": r.s.id, "data-status": r.s.status },
      toggle,
      h("span", { class: "tl-sub-name" }, "◎ ", r.s.name),
      h("span", { class: `pill ${r.s.status}` }, r.s.status),
      h("span", { class: "muted" }, `${r.count} ev · ${truncate(r.s.id, 24)}`));
  }

  eventRow(e, inSub) {
    const v = e.violation;
    const cls = `tl-row${e.warnings.length ? " warn" : ""}${v ? " has-violation" : ""}${inSub ? " in-sub" : ""}`;
    const ev = e.ev;
    const title = [v ? `${v.rule}: ${v.message}` : null, ...e.warnings].filter(Boolean).join("\n") || undefined;
    const btn = h("button", { type: "button", class: cls, testid: "timeline-event", "data-type": e.type, "data-index": String(e.i), "aria-selected": String(this.isSelected("event", e.i)), title },
      h("span", { class: "tl-time" }, e.label),
      h("span", { class: `tl-type cat-${e.family}` }, e.type),
      h("span", { class: "tl-sum" },
        e.sub && !e.type.startsWith("SUBAGENT_") && !inSub ? h("span", { class: "tl-tag" }, e.sub) : null,
        isObject(ev) ? summarize(ev) : String(ev?.error ?? "")),
      v ? h("span", { class: "tl-violation", testid: "violation-badge", "data-rule": v.rule }, `✖ ${v.rule}`)
        : e.warnings.length ? h("span", { class: "tl-warn", "aria-label": "warning" }, "⚠") : null);
    btn.addEventListener("click", () => this.select(e));
    return h("li", null, btn);
  }

  noteRow(n) {
    const btn = h("button", { type: "button", class: `tl-row tl-${n.kind}`, testid: "timeline-note", "aria-selected": String(this.isSelected("note", n.n)) },
      h("span", { class: "tl-time" }, n.label),
      h("span", { class: "tl-type cat-error" }, n.kind),
      h("span", { class: "tl-sum" }, truncate(n.text, 120)));
    btn.addEventListener("click", () => {
      this.selected = { kind: "note", id: n.n };
      this.schedule();
      this.onSelectNote(n);
    });
    return h("li", null, btn);
  }

  /** Selects an event row (and tells the app). */
  select(e) {
    this.selected = { kind: "event", id: e.i };
    this.reveal = `ev:${e.i}`;
    this.schedule();
    this.onSelect(e);
  }

  /** Arrow keys move the selection between the event rows shown. */
  onKey(e) {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
    const rows = (this.shownRows ?? []).filter((r) => r.kind === "event");
    if (rows.length === 0) return;
    e.preventDefault();
    const at = this.selected?.kind === "event" ? rows.findIndex((r) => r.e.i === this.selected.id) : -1;
    const next = at < 0 ? (e.key === "ArrowDown" ? 0 : rows.length - 1) : Math.max(0, Math.min(rows.length - 1, at + (e.key === "ArrowDown" ? 1 : -1)));
    this.select(rows[next].e);
    requestAnimationFrame(() => this.list.querySelector('[aria-selected="true"]')?.focus({ preventScroll: true }));
  }
}
