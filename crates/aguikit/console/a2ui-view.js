// Drawing A2UI surfaces (browser only; the pure part is a2ui.js). An `a2ui-surface` activity
// becomes a card: its lifecycle (building, retrying, failed), then each surface drawn from
// the basic catalog's components, with the data model bound both ways (inputs write to the
// surface's local data model and everything bound to it follows), buttons that send their
// action back as a new run, a placeholder naming the rule wherever the surface does not
// validate, and the raw JSON (data model, operations) behind a toggle.
//
// Untrusted content: text goes in through text nodes only (h() and textContent), URLs
// through safeUrl (http(s), and data: images), icons are the console's own drawings or
// plain SVG path data; no markup is ever parsed from the content.

import { h } from "./dom.js";
import { jsonText } from "./util.js";
import * as A from "./a2ui.js";
import { ICONS, svgIcon } from "./a2ui-icons.js";

/** Per activity (message id): the user's edits and what the UI remembers across redraws. */
const stores = new Map();

/** Forgets every surface's local state (a new thread or recording). */
export function resetSurfaces() {
  stores.clear();
}

function storeFor(id) {
  let s = stores.get(id);
  if (!s) {
    s = { edits: new A.LocalEdits(), ui: new Map(), touched: new Set(), sent: null, raw: false };
    stores.set(id, s);
  }
  return s;
}

const RULES_HREF = (id) => `rules#${encodeURIComponent(id)}`;

/** A rule badge: its id, linking to the rules page. */
function ruleLink(id) {
  return h("a", { class: "a2-rule", href: RULES_HREF(id), target: "_blank", rel: "noopener", title: `${id}: ${A.ruleOf(id)?.title ?? ""} (the rules page)`, testid: "a2ui-rule" }, id);
}

/** The placeholder shown where something does not validate: the rule, what it means, what exactly. */
function placeholder(v, what) {
  const r = A.ruleOf(v.rule);
  return h("div", { class: "a2-placeholder", role: "note", testid: "a2ui-placeholder", "data-rule": v.rule, "data-component-id": v.componentId ?? "" },
    h("div", { class: "a2-ph-head" },
      h("span", { class: "a2-ph-mark", "aria-hidden": "true" }, "!"),
      h("span", { class: "a2-ph-what" }, what ?? "Cannot show this part"),
      ruleLink(v.rule),
      h("span", { class: "a2-ph-title" }, r?.title ?? "")),
    h("div", { class: "a2-ph-msg", testid: "a2ui-placeholder-message" }, v.message),
    r ? h("div", { class: "a2-ph-why" }, r.explanation) : null);
}

// ---------------------------------------------------------------------------
// The activity card
// ---------------------------------------------------------------------------

/**
 * Draws one `a2ui-surface` activity message. `ctx`: {busy, readOnly, travel,
 * onA2uiAction(userAction, surface)}; `tools`: {jsonTree}.
 */
