// The pure part of the console's A2UI renderer (a2ui.js), under Node: its rules are the Rust
// crate's (read from crates/aguikit-a2ui/src/rules.rs and this crate's RULES.md), its
// catalog is catalog.json's, every example of the v0.9 basic and minimal catalogs (read at
// run time from $AGUI_SHARED_DIR/a2ui) folds into a valid surface, a broken copy of each
// fails with the right rule, and bindings, functions, local edits and actions resolve.
//
//   AGUI_SHARED_DIR=../shared node --test crates/aguikit/console/test/

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import * as A from "../a2ui.js";

const here = dirname(fileURLToPath(import.meta.url));
const shared = process.env.AGUI_SHARED_DIR;
const spec = shared ? join(shared, "a2ui", "specification", "v0_9") : null;
const catalogDir = (name) => join(spec, "catalogs", name);
const examples = (name) => {
  const dir = join(catalogDir(name), "examples");
  return readdirSync(dir).filter((f) => f.endsWith(".json")).sort().map((f) => ({ file: f, ...JSON.parse(readFileSync(join(dir, f), "utf8")) }));
};
const rulesOf = (r) => r.violations.map((v) => v.rule);
const errorsOf = (r) => r.violations.filter((v) => v.severity === "error");

test("the A2UI material is there", () => {
  assert.ok(shared, "set AGUI_SHARED_DIR (the directory holding a2ui/specification)");
  assert.ok(existsSync(join(catalogDir("basic"), "catalog.json")), `no basic catalog under ${spec}`);
  assert.ok(examples("basic").length >= 30);
});

// ---- the rules are the Rust crate's ---------------------------------------------

// The string literals of rules.rs after each rule id: `error("A1", "title", "explanation", ...)`
// and `Rule { id: "A13", severity: Severity::Warning, title: "...", explanation: "...", ... }`.
function rustRules(src) {
  const body = src.slice(src.indexOf("pub const RULES"), src.indexOf("pub fn rule("));
  const lits = [...body.matchAll(/"((?:[^"\\]|\\.)*)"|Severity::(Warning|Error)|\berror\(/g)];
  const out = [];
  for (let i = 0; i < lits.length; i++) {
    const m = lits[i];
    if (m[1] === undefined || !/^A\d+$/.test(m[1])) continue;
    const strs = [];
    let severity = lits[i - 1]?.[0] === "error(" ? "error" : null;
    for (let k = i + 1; k < lits.length && strs.length < 2; k++) {
      if (lits[k][2]) severity = lits[k][2].toLowerCase();
      else if (lits[k][1] !== undefined) strs.push(lits[k][1].replace(/\\(.)/g, "$1"));
    }
    out.push({ id: m[1], severity, title: strs[0], explanation: strs[1] });
  }
  return out;
}

test("the rule list is the Rust crate's (ids, severities, titles, one-line explanations)", () => {
  const rs = join(here, "..", "..", "..", "aguikit-a2ui", "src", "rules.rs");
  assert.ok(existsSync(rs), `no ${rs}`);
  const rust = rustRules(readFileSync(rs, "utf8"));
  assert.equal(rust.length, 17, `read ${rust.length} rules from rules.rs`);
  assert.deepEqual(A.RULES, rust);
});

test("the rule list is the rules page's (RULES.md, generated from the Rust table)", () => {
  const md = readFileSync(join(here, "..", "..", "RULES.md"), "utf8");
  const rows = md.split("\n").filter((l) => /^\| <a id="A\d+"><\/a>`A\d+` \|/.test(l));
  assert.equal(rows.length, A.RULES.length);
  for (const row of rows) {
    const cells = row.split(" | ");
    const id = /`(A\d+)`/.exec(cells[0])[1];
    const r = A.ruleOf(id);
    assert.ok(r, id);
    assert.equal(cells[1], r.severity, id);
    assert.equal(cells[2], r.title, id);
    assert.equal(cells[3], r.explanation, id);
  }
});

// ---- the catalog is catalog.json's --------------------------------------------------

const KIND_OF_REF = { DynamicString: "str", DynamicNumber: "num", DynamicBoolean: "bool", DynamicStringList: "strs", DynamicValue: "any", ComponentId: "id", ChildList: "kids", Action: "action", AccessibilityAttributes: "a11y" };

