// Unit tests of the engine modules behind the console's views: redaction (an allowlist),
// export as SSE and HAR, comparing two runs, a run's latency, and searching streamed text.
// Node only, no deps:
//
//   node --test crates/aguikit/console/test/

import { test } from "node:test";
import assert from "node:assert/strict";
import { redactEvent, redactInput, KEPT_FIELDS } from "../redact.js";
import { parseRecording, toSse, toHar } from "../recording.js";
import { compareEvents, pairMessages, normalize, aliaser, firstDifference } from "../compare.js";
import { latency, quantile, usageOf } from "../latency.js";
import { StreamIndex } from "../search.js";

test("redaction is an allowlist: fields it does not know, at any depth, are redacted", () => {
  const events = [
    { type: "RUN_STARTED", threadId: "t", runId: "r", futureField: "secret-1", input: { threadId: "t", runId: "r", messages: [{ id: "u", role: "user", content: "hi", newField: "secret-2", name: "secret-3" }], tools: [{ name: "lookup", description: "secret-4" }], state: {}, newInputField: "secret-5", resume: [{ interruptId: "i", status: "resolved", payload: "secret-6", note: "secret-7" }] } },
    { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant", name: "secret-8", metadata: { who: "secret-9" } },
    { type: "RUN_FINISHED", threadId: "t", runId: "r", outcome: { type: "interrupt", interrupts: [{ id: "i2", reason: "confirm", message: "secret-10", extra: "secret-11" }], later: "secret-12" }, usage: [{ provider: "openai", model: "gpt-x", inputTokens: 10, outputTokens: 5, account: "secret-13" }] },
    { type: "FUTURE_EVENT", messageId: "m", payload: "secret-14", timestamp: 5 },
    { type: "STATE_DELTA", delta: [{ op: "add", path: "/a", value: "secret-15", note: "secret-16" }] },
    { type: "TEXT_MESSAGE_CONTENT", messageId: { smuggled: "secret-17" }, delta: "x" },
  ];
  const red = events.map(redactEvent);
  const text = JSON.stringify(red);
  for (let k = 1; k <= 17; k++) assert.ok(!text.includes(`secret-${k}`), `secret-${k} survives: ${text}`);
  // What is known to be safe stays.
  assert.equal(red[0].input.messages[0].id, "u");
  assert.equal(red[0].input.tools[0].name, "lookup");
  assert.deepEqual([red[0].input.resume[0].interruptId, red[0].input.resume[0].status], ["i", "resolved"]);
  assert.deepEqual([red[1].messageId, red[1].role], ["m", "assistant"]);
  assert.deepEqual(red[2].outcome.interrupts[0].reason, "confirm");
  assert.deepEqual(red[2].usage[0], { provider: "openai", model: "gpt-x", inputTokens: 10, outputTokens: 5, account: "‹string 9›" });
  // An unknown event keeps its type and time only; its ids too are redacted (not known to be ids).
  assert.deepEqual(red[3], { type: "FUTURE_EVENT", messageId: "‹string 1›", payload: "‹string 9›", timestamp: 5 });
  assert.deepEqual(red[4].delta, [{ op: "add", path: "/a", value: "‹string 9›", note: "‹string 9›" }]);
  // Keys a new field adds are redacted: every kept field is listed.
  assert.deepEqual(KEPT_FIELDS.TEXT_MESSAGE_CONTENT, ["type", "timestamp", "subagentRunId", "messageId", "delta"]);
  assert.equal(redactInput({ messages: [{ id: "a", role: "user", content: "secret" }] }).messages[0].content, "‹····›");
});

test("export: SSE reads back as the same events; HAR holds each run's request and response, no credential", () => {
  const run = [{ type: "RUN_STARTED", threadId: "t", runId: "r" }, { type: "TEXT_MESSAGE_CHUNK", messageId: "m", delta: "héllo\nworld" }, { type: "RUN_FINISHED", threadId: "t", runId: "r" }];
  assert.deepEqual(parseRecording(toSse(run)), { format: "sse", events: run });
  const input = { threadId: "t", runId: "r", messages: [] };
  const har = toHar([{ url: "http://127.0.0.1:1/agent", input, events: run, startedMs: 1700000000000, timeMs: 120, waitMs: 20 }, { url: "x", input: null, events: run, startedMs: null, timeMs: null, waitMs: null }]);
  assert.equal(har.log.version, "1.2");
  assert.equal(har.log.entries.length, 2);
  const [e, f] = har.log.entries;
  assert.equal(e.request.method, "POST");
  assert.deepEqual(JSON.parse(e.request.postData.text), input);
  assert.equal(e.response.content.mimeType, "text/event-stream");
  assert.deepEqual(parseRecording(e.response.content.text).events, run);
  assert.deepEqual(e.timings, { send: 0, wait: 20, receive: 100 });
  assert.equal(e.startedDateTime, "2023-11-14T22:13:20.000Z");
  assert.ok(!JSON.stringify(har).toLowerCase().includes("authorization"));
  assert.equal(f.request.postData, undefined);
  assert.equal(e.response.content.size, new TextEncoder().encode(toSse(run)).length);
});

const runOf = (id, texts, extra = {}) => [
  { type: "RUN_STARTED", threadId: "t", runId: id, timestamp: 1, input: { threadId: "t", runId: id, messages: [{ id: `u-${id}`, role: "user", content: extra.ask ?? "hi" }] } },
  { type: "TEXT_MESSAGE_START", messageId: `m-${id}`, role: "assistant", timestamp: 2 },
  ...texts.map((d) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: `m-${id}`, delta: d })),
  { type: "TEXT_MESSAGE_END", messageId: `m-${id}` },
  { type: "RUN_FINISHED", threadId: "t", runId: id, timestamp: 9 },
];

