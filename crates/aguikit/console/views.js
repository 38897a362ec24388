// Views drawn from the engine modules' results (browser only): a run's latency and the
// comparison of two runs. Every value from a run goes in as text (text nodes, attributes),
// never as markup.

import { h, fmtMs } from "./dom.js";
import { jsonText, truncate } from "./util.js";
import { messageText, pairMessages } from "./compare.js";
import { diff } from "./patch.js";

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const n = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
  return n;
}

const ms = (v) => (v === null || v === undefined ? null : fmtMs(v));

function stat(label, value, testid, title) {
  return h("div", { class: "stat", testid, title },
    h("span", { class: "stat-label" }, label),
    h("span", { class: `stat-value${value === null ? " na" : ""}` }, value ?? "n/a"));
}

/** A bar per gap between deltas (the slow ones, past twice the median, in another colour). */
function gapChart(gaps, p50) {
  const chart = svg("svg", { class: "gap-chart", viewBox: "0 0 300 64", preserveAspectRatio: "none", role: "img", "data-testid": "latency-chart" });
  const shown = gaps.slice(0, 300);
  const max = Math.max(1, ...shown);
  const w = 300 / Math.max(1, shown.length);
  shown.forEach((g, k) => {
    const hgt = Math.max(1, (g / max) * 60);
    const r = svg("rect", { x: (k * w).toFixed(2), y: (64 - hgt).toFixed(2), width: Math.max(0.5, w - (w > 2 ? 1 : 0)).toFixed(2), height: hgt.toFixed(2) });
    if (p50 !== null && g > 2 * p50 && g > 5) r.setAttribute("class", "slow");
    const t = svg("title", {});
    t.textContent = `gap ${k + 1}: ${Math.round(g)} ms`;
    r.append(t);
    chart.append(r);
  });
  const label = document.createElementNS(SVG, "title");
  label.textContent = `${gaps.length} gaps between deltas, longest ${Math.round(max)} ms`;
  chart.prepend(label);
  return chart;
}

/**
 * Draws run `n`'s latency `l` (latency.js) into `root`; `where` says what the times are
 * relative to.
 */
export function renderLatency(root, l, n, where) {
  if (!l) {
    root.replaceChildren(h("p", { class: "muted placeholder" }, "No run yet: the latency of the selected run (or the last one) shows here."));
    root.dataset.run = "";
    return;
  }
  root.dataset.run = String(n);
  const tok = l.tokens;
  const tokens = tok
    ? [
      stat("input tokens", tok.inputTokens ?? null, "latency-input-tokens"),
      stat("output tokens", tok.outputTokens ?? null, "latency-output-tokens"),
      stat("total tokens", tok.totalTokens ?? null, "latency-tokens", tok.models.join(", ")),
      tok.reasoningTokens !== undefined ? stat("reasoning", tok.reasoningTokens, "latency-reasoning-tokens") : null,
      tok.cachedInputTokens !== undefined ? stat("cached input", tok.cachedInputTokens, "latency-cached-tokens") : null,
    ]
    : [stat("tokens", null, "latency-tokens", "The run's RUN_FINISHED or RUN_ERROR reports no usage")];
  root.replaceChildren(
    h("div", { class: "latency-head" }, `Run ${n} · ${where}`),
    h("div", { class: "stat-grid" },
      stat("first event", ms(l.firstEvent), "latency-first-event", "From sending the request to the first event"),
      stat("first text", ms(l.firstText), "latency-first-text", "To the first text delta"),
      stat("total", ms(l.total), "latency-total", "To the last event"),
      stat("deltas", String(l.deltas), "latency-deltas", "Streamed text, tool-argument and reasoning deltas"),
      stat("gap p50", ms(l.gap.p50), "latency-gap-p50", "Median time between consecutive deltas"),
      stat("gap p95", ms(l.gap.p95), "latency-gap-p95"),
      stat("gap max", ms(l.gap.max), "latency-gap-max"),
      ...tokens),
    l.gaps.length ? gapChart(l.gaps, l.gap.p50) : h("p", { class: "latency-note" }, l.origin === "none" ? "The events carry no time: nothing to measure between deltas." : "Fewer than two deltas: no gap to measure."),
    tok?.models.length ? h("p", { class: "latency-note" }, `usage from ${tok.models.join(", ")}`) : null);
}