// {required, props: {name: kind}} of a component schema in catalog.json.
function schemaOf(catalog, name, common) {
  const props = {};
  const required = [];
  const kindOf = (ps, prop) => {
    if (Array.isArray(ps.enum)) return ps.enum;
    const ref = ps.$ref ?? ps.allOf?.find((x) => x.$ref)?.$ref;
    if (ref) return KIND_OF_REF[ref.split("/").pop()] ?? ref;
    if (ps.oneOf && prop === "name") return "icon";
    if (ps.type === "array") return prop === "tabs" ? "tabs" : prop === "options" ? "options" : "array";
    return ps.type;
  };
  for (const part of catalog.components[name].allOf) {
    if (part.$ref?.endsWith("/ComponentCommon")) Object.assign(common, { id: "string", accessibility: "a11y" });
    else if (part.$ref === "#/$defs/CatalogComponentCommon") common.weight = "number";
    else if (part.$ref?.endsWith("/Checkable")) props.checks = "checks";
    else if (part.properties) {
      for (const [k, ps] of Object.entries(part.properties)) if (k !== "component") props[k] = kindOf(ps, k);
      required.push(...(part.required ?? []).filter((r) => r !== "component"));
    }
  }
  return { required, props };
}

for (const [name, id] of [["basic", A.BASIC_CATALOG_ID], ["minimal", A.MINIMAL_CATALOG_ID]]) {
  test(`the console's ${name} catalog is catalog.json's (components, properties, kinds, words, required, functions)`, () => {
    const cat = JSON.parse(readFileSync(join(catalogDir(name), "catalog.json"), "utf8"));
    assert.equal(cat.catalogId, id);
    const mine = A.CATALOGS[id];
    assert.deepEqual(Object.keys(mine.components).sort(), Object.keys(cat.components).sort());
    assert.deepEqual(Object.keys(mine.functions).sort(), Object.keys(cat.functions ?? {}).sort());
    for (const [fname, f] of Object.entries(cat.functions ?? {})) assert.equal(mine.functions[fname], f.properties?.returnType?.const, fname);
    const common = {};
    for (const comp of Object.keys(cat.components)) {
      const want = schemaOf(cat, comp, common);
      const got = mine.components[comp];
      assert.deepEqual([...got.required].sort(), [...want.required].sort(), `${comp} required`);
      assert.deepEqual(got.props, want.props, `${comp} properties`);
    }
    assert.deepEqual({ ...common, component: "string" }, A.COMMON_PROPS);
    if (name === "basic") {
      const icon = cat.components.Icon.allOf.find((p) => p.properties?.name).properties.name.oneOf[0].enum;
      assert.deepEqual(A.ICON_NAMES, icon);
    }
  });
}

// ---- the examples validate; broken copies fail with the right rule -------------------------

const ops = (ex) => JSON.parse(JSON.stringify(ex.messages));
const componentsOf = (messages) => messages.filter((m) => m.updateComponents).flatMap((m) => m.updateComponents.components);

for (const name of ["basic", "minimal"]) {
  test(`every ${name}-catalog example folds into a valid surface with a root`, () => {
    for (const ex of examples(name)) {
      const r = A.readActivity({ a2ui_operations: ops(ex) });
      assert.deepEqual(r.violations, [], ex.file);
      assert.equal(r.surfaces.length, 1, ex.file);
      const s = r.surfaces[0];
      assert.ok(s.created && s.components.has("root"), ex.file);
      assert.equal(s.problems.size, 0, ex.file);
    }
  });
}

test("a mutated copy of every basic example fails with the right rule", () => {
  for (const ex of examples("basic")) {
    const check = (mutate, rule, what) => {
      const m = ops(ex);
      mutate(m);
      const r = A.readActivity({ a2ui_operations: m });
      assert.ok(rulesOf(r).includes(rule), `${ex.file}, ${what}: ${JSON.stringify(rulesOf(r))}`);
    };
    // A dangling child reference (A7): the first container's first child points nowhere.
    check((m) => {
      const c = componentsOf(m).find((c) => typeof c.child === "string" || Array.isArray(c.children));
      if (typeof c.child === "string") c.child = "ghost";
      else c.children[0] = "ghost";
    }, "A7", "dangling reference");
    // An unknown component (A2).
    check((m) => (componentsOf(m).find((c) => c.id !== "root").component = "Carousel"), "A2", "unknown component");
    // A missing required property (A3): a Text without text, else any component's first required one.
    check((m) => {
      const c = componentsOf(m).find((c) => c.component === "Text") ?? componentsOf(m)[0];
      const req = A.BASIC_COMPONENTS[c.component].required[0];
      delete c[req];
    }, "A3", "missing required property");
    // No root (A6).
    check((m) => {
      for (const c of componentsOf(m)) if (c.id === "root") c.id = "top";
    }, "A6", "no root");
  }
});