test("compare: as agui diff: ids by order of appearance, timestamps aside, the first field that differs", () => {
  assert.equal(compareEvents(runOf("a", ["x", "y"]), runOf("b", ["x", "y"])).divergence, null);
  // The requests differ first; the answers at the second delta.
  const c = compareEvents(runOf("a", ["x", "y"]), runOf("b", ["x", "z"], { ask: "hello" }));
  assert.deepEqual([c.divergence.index, c.divergence.path, c.divergence.left, c.divergence.right], [0, "/input/messages/0/content", "hi", "hello"]);
  assert.deepEqual([c.answer.index, c.answer.path, c.answer.left, c.answer.right, c.answer.leftType], [3, "/delta", "y", "z", "TEXT_MESSAGE_CONTENT"]);
  assert.deepEqual(c.answer.changes.map((x) => [x.path, x.before, x.after]), [["/delta", "y", "z"]]);
  // Same requests: the answer is the divergence.
  const same = compareEvents(runOf("a", ["x", "y"]), runOf("b", ["x", "z"]));
  assert.equal(same.answer, same.divergence);
  const shorter = compareEvents(runOf("a", ["x"]), runOf("b", ["x", "y"]));
  assert.deepEqual([shorter.divergence.index, shorter.divergence.path, shorter.divergence.a.type], [3, "/type", "TEXT_MESSAGE_END"]);
  assert.deepEqual(shorter.count, [5, 6]);
  const ended = compareEvents(runOf("a", ["x"]).slice(0, 3), runOf("b", ["x"]));
  assert.deepEqual([ended.divergence.a, ended.divergence.path, ended.divergence.rightType], [null, "", "TEXT_MESSAGE_END"]);
  // An id is an id by its place: the same value where another stream has a new one differs.
  const reuse = compareEvents(
    [{ type: "TEXT_MESSAGE_START", messageId: "m1" }, { type: "TEXT_MESSAGE_START", messageId: "m1" }],
    [{ type: "TEXT_MESSAGE_START", messageId: "q" }, { type: "TEXT_MESSAGE_START", messageId: "r" }]);
  assert.deepEqual([reuse.divergence.index, reuse.divergence.path, reuse.divergence.left, reuse.divergence.right], [1, "/messageId", "m1", "r"]);
  // Ids: the same id gets the same alias wherever it appears; only ID_FIELDS, only strings.
  const alias = aliaser();
  assert.deepEqual(normalize({ messageId: "q", parentMessageId: "q", id: "z", text: "q", entityId: "e", timestamp: 4, runId: 7 }, alias), { messageId: "#1", parentMessageId: "#1", id: "#2", text: "q", entityId: "e", runId: 7 });
  assert.equal(firstDifference({ a: 1, b: [1, 2] }, { a: 1, b: [1], c: 0 }), "/b/1");
  assert.equal(firstDifference({ "x/y": { "~": 1 } }, { "x/y": { "~": 2 } }), "/x~1y/~0");
  const rows = pairMessages([{ role: "user", content: "a" }, { role: "assistant", content: "b" }], [{ role: "user", content: "a" }]);
  assert.deepEqual(rows.map((r) => r.same), [true, false]);
});

