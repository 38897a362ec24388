// DOM helpers of the console (browser only).

/** h("div", {class: "x", testid: "y", onclick: fn}, child, "text", [more]) */
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "testid") node.setAttribute("data-testid", v);
      else if (k === "class") node.className = v;
      else if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
      else if (k === "open" || k === "disabled" || k === "hidden" || k === "checked") node[k] = Boolean(v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
  }
  appendAll(node, children);
  return node;
}

/** Appends children (nodes, strings, nested arrays; null/undefined/false skipped). */
export function appendAll(node, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) appendAll(node, c);
    else node.append(c instanceof Node ? c : String(c));
  }
}

/** Replaces `list`'s children by `nodes` (in order) without touching nodes already in place; `keep` stays first. */
export function reconcile(list, nodes, keep = null) {
  const wanted = new Set(nodes);
  for (const child of [...list.children]) if (child !== keep && !wanted.has(child)) child.remove();
  let ref = keep ? keep.nextSibling : list.firstChild;
  for (const n of nodes) {
    if (n === ref) ref = ref.nextSibling;
    else list.insertBefore(n, ref);
  }
}

/** A duration for people: `240 ms`, `12.5 s`. */
export function fmtMs(ms) {
  return ms < 10000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** How long ago a time (ms since the epoch) was. */
export function fmtAgo(ms) {
  if (typeof ms !== "number" || !(ms > 0)) return "";
  const s = (Date.now() - ms) / 1000;
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  if (s < 7 * 86400) return `${Math.round(s / 86400)} d ago`;
  return new Date(ms).toLocaleDateString();
}
