#!/usr/bin/env node
// Browser test of the agui web console: drives headless Chromium (playwright-core)
// against a server that serves the console at / and an AG-UI agent at /agent.
//
//   node console.test.mjs [BASE_URL]
//
// BASE_URL (or env CONSOLE_URL) is e.g. the URL `agui serve` prints (with the
// API token in its fragment, #token=...; the test's own API requests use it).
// Without one, the scripted fake-agent.mjs is started on a free loopback port,
// and the thread-list checks are skipped (it has no thread routes).
// Env: CHROMIUM_PATH (default /usr/bin/chromium), SCREENSHOT (default
// target/console.png, relative to the working directory; the thread list's
// screenshot goes next to it as console-threads.png), TEST_TIMEOUT_MS
// (per step, default 20000).
// Prints one line per check and a last line "N passed, M failed"; exits
// non-zero when a check fails.

import { mkdtempSync, rmSync, mkdirSync, existsSync } from "node:fs";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { randomUUID } from "node:crypto";
import { chromium } from "playwright-core";
import { debuggerChecks } from "./debugger.checks.mjs";
import { a2uiChecks } from "./a2ui.checks.mjs";
import { viewsChecks } from "./views.checks.mjs";

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

// ---- thread helpers ---------------------------------------------------------

// The API token `agui serve` puts in the console URL's fragment (#token=...).
const apiToken = () => {
  try {
    return new URLSearchParams(new URL(base).hash.slice(1)).get("token");
  } catch {
    return null;
  }
};
// A request to the server under test, with the token, from the test itself.
function api(path, init = {}) {
  const token = apiToken();
  return fetch(new URL(path, base).href, { ...init, headers: { ...(init.headers ?? {}), ...(token ? { Authorization: `Bearer ${token}` } : {}) } });
}
// Starts a run through the API and reads its stream to the end.
async function apiRun(threadId, text) {
  const res = await api("/agent", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify({ threadId, runId: randomUUID(), state: {}, messages: [{ id: randomUUID(), role: "user", content: text }], tools: [], context: [], forwardedProps: {} }),
  });
  const body = await res.text();
  expect(res.ok && body.includes("RUN_FINISHED"), `POST /agent for ${threadId}: HTTP ${res.status} ${body.slice(0, 200)}`);
}
async function apiThread(id) {
  const res = await api(`/agent/threads/${encodeURIComponent(id)}`);
  return { status: res.status, body: res.ok ? await res.json() : null };
}
const userTexts = (messages) => messages.filter((m) => m.role === "user").map((m) => m.content);

const item = (id) => `${T("thread-item")}[data-thread-id="${id}"]`;
const listedIds = (page) => page.$$eval(T("thread-item"), (li) => li.map((x) => x.dataset.threadId));
const currentThread = (page) => page.$eval(T("thread-id"), (c) => c.dataset.threadId);
const shownUserTexts = (page) => page.$$eval(`${T("message-user")} ${T("message-text")}`, (m) => m.map((x) => x.textContent));

// Waits until the thread list has answered (and is not loading a page).
async function waitThreadList(page, state = "ok") {
  await page.waitForSelector(`${T("threads")}[data-state="${state}"][aria-busy="false"]`, { state: "attached" });
}
// Waits until the stored thread `id` is open (its events and the server's fold are in).
async function waitOpened(page, id) {
  await page.waitForFunction(
    ([sel, id]) => {
      const s = document.querySelector(sel);
      return s && s.dataset.loaded === id && s.dataset.busy === "false";
    },
    [T("run-status"), id],
    { timeout: STEP_TIMEOUT },
  );
}
// A fresh document (page.goto to a URL that differs only in its fragment does not reload).
async function fresh(page, url) {
  await page.goto("about:blank");
  await page.goto(url);
}

// ---- agent picker helpers ---------------------------------------------------

// The agui binary the picker check starts: env AGUI_BIN, else the release build.
const aguiBin = process.env.AGUI_BIN || resolve(dirname(fileURLToPath(import.meta.url)), "../../../../target/debug/agui");