test("each rule is found where it applies", () => {
  const sid = "s";
  const create = { version: "v0.9", createSurface: { surfaceId: sid, catalogId: A.BASIC_CATALOG_ID } };
  const update = (components) => ({ version: "v0.9", updateComponents: { surfaceId: sid, components } });
  const text = (id, t = "hi") => ({ id, component: "Text", text: t });
  const run = (messages) => A.readActivity({ a2ui_operations: messages });
  const only = (messages) => [...new Set(rulesOf(run(messages)))];
  assert.deepEqual(only([{ version: "v0.8", createSurface: create.createSurface }]), ["A1"]);
  assert.deepEqual(only([{ version: "v0.9", createSurface: create.createSurface, deleteSurface: { surfaceId: sid } }]), ["A1"]);
  assert.deepEqual(only([{ version: "v0.9", createSurface: { surfaceId: sid } }]), ["A1"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Marquee" }])]), ["A2"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Image" }])]), ["A3"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Text", text: "x", variant: "huge" }])]), ["A4"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Text", text: 7 }])]), ["A4"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Text", text: "x", colour: "red" }])]), ["A5"]);
  assert.deepEqual(only([create, update([text("main")])]), ["A6"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Column", children: ["a", "nope"] }, text("a")])]), ["A7"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Card", child: "root" }])]), ["A8"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Card", child: "a" }, { id: "a", component: "Card", child: "b" }, { id: "b", component: "Card", child: "a" }])]), ["A9"]);
  assert.deepEqual(only([create, update([text("root"), text("lost")])]), ["A10"]);
  assert.deepEqual(only([create, update([text("root"), text("root")])]), ["A11"]);
  assert.deepEqual(only([create, update([{ id: "root", component: "Text", text: { path: "/a~2b" } }])]), ["A12"]);
  const r13 = run([create, update([{ id: "root", component: "Text", text: { path: "/missing" } }]), { version: "v0.9", updateDataModel: { surfaceId: sid, value: { name: "x" } } }]);
  assert.deepEqual(rulesOf(r13), ["A13"]);
  assert.equal(r13.violations[0].severity, "warning");
  let chain = [{ id: "root", component: "Column", children: ["c1"] }];
  for (let i = 1; i < 60; i++) chain.push({ id: `c${i}`, component: "Column", children: i === 59 ? [] : [`c${i + 1}`] });
  assert.deepEqual(only([create, update(chain)]), ["A14"]);
  let call = { call: "formatString", args: { value: "x" } };
  for (let i = 0; i < 6; i++) call = { call: "formatString", args: { value: call } };
  assert.ok(only([create, update([{ id: "root", component: "Text", text: call }])]).includes("A15"));
  assert.deepEqual(only([create, create]), ["A16"]);
  assert.deepEqual(rulesOf(A.readActivity({ nothing: true })), ["A17"]);
  assert.deepEqual(rulesOf(A.readActivity({ a2ui_operations: "createSurface" })), ["A17"]);
  // An incremental batch (updates for a surface created earlier) is not a lifecycle error.
  assert.deepEqual(only([{ version: "v0.9", updateDataModel: { surfaceId: sid, value: { a: 1 } } }]), []);
  // What broke stays with the component, for its placeholder.
  const r = run([create, update([{ id: "root", component: "Column", children: ["bad"] }, { id: "bad", component: "Marquee" }])]);
  assert.equal(r.surfaces[0].problems.get("bad")[0].rule, "A2");
  assert.equal(r.violations[0].componentId, "bad");
});

test("lifecycle statuses are read (building, retrying, failed)", () => {
  assert.deepEqual(A.readStatus({ status: "building", progressTokens: 42 }), { kind: "building", progressTokens: 42 });
  assert.deepEqual(A.readStatus({ status: "retrying", attempt: 2, maxAttempts: 3, errors: ["A7: dangling"] }), { kind: "retrying", attempt: 2, maxAttempts: 3, errors: ["A7: dangling"] });
  assert.deepEqual(A.readStatus({ status: "failed", error: "gave up", attempts: 3 }), { kind: "failed", error: "gave up", attempts: 3 });
  const r = A.readActivity({ status: "building" });
  assert.deepEqual(r.violations, []);
  assert.equal(r.surfaces.length, 0);
});

// ---- pointers, bindings, functions --------------------------------------------------------