function side(title, a, b, render) {
  return h("div", { class: "side-by-side" },
    h("div", { class: "col-head", title: title[0] }, title[0]), h("div", { class: "col-head", title: title[1] }, title[1]),
    render(a, "a"), render(b, "b"));
}

function changeList(changes, testid) {
  return h("ul", { class: "diff-list", testid },
    changes.slice(0, 50).map((c) => h("li", { class: `diff-${c.kind}`, "data-path": c.path, "data-kind": c.kind },
      h("span", { class: "diff-kind" }, c.kind === "added" ? "+" : c.kind === "removed" ? "−" : "~"),
      h("code", { class: "diff-path" }, c.path || "(root)"),
      c.kind !== "added" ? h("span", { class: "diff-before" }, truncate(JSON.stringify(c.before), 80)) : null,
      c.kind === "changed" ? h("span", { class: "muted" }, " → ") : null,
      c.kind !== "removed" ? h("span", { class: "diff-after" }, truncate(JSON.stringify(c.after), 80)) : null)),
    changes.length > 50 ? h("li", { class: "muted" }, `… ${changes.length - 50} more`) : null);
}

/**
 * Draws the comparison of runs `a` and `b` into `root`: `cmp` from compareEvents, and for
 * each run `{label, messages, state}` at its end.
 */
export function renderCompare(root, cmp, a, b) {
  const d = cmp.divergence;
  const ans = cmp.answer;
  const titles = [a.label, b.label];
  const n = Math.max(...cmp.count);
  const value = (v) => (v === undefined ? "(absent)" : truncate(JSON.stringify(v), 80));
  const where = (x) => x.a === null ? `${a.label} has ended; ${b.label} sends ${x.rightType}`
    : x.b === null ? `${b.label} has ended; ${a.label} sends ${x.leftType}`
      : x.leftType !== x.rightType ? `${x.leftType} against ${x.rightType}`
        : `${x.leftType}, at ${x.path || "(the whole event)"}: ${value(x.left)} against ${value(x.right)}`;
  const verdict = d === null
    ? h("p", { class: "verdict same", testid: "compare-verdict", "data-diverges": "false" }, `The two runs send the same ${cmp.count[0]} events (ids and times aside).`)
    : h("p", { class: "verdict differ", testid: "compare-verdict", "data-diverges": "true", "data-index": String(d.index), "data-path": d.path, "data-answer-index": ans ? String(ans.index) : "" },
      `They first diverge at event ${d.index + 1} of ${n}: ${where(d)}.`);
  const answer = d !== null && ans !== d
    ? h("p", { class: "verdict differ answer", testid: "compare-answer", "data-index": ans ? String(ans.index) : "" },
      ans ? `Their requests differ (RUN_STARTED's input); their answers first diverge at event ${ans.index + 1}: ${where(ans)}.` : "Their requests differ (RUN_STARTED's input); their answers are the same.")
    : null;
  const shown = ans ?? d;
  const sections = [
    h("section", { class: "compare-section", testid: "compare-divergence" },
      h("h3", null, "First divergence"),
      verdict,
      answer,
      shown && shown.changes.length ? changeList(shown.changes, "compare-changes") : null,
      shown ? side(titles, shown.a, shown.b, (ev) => h("pre", { class: "json" }, ev === null ? "(the run has ended)" : jsonText(ev))) : null),
  ];
  const rows = pairMessages(a.messages, b.messages);
  const differing = rows.filter((r) => !r.same).length;
  sections.push(h("section", { class: "compare-section", testid: "compare-messages", "data-differing": String(differing) },
    h("h3", null, `Messages at the end · ${differing ? `${differing} differ` : "the same"}`),
    h("div", { class: "side-by-side" },
      h("div", { class: "col-head" }, titles[0]), h("div", { class: "col-head" }, titles[1]),
      rows.flatMap((r) => [r.a, r.b].map((m) => m === null
        ? h("div", { class: "cmp-msg absent" }, "—")
        : h("div", { class: `cmp-msg${r.same ? "" : " differs"}`, testid: "compare-message", "data-role": m.role },
          h("div", { class: "who" }, m.role ?? "?"), truncate(messageText(m), 2000)))))));
  const changes = diff(a.state, b.state);
  sections.push(h("section", { class: "compare-section", testid: "compare-state", "data-changes": String(changes.length) },
    h("h3", null, `State at the end · ${changes.length ? `${changes.length} difference${changes.length === 1 ? "" : "s"}` : "the same"}`),
    changes.length ? changeList(changes, "compare-state-changes") : null,
    side(titles, a.state, b.state, (s) => h("pre", { class: "json" }, jsonText(s)))));
  root.replaceChildren(...sections);
}

