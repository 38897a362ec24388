// A2UI surfaces in the console, checked in headless Chromium (called by console.test.mjs with
// its page and helpers). Recordings are built here from the A2UI v0.9 basic catalog's
// examples, read at run time from $AGUI_SHARED_DIR/a2ui/specification/v0_9/catalogs/basic/
// examples, each wrapped as an `a2ui-surface` ACTIVITY_SNAPSHOT inside a run:
//
// - every example renders (its components as the catalog draws them, the texts and images
//   it binds, no placeholder), with a screenshot of each and a grid of them all;
// - the lifecycle (building with progress, retrying with the errors, failed) and the surface
//   at any point of time travel (snapshots and an ACTIVITY_DELTA of its operations);
// - broken surfaces: a placeholder naming the rule (A7, A2, A3, A6, A17) with the rules
//   page's link; untrusted text, URLs and Markdown stay inert;
// - two-way binding (text field, checkbox, choice chips, slider, date) into the local data
//   model and everything bound to it;
// - an action: a button sends a new run with forwardedProps.a2uiAction.userAction (its
//   name, surface, component, time and the context resolved from the data model); the
//   agent's answer is intercepted with page.route (the request body is what is checked).
//
// Screenshots go next to SCREENSHOT: console-a2ui-gallery.png (the grid),
// console-a2ui/NN_name.png (each example), console-a2ui-lifecycle.png (with -building and
// -retrying), console-a2ui-broken.png, console-a2ui-binding.png, console-a2ui-modal.png,
// console-a2ui-form.png, console-a2ui-action.png.