test("JSON Pointers: escapes, the root, auto-created parents, removal, relative paths", () => {
  assert.deepEqual(A.parsePointer("/a~1b/c~0d/0"), ["a/b", "c~d", "0"]);
  assert.deepEqual(A.parsePointer("/"), []);
  assert.throws(() => A.parsePointer("/a~2"));
  assert.equal(A.pointerOf(["a/b", "c~d"]), "/a~1b/c~0d");
  let d = {};
  d = A.setAt(d, ["a", "b", "0", "c"], 1);
  assert.deepEqual(d, { a: { b: [{ c: 1 }] } });
  d = A.setAt(d, ["a", "b"], undefined);
  assert.deepEqual(d, { a: {} });
  assert.throws(() => A.setAt({ x: 1 }, ["x", "y"], 2));
  assert.throws(() => A.setAt({}, ["__proto__", "polluted"], 1));
  assert.equal({}.polluted, undefined);
  assert.deepEqual(A.resolvePath("name", ["items", "2"]), ["items", "2", "name"]);
  assert.deepEqual(A.resolvePath("/abs", ["items", "2"]), ["abs"]);
  assert.equal(A.getAt({ items: [{ name: "x" }] }, ["items", "0", "name"]), "x");
  assert.equal(A.getAt({ items: [] }, ["items", "01"]), undefined);
});

test("bindings and functions resolve (formatString, dates, numbers, currency, plurals, checks)", () => {
  const data = { reviewCount: 1234, user: { name: "Ada" }, items: [{ name: "Apple", qty: 2 }], when: "2025-12-15T14:30:00", day: "2025-12-15", ok: true, email: "a@b.io" };
  assert.equal(A.evaluate({ path: "/user/name" }, data), "Ada");
  assert.equal(A.evaluate({ path: "name" }, data, ["items", "0"]), "Apple");
  const fs = (value, scope) => A.evaluate({ call: "formatString", args: { value } }, data, scope);
  assert.equal(fs("Hi ${/user/name}!"), "Hi Ada!");
  assert.equal(fs("${qty} × ${name}", ["items", "0"]), "2 × Apple");
  assert.equal(fs("(${formatNumber(value: ${/reviewCount})} ${pluralize(value: ${/reviewCount}, one: 'review', other: 'reviews')})"), `(${(1234).toLocaleString()} reviews)`);
  assert.equal(fs("${pluralize(value: 1, one: 'review', other: 'reviews')}"), "review");
  assert.equal(fs("literal \\${/user/name}"), "literal ${/user/name}");
  assert.equal(fs("${formatDate(value: ${/when}, format: 'h:mm a')}"), "2:30 PM");
  assert.equal(fs("${formatDate(value: ${/day}, format: 'yyyy-MM-dd')}"), "2025-12-15");
  assert.equal(A.formatDate("2025-12-15T14:30:00", "EEEE, d MMMM HH:mm"), `${new Date(2025, 11, 15).toLocaleDateString(undefined, { weekday: "long" })}, 15 ${new Date(2025, 11, 15).toLocaleDateString(undefined, { month: "long" })} 14:30`);
  assert.equal(A.evaluate({ call: "formatCurrency", args: { value: 11.66, currency: "USD" } }, data), new Intl.NumberFormat(undefined, { style: "currency", currency: "USD" }).format(11.66));
  assert.equal(A.evaluate({ call: "formatNumber", args: { value: 1234.5, decimals: 2, grouping: false } }, data), new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2, useGrouping: false }).format(1234.5));
  const t = (call, args) => A.evaluate({ call, args }, data);
  assert.equal(t("required", { value: "" }), false);
  assert.equal(t("required", { value: { path: "/user/name" } }), true);
  assert.equal(t("email", { value: { path: "/email" } }), true);
  assert.equal(t("email", { value: "nope" }), false);
  assert.equal(t("regex", { value: "12345", pattern: "^[0-9]{5}$" }), true);
  assert.equal(t("regex", { value: "1234", pattern: "^[0-9]{5}$" }), false);
  assert.equal(t("length", { value: "abc", min: 4 }), false);
  assert.equal(t("numeric", { value: "7", min: 1, max: 10 }), true);
  assert.equal(t("and", { values: [{ path: "/ok" }, { call: "not", args: { value: false } }] }), true);
  assert.equal(t("or", { values: [false, { call: "required", args: { value: "" } }] }), false);
  assert.equal(A.failingCheck([{ condition: { call: "required", args: { value: { path: "/missing" } } }, message: "Required" }], data), "Required");
  assert.equal(A.failingCheck([{ condition: true, message: "never" }], data), null);
  // A pattern that could backtrack for ever is not run.
  assert.equal(A.safeRegExp("^(a+)+$"), null);
  assert.ok(A.safeRegExp("^\\+?[0-9]{10,15}$"));
});

