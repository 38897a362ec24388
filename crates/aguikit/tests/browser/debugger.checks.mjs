// The console's debugger, checked in headless Chromium (called by console.test.mjs with its
// page and helpers): time travel and the state diff, runs and subagents in the timeline,
// opening recordings (file picker and drag and drop; SSE, JSON Lines and protobuf), a
// 5,000-event recording with a violation (jump to it, see why, see the state before and
// after), export with redaction, fork from a finished run, and the rules page. Against the
// fake agent (no POST /api/inspect) the checks that need the engine's verdicts are skipped.
// Screenshots go next to SCREENSHOT: console-timetravel.png, console-diff.png,
// console-recording.png, console-export.png, console-fork.png, console-rules.png.

import { writeFileSync, readFileSync, mkdtempSync, rmSync, existsSync, mkdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { performance } from "node:perf_hooks";

/**
 * A recording of `runs` runs of 50 events (5,000 for 100 runs): each sets the state's
 * `count` and streams a message; one content event of run `bad` names a message that was
 * never started (V16). Returns the events, the index of the violation, and the state
 * right before and after it.
 */
export function bigRecording(runs = 100, bad = 64) {
  const events = [];
  let violation = -1;
  for (let k = 0; k < runs; k++) {
    events.push({ type: "RUN_STARTED", threadId: "rec-thread", runId: `run-${k}`, timestamp: 1700000000000 + k * 1000 });
    events.push(k === 0
      ? { type: "STATE_SNAPSHOT", snapshot: { count: 0, note: "secret-sauce", items: [] } }
      : { type: "STATE_DELTA", delta: [{ op: "replace", path: "/count", value: k }, { op: "add", path: "/items/-", value: `item ${k}` }] });
    events.push({ type: "TEXT_MESSAGE_START", messageId: `m-${k}`, role: "assistant" });
    for (let j = 0; j < 45; j++) {
      const ev = { type: "TEXT_MESSAGE_CONTENT", messageId: `m-${k}`, delta: `secret word ${j} ` };
      if (k === bad && j === 20) {
        ev.messageId = "ghost";
        violation = events.length;
      }
      events.push(ev);
    }
    events.push({ type: "TEXT_MESSAGE_END", messageId: `m-${k}` });
    events.push({ type: "RUN_FINISHED", threadId: "rec-thread", runId: `run-${k}`, timestamp: 1700000000000 + k * 1000 + 420 });
  }
  const state = { count: bad, note: "secret-sauce", items: Array.from({ length: bad }, (_, i) => `item ${i + 1}`) };
  return { events, violation, state };
}

const sse = (events) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
const jsonl = (events) => events.map((e) => JSON.stringify(e) + "\n").join("");

export async function debuggerChecks(t) {
  const { page, check, expect, T, base, fake, posted, apiThread, aguiBin, screenshotPath, send, fresh, log } = t;
  const shot = async (name) => {
    const path = screenshotPath.replace(/\.png$/i, "") + `-${name}.png`;
    mkdirSync(dirname(path), { recursive: true });
    await page.screenshot({ path });
    log(`     ${path}`);
  };
  const dir = mkdtempSync(join(tmpdir(), "agui-debugger-test-"));
  const verified = !fake; // agui serve verifies (POST /api/inspect); the fake agent does not
  const stateRaw = async () => JSON.parse(await page.textContent(T("state-raw")));
  const travelIndex = () => page.$eval(T("time-travel"), (b) => (b.hidden ? null : Number(b.dataset.index)));
  const openFile = async (name, body) => {
    const path = join(dir, name);
    writeFileSync(path, body);
    await page.setInputFiles(T("recording-file"), path);
    // The status may already say "recording, not busy" from the file opened before: wait for
    // this file's name in the banner too, so the checks never read the previous recording.
    await page.waitForFunction(
      ([status, banner, name]) => {
        const s = document.querySelector(status);
        const b = document.querySelector(banner);
        return s?.dataset.loaded === "recording" && s.dataset.busy === "false" && !b.hidden && b.querySelector("code")?.textContent === name;
      },
      [T("run-status"), T("recording-banner"), name],
    );
    return path;
  };

  try {
    await check("time travel: an event shows the conversation and state right after it, and the diff it made", async () => {
      await fresh(page, base);
      const r = await send(page, "count to 3");
      expect(r.status === "finished", `run ended as "${r.status}": ${r.text}`);
      const live = await stateRaw();
      const finalText = await page.$$eval(`${T("message-assistant")} ${T("message-text")}`, (m) => m.map((x) => x.textContent).join("|"));
      const deltas = page.locator(`${T("timeline-event")}[data-type="STATE_DELTA"]`);
      const n = await deltas.count();
      expect(n >= 2, `${n} STATE_DELTA rows`);
      // The first delta: the state right after it is the state before it with its operations.
      await deltas.first().click();
      const ev = JSON.parse(await page.textContent(T("event-json")));
      const at = await travelIndex();
      expect(at !== null, "no time-travel banner after selecting an event");
      expect((await page.textContent(T("state-at"))).startsWith("right after"), `state label: ${await page.textContent(T("state-at"))}`);
      const after = await stateRaw();
      expect(JSON.stringify(after) !== JSON.stringify(live) || n === 1, `the state after the first delta is the live state ${JSON.stringify(after)}`);
      await page.click(`${T("inspector-tab")}[data-tab="diff"]`);
      const items = await page.$$eval(T("state-diff-item"), (li) => li.map((x) => [x.dataset.kind, x.dataset.path]));
      const paths = ev.delta.filter((o) => o.op !== "test").map((o) => o.path);
      expect(items.length >= 1 && paths.every((p) => items.some(([, q]) => q === p || q.startsWith(p + "/") || p.startsWith(q + "/"))), `diff ${JSON.stringify(items)} for the operations ${JSON.stringify(ev.delta)}`);
      // The state tree marks what the event changed.
      const marked = await page.$$eval(`${T("state-tree")} .diff-changed, ${T("state-tree")} .diff-added`, (x) => x.length);
      expect(marked >= 1, "the state tree marks nothing as changed");
      await shot("diff");
      // The chat as it was: at the run's first text event the reply is not whole yet.
      await page.locator(`${T("timeline-event")}[data-type="RUN_STARTED"]`).last().click();
      const early = await page.$$eval(`${T("message-assistant")} ${T("message-text")}`, (m) => m.map((x) => x.textContent).join("|"));
      expect(early !== finalText && finalText.startsWith(early.replace(/\|$/, "")), `right after RUN_STARTED the chat shows ${JSON.stringify(early)} (live: ${JSON.stringify(finalText)})`);
      await page.click(`${T("inspector-tab")}[data-tab="messages"]`);
      const msgs = JSON.parse(await page.textContent(T("tt-messages")));
      expect(Array.isArray(msgs) && msgs.some((m) => m.role === "user" && m.content === "count to 3"), `messages after RUN_STARTED: ${JSON.stringify(msgs).slice(0, 200)}`);
      await shot("timetravel");
      await page.click(T("back-to-live"));
      expect((await travelIndex()) === null, "Back to live left the banner");
      expect(JSON.stringify(await stateRaw()) === JSON.stringify(live), "back to live shows another state");
      await page.click(`${T("inspector-tab")}[data-tab="event"]`);
    });

    await check("the timeline groups runs (outcome, duration, events) and subagents, collapses, filters and searches", async () => {
      const r = await send(page, "research solar power");
      expect(r.status === "finished", `run ended as "${r.status}": ${r.text}`);
      const runs = await page.$$eval(T("timeline-run"), (li) => li.map((x) => ({ status: x.dataset.status, meta: x.querySelector('[data-testid="run-meta"]')?.dataset, text: x.textContent })));
      expect(runs.length === 2, `${runs.length} run groups`);
      expect(runs.every((x) => x.meta && x.meta.outcome === "success" && Number(x.meta.events) > 3 && /\d+ ms|\d+\.\d s/.test(x.text)), `run headers: ${JSON.stringify(runs)}`);
      const subs = await page.$$eval(T("timeline-subagent"), (li) => li.map((x) => x.dataset.subagentRunId));
      expect(subs.length >= 2, `subagent groups: ${subs.join(", ")}`);
      const before = await page.$$eval(T("timeline-event"), (b) => b.length);
      // Collapse a subagent group, then the whole first run.
      await page.locator(`${T("timeline-subagent")} ${T("timeline-collapse")}`).first().click();
      await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length < n, [T("timeline-event"), before]);
      const partly = await page.$$eval(T("timeline-event"), (b) => b.length);
      await page.locator(`${T("timeline-run")} ${T("timeline-collapse")}`).first().click();
      await page.waitForFunction(([sel, n]) => document.querySelectorAll(sel).length < n, [T("timeline-event"), partly]);
      await page.locator(`${T("timeline-run")} ${T("timeline-collapse")}`).first().click();
      await page.locator(`${T("timeline-subagent")} ${T("timeline-collapse")}`).first().click();
      // Families: only tool and text events; then a search.
      for (const f of ["run", "state", "activity", "reasoning", "subagent", "step", "other", "unknown"]) await page.click(`${T("timeline-family")}[data-family="${f}"] input`);
      await page.waitForFunction((sel) => {
        const types = [...document.querySelectorAll(sel)].map((x) => x.dataset.type.split("_")[0]);
        return types.length > 0 && types.every((x) => x === "TEXT" || x === "TOOL");
      }, T("timeline-event"));
      for (const f of ["run", "state", "activity", "reasoning", "subagent", "step", "other", "unknown"]) await page.click(`${T("timeline-family")}[data-family="${f}"] input`);
      await page.fill(T("timeline-search"), "SUBAGENT_STARTED");
      await page.waitForFunction((sel) => [...document.querySelectorAll(sel)].every((b) => b.dataset.type === "SUBAGENT_STARTED"), T("timeline-event"));
      const found = await page.$$eval(T("timeline-event"), (b) => b.length);
      expect(found >= 2, `search found ${found} SUBAGENT_STARTED events`);
      await page.fill(T("timeline-search"), "");
    });

    const big = bigRecording();
    await check(`a 5,000-event recording opens offline; the console jumps to the event where it breaks, says why, shows the state before and after`, async () => {
      expect(big.events.length === 5000, `${big.events.length} events`);
      await fresh(page, base);
      const t0 = performance.now();
      await openFile("big.sse", sse(big.events));
      const ms = Math.round(performance.now() - t0);
      log(`     opened 5,000 events in ${ms} ms`);
      const banner = await page.textContent(T("recording-banner"));
      expect(/5000 events/.test(banner) && /100 runs/.test(banner) && /sse/.test(banner), `banner: ${banner}`);
      const inDom = await page.$$eval(`${T("timeline")} > li`, (li) => li.length);
      const rows = await page.$eval(T("timeline"), (l) => Number(l.dataset.rows));
      expect(rows >= 5000 && inDom < 300, `${inDom} rows in the DOM for ${rows} timeline rows (not virtualized?)`);
      if (!verified) {
        log("     skip the verdict checks: the fake agent has no POST /api/inspect");
        expect(/not verified/.test(banner), `banner: ${banner}`);
        return;
      }
      expect(/1 violation/.test(banner) && banner.includes(`#${big.violation}`), `banner: ${banner}`);
      // It jumped to the violation.
      await page.waitForFunction((sel) => !document.querySelector(sel).hidden, T("time-travel"));
      expect((await travelIndex()) === big.violation, `time travel at ${await travelIndex()}, the violation is at ${big.violation}`);
      const row = page.locator(`${T("timeline-event")}[data-index="${big.violation}"]`);
      expect((await row.getAttribute("aria-selected")) === "true", "the violating row is not selected");
      expect((await row.locator(T("violation-badge")).textContent()).includes("V16"), "no V16 badge on the row");
      const card = { rule: await page.textContent(T("violation-rule")), why: await page.textContent(T("violation-why")), ref: await page.textContent(T("violation-reference")), href: await page.getAttribute(T("violation-link"), "href"), msg: await page.textContent(T("violation-message")) };
      expect(card.rule.includes("V16") && card.msg.includes("ghost") && card.why.length > 10 && /run fails/.test(card.ref) && card.href === "/rules#V16", `violation card: ${JSON.stringify(card)}`);
      // The state right after it (and so before: the event changes no state).
      expect(JSON.stringify(await stateRaw()) === JSON.stringify(big.state), `state at the violation: ${JSON.stringify(await stateRaw()).slice(0, 200)}`);
      await page.click(`${T("inspector-tab")}[data-tab="diff"]`);
      expect((await page.$eval(T("state-diff"), (d) => d.dataset.changes)) === "0", "the violating event is shown as changing the state");
      await shot("recording");
      // The state change just before the run: the STATE_DELTA of that run.
      const deltaAt = big.events.findLastIndex((e, i) => i < big.violation && e.type === "STATE_DELTA");
      await page.fill(T("timeline-search"), '"value":64');
      await page.locator(`${T("timeline-event")}[data-index="${deltaAt}"]`).click();
      const items = await page.$$eval(T("state-diff-item"), (li) => li.map((x) => `${x.dataset.kind} ${x.dataset.path}`));
      expect(JSON.stringify(items) === JSON.stringify(["changed /count", "added /items/63"]), `diff of the delta: ${JSON.stringify(items)}`);
      const afterDelta = await stateRaw();
      expect(afterDelta.count === 64 && afterDelta.items.length === 64, `state after the delta: ${JSON.stringify(afterDelta).slice(0, 120)}`);
      await page.fill(T("timeline-search"), "");
      await page.click(`${T("inspector-tab")}[data-tab="event"]`);
      // The rule's page.
      const rules = await page.context().newPage();
      try {
        await rules.goto(new URL(card.href, page.url()).href);
        expect((await rules.$$("tr#V16")).length === 1 && (await rules.textContent("tr#V16")).includes("not open"), "the rules page has no row V16");
        mkdirSync(dirname(screenshotPath), { recursive: true });
        const path = screenshotPath.replace(/\.png$/i, "") + "-rules.png";
        await rules.screenshot({ path });
        log(`     ${path}`);
      } finally {
        await rules.close();
      }
    });

    await check("export: JSON Lines of the thread, redacted by default; the redacted recording breaks at the same event", async () => {
      await page.click(`${T("export")} summary`);
      expect(await page.isChecked(T("export-redact")), "redaction is not on by default");
      await shot("export");
      const [download] = await Promise.all([page.waitForEvent("download"), page.click(T("export-download"))]);
      const path = join(dir, "redacted.jsonl");
      await download.saveAs(path);
      const text = readFileSync(path, "utf8");
      const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l));
      expect(lines.length === big.events.length, `${lines.length} lines exported`);
      expect(!text.includes("secret"), "the redacted export still holds message text or state values");
      expect(lines.every((e, i) => e.type === big.events[i].type && (e.messageId ?? null) === (big.events[i].messageId ?? null)), "redaction changed types or ids");
      expect(lines[0].type === "RUN_STARTED" && typeof lines[1].snapshot.note === "string" && lines[1].snapshot.items.length === 0, `the snapshot's shape: ${JSON.stringify(lines[1])}`);
      // Without redaction: the events as they were.
      await page.click(`${T("export")} summary`);
      await page.uncheck(T("export-redact"));
      const [plain] = await Promise.all([page.waitForEvent("download"), page.click(T("export-download"))]);
      const plainPath = join(dir, "plain.jsonl");
      await plain.saveAs(plainPath);
      expect(readFileSync(plainPath, "utf8") === jsonl(big.events), "the plain export differs from the recording");
      await page.click(`${T("export")} summary`);
      await page.check(T("export-redact"));
      await page.click(`${T("export")} summary`);
      if (!verified) return;
      // The redacted recording, opened again, breaks where the original did.
      await openFile("redacted.jsonl", text);
      await page.waitForFunction((sel) => !document.querySelector(sel).hidden, T("time-travel"));
      expect((await travelIndex()) === big.violation, `the redacted recording breaks at ${await travelIndex()}`);
      expect(/json-lines/.test(await page.textContent(T("recording-banner"))), "not read as JSON Lines");
    });

    await check("recordings by drag and drop, in JSON Lines and protobuf", async () => {
      const small = bigRecording(2, 99).events; // two clean runs
      const drop = async (name, bytes, type) => {
        await page.evaluate(([name, b64, type]) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const dt = new DataTransfer();
          dt.items.add(new File([bytes], name, { type }));
          for (const kind of ["dragenter", "dragover", "drop"]) document.body.dispatchEvent(new DragEvent(kind, { dataTransfer: dt, bubbles: true, cancelable: true }));
        }, [name, Buffer.from(bytes).toString("base64"), type]);
        // Waits for this file's banner: after an earlier drop the status already reads
        // "recording, not busy", so the status alone would not wait for this one.
        await page.waitForFunction(([sel, bannerSel, name]) => {
          const s = document.querySelector(sel);
          const b = document.querySelector(bannerSel);
          return s.dataset.loaded === "recording" && s.dataset.busy === "false" && !!b && b.textContent.includes(name);
        }, [T("run-status"), T("recording-banner"), name]);
      };
      await fresh(page, base);
      await drop("small.jsonl", Buffer.from(jsonl(small)), "application/x-ndjson");
      let banner = await page.textContent(T("recording-banner"));
      expect(/json-lines/.test(banner) && /100 events/.test(banner), `banner: ${banner}`);
      expect(await page.isHidden(T("drop-zone")), "the drop zone stays up");
      if (verified) expect(/verifies/.test(banner), `banner: ${banner}`);
      if (!existsSync(aguiBin) || !verified) {
        log("     skip the protobuf recording: it needs agui serve and the agui binary");
        return;
      }
      const enc = spawnSync(aguiBin, ["encode", "--format", "proto", "-"], { input: jsonl(small) });
      expect(enc.status === 0 && enc.stdout.length > 100, `agui encode --format proto: ${enc.stderr}`);
      await drop("small.bin", enc.stdout, "application/octet-stream");
      banner = await page.textContent(T("recording-banner"));
      expect(/protobuf/.test(banner) && /100 events/.test(banner) && /verifies/.test(banner), `banner: ${banner}`);
      const texts = await page.$$eval(`${T("message-assistant")} ${T("message-text")}`, (m) => m.length);
      expect(texts === 2, `${texts} assistant messages from the protobuf recording`);
    });

    await check("fork from a finished run: a new thread with the history up to it, and a different message", async () => {
      await fresh(page, base);
      let r = await send(page, "count to 2");
      expect(r.status === "finished", `run 1 ended as "${r.status}"`);
      const stateRun1 = await stateRaw();
      const oldThread = await page.$eval(T("thread-id"), (c) => c.dataset.threadId);
      r = await send(page, "hello");
      expect(r.status === "finished", `run 2 ended as "${r.status}"`);
      const forks = page.locator(`${T("timeline-run")} ${T("fork-run")}`);
      expect((await forks.count()) === 2, `${await forks.count()} fork buttons for two finished runs`);
      await forks.first().click();
      await page.waitForSelector(`${T("fork-banner")}:not([hidden])`);
      const thread = await page.$eval(T("thread-id"), (c) => c.dataset.threadId);
      expect(thread !== oldThread, "the fork kept the thread id");
      const users = await page.$$eval(`${T("message-user")} ${T("message-text")}`, (m) => m.map((x) => x.textContent));
      expect(JSON.stringify(users) === JSON.stringify(["count to 2"]), `the fork shows the user messages ${JSON.stringify(users)}`);
      expect(JSON.stringify(await stateRaw()) === JSON.stringify(stateRun1), "the fork's state is not run 1's");
      await shot("fork");
      const from = posted.length;
      r = await send(page, "weather in Paris");
      expect(r.status === "finished", `the forked run ended as "${r.status}": ${r.text}`);
      const req = posted.slice(from).find((p) => new URL(p.url).pathname === "/agent")?.body;
      expect(req && req.threadId === thread, `the run went to thread ${req?.threadId}`);
      const sent = req.messages.filter((m) => m.role === "user").map((m) => m.content);
      expect(JSON.stringify(sent) === JSON.stringify(["count to 2", "weather in Paris"]), `the forked run sent the user messages ${JSON.stringify(sent)}`);
      expect(JSON.stringify(req.state) === JSON.stringify(stateRun1), `the forked run sent the state ${JSON.stringify(req.state)}`);
      expect(await page.$(T("tool-call")), "no reply (tool call) in the forked thread");
      if (!fake) {
        const stored = await apiThread(thread);
        const turns = stored.body?.messages?.filter((m) => m.role === "user").map((m) => m.content);
        expect(JSON.stringify(turns) === JSON.stringify(["count to 2", "weather in Paris"]), `the server's forked thread has ${JSON.stringify(turns)}`);
        const original = await apiThread(oldThread);
        expect(original.body?.runs?.length === 2, "the original thread changed");
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