// Starts `agui serve ARGS` with env AGUI_TOKEN=token; resolves to {url, stop()} once its
// banner's console line is out (url: that console URL, with #token=token).
function startAgui(args, token) {
  const child = spawn(aguiBin, ["serve", ...args], { env: { ...process.env, AGUI_TOKEN: token }, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise((ok) => child.once("exit", ok));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((ok, fail) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      stop();
      fail(new Check(`agui serve printed no console URL in ${STEP_TIMEOUT} ms: ${out}${err}`));
    }, STEP_TIMEOUT);
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = /^  console\s+(\S+)/m.exec(out);
      if (m) {
        clearTimeout(timer);
        // A token given in AGUI_TOKEN is not echoed (the banner says #token=YOUR_TOKEN):
        // the console URL gets the one this test gave.
        ok({ url: m[1].replace(/#token=[^&]*/, `#token=${token}`), stop });
      }
    });
    child.once("error", (e) => {
      clearTimeout(timer);
      fail(new Check(`cannot start ${aguiBin}: ${e.message}`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Check(`agui serve exited (${code}) before its banner: ${err.trim()}`));
    });
  });
}
// Waits until the console has GET /agents's answer (data-agents: how many it lists).
async function waitAgents(page) {
  await page.waitForSelector(`${T("agent-pick")}[data-agents]`, { state: "attached" });
  return page.$eval(T("agent-pick"), (d) => Number(d.dataset.agents));
}

// ---- the run ----------------------------------------------------------------

let fake;
if (!base) {
  const { startFakeAgent } = await import("./fake-agent.mjs");
  fake = await startFakeAgent({ port: 0 });
  base = fake.url;
  log(`# no CONSOLE_URL given: using fake-agent.mjs at ${base}`);
} else log(`# console at ${base.replace(/([#&]token=)[^&]*/, "$1…")}`);
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

  // ---- the thread list ------------------------------------------------------

  const probe = await api("/agent/threads?limit=1").catch((e) => ({ ok: false, status: String(e?.message ?? e) }));
  if (!probe.ok && fake) {
    log("skip the thread list checks: fake-agent.mjs has no thread routes (run the test against `agui serve`)");
  } else {
    let older;
    let newer;

    await check("thread list: two threads made in the console are listed after a reload, newest first", async () => {
      expect(probe.ok, `GET /agent/threads answered ${probe.status}`);
      await fresh(page, base);
      await waitThreadList(page);
      let r = await send(page, "count to 3");
      expect(r.status === "finished", `run ended as "${r.status}": ${r.text}`);
      older = await currentThread(page);
      r = await send(page, "hello again");
      expect(r.status === "finished", `run ended as "${r.status}": ${r.text}`);
      await page.click(T("new-thread"));
      r = await send(page, "weather in Paris");
      expect(r.status === "finished", `run ended as "${r.status}": ${r.text}`);
      newer = await currentThread(page);
      expect(older && newer && older !== newer, `thread ids ${older} and ${newer}`);
      // The list refreshes when a run ends.
      await page.waitForSelector(`${item(newer)}[aria-current="true"]`);
      await page.reload();
      await waitThreadList(page);
      const ids = await listedIds(page);
      expect(ids.includes(older) && ids.includes(newer), `listed: ${ids.join(", ")}`);
      expect(ids.indexOf(newer) < ids.indexOf(older), "the newer thread is not listed before the older one");
      const row = await page.$eval(item(older), (li) => ({
        title: li.querySelector('[data-testid="thread-title"]').textContent,
        runs: li.querySelector('[data-testid="thread-runs"]').textContent,
        status: li.querySelector('[data-testid="thread-status"]').textContent,
      }));
      expect(row.title === "count to 3" && row.runs === "2 runs" && row.status === "finished", `the older thread's row: ${JSON.stringify(row)}`);
      // The reload opened the thread named in the address again.
      await waitOpened(page, newer);
      const users = await shownUserTexts(page);
      expect(JSON.stringify(users) === JSON.stringify(["weather in Paris"]), `after the reload the chat shows ${JSON.stringify(users)}`);
    });

    await check("opening a stored thread shows its messages, state and timeline", async () => {
      await page.click(`${item(older)} ${T("thread-open")}`);
      await waitOpened(page, older);
      expect((await currentThread(page)) === older, "the console did not switch to the opened thread");
      expect((await page.getAttribute(item(older), "aria-current")) === "true", "the opened thread is not marked in the list");
      const users = await shownUserTexts(page);
      expect(JSON.stringify(users) === JSON.stringify(["count to 3", "hello again"]), `user messages: ${JSON.stringify(users)}`);
      const shown = await page.$$eval('[data-testid="chat"] [data-message-id]', (m) => m.map((x) => x.dataset.messageId));
      const server = await apiThread(older);
      expect(server.status === 200, `GET /agent/threads/${older}: ${server.status}`);
      const stored = server.body.messages.filter((m) => m.role === "user" || m.role === "assistant").map((m) => m.id);
      expect(JSON.stringify(shown) === JSON.stringify(stored), `the chat shows messages ${shown.join(", ")}; the server has ${stored.join(", ")}`);
      const state = JSON.parse(await page.textContent(T("state-raw")));
      expect(JSON.stringify(state) === JSON.stringify(server.body.state) && state.count === 3, `state ${JSON.stringify(state)}; the server has ${JSON.stringify(server.body.state)}`);
      const runs = await page.$$eval(`${T("timeline-run")}[data-stored="true"]`, (r) => r.map((x) => x.dataset.runId));
      expect(JSON.stringify(runs) === JSON.stringify(server.body.runs.map((x) => x.runId)), `timeline runs ${runs.join(", ")}`);
      const rows = await page.$$eval(T("timeline-event"), (b) => b.map((x) => [x.dataset.type, x.querySelector(".tl-time").textContent]));
      const types = rows.map((x) => x[0]);
      for (const t of ["RUN_STARTED", "STATE_DELTA", "TEXT_MESSAGE_START", "RUN_FINISHED"]) expect(types.includes(t), `no ${t} in the timeline: ${types.join(" ")}`);
      expect(rows.length === server.body.lastSeq, `${rows.length} timeline rows for ${server.body.lastSeq} stored events`);
      expect(rows.every(([, t], i) => t === `#${i + 1}`), `stored events are not numbered #1..#${rows.length}: ${rows.slice(0, 3).map((x) => x[1]).join(", ")}`);
      await page.locator(`${T("timeline-event")}[data-type="STATE_DELTA"]`).first().click();
      expect(JSON.parse(await page.textContent(T("event-json"))).type === "STATE_DELTA", "clicking a stored event does not show its JSON");
    });

    await check("continuing an opened thread sends the whole conversation; the server keeps every turn", async () => {
      const from = posted.length;
      const assistantsBefore = await page.$$eval(T("message-assistant"), (m) => m.length);
      const r = await send(page, "and one more thing");
      expect(r.status === "finished", `run ended as "${r.status}": ${r.text}`);
      expect((await page.$$eval(T("message-assistant"), (m) => m.length)) > assistantsBefore, "no reply shown");
      const req = posted.slice(from).find((p) => new URL(p.url).pathname === "/agent")?.body;
      expect(req && req.threadId === older, `the run went to thread ${req?.threadId}`);
      const sent = userTexts(req.messages);
      expect(JSON.stringify(sent) === JSON.stringify(["count to 3", "hello again", "and one more thing"]), `the request's user messages: ${JSON.stringify(sent)}`);
      const ids = req.messages.map((m) => m.id);
      expect(new Set(ids).size === ids.length, `message ids repeat: ${ids.join(", ")}`);
      const server = await apiThread(older);
      expect(JSON.stringify(userTexts(server.body.messages)) === JSON.stringify(sent), `the server has user turns ${JSON.stringify(userTexts(server.body.messages))}`);
      const runIds = server.body.runs.map((x) => x.runId);
      expect(runIds.length === 3 && new Set(runIds).size === 3 && runIds[2] === req.runId, `stored runs: ${runIds.join(", ")} (sent ${req.runId})`);
      // The list follows: the thread moves to the top with its new run count.
      await page.waitForFunction(
        ([sel, id]) => {
          const first = document.querySelector(sel);
          return first && first.dataset.threadId === id && first.querySelector('[data-testid="thread-runs"]').textContent === "3 runs";
        },
        [T("thread-item"), older],
      );
    });

    await check("thread list screenshot saved", async () => {
      await page.evaluate(() => document.querySelector('[data-testid="chat"]').scrollTo(0, 1e9));
      await page.waitForTimeout(300);
      const path = screenshotPath.replace(/\.png$/i, "") + "-threads.png";
      mkdirSync(dirname(path), { recursive: true });
      await page.screenshot({ path });
      log(`     ${path}`);
    });

    await check("deleting a thread asks first; then it is gone from the list and the server", async () => {
      const deletes = [];
      const onRequest = (r) => r.method() === "DELETE" && deletes.push(r.url());
      page.on("request", onRequest);
      try {
        page.once("dialog", (d) => d.dismiss());
        await page.hover(item(newer));
        await page.click(`${item(newer)} ${T("thread-delete")}`);
        expect((await apiThread(newer)).status === 200 && deletes.length === 0, "the thread was deleted although the dialog was dismissed");
        expect(await page.$(item(newer)), "the thread left the list although the dialog was dismissed");
        let asked = "";
        page.once("dialog", (d) => {
          asked = d.message();
          d.accept();
        });
        await page.hover(item(newer));
        await page.click(`${item(newer)} ${T("thread-delete")}`);
        await page.waitForSelector(item(newer), { state: "detached" });
        expect(asked.includes("weather in Paris"), `the confirmation does not name the thread: ${asked}`);
        expect((await apiThread(newer)).status === 404, "GET /agent/threads/ID of the deleted thread is not 404");
        expect((await api(`/agent/threads/${newer}/connect`)).status === 404, "GET .../connect of the deleted thread is not 404");
        // The open thread: the console starts a fresh one.
        page.once("dialog", (d) => d.accept());
        await page.click(`${item(older)} ${T("thread-delete")}`);
        await page.waitForSelector(item(older), { state: "detached" });
        // The list can be redrawn (the reload after the first delete answering) before this
        // delete is done: wait for the console to leave the thread, then check.
        await page
          .waitForFunction(([sel, id]) => document.querySelector(sel)?.dataset.threadId !== id, [T("thread-id"), older], { timeout: 5000 })
          .catch(() => {});
        expect((await currentThread(page)) !== older, "the console still shows the deleted thread");
        expect((await shownUserTexts(page)).length === 0, "the chat still shows the deleted thread's messages");
        expect((await apiThread(older)).status === 404, "the open thread was not deleted on the server");
        expect(deletes.length === 2, `${deletes.length} DELETE requests`);
      } finally {
        page.off("request", onRequest);
      }
    });

    await check("the thread list pages: 'Load more' shows the rest, each thread once", async () => {
      const made = [];
      for (let batch = 0; batch < 3; batch++) {
        await Promise.all(Array.from({ length: 10 }, async (_, i) => {
          const id = randomUUID();
          await apiRun(id, `paging ${batch * 10 + i}`);
          made.push(id);
        }));
      }
      const all = [];
      for (let cursor = null, pages = 0; pages === 0 || cursor; pages++) {
        const res = await api(`/agent/threads?limit=1000${cursor ? "&cursor=" + encodeURIComponent(cursor) : ""}`);
        const body = await res.json();
        all.push(...body.threads.map((t) => t.threadId));
        cursor = body.nextCursor;
      }
      const asked = [];
      const onRequest = (r) => new URL(r.url()).pathname === "/agent/threads" && asked.push(new URL(r.url()).searchParams);
      page.on("request", onRequest);
      try {
        await fresh(page, base);
        await waitThreadList(page);
        expect((await listedIds(page)).length === 25, `the first page lists ${(await listedIds(page)).length} threads`);
        expect(await page.isVisible(T("threads-more")), "no 'Load more' although the server has more than 25 threads");
        for (let i = 0; i <= Math.ceil(all.length / 25) && (await page.isVisible(T("threads-more"))); i++) {
          await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === "/agent/threads"), page.click(T("threads-more"))]);
          await waitThreadList(page);
        }
        expect(!(await page.isVisible(T("threads-more"))), "'Load more' is still offered after every page");
        const ids = await listedIds(page);
        expect(new Set(ids).size === ids.length, "a thread is listed twice");
        const missing = made.filter((id) => !ids.includes(id));
        expect(missing.length === 0, `${missing.length} of the 30 new threads are not listed`);
        expect(ids.length === all.length && all.every((id) => ids.includes(id)), `the console lists ${ids.length} threads, the server has ${all.length}`);
        expect(asked.length >= 2 && asked.every((q) => q.get("limit") === "25"), `list requests: ${asked.map((q) => q.toString()).join(" | ")}`);
        expect(asked.slice(1).every((q) => q.get("cursor")), "a 'Load more' request carries no cursor");
      } finally {
        page.off("request", onRequest);
      }
    });

    await check("a stored thread waiting for an interrupt opens with Approve, and the answer resumes it", async () => {
      const id = randomUUID();
      await apiRun(id, "approve");
      const before = await apiThread(id);
      expect(before.body?.pendingInterrupts?.length === 1, `the thread has ${before.body?.pendingInterrupts?.length} pending interrupts`);
      await page.click(T("threads-refresh"));
      await page.waitForSelector(item(id));
      await page.click(`${item(id)} ${T("thread-open")}`);
      await waitOpened(page, id);
      const prompt = page.locator(`${T("interrupt")}[data-status="pending"]`);
      expect((await prompt.count()) === 1, `${await prompt.count()} pending interrupt cards`);
      const shownIds = await prompt.locator(T("interrupt-item")).evaluateAll((li) => li.map((x) => x.dataset.interruptId));
      expect(JSON.stringify(shownIds) === JSON.stringify(before.body.pendingInterrupts.map((i) => i.id)), `the card lists ${shownIds.join(", ")}`);
      const runs = await runCount(page);
      await prompt.locator(T("approve")).click();
      const done = await waitRunDone(page, runs);
      expect(done.status === "finished", `the resumed run ended as "${done.status}": ${done.text}`);
      const after = await apiThread(id);
      expect(after.body.pendingInterrupts.length === 0 && after.body.runs.length === 2, `after the answer: ${after.body.pendingInterrupts.length} pending, ${after.body.runs.length} runs`);
      expect((await page.locator(T("interrupt")).last().getAttribute("data-status")) === "approved", "the interrupt card is not marked approved");
    });
  }

  await check("an agent on another origin gets no thread list and never the token", async () => {
    const seen = [];
    const { startFakeAgent } = await import("./fake-agent.mjs");
    const other = await startFakeAgent({
      port: 0,
      onRequest: (req) => seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, asks: req.headers["access-control-request-headers"] ?? "" }),
    });
    const errorsBefore = pageErrors.length;
    try {
      const url = new URL(base);
      url.searchParams.set("agent", `${other.url}agent`);
      await fresh(page, url.href);
      await waitThreadList(page, "unavailable");
      expect(await page.isHidden(T("threads")), "the thread pane stays open for an agent without a thread list");
      await page.click(T("threads-toggle"));
      const note = await page.textContent(T("threads-note"));
      expect(await page.isVisible(T("threads-note")) && /no thread list/i.test(note), `the thread pane says: ${note}`);
      expect((await page.$$(T("thread-item"))).length === 0, "threads are listed for an agent without a thread list");
      const r = await send(page, "hello");
      expect(r.status === "error", `a run against an origin that allows no CORS ended as "${r.status}"`);
      expect(seen.some((s) => s.url.startsWith("/agent/threads")), `the other agent saw ${JSON.stringify(seen)}`);
      expect(seen.every((s) => !s.authorization && !/authorization/i.test(s.asks)), `the token went to another origin: ${JSON.stringify(seen)}`);
    } finally {
      await other.close();
      // The browser reports the refused cross-origin requests: expected here.
      const extra = pageErrors.splice(errorsBefore);
      pageErrors.push(...extra.filter((e) => !/CORS|Failed to load resource|ERR_FAILED|Failed to fetch/.test(e)));
    }
  });

  // ---- the agent picker -----------------------------------------------------

  await check("the agent picker is hidden when the server has one agent (or no GET /agents)", async () => {
    const res = await api("/agents").catch(() => null);
    const listed = res?.ok ? (await res.json()).agents?.length : 0;
    expect(listed === 1, `GET /agents answered ${res?.status} listing ${listed} agents`);
    await fresh(page, base);
    const shown = await waitAgents(page);
    expect(shown === listed, `the console counted ${shown} agents, GET /agents lists ${listed}`);
    expect(await page.isHidden(T("agent-picker")), "the agent picker shows for a single agent");
  });

  if (!existsSync(aguiBin) && fake) {
    log(`skip the agent picker check: no agui binary at ${aguiBin} (build it, or set AGUI_BIN)`);
  } else {
    await check("the agent picker lists the agents of `agui serve --upstream`; choosing one runs and lists threads there", async () => {
      const seenA = [];
      const seenB = [];
      const { startFakeAgent } = await import("./fake-agent.mjs");
      const a = await startFakeAgent({ port: 0, onRequest: (req) => seenA.push(`${req.method} ${req.url}`) });
      const b = await startFakeAgent({ port: 0, onRequest: (req) => seenB.push(`${req.method} ${req.url}`) });
      const token = randomUUID().replace(/-/g, "");
      let server;
      const requests = [];
      const onRequest = (r) => requests.push({ method: r.method(), url: new URL(r.url()), auth: r.headers().authorization });
      page.on("request", onRequest);
      try {
        server = await startAgui(["--listen", "127.0.0.1:0", "--store", "memory", "--delay-ms", "0", "--upstream", `a=${a.url}agent`, "--upstream", `b=${b.url}agent`], token);
        const origin = new URL(server.url).origin;
        await fresh(page, server.url);
        expect((await waitAgents(page)) === 3, `the console counted ${await page.$eval(T("agent-pick"), (d) => d.dataset.agents)} agents, expected 3`);
        expect(await page.isVisible(T("agent-picker")), "the agent picker is hidden with three agents");
        const listing = requests.find((r) => r.method === "GET" && r.url.pathname === "/agents");
        expect(listing && listing.auth === `Bearer ${token}`, "GET /agents went without the token");
        const options = await page.$$eval(`${T("agent-picker")} option`, (o) => o.map((x) => [x.value, x.textContent]));
        expect(JSON.stringify(options.map((o) => o[0])) === JSON.stringify(["/agent", "/agents/a", "/agents/b"]), `the picker offers ${JSON.stringify(options)}`);
        expect(options[1][1].startsWith("a") && options[2][1].startsWith("b"), `the options read ${JSON.stringify(options)}`);
        expect((await page.inputValue(T("agent-picker"))) === "/agent", "the picker does not show the agent in use (/agent)");

        const before = await currentThread(page);
        const postsBefore = posted.length;
        requests.length = 0;
        await page.selectOption(T("agent-picker"), "/agents/b");
        await waitThreadList(page);
        const thread = await currentThread(page);
        expect(thread && thread !== before, `choosing b kept the thread ${before}`);
        expect(new URL(page.url()).searchParams.get("agent") === "/agents/b", `the address is ${page.url()}`);
        expect((await page.inputValue(T("endpoint"))) === `${origin}/agents/b`, `the endpoint field reads ${await page.inputValue(T("endpoint"))}`);
        expect(requests.some((r) => r.method === "GET" && r.url.pathname === "/agents/b/threads"), `no thread list asked of /agents/b: ${requests.map((r) => r.url.pathname).join(", ")}`);
        // "What to try" names the demo agent's prompts: not for an upstream.
        expect(await page.isHidden(T("try")), "'What to try' shows for the upstream agent b");

        const r = await send(page, "hello b");
        expect(r.status === "finished", `the run through b ended as "${r.status}": ${r.text}`);
        const runs = posted.slice(postsBefore);
        expect(runs.length === 1 && new URL(runs[0].url).pathname === "/agents/b" && runs[0].body?.threadId === thread, `the run went to ${runs.map((x) => x.url).join(", ")}`);
        expect(seenB.some((x) => x.startsWith("POST /agent")) && !seenA.some((x) => x.startsWith("POST")), `upstream a saw ${JSON.stringify(seenA)}, b saw ${JSON.stringify(seenB)}`);
        const reply = await page.$$eval(`${T("message-assistant")} ${T("message-text")}`, (m) => m.map((x) => x.textContent));
        expect(reply.length === 1 && reply[0].includes("hello b"), `the chat shows the replies ${JSON.stringify(reply)}`);

        // The list (of /agents/b/threads) refreshes when the run ends and shows the thread.
        await page.waitForSelector(`${item(thread)}[aria-current="true"]`);
        const stored = await fetch(`${origin}/agents/b/threads/${thread}`, { headers: { Authorization: `Bearer ${token}` } });
        const body = stored.ok ? await stored.json() : null;
        expect(body?.runs?.length === 1 && userTexts(body.messages).join() === "hello b", `GET /agents/b/threads/${thread}: HTTP ${stored.status} ${JSON.stringify(body)?.slice(0, 200)}`);

        // A reload stays with b and opens the thread again.
        await page.reload();
        await waitAgents(page);
        await waitOpened(page, thread);
        expect((await page.inputValue(T("agent-picker"))) === "/agents/b", "after a reload the picker is not on b");
      } finally {
        page.off("request", onRequest);
        await server?.stop();
        await a.close();
        await b.close();
      }
    });
  }

  // ---- the debugger (time travel, recordings, violations, export, fork) ---------

  await debuggerChecks({ page, check, expect, T, base, fake, posted, apiThread, aguiBin, screenshotPath, send, fresh, log });

  // ---- A2UI surfaces (every basic-catalog example, lifecycle, placeholders, binding, actions) ----

  await a2uiChecks({ page, check, expect, T, base, fake, posted, screenshotPath, send, fresh, log });

  // ---- the views and fixes of issue 41 (search, rename, lineage, find, compare, edit,
  // export formats, latency; the defects of the Interrupts tab, the top bar, search,
  // unreadable files, "What to try", scrolling, pane sizes) ----------------------------

  await viewsChecks({ page, check, expect, T, base, fake, posted, api, apiRun, apiThread, aguiBin, screenshotPath, send, fresh, log, item, waitThreadList, waitOpened, currentThread });

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