export function renderA2uiActivity(m, base, ctx, tools) {
  const frozen = Boolean(ctx.travel); // the surface as the agent had sent it at that point
  const store = frozen ? { edits: new A.LocalEdits(), ui: new Map(), touched: new Set(), sent: null, raw: storeFor(m.id).raw } : storeFor(m.id);
  const content = m.content;
  const ops = A.isObjectLike(content) && Array.isArray(content[A.OPERATIONS_KEY]) ? content[A.OPERATIONS_KEY] : [];
  const edits = frozen ? [] : store.edits.sync(ops);
  const read = A.readActivity(content, { edits });
  const errors = read.violations.filter((v) => v.severity === "error");
  const status = read.status?.kind ?? (read.surfaces.length ? "ready" : read.deleted.length ? "deleted" : errors.length ? "invalid" : "empty");

  const card = h("div", { ...base, class: `a2ui status-${status}`, testid: "a2ui-activity", "data-activity-type": m.activityType, "data-status": status, "data-valid": String(errors.length === 0), "aria-label": "Generated interface" });
  const views = [];
  const rawPanel = h("div", { class: "a2ui-raw", testid: "a2ui-raw", hidden: !store.raw });
  const drawRaw = () => {
    if (rawPanel.hidden) return;
    rawPanel.replaceChildren(
      ...views.map((v) => h("div", { class: "a2ui-raw-part" },
        h("div", { class: "card-label" }, `data model · ${v.surface.id}`),
        h("pre", { class: "json", testid: "a2ui-data", "data-surface-id": v.surface.id }, jsonText(v.data)))),
      h("div", { class: "a2ui-raw-part" },
        h("div", { class: "card-label" }, "activity content (as the agent sent it)"),
        tools.jsonTree(content, { id: `a2ui:${m.id}`, testid: "a2ui-content" })));
  };
  const rawToggle = h("button", { type: "button", class: "a2ui-toggle", testid: "a2ui-raw-toggle", "aria-pressed": String(store.raw), title: "Show the data model and the operations as JSON" }, "{ } JSON");
  rawToggle.addEventListener("click", () => {
    store.raw = !store.raw;
    rawPanel.hidden = !store.raw;
    rawToggle.setAttribute("aria-pressed", String(store.raw));
    drawRaw();
  });

  const first = read.surfaces[0];
  const theme = first?.theme;
  const agentName = typeof theme?.agentDisplayName === "string" ? theme.agentDisplayName : null;
  const iconUrl = typeof theme?.iconUrl === "string" ? A.safeUrl(theme.iconUrl, "image") : null;
  card.append(h("div", { class: "a2ui-head" },
    iconUrl ? h("img", { class: "a2ui-agent-icon", src: iconUrl, alt: "" }) : h("span", { class: "a2ui-mark", "aria-hidden": "true" }, "◆"),
    h("span", { class: "a2ui-title" }, agentName ?? "Interface"),
    h("span", { class: "a2ui-ids", testid: "a2ui-surface-ids" }, read.surfaces.map((s) => s.id).join(", ")),
    frozen ? h("span", { class: "pill", title: "Time travel: the surface as it was right after the selected event; inputs are frozen" }, "as it was") : null,
    h("span", { class: "a2ui-spacer" }),
    errors.length ? h("span", { class: "pill error", testid: "a2ui-problem-count" }, `${errors.length} problem${errors.length === 1 ? "" : "s"}`) : null,
    rawToggle));

  if (read.status) card.append(renderLifecycle(read.status, read.surfaces.length > 0));

  for (const s of read.surfaces) {
    const known = A.catalogFor(s.catalogId);
    const view = new SurfaceView({ surface: s, catalog: known.catalog, store, frozen, ctx, messageId: m.id, onData: drawRaw });
    views.push(view);
    const box = h("section", { class: "a2ui-surface", testid: "a2ui-surface", "data-surface-id": s.id, "aria-label": `Surface ${s.id}` });
    if (!known.known && s.catalogId) box.append(h("div", { class: "a2ui-note", testid: "a2ui-note" }, `The console does not know the catalog ${s.catalogId}: its components are drawn from the basic catalog where the names match.`));
    const primary = typeof s.theme?.primaryColor === "string" && /^#[0-9a-fA-F]{6}$/.test(s.theme.primaryColor) ? s.theme.primaryColor : null;
    if (primary) box.style.setProperty("--a2-primary", primary);
    box.append(view.mount());
    card.append(box);
  }
  for (const id of read.deleted) if (!read.surfaces.some((s) => s.id === id)) card.append(h("div", { class: "a2ui-note", testid: "a2ui-deleted", "data-surface-id": id }, `Surface ${id} was deleted by the agent.`));

  // Content that makes no surface at all (no operations list, not JSON...).
  if (!read.surfaces.length && !read.status && !read.deleted.length) {
    const v = errors[0] ?? { rule: "A17", message: "the activity's operations build no surface", path: "" };
    card.append(placeholder(v, "This interface cannot be shown"));
  }

  if (errors.length) {
    card.append(h("details", { class: "a2ui-problems", testid: "a2ui-problems", open: store.ui.get("problems") ?? true, ontoggle: (e) => store.ui.set("problems", e.currentTarget.open) },
      h("summary", null, `${errors.length} problem${errors.length === 1 ? "" : "s"} in what the agent sent`),
      h("ul", null, errors.map((v) => h("li", { testid: "a2ui-problem", "data-rule": v.rule },
        ruleLink(v.rule), " ",
        h("span", { class: "a2-problem-title" }, A.ruleOf(v.rule)?.title ?? ""), " — ",
        h("span", null, v.message),
        v.componentId !== undefined ? h("span", { class: "muted" }, ` (component ${v.componentId}${v.path ? ", at " + v.path : ""})`) : v.operation !== undefined ? h("span", { class: "muted" }, ` (operation ${v.operation}${v.path ? ", at " + v.path : ""})`) : null)))));
  }

  const sent = h("div", { class: "a2ui-sent", testid: "a2ui-sent", role: "status", hidden: !store.sent });
  if (store.sent) sent.textContent = `Sent “${store.sent.name}” to the agent`;
  for (const v of views) v.onSent = (ua) => {
    store.sent = ua;
    sent.hidden = false;
    sent.textContent = `Sent “${ua.name}” to the agent`;
  };
  card.append(sent, rawPanel);
  drawRaw();
  return card;
}

