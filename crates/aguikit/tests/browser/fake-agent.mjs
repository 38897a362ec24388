#!/usr/bin/env node
// A stand-in for `agui serve` while the Rust server is being built: serves the
// console's static files at / and answers POST /agent with scripted AG-UI SSE
// streams that mimic the demo agent (node:http only, no dependencies).
//
//   node fake-agent.mjs [--port 8787] [--host 127.0.0.1]
//
// Prints "listening on http://HOST:PORT/" once ready. Also importable:
// `startFakeAgent({port, host, onRequest})` resolves to {url, close()}; onRequest(req),
// if given, sees every request first (the browser test checks what reaches it).
// It has no thread routes (GET /agent/threads answers 404): the console shows
// "no thread list" for it.
//
// Behaviour by the last user message (case-insensitive):
//   "fail"                -> some text, then RUN_ERROR
//   "count to N"          -> STATE_DELTA per step (N <= 50)
//   "approve"             -> a tool call, then RUN_FINISHED with an interrupt;
//                            the next run answers it through `resume`
//   "research X"          -> two subagents streaming concurrently
//   "think about X"       -> reasoning (with an encrypted value), then an answer
//   "plan ..."            -> an activity (PLAN) updated step by step
//   "weather" / "tool"    -> a tool call with streamed arguments and a result
//   anything else         -> a streamed reply (TEXT_MESSAGE_CHUNK)
// Extra, for poking at the console's error handling:
//   "http 500"            -> a 500 response with a JSON body
//   "drop"                -> the connection is cut in the middle of a message
//   "unknown"             -> an unknown event type and a RAW event

import http from "node:http";
import { readFile } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { randomUUID } from "node:crypto";

const here = dirname(fileURLToPath(import.meta.url));
const consoleDir = join(here, "..", "..", "console");

// The console's files: the page, its stylesheet and every ES module next to them.
const STATIC = {
  "/": ["index.html", "text/html; charset=utf-8"],
  "/index.html": ["index.html", "text/html; charset=utf-8"],
  "/style.css": ["style.css", "text/css; charset=utf-8"],
};
for (const f of readdirSync(consoleDir)) if (f.endsWith(".js")) STATIC[`/${f}`] = [f, "text/javascript; charset=utf-8"];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Threads with an unanswered interrupt: threadId -> {interrupts, toolCallId}.
const pending = new Map();

function lastUserText(input) {
  const msgs = Array.isArray(input.messages) ? input.messages : [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m && m.role === "user") {
      if (typeof m.content === "string") return m.content;
      if (Array.isArray(m.content)) return m.content.filter((p) => p?.type === "text").map((p) => p.text).join(" ");
    }
  }
  return "";
}

// Splits text into small deltas (a word and its trailing space).
const words = (s) => s.match(/\S+\s*|\s+/g) ?? [];

class Stream {
  constructor(res, input) {
    this.res = res;
    this.threadId = input.threadId;
    this.runId = input.runId;
    this.closed = false;
    res.on("close", () => (this.closed = true));
  }
  emit(ev) {
    if (this.closed) throw new Error("client went away");
    this.res.write(`data: ${JSON.stringify(ev)}\n\n`);
  }
  started() {
    this.emit({ type: "RUN_STARTED", threadId: this.threadId, runId: this.runId, protocolVersion: "1.0", timestamp: Date.now() });
  }
  finished(extra = {}) {
    this.emit({ type: "RUN_FINISHED", threadId: this.threadId, runId: this.runId, ...extra });
  }
  async text(s, { delay = 30, tag, messageId = `msg-${randomUUID().slice(0, 8)}` } = {}) {
    const t = tag ? { subagentRunId: tag } : {};
    this.emit({ type: "TEXT_MESSAGE_START", messageId, role: "assistant", ...t });
    for (const w of words(s)) {
      await sleep(delay);
      this.emit({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: w, ...t });
    }
    this.emit({ type: "TEXT_MESSAGE_END", messageId, ...t });
    return messageId;
  }
}

