#!/usr/bin/env node
// Browser test of the agui web console: drives headless Chromium (playwright-core)
// against a server that serves the console at / and an AG-UI agent at /agent.
//
//   node console.test.mjs [BASE_URL]
//
// BASE_URL (or env CONSOLE_URL) is e.g. the URL `agui serve` prints. Without
// one, the scripted fake-agent.mjs is started on a free loopback port.
// Env: CHROMIUM_PATH (default /usr/bin/chromium), SCREENSHOT (default
// target/console.png, relative to the working directory), TEST_TIMEOUT_MS
// (per step, default 20000).
// Prints one line per check and a last line "N passed, M failed"; exits
// non-zero when a check fails.

import { mkdtempSync, rmSync, mkdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { chromium } from "playwright-core";

const STEP_TIMEOUT = Number(process.env.TEST_TIMEOUT_MS || 20000);
const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const screenshotPath = resolve(process.env.SCREENSHOT || "target/console.png");
let base = process.argv[2] || process.env.CONSOLE_URL;

const results = [];
const pageErrors = [];

function log(line) {
  process.stdout.write(line + "\n");
}

class Check extends Error {}
function expect(cond, message) {
  if (!cond) throw new Check(message);
}

async function check(name, fn) {
  const t0 = performance.now();
  try {
    await fn();
    results.push({ name, ok: true });
    log(`ok   ${name} (${Math.round(performance.now() - t0)} ms)`);
  } catch (err) {
    results.push({ name, ok: false, error: err });
    log(`FAIL ${name}: ${err instanceof Check ? err.message : err?.stack ?? err}`);
  }
}

const T = (id) => `[data-testid="${id}"]`;

// ---- page helpers -----------------------------------------------------------

const runCount = (page) => page.$eval(T("run-status"), (s) => Number(s.dataset.runs || 0));

async function waitRunDone(page, runsBefore) {
  await page.waitForFunction(
    ([sel, n]) => {
      const s = document.querySelector(sel);
      return s && Number(s.dataset.runs || 0) > n && s.dataset.busy === "false";
    },
    [T("run-status"), runsBefore],
    { timeout: STEP_TIMEOUT },
  );
  return page.$eval(T("run-status"), (s) => ({ status: s.dataset.status, text: s.textContent.replace(/\s+/g, " ").trim() }));
}

// Types the text, presses Enter, waits until the run is over.
async function send(page, text) {
  const before = await runCount(page);
  await page.fill(T("input"), text);
  await page.press(T("input"), "Enter");
  return waitRunDone(page, before);
}

// Event types of the last run in the timeline (after its request row).
const lastRunEvents = (page) =>
  page.$$eval(`${T("timeline")} > li`, (items) => {
    const out = [];
    for (let i = items.length - 1; i >= 0; i--) {
      if (items[i].dataset.testid === "timeline-run") break;
      const b = items[i].querySelector('[data-testid="timeline-event"]');
      if (b) out.unshift(b.dataset.type);
    }
    return out;
  });

// Records every distinct text a selector's last match shows while a run streams.
const watch = (page, selector) =>
  page.evaluate((sel) => {
    const seen = [];
    const chat = document.querySelector('[data-testid="chat"]');
    const note = () => {
      const all = chat.querySelectorAll(sel);
      const last = all[all.length - 1];
      const t = last ? last.textContent : null;
      if (t !== null && seen[seen.length - 1] !== t) seen.push(t);
    };
    const obs = new MutationObserver(note);
    obs.observe(document.body, { subtree: true, childList: true, characterData: true });
    window.__watch = { seen, obs };
  }, selector);
const watched = (page) =>
  page.evaluate(() => {
    window.__watch.obs.disconnect();
    return window.__watch.seen;
  });

// ---- the run ----------------------------------------------------------------

let fake;
if (!base) {
  const { startFakeAgent } = await import("./fake-agent.mjs");
  fake = await startFakeAgent({ port: 0 });
  base = fake.url;
  log(`# no CONSOLE_URL given: using fake-agent.mjs at ${base}`);
} else log(`# console at ${base}`);
if (!existsSync(chromiumPath)) {
  log(`FAIL setup: no Chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_PATH)`);
  log("0 passed, 1 failed");
  process.exit(1);
}

const profile = mkdtempSync(join(tmpdir(), "agui-console-test-"));
let context;
const posted = []; // request bodies sent to the agent
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1440, height: 1000 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_TIMEOUT);
  page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && pageErrors.push(`console: ${m.text()}`));
  page.on("request", (r) => {
    if (r.method() === "POST") {
      try {
        posted.push({ url: r.url(), headers: r.headers(), body: JSON.parse(r.postData() ?? "null") });
      } catch {
        posted.push({ url: r.url(), body: null });
      }
    }
  });

  await check("the console loads", async () => {
    const res = await page.goto(base, { waitUntil: "load" });
    expect(res && res.ok(), `GET ${base} answered ${res?.status()}`);
    for (const id of ["input", "send", "run-status", "state-tree", "timeline", "chat"]) {
      expect(await page.$(T(id)), `no element with data-testid="${id}"`);
    }
    const status = await page.$eval(T("run-status"), (s) => s.dataset.status);
    expect(status === "idle", `run-status is "${status}", expected "idle"`);
    expect(await page.$$eval(T("try-item"), (b) => b.length) >= 8, "the 'what to try' list is missing items");
  });

  await check("a message gets a streamed reply", async () => {
    await watch(page, `${T("message-assistant")} ${T("message-text")}`);
    const { status, text } = await send(page, "hello");
    const seen = await watched(page);
    expect(status === "finished", `run ended as "${status}": ${text}`);
    const user = await page.$$eval(T("message-user"), (m) => m.map((x) => x.textContent));
    expect(user.some((t) => t.includes("hello")), "the user message is not shown");
    const reply = await page.$$eval(`${T("message-assistant")} ${T("message-text")}`, (m) => m.map((x) => x.textContent.trim()));
    const last = reply[reply.length - 1] ?? "";
    expect(last.length > 0, "no assistant text");
    const partial = seen.filter((t) => t && t.trim() !== last && last.startsWith(t.trim()));
    expect(partial.length >= 1, `the reply appeared in one piece (renders seen: ${seen.length})`);
    const events = await lastRunEvents(page);
    const contents = events.filter((t) => t === "TEXT_MESSAGE_CONTENT" || t === "TEXT_MESSAGE_CHUNK").length;
    expect(contents >= 2, `only ${contents} text content events in the timeline`);
    expect(events[0] === "RUN_STARTED" && events[events.length - 1] === "RUN_FINISHED", `timeline: ${events.join(" ")}`);
    const req = posted[posted.length - 1];
    expect(req && req.headers.accept === "text/event-stream", "the request did not ask for text/event-stream");
    const b = req.body;
    expect(b && b.threadId && b.runId && Array.isArray(b.messages) && Array.isArray(b.tools) && Array.isArray(b.context) && b.forwardedProps && "state" in b, "the request body is not a full RunAgentInput");
  });

  await check("timeline: clicking an event shows its JSON", async () => {
    const row = page.locator(`${T("timeline-event")}[data-type="RUN_FINISHED"]`).last();
    await row.click();
    const json = JSON.parse(await page.textContent(T("event-json")));
    expect(json.type === "RUN_FINISHED", `event-json shows ${json.type}`);
    const times = await page.$$eval(`${T("timeline-event")} .tl-time`, (t) => t.map((x) => x.textContent));
    expect(times.every((t) => /^\+\d+ ms$/.test(t)), `timings look wrong: ${times.slice(0, 3).join(", ")}`);
  });

  await check("'weather in Paris' shows a tool-call card with arguments and result", async () => {
    const { status, text } = await send(page, "weather in Paris");
    expect(status === "finished", `run ended as "${status}": ${text}`);
    const cards = await page.$$eval(T("tool-call"), (cs) => cs.map((c) => ({
      name: c.querySelector('[data-testid="tool-call-name"]')?.textContent ?? "",
      args: c.querySelector('[data-testid="tool-call-args"]')?.textContent ?? "",
      result: c.querySelector('[data-testid="tool-call-result"]')?.textContent ?? null,
      status: c.dataset.status,
    })));
    expect(cards.length >= 1, "no tool-call card");
    const card = cards[cards.length - 1];
    expect(card.name.trim() !== "", "the card has no tool name");
    expect(card.args.trim() !== "", "the card shows no arguments");
    expect(card.result !== null && card.result.trim() !== "", "the card shows no result");
    expect(card.status === "done", `card status "${card.status}"`);
    const events = await lastRunEvents(page);
    expect(events.includes("TOOL_CALL_ARGS") || events.includes("TOOL_CALL_CHUNK"), "no streamed arguments in the timeline");
  });

  await check("'plan a trip' shows an activity card updated step by step", async () => {
    const { status, text } = await send(page, "plan a trip");
    expect(status === "finished", `run ended as "${status}": ${text}`);
    const cards = await page.$$eval(T("activity"), (cs) => cs.map((c) => ({ type: c.dataset.activityType, text: c.textContent })));
    expect(cards.length >= 1, "no activity card");
    expect(cards[cards.length - 1].type, "the activity card has no type");
    const events = await lastRunEvents(page);
    expect(events.includes("ACTIVITY_SNAPSHOT"), "no ACTIVITY_SNAPSHOT");
    expect(events.includes("ACTIVITY_DELTA"), "no ACTIVITY_DELTA");
  });

  await check("'think about …' shows a reasoning block that expands and collapses", async () => {
    const { status, text } = await send(page, "think about prime numbers");
    expect(status === "finished", `run ended as "${status}": ${text}`);
    const block = page.locator(T("reasoning")).last();
    expect(await block.count(), "no reasoning block");
    await block.locator("summary").click();
    expect(await block.evaluate((d) => d.open), "the reasoning block did not expand");
    const body = (await block.locator(T("reasoning-text")).textContent()).trim();
    expect(body.length > 0, "the reasoning block is empty");
    await block.locator("summary").click();
    expect(!(await block.evaluate((d) => d.open)), "the reasoning block did not collapse");
  });

  await check("'research …' groups the output of two subagents", async () => {
    const { status, text } = await send(page, "research solar power");
    expect(status === "finished", `run ended as "${status}": ${text}`);
    const groups = await page.$$eval(T("subagent"), (gs) => gs.map((g) => ({
      id: g.dataset.subagentRunId,
      status: g.dataset.status,
      name: g.querySelector('[data-testid="subagent-name"]')?.textContent ?? "",
      messages: g.querySelectorAll('[data-testid="message-assistant"]').length,
    })));
    expect(groups.length >= 2, `${groups.length} subagent group(s)`);
    const recent = groups.slice(-2);
    expect(recent.every((g) => g.name.trim() !== ""), "a subagent group has no name");
    expect(recent.every((g) => g.status !== "running"), `subagent statuses: ${recent.map((g) => g.status).join(", ")}`);
    expect(recent.every((g) => g.messages >= 1), "a subagent group shows no message");
  });

  await check("'count to 3' changes the state tree", async () => {
    const before = await page.$eval(T("state-tree"), (t) => ({ text: t.textContent, version: Number(t.dataset.version || 0) }));
    const versions = [];
    const poll = setInterval(async () => {
      try {
        versions.push(await page.$eval(T("state-tree"), (t) => t.dataset.version));
      } catch {}
    }, 40);
    const { status, text } = await send(page, "count to 3");
    clearInterval(poll);
    expect(status === "finished", `run ended as "${status}": ${text}`);
    const after = await page.$eval(T("state-tree"), (t) => ({ text: t.textContent, version: Number(t.dataset.version || 0) }));
    expect(after.text !== before.text, `the state tree did not change (${after.text})`);
    expect(/\b3\b/.test(after.text), `the state tree does not show 3: ${after.text}`);
    const events = await lastRunEvents(page);
    expect(events.includes("STATE_DELTA"), "no STATE_DELTA in the run");
    const distinct = new Set(versions).size;
    log(`     state tree redrawn ${after.version - before.version} time(s), ${distinct} version(s) seen while running`);
  });

  await check("an interrupt is approved and the resumed run finishes", async () => {
    const { status, text } = await send(page, "approve");
    expect(status === "interrupted", `run ended as "${status}": ${text}`);
    const prompt = page.locator(`${T("interrupt")}[data-status="pending"]`).last();
    await prompt.waitFor();
    expect(await prompt.locator(T("deny")).count(), "no Deny button");
    const ids = await prompt.locator(T("interrupt-item")).evaluateAll((li) => li.map((x) => x.dataset.interruptId));
    expect(ids.length >= 1, "the interrupt prompt lists no interrupt");
    const blocked = await runCount(page);
    await page.fill(T("input"), "something else");
    await page.press(T("input"), "Enter");
    expect((await runCount(page)) === blocked, "a plain message was sent while an interrupt was pending");
    expect((await page.textContent(T("composer-hint"))).trim() !== "", "no hint about the pending interrupt");
    await page.fill(T("input"), "");
    const before = await runCount(page);
    await prompt.locator(T("approve")).click();
    const done = await waitRunDone(page, before);
    expect(done.status === "finished", `resumed run ended as "${done.status}": ${done.text}`);
    const req = posted[posted.length - 1].body;
    expect(Array.isArray(req?.resume), "the resuming request carries no resume");
    const answered = new Map(req.resume.map((r) => [r.interruptId, r]));
    for (const id of ids) {
      const r = answered.get(id);
      expect(r && r.status === "resolved" && r.payload?.approved === true, `interrupt ${id} answered with ${JSON.stringify(r)}`);
    }
    const noteStatus = await page.locator(T("interrupt")).last().getAttribute("data-status");
    expect(noteStatus === "approved", `interrupt card status "${noteStatus}"`);
    expect((await page.locator(`${T("interrupt")}[data-status="pending"]`).count()) === 0, "an interrupt is still pending");
  });

  await check(`screenshot saved`, async () => {
    await page.evaluate(() => document.querySelector('[data-testid="chat"]').scrollTo(0, 1e9));
    await page.waitForTimeout(300);
    mkdirSync(dirname(screenshotPath), { recursive: true });
    await page.screenshot({ path: screenshotPath });
    log(`     ${screenshotPath}`);
  });

  await check("'fail' shows RUN_ERROR in the run status", async () => {
    const { status, text } = await send(page, "fail");
    expect(status === "error", `run ended as "${status}": ${text}`);
    expect(/error/i.test(text) && text.length > "Error: ".length + 3, `status text: ${text}`);
    expect(await page.locator(T("run-error")).count(), "no run-error card in the chat");
    const events = await lastRunEvents(page);
    expect(events[events.length - 1] === "RUN_ERROR", `the run did not end with RUN_ERROR: ${events.join(" ")}`);
  });

  await check("a non-2xx answer ends in an error, not a spinner", async () => {
    const url = new URL(base);
    url.searchParams.set("agent", "/no-such-agent-endpoint");
    await page.goto(url.href);
    const { status, text } = await send(page, "hello");
    expect(status === "error", `run ended as "${status}": ${text}`);
    expect(/HTTP [45]\d\d/.test(text), `status text: ${text}`);
  });

  await check("a broken stream ends in an error, not a spinner", async () => {
    await page.goto(base);
    await page.route("**/agent", (route) => route.fulfill({
      status: 200,
      headers: { "Content-Type": "text/event-stream" },
      body: 'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\r\n\r\n: a comment\r\ndata: {"type":"TEXT_MESSAGE_START",\r\ndata: "messageId":"m1"}\r\n\r\ndata: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"partial"}\n\ndata: {"type":"TEXT_MESS',
    }));
    let r = await send(page, "hello");
    expect(r.status === "error", `truncated frame: run ended as "${r.status}": ${r.text}`);
    const shown = await page.$$eval(`${T("message-assistant")} ${T("message-text")}`, (m) => m.map((x) => x.textContent));
    expect(shown.includes("partial"), `events before the break (CRLF, comment, multi-line data) were not applied: ${JSON.stringify(shown)}`);
    await page.unroute("**/agent");
    await page.route("**/agent", (route) => route.abort("connectionreset"));
    await page.click(T("new-thread"));
    r = await send(page, "hello");
    expect(r.status === "error", `connection reset: run ended as "${r.status}": ${r.text}`);
    await page.unroute("**/agent");
  });

  await check("SSE parser: LF/CRLF/CR, comments, multi-line data, UTF-8 split across chunks", async () => {
    await page.goto(base);
    const got = await page.evaluate(() => {
      const { SseParser } = window.aguiConsole;
      const text = 'data: {"type":"A","s":"é€😀"}\r\n\r\n: keep-alive\rdata: {"type":\ndata: "B"}\r\revent: x\nid: 1\ndata:{"type":"C"}\n\ndata: {"type":"D"}';
      const bytes = new TextEncoder().encode(text);
      const out = [];
      const dec = new TextDecoder("utf-8");
      const p = new SseParser((d) => out.push(JSON.parse(d)));
      for (let i = 0; i < bytes.length; i++) p.push(dec.decode(bytes.subarray(i, i + 1), { stream: true }));
      p.push(dec.decode());
      p.end();
      return out;
    });
    expect(JSON.stringify(got) === JSON.stringify([{ type: "A", s: "é€😀" }, { type: "B" }, { type: "C" }, { type: "D" }]), `parsed ${JSON.stringify(got)}`);
  });

  await check("JSON Patch: RFC 6902 operations, atomic on failure", async () => {
    const got = await page.evaluate(() => {
      const { applyPatch } = window.aguiConsole;
      const run = (doc, ops) => {
        try {
          return { ok: applyPatch(doc, ops) };
        } catch (e) {
          return { err: e.message };
        }
      };
      const doc = { a: [1, 2], "x/y": { "~": 1 }, n: null };
      return {
        add: run(doc, [{ op: "add", path: "/a/-", value: 3 }, { op: "add", path: "/a/0", value: 0 }, { op: "add", path: "/b", value: { c: 1 } }]),
        escapes: run(doc, [{ op: "replace", path: "/x~1y/~0", value: 2 }]),
        moveCopy: run(doc, [{ op: "copy", from: "/a", path: "/c" }, { op: "move", from: "/c/1", path: "/d" }, { op: "remove", path: "/n" }]),
        test: run(doc, [{ op: "test", path: "/x~1y", value: { "~": 1 } }, { op: "replace", path: "", value: [true] }]),
        atomic: run(doc, [{ op: "replace", path: "/a/0", value: 9 }, { op: "remove", path: "/missing" }]),
        leadingZero: run(doc, [{ op: "replace", path: "/a/01", value: 9 }]),
        pastEnd: run(doc, [{ op: "add", path: "/a/3", value: 9 }]),
        proto: run(doc, [{ op: "add", path: "/__proto__/p", value: 1 }]),
        intoChild: run(doc, [{ op: "move", from: "/x~1y", path: "/x~1y/z" }]),
        untouched: doc,
      };
    });
    const eq = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    expect(eq(got.add.ok, { a: [0, 1, 2, 3], "x/y": { "~": 1 }, n: null, b: { c: 1 } }), `add: ${JSON.stringify(got.add)}`);
    expect(eq(got.escapes.ok?.["x/y"], { "~": 2 }), `escapes: ${JSON.stringify(got.escapes)}`);
    expect(eq(got.moveCopy.ok, { a: [1, 2], "x/y": { "~": 1 }, c: [1], d: 2 }), `move/copy/remove: ${JSON.stringify(got.moveCopy)}`);
    expect(eq(got.test.ok, [true]), `test + root replace: ${JSON.stringify(got.test)}`);
    for (const k of ["atomic", "leadingZero", "pastEnd", "proto", "intoChild"]) expect(got[k].err, `${k} should fail: ${JSON.stringify(got[k])}`);
    expect(eq(got.untouched, { a: [1, 2], "x/y": { "~": 1 }, n: null }), "a failing patch changed the document");
  });

  await check("folds a synthetic stream like the reference client (chunks, lanes, snapshots, failing delta, unknown event)", async () => {
    const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
    const body = [
      ev({ type: "RUN_STARTED", threadId: "t", runId: "r" }),
      ev({ type: "MESSAGES_SNAPSHOT", messages: [{ id: "u0", role: "user", content: "earlier question" }, { id: "a0", role: "assistant", content: "earlier answer" }] }),
      ev({ type: "STATE_SNAPSHOT", snapshot: { items: ["x"], done: false } }),
      ev({ type: "SUBAGENT_STARTED", subagentRunId: "s1", name: "alpha" }),
      ev({ type: "SUBAGENT_STARTED", subagentRunId: "s2", name: "beta", parentSubagentRunId: "s1" }),
      ev({ type: "TEXT_MESSAGE_CHUNK", messageId: "m1", delta: "al", subagentRunId: "s1" }),
      ev({ type: "TEXT_MESSAGE_CHUNK", messageId: "m2", delta: "be", subagentRunId: "s2" }),
      ev({ type: "TEXT_MESSAGE_CHUNK", delta: "pha", subagentRunId: "s1" }),
      ev({ type: "TEXT_MESSAGE_CHUNK", delta: "ta", subagentRunId: "s2" }),
      ev({ type: "SUBAGENT_ERROR", subagentRunId: "s2", message: "beta broke" }),
      ev({ type: "SUBAGENT_FINISHED", subagentRunId: "s1" }),
      ev({ type: "STATE_DELTA", delta: [{ op: "add", path: "/items/-", value: "y" }, { op: "test", path: "/done", value: true }] }),
      ev({ type: "STATE_DELTA", delta: [{ op: "replace", path: "/done", value: true }] }),
      ev({ type: "SOMETHING_NEW", foo: 1 }),
      ev({ type: "TOOL_CALL_CHUNK", toolCallId: "c1", toolCallName: "lookup", parentMessageId: "a1", delta: '{"q":' }),
      ev({ type: "TOOL_CALL_CHUNK", delta: '"z"}' }),
      ev({ type: "TOOL_CALL_RESULT", messageId: "t1", toolCallId: "c1", content: "found" }),
      ev({ type: "REASONING_MESSAGE_CHUNK", messageId: "rz", delta: "hmm" }),
      ev({ type: "RUN_FINISHED", threadId: "t", runId: "r" }),
    ].join("");
    await page.route("**/agent", (route) => route.fulfill({ status: 200, headers: { "Content-Type": "text/event-stream" }, body }));
    try {
      const { status, text } = await send(page, "synthetic");
      expect(status === "finished", `run ended as "${status}": ${text}`);
      const view = await page.evaluate(() => {
        const q = (s, root = document) => [...root.querySelectorAll(s)];
        return {
          users: q('[data-testid="message-user"] [data-testid="message-text"]').map((x) => x.textContent),
          groups: q('[data-testid="subagent"]').map((g) => ({
            id: g.dataset.subagentRunId,
            status: g.dataset.status,
            parent: g.parentElement.closest('[data-testid="subagent"]')?.dataset.subagentRunId ?? null,
            text: q(':scope > .subagent-body > [data-testid="message-assistant"] [data-testid="message-text"]', g).map((x) => x.textContent),
          })),
          tool: q('[data-testid="tool-call"]').map((c) => [c.querySelector('[data-testid="tool-call-name"]').textContent, c.querySelector('[data-testid="tool-call-args"]').textContent.replace(/\s/g, ""), c.querySelector('[data-testid="tool-call-result"]')?.textContent]),
          reasoning: q('[data-testid="reasoning-text"]').map((x) => x.textContent),
          state: JSON.parse(document.querySelector('[data-testid="state-raw"]').textContent),
          unknown: q('[data-testid="timeline-event"][data-type="SOMETHING_NEW"]').length,
          warned: q('[data-testid="timeline-event"].warn').map((b) => b.dataset.type),
        };
      });
      // MESSAGES_SNAPSHOT replaces the local history: the just-typed message is gone.
      expect(JSON.stringify(view.users) === JSON.stringify(["earlier question"]), `user messages: ${JSON.stringify(view.users)}`);
      const s1 = view.groups.find((g) => g.id === "s1");
      const s2 = view.groups.find((g) => g.id === "s2");
      expect(s1 && s2, `groups: ${JSON.stringify(view.groups)}`);
      expect(s1.status === "finished" && s2.status === "error" && s2.parent === "s1", `group status/nesting: ${JSON.stringify(view.groups)}`);
      expect(s1.text.join() === "alpha" && s2.text.join() === "beta", `lane texts: ${JSON.stringify(view.groups)}`);
      expect(JSON.stringify(view.tool) === JSON.stringify([["lookup", '{"q":"z"}', "found"]]), `tool: ${JSON.stringify(view.tool)}`);
      expect(view.reasoning.join() === "hmm", `reasoning: ${JSON.stringify(view.reasoning)}`);
      expect(JSON.stringify(view.state) === JSON.stringify({ items: ["x"], done: true }), `state (the failing delta must not apply): ${JSON.stringify(view.state)}`);
      expect(view.unknown === 1, "the unknown event is not listed in the timeline");
      expect(view.warned.includes("STATE_DELTA") && view.warned.includes("SOMETHING_NEW"), `warnings on: ${view.warned.join(", ")}`);
    } finally {
      await page.unroute("**/agent");
    }
  });

  await check("Stop aborts a run without leaving a spinner", async () => {
    await page.goto(base);
    const before = await runCount(page);
    await page.fill(T("input"), "research wind power");
    await page.press(T("input"), "Enter");
    await page.waitForFunction((sel) => document.querySelector(sel).dataset.busy === "true", T("run-status"));
    await page.click(T("stop"));
    const r = await waitRunDone(page, before);
    expect(r.status === "cancelled", `after Stop the run is "${r.status}": ${r.text}`);
    expect(await page.isEnabled(T("send")), "Send stays disabled after Stop");
  });

  await check("no errors in the page", async () => {
    const real = pageErrors.filter((e) => !/Failed to load resource|ERR_CONNECTION_RESET|net::ERR_FAILED|404|405/.test(e));
    expect(real.length === 0, real.join("\n"));
  });
} catch (err) {
  results.push({ name: "harness", ok: false, error: err });
  log(`FAIL harness: ${err?.stack ?? err}`);
} finally {
  await context?.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
  await fake?.close();
}

const failed = results.filter((r) => !r.ok).length;
log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