function renderLifecycle(st, painted) {
  const base = { class: `a2ui-lifecycle ${st.kind}`, testid: "a2ui-lifecycle", "data-status": st.kind, role: "status" };
  switch (st.kind) {
    case "building":
      return h("div", base,
        h("div", { class: "a2ui-lc-line" },
          h("span", { class: "a2-spinner", "aria-hidden": "true" }),
          h("span", { class: "a2ui-lc-title" }, painted ? "Updating the interface…" : "Building the interface…"),
          st.progressTokens !== undefined ? h("span", { class: "a2ui-lc-detail", testid: "a2ui-progress" }, `${st.progressTokens} token${st.progressTokens === 1 ? "" : "s"} received`) : null),
        h("div", { class: "a2-progress", "aria-hidden": "true" }, h("span", null)),
        painted ? null : h("div", { class: "a2-skeleton", "aria-hidden": "true" }, h("span", null), h("span", null), h("span", null)));
    case "retrying":
      return h("div", base,
        h("div", { class: "a2ui-lc-line" },
          h("span", { class: "a2-spinner", "aria-hidden": "true" }),
          h("span", { class: "a2ui-lc-title" }, "Retrying"),
          h("span", { class: "a2ui-lc-detail", testid: "a2ui-attempt" }, st.attempt !== undefined ? `attempt ${st.attempt}${st.maxAttempts !== undefined ? ` of ${st.maxAttempts}` : ""}` : "")),
        st.errors.length ? h("div", { class: "a2ui-lc-sub" }, "The previous attempt did not validate:") : null,
        st.errors.length ? h("ul", { class: "a2ui-lc-errors", testid: "a2ui-retry-errors" }, st.errors.map((e) => {
          // "A7: what" (as aguikit's emitter writes a violation): the rule becomes its link.
          const text = errorText(e);
          const m = /^(A\d{1,2}): ([\s\S]*)$/.exec(text);
          return m && A.ruleOf(m[1]) ? h("li", null, ruleLink(m[1]), " ", m[2]) : h("li", null, text);
        })) : null);
    case "failed":
      return h("div", { ...base, role: "alert" },
        h("div", { class: "a2ui-lc-line" },
          h("span", { class: "a2-fail-mark", "aria-hidden": "true" }, "✕"),
          h("span", { class: "a2ui-lc-title" }, "The interface could not be built"),
          st.attempts !== undefined ? h("span", { class: "a2ui-lc-detail", testid: "a2ui-attempts" }, `after ${st.attempts} attempt${st.attempts === 1 ? "" : "s"}`) : null),
        st.error !== undefined ? h("div", { class: "a2ui-lc-error", testid: "a2ui-failure" }, st.error) : null);
    default:
      return h("div", base, h("div", { class: "a2ui-lc-line" }, h("span", { class: "a2ui-lc-title" }, `Status: ${st.word}`)));
  }
}

function errorText(e) {
  if (typeof e === "string") return e;
  if (A.isObjectLike(e)) {
    const msg = typeof e.message === "string" ? e.message : typeof e.error === "string" ? e.error : null;
    if (msg) {
      const where = [e.rule ?? e.code, e.componentId ?? e.path].filter((x) => typeof x === "string" && x !== "");
      return where.length ? `${msg} (${where.join(", ")})` : msg;
    }
  }
  return jsonText(e);
}

// ---------------------------------------------------------------------------
// One surface
// ---------------------------------------------------------------------------

/** A group of updaters (what re-reads the data model), nested so a subtree can be dropped. */
class Group {
  constructor(parent) {
    this.fns = [];
    this.kids = new Set();
    if (parent) parent.kids.add(this);
    this.parent = parent;
  }
  add(fn) {
    this.fns.push(fn);
  }
  run() {
    for (const f of this.fns) f();
    for (const k of [...this.kids]) k.run();
  }
  drop() {
    this.parent?.kids.delete(this);
  }
}

const JUSTIFY = { start: "flex-start", center: "center", end: "flex-end", spaceBetween: "space-between", spaceAround: "space-around", spaceEvenly: "space-evenly", stretch: "stretch" };
const ALIGN = { start: "flex-start", center: "center", end: "flex-end", stretch: "stretch" };

class SurfaceView {
  constructor({ surface, catalog, store, frozen, ctx, messageId, onData }) {
    this.surface = surface;
    this.catalog = catalog;
    this.store = store;
    this.frozen = frozen;
    this.ctx = ctx;
    this.messageId = messageId;
    this.onData = onData;
    this.data = surface.data;
    this.root = new Group(null);
    this.onSent = null;
    this.inTrigger = false; // drawing a Modal's trigger
  }

  /** The surface's DOM. */
  mount() {
    const s = this.surface;
    if (!s.components.has("root")) {
      if (!s.components.size) return h("div", { class: "a2ui-waiting", testid: "a2ui-waiting" }, "Waiting for the agent's components…");
      const v = { rule: "A6", message: `surface '${s.id}' has no component with id 'root'`, surfaceId: s.id };
      return s.created ? placeholder(v, "This surface has no root") : h("div", { class: "a2ui-waiting", testid: "a2ui-waiting" }, "Waiting for the root component…");
    }
    const node = this.build("root", [], this.root, []);
    return h("div", { class: "a2ui-body" }, node);
  }

  /** Re-reads the data model everywhere (after a local edit). */
  refresh() {
    this.root.run();
    this.onData?.();
  }

  /** A user's edit at `tokens`: into the local model, remembered, everything bound follows. */
  write(tokens, value) {
    if (this.frozen) return;
    try {
      this.data = A.setAt(this.data, tokens, value);
    } catch {
      return;
    }
    this.store.edits.record(this.surface.id, A.pointerOf(tokens), value);
    this.refresh();
  }

  val(v, scope) {
    return A.evaluate(v, this.data, scope);
  }

  /** Binds a property: `apply(value)` now and whenever the data changes (when it can). */
  bind(group, prop, scope, apply) {
    let last;
    const run = () => {
      const v = this.val(prop, scope);
      const key = typeof v === "object" && v !== null ? JSON.stringify(v) : v;
      if (key === last) return;
      last = key;
      apply(v);
    };
    run();
    if (A.isObjectLike(prop) || Array.isArray(prop)) group.add(run);
  }

