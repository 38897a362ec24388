// The console's views and the fixes of issue 41, checked in headless Chromium (called by
// console.test.mjs with its page and helpers). Defects: the Interrupts tab on a new thread,
// a long status in the top bar, timeline search across deltas and "no match", an
// unreadable recording, "What to try" (the demo agent only, the README's prompts), the chat
// following the last message, the event pane's height and resizable panes, forks' titles.
// Views: thread search, rename, fork lineage, find in messages, compare two runs, edit and
// resend as a fork, export as SSE and HAR (redaction by allowlist), latency per run, the
// agent's capabilities.
// Screenshots go next to SCREENSHOT: console-panes.png, console-search.png,
// console-find.png, console-compare.png, console-edit.png, console-latency.png,
// console-capabilities.png.
// Against the fake agent (no thread routes) the checks that need them are skipped.

import { readFileSync, writeFileSync, mkdtempSync, rmSync, mkdirSync, existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { randomUUID } from "node:crypto";

const here = dirname(fileURLToPath(import.meta.url));

/** The prompts the README's quick start names ("Try "a", "b" … or "z"."). */
function readmePrompts() {
  const text = readFileSync(join(here, "../../../../README.md"), "utf8").replace(/\s+/g, " ");
  const m = /Try ((?:"[^"]+"[,.]?\s*(?:or\s+)?)+)/.exec(text);
  return m ? [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]) : [];
}

/** Reads an SSE text into its events. */
const sseEvents = (text) => text.split(/\n\n/).filter((f) => f.startsWith("data: ")).map((f) => JSON.parse(f.slice(6)));

export async function viewsChecks(t) {
  const { page, check, expect, T, base, fake, posted, api, apiRun, apiThread, aguiBin, screenshotPath, send, fresh, log, item, waitThreadList, waitOpened, currentThread } = t;
  const shot = async (name) => {
    const path = screenshotPath.replace(/\.png$/i, "") + `-${name}.png`;
    mkdirSync(dirname(path), { recursive: true });
    await page.screenshot({ path });
    log(`     ${path}`);
  };
  const dir = mkdtempSync(join(tmpdir(), "agui-views-test-"));
  const stored = !fake; // agui serve has the thread routes
  const threadsOk = async () => {
    if (!stored) return;
    await waitThreadList(page);
  };
  const timelineRows = (sel) => page.$$eval(sel, (x) => x.length);
  const patch = (id, body) => api(`/agent/threads/${encodeURIComponent(id)}`, { method: "PATCH", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

  try {
    // ---- defects ----------------------------------------------------------------------

    await check("a new thread's Interrupts tab has no stale count and says what it will show", async () => {
      await fresh(page, base);
      const r = await send(page, "approve");
      expect(r.status === "interrupted", `run ended as "${r.status}"`);
      await page.locator(`${T("timeline-event")}[data-type="RUN_FINISHED"]`).last().click();
      const tab = `${T("inspector-tab")}[data-tab="interrupts"]`;
      expect((await page.getAttribute(tab, "data-count")) === "1", "the interrupt is not counted on its tab");
      await page.click(tab);
      await page.click(T("new-thread"));
      const count = await page.getAttribute(tab, "data-count");
      expect(count === null || count === "0", `a new thread's Interrupts tab still counts ${count}`);
      const text = (await page.textContent(T("tt-interrupts"))).trim();
      expect(text.length > 10 && !text.includes("interrupt-"), `a new thread's Interrupts panel shows ${JSON.stringify(text)}`);
      await page.click(`${T("inspector-tab")}[data-tab="event"]`);
    });

    await check("a long status stays on the top bar's one row (ellipsised, full text in its title)", async () => {
      await fresh(page, base);
      const long = "upstream refused: " + "a very long reason that goes on and on ".repeat(12);
      await page.route("**/agent", (route) => route.fulfill({ status: 500, headers: { "Content-Type": "text/plain" }, body: long }));
      try {
        const r = await send(page, "hello");
        expect(r.status === "error", `run ended as "${r.status}"`);
        const bar = await page.evaluate(() => {
          const top = document.querySelector(".topbar");
          const kids = [...top.children].filter((c) => !c.hidden && c.offsetParent !== null);
          const tops = kids.map((c) => Math.round(c.getBoundingClientRect().top + c.getBoundingClientRect().height / 2));
          const status = document.querySelector('[data-testid="run-status"]').getBoundingClientRect();
          return { height: top.getBoundingClientRect().height, spread: Math.max(...tops) - Math.min(...tops), right: status.right, width: innerWidth };
        });
        expect(bar.spread <= 4 && bar.height < 64, `the top bar wraps: ${JSON.stringify(bar)}`);
        expect(bar.right <= bar.width, `the status runs off the page: ${JSON.stringify(bar)}`);
        expect((await page.getAttribute(T("run-status"), "title")).includes("on and on"), "the status's title lacks the whole error");
      } finally {
        await page.unroute("**/agent");
      }
    });

    await check("timeline search finds a phrase split across deltas, and says so when nothing matches", async () => {
      await fresh(page, base);
      const r = await send(page, "hello");
      expect(r.status === "finished", `run ended as "${r.status}"`);
      // The demo's reply names the prompts, streamed a word at a time.
      const deltaSel = `${T("timeline-event")}[data-type="TEXT_MESSAGE_CONTENT"], ${T("timeline-event")}[data-type="TEXT_MESSAGE_CHUNK"]`;
      const deltas = await page.$$eval(deltaSel, (b) => b.length);
      expect(deltas > 5, `${deltas} text deltas`);
      await page.fill(T("timeline-search"), "Weather In Paris");
      await page.waitForFunction((sel) => {
        const rows = [...document.querySelectorAll(sel)];
        return rows.length > 0 && rows.every((b) => b.dataset.type.startsWith("TEXT_MESSAGE_C"));
      }, T("timeline-event"));
      const found = await page.$$eval(T("timeline-event"), (b) => b.map((x) => x.querySelector(".tl-sum").textContent));
      const joined = found.map((s) => JSON.parse(s)).join("").toLowerCase();
      expect(found.length >= 2 && joined.includes("weather in paris"), `the search shows ${JSON.stringify(found)}`);
      expect((await timelineRows(T("timeline-run"))) === 1, "the run's header is not shown with its matches");
      await page.fill(T("timeline-search"), "no such words anywhere");
      await page.waitForSelector(T("timeline-empty"));
      expect((await timelineRows(T("timeline-run"))) === 0, "an empty run is shown for a search with no match");
      expect((await page.textContent(T("timeline-empty"))).includes("no such words anywhere"), "the note does not name the search");
      await page.click(T("timeline-clear-filters"));
      await page.waitForSelector(T("timeline-run"));
      expect((await page.inputValue(T("timeline-search"))) === "", "Clear filters left the search");
    });

    await check("an unreadable file is reported as such: no made-up run, no fork hint", async () => {
      await fresh(page, base);
      const path = join(dir, "notes.txt");
      writeFileSync(path, "hello world, this is not a recording\n");
      await page.setInputFiles(T("recording-file"), path);
      await page.waitForSelector(`${T("recording-banner")}[data-unreadable="true"]`);
      expect((await timelineRows(T("timeline-run"))) === 0, "a run row is shown for a file that has no run");
      expect((await timelineRows(T("timeline-note"))) === 1, "no note says why the file cannot be read");
      const hint = await page.textContent(T("composer-hint"));
      expect(!/fork/i.test(hint) && /not a recording/i.test(hint), `the hint says ${JSON.stringify(hint)}`);
      expect(/Cannot read/.test(await page.textContent(T("run-status"))), "the status does not say the file cannot be read");
      expect(await page.isHidden(T("fork-run")), "a Fork button is offered");
    });

    await check("'What to try' shows for the demo agent only, with the README's prompts", async () => {
      const prompts = readmePrompts();
      expect(prompts.length >= 8, `the README names ${prompts.length} prompts`);
      await fresh(page, base);
      await page.waitForSelector(`${T("agent-pick")}[data-agents]`, { state: "attached" });
      expect(await page.isVisible(T("try")), "'What to try' is hidden for the built-in demo agent");
      const shown = await page.$$eval(T("try-item"), (b) => b.map((x) => x.dataset.prompt));
      expect(JSON.stringify(shown) === JSON.stringify(prompts), `the console offers ${JSON.stringify(shown)}, the README ${JSON.stringify(prompts)}`);
      const other = new URL(base);
      other.searchParams.set("agent", "/agents/not-the-demo");
      await fresh(page, other.href);
      await page.waitForSelector(`${T("agent-pick")}[data-agents]`, { state: "attached" });
      expect(await page.isHidden(T("try")), "'What to try' shows for an agent that is not the demo");
    });

    await check("the chat keeps the last message in view: a long thread opens at its end, sending scrolls down", async () => {
      let id = null;
      await fresh(page, base);
      if (stored) {
        id = randomUUID();
        for (let k = 0; k < 9; k++) await apiRun(id, `hello ${k}`);
        await threadsOk();
        await page.click(T("threads-refresh"));
        await page.click(`${item(id)} ${T("thread-open")}`);
        await waitOpened(page, id);
      } else {
        for (let k = 0; k < 6; k++) await send(page, `hello ${k}`);
      }
      const atEnd = () => page.$eval(T("chat"), (c) => {
        const last = [...c.querySelectorAll('[data-testid="message-assistant"]')].pop();
        const box = c.getBoundingClientRect();
        const r = last?.getBoundingClientRect();
        return { gap: c.scrollHeight - c.scrollTop - c.clientHeight, scrolls: c.scrollHeight > c.clientHeight + 50, lastVisible: Boolean(r && r.bottom <= box.bottom + 2 && r.bottom > box.top) };
      });
      await page.waitForFunction((sel) => {
        const c = document.querySelector(sel);
        return c.scrollHeight - c.scrollTop - c.clientHeight < 4;
      }, T("chat"), { timeout: 3000 }).catch(() => {});
      let v = await atEnd();
      expect(v.scrolls, "the thread is too short to scroll: the check proves nothing");
      expect(v.gap < 4 && v.lastVisible, `${stored ? "the opened thread" : "the chat"} is not at its end: ${JSON.stringify(v)}`);
      // Read from the top, then send: the reply is in view.
      await page.$eval(T("chat"), (c) => c.scrollTo(0, 0));
      await page.waitForTimeout(100);
      const r = await send(page, "hello again");
      expect(r.status === "finished", `run ended as "${r.status}"`);
      await page.waitForTimeout(150);
      v = await atEnd();
      expect(v.gap < 4 && v.lastVisible, `after sending, the chat is not at its end: ${JSON.stringify(v)}`);
    });

    await check("panes resize (pointer and keys), the sizes survive a reload, and the event pane shows 12+ lines at 900 px", async () => {
      await page.setViewportSize({ width: 1440, height: 900 });
      try {
        await page.evaluate(() => localStorage.removeItem("agui-layout"));
        await fresh(page, base);
        const r = await send(page, "hello");
        expect(r.status === "finished", `run ended as "${r.status}"`);
        await page.locator(`${T("timeline-event")}[data-type="RUN_STARTED"]`).last().click();
        const lines = await page.$eval(T("event-json"), (p) => p.clientHeight / parseFloat(getComputedStyle(p).lineHeight));
        expect(lines >= 12, `the event pane shows ${lines.toFixed(1)} lines at 900 px`);
        const size = (name) => page.$eval(T(`split-${name}`), (s) => Number(s.dataset.size));
        const drag = async (name, dx, dy) => {
          const box = await page.locator(T(`split-${name}`)).boundingBox();
          await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
          await page.mouse.down();
          await page.mouse.move(box.x + box.width / 2 + dx / 2, box.y + box.height / 2 + dy / 2, { steps: 3 });
          await page.mouse.move(box.x + box.width / 2 + dx, box.y + box.height / 2 + dy, { steps: 3 });
          await page.mouse.up();
        };
        const before = { detail: await size("detail"), side: await size("side"), threads: await size("threads"), state: await size("state") };
        const detailPx = () => page.$eval(T("inspector"), (d) => d.getBoundingClientRect().height);
        const h0 = await detailPx();
        await drag("detail", 0, -80);
        await drag("side", -60, 0);
        // The thread list (and its splitter) is folded away for an agent without threads.
        const threadsShown = await page.isVisible(T("split-threads"));
        if (threadsShown) await drag("threads", 40, 0);
        await page.focus(T("split-state"));
        await page.keyboard.press("ArrowDown");
        const after = { detail: await size("detail"), side: await size("side"), threads: await size("threads"), state: await size("state") };
        expect(Math.abs(after.detail - before.detail - 80) <= 2 && Math.abs((await detailPx()) - h0 - 80) <= 3, `the event pane grew from ${before.detail} to ${after.detail}`);
        expect(Math.abs(after.side - before.side - 60) <= 2, `the inspector went from ${before.side} to ${after.side} px`);
        expect(!threadsShown || Math.abs(after.threads - before.threads - 40) <= 2, `the thread list went from ${before.threads} to ${after.threads} px`);
        expect(after.state === before.state + 16, `ArrowDown moved the state pane from ${before.state} to ${after.state}`);
        await shot("panes");
        await page.reload();
        await page.waitForSelector(`${T("split-detail")}[data-size]`, { state: "attached" });
        const kept = { detail: await size("detail"), side: await size("side"), threads: await size("threads"), state: await size("state") };
        expect(JSON.stringify(kept) === JSON.stringify(after), `after a reload: ${JSON.stringify(kept)}, before it: ${JSON.stringify(after)}`);
        const width = await page.$eval(".side", (s) => Math.round(s.getBoundingClientRect().width));
        expect(Math.abs(width - after.side) <= 1, `the inspector is ${width} px wide, its splitter says ${after.side}`);
        // A double click puts a pane back to its default.
        await page.dblclick(T("split-side"));
        expect((await size("side")) === before.side, "a double click does not restore the default width");
      } finally {
        await page.evaluate(() => localStorage.removeItem("agui-layout"));
        await page.setViewportSize({ width: 1440, height: 1000 });
      }
    });

    // ---- views that need the thread routes ----------------------------------------------

    if (!stored) {
      log("skip the thread search, rename, lineage and edit checks: fake-agent.mjs has no thread routes");
    } else {
      await check("a fork takes its own first message as title, and lists where it comes from", async () => {
        await fresh(page, base);
        await threadsOk();
        let r = await send(page, "count to 2");
        const parent = await currentThread(page);
        r = await send(page, "hello");
        expect(r.status === "finished", `run 2 ended as "${r.status}"`);
        const runs = await page.$$eval(T("timeline-run"), (x) => x.map((y) => y.dataset.runId));
        await page.locator(`${T("timeline-run")} ${T("fork-run")}`).first().click();
        expect((await page.textContent(T("chat-title"))).includes("count to 2"), "the fork's head does not name its parent");
        r = await send(page, "weather in Paris");
        expect(r.status === "finished", `the fork's run ended as "${r.status}"`);
        const fork = await currentThread(page);
        await page.waitForFunction(([sel, title]) => document.querySelector(sel)?.querySelector('[data-testid="thread-title"]')?.textContent === title, [item(fork), "weather in Paris"]);
        const li = await page.$eval(item(fork), (x) => ({ parent: x.dataset.forkOf, lineage: x.querySelector('[data-testid="thread-lineage"]')?.textContent ?? "" }));
        expect(li.parent === parent && li.lineage.includes("count to 2"), `the fork's row: ${JSON.stringify(li)}`);
        const server = await apiThread(fork);
        expect(server.body.title === "weather in Paris" && server.body.forkOf?.threadId === parent && server.body.forkOf?.runId === runs[0], `the server has ${JSON.stringify({ title: server.body.title, forkOf: server.body.forkOf })}`);
        expect((await page.textContent(T("chat-title"))) === "weather in Paris", "the head does not show the fork's title");
        expect((await page.textContent(T("chat-lineage"))).includes("count to 2"), "the head does not show the lineage");
        // The lineage opens the parent.
        await page.click(T("chat-lineage-open"));
        await waitOpened(page, parent);
        expect((await apiThread(parent)).body.title === "count to 2", "the parent's title changed");
      });

      await check("threads are searched by title and by content; no match says so", async () => {
        const tag = randomUUID().slice(0, 8);
        const a = randomUUID();
        const b = randomUUID();
        await apiRun(a, `alpha-${tag} trip`);
        await apiRun(b, `beta-${tag} plans`);
        const res = await patch(b, { title: `Renamed ${tag}` });
        expect(res.ok, `PATCH answered ${res.status}`);
        await fresh(page, base);
        await threadsOk();
        const listedFor = async (q) => {
          await page.fill(T("threads-search"), q);
          await page.waitForSelector(`${T("threads")}[data-search="${q}"][aria-busy="false"]`, { state: "attached" });
          return page.$$eval(T("thread-item"), (li) => li.map((x) => x.dataset.threadId));
        };
        const byTitle = await listedFor(`ALPHA-${tag}`);
        expect(JSON.stringify(byTitle) === JSON.stringify([a]), `searching the title lists ${byTitle.length} threads`);
        // b's title no longer holds its text: found by its content.
        const byContent = await listedFor(`beta-${tag}`);
        expect(JSON.stringify(byContent) === JSON.stringify([b]), `searching the content lists ${byContent.length} threads`);
        expect((await page.textContent(`${item(b)} ${T("thread-title")}`)) === `Renamed ${tag}`, "the found thread does not show its title");
        await shot("search");
        const none = await listedFor(`nothing-${tag}`);
        expect(none.length === 0 && (await page.textContent(T("threads-note"))).includes(`nothing-${tag}`), "no note for a search without match");
        await page.fill(T("threads-search"), "");
        await page.waitForSelector(`${T("threads")}[data-search=""][aria-busy="false"]`, { state: "attached" });
        expect((await page.$$(T("thread-item"))).length > 2, "clearing the search does not list every thread again");
      });

      await check("a thread is renamed from the list and from the chat's head; Escape cancels", async () => {
        const id = randomUUID();
        await apiRun(id, "name me");
        await fresh(page, base);
        await threadsOk();
        await page.hover(item(id));
        await page.click(`${item(id)} ${T("thread-rename")}`);
        await page.fill(`${item(id)} ${T("rename-input")}`, "  Trip   to Oslo ");
        await page.press(`${item(id)} ${T("rename-input")}`, "Enter");
        await page.waitForFunction(([sel]) => document.querySelector(sel)?.textContent === "Trip to Oslo", [`${item(id)} ${T("thread-title")}`]);
        expect((await apiThread(id)).body.title === "Trip to Oslo", "the server did not keep the new title");
        // Escape leaves it.
        await page.click(`${item(id)} ${T("thread-rename")}`);
        await page.fill(`${item(id)} ${T("rename-input")}`, "not this");
        await page.press(`${item(id)} ${T("rename-input")}`, "Escape");
        expect((await page.textContent(`${item(id)} ${T("thread-title")}`)) === "Trip to Oslo", "Escape renamed the thread");
        // From the head of the open thread.
        await page.click(`${item(id)} ${T("thread-open")}`);
        await waitOpened(page, id);
        expect((await page.textContent(T("chat-title"))) === "Trip to Oslo", "the head does not show the title");
        await page.click(T("rename-current"));
        await page.fill(`${T("chat-title")} ${T("rename-input")}`, "Fjords");
        await page.press(`${T("chat-title")} ${T("rename-input")}`, "Enter");
        await page.waitForFunction(([sel]) => document.querySelector(sel)?.textContent === "Fjords", [`${item(id)} ${T("thread-title")}`]);
        expect((await page.textContent(T("chat-title"))) === "Fjords", "the head does not show the new title");
        await page.reload();
        await waitOpened(page, id);
        expect((await page.textContent(`${item(id)} ${T("thread-title")}`)) === "Fjords" && (await apiThread(id)).body.title === "Fjords", "the title is not kept");
      });

      await check("'Edit' on a user message sends the edited text as a fork from before it", async () => {
        await fresh(page, base);
        await threadsOk();
        let r = await send(page, "count to 2");
        const original = await currentThread(page);
        const stateThen = JSON.parse(await page.textContent(T("state-raw")));
        r = await send(page, "hello");
        r = await send(page, "count to 4");
        expect(r.status === "finished", `run 3 ended as "${r.status}"`);
        const runs = await page.$$eval(T("timeline-run"), (x) => x.map((y) => y.dataset.runId));
        const edit = page.locator(T("message-user")).nth(1);
        await edit.hover();
        await edit.locator(T("edit-message")).click();
        expect((await page.inputValue(T("input"))) === "hello" && (await page.isVisible(T("edit-bar"))), "the composer does not hold the message to edit");
        expect((await page.textContent(T("send"))).includes("fork"), "the Send button does not say it forks");
        await page.fill(T("input"), "weather in Paris");
        const from = posted.length;
        r = await send(page, "weather in Paris");
        expect(r.status === "finished", `the edited run ended as "${r.status}"`);
        const fork = await currentThread(page);
        expect(fork !== original, "the edit did not start a new thread");
        const req = posted.slice(from).find((p) => new URL(p.url).pathname === "/agent")?.body;
        const sent = req.messages.map((m) => `${m.role}:${typeof m.content === "string" ? m.content : ""}`);
        expect(sent.length === 3 && sent[0] === "user:count to 2" && sent[1].startsWith("assistant:") && sent[2] === "user:weather in Paris", `the edited run sent ${JSON.stringify(sent)}`);
        expect(JSON.stringify(req.state) === JSON.stringify(stateThen), `the edited run sent the state ${JSON.stringify(req.state)}, not ${JSON.stringify(stateThen)}`);
        expect(await page.isHidden(T("edit-bar")), "the edit bar stays");
        const users = await page.$$eval(`${T("message-user")} ${T("message-text")}`, (m) => m.map((x) => x.textContent));
        expect(JSON.stringify(users) === JSON.stringify(["count to 2", "weather in Paris"]), `the fork shows ${JSON.stringify(users)}`);
        await page.waitForFunction(([sel]) => document.querySelector(sel)?.dataset.forkOf, [item(fork)]);
        const stored = await apiThread(fork);
        expect(stored.body.forkOf?.threadId === original && stored.body.forkOf?.runId === runs[1] && stored.body.title === "weather in Paris", `the fork on the server: ${JSON.stringify({ forkOf: stored.body.forkOf, title: stored.body.title })}`);
        const orig = await apiThread(original);
        expect(orig.body.runs.length === 3, "the original thread changed");
        expect((await page.textContent(T("chat-lineage"))).includes("edited from"), "the head does not say the thread is an edit");
        await shot("edit");
      });
    }

    // ---- views that need no thread routes -----------------------------------------------

    await check("find in messages: a phrase across deltas is found, counted, highlighted and stepped through", async () => {
      await fresh(page, base);
      await send(page, "hello");
      await send(page, "hello again");
      await page.fill(T("find-input"), "WEATHER IN PARIS");
      await page.waitForFunction((sel) => Number(document.querySelector(sel).dataset.matches) >= 2, T("find-count"));
      const count = await page.$eval(T("find-count"), (c) => ({ text: c.textContent, matches: Number(c.dataset.matches), messages: Number(c.dataset.messages) }));
      expect(count.matches === 2 && count.messages === 2 && count.text === "1 of 2", `find says ${JSON.stringify(count)}`);
      const lit = await page.evaluate(() => ({ all: CSS.highlights.get("agui-find")?.size ?? 0, current: CSS.highlights.get("agui-find-current")?.size ?? 0, text: [...(CSS.highlights.get("agui-find-current") ?? [])].map((r) => r.toString()).join() }));
      expect(lit.current === 1 && lit.all === 1 && lit.text.toLowerCase() === "weather in paris", `highlights: ${JSON.stringify(lit)}`);
      const first = await page.$eval('[data-find-current="true"]', (m) => m.dataset.messageId);
      await page.click(T("find-next"));
      const second = await page.$eval('[data-find-current="true"]', (m) => m.dataset.messageId);
      expect(first !== second && (await page.textContent(T("find-count"))) === "2 of 2", "Next does not move to the other message");
      await page.press(T("find-input"), "Enter");
      expect((await page.textContent(T("find-count"))) === "1 of 2", "Enter does not step back round to the first match");
      await shot("find");
      await page.fill(T("find-input"), "no such words");
      await page.waitForFunction((sel) => document.querySelector(sel).dataset.matches === "0", T("find-count"));
      expect((await page.textContent(T("find-count"))) === "no match", "no 'no match'");
      await page.fill(T("find-input"), "");
    });

    await check("compare two runs: the first divergence, then messages and state side by side (across threads)", async () => {
      await fresh(page, base);
      let r = await send(page, "count to 2");
      r = await send(page, "count to 3");
      expect(r.status === "finished", `run 2 ended as "${r.status}"`);
      const cmp = page.locator(`${T("timeline-run")} ${T("compare-run")}`);
      await cmp.first().click();
      await page.waitForSelector(`${T("compare-banner")}:not([hidden])`);
      expect((await cmp.first().getAttribute("aria-pressed")) === "true", "the pinned run is not marked");
      await cmp.nth(1).click();
      await page.waitForSelector(`${T("compare")}:not([hidden])`);
      expect(await page.isHidden(T("chat")), "the chat stays beside the comparison");
      const verdict = await page.$eval(T("compare-verdict"), (v) => ({ diverges: v.dataset.diverges, index: Number(v.dataset.index), path: v.dataset.path, answer: Number(v.dataset.answerIndex), text: v.textContent }));
      // Where RUN_STARTED echoes the request (agui serve), the requests differ first
      // (another message) and the answers later; else the answers are all there is.
      const echoed = await page.evaluate(() => window.aguiConsole.timeline.groups[0].entries[0]?.ev?.input !== undefined);
      if (echoed) {
        expect(verdict.diverges === "true" && verdict.index === 0 && verdict.path.startsWith("/input/") && verdict.answer >= 1, `verdict: ${JSON.stringify(verdict)}`);
        expect(await page.isVisible(T("compare-answer")), "no word on where the answers part");
      } else expect(verdict.diverges === "true" && verdict.index >= 1 && verdict.answer === verdict.index, `verdict: ${JSON.stringify(verdict)}`);
      // The same divergence as `agui diff` finds in the two runs' events.
      if (existsSync(aguiBin)) {
        const runs = await page.evaluate(() => window.aguiConsole.timeline.groups.map((g) => g.entries.map((e) => e.ev)));
        const files = runs.slice(0, 2).map((evs, k) => {
          const path = join(dir, `run-${k}.jsonl`);
          writeFileSync(path, evs.map((e) => JSON.stringify(e) + "\n").join(""));
          return path;
        });
        const out = spawnSync(aguiBin, ["diff", ...files, "--json"], { encoding: "utf8" });
        const cli = JSON.parse(out.stdout || "{}").divergence;
        expect(cli && cli.index === verdict.index && cli.path === verdict.path, `agui diff finds ${JSON.stringify(cli)}, the console ${JSON.stringify(verdict)}`);
      }
      const state = await page.$eval(T("compare-state"), (s) => Number(s.dataset.changes));
      expect(state >= 1, "the states at the end are shown as equal (count 2 and count 3)");
      const msgs = await page.$$eval(T("compare-message"), (m) => m.length);
      expect(msgs >= 4, `${msgs} messages side by side`);
      expect(Number(await page.$eval(T("compare-messages"), (s) => s.dataset.differing)) >= 1, "no differing message");
      await shot("compare");
      await page.click(T("compare-close"));
      expect(await page.isVisible(T("chat")), "closing the comparison does not bring the chat back");
      // The pin stays across threads: the same request in a new thread sends the same events.
      await page.click(T("compare-clear"));
      await page.click(T("new-thread"));
      r = await send(page, "hello");
      await cmp.first().click();
      await page.click(T("new-thread"));
      r = await send(page, "hello");
      await page.waitForSelector(`${T("compare-banner")}:not([hidden])`);
      await cmp.first().click();
      await page.waitForSelector(`${T("compare")}:not([hidden])`);
      const same = await page.$eval(T("compare-verdict"), (v) => v.dataset.diverges);
      expect(same === "false", `two "hello" runs of two threads diverge: ${await page.textContent(T("compare-verdict"))}`);
      await page.click(T("compare-close"));
      await page.click(T("compare-clear"));
    });

    await check("export as SSE and as HAR, redacted by an allowlist: every run, no content, no credential", async () => {
      await fresh(page, base);
      const secret = `secret-${randomUUID().slice(0, 8)}`;
      await send(page, `hello ${secret}`);
      await send(page, "count to 2");
      const events = await page.$$eval(T("timeline-event"), (b) => b.map((x) => x.dataset.type));
      const download = async (format, redact) => {
        await page.click(`${T("export")} summary`);
        await page.check(`${T("export-format")}[value="${format}"]`);
        if (redact) await page.check(T("export-redact"));
        else await page.uncheck(T("export-redact"));
        const [d] = await Promise.all([page.waitForEvent("download"), page.click(T("export-download"))]);
        const path = join(dir, `${format}-${redact}`);
        await d.saveAs(path);
        return { name: d.suggestedFilename(), text: readFileSync(path, "utf8") };
      };
      const sse = await download("sse", true);
      expect(sse.name.endsWith("-redacted.sse"), `the SSE file is named ${sse.name}`);
      const got = sseEvents(sse.text);
      expect(JSON.stringify(got.map((e) => e.type)) === JSON.stringify(events), "the SSE export's events differ from the timeline's");
      expect(!sse.text.includes(secret) && !sse.text.includes("hello"), "the redacted SSE holds message text");
      const plain = await download("sse", false);
      expect(plain.text.includes(secret), "the plain SSE lacks the message text");
      const har = await download("har", true);
      expect(har.name.endsWith("-redacted.har"), `the HAR file is named ${har.name}`);
      const log = JSON.parse(har.text).log;
      expect(log.version === "1.2" && log.entries.length === 2, `HAR: version ${log.version}, ${log.entries.length} entries`);
      for (const e of log.entries) {
        expect(e.request.method === "POST" && new URL(e.request.url).pathname === "/agent", `a HAR request: ${e.request.method} ${e.request.url}`);
        const input = JSON.parse(e.request.postData.text);
        expect(Array.isArray(input.messages) && input.messages.every((m) => typeof m.id === "string" && typeof m.role === "string"), "the HAR request lost the messages' ids and roles");
        expect(e.response.content.mimeType === "text/event-stream" && sseEvents(e.response.content.text)[0].type === "RUN_STARTED", "a HAR response is not the run's stream");
      }
      expect(!har.text.includes(secret) && !/authorization|bearer/i.test(har.text), "the redacted HAR holds content or a credential");
      const plainHar = JSON.parse((await download("har", false)).text).log;
      expect(JSON.parse(plainHar.entries[0].request.postData.text).messages.some((m) => m.content === `hello ${secret}`), "the plain HAR lacks the request's message");
      expect(!JSON.stringify(plainHar).toLowerCase().includes("authorization"), "the HAR holds the API token's header");
      // Back to the defaults the export check expects.
      await page.click(`${T("export")} summary`);
      await page.check(`${T("export-format")}[value="jsonl"]`);
      await page.check(T("export-redact"));
      await page.click(`${T("export")} summary`);
    });

    await check("capabilities beside the agent picker: what the agent declares, as text; no button without them", async () => {
      if (!fake) {
        // agui serve's demo agent declares its own.
        const served = await (await api("/agent/capabilities")).json();
        await fresh(page, base);
        await page.waitForSelector(`${T("caps")}[data-loaded="yes"]`, { state: "attached" });
        expect((await page.textContent(`${T("caps")} summary`)).includes(served.identity.name), "the button does not name the demo agent");
        await page.click(`${T("caps")} summary`);
        const groups = await page.$$eval(T("cap-group"), (g) => g.map((x) => x.dataset.group));
        expect(JSON.stringify(groups) === JSON.stringify(Object.keys(served).filter((k) => k !== "identity")), `groups ${JSON.stringify(groups)} for ${JSON.stringify(Object.keys(served))}`);
        const tools = await page.$eval(`${T("cap-value")}[data-key="items"]`, (v) => v.textContent);
        expect(served.tools.items.every((t) => tools.includes(t.name)), `the tools read ${JSON.stringify(tools)}`);
        await shot("capabilities");
        await page.click(`${T("caps")} summary`);
      }
      const caps = {
        identity: { name: "demo-agent", type: "aguikit", version: "0.1.0", description: "The built-in demo <b>agent</b>" },
        transport: { streaming: true, websocket: false },
        tools: { supported: true, items: [{ name: "get_weather" }] },
        humanInTheLoop: { interrupts: true, approvals: true },
        custom: { note: "<img src=x onerror=alert(1)>" },
      };
      await page.route("**/agent/capabilities", (r) => r.fulfill({ status: 200, headers: { "Content-Type": "application/json" }, body: JSON.stringify(caps) }));
      try {
        await fresh(page, base);
        await page.waitForSelector(`${T("caps")}[data-loaded="yes"]`, { state: "attached" });
        expect(await page.isVisible(T("caps")), "no capabilities button");
        expect((await page.textContent(`${T("caps")} summary`)).includes("demo-agent"), "the button does not name the agent");
        await page.click(`${T("caps")} summary`);
        await page.waitForSelector(T("caps-menu"));
        const groups = await page.$$eval(T("cap-group"), (g) => g.map((x) => x.dataset.group));
        expect(JSON.stringify(groups) === JSON.stringify(["transport", "tools", "humanInTheLoop", "custom"]), `groups: ${JSON.stringify(groups)}`);
        const flags = await page.$$eval(T("cap-flag"), (f) => f.map((x) => `${x.dataset.key}=${x.dataset.on}`));
        expect(["streaming=true", "websocket=false", "supported=true", "interrupts=true"].every((f) => flags.includes(f)), `flags: ${JSON.stringify(flags)}`);
        const menu = await page.$eval(T("caps-menu"), (m) => ({ imgs: m.querySelectorAll("img, b").length, text: m.textContent }));
        expect(menu.imgs === 0 && menu.text.includes("<img src=x") && menu.text.includes("<b>agent</b>"), "declared text is not shown as text");
        if (fake) await shot("capabilities");
        await page.click(`${T("caps")} summary`);
      } finally {
        await page.unroute("**/agent/capabilities");
      }
      await page.route("**/agent/capabilities", (r) => r.fulfill({ status: 404, headers: { "Content-Type": "application/json" }, body: '{"error":"not_found"}' }));
      try {
        await fresh(page, base);
        await page.waitForSelector(`${T("caps")}[data-loaded="no"]`, { state: "attached" });
        expect(await page.isHidden(T("caps")), "a capabilities button for an agent that declares none");
      } finally {
        await page.unroute("**/agent/capabilities");
      }
    });

    await check("latency per run: time to first event and text, gaps between deltas, tokens from usage", async () => {
      await fresh(page, base);
      const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
      const deltas = ["The ", "answer ", "is ", "forty-two."];
      await page.route("**/agent", async (route) => {
        const body = [
          ev({ type: "RUN_STARTED", threadId: "t", runId: "r" }),
          ev({ type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" }),
          ...deltas.map((d) => ev({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: d })),
          ev({ type: "TEXT_MESSAGE_END", messageId: "m" }),
          ev({ type: "RUN_FINISHED", threadId: "t", runId: "r", usage: [{ provider: "openai", model: "gpt-4o", inputTokens: 120, outputTokens: 30, totalTokens: 150 }] }),
        ].join("");
        await route.fulfill({ status: 200, headers: { "Content-Type": "text/event-stream" }, body });
      });
      try {
        const r = await send(page, "how much");
        expect(r.status === "finished", `run ended as "${r.status}"`);
      } finally {
        await page.unroute("**/agent");
      }
      await page.click(`${T("inspector-tab")}[data-tab="latency"]`);
      await page.waitForSelector(`${T("latency")}[data-run="1"]`);
      const v = await page.evaluate(() => {
        const val = (id) => document.querySelector(`[data-testid="${id}"] .stat-value`)?.textContent;
        return { first: val("latency-first-event"), text: val("latency-first-text"), tokens: val("latency-tokens"), input: val("latency-input-tokens"), output: val("latency-output-tokens"), deltas: val("latency-deltas"), bars: document.querySelectorAll('[data-testid="latency-chart"] rect').length };
      });
      expect(/\d+ ms/.test(v.first) && /\d+ ms/.test(v.text), `times: ${JSON.stringify(v)}`);
      expect(v.tokens === "150" && v.input === "120" && v.output === "30", `tokens: ${JSON.stringify(v)}`);
      expect(v.deltas === "4" && v.bars === 3, `deltas and gaps: ${JSON.stringify(v)}`);
      // A demo run: its own numbers, and no tokens (the demo reports none).
      const r2 = await send(page, "hello");
      expect(r2.status === "finished", `run 2 ended as "${r2.status}"`);
      await page.waitForSelector(`${T("latency")}[data-run="2"]`);
      const n = await page.$eval('[data-testid="latency-deltas"] .stat-value', (x) => Number(x.textContent));
      expect(n > 5 && (await page.textContent('[data-testid="latency-tokens"] .stat-value')) === "n/a", "the demo run's latency");
      await shot("latency");
      // Selecting run 1's header shows run 1 again.
      await page.locator(T("timeline-request")).first().click();
      await page.click(`${T("inspector-tab")}[data-tab="latency"]`);
      await page.waitForSelector(`${T("latency")}[data-run="1"]`);
      await page.click(`${T("inspector-tab")}[data-tab="event"]`);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
