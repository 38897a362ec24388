// Resizable panes (browser only): splitters between the thread list, the chat and the
// inspector column, and between the state, the timeline and the event pane. Each is
// dragged with the pointer or moved with the arrow keys (Home and End for its limits,
// Enter or a double click for its default); sizes are kept in localStorage, so a reload
// keeps them.

const KEY = "agui-layout";

/**
 * Splitter definitions: `name` (its data-testid is `split-NAME`), the CSS custom property
 * it sets on `target`, the axis, its default, limits in px (numbers or functions of the
 * container's size), and `sign` (+1: dragging right or down grows the pane).
 */
export class Layout {
  /** @param {Array<{name, el, target, prop, axis, def, min, max, sign}>} splits */
  constructor(splits) {
    this.splits = splits;
    this.sizes = {};
    try {
      const saved = JSON.parse(localStorage.getItem(KEY) ?? "{}");
      if (saved && typeof saved === "object") this.sizes = saved;
    } catch {}
    for (const s of splits) this.wire(s);
    this.applyAll();
    window.addEventListener("resize", () => this.applyAll());
  }

  limits(s) {
    const v = (x) => (typeof x === "function" ? x() : x);
    const min = v(s.min);
    return [min, Math.max(min, v(s.max))];
  }

  size(s) {
    const n = Number(this.sizes[s.name]);
    return Number.isFinite(n) ? n : typeof s.def === "function" ? s.def() : s.def;
  }

  /** Sets pane `s` to `px` (clamped), now and for later visits. */
  set(s, px, save = true) {
    const [min, max] = this.limits(s);
    const v = Math.round(Math.min(max, Math.max(min, px)));
    this.sizes[s.name] = v;
    this.apply(s);
    if (save) this.save();
  }

  reset(s) {
    delete this.sizes[s.name];
    this.apply(s);
    this.save();
  }

  save() {
    try {
      localStorage.setItem(KEY, JSON.stringify(this.sizes));
    } catch {}
  }

  apply(s) {
    const [min, max] = this.limits(s);
    const v = Math.round(Math.min(max, Math.max(min, this.size(s))));
    s.target.style.setProperty(s.prop, `${v}px`);
    s.el.setAttribute("aria-valuenow", String(v));
    s.el.setAttribute("aria-valuemin", String(Math.round(min)));
    s.el.setAttribute("aria-valuemax", String(Math.round(max)));
    s.el.dataset.size = String(v);
  }

  applyAll() {
    for (const s of this.splits) this.apply(s);
  }

  wire(s) {
    const el = s.el;
    el.setAttribute("role", "separator");
    el.setAttribute("tabindex", "0");
    el.setAttribute("aria-orientation", s.axis === "x" ? "vertical" : "horizontal");
    el.title = `Drag to resize (arrow keys too; double-click for the default size)`;
    el.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      e.preventDefault();
      el.setPointerCapture(e.pointerId);
      const start = s.axis === "x" ? e.clientX : e.clientY;
      const from = this.size(s);
      el.classList.add("dragging");
      document.body.classList.add(s.axis === "x" ? "resizing-x" : "resizing-y");
      const move = (m) => {
        const at = s.axis === "x" ? m.clientX : m.clientY;
        this.set(s, from + s.sign * (at - start), false);
      };
      const up = () => {
        el.releasePointerCapture(e.pointerId);
        el.removeEventListener("pointermove", move);
        el.removeEventListener("pointerup", up);
        el.removeEventListener("pointercancel", up);
        el.classList.remove("dragging");
        document.body.classList.remove("resizing-x", "resizing-y");
        this.save();
      };
      el.addEventListener("pointermove", move);
      el.addEventListener("pointerup", up);
      el.addEventListener("pointercancel", up);
    });
    el.addEventListener("dblclick", () => this.reset(s));
    el.addEventListener("keydown", (e) => {
      const step = e.shiftKey ? 64 : 16;
      const grow = s.axis === "x" ? { ArrowRight: 1, ArrowLeft: -1 } : { ArrowDown: 1, ArrowUp: -1 };
      if (e.key in grow) this.set(s, this.size(s) + s.sign * grow[e.key] * step);
      else if (e.key === "Home") this.set(s, this.limits(s)[0]);
      else if (e.key === "End") this.set(s, this.limits(s)[1]);
      else if (e.key === "Enter") this.reset(s);
      else return;
      e.preventDefault();
    });
  }
}