import { writeFileSync, readFileSync, readdirSync, mkdtempSync, rmSync, mkdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const CATALOG = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json";
const jsonl = (events) => events.map((e) => JSON.stringify(e) + "\n").join("");
const snapshot = (messageId, content) => ({ type: "ACTIVITY_SNAPSHOT", messageId, activityType: "a2ui-surface", replace: true, content });
const surfaceMessageId = (ops) => `a2ui-surface-${ops.find((m) => m.createSurface)?.createSurface.surfaceId ?? "x"}`;
const clone = (v) => JSON.parse(JSON.stringify(v));

/** The basic catalog's examples: [{file, name, messages}]. */
function basicExamples() {
  const shared = process.env.AGUI_SHARED_DIR || join(here, "..", "..", "..", "..", "..", "shared");
  const dir = join(shared, "a2ui", "specification", "v0_9", "catalogs", "basic", "examples");
  if (!existsSync(dir)) return { dir, examples: [] };
  const examples = readdirSync(dir).filter((f) => f.endsWith(".json")).sort().map((f) => ({ file: f, ...JSON.parse(readFileSync(join(dir, f), "utf8")) }));
  return { dir, examples };
}

// The data model and components an example ends with (what the page should show).
function folded(messages) {
  const comps = new Map();
  let data = {};
  for (const m of messages) {
    if (m.updateComponents) for (const c of m.updateComponents.components) comps.set(c.id, c);
    if (m.updateDataModel) {
      const p = m.updateDataModel.path ?? "/";
      if (p === "/" || p === "") data = clone(m.updateDataModel.value);
      else {
        const tokens = p.slice(1).split("/");
        let cur = data;
        for (const t of tokens.slice(0, -1)) cur = cur[t] ??= {};
        cur[tokens[tokens.length - 1]] = clone(m.updateDataModel.value);
      }
    }
  }
  return { comps, data };
}
const lookup = (data, path) => path.slice(1).split("/").reduce((v, t) => (v == null ? undefined : v[t.replace(/~1/g, "/").replace(/~0/g, "~")]), data);

// The components drawn without user interaction (modal contents and other tabs are not),
// each with whether it is drawn once (outside any template).
function visible({ comps, data }) {
  const seen = new Map();
  const walk = (id, once, stack) => {
    const c = comps.get(id);
    if (!c || stack.includes(id)) return;
    seen.set(id, (seen.get(id) ?? false) || once);
    const next = [];
    if (typeof c.child === "string") next.push([c.child, once]);
    if (Array.isArray(c.children)) for (const k of c.children) next.push([k, once]);
    else if (c.children?.componentId && c.children.path.startsWith("/")) {
      const list = lookup(data, c.children.path);
      if (Array.isArray(list) && list.length) next.push([c.children.componentId, false]);
    }
    if (c.component === "Modal") next.push([c.trigger, once]);
    if (c.component === "Tabs") next.push([c.tabs[0].child, once]);
    for (const [k, o] of next) walk(k, o, [...stack, id]);
  };
  walk("root", true, []);
  return seen;
}

// What a component shows as text that the test can predict: a plain literal, or an
// absolute binding to a string or number.
function expectedText(c, data) {
  const t = c.text;
  if (typeof t === "string") return /[#*_`[\]]|^\s*\d+[.)]\s|^\s*[-+]\s/m.test(t) ? null : t;
  if (t && typeof t.path === "string" && t.path.startsWith("/")) {
    const v = lookup(data, t.path);
    return typeof v === "string" || typeof v === "number" ? String(v) : null;
  }
  return null;
}

// A picture for the examples' remote images (the test machine may be offline): an SVG
// gradient, so the screenshots show images where the surfaces put them.
const pictureSvg = (seed) => {
  let h = 0;
  for (const ch of seed) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="260" viewBox="0 0 400 260"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="hsl(${h},65%,62%)"/><stop offset="1" stop-color="hsl(${(h + 50) % 360},70%,38%)"/></linearGradient></defs><rect width="400" height="260" fill="url(#g)"/><circle cx="300" cy="80" r="38" fill="rgba(255,255,255,.35)"/><path d="M0 210l90-70 70 50 90-90 150 120v40H0z" fill="rgba(0,0,0,.18)"/></svg>`;
};

export async function a2uiChecks(t) {
  const { page, check, expect, T, base, log, screenshotPath, fresh, fake, posted } = t;
  const dir = mkdtempSync(join(tmpdir(), "agui-a2ui-test-"));
  const shotDir = screenshotPath.replace(/\.png$/i, "") + "-a2ui";
  const shot = async (name, target = page) => {
    const path = screenshotPath.replace(/\.png$/i, "") + `-${name}.png`;
    mkdirSync(dirname(path), { recursive: true });
    await target.screenshot({ path });
    log(`     ${path}`);
    return path;
  };
  const origin = new URL(base).origin;
  const { dir: exampleDir, examples } = basicExamples();
  const openFile = async (name, body) => {
    const path = join(dir, name);
    writeFileSync(path, body);
    await page.setInputFiles(T("recording-file"), path);
    await page.waitForFunction(
      ([status, banner, name]) => {
        const s = document.querySelector(status);
        const b = document.querySelector(banner);
        return s?.dataset.loaded === "recording" && s.dataset.busy === "false" && !b.hidden && b.querySelector("code")?.textContent === name;
      },
      [T("run-status"), T("recording-banner"), name],
    );
  };
  const card = (messageId) => page.locator(`${T("a2ui-activity")}[data-message-id="${messageId}"]`);
  // Remote images answer with a generated picture; remote media and anything else remote is refused.
  const remote = (url) => url.origin !== origin;
  const routeRemote = async (route) => {
    const req = route.request();
    const url = new URL(req.url());
    if (req.resourceType() === "image" && !url.pathname.includes("broken")) {
      await route.fulfill({ status: 200, contentType: "image/svg+xml", body: pictureSvg(url.pathname) });
    } else await route.fulfill({ status: 404, contentType: "text/plain", body: "not here" });
  };
  await page.route(remote, routeRemote);

  try {
    await check("A2UI: the basic catalog's examples are there", async () => {
      expect(examples.length >= 30, `only ${examples.length} examples in ${exampleDir}: set AGUI_SHARED_DIR`);
    });

    // ---- every example ------------------------------------------------------------
    await check(`A2UI: every basic-catalog example renders its components, texts and images (${examples.length} surfaces, a screenshot of each)`, async () => {
      const events = [{ type: "RUN_STARTED", threadId: "a2ui-gallery", runId: "gallery" }];
      for (const ex of examples) events.push(snapshot(surfaceMessageId(ex.messages), { a2ui_operations: ex.messages }));
      events.push({ type: "RUN_FINISHED", threadId: "a2ui-gallery", runId: "gallery" });
      await fresh(page, base);
      await openFile("a2ui-gallery.jsonl", jsonl(events));
      const drawnTypes = new Set();
      let texts = 0;
      let images = 0;
      mkdirSync(shotDir, { recursive: true });
      const shots = [];
      for (const ex of examples) {
        const id = surfaceMessageId(ex.messages);
        const el = card(id);
        expect((await el.count()) === 1, `${ex.file}: no card for ${id}`);
        const info = await el.evaluate((c) => ({
          valid: c.dataset.valid,
          status: c.dataset.status,
          placeholders: c.querySelectorAll('[data-testid="a2ui-placeholder"]').length,
          problems: c.querySelector('[data-testid="a2ui-problems"]')?.textContent ?? null,
          ids: [...c.querySelectorAll("[data-a2-id]")].map((n) => [n.dataset.a2Id, n.dataset.a2Type]),
        }));
        expect(info.valid === "true" && info.status === "ready" && info.placeholders === 0 && info.problems === null, `${ex.file}: ${JSON.stringify({ ...info, ids: info.ids.length })}`);
        const f = folded(ex.messages);
        const want = visible(f);
        const drawn = new Map();
        for (const [cid, type] of info.ids) drawn.set(cid, (drawn.get(cid) ?? 0) + 1), drawnTypes.add(type);
        for (const [cid] of want) {
          expect(drawn.has(cid), `${ex.file}: component '${cid}' (${f.comps.get(cid)?.component}) is not drawn`);
        }
        for (const [cid, once] of want) {
          const c = f.comps.get(cid);
          if (!once) continue;
          if (c.component === "Text") {
            const text = expectedText(c, f.data);
            if (text === null) continue;
            const got = await el.locator(`[data-a2-id="${cid}"]`).first().textContent();
            expect(got === text, `${ex.file}: Text '${cid}' shows ${JSON.stringify(got)}, expected ${JSON.stringify(text)}`);
            texts++;
          } else if (c.component === "Image") {
            const url = typeof c.url === "string" ? c.url : typeof c.url?.path === "string" && c.url.path.startsWith("/") ? lookup(f.data, c.url.path) : null;
            if (typeof url !== "string") continue;
            const src = await el.locator(`[data-a2-id="${cid}"] img`).first().getAttribute("src");
            expect(src === new URL(url).href, `${ex.file}: Image '${cid}' src ${src}, expected ${url}`);
            images++;
          }
        }
        // Each example's picture (the card scrolled into view).
        const file = join(shotDir, ex.file.replace(/\.json$/, ".png"));
        await el.scrollIntoViewIfNeeded();
        await page.waitForFunction((mid) => [...document.querySelectorAll(`[data-message-id="${mid}"] .a2-image`)].every((i) => i.dataset.state !== "loading"), id);
        await el.screenshot({ path: file });
        shots.push({ name: `${ex.file.slice(0, 2)} · ${ex.name}`, file });
      }
      log(`     ${shotDir}/ (${shots.length} pictures)`);
      expect(texts >= 100 && images >= 6, `only ${texts} texts and ${images} images checked`);
      // The modal's content is drawn when its trigger is clicked (and the trigger sends nothing).
      const modal = examples.find((e) => e.messages.some((m) => m.updateComponents?.components.some((c) => c.component === "Modal")));
      expect(modal, "no example has a Modal");
      const mcard = card(surfaceMessageId(modal.messages));
      const content = [...folded(modal.messages).comps.values()].find((c) => c.component === "Modal").content;
      await mcard.locator('[data-a2-type="Modal"] button').first().click();
      await page.waitForSelector(`${T("a2ui-modal")}[open] [data-a2-id="${content}"]`);
      for (const [cid, type] of await page.$$eval(`${T("a2ui-modal")} [data-a2-id]`, (n) => n.map((x) => [x.dataset.a2Id, x.dataset.a2Type]))) drawnTypes.add(type), void cid;
      await shot("a2ui-modal");
      await page.click(T("a2ui-modal-close"));
      await page.waitForSelector(T("a2ui-modal"), { state: "detached" });
      const all = ["Text", "Image", "Icon", "Video", "AudioPlayer", "Row", "Column", "List", "Card", "Tabs", "Modal", "Divider", "Button", "TextField", "CheckBox", "ChoicePicker", "Slider", "DateTimeInput"];
      const missing = all.filter((x) => !drawnTypes.has(x));
      expect(missing.length === 0, `components never drawn: ${missing.join(", ")}`);
      // A recording is read-only: its buttons send nothing.
      const disabled = await page.$$eval(T("a2ui-button"), (b) => b.filter((x) => !x.dataset.opensModal).every((x) => x.disabled && /read-only/.test(x.title)));
      expect(disabled, "a recording's A2UI buttons are not disabled");
      // The grid of every example's picture.
      const grid = await page.context().newPage();
      try {
        const cells = shots.map((s) => `<figure><figcaption>${s.name.replace(/[<>&]/g, "")}</figcaption><img src="data:image/png;base64,${readFileSync(s.file).toString("base64")}"></figure>`).join("");
        await grid.setViewportSize({ width: 1800, height: 1000 });
        await grid.setContent(`<!doctype html><style>body{margin:0;padding:16px;background:#eef0f4;font:13px system-ui,sans-serif}main{columns:4 420px;column-gap:14px}figure{break-inside:avoid;margin:0 0 14px;background:#fff;border-radius:10px;padding:8px;box-shadow:0 1px 3px rgba(0,0,0,.08)}figcaption{color:#556;margin:0 0 6px 2px;font-weight:600}img{width:100%;display:block}</style><main>${cells}</main>`);
        const path = screenshotPath.replace(/\.png$/i, "") + "-a2ui-gallery.png";
        await grid.screenshot({ path, fullPage: true });
        log(`     ${path}`);
      } finally {
        await grid.close();
      }
    });

    // ---- two-way binding in a recording's surfaces (local only) ----------------------
    await check("A2UI: inputs write the surface's data model and what is bound to it follows (text, date, chips, checkbox + checks)", async () => {
      const builder = examples.find((e) => e.file.startsWith("30_"));
      const validator = examples.find((e) => e.file.startsWith("32_"));
      expect(builder && validator, "examples 30 and 32 are needed");
      const b = card(surfaceMessageId(builder.messages));
      await b.locator(T("a2ui-raw-toggle")).click();
      const name = b.locator('[data-a2-id="event-name-input"] input');
      await name.fill("Ada's 40th");
      const preview = await b.locator('[data-a2-id="invite-event-name"]').textContent();
      expect(preview === "Ada's 40th", `the preview shows ${JSON.stringify(preview)} after typing`);
      const dataOf = async (c) => JSON.parse(await c.locator(T("a2ui-data")).first().textContent());
      expect((await dataOf(b)).event.name === "Ada's 40th", "the data model does not hold the typed name");
      await b.locator('[data-a2-id="location-picker"] [data-value="garden"]').click();
      const loc = (await dataOf(b)).event.location;
      expect(JSON.stringify(loc) === '["garden"]', `location ${JSON.stringify(loc)} after choosing the garden chip`);
      const locText = await b.locator('[data-a2-id="invite-location-text"]').textContent();
      expect(/garden/.test(locText), `the preview's location shows ${JSON.stringify(locText)}`);
      await b.locator('[data-a2-id="date-input"] input').fill("2026-05-01T19:30");
      const date = (await dataOf(b)).event.date;
      expect(typeof date === "string" && new Date(date).getTime() === new Date(2026, 4, 1, 19, 30).getTime(), `date ${date} (ISO 8601 of the local time picked)`);
      // Checks: the register button is blocked until the terms are agreed and a zip given.
      const v = card(surfaceMessageId(validator.messages));
      const btn = v.locator('[data-a2-id="submit-btn"] button');
      expect((await btn.getAttribute("data-blocked")) === "true", "the submit button is not blocked by its checks at first");
      await v.locator('[data-a2-id="zip-field"] input').fill("12");
      const hint = await v.locator('[data-a2-id="zip-field"] [data-testid="a2ui-check"]').textContent();
      expect(hint === "Must be exactly 5 digits", `zip hint ${JSON.stringify(hint)}`);
      await v.locator('[data-a2-id="zip-field"] input').fill("75001");
      expect(await v.locator('[data-a2-id="zip-field"] [data-testid="a2ui-check"]').isHidden(), "the zip hint stays after a valid zip");
      await v.locator('[data-a2-id="email-field"] input').fill("ada@example.com");
      await v.locator('[data-a2-id="terms-checkbox"] input').check();
      expect((await btn.getAttribute("data-blocked")) === "false", "the submit button stays blocked once its checks pass");
      await b.scrollIntoViewIfNeeded();
      await shot("a2ui-binding", b);
    });

    // ---- lifecycle and time travel ------------------------------------------------------------
    await check("A2UI: lifecycle (building with progress, retrying with errors, failed) and the surface at any point of time travel", async () => {
      const flight = examples.find((e) => e.file.startsWith("01_"));
      const ops = clone(flight.messages);
      const sid = ops[0].createSurface.surfaceId;
      const events = [
        { type: "RUN_STARTED", threadId: "a2ui-lifecycle", runId: "lc" },
        snapshot("a2ui-surface-lc", { status: "building", progressTokens: 12 }),
        snapshot("a2ui-surface-lc", { status: "building", progressTokens: 480 }),
        snapshot("a2ui-surface-lc", { status: "retrying", attempt: 2, maxAttempts: 3, errors: ["A7: Component 'header' references non-existent component 'logo'", { rule: "A3", message: "Text 'title' has no 'text'", componentId: "title" }] }),
        snapshot("a2ui-surface-lc", { a2ui_operations: ops }),
        { type: "ACTIVITY_DELTA", messageId: "a2ui-surface-lc", activityType: "a2ui-surface", patch: [{ op: "add", path: "/a2ui_operations/-", value: { version: "v0.9", updateDataModel: { surfaceId: sid, path: "/status", value: "Delayed 40 min" } } }] },
        snapshot("a2ui-surface-fail", { status: "building", progressTokens: 30 }),
        snapshot("a2ui-surface-fail", { status: "failed", error: "No valid surface after 3 attempts: the agent kept referring to a component 'logo' that does not exist.", attempts: 3 }),
        { type: "RUN_FINISHED", threadId: "a2ui-lifecycle", runId: "lc" },
      ];
      await fresh(page, base);
      await openFile("a2ui-lifecycle.jsonl", jsonl(events));
      const lc = card("a2ui-surface-lc");
      const status = async (c) => (await c.count()) ? c.evaluate((x) => ({ status: x.dataset.status, lifecycle: x.querySelector('[data-testid="a2ui-lifecycle"]')?.textContent ?? null, text: x.textContent })) : null;
      // Live: the surface with the delta applied, and the failure.
      let s = await status(lc);
      expect(s?.status === "ready", `live: ${JSON.stringify(s)}`);
      expect((await lc.locator('[data-a2-id="status-value"]').textContent()) === "Delayed 40 min", "live: the delta's data is not shown");
      s = await status(card("a2ui-surface-fail"));
      expect(s?.status === "failed" && /could not be built/.test(s.lifecycle) && /after 3 attempts/.test(s.lifecycle) && /component 'logo'/.test(s.lifecycle), `failed: ${JSON.stringify(s)}`);
      const travel = async (i) => {
        await page.click(`${T("timeline-event")}[data-index="${i}"]`);
        await page.waitForSelector(`${T("time-travel")}[data-index="${i}"]`);
      };
      await travel(1);
      s = await status(lc);
      expect(s?.status === "building" && /Building the interface/.test(s.lifecycle) && /12 tokens received/.test(s.lifecycle), `after #1: ${JSON.stringify(s)}`);
      await travel(2);
      s = await status(lc);
      expect(s?.status === "building" && /480 tokens received/.test(s.lifecycle), `after #2: ${JSON.stringify(s)}`);
      await shot("a2ui-building", lc);
      await travel(3);
      s = await status(lc);
      expect(s?.status === "retrying" && /attempt 2 of 3/.test(s.lifecycle), `after #3: ${JSON.stringify(s)}`);
      const errs = await lc.locator(`${T("a2ui-retry-errors")} li`).allTextContents();
      expect(errs.length === 2 && /^A7 Component 'header' references non-existent component 'logo'$/.test(errs[0]) && errs[1] === "Text 'title' has no 'text' (A3, title)", `retry errors ${JSON.stringify(errs)}`);
      expect((await lc.locator(`${T("a2ui-retry-errors")} ${T("a2ui-rule")}`).getAttribute("href")) === "rules#A7", "the retry error's rule is not a link to the rules page");
      await shot("a2ui-retrying", lc);
      await travel(4);
      expect((await lc.locator('[data-a2-id="status-value"]').textContent()) === "On Time", "after #4 (before the delta) the status is not the snapshot's");
      expect(await lc.locator('[data-a2-id="flight-number"]').textContent() === "OS 87", "after #4 the flight number is missing");
      await travel(5);
      expect((await lc.locator('[data-a2-id="status-value"]').textContent()) === "Delayed 40 min", "after #5 (the delta) the status did not change");
      await travel(6);
      s = await status(card("a2ui-surface-fail"));
      expect(s?.status === "building", `after #6 the second surface is ${JSON.stringify(s)}`);
      await page.click(T("back-to-live"));
      await page.locator(T("chat")).evaluate((c) => (c.scrollTop = 0));
      await shot("a2ui-lifecycle");
    });

    // ---- broken surfaces --------------------------------------------------------------------
    await check("A2UI: what does not validate shows a placeholder naming the rule (A7, A2, A3, A6, A17); untrusted content stays inert", async () => {
      const pick = (prefix) => clone(examples.find((e) => e.file.startsWith(prefix)).messages);
      const comps = (ops) => ops.filter((m) => m.updateComponents).flatMap((m) => m.updateComponents.components);
      const dangling = pick("07_");
      const task = comps(dangling).find((c) => Array.isArray(c.children));
      task.children.push("ghost-badge");
      const unknown = pick("15_");
      const uc = comps(unknown).find((c) => c.component === "Text" && c.id !== "root");
      uc.component = "Sparkline";
      const missing = pick("20_");
      const mc = comps(missing).find((c) => c.component === "Text");
      delete mc.text;
      const noRoot = pick("27_");
      for (const c of comps(noRoot)) if (c.id === "root") c.id = "stats-root";
      const hostile = [
        { version: "v0.9", createSurface: { surfaceId: "hostile", catalogId: CATALOG } },
        { version: "v0.9", updateComponents: { surfaceId: "hostile", components: [
          { id: "root", component: "Column", children: ["t1", "t2", "i1", "i2", "i3", "b1"] },
          { id: "t1", component: "Text", text: { path: "/html" } },
          { id: "t2", component: "Text", text: "Read [the docs](javascript:alert(1)) or [the site](https://example.com/docs)" },
          { id: "i1", component: "Image", url: "javascript:alert(1)", description: "script url" },
          { id: "i2", component: "Image", url: "https://images.example.com/broken.png", description: "A photo that does not load" },
          { id: "i3", component: "Image", url: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='20' height='20'%3E%3Crect width='20' height='20' fill='%233a5bd9'/%3E%3C/svg%3E", variant: "icon" },
          { id: "b1t", component: "Text", text: "Open" },
          { id: "b1", component: "Button", child: "b1t", action: { functionCall: { call: "openUrl", args: { url: "javascript:alert(1)" } } } },
        ] } },
        { version: "v0.9", updateDataModel: { surfaceId: "hostile", value: { html: "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script><b>bold?</b>" } } },
      ];
      const events = [
        { type: "RUN_STARTED", threadId: "a2ui-broken", runId: "broken" },
        snapshot("a2ui-surface-dangling", { a2ui_operations: dangling }),
        snapshot("a2ui-surface-unknown", { a2ui_operations: unknown }),
        snapshot("a2ui-surface-missing", { a2ui_operations: missing }),
        snapshot("a2ui-surface-noroot", { a2ui_operations: noRoot }),
        snapshot("a2ui-surface-garbage", { surfaces: "not operations" }),
        snapshot("a2ui-surface-hostile", { a2ui_operations: hostile }),
        { type: "RUN_FINISHED", threadId: "a2ui-broken", runId: "broken" },
      ];
      await fresh(page, base);
      await openFile("a2ui-broken.jsonl", jsonl(events));
      const placeholderOf = async (mid, rule) => {
        const c = card(mid);
        const ph = c.locator(`${T("a2ui-placeholder")}[data-rule="${rule}"]`).first();
        expect((await ph.count()) === 1, `${mid}: no ${rule} placeholder; rules shown: ${JSON.stringify(await c.locator(T("a2ui-placeholder")).evaluateAll((p) => p.map((x) => x.dataset.rule)))}`);
        const href = await ph.locator(T("a2ui-rule")).getAttribute("href");
        expect(href === `rules#${rule}`, `${mid}: the ${rule} link goes to ${href}`);
        const problems = await c.locator(`${T("a2ui-problem")}[data-rule="${rule}"]`).count();
        expect(problems >= 1, `${mid}: ${rule} is not listed among the problems`);
        expect((await c.getAttribute("data-valid")) === "false", `${mid} is marked valid`);
        return { c, text: await ph.textContent() };
      };
      let r = await placeholderOf("a2ui-surface-dangling", "A7");
      expect(/ghost-badge/.test(r.text) && /Dangling reference/.test(r.text), `A7 placeholder: ${r.text}`);
      expect((await r.c.locator(`[data-a2-id="${task.id}"]`).count()) === 1, "the rest of the dangling surface is not drawn");
      r = await placeholderOf("a2ui-surface-unknown", "A2");
      expect(/Sparkline/.test(r.text), `A2 placeholder: ${r.text}`);
      r = await placeholderOf("a2ui-surface-missing", "A3");
      expect(new RegExp(`'${mc.id}' has no 'text'`).test(r.text), `A3 placeholder: ${r.text}`);
      r = await placeholderOf("a2ui-surface-noroot", "A6");
      expect(/no component with id 'root'/.test(r.text), `A6 placeholder: ${r.text}`);
      r = await placeholderOf("a2ui-surface-garbage", "A17");
      // Untrusted content: text stays text, bad URLs load nothing, links only http(s).
      const h = card("a2ui-surface-hostile");
      const t1 = h.locator('[data-a2-id="t1"]');
      expect((await t1.textContent()) === hostile[2].updateDataModel.value.html, "the HTML-looking text is not shown as text");
      expect((await t1.locator("*").count()) === 0, "the HTML-looking text made elements");
      const links = await h.locator('[data-a2-id="t2"] a').evaluateAll((a) => a.map((x) => x.getAttribute("href")));
      expect(JSON.stringify(links) === '["https://example.com/docs"]', `links ${JSON.stringify(links)}`);
      expect((await h.locator('[data-a2-id="t2"]').textContent()) === "Read the docs or the site", `the Markdown text reads ${JSON.stringify(await h.locator('[data-a2-id="t2"]').textContent())}`);
      expect((await h.locator('[data-a2-id="i1"] img').count()) === 0 && (await h.locator('[data-a2-id="i1"]').getAttribute("data-state")) === "blocked", "a javascript: image URL was loaded");
      await page.waitForSelector('[data-a2-id="i2"][data-state="error"]');
      expect(/does not load/.test(await h.locator('[data-a2-id="i2"]').textContent()), "a broken image shows no fallback with its description");
      await page.waitForSelector('[data-a2-id="i3"][data-state="loaded"]');
      expect(await page.evaluate(() => window.__pwned === undefined), "a script of the content ran");
      await page.locator(T("chat")).evaluate((c) => (c.scrollTop = 0));
      const size = page.viewportSize();
      await page.setViewportSize({ width: size.width, height: 2300 });
      try {
        await shot("a2ui-broken");
      } finally {
        await page.setViewportSize(size);
      }
    });

    // ---- an action sent back as a new run -----------------------------------------------------------
    await check("A2UI: a button sends its action as a new run (forwardedProps.a2uiAction.userAction with the context resolved from the inputs)", async () => {
      const agentUrl = new URL("/agent", base).href;
      const sid = "booking";
      const form = [
        { version: "v0.9", createSurface: { surfaceId: sid, catalogId: CATALOG, sendDataModel: true, theme: { agentDisplayName: "Bistro booking", primaryColor: "#0f7f86" } } },
        { version: "v0.9", updateComponents: { surfaceId: sid, components: [
          { id: "root", component: "Card", child: "col" },
          { id: "col", component: "Column", children: ["title", "name", "guests", "date", "seating", "notes", "confirm", "summary", "book"] },
          { id: "title", component: "Text", text: "Book a table", variant: "h3" },
          { id: "name", component: "TextField", label: "Name", value: { path: "/booking/name" }, checks: [{ condition: { call: "required", args: { value: { path: "/booking/name" } } }, message: "Please give a name" }] },
          { id: "guests", component: "Slider", label: "Guests", min: 1, max: 12, value: { path: "/booking/guests" } },
          { id: "date", component: "DateTimeInput", label: "Date", enableDate: true, value: { path: "/booking/date" } },
          { id: "seating", component: "ChoicePicker", label: "Seating", displayStyle: "chips", variant: "mutuallyExclusive", options: [{ label: "Indoor", value: "indoor" }, { label: "Terrace", value: "terrace" }], value: { path: "/booking/seating" } },
          { id: "notes", component: "TextField", label: "Notes", variant: "longText", value: { path: "/booking/notes" } },
          { id: "confirm", component: "CheckBox", label: "I will arrive on time", value: { path: "/booking/confirm" } },
          { id: "summary", component: "Text", variant: "caption", text: { call: "formatString", args: { value: "Table for ${/booking/guests} · ${/booking/name}" }, returnType: "string" } },
          { id: "book-text", component: "Text", text: "Book" },
          { id: "book", component: "Button", variant: "primary", child: "book-text", checks: [{ condition: { call: "and", args: { values: [{ call: "required", args: { value: { path: "/booking/name" } } }, { path: "/booking/confirm" }] } }, message: "Give a name and confirm" }],
            action: { event: { name: "book_table", context: { name: { path: "/booking/name" }, guests: { path: "/booking/guests" }, date: { path: "/booking/date" }, seating: { path: "/booking/seating" }, confirmed: { path: "/booking/confirm" }, source: "console-test" } } } },
        ] } },
        { version: "v0.9", updateDataModel: { surfaceId: sid, value: { booking: { name: "", guests: 2, date: "2026-03-14", seating: ["indoor"], notes: "", confirm: false } } } },
      ];
      const sse = (events) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
      const bodies = [];
      const handler = async (route) => {
        const req = route.request();
        if (req.method() !== "POST") return route.fallback();
        const input = JSON.parse(req.postData() ?? "{}");
        bodies.push(input);
        const { threadId, runId } = input;
        const action = input.forwardedProps?.a2uiAction?.userAction;
        const events = [{ type: "RUN_STARTED", threadId, runId }];
        const say = (id, text) => events.push({ type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" }, { type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: text }, { type: "TEXT_MESSAGE_END", messageId: id });
        if (action) say(`m-${runId}`, `Booked for ${action.context.guests}, ${action.context.name}.`);
        else {
          say(`m-${runId}`, "Here is the booking form.");
          events.push(snapshot(`a2ui-surface-${sid}`, { status: "building", progressTokens: 64 }), snapshot(`a2ui-surface-${sid}`, { a2ui_operations: form }));
        }
        events.push({ type: "RUN_FINISHED", threadId, runId });
        await route.fulfill({ status: 200, headers: { "content-type": "text/event-stream", "cache-control": "no-store" }, body: sse(events) });
      };
      await fresh(page, base);
      await page.route(agentUrl, handler);
      try {
        const r1 = await t.send(page, "book a table");
        expect(r1.status === "finished", `the first run ended as ${r1.status}: ${r1.text}`);
        const c = card(`a2ui-surface-${sid}`);
        await c.waitFor();
        const book = c.locator('[data-a2-id="book"] button');
        expect(await book.isDisabled(), "the Book button is enabled before its checks pass");
        await c.locator('[data-a2-id="name"] input').fill("Ada Lovelace");
        const summary = () => c.locator('[data-a2-id="summary"]').textContent();
        expect((await summary()) === "Table for 2 · Ada Lovelace", `summary after typing: ${await summary()}`);
        await c.locator('[data-a2-id="guests"] input').evaluate((el) => {
          el.value = "4";
          el.dispatchEvent(new Event("input", { bubbles: true }));
        });
        expect((await summary()) === "Table for 4 · Ada Lovelace", `summary after the slider: ${await summary()}`);
        expect((await c.locator('[data-a2-id="guests"] output').textContent()) === "4", "the slider shows no value");
        await c.locator('[data-a2-id="date"] input').fill("2026-04-01");
        await c.locator('[data-a2-id="seating"] [data-value="terrace"]').click();
        await c.locator('[data-a2-id="notes"] textarea').fill("Window seat,\nplease");
        expect(await book.isDisabled(), "the Book button is enabled before the checkbox");
        await c.locator('[data-a2-id="confirm"] input').check();
        expect(await book.isEnabled(), "the Book button stays disabled once its checks pass");
        await c.locator(T("a2ui-raw-toggle")).click();
        const model = JSON.parse(await c.locator(T("a2ui-data")).textContent());
        expect(JSON.stringify(model.booking) === JSON.stringify({ name: "Ada Lovelace", guests: 4, date: "2026-04-01", seating: ["terrace"], notes: "Window seat,\nplease", confirm: true }), `data model ${JSON.stringify(model)}`);
        await c.locator(T("a2ui-raw-toggle")).click();
        await shot("a2ui-form", c);
        // The action: a new run on the same thread.
        const before = bodies.length;
        const runs = await page.$eval(T("run-status"), (s) => Number(s.dataset.runs || 0));
        const t0 = Date.now();
        await book.click();
        await page.waitForFunction(([sel, n]) => {
          const s = document.querySelector(sel);
          return Number(s.dataset.runs || 0) > n && s.dataset.busy === "false";
        }, [T("run-status"), runs]);
        expect(bodies.length === before + 1, `${bodies.length - before} requests after the click`);
        const input = bodies[bodies.length - 1];
        const ua = input.forwardedProps?.a2uiAction?.userAction;
        expect(ua, `no forwardedProps.a2uiAction.userAction in ${JSON.stringify(input.forwardedProps)}`);
        expect(ua.name === "book_table" && ua.surfaceId === sid && ua.sourceComponentId === "book", `userAction ${JSON.stringify(ua)}`);
        expect(JSON.stringify(ua.context) === JSON.stringify({ name: "Ada Lovelace", guests: 4, date: "2026-04-01", seating: ["terrace"], confirmed: true, source: "console-test" }), `context ${JSON.stringify(ua.context)}`);
        const ts = Date.parse(ua.timestamp);
        expect(/^\d{4}-\d{2}-\d{2}T/.test(ua.timestamp) && ts >= t0 - 5000 && ts <= Date.now() + 5000, `timestamp ${ua.timestamp}`);
        expect(input.forwardedProps.a2uiClientDataModel?.surfaces?.[sid]?.booking?.name === "Ada Lovelace", `sendDataModel: ${JSON.stringify(input.forwardedProps.a2uiClientDataModel)}`);
        expect(input.threadId === bodies[0].threadId && input.runId !== bodies[0].runId, "the action's run is not a new run of the same thread");
        expect(input.messages.some((m) => m.role === "user" && m.content === "book a table") && !input.messages.some((m) => m.role === "activity"), "the action's run does not carry the conversation (without activities)");
        const sent = await c.locator(T("a2ui-sent")).textContent();
        expect(/Sent “book_table”/.test(sent), `the surface says ${JSON.stringify(sent)}`);
        const reply = await page.$$eval(`${T("message-assistant")} ${T("message-text")}`, (m) => m.map((x) => x.textContent).pop());
        expect(reply === "Booked for 4, Ada Lovelace.", `the agent's answer ${JSON.stringify(reply)}`);
        await shot("a2ui-action");
        // Time travel shows the surface as the agent sent it (frozen); back to live, the user's input is still there.
        const snap = page.locator(`${T("timeline-event")}[data-type="ACTIVITY_SNAPSHOT"]`).last();
        await snap.click();
        await page.waitForSelector(`${T("time-travel")}:not([hidden])`);
        const frozen = await c.locator('[data-a2-id="name"] input').evaluate((i) => ({ value: i.value, disabled: i.disabled }));
        expect(frozen.value === "" && frozen.disabled, `in time travel the name field is ${JSON.stringify(frozen)}`);
        expect(await c.locator('[data-a2-id="book"] button').isDisabled(), "in time travel the Book button is enabled");
        await page.click(T("back-to-live"));
        const kept = await c.locator('[data-a2-id="name"] input').inputValue();
        expect(kept === "Ada Lovelace", `back to live the name is ${JSON.stringify(kept)}`);
      } finally {
        await page.unroute(agentUrl, handler);
      }
    });

    // ---- live, against agui serve's demo agent ------------------------------------------------------
    if (fake) log("skip A2UI live: the fake agent has no A2UI scenarios (agui serve's demo agent has)");
    else await check("A2UI live: the demo agent's surfaces (flight status, book a table, compare plans) render, and their buttons are answered", async () => {
      await fresh(page, base);
      const lastBody = () => [...posted].reverse().find((p) => p.url === new URL("/agent", base).href)?.body;
      let r = await t.send(page, "flight status");
      expect(r.status === "finished", `flight status: ${r.status} ${r.text}`);
      const flight = page.locator(`${T("a2ui-surface")}[data-surface-id="flight-status"]`);
      await flight.waitFor();
      expect((await flight.locator('[data-a2-id="title"]').textContent()) === "AF 1234" && (await flight.locator('[data-a2-id="status"]').textContent()) === "On time", `the flight card shows ${await flight.textContent()}`);
      expect((await page.locator(T("a2ui-note")).count()) === 0, `the demo's catalog is not known: ${await page.locator(T("a2ui-note")).first().textContent().catch(() => "")}`);
      // The render_a2ui call keeps its JSON folded under the surface it drew.
      const call = page.locator(`${T("tool-call")}.drawn`).first();
      expect((await call.count()) === 1 && !(await call.locator("details").getAttribute("open")), "the render_a2ui call is not folded beside its surface");
      r = await t.send(page, "book a table");
      expect(r.status === "finished", `book a table: ${r.status} ${r.text}`);
      const form = page.locator(`${T("a2ui-surface")}[data-surface-id="book-table"]`);
      const submit = form.locator('[data-a2-id="submit"] button');
      await form.locator('[data-a2-id="name"] input').fill("Ada");
      await form.locator('[data-a2-id="people"] input').evaluate((el) => {
        el.value = "4";
        el.dispatchEvent(new Event("input", { bubbles: true }));
      });
      const runs = async () => page.$eval(T("run-status"), (s) => Number(s.dataset.runs || 0));
      const clickAndWait = async (button) => {
        const n = await runs();
        await button.click();
        await page.waitForFunction(([sel, n]) => {
          const s = document.querySelector(sel);
          return Number(s.dataset.runs || 0) > n && s.dataset.busy === "false";
        }, [T("run-status"), n]);
      };
      await clickAndWait(submit);
      let ua = lastBody()?.forwardedProps?.a2uiAction?.userAction;
      expect(ua?.name === "book" && ua.surfaceId === "book-table" && ua.sourceComponentId === "submit" && JSON.stringify(ua.context) === JSON.stringify({ name: "Ada", people: 4, date: "2026-12-24" }), `the Book click sent ${JSON.stringify(ua)}`);
      const reply = async () => page.$$eval(`${T("message-assistant")} ${T("message-text")}`, (m) => m.map((x) => x.textContent).pop());
      expect((await reply()) === "Booked a table for 4 under the name Ada, 2026-12-24.", `the agent answered ${JSON.stringify(await reply())}`);
      r = await t.send(page, "compare plans");
      expect(r.status === "finished", `compare plans: ${r.status} ${r.text}`);
      const plans = page.locator(`${T("a2ui-surface")}[data-surface-id="compare-plans"]`);
      const names = await plans.locator('[data-a2-id="plan-name"]').allTextContents();
      expect(JSON.stringify(names) === '["Basic","Team","Enterprise"]', `plans ${JSON.stringify(names)}`);
      await clickAndWait(plans.locator('[data-a2-id="plan-pick"] button').nth(1));
      ua = lastBody()?.forwardedProps?.a2uiAction?.userAction;
      expect(ua?.name === "choose_plan" && JSON.stringify(ua.context) === '{"plan":"Team"}', `Choose (Team) sent ${JSON.stringify(ua)}`);
      expect((await reply()) === "You chose the Team plan.", `the agent answered ${JSON.stringify(await reply())}`);
      await plans.scrollIntoViewIfNeeded();
      await shot("a2ui-demo");
    });
  } finally {
    await page.unroute(remote, routeRemote).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}