const scripts = {
  async reply(s, text) {
    const id = `msg-${randomUUID().slice(0, 8)}`;
    const answer = `You said: “${text.trim()}”. I am a scripted stand-in for the agui demo agent. Try “weather in Paris”, “plan a trip”, “think about X”, “research X”, “approve”, “count to 5” or “fail”.`;
    let first = true;
    for (const w of words(answer)) {
      await sleep(25);
      s.emit(first ? { type: "TEXT_MESSAGE_CHUNK", messageId: id, role: "assistant", delta: w } : { type: "TEXT_MESSAGE_CHUNK", messageId: id, delta: w });
      first = false;
    }
    s.emit({ type: "CUSTOM", name: "demo.reply", value: { words: words(answer).length } });
    s.finished();
  },

  async weather(s, text) {
    const city = /\bin\s+([A-Za-zÀ-ÿ' -]+?)[?.!]*$/i.exec(text.trim())?.[1] ?? "Paris";
    const msg = await s.text(`Let me check the weather in ${city}.`);
    const callId = `call-${randomUUID().slice(0, 8)}`;
    s.emit({ type: "TOOL_CALL_START", toolCallId: callId, toolCallName: "get_weather", parentMessageId: msg });
    for (const d of ['{"city":', ` ${JSON.stringify(city)}`, ', "unit": ', '"celsius"}']) {
      await sleep(60);
      s.emit({ type: "TOOL_CALL_ARGS", toolCallId: callId, delta: d });
    }
    s.emit({ type: "TOOL_CALL_END", toolCallId: callId });
    await sleep(250);
    s.emit({ type: "TOOL_CALL_RESULT", messageId: `tool-${randomUUID().slice(0, 8)}`, toolCallId: callId, role: "tool", content: JSON.stringify({ city, temperature: 18, unit: "celsius", conditions: "cloudy" }) });
    await s.text(`It is 18 °C and cloudy in ${city}.`);
    s.finished();
  },

  async plan(s) {
    const id = `plan-${randomUUID().slice(0, 8)}`;
    const steps = ["Pick the dates", "Find flights", "Book a hotel", "Draft an itinerary"];
    s.emit({ type: "ACTIVITY_SNAPSHOT", messageId: id, activityType: "PLAN", content: { title: "Trip plan", steps: steps.map((title) => ({ title, status: "pending" })) } });
    for (let i = 0; i < steps.length; i++) {
      await sleep(180);
      s.emit({ type: "ACTIVITY_DELTA", messageId: id, activityType: "PLAN", patch: [{ op: "replace", path: `/steps/${i}/status`, value: "in_progress" }] });
      await sleep(220);
      s.emit({ type: "ACTIVITY_DELTA", messageId: id, activityType: "PLAN", patch: [{ op: "replace", path: `/steps/${i}/status`, value: "done" }] });
    }
    await s.text("Your trip plan is ready: four steps, all done.");
    s.finished();
  },

  async think(s, text) {
    const topic = /think(?:ing)?\s+(?:about\s+)?(.+)/i.exec(text)?.[1]?.trim() || "that";
    const span = `reasoning-${randomUUID().slice(0, 8)}`;
    const rid = `thought-${randomUUID().slice(0, 8)}`;
    s.emit({ type: "REASONING_START", messageId: span });
    s.emit({ type: "REASONING_MESSAGE_START", messageId: rid, role: "reasoning" });
    for (const w of words(`The user wants me to think about ${topic}. First list what I know, then check it for gaps, then give a short answer.`)) {
      await sleep(25);
      s.emit({ type: "REASONING_MESSAGE_CONTENT", messageId: rid, delta: w });
    }
    s.emit({ type: "REASONING_MESSAGE_END", messageId: rid });
    s.emit({ type: "REASONING_ENCRYPTED_VALUE", subtype: "message", entityId: rid, encryptedValue: Buffer.from(`opaque reasoning about ${topic}`).toString("base64") });
    s.emit({ type: "REASONING_END", messageId: span });
    await s.text(`Having thought about ${topic}: it is worth a closer look, one step at a time.`);
    s.finished();
  },

  async research(s, text) {
    const topic = /research\s+(.+)/i.exec(text)?.[1]?.trim() || "the topic";
    const a = `sa-web-${randomUUID().slice(0, 6)}`;
    const b = `sa-papers-${randomUUID().slice(0, 6)}`;
    s.emit({ type: "SUBAGENT_STARTED", subagentRunId: a, name: "web-researcher", description: `Searches the web for ${topic}` });
    s.emit({ type: "SUBAGENT_STARTED", subagentRunId: b, name: "paper-reader", description: `Reads papers about ${topic}` });
    s.emit({ type: "STEP_STARTED", stepName: "search", subagentRunId: a });
    s.emit({ type: "STEP_STARTED", stepName: "read", subagentRunId: b });
    const ma = `msg-${randomUUID().slice(0, 8)}`;
    const mb = `msg-${randomUUID().slice(0, 8)}`;
    s.emit({ type: "TEXT_MESSAGE_START", messageId: ma, role: "assistant", subagentRunId: a });
    s.emit({ type: "TEXT_MESSAGE_START", messageId: mb, role: "assistant", subagentRunId: b });
    const wa = words(`Found three recent articles on ${topic}; two agree on the main trend.`);
    const wb = words(`Read two survey papers on ${topic}; they list open problems and good benchmarks.`);
    for (let i = 0; i < Math.max(wa.length, wb.length); i++) {
      await sleep(30);
      if (i < wa.length) s.emit({ type: "TEXT_MESSAGE_CONTENT", messageId: ma, delta: wa[i], subagentRunId: a });
      if (i < wb.length) s.emit({ type: "TEXT_MESSAGE_CONTENT", messageId: mb, delta: wb[i], subagentRunId: b });
    }
    s.emit({ type: "TEXT_MESSAGE_END", messageId: ma, subagentRunId: a });
    const call = `call-${randomUUID().slice(0, 8)}`;
    s.emit({ type: "TOOL_CALL_START", toolCallId: call, toolCallName: "web_search", parentMessageId: ma, subagentRunId: a });
    s.emit({ type: "TOOL_CALL_ARGS", toolCallId: call, delta: JSON.stringify({ query: topic, limit: 3 }), subagentRunId: a });
    s.emit({ type: "TOOL_CALL_END", toolCallId: call, subagentRunId: a });
    s.emit({ type: "TEXT_MESSAGE_END", messageId: mb, subagentRunId: b });
    await sleep(120);
    s.emit({ type: "TOOL_CALL_RESULT", messageId: `tool-${randomUUID().slice(0, 8)}`, toolCallId: call, content: "3 results", subagentRunId: a });
    s.emit({ type: "STEP_FINISHED", stepName: "read", subagentRunId: b });
    s.emit({ type: "SUBAGENT_FINISHED", subagentRunId: b, result: { papers: 2 }, outcome: { type: "success" } });
    await sleep(100);
    s.emit({ type: "STEP_FINISHED", stepName: "search", subagentRunId: a });
    s.emit({ type: "SUBAGENT_FINISHED", subagentRunId: a, result: { articles: 3 } });
    await s.text(`Summary: the web and the literature agree on ${topic}; see both subagents above for details.`);
    s.finished();
  },

  async count(s, _text, input, n) {
    const state = input.state && typeof input.state === "object" && !Array.isArray(input.state) ? input.state : null;
    if (!state) s.emit({ type: "STATE_SNAPSHOT", snapshot: { count: 0, target: n } });
    else s.emit({ type: "STATE_DELTA", delta: [{ op: "add", path: "/count", value: 0 }, { op: "add", path: "/target", value: n }] });
    for (let i = 1; i <= n; i++) {
      await sleep(200);
      s.emit({ type: "STATE_DELTA", delta: [{ op: "replace", path: "/count", value: i }] });
    }
    await s.text(`Counted to ${n}.`);
    s.finished();
  },

  async interrupt(s) {
    const msg = await s.text("I would like to email the quarterly report to the team. May I?");
    const call = `call-${randomUUID().slice(0, 8)}`;
    s.emit({ type: "TOOL_CALL_START", toolCallId: call, toolCallName: "send_email", parentMessageId: msg });
    s.emit({ type: "TOOL_CALL_ARGS", toolCallId: call, delta: JSON.stringify({ to: "team@example.com", subject: "Quarterly report" }) });
    s.emit({ type: "TOOL_CALL_END", toolCallId: call });
    const interrupts = [{
      id: `int-${randomUUID().slice(0, 8)}`,
      reason: "tool_call",
      message: "Send the quarterly report to team@example.com?",
      toolCallId: call,
      responseSchema: { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] },
    }];
    pending.set(s.threadId, { interrupts, toolCallId: call });
    s.finished({ outcome: { type: "interrupt", interrupts } });
  },

  async resume(s, _text, input) {
    const open = pending.get(s.threadId);
    if (!open) {
      s.emit({ type: "RUN_ERROR", message: "Nothing to resume on this thread.", code: "no_pending_interrupt" });
      return;
    }
    const answers = new Map(input.resume.map((r) => [r?.interruptId, r]));
    const missing = open.interrupts.filter((i) => !answers.has(i.id)).map((i) => i.id);
    if (missing.length) {
      s.emit({ type: "RUN_ERROR", message: `The resume does not answer ${missing.join(", ")}.`, code: "resume_incomplete" });
      return;
    }
    pending.delete(s.threadId);
    const r = answers.get(open.interrupts[0].id);
    const approved = r.status === "resolved" && r.payload?.approved === true;
    if (approved) {
      await sleep(150);
      s.emit({ type: "TOOL_CALL_RESULT", messageId: `tool-${randomUUID().slice(0, 8)}`, toolCallId: open.toolCallId, content: "sent to team@example.com" });
      await s.text("Done: the quarterly report is on its way.");
    } else {
      await s.text("All right, I did not send anything.");
    }
    s.finished({ outcome: { type: "success" } });
  },

  async fail(s) {
    await s.text("Trying something that will not work…");
    await sleep(150);
    s.emit({ type: "RUN_ERROR", message: "The demo agent failed on purpose (you asked it to).", code: "demo_failure" });
  },

  async drop(s) {
    const id = `msg-${randomUUID().slice(0, 8)}`;
    s.emit({ type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" });
    for (const w of words("This stream is about to be cut off")) {
      await sleep(40);
      s.emit({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: w });
    }
    s.res.destroy(); // no terminal chunk: the browser sees a network error
  },

  async unknown(s) {
    s.emit({ type: "META", metaType: "thumbs_up", payload: {} });
    s.emit({ type: "RAW", event: { object: "chat.completion.chunk" }, source: "openai" });
    await s.text("Sent an unknown event type and a RAW event: both are listed in the timeline only.");
    s.finished();
  },
};

async function runAgent(req, res, input) {
  if (!input || typeof input !== "object" || typeof input.threadId !== "string" || typeof input.runId !== "string" || !Array.isArray(input.messages)) {
    res.writeHead(422, { "Content-Type": "application/json" });
    return res.end(JSON.stringify({ detail: "body must be a RunAgentInput (threadId, runId, messages)" }));
  }
  const text = lastUserText(input);
  const lower = text.toLowerCase();
  if (!input.resume && /\bhttp 500\b/.test(lower)) {
    res.writeHead(500, { "Content-Type": "application/json" });
    return res.end(JSON.stringify({ detail: "scripted server error" }));
  }
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no" });
  res.flushHeaders();
  const s = new Stream(res, input);
  try {
    s.started();
    let count;
    if (Array.isArray(input.resume) && input.resume.length) await scripts.resume(s, text, input);
    else if (pending.has(input.threadId)) {
      const ids = pending.get(input.threadId).interrupts.map((i) => i.id).join(", ");
      s.emit({ type: "RUN_ERROR", message: `This thread has a pending interrupt (${ids}); answer it with resume.`, code: "interrupt_pending" });
    } else if (/\bfail/.test(lower)) await scripts.fail(s);
    else if ((count = /\bcount(?:\s+up)?\s+to\s+(\d+)/.exec(lower))) await scripts.count(s, text, input, Math.min(50, Number(count[1])));
    else if (/\bapprov/.test(lower)) await scripts.interrupt(s);
    else if (/\bresearch/.test(lower)) await scripts.research(s, text);
    else if (/\bthink/.test(lower)) await scripts.think(s, text);
    else if (/\bplan/.test(lower)) await scripts.plan(s);
    else if (/\b(weather|tool)/.test(lower)) await scripts.weather(s, text);
    else if (/\bdrop\b/.test(lower)) return await scripts.drop(s);
    else if (/\bunknown\b/.test(lower)) await scripts.unknown(s);
    else await scripts.reply(s, text);
    res.end();
  } catch (err) {
    if (!s.closed) res.end();
  }
}

function handler(onRequest) {
  return async (req, res) => {
    const url = new URL(req.url, "http://x");
    try {
      onRequest?.(req);
      if (req.method === "GET" && url.pathname === "/health") {
        res.writeHead(200, { "Content-Type": "text/plain" });
        return res.end("ok\n");
      }
      if (req.method === "GET" && url.pathname === "/agents") {
        // As agui serve lists its one built-in agent (the console shows "What to try" for it).
        res.writeHead(200, { "Content-Type": "application/json" });
        return res.end(JSON.stringify({ agents: [{ name: "agent", path: "/agent", kind: "demo" }] }));
      }
      if (req.method === "GET" && STATIC[url.pathname]) {
        const [file, type] = STATIC[url.pathname];
        const body = await readFile(join(consoleDir, file));
        res.writeHead(200, { "Content-Type": type, "Cache-Control": "no-store" });
        return res.end(body);
      }
      if (url.pathname === "/agent") {
        if (req.method !== "POST") {
          res.writeHead(405, { Allow: "POST", "Content-Type": "text/plain" });
          return res.end("use POST\n");
        }
        const chunks = [];
        for await (const c of req) chunks.push(c);
        let input;
        try {
          input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          res.writeHead(400, { "Content-Type": "application/json" });
          return res.end(JSON.stringify({ detail: "invalid JSON" }));
        }
        return await runAgent(req, res, input);
      }
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("not found\n");
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
      res.end(String(err?.message ?? err));
    }
  };
}

export function startFakeAgent({ port = 0, host = "127.0.0.1", onRequest } = {}) {
  const server = http.createServer(handler(onRequest));
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      const { port: p } = server.address();
      resolve({
        url: `http://${host}:${p}/`,
        close: () => new Promise((ok) => {
          server.closeAllConnections?.();
          server.close(() => ok());
        }),
      });
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(name);
    return i >= 0 && i + 1 < args.length ? args[i + 1] : dflt;
  };
  const { url } = await startFakeAgent({ port: Number(opt("--port", 8787)), host: opt("--host", "127.0.0.1") });
  process.stdout.write(`listening on ${url}\n`);
}
