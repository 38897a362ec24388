#!/usr/bin/env node
// Runs an AG-UI agent through the official A2UI middleware (@ag-ui/a2ui-middleware 0.0.10)
// with the official client (@ag-ui/client 1.0.0 HttpAgent, its whole pipeline) and prints
// one JSON object on stdout: {"ok", "error", "events", "messages", "warnings"}, the events
// as the client's subscribers see them (after the middleware).
//
// Usage: node official.mjs URL [--text STR] [--input FILE] [--header K:V]... [--timeout MS]
//   --input FILE   JSON with any of threadId, runId, messages, context, tools, forwardedProps
//   --text STR     the user message when --input gives no messages (default "hello")
// Exit status: 0 when the client accepted the run, 1 otherwise, 2 on a usage error.

import { readFileSync } from "node:fs";
import { HttpAgent } from "@ag-ui/client";
import { A2UIMiddleware } from "@ag-ui/a2ui-middleware";

function usage(msg) {
  process.stderr.write(`official.mjs: ${msg}\nusage: node official.mjs URL [--text STR] [--input FILE] [--header K:V]... [--timeout MS]\n`);
  process.exit(2);
}

const o = { headers: {}, timeout: 30000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const value = () => {
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    return argv[++i];
  };
  if (a === "--text") o.text = value();
  else if (a === "--input") o.input = value();
  else if (a === "--timeout") o.timeout = Number(value());
  else if (a === "--header") {
    const h = value();
    const k = h.indexOf(":");
    if (k <= 0) usage(`bad header ${h}`);
    o.headers[h.slice(0, k).trim()] = h.slice(k + 1).trim();
  } else if (a.startsWith("--")) usage(`unknown option ${a}`);
  else if (o.url) usage(`unexpected argument ${a}`);
  else o.url = a;
}
if (!o.url) usage("URL is required");

// What the SDK prints while it works (stripped fields, failures): kept, not printed.
const warnings = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => warnings.push(args.map((x) => (typeof x === "string" ? x : x instanceof Error ? x.message : JSON.stringify(x))).join(" "));
}

const base = o.input ? JSON.parse(readFileSync(o.input, "utf8")) : {};
const agent = new HttpAgent({
  url: o.url,
  headers: o.headers,
  threadId: base.threadId,
  initialMessages: base.messages ?? [{ id: "user-1", role: "user", content: o.text ?? "hello" }],
});
agent.use(new A2UIMiddleware());

const events = [];
let ok = false;
let error = null;
let timer;
try {
  const run = agent.runAgent(
    { runId: base.runId, context: base.context, tools: base.tools, forwardedProps: base.forwardedProps ?? {} },
    { onEvent: ({ event }) => { events.push(event); } },
  );
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      agent.abortRun();
      reject(new Error(`timeout after ${o.timeout} ms`));
    }, o.timeout);
  });
  await Promise.race([run, timeout]);
  ok = true;
} catch (e) {
  error = e instanceof Error ? e.message : String(e);
} finally {
  clearTimeout(timer);
}
process.stdout.write(JSON.stringify({ ok, error, events, messages: agent.messages, warnings }) + "\n");
process.exit(ok ? 0 : 1);