  /** The tokens a property is bound to (for two-way inputs), or null. */
  target(prop, scope) {
    if (!A.isObjectLike(prop) || typeof prop.path !== "string" || Object.keys(prop).length !== 1) return null;
    try {
      return A.resolvePath(prop.path, scope);
    } catch {
      return null;
    }
  }

  /** Builds component `id` in `scope`; `stack`: the ids above it (cycles). */
  build(id, scope, group, stack, from) {
    const s = this.surface;
    const c = s.components.get(id);
    if (!c) return placeholder({ rule: "A7", componentId: from, message: `'${from ?? "?"}' refers to '${id}', which the surface does not have` }, "Missing component");
    if (stack.includes(id)) {
      const self = stack[stack.length - 1] === id;
      return placeholder({ rule: self ? "A8" : "A9", componentId: id, message: self ? `'${id}' lists itself as its child` : `${[...stack.slice(stack.indexOf(id)), id].join(" → ")}` }, "Not drawn twice");
    }
    if (stack.length >= A.LIMITS.treeDepth) return placeholder({ rule: "A14", componentId: id, message: `'${id}' is deeper than ${A.LIMITS.treeDepth} levels` }, "Too deep");
    const problem = (s.problems.get(id) ?? []).find((v) => v.severity === "error");
    if (problem) return placeholder(problem, `${c.component} '${id}' cannot be shown`);
    const here = [...stack, id];
    let node;
    try {
      node = this.draw(c, scope, group, here);
    } catch (e) {
      node = placeholder({ rule: "A4", componentId: id, message: `'${id}' could not be drawn: ${e?.message ?? e}` }, `${c.component} '${id}' cannot be shown`);
    }
    node.dataset.a2Id = id;
    node.dataset.a2Type = c.component;
    node.classList.add("a2-c");
    if (typeof c.weight === "number" && Number.isFinite(c.weight) && c.weight >= 0) {
      node.style.flex = `${c.weight} 1 0`;
      node.style.minWidth = "0";
    }
    if (A.isObjectLike(c.accessibility)) {
      const a = c.accessibility;
      if (a.label !== undefined) this.bind(group, a.label, scope, (v) => node.setAttribute("aria-label", A.toText(v)));
      if (a.description !== undefined) this.bind(group, a.description, scope, (v) => node.setAttribute("title", A.toText(v)));
    }
    return node;
  }

  /** The children of a Row/Column/List: a list of ids, or a template over a data list. */
  children(c, scope, group, stack, box) {
    const kids = c.children;
    if (Array.isArray(kids)) {
      box.append(...kids.map((k) => this.build(k, scope, group, stack, c.id)));
      return;
    }
    if (!A.isObjectLike(kids)) return;
    let tokens;
    try {
      tokens = A.resolvePath(kids.path, scope);
    } catch {
      return;
    }
    let inner = null;
    let last = null;
    const draw = () => {
      const list = A.getAt(this.data, tokens);
      const items = Array.isArray(list) ? list.map((_, i) => String(i)) : A.isObjectLike(list) ? Object.keys(list) : [];
      const sig = items.join("\u0000");
      if (sig === last) return;
      last = sig;
      inner?.drop();
      inner = new Group(group);
      box.replaceChildren(...items.map((k) => this.build(kids.componentId, [...tokens, k], inner, stack, c.id)));
      if (!items.length) box.append(h("div", { class: "a2-empty" }, "Nothing to show"));
    };
    draw();
    group.add(draw);
  }

  draw(c, scope, group, stack) {
    switch (c.component) {
      case "Text": return this.text(c, scope, group);
      case "Image": return this.image(c, scope, group);
      case "Icon": return this.icon(c, scope, group);
      case "Video": return this.media("video", c, scope, group);
      case "AudioPlayer": return this.media("audio", c, scope, group);
      case "Row": case "Column": case "List": {
        const horizontal = c.component === "Row" || (c.component === "List" && c.direction === "horizontal");
        const box = h("div", { class: `a2-${c.component.toLowerCase()}${c.component === "List" ? (horizontal ? " horizontal" : " vertical") : ""}`, role: c.component === "List" ? "list" : null });
        if (c.justify && JUSTIFY[c.justify]) box.style.justifyContent = JUSTIFY[c.justify];
        // A row that arranges its children (spaced, centred, at the end) spans its parent's width.
        if (horizontal && c.justify && c.justify !== "start") box.classList.add("fill");
        if (c.align && ALIGN[c.align]) box.style.alignItems = ALIGN[c.align];
        this.children(c, scope, group, stack, box);
        if (c.component === "List") for (const k of box.children) k.setAttribute("role", "listitem");
        return box;
      }
      case "Card":
        return h("div", { class: "a2-card" }, this.build(c.child, scope, group, stack, c.id));
      case "Divider":
        return h("div", { class: `a2-divider ${c.axis === "vertical" ? "vertical" : "horizontal"}`, role: "separator", "aria-orientation": c.axis === "vertical" ? "vertical" : "horizontal" });
      case "Tabs": return this.tabs(c, scope, group, stack);
      case "Modal": return this.modal(c, scope, group, stack);
      case "Button": return this.button(c, scope, group, stack);
      case "TextField": return this.textField(c, scope, group);
      case "CheckBox": return this.checkBox(c, scope, group);
      case "ChoicePicker": return this.choicePicker(c, scope, group);
      case "Slider": return this.slider(c, scope, group);
      case "DateTimeInput": return this.dateTime(c, scope, group);
      default:
        return placeholder({ rule: "A2", componentId: c.id, message: `Unknown component '${c.component}'` }, "Unknown component");
    }
  }

