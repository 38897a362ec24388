// Unit tests of the console's engine modules that the corpus does not reach: time travel
// (History), the structural diff, redaction, and reading recordings. Node only, no deps:
//
//   node --test crates/aguikit/console/test/

import { test } from "node:test";
import assert from "node:assert/strict";
import { Fold, History, foldAll } from "../fold.js";
import { diff } from "../patch.js";
import { redactEvent, shape } from "../redact.js";
import { parseRecording, toJsonLines } from "../recording.js";

// A stream of a few runs: state changes, streamed text, a subagent, an interrupt.
function stream(runs = 7) {
  const out = [];
  for (let k = 0; k < runs; k++) {
    out.push({ type: "RUN_STARTED", threadId: "t", runId: `r${k}` });
    out.push(k === 0 ? { type: "STATE_SNAPSHOT", snapshot: { n: 0, list: [] } } : { type: "STATE_DELTA", delta: [{ op: "replace", path: "/n", value: k }, { op: "add", path: "/list/-", value: { k } }] });
    out.push({ type: "SUBAGENT_STARTED", subagentRunId: `s${k}`, name: "helper" });
    out.push({ type: "TEXT_MESSAGE_CHUNK", messageId: `m${k}`, delta: `hello ${k}`, subagentRunId: `s${k}` });
    out.push({ type: "TEXT_MESSAGE_CHUNK", delta: " world", subagentRunId: `s${k}` });
    out.push({ type: "SUBAGENT_FINISHED", subagentRunId: `s${k}` });
    out.push(k % 3 === 2
      ? { type: "RUN_FINISHED", threadId: "t", runId: `r${k}`, outcome: { type: "interrupt", interrupts: [{ id: `i${k}`, reason: "confirm" }] } }
      : { type: "RUN_FINISHED", threadId: "t", runId: `r${k}` });
  }
  return out;
}

test("time travel: the fold after any event equals folding the stream up to it", () => {
  const events = stream();
  for (const every of [1, 3, 200]) {
    const live = new Fold();
    const h = new History(every);
    for (const ev of events) {
      h.record(live, ev);
      if (ev.type === "RUN_STARTED") live.run = { id: ev.runId };
      live.push(ev);
    }
    for (let i = 0; i < events.length; i++) {
      const want = foldAll(events.slice(0, i + 1)).fold;
      const got = h.after(i);
      assert.deepEqual(got.messages, want.messages, `messages after ${i} (every ${every})`);
      assert.deepEqual(got.state, want.state, `state after ${i}`);
      assert.deepEqual(got.pendingInterrupts, want.pendingInterrupts, `interrupts after ${i}`);
      assert.deepEqual(h.before(i).state, i === 0 ? {} : foldAll(events.slice(0, i)).fold.state, `state before ${i}`);
    }
    // A copy is independent of the live fold.
    const snap = h.after(1);
    snap.state.n = 99;
    assert.notEqual(h.after(1).state.n, 99);
  }
});

test("time travel keeps what changed outside the events (a user message) from where it happened", () => {
  const f = new Fold();
  const h = new History(100);
  const events = stream(2);
  for (const ev of events.slice(0, 7)) {
    h.record(f, ev);
    f.push(ev);
  }
  f.messages.push({ id: "u1", role: "user", content: "next" });
  h.touch();
  for (const ev of events.slice(7)) {
    h.record(f, ev);
    f.push(ev);
  }
  assert.ok(!h.after(6).messages.some((m) => m.id === "u1"), "the user message appears before it was sent");
  assert.ok(h.after(7).messages.some((m) => m.id === "u1"), "the user message is lost after it was sent");
});

test("diff names added, removed and changed paths", () => {
  const got = diff({ a: 1, b: { c: [1, 2], d: "x" }, gone: true, "k/~": 1 }, { a: 2, b: { c: [1], d: "x", e: null }, "k/~": 1, n: [0] });
  assert.deepEqual(got.map((c) => `${c.kind} ${c.path}`), ["changed /a", "removed /b/c/1", "added /b/e", "removed /gone", "added /n"]);
  assert.deepEqual(diff(1, "1"), [{ path: "", kind: "changed", before: 1, after: "1" }]);
  assert.deepEqual(diff({ x: [1] }, { x: [1] }), []);
});

test("redaction replaces content by its shape and keeps what the rules look at", () => {
  assert.deepEqual(shape({ a: "secret", b: [1, true, null], c: { d: 2.5 } }), { a: "‹string 6›", b: ["‹number›", "‹boolean›", null], c: { d: "‹number›" } });
  const events = [
    { type: "RUN_STARTED", threadId: "t", runId: "r", input: { threadId: "t", runId: "r", messages: [{ id: "u", role: "user", content: "my password" }], state: { key: "v" }, tools: [], context: [{ description: "d", value: "private" }] } },
    { type: "TEXT_MESSAGE_CHUNK", messageId: "m", delta: "private text", subagentRunId: "s" },
    { type: "TOOL_CALL_ARGS", toolCallId: "c", delta: '{"q":"private"}' },
    { type: "TOOL_CALL_RESULT", messageId: "tm", toolCallId: "c", content: "private result" },
    { type: "STATE_DELTA", delta: [{ op: "add", path: "/key", value: "private" }, { op: "remove", path: "/x" }] },
    { type: "MESSAGES_SNAPSHOT", messages: [{ id: "a", role: "assistant", content: "private", toolCalls: [{ id: "c", type: "function", function: { name: "lookup", arguments: "{\"private\":1}" } }] }] },
    { type: "ACTIVITY_SNAPSHOT", messageId: "act", activityType: "plan", content: { steps: ["private"] } },
    { type: "RUN_ERROR", message: "private failure", code: "E1" },
  ];
  const red = events.map(redactEvent);
  const text = JSON.stringify(red);
  assert.ok(!/private|password/.test(text), text);
  red.forEach((r, i) => {
    const e = events[i];
    assert.equal(r.type, e.type);
    for (const k of ["messageId", "toolCallId", "subagentRunId", "runId", "code", "activityType"]) assert.equal(r[k], e[k], `${e.type}.${k}`);
  });
  assert.equal(red[1].delta.length, events[1].delta.length, "a delta keeps its length");
  assert.deepEqual(red[4].delta.map((o) => [o.op, o.path]), [["add", "/key"], ["remove", "/x"]]);
  assert.equal(red[5].messages[0].toolCalls[0].function.name, "lookup");
  assert.equal(red[0].input.messages[0].role, "user");
  // The original is untouched.
  assert.equal(events[1].delta, "private text");
});

test("recordings: JSON array, JSON Lines, SSE and case files, as agui inspect reads them", () => {
  const events = stream(1);
  assert.deepEqual(parseRecording(JSON.stringify(events)), { format: "json-array", events });
  assert.deepEqual(parseRecording(toJsonLines(events)), { format: "json-lines", events });
  assert.deepEqual(parseRecording("\ufeff" + events.map((e) => `data: ${JSON.stringify(e)}\r\n\r\n`).join("")), { format: "sse", events });
  assert.deepEqual(parseRecording(JSON.stringify({ name: "c", events, expect: {} }, null, 2)), { format: "case", events });
  assert.deepEqual(parseRecording(JSON.stringify(events[0])), { format: "json-lines", events: [events[0]] });
  const broken = parseRecording(`${JSON.stringify(events[0])}\n{oops\n`);
  assert.equal(broken.events.length, 2);
  assert.match(broken.events[1].error, /invalid JSON line/);
  assert.throws(() => parseRecording("hello"), /not a recording/);
  assert.deepEqual(parseRecording("  \n"), { format: "json-lines", events: [] });
});