test("the local edits stay where they were made when the agent adds operations, and go when it starts over", () => {
  const create = { version: "v0.9", createSurface: { surfaceId: "s", catalogId: A.BASIC_CATALOG_ID } };
  const comps = { version: "v0.9", updateComponents: { surfaceId: "s", components: [{ id: "root", component: "TextField", label: "Name", value: { path: "/name" } }] } };
  const data = (v) => ({ version: "v0.9", updateDataModel: { surfaceId: "s", path: "/name", value: v } });
  const edits = new A.LocalEdits();
  let list = [create, comps, data("agent")];
  A.readActivity({ a2ui_operations: list }, { edits: edits.sync(list) });
  edits.record("s", "/name", "typed");
  assert.equal(A.readActivity({ a2ui_operations: list }, { edits: edits.sync(list) }).surfaces[0].data.name, "typed");
  // The agent adds an unrelated operation: the edit is kept.
  list = [...list, { version: "v0.9", updateDataModel: { surfaceId: "s", path: "/other", value: 1 } }];
  assert.deepEqual(A.readActivity({ a2ui_operations: list }, { edits: edits.sync(list) }).surfaces[0].data, { name: "typed", other: 1 });
  // The agent sets the field after the edit: its value wins.
  list = [...list, data("agent again")];
  assert.equal(A.readActivity({ a2ui_operations: list }, { edits: edits.sync(list) }).surfaces[0].data.name, "agent again");
  // Another list altogether: the edits are dropped.
  list = [create, comps, data("fresh")];
  assert.equal(edits.sync(list).length, 0);
});

test("an action's userAction carries its name, surface, component, time and resolved context", () => {
  const ex = examples("basic").find((e) => e.file.startsWith("32_"));
  const r = A.readActivity({ a2ui_operations: ops(ex) });
  const s = r.surfaces[0];
  const btn = s.components.get("submit-btn");
  const data = A.setAt(structuredClone(s.data), ["formData", "email"], "ada@example.com");
  const ua = A.userAction(btn, s.id, data, [], new Date(Date.UTC(2026, 0, 2, 3, 4, 5)));
  assert.deepEqual(ua, { name: "register", surfaceId: "gallery-advanced-validator", sourceComponentId: "submit-btn", timestamp: "2026-01-02T03:04:05.000Z", context: { data: { email: "ada@example.com", phone: "", zip: "", agree: false } } });
  // In a template, relative paths resolve against the item.
  const item = { id: "buy", component: "Button", child: "t", action: { event: { name: "buy", context: { sku: { path: "sku" }, fixed: "x", missing: { path: "/nope" } } } } };
  assert.deepEqual(A.userAction(item, "s", { items: [{ sku: "a" }, { sku: "b" }] }, ["items", "1"]).context, { sku: "b", fixed: "x", missing: null });
});

test("untrusted content: URLs by scheme, Markdown as a tree of text, SVG paths as path data", () => {
  assert.equal(A.safeUrl("https://example.com/a.png", "image"), "https://example.com/a.png");
  assert.equal(A.safeUrl("data:image/png;base64,AAAA", "image"), "data:image/png;base64,AAAA");
  assert.equal(A.safeUrl("data:image/png;base64,AAAA", "media"), null);
  assert.equal(A.safeUrl("javascript:alert(1)", "link"), null);
  assert.equal(A.safeUrl("data:text/html,<script>alert(1)</script>", "image"), null);
  assert.equal(A.safeUrl("file:///etc/passwd", "image"), null);
  assert.equal(A.safeUrl("/relative.png", "image"), null);
  const md = A.markdown("# Title\n\nSome **bold** and *it* <script>x</script>\n\n- one\n- [two](javascript:alert(1))");
  assert.equal(md[0].type, "h");
  assert.equal(A.inlineText(md[0].inline), "Title");
  assert.deepEqual(md[1].inline.map((x) => x.t), ["text", "b", "text", "i", "text"]);
  assert.equal(md[1].inline[4].v, " <script>x</script>");
  assert.equal(md[2].type, "ul");
  assert.equal(md[2].items[1][0].t, "link");
  assert.equal(md[2].items[1][0].href, null);
  assert.equal(A.hasMarkdown("Just text, 3 * 4 = 12"), false);
  assert.deepEqual(A.markdown("a snake_case_name and x__y__z stay, _this_ leans").map((b) => b.inline.map((x) => x.t)), [["text", "i", "text"]]);
  assert.ok(A.safeSvgPath("M12 2L2 22h20z"));
  assert.equal(A.safeSvgPath("M0 0\"/><script>"), false);
});