/** "multiAgent" -> "multi agent" (keys of AgentCapabilities as words). */
const words = (k) => k.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/_/g, " ").toLowerCase();

/** One declared capability: a flag as an on/off chip, anything else as `name: value`. */
function capItem(k, v) {
  if (typeof v === "boolean") return h("span", { class: `cap-flag ${v ? "on" : "off"}`, testid: "cap-flag", "data-key": k, "data-on": String(v), title: v ? "declared supported" : "declared not supported" }, v ? "✓ " : "✗ ", words(k));
  let text;
  const named = (x) => x !== null && typeof x === "object" && typeof x.name === "string";
  if (Array.isArray(v)) {
    text = v.length && v.every((x) => typeof x === "string") ? v.join(", ")
      : v.length && v.every(named) ? v.map((x) => x.name).join(", ")
        : `${v.length} item${v.length === 1 ? "" : "s"}`;
  }
  else if (v !== null && typeof v === "object") {
    const names = Array.isArray(v) ? [] : Object.keys(v);
    text = names.length ? names.map(words).join(", ") : "{}";
  } else text = String(v);
  return h("span", { class: "cap-value", testid: "cap-value", "data-key": k, title: truncate(JSON.stringify(v), 400) }, h("span", { class: "muted" }, `${words(k)}: `), truncate(text, 80));
}

/**
 * Draws an agent's capabilities (AG-UI AgentCapabilities, every field optional) into
 * `root`: who it is, then each declared group with its flags and values; what is not
 * declared is not shown (absent means "not declared", not "unsupported").
 */
export function renderCapabilities(root, caps) {
  const id = caps.identity !== null && typeof caps.identity === "object" ? caps.identity : {};
  const head = [id.name, id.version ? `v${id.version}` : null, id.type, id.provider].filter((x) => typeof x === "string" && x !== "");
  const groups = Object.entries(caps).filter(([k, v]) => k !== "identity" && v !== null && typeof v === "object" && !Array.isArray(v));
  const scalars = Object.entries(caps).filter(([k, v]) => k !== "identity" && (v === null || typeof v !== "object" || Array.isArray(v)));
  root.replaceChildren(
    h("div", { class: "caps-who", testid: "caps-identity" },
      h("strong", null, head.length ? head.join(" · ") : "This agent"),
      typeof id.description === "string" ? h("div", { class: "muted" }, truncate(id.description, 300)) : null),
    groups.length || scalars.length
      ? h("dl", { class: "caps-list" },
        groups.map(([k, v]) => [
          h("dt", { testid: "cap-group", "data-group": k }, words(k)),
          h("dd", null, Object.entries(v).length ? Object.entries(v).map(([kk, vv]) => capItem(kk, vv)) : h("span", { class: "muted" }, "declared, nothing in it")),
        ]),
        scalars.length ? [h("dt", null, "other"), h("dd", null, scalars.map(([k, v]) => capItem(k, v)))] : null)
      : h("p", { class: "muted" }, "It declares nothing beyond who it is."),
    h("p", { class: "caps-note muted" }, "Only what the agent declares; what it leaves out is not declared, not unsupported."));
}