  // ---- display --------------------------------------------------------------

  text(c, scope, group) {
    const variant = ["h1", "h2", "h3", "h4", "h5", "caption", "body"].includes(c.variant) ? c.variant : "body";
    const el = h("div", { class: `a2-text ${variant}`, role: /^h\d$/.test(variant) ? "heading" : null, "aria-level": /^h\d$/.test(variant) ? variant.slice(1) : null });
    this.bind(group, c.text, scope, (v) => {
      const s = A.toText(v);
      if (!A.hasMarkdown(s)) {
        el.textContent = s;
        return;
      }
      const blocks = A.markdown(s);
      // A heading variant whose text is one Markdown heading: the variant's style, the heading's words.
      if (variant !== "body" && variant !== "caption" && blocks.length === 1 && blocks[0].type === "h") el.replaceChildren(...inlineNodes(blocks[0].inline));
      else if (blocks.length === 1 && blocks[0].type === "p") el.replaceChildren(...inlineNodes(blocks[0].inline));
      else el.replaceChildren(...blocks.map(blockNode));
    });
    return el;
  }

  image(c, scope, group) {
    const variant = ["icon", "avatar", "smallFeature", "mediumFeature", "largeFeature", "header"].includes(c.variant) ? c.variant : "mediumFeature";
    const fit = { contain: "contain", cover: "cover", fill: "fill", none: "none", scaleDown: "scale-down" }[c.fit] ?? (variant === "header" || variant === "avatar" ? "cover" : "cover");
    const box = h("div", { class: `a2-image ${variant}${c.variant === undefined ? " implicit" : ""}` });
    let desc = "";
    if (c.description !== undefined) this.bind(group, c.description, scope, (v) => {
      desc = A.toText(v);
      box.querySelector("img")?.setAttribute("alt", desc);
    });
    this.bind(group, c.url, scope, (v) => {
      const url = A.safeUrl(A.toText(v), "image");
      if (!url) {
        box.replaceChildren(imageFallback(variant, A.toText(v) ? "This image's address is not http(s) or a data: image: not loaded." : "No image address.", desc, "blocked"));
        box.dataset.state = "blocked";
        return;
      }
      const img = h("img", { src: url, alt: desc, loading: "lazy", decoding: "async", referrerpolicy: "no-referrer" });
      img.style.objectFit = fit;
      img.addEventListener("error", () => {
        box.replaceChildren(imageFallback(variant, "The image did not load.", desc, "error"));
        box.dataset.state = "error";
      });
      img.addEventListener("load", () => (box.dataset.state = "loaded"));
      box.dataset.state = "loading";
      box.replaceChildren(img);
    });
    return box;
  }

  icon(c, scope, group) {
    const el = h("span", { class: "a2-icon", role: "img" });
    this.bind(group, c.name, scope, (v) => {
      let shapes = null;
      let label = "";
      if (typeof v === "string" && Object.prototype.hasOwnProperty.call(ICONS, v)) {
        shapes = ICONS[v];
        label = v.replace(/([A-Z])/g, " $1").toLowerCase();
      } else if (A.isObjectLike(v) && A.safeSvgPath(v.svgPath)) shapes = ["!" + v.svgPath];
      el.dataset.icon = typeof v === "string" ? v : "svgPath";
      el.setAttribute("aria-label", label || "icon");
      el.replaceChildren(shapes ? svgIcon(shapes) : svgIcon(ICONS.help));
    });
    return el;
  }

  media(kind, c, scope, group) {
    const box = h("div", { class: `a2-media ${kind}` });
    let desc = "";
    const caption = h("div", { class: "a2-media-caption" });
    if (c.description !== undefined) this.bind(group, c.description, scope, (v) => {
      desc = A.toText(v);
      caption.textContent = desc;
    });
    this.bind(group, c.url, scope, (v) => {
      const url = A.safeUrl(A.toText(v), "media");
      if (!url) {
        box.replaceChildren(h("div", { class: "a2-media-blocked" }, `This ${kind === "video" ? "video" : "audio"}'s address is not http(s): not loaded.`), caption);
        return;
      }
      const el = h(kind, { src: url, controls: true, preload: "metadata", "aria-label": desc || (kind === "video" ? "video" : "audio") });
      if (kind === "video") el.setAttribute("playsinline", "");
      box.replaceChildren(kind === "audio" ? h("div", { class: "a2-audio-row" }, svgIcon(ICONS.volumeUp), el) : el, caption);
    });
    return box;
  }

  // ---- containers -----------------------------------------------------------

