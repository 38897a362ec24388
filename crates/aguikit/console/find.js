// Find in the messages (browser only): full-text search over the conversation as it is
// shown, every message assembled (streamed text whole, however it was split into deltas).
// Matches are highlighted with the CSS Custom Highlight API (ranges over the text nodes
// already drawn: the chat's DOM is not changed), counted, and stepped through.

/** Text a person reads in the chat: message text, tool calls, reasoning, activities, interrupts. */
const SCOPE = ".msg .text, .msg pre, .tool-call pre, .tool-call .result, .activity, .interrupt-message, .subagent-name";

export class Finder {
  /**
   * @param {object} o
   * @param {HTMLElement} o.chat the conversation
   * @param {HTMLInputElement} o.input the search field
   * @param {HTMLElement} o.count where "N of M" goes
   * @param {HTMLButtonElement} o.prev
   * @param {HTMLButtonElement} o.next
   */
  constructor(o) {
    Object.assign(this, o);
    this.matches = []; // Range[]
    this.current = -1;
    this.supported = typeof CSS !== "undefined" && "highlights" in CSS && typeof Highlight === "function";
    this.input.addEventListener("input", () => {
      this.current = -1;
      this.refresh(true);
    });
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") {
        e.preventDefault();
        this.step(e.shiftKey ? -1 : 1);
      } else if (e.key === "Escape") {
        this.input.value = "";
        this.refresh();
      }
    });
    this.prev.addEventListener("click", () => this.step(-1));
    this.next.addEventListener("click", () => this.step(1));
  }

  get query() {
    return this.input.value.trim().toLowerCase();
  }

  /** Finds again (the chat was redrawn); `reveal` scrolls to the current match. */
  refresh(reveal = false) {
    const q = this.query;
    this.matches = [];
    if (q) {
      for (const el of this.chat.querySelectorAll(SCOPE)) {
        if (el.closest("[hidden]")) continue;
        // Nested scopes (a <pre> in a .text) are searched once, by the outer one.
        if (el.parentElement?.closest(SCOPE) && this.chat.contains(el.parentElement.closest(SCOPE))) continue;
        this.collect(el, q);
      }
    }
    if (this.current >= this.matches.length) this.current = this.matches.length - 1;
    if (this.current < 0 && this.matches.length) this.current = 0;
    this.paint(reveal);
  }

  /** The ranges of `q` in `el`'s text, found in its text nodes joined (a match may span nodes). */
  collect(el, q) {
    const nodes = [];
    let text = "";
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.data === "") continue;
      nodes.push([n, text.length]);
      text += n.data;
    }
    const lower = text.toLowerCase();
    const hay = lower.length === text.length ? lower : text;
    const at = (pos) => {
      let k = nodes.length - 1;
      while (k > 0 && nodes[k][1] > pos) k--;
      return [nodes[k][0], pos - nodes[k][1]];
    };
    for (let i = hay.indexOf(q); i >= 0 && nodes.length; i = hay.indexOf(q, i + q.length)) {
      const r = document.createRange();
      const [sn, so] = at(i);
      const [en, eo] = at(i + q.length - 1);
      r.setStart(sn, so);
      r.setEnd(en, eo + 1);
      this.matches.push(r);
    }
  }

  step(d) {
    if (!this.matches.length) return this.refresh(true);
    this.current = (this.current + d + this.matches.length) % this.matches.length;
    this.paint(true);
  }

  paint(reveal) {
    const q = this.query;
    const n = this.matches.length;
    const messages = new Set(this.matches.map((r) => r.startContainer.parentElement?.closest("[data-message-id]")).filter(Boolean));
    this.count.textContent = !q ? "" : n ? `${this.current + 1} of ${n}` : "no match";
    this.count.classList.toggle("none", Boolean(q) && n === 0);
    this.count.dataset.matches = String(n);
    this.count.dataset.messages = String(messages.size);
    this.prev.disabled = this.next.disabled = n === 0;
    for (const old of this.chat.querySelectorAll("[data-find-current]")) delete old.dataset.findCurrent;
    const cur = n ? this.matches[this.current] : null;
    const host = cur?.startContainer.parentElement?.closest("[data-message-id], .card, .tool-call");
    if (host) host.dataset.findCurrent = "true";
    if (this.supported) {
      CSS.highlights.set("agui-find", new Highlight(...this.matches.filter((r) => r !== cur)));
      if (cur) CSS.highlights.set("agui-find-current", new Highlight(cur));
      else CSS.highlights.delete("agui-find-current");
    }
    if (reveal && cur) {
      const rect = cur.getBoundingClientRect();
      const box = this.chat.getBoundingClientRect();
      if (rect.top < box.top + 20 || rect.bottom > box.bottom - 20) this.chat.scrollTop += rect.top - box.top - box.height / 3;
    }
  }
}