test("latency: first event, first text, gaps between deltas, tokens", () => {
  const evs = [
    { ev: { type: "RUN_STARTED" }, t: 40 },
    { ev: { type: "TEXT_MESSAGE_START" }, t: 50 },
    { ev: { type: "TEXT_MESSAGE_CONTENT", delta: "a" }, t: 60 },
    { ev: { type: "TEXT_MESSAGE_CONTENT", delta: "b" }, t: 70 },
    { ev: { type: "TEXT_MESSAGE_CONTENT", delta: "c" }, t: 100 },
    { ev: { type: "RUN_FINISHED", usage: [{ provider: "p", model: "m", inputTokens: 3, outputTokens: 4 }, { provider: "p", model: "n", inputTokens: 1, outputTokens: 1, totalTokens: 2 }] }, t: 110 },
  ];
  const l = latency(evs);
  assert.deepEqual([l.firstEvent, l.firstText, l.total, l.deltas], [40, 60, 110, 3]);
  assert.deepEqual(l.gaps, [10, 30]);
  assert.deepEqual(l.gap, { count: 2, p50: 10, p95: 30, max: 30 });
  assert.deepEqual(l.tokens, { models: ["p/m", "p/n"], inputTokens: 4, outputTokens: 5, totalTokens: 2 });
  assert.equal(latency(evs.map((x) => ({ ev: x.ev, t: null }))).firstText, null);
  assert.equal(usageOf([{ type: "RUN_FINISHED" }]), null);
  assert.equal(quantile([], 0.5), null);
  assert.equal(latency(evs.map((x) => ({ ...x, t: x.t - 40 })), "first-event").firstEvent, 0);
});

test("search: a phrase split across deltas names the events that carry it", () => {
  const ix = new StreamIndex();
  const evs = [
    { type: "RUN_STARTED" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "The fjo" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "rds are" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: " lovely" },
    { type: "TOOL_CALL_CHUNK", toolCallId: "c", delta: '{"ci' },
    { type: "TOOL_CALL_CHUNK", delta: 'ty":"Oslo"}' },
    { type: "REASONING_MESSAGE_CONTENT", messageId: "m", delta: "fjords" },
  ];
  evs.forEach((e, i) => ix.add(i, e));
  assert.deepEqual([...ix.find("FJORDS ARE")].sort(), [1, 2]);
  assert.deepEqual([...ix.find("are lovely")].sort(), [2, 3]);
  assert.deepEqual([...ix.find('"city"')].sort(), [4, 5]);
  assert.deepEqual([...ix.find("fjords")].sort(), [1, 2, 6]);
  assert.equal(ix.find("no such phrase").size, 0);
  assert.equal(ix.find("").size, 0);
});