  tabs(c, scope, group, stack) {
    const key = `tabs:${c.id}:${scope.join("/")}`;
    const tabs = c.tabs;
    let selected = Math.min(this.store.ui.get(key) ?? 0, tabs.length - 1);
    const bar = h("div", { class: "a2-tabbar", role: "tablist" });
    const panel = h("div", { class: "a2-tabpanel", role: "tabpanel" });
    let inner = null;
    const buttons = tabs.map((t, i) => {
      const b = h("button", { type: "button", class: "a2-tab", role: "tab" });
      this.bind(group, t.title, scope, (v) => (b.textContent = A.toText(v)));
      b.addEventListener("click", () => select(i));
      return b;
    });
    const select = (i) => {
      selected = i;
      this.store.ui.set(key, i);
      buttons.forEach((b, k) => {
        b.setAttribute("aria-selected", String(k === i));
        b.tabIndex = k === i ? 0 : -1;
      });
      inner?.drop();
      inner = new Group(group);
      panel.replaceChildren(this.build(tabs[i].child, scope, inner, stack, c.id));
    };
    bar.append(...buttons);
    select(selected);
    return h("div", { class: "a2-tabs" }, bar, panel);
  }

  modal(c, scope, group, stack) {
    // A button drawn as the trigger opens the modal: it sends nothing, so it stays usable.
    const outer = this.inTrigger;
    this.inTrigger = true;
    let trigger;
    try {
      trigger = this.build(c.trigger, scope, group, stack, c.id);
    } finally {
      this.inTrigger = outer;
    }
    const wrap = h("div", { class: "a2-modal-trigger" }, trigger);
    let dialog = null;
    const open = () => {
      if (dialog) return;
      const inner = new Group(group);
      const close = () => {
        dialog?.close();
      };
      dialog = h("dialog", { class: "a2-dialog", testid: "a2ui-modal", "aria-label": "Dialog" },
        h("button", { type: "button", class: "a2-dialog-close", "aria-label": "Close", testid: "a2ui-modal-close", onclick: close }, svgIcon(ICONS.close)),
        h("div", { class: "a2-dialog-body" }, this.build(c.content, scope, inner, stack, c.id)));
      dialog.addEventListener("click", (e) => {
        if (e.target === dialog) close(); // the backdrop
      });
      dialog.addEventListener("close", () => {
        inner.drop();
        dialog?.remove();
        dialog = null;
      });
      wrap.append(dialog);
      dialog.showModal();
    };
    // The modal takes the trigger's clicks: they open it (no action is sent).
    wrap.addEventListener("click", (e) => {
      if (dialog && dialog.contains(e.target)) return;
      e.preventDefault();
      e.stopPropagation();
      open();
    }, true);
    return wrap;
  }

  // ---- interaction ------------------------------------------------------------

  /** The first failing check's message (kept current), written into `hint` when shown. */
  checks(c, scope, group, onResult) {
    if (!Array.isArray(c.checks) || !c.checks.length) {
      onResult(null);
      return;
    }
    const run = () => onResult(A.failingCheck(c.checks, this.data, scope));
    run();
    group.add(run);
  }

  button(c, scope, group, stack) {
    const variant = ["primary", "borderless"].includes(c.variant) ? c.variant : "default";
    const btn = h("button", { type: "button", class: `a2-button ${variant}`, testid: "a2ui-button" }, this.build(c.child, scope, group, stack, c.id));
    const hint = h("div", { class: "a2-hint", hidden: true });
    const why = [];
    const { readOnly, busy, travel } = this.ctx;
    const isEvent = A.isObjectLike(c.action?.event) && !this.inTrigger;
    if (this.inTrigger) btn.dataset.opensModal = "true";
    else if (this.frozen || travel) why.push("time travel shows the surface as it was");
    else if (readOnly && isEvent) why.push("a recording is read-only: actions are not sent");
    else if (busy && isEvent) why.push("a run is in progress");
    let failing = null;
    const state = () => {
      btn.disabled = why.length > 0 || failing !== null;
      btn.title = why.length ? `Not available: ${why.join("; ")}` : failing ?? "";
      hint.hidden = failing === null;
      hint.textContent = failing ?? "";
      btn.dataset.blocked = failing === null ? "false" : "true";
    };
    this.checks(c, scope, group, (f) => {
      failing = f;
      state();
    });
    btn.addEventListener("click", () => {
      if (btn.disabled || btn.dataset.opensModal) return;
      if (isEvent) {
        const ua = A.userAction(c, this.surface.id, this.data, scope);
        if (!ua) return;
        const extra = this.surface.sendDataModel ? { a2uiClientDataModel: { version: A.VERSION, surfaces: { [this.surface.id]: JSON.parse(JSON.stringify(this.data)) } } } : {};
        if (this.ctx.onA2uiAction?.(ua, extra) !== false) this.onSent?.(ua);
        return;
      }
      const f = c.action?.functionCall;
      if (A.isObjectLike(f) && f.call === "openUrl") {
        const url = A.safeUrl(A.toText(this.val(f.args?.url, scope)), "link");
        if (url) window.open(url, "_blank", "noopener,noreferrer");
      }
    });
    return h("div", { class: "a2-button-wrap" }, btn, hint);
  }

  /** A label element, bound. */
  label(c, scope, group, cls = "a2-label") {
    const el = h("span", { class: cls });
    if (c.label !== undefined) this.bind(group, c.label, scope, (v) => (el.textContent = A.toText(v)));
    return el;
  }

