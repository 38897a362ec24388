// The console's engine modules against the conformance corpus, under Node (no npm deps):
//
//   AGUI_SHARED_DIR=../shared node --test crates/aguikit/console/test/
//
// Cases come from $AGUI_SHARED_DIR/conformance/cases. For every case whose reference
// expectation the console claims to reproduce, the console's own modules (sse.js,
// expand.js, patch.js through fold.js) must give exactly the reference's result:
//
// - `apply` / `applyNormalized` (messages, state) and `pendingInterrupts`: fold.js;
// - `expanded` and `expandError`: expand.js;
// - `sse`: sse.js reads the reference's frames back into the case's events.
//
// What the console does not claim, and why (these cases are counted and listed, not run):
const UNCLAIMED = {
  // The reference's compatibility boundary (client.md §2, CB1–CB12) translates deprecated
  // THINKING_* events (minting ids), upgrades legacy binary parts and drops legacy nulls
  // before anything else sees them. The console shows such events as they arrived and
  // leaves the translation to the Rust engine (`POST /api/inspect`, `agui apply`).
  compat: "compatibility translations (THINKING_*, legacy binary parts, legacy nulls) are the Rust engine's job",
  // Enforcement (client.md §3, EN1–EN5) validates every event against the schema and strips
  // unknown members, roles, content parts, patch operations and outcome types. The console
  // does not carry the schema; it drops unknown event types only (EN1). The Rust verifier
  // reports the rest, event by event, in the console's timeline.
  enforcement: "schema enforcement (stripping unknown members, roles, parts, operations) is the Rust engine's job",
};
// Cases whose stream the reference rejects (`verify.ok` false) have no `apply`: verdicts are
// the Rust verifier's (V1–V55, CH3–CH8, schema), which the console asks for and shows.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { foldAll } from "../fold.js";
import { Expander } from "../expand.js";
import { parseSse } from "../sse.js";
import { deepEqual, isObject } from "../util.js";

const shared = process.env.AGUI_SHARED_DIR;
const dir = shared ? join(shared, "conformance", "cases") : null;
const cases = dir && existsSync(dir)
  ? readdirSync(dir).filter((f) => f.endsWith(".json")).sort().map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")))
  : [];

const unclaimedBy = (c) => Object.keys(UNCLAIMED).find((tag) => c.tags?.includes(tag));

test("the corpus is there", () => {
  assert.ok(shared, "set AGUI_SHARED_DIR (the directory holding conformance/cases)");
  assert.ok(cases.length > 200, `only ${cases.length} cases in ${dir}`);
});

// `<minted:N>` placeholders of applyNormalized: the same N is the same id everywhere, different
// N are different ids. Returns whether `got` matches `want` under one consistent assignment.
function matchMinted(want, got, names = new Map(), used = new Map()) {
  if (typeof want === "string") {
    const m = /^<minted:(\d+)>$/.exec(want);
    if (!m) return want === got;
    if (typeof got !== "string") return false;
    if (names.has(m[1])) return names.get(m[1]) === got;
    if (used.has(got)) return false;
    names.set(m[1], got);
    used.set(got, m[1]);
    return true;
  }
  if (Array.isArray(want)) return Array.isArray(got) && want.length === got.length && want.every((w, i) => matchMinted(w, got[i], names, used));
  if (isObject(want)) {
    if (!isObject(got)) return false;
    const keys = Object.keys(want);
    return keys.length === Object.keys(got).length && keys.every((k) => Object.hasOwn(got, k) && matchMinted(want[k], got[k], names, used));
  }
  return deepEqual(want, got);
}

const claimed = { apply: [], expanded: [], sse: [] };
const unclaimed = new Map();
for (const c of cases) {
  const tag = unclaimedBy(c);
  const e = c.expect;
  if (e.apply || e.applyNormalized) {
    if (tag) unclaimed.set(c.name, tag);
    else claimed.apply.push(c);
  }
  if (!tag && (e.expanded || e.expandError)) claimed.expanded.push(c);
  if (!tag && typeof e.sse === "string") claimed.sse.push(c);
}

test("the claimed set: every apply expectation outside the unclaimed categories", () => {
  const withApply = cases.filter((c) => c.expect.apply || c.expect.applyNormalized).length;
  assert.equal(claimed.apply.length + unclaimed.size, withApply);
  // The unclaimed cases, by category, for the record.
  const by = {};
  for (const [name, tag] of unclaimed) (by[tag] ??= []).push(name);
  for (const [tag, names] of Object.entries(by)) console.log(`# unclaimed (${tag}: ${UNCLAIMED[tag]}): ${names.join(", ")}`);
  console.log(`# claimed: ${claimed.apply.length} of ${withApply} apply expectations, ${claimed.expanded.length} expansions, ${claimed.sse.length} SSE encodings`);
  assert.ok(claimed.apply.length >= withApply - 12, `the claimed set shrank to ${claimed.apply.length}`);
});

for (const c of claimed.apply) {
  test(`apply: ${c.name}`, () => {
    const { fold } = foldAll(c.events);
    const want = c.expect.apply ?? c.expect.applyNormalized;
    if (c.expect.apply) {
      assert.deepEqual(fold.messages, want.messages, "messages");
      assert.deepEqual(fold.state, want.state, "state");
    } else {
      assert.ok(matchMinted(want.messages, fold.messages), `messages ${JSON.stringify(fold.messages)}`);
      assert.ok(matchMinted(want.state, fold.state), "state");
    }
    assert.deepEqual(fold.pendingInterrupts, c.expect.pendingInterrupts ?? [], "pendingInterrupts");
  });
}

for (const c of claimed.expanded) {
  test(`expand: ${c.name}`, () => {
    const x = new Expander();
    if (c.expect.expandError) {
      assert.throws(() => {
        for (const ev of c.events) x.expand(ev);
      }, undefined, `the reference threw: ${c.expect.expandError}`);
      return;
    }
    const out = [];
    for (const ev of c.events) out.push(...x.expand(ev));
    assert.deepEqual(out, c.expect.expanded);
  });
}

// Optional fields that are null are omitted on the wire (README: "Optional fields that are
// null are omitted"): what the reference wrote is the event without its null members.
const dropNulls = (v) => (Array.isArray(v) ? v.map(dropNulls) : isObject(v) ? Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, dropNulls(x)])) : v);

for (const c of claimed.sse) {
  test(`sse: ${c.name}`, () => {
    const frames = parseSse(c.expect.sse).map((f) => JSON.parse(f.data));
    assert.equal(frames.length, c.events.length, "one frame per event");
    frames.forEach((f, i) => assert.ok(deepEqual(f, c.events[i]) || deepEqual(dropNulls(f), dropNulls(c.events[i])), `frame ${i}: ${JSON.stringify(f)}`));
  });
}
