// The inspector under the timeline (browser only): the selected event's JSON, the
// verification rule it breaks (with the reference client's behaviour and a link to the
// rule), and time travel: the state change it made, the messages and pending interrupts
// right after it.

import { h } from "./dom.js";
import { diff } from "./patch.js";
import { jsonText, truncate, deepEqual } from "./util.js";

const TABS = ["event", "diff", "messages", "interrupts", "latency"];

export class Inspector {
  /** @param {Record<string, HTMLElement>} ui the inspector's elements (see index.html) */
  constructor(ui) {
    this.ui = ui;
    this.tab = "event";
    for (const b of ui.tabs.querySelectorAll("[data-tab]")) b.addEventListener("click", () => this.show(b.dataset.tab));
    this.show("event");
  }

  /** Switches tabs. */
  show(tab) {
    this.tab = tab;
    for (const b of this.ui.tabs.querySelectorAll("[data-tab]")) b.setAttribute("aria-selected", String(b.dataset.tab === tab));
    for (const t of TABS) this.ui[`${t}Panel`].hidden = t !== tab;
    this.onShow?.(tab);
  }

  /** Nothing selected: every tab says what it would show, and no tab keeps a count. */
  clear(title = "Click an event to see its JSON.") {
    this.ui.title.textContent = title;
    this.ui.json.textContent = "";
    this.ui.violation.hidden = true;
    this.ui.violation.replaceChildren();
    this.ui.diff.replaceChildren(h("p", { class: "muted placeholder" }, "Select an event to see the change it made."));
    this.ui.diff.dataset.changes = "";
    this.ui.messages.textContent = "Select an event to see the messages right after it.";
    this.ui.interrupts.textContent = "Select an event to see the interrupts pending right after it.";
    for (const b of this.ui.tabs.querySelectorAll("[data-tab]")) delete b.dataset.count;
    this.ui.root.dataset.at = "";
  }

  /** Shows a value that is not an event (a request, a note). */
  showValue(title, value) {
    this.clear();
    this.ui.title.textContent = title;
    this.ui.json.textContent = jsonText(value);
    this.show("event");
  }

  /**
   * Shows event `e` (a timeline entry) and, with `travel` = {before, after} (folds right
   * before and right after it), what it changed.
   */
  showEvent(e, title, travel) {
    const ui = this.ui;
    ui.root.dataset.at = String(e.i);
    ui.title.textContent = title;
    ui.json.textContent = jsonText(e.ev);
    const v = e.violation;
    ui.violation.hidden = !v;
    ui.violation.replaceChildren(...(v ? violationCard(v).filter(Boolean) : []));
    ui.violation.dataset.rule = v?.rule ?? "";
    if (!travel) return;
    const { before, after } = travel;
    const changes = diff(before.state, after.state);
    ui.diff.dataset.changes = String(changes.length);
    const msgs = messageChanges(before.messages, after.messages);
    ui.diff.replaceChildren(
      h("div", { class: "diff-head" }, changes.length ? `${changes.length} state change${changes.length === 1 ? "" : "s"}` : "The state did not change.",
        msgs.length ? ` · messages: ${msgs.map((m) => `${m.kind} ${truncate(m.id, 16)}`).join(", ")}` : ""),
      h("ul", { class: "diff-list", testid: "state-diff-list" },
        changes.map((c) => h("li", { class: `diff-${c.kind}`, testid: "state-diff-item", "data-kind": c.kind, "data-path": c.path },
          h("span", { class: "diff-kind" }, c.kind === "added" ? "+" : c.kind === "removed" ? "−" : "~"),
          h("code", { class: "diff-path" }, c.path || "(root)"),
          c.kind !== "added" ? h("span", { class: "diff-before" }, truncate(JSON.stringify(c.before), 80)) : null,
          c.kind === "changed" ? h("span", { class: "muted" }, " → ") : null,
          c.kind !== "removed" ? h("span", { class: "diff-after" }, truncate(JSON.stringify(c.after), 80)) : null))));
    ui.messages.textContent = jsonText(after.messages);
    ui.interrupts.textContent = after.pendingInterrupts.length ? jsonText(after.pendingInterrupts) : "No interrupt is pending.";
    ui.tabs.querySelector('[data-tab="interrupts"]').dataset.count = String(after.pendingInterrupts.length);
    ui.tabs.querySelector('[data-tab="diff"]').dataset.count = String(changes.length);
  }
}

/** Messages added, removed or changed between two lists (by id). */
function messageChanges(a, b) {
  const before = new Map(a.map((m) => [m.id, m]));
  const after = new Map(b.map((m) => [m.id, m]));
  const out = [];
  for (const [id, m] of after) {
    if (!before.has(id)) out.push({ kind: "+", id });
    else if (!deepEqual(before.get(id), m)) out.push({ kind: "~", id });
  }
  for (const id of before.keys()) if (!after.has(id)) out.push({ kind: "−", id });
  return out;
}

/** The card of a violation: rule, title, the engine's message, explanation, reference behaviour, link. */
export function violationCard(v) {
  return [
    h("div", { class: "violation-head" },
      h("span", { class: "violation-rule", testid: "violation-rule" }, `✖ ${v.rule}`),
      h("span", { class: "violation-title" }, v.title ?? "")),
    h("div", { class: "violation-message", testid: "violation-message" }, v.message),
    v.explanation ? h("div", { class: "violation-why", testid: "violation-why" }, v.explanation) : null,
    v.reference ? h("div", { class: "violation-ref", testid: "violation-reference" }, h("strong", null, "Reference client: "), v.reference) : null,
    v.restartedAt !== undefined ? h("div", { class: "muted" }, `Verification started again at event #${v.restartedAt} (the next run) after an earlier violation.`) : null,
    v.help ? h("a", { class: "violation-link", testid: "violation-link", href: v.help, target: "_blank", rel: "noopener" }, `Rule ${v.rule} in the rules table →`) : null,
  ];
}