  /** The check hint of an input (shown once the user touched it or it holds a value). */
  inputChecks(c, scope, group, field, input, extra) {
    const hint = h("div", { class: "a2-hint", role: "alert", hidden: true, testid: "a2ui-check" });
    const key = `${c.id}:${scope.join("/")}`;
    const run = () => {
      const failing = (Array.isArray(c.checks) ? A.failingCheck(c.checks, this.data, scope) : null) ?? extra?.();
      const show = failing !== null && failing !== undefined && (this.store.touched.has(key) || !isBlank(A.evaluate(c.value, this.data, scope)));
      hint.hidden = !show;
      hint.textContent = show ? failing : "";
      field.classList.toggle("invalid", Boolean(show));
      input?.setAttribute("aria-invalid", String(Boolean(show)));
    };
    run();
    group.add(run);
    return { hint, touch: () => this.store.touched.add(key) };
  }

  textField(c, scope, group) {
    const variant = ["longText", "number", "obscured"].includes(c.variant) ? c.variant : "shortText";
    const tokens = this.target(c.value, scope);
    const input = variant === "longText"
      ? h("textarea", { rows: 3, class: "a2-input" })
      : h("input", { class: "a2-input", type: variant === "number" ? "number" : variant === "obscured" ? "password" : "text", autocomplete: variant === "obscured" ? "off" : null });
    input.disabled = this.frozen;
    input.setAttribute("data-testid", "a2ui-input");
    const field = h("label", { class: `a2-field a2-textfield ${variant}` }, this.label(c, scope, group), input);
    if (c.value !== undefined) this.bind(group, c.value, scope, (v) => {
      const s = A.toText(v);
      if (input.value !== s) input.value = s;
    });
    const re = typeof c.validationRegexp === "string" ? A.safeRegExp(c.validationRegexp) : null;
    const { hint, touch } = this.inputChecks(c, scope, group, field, input, () => (re && input.value !== "" && !re.test(input.value.slice(0, 512)) ? "This does not have the expected format." : null));
    input.addEventListener("input", () => {
      touch();
      if (tokens) this.write(tokens, input.value);
      else this.refresh();
    });
    field.append(hint);
    return field;
  }

  checkBox(c, scope, group) {
    const tokens = this.target(c.value, scope);
    const input = h("input", { type: "checkbox", class: "a2-check", testid: "a2ui-checkbox" });
    input.disabled = this.frozen;
    const field = h("label", { class: "a2-field a2-checkbox" }, input, this.label(c, scope, group, "a2-check-label"));
    this.bind(group, c.value, scope, (v) => (input.checked = A.toBool(v)));
    const { hint, touch } = this.inputChecks(c, scope, group, field, input);
    input.addEventListener("change", () => {
      touch();
      if (tokens) this.write(tokens, input.checked);
    });
    return h("div", { class: "a2-checkbox-wrap" }, field, hint);
  }

  choicePicker(c, scope, group) {
    const multi = c.variant === "multipleSelection";
    const chips = c.displayStyle === "chips";
    const tokens = this.target(c.value, scope);
    const group_ = h("div", { class: `a2-field a2-choice ${chips ? "chips" : "list"}`, role: "group" });
    const legend = this.label(c, scope, group);
    const list = h("div", { class: "a2-options", role: multi ? "group" : "radiogroup" });
    const name = `a2-${this.messageId}-${c.id}-${scope.join("-")}`;
    let selected = [];
    const current = () => {
      const v = this.val(c.value, scope);
      return Array.isArray(v) ? v.map(A.toText) : v === undefined || v === null || v === "" ? [] : [A.toText(v)];
    };
    const { hint, touch } = this.inputChecks(c, scope, group, group_, null);
    const choose = (value, on) => {
      touch();
      let next = current();
      if (multi) next = on ? [...new Set([...next, value])] : next.filter((x) => x !== value);
      else next = on ? [value] : [];
      if (tokens) this.write(tokens, next);
    };
    const rows = (c.options ?? []).map((o) => {
      const text = h("span", null);
      this.bind(group, o.label, scope, (v) => (text.textContent = A.toText(v)));
      let control;
      if (chips) {
        control = h("button", { type: "button", class: "a2-chip", testid: "a2ui-option", "data-value": o.value, "aria-pressed": "false" }, h("span", { class: "a2-chip-mark", "aria-hidden": "true" }, "✓"), text);
        control.disabled = this.frozen;
        control.addEventListener("click", () => choose(o.value, !selected.includes(o.value)));
      } else {
        const input = h("input", { type: multi ? "checkbox" : "radio", name, value: o.value });
        input.disabled = this.frozen;
        input.addEventListener("change", () => choose(o.value, input.checked));
        control = h("label", { class: "a2-option", testid: "a2ui-option", "data-value": o.value }, input, text);
      }
      return { o, control, text };
    });
    const paint = () => {
      selected = current();
      for (const r of rows) {
        const on = selected.includes(r.o.value);
        if (chips) {
          r.control.setAttribute("aria-pressed", String(on));
          r.control.classList.toggle("on", on);
        } else {
          r.control.querySelector("input").checked = on;
          r.control.classList.toggle("on", on);
        }
      }
    };
    paint();
    group.add(paint);
    if (c.filterable === true) {
      const filter = h("input", { type: "search", class: "a2-input a2-filter", placeholder: "Filter…", "aria-label": "Filter the options", testid: "a2ui-filter" });
      filter.addEventListener("input", () => {
        const q = filter.value.trim().toLowerCase();
        for (const r of rows) r.control.hidden = q !== "" && !r.text.textContent.toLowerCase().includes(q);
      });
      group_.append(legend, filter);
    } else group_.append(legend);
    list.append(...rows.map((r) => r.control));
    group_.append(list, hint);
    return group_;
  }

  slider(c, scope, group) {
    const tokens = this.target(c.value, scope);
    const min = typeof c.min === "number" ? c.min : 0;
    const max = typeof c.max === "number" ? c.max : 100;
    const span = Math.abs(max - min);
    const step = span <= 1 ? span / 100 || 0.01 : span <= 10 ? 0.1 : 1;
    const input = h("input", { type: "range", class: "a2-range", min, max, step, testid: "a2ui-slider" });
    input.disabled = this.frozen;
    const out = h("output", { class: "a2-range-value" });
    const field = h("label", { class: "a2-field a2-slider" }, h("span", { class: "a2-slider-head" }, this.label(c, scope, group), out), input);
    this.bind(group, c.value, scope, (v) => {
      const n = A.toNumber(v);
      const x = Number.isNaN(n) ? min : n;
      if (Number(input.value) !== x) input.value = String(x);
      out.textContent = A.formatNumber(x, { decimals: step < 1 ? (step < 0.1 ? 2 : 1) : 0 });
    });
    const { hint, touch } = this.inputChecks(c, scope, group, field, input);
    input.addEventListener("input", () => {
      touch();
      const n = Number(input.value);
      if (tokens) this.write(tokens, n);
      else out.textContent = A.formatNumber(n);
    });
    field.append(hint);
    return field;
  }

  dateTime(c, scope, group) {
    const tokens = this.target(c.value, scope);
    const date = c.enableDate === true;
    const time = c.enableTime === true;
    const type = date && !time ? "date" : time && !date ? "time" : "datetime-local";
    const input = h("input", { type, class: "a2-input", testid: "a2ui-datetime" });
    input.disabled = this.frozen;
    const field = h("label", { class: `a2-field a2-datetime ${type}` }, this.label(c, scope, group), input);
    this.bind(group, c.value, scope, (v) => {
      const s = toInputValue(A.toText(v), type);
      if (input.value !== s) input.value = s;
    });
    if (c.min !== undefined) this.bind(group, c.min, scope, (v) => input.setAttribute("min", toInputValue(A.toText(v), type)));
    if (c.max !== undefined) this.bind(group, c.max, scope, (v) => input.setAttribute("max", toInputValue(A.toText(v), type)));
    const { hint, touch } = this.inputChecks(c, scope, group, field, input);
    input.addEventListener("change", () => {
      touch();
      if (tokens) this.write(tokens, fromInputValue(input.value, type));
    });
    field.append(hint);
    return field;
  }
}

const isBlank = (v) => v === undefined || v === null || v === "" || v === false || (Array.isArray(v) && v.length === 0);

const pad = (n) => String(n).padStart(2, "0");
/** An ISO 8601 value as an <input> of `type` shows it (local time). */
function toInputValue(s, type) {
  if (!s) return "";
  const d = A.parseDate(s);
  if (!d) return "";
  const day = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return type === "date" ? day : type === "time" ? hm : `${day}T${hm}`;
}
/** What an <input> of `type` holds, as ISO 8601 (date-times in UTC). */
function fromInputValue(s, type) {
  if (!s) return "";
  if (type === "date" || type === "time") return s;
  const t = Date.parse(s); // local
  return Number.isNaN(t) ? s : new Date(t).toISOString();
}

function imageFallback(variant, why, desc, state) {
  return h("div", { class: `a2-image-fallback ${state}`, title: why, testid: "a2ui-image-fallback" },
    svgIcon(ICONS.photo),
    variant === "icon" || variant === "avatar" ? null : h("span", null, desc || why));
}

// ---- Markdown (as text nodes) ---------------------------------------------------

function inlineNodes(list) {
  return list.map((x) => {
    switch (x.t) {
      case "text": return document.createTextNode(x.v);
      case "b": return h("strong", null, inlineNodes(x.c));
      case "i": return h("em", null, inlineNodes(x.c));
      case "code": return h("code", null, x.v);
      case "link": return x.href ? h("a", { href: x.href, target: "_blank", rel: "noopener noreferrer nofollow" }, inlineNodes(x.c)) : h("span", null, inlineNodes(x.c));
      default: return document.createTextNode("");
    }
  });
}
function blockNode(b) {
  switch (b.type) {
    case "h": return h("div", { class: `a2-md-h h${Math.min(b.level, 5)}`, role: "heading", "aria-level": String(b.level) }, inlineNodes(b.inline));
    case "ul": return h("ul", { class: "a2-md-list" }, b.items.map((i) => h("li", null, inlineNodes(i))));
    case "ol": return h("ol", { class: "a2-md-list" }, b.items.map((i) => h("li", null, inlineNodes(i))));
    default: return h("p", { class: "a2-md-p" }, inlineNodes(b.inline));
  }
}
