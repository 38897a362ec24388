// A2UI v0.9 surfaces carried by AG-UI `a2ui-surface` activities: the pure part of the
// console's renderer (no DOM, importable under Node; a2ui-view.js draws). It reads an
// activity's content (its lifecycle status and its `a2ui_operations`), folds the operations
// into surfaces (components and data model) with the user's local edits interleaved where
// they were made, checks them with the rules of the Rust crate aguikit-a2ui (A1-A17, same
// ids and one-line explanations), resolves data bindings and the basic catalog's
// functions, and builds the `userAction` a button sends back.
//
// Content is untrusted: nothing here produces markup; URLs are filtered by scheme.

import { isObject, hasOwn } from "./util.js";

/** Whether `v` is a plain JSON object (re-exported for the view). */
export const isObjectLike = isObject;

/** The AG-UI activity type of A2UI surfaces. */
export const ACTIVITY_TYPE = "a2ui-surface";
/** The content key of the operations list. */
export const OPERATIONS_KEY = "a2ui_operations";
/** The A2UI version these messages carry. */
export const VERSION = "v0.9";
/** The basic catalog's id. */
export const BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json";
/** The minimal catalog's id (a subset of the basic one, plus `capitalize`). */
export const MINIMAL_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/minimal/catalog.json";

/** Limits, as the Rust validator's defaults. */
export const LIMITS = { treeDepth: 50, dataDepth: 50, functionDepth: 5, components: 10000 };

// ---------------------------------------------------------------------------
// Rules (the same ids, titles and explanations as crates/aguikit-a2ui/src/rules.rs;
// test/a2ui.test.mjs reads that file and compares)
// ---------------------------------------------------------------------------

const rule = (id, severity, title, explanation) => ({ id, severity, title, explanation });

/** Every A2UI rule, in id order. */
export const RULES = [
  rule("A1", "error", "Malformed A2UI message", "The message does not match the v0.9 message schema: no or another `version`, not exactly one of createSurface/updateComponents/updateDataModel/deleteSurface, a required field missing or of the wrong type, an unknown field."),
  rule("A2", "error", "Unknown component", "A component's `component` names a type the surface's catalog does not define."),
  rule("A3", "error", "Missing required property", "A component (or an object inside it) lacks a property its catalog schema requires."),
  rule("A4", "error", "Mistyped property", "A property's value does not match its catalog schema (type, constant, enum, pattern, range, or none of the allowed shapes)."),
  rule("A5", "error", "Unknown property", "A component carries a property its catalog schema does not allow."),
  rule("A6", "error", "Missing root component", "A surface's component tree has no component with id `root`."),
  rule("A7", "error", "Dangling reference", "A component refers (child, children, template, trigger, content, tab) to a component id the surface does not have."),
  rule("A8", "error", "Self-reference", "A component lists itself as its own child."),
  rule("A9", "error", "Circular reference", "Following child references from a component leads back to it: the tree is not a tree."),
  rule("A10", "error", "Unreachable component", "A component of a complete surface cannot be reached from `root`: it is never rendered."),
  rule("A11", "error", "Duplicate component id", "One updateComponents message defines the same component id twice."),
  rule("A12", "error", "Invalid data path", "A data-binding, template or updateDataModel path is not a valid JSON Pointer (an escape other than ~0 or ~1)."),
  rule("A13", "warning", "Unresolved data binding", "An absolute data-binding path points at nothing in the surface's data model: the bound value shows empty."),
  rule("A14", "error", "Too deep", "The component tree or the data model nests deeper than the limit (50 levels)."),
  rule("A15", "error", "Function calls nested too deep", "Function calls nest deeper than the limit (5 levels)."),
  rule("A16", "error", "Surface lifecycle", "A message for a surface that was not created (or was deleted), or a createSurface for a surface that exists."),
  rule("A17", "error", "Unparsable A2UI content", "A2UI content is not JSON, exceeds a size or depth limit, or (on AG-UI) an a2ui-surface activity's content has no readable a2ui_operations list."),
];
const RULE_BY_ID = new Map(RULES.map((r) => [r.id, r]));
/** The rule with this id. */
export const ruleOf = (id) => RULE_BY_ID.get(id);

/** A violation: `{rule, severity, message, operation?, surfaceId?, componentId?, path}`. */
function violation(ruleId, message, { operation, surfaceId, componentId, path = "" } = {}) {
  const v = { rule: ruleId, severity: ruleOf(ruleId)?.severity ?? "error", message, path };
  if (operation !== undefined) v.operation = operation;
  if (surfaceId !== undefined) v.surfaceId = surfaceId;
  if (componentId !== undefined) v.componentId = componentId;
  return v;
}

// ---------------------------------------------------------------------------
// The basic catalog, compactly (test/a2ui.test.mjs compares it with catalog.json)
// ---------------------------------------------------------------------------
//
// Property kinds: "str" DynamicString, "num" DynamicNumber, "bool" DynamicBoolean, "strs"
// DynamicStringList, "id" ComponentId, "kids" ChildList, "action" Action, "checks" the
// Checkable list, "icon" an icon name (or {svgPath}, or a binding), "tabs" and "options"
// their item lists, "a11y" the accessibility attributes, "string"/"number"/"boolean" plain
// JSON values, and an array: the allowed words.

const TEXT_VARIANTS = ["h1", "h2", "h3", "h4", "h5", "caption", "body"];
/** The names the Icon component knows. */
export const ICON_NAMES = ["accountCircle", "add", "arrowBack", "arrowForward", "attachFile", "calendarToday", "call", "camera", "check", "close", "delete", "download", "edit", "event", "error", "fastForward", "favorite", "favoriteOff", "folder", "help", "home", "info", "locationOn", "lock", "lockOpen", "mail", "menu", "moreVert", "moreHoriz", "notificationsOff", "notifications", "pause", "payment", "person", "phone", "photo", "play", "print", "refresh", "rewind", "search", "send", "settings", "share", "shoppingCart", "skipNext", "skipPrevious", "star", "starHalf", "starOff", "stop", "upload", "visibility", "visibilityOff", "volumeDown", "volumeMute", "volumeOff", "volumeUp", "warning"];

/** Properties every component may have. */
export const COMMON_PROPS = { id: "string", component: "string", accessibility: "a11y", weight: "number" };

/** component -> {required: [...], props: {name: kind}} (the common properties apart). */
export const BASIC_COMPONENTS = {
  Text: { required: ["text"], props: { text: "str", variant: TEXT_VARIANTS } },
  Image: { required: ["url"], props: { url: "str", description: "str", fit: ["contain", "cover", "fill", "none", "scaleDown"], variant: ["icon", "avatar", "smallFeature", "mediumFeature", "largeFeature", "header"] } },
  Icon: { required: ["name"], props: { name: "icon" } },
  Video: { required: ["url"], props: { url: "str" } },
  AudioPlayer: { required: ["url"], props: { url: "str", description: "str" } },
  Row: { required: ["children"], props: { children: "kids", justify: ["center", "end", "spaceAround", "spaceBetween", "spaceEvenly", "start", "stretch"], align: ["start", "center", "end", "stretch"] } },
  Column: { required: ["children"], props: { children: "kids", justify: ["start", "center", "end", "spaceBetween", "spaceAround", "spaceEvenly", "stretch"], align: ["center", "end", "start", "stretch"] } },
  List: { required: ["children"], props: { children: "kids", direction: ["vertical", "horizontal"], align: ["start", "center", "end", "stretch"] } },
  Card: { required: ["child"], props: { child: "id" } },
  Tabs: { required: ["tabs"], props: { tabs: "tabs" } },
  Modal: { required: ["trigger", "content"], props: { trigger: "id", content: "id" } },
  Divider: { required: [], props: { axis: ["horizontal", "vertical"] } },
  Button: { required: ["child", "action"], props: { child: "id", variant: ["default", "primary", "borderless"], action: "action", checks: "checks" } },
  TextField: { required: ["label"], props: { label: "str", value: "str", variant: ["longText", "number", "shortText", "obscured"], validationRegexp: "string", checks: "checks" } },
  CheckBox: { required: ["label", "value"], props: { label: "str", value: "bool", checks: "checks" } },
  ChoicePicker: { required: ["options", "value"], props: { label: "str", variant: ["multipleSelection", "mutuallyExclusive"], options: "options", value: "strs", displayStyle: ["checkbox", "chips"], filterable: "boolean", checks: "checks" } },
  Slider: { required: ["value", "max"], props: { label: "str", min: "number", max: "number", value: "num", checks: "checks" } },
  DateTimeInput: { required: ["value"], props: { value: "str", enableDate: "boolean", enableTime: "boolean", min: "str", max: "str", label: "str", checks: "checks" } },
};

/** The basic catalog's functions: name -> its return type. */
export const BASIC_FUNCTIONS = {
  required: "boolean", regex: "boolean", length: "boolean", numeric: "boolean", email: "boolean",
  formatString: "string", formatNumber: "string", formatCurrency: "string", formatDate: "string",
  pluralize: "string", openUrl: "void", and: "boolean", or: "boolean", not: "boolean",
};

/** The catalogs the console knows: id -> {name, components, functions}. */
export const CATALOGS = {
  [BASIC_CATALOG_ID]: { name: "basic", components: BASIC_COMPONENTS, functions: BASIC_FUNCTIONS },
  [MINIMAL_CATALOG_ID]: {
    name: "minimal",
    components: {
      Text: { required: ["text"], props: { text: "str", variant: TEXT_VARIANTS } },
      Row: BASIC_COMPONENTS.Row,
      Column: BASIC_COMPONENTS.Column,
      Button: { required: ["child", "action"], props: { child: "id", variant: ["primary", "borderless"], action: "action", checks: "checks" } },
      TextField: { required: ["label"], props: { label: "str", value: "str", variant: ["longText", "number", "shortText", "obscured"], validationRegexp: "string", checks: "checks" } },
    },
    functions: { capitalize: "string" },
  },
};

/** Other ids of the basic catalog: the one the official AG-UI A2UI middleware names by default. */
export const BASIC_CATALOG_ALIASES = ["https://a2ui.org/specification/v0_9/basic_catalog.json"];

/** The catalog a surface uses: `{catalog, known}` (an unknown id is drawn with the basic one). */
export function catalogFor(id) {
  const c = CATALOGS[BASIC_CATALOG_ALIASES.includes(id) ? BASIC_CATALOG_ID : id];
  return c ? { catalog: c, known: true } : { catalog: CATALOGS[BASIC_CATALOG_ID], known: false };
}

// ---------------------------------------------------------------------------
// JSON Pointers (RFC 6901; "/" is the root, as A2UI's updateDataModel means it)
// ---------------------------------------------------------------------------

/** The tokens of a pointer (a leading "/" optional); throws on an escape other than ~0/~1. */
export function parsePointer(path) {
  const s = String(path);
  const body = s.startsWith("/") ? s.slice(1) : s;
  if (body === "") return [];
  return body.split("/").map((raw) => {
    if (/~(?![01])/.test(raw)) throw new Error(`Invalid path syntax: ${JSON.stringify(s)} ('~' must be followed by 0 or 1)`);
    return raw.replace(/~1/g, "/").replace(/~0/g, "~");
  });
}
/** Whether `path` is a valid pointer. */
export function validPointer(path) {
  try {
    parsePointer(path);
    return true;
  } catch {
    return false;
  }
}
/** A pointer from tokens. */
export const pointerOf = (tokens) => (tokens.length ? "/" + tokens.map((t) => String(t).replace(/~/g, "~0").replace(/\//g, "~1")).join("/") : "/");

const arrayIndex = (t) => (/^(0|[1-9][0-9]*)$/.test(t) ? Number(t) : -1);

/** The value at `tokens` in `root`, or undefined. */
export function getAt(root, tokens) {
  let cur = root;
  for (const t of tokens) {
    if (Array.isArray(cur)) {
      const i = arrayIndex(t);
      if (i < 0 || i >= cur.length) return undefined;
      cur = cur[i];
    } else if (isObject(cur)) {
      if (!hasOwn(cur, t)) return undefined;
      cur = cur[t];
    } else return undefined;
  }
  return cur;
}

/**
 * `root` with `value` set at `tokens` (in place where it can; returns the new root).
 * Missing parents are created (an array when the next token is a number); `undefined`
 * removes an object key. Throws when a parent is a scalar.
 */
export function setAt(root, tokens, value) {
  if (tokens.length === 0) return value === undefined ? {} : value;
  if (!isObject(root) && !Array.isArray(root)) root = {};
  let cur = root;
  for (let k = 0; k < tokens.length - 1; k++) {
    const t = tokens[k];
    const nextIsIndex = arrayIndex(tokens[k + 1]) >= 0;
    if (Array.isArray(cur)) {
      const i = t === "-" ? cur.length : arrayIndex(t);
      if (i < 0) throw new Error(`${JSON.stringify(t)} is not an array index`);
      if (!isObject(cur[i]) && !Array.isArray(cur[i])) cur[i] = nextIsIndex ? [] : {};
      cur = cur[i];
    } else {
      if (t === "__proto__") throw new Error("the key __proto__ is not allowed");
      if (!isObject(cur[t]) && !Array.isArray(cur[t])) {
        if (hasOwn(cur, t) && cur[t] !== null && cur[t] !== undefined) throw new Error(`cannot descend into the scalar at ${JSON.stringify(t)}`);
        cur[t] = nextIsIndex ? [] : {};
      }
      cur = cur[t];
    }
  }
  const last = tokens[tokens.length - 1];
  if (Array.isArray(cur)) {
    const i = last === "-" ? cur.length : arrayIndex(last);
    if (i < 0) throw new Error(`${JSON.stringify(last)} is not an array index`);
    cur[i] = value === undefined ? null : value;
  } else if (value === undefined) delete cur[last];
  else {
    if (last === "__proto__") throw new Error("the key __proto__ is not allowed");
    cur[last] = value;
  }
  return root;
}

/**
 * The absolute tokens of a binding path in a scope: "/a/b" is absolute, "name" is relative
 * to `scope` (the tokens of the template item being drawn, [] at the top).
 */
export function resolvePath(path, scope = []) {
  const p = String(path);
  if (p.startsWith("/")) return parsePointer(p);
  if (p === "" || p === ".") return [...scope];
  return [...scope, ...parsePointer(p)];
}

// ---------------------------------------------------------------------------
// Reading an activity: lifecycle status, operations -> surfaces, violations
// ---------------------------------------------------------------------------

const OPS = ["createSurface", "updateComponents", "updateDataModel", "deleteSurface"];
const OP_FIELDS = {
  createSurface: { surfaceId: "string", catalogId: "string", theme: "object", sendDataModel: "boolean" },
  updateComponents: { surfaceId: "string", components: "array" },
  updateDataModel: { surfaceId: "string", path: "string", value: "any" },
  deleteSurface: { surfaceId: "string" },
};
const OP_REQUIRED = { createSurface: ["surfaceId", "catalogId"], updateComponents: ["surfaceId", "components"], updateDataModel: ["surfaceId"], deleteSurface: ["surfaceId"] };

const typeName = (v) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const fitsType = (v, t) => t === "any" || (t === "object" ? isObject(v) : t === "array" ? Array.isArray(v) : typeof v === t);

/** Depth of a JSON value (a scalar is 0), stopping at `cap`. */
function depthOf(v, cap) {
  let max = 0;
  const stack = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop();
    if (d > max) max = d;
    if (max >= cap) return max;
    if (Array.isArray(x)) for (const c of x) stack.push([c, d + 1]);
    else if (isObject(x)) for (const c of Object.values(x)) stack.push([c, d + 1]);
  }
  return max;
}

/** The lifecycle status of an activity's content, or null. */
export function readStatus(content) {
  if (!isObject(content) || typeof content.status !== "string") return null;
  const num = (k) => (typeof content[k] === "number" && Number.isFinite(content[k]) ? content[k] : undefined);
  switch (content.status) {
    case "building":
      return { kind: "building", progressTokens: num("progressTokens") };
    case "retrying":
      return { kind: "retrying", attempt: num("attempt"), maxAttempts: num("maxAttempts"), errors: Array.isArray(content.errors) ? content.errors : content.errors === undefined ? [] : [content.errors] };
    case "failed":
      return { kind: "failed", error: content.error === undefined ? undefined : typeof content.error === "string" ? content.error : JSON.stringify(content.error), attempts: num("attempts") };
    default:
      return { kind: "other", word: content.status };
  }
}

/** A fresh surface. */
function newSurface(id) {
  return { id, catalogId: "", theme: undefined, sendDataModel: undefined, created: false, components: new Map(), data: {}, everReached: new Set(), problems: new Map() };
}

/**
 * Reads one `a2ui-surface` activity's content: `{status, operations, surfaces, deleted,
 * violations}`. `edits`: the user's local edits, `[{at, surfaceId, path, value}]`, each
 * applied right before operation `at` (at = operations.length: after all of them).
 * `surfaces` is in creation order; a surface's `problems` maps a component id to the
 * violations of that component's own definition (A2-A5, A11, A12, A15).
 */
export function readActivity(content, { edits = [] } = {}) {
  const out = { status: readStatus(content), operations: [], surfaces: [], deleted: [], violations: [] };
  if (!isObject(content)) {
    out.violations.push(violation("A17", `the activity's content is ${typeName(content)}, not an object`));
    return out;
  }
  const ops = content[OPERATIONS_KEY];
  if (ops === undefined) {
    if (!out.status) out.violations.push(violation("A17", `the content has neither ${OPERATIONS_KEY} nor a status`));
    return out;
  }
  if (!Array.isArray(ops)) {
    out.violations.push(violation("A17", `content.${OPERATIONS_KEY} is not a list but ${typeName(ops)}`, { path: `/${OPERATIONS_KEY}` }));
    return out;
  }
  out.operations = ops;
  const surfaces = new Map();
  const push = (v) => out.violations.push(v);
  const applyEdits = (at) => {
    for (const e of edits) {
      if (e.at !== at && !(at === ops.length && e.at > ops.length)) continue;
      const s = surfaces.get(e.surfaceId);
      if (!s) continue;
      try {
        s.data = setAt(s.data, parsePointer(e.path), e.value);
      } catch {}
    }
  };
  ops.forEach((raw, i) => {
    applyEdits(i);
    const msg = checkMessage(raw, i, push);
    if (!msg) return;
    const { op, body } = msg;
    const sid = body.surfaceId;
    const at = { operation: i, surfaceId: sid };
    let s = surfaces.get(sid);
    switch (op) {
      case "createSurface":
        if (s && s.created) {
          push(violation("A16", `createSurface for surface '${sid}', which exists (delete it first)`, { ...at, path: "/createSurface/surfaceId" }));
          return;
        }
        if (!s) {
          s = newSurface(sid);
          surfaces.set(sid, s);
        }
        s.catalogId = body.catalogId;
        s.theme = isObject(body.theme) ? body.theme : undefined;
        s.sendDataModel = body.sendDataModel;
        s.created = true;
        out.deleted = out.deleted.filter((d) => d !== sid);
        return;
      case "deleteSurface":
        // As the Rust checker reads a batch: deleting an unknown surface is no error.
        if (s) surfaces.delete(sid);
        out.deleted.push(sid);
        return;
      case "updateComponents":
      case "updateDataModel": {
        // An update for a surface this batch did not create continues one made earlier (an
        // incremental batch, as the Rust checker reads it): the surface is incomplete.
        if (!s) {
          s = newSurface(sid);
          surfaces.set(sid, s);
        }
        if (op === "updateDataModel") {
          const path = body.path ?? "/";
          let tokens;
          try {
            tokens = parsePointer(path);
          } catch (e) {
            push(violation("A12", e.message, { ...at, path: "/updateDataModel/path" }));
            return;
          }
          if (hasOwn(body, "value") && depthOf(body.value, LIMITS.dataDepth + 1) > LIMITS.dataDepth) {
            push(violation("A14", `Global recursion limit exceeded: logical depth of the data model exceeds ${LIMITS.dataDepth}`, { ...at, path: "/updateDataModel/value" }));
            return;
          }
          try {
            s.data = setAt(s.data, tokens, hasOwn(body, "value") ? structuredCopy(body.value) : undefined);
            if (!isObject(s.data) && !Array.isArray(s.data)) s.data = {};
          } catch (e) {
            push(violation("A12", `cannot set ${JSON.stringify(path)} in the data model: ${e.message}`, { ...at, path: "/updateDataModel/path" }));
          }
          return;
        }
        const { catalog } = catalogFor(s.catalogId);
        const seen = new Set();
        body.components.forEach((c, k) => {
          const where = { ...at, componentId: c.id };
          if (seen.has(c.id)) push(violation("A11", `Duplicate component ID: ${c.id}`, { ...where, path: "/id" }));
          seen.add(c.id);
          if (!s.components.has(c.id) && s.components.size >= LIMITS.components) {
            push(violation("A17", `the surface has more than ${LIMITS.components} components`, where));
            return;
          }
          const problems = checkComponent(c, catalog).map((p) => ({ ...p, ...where }));
          for (const p of problems) push(p);
          s.components.set(c.id, c);
          if (problems.length) s.problems.set(c.id, problems);
          else s.problems.delete(c.id);
        });
        for (const id of reachable(s, catalog).ids) s.everReached.add(id);
        return;
      }
    }
  });
  applyEdits(ops.length);
  for (const s of surfaces.values()) {
    for (const v of checkSurface(s)) push(v);
    out.surfaces.push(s);
  }
  return out;
}

const structuredCopy = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** Checks one message against the v0.9 envelope; returns {op, body} or null (after reporting A1). */
function checkMessage(raw, i, push) {
  const bad = (m, path = "") => {
    push(violation("A1", m, { operation: i, path }));
    return null;
  };
  if (!isObject(raw)) return bad(`operation ${i} is ${typeName(raw)}, not an object`);
  if (raw.version !== VERSION) return bad(raw.version === undefined ? "the message has no `version`" : `the message's version is ${JSON.stringify(raw.version)}, not "${VERSION}"`, "/version");
  const keys = Object.keys(raw).filter((k) => k !== "version");
  const ops = keys.filter((k) => OPS.includes(k));
  if (ops.length !== 1) return bad(ops.length ? `the message has ${ops.length} operations (${ops.join(", ")}), not one` : `the message has none of ${OPS.join("/")}`);
  const other = keys.filter((k) => !OPS.includes(k));
  if (other.length) return bad(`unknown field '${other[0]}'`, `/${other[0]}`);
  const op = ops[0];
  const body = raw[op];
  if (!isObject(body)) return bad(`${op} is ${typeName(body)}, not an object`, `/${op}`);
  for (const f of OP_REQUIRED[op]) if (!hasOwn(body, f)) return bad(`${op} has no '${f}'`, `/${op}`);
  for (const [k, v] of Object.entries(body)) {
    const t = OP_FIELDS[op][k];
    if (!t) return bad(`${op} has an unknown field '${k}'`, `/${op}/${k}`);
    if (!fitsType(v, t)) return bad(`${op}.${k} is ${typeName(v)}, not ${t === "object" ? "an object" : t === "array" ? "a list" : "a " + t}`, `/${op}/${k}`);
  }
  if (op === "updateComponents") {
    for (let k = 0; k < body.components.length; k++) {
      const c = body.components[k];
      if (!isObject(c)) return bad(`component ${k} is ${typeName(c)}, not an object`, `/updateComponents/components/${k}`);
      if (typeof c.id !== "string") return bad(`component ${k} has no string 'id'`, `/updateComponents/components/${k}/id`);
      if (typeof c.component !== "string") return bad(`component '${c.id}' has no string 'component'`, `/updateComponents/components/${k}/component`);
    }
  }
  return { op, body };
}

// ---- component schema checks (A2-A5, A12, A14, A15) -----------------------

const isBinding = (v) => isObject(v) && typeof v.path === "string" && Object.keys(v).length === 1;
const isCall = (v) => isObject(v) && typeof v.call === "string";

/** What is wrong with a property value of this kind, or null. */
function kindProblem(v, kind, catalog) {
  const call = () => {
    const extra = Object.keys(v).filter((k) => !["call", "args", "returnType"].includes(k));
    if (extra.length) return `has an unknown field '${extra[0]}'`;
    if (!hasOwn(catalog.functions, v.call)) return `calls '${v.call}', which the catalog does not define`;
    if (v.args !== undefined && !isObject(v.args)) return "has args that are not an object";
    return null;
  };
  const dyn = (ok, what) => {
    if (ok(v)) return null;
    if (isBinding(v)) return null;
    if (isCall(v)) return call();
    return `is ${typeName(v)}, not ${what}, a {path} binding or a function call`;
  };
  if (Array.isArray(kind)) return typeof v === "string" && kind.includes(v) ? null : `is ${JSON.stringify(v)}, not one of ${kind.join(", ")}`;
  switch (kind) {
    case "str": return dyn((x) => typeof x === "string", "a string");
    case "num": return dyn((x) => typeof x === "number", "a number");
    case "bool": return dyn((x) => typeof x === "boolean", "a boolean");
    case "strs": return dyn((x) => Array.isArray(x) && x.every((s) => typeof s === "string"), "a list of strings");
    case "any": return dyn((x) => ["string", "number", "boolean"].includes(typeof x) || Array.isArray(x), "a value");
    case "id": case "string": return typeof v === "string" ? null : `is ${typeName(v)}, not a string`;
    case "number": return typeof v === "number" && Number.isFinite(v) ? null : `is ${typeName(v)}, not a number`;
    case "boolean": return typeof v === "boolean" ? null : `is ${typeName(v)}, not a boolean`;
    case "kids":
      if (Array.isArray(v)) return v.every((x) => typeof x === "string") ? null : "lists something other than component ids";
      if (isObject(v) && typeof v.componentId === "string" && typeof v.path === "string" && Object.keys(v).length === 2) return null;
      return "is neither a list of component ids nor a {componentId, path} template";
    case "action":
      if (isObject(v) && Object.keys(v).length === 1 && isObject(v.event)) {
        if (typeof v.event.name !== "string") return "has an event without a string 'name'";
        if (v.event.context !== undefined && !isObject(v.event.context)) return "has an event context that is not an object";
        const extra = Object.keys(v.event).filter((k) => k !== "name" && k !== "context");
        return extra.length ? `has an event with an unknown field '${extra[0]}'` : null;
      }
      if (isObject(v) && Object.keys(v).length === 1 && isObject(v.functionCall)) {
        const f = v.functionCall;
        if (typeof f.call !== "string") return "has a functionCall without a string 'call'";
        return hasOwn(catalog.functions, f.call) ? null : `calls '${f.call}', which the catalog does not define`;
      }
      return "is neither {event: {name, context}} nor {functionCall}";
    case "checks":
      if (!Array.isArray(v)) return `is ${typeName(v)}, not a list of checks`;
      for (const c of v) {
        if (!isObject(c) || typeof c.message !== "string" || !hasOwn(c, "condition")) return "has a check without a condition and a message";
        const p = kindProblem(c.condition, "bool", catalog);
        if (p) return `has a check whose condition ${p}`;
      }
      return null;
    case "icon":
      if (typeof v === "string") return ICON_NAMES.includes(v) ? null : `names the icon ${JSON.stringify(v)}, which the catalog does not have`;
      if (isObject(v) && typeof v.svgPath === "string" && Object.keys(v).length === 1) return null;
      if (isBinding(v)) return null;
      return "is neither an icon name, {svgPath} nor a binding";
    case "tabs":
      if (!Array.isArray(v) || v.length === 0) return "is not a non-empty list of tabs";
      for (const t of v) {
        if (!isObject(t) || !hasOwn(t, "title") || typeof t.child !== "string") return "has a tab without a title and a child id";
        const p = kindProblem(t.title, "str", catalog);
        if (p) return `has a tab title that ${p}`;
      }
      return null;
    case "options":
      if (!Array.isArray(v)) return `is ${typeName(v)}, not a list of options`;
      for (const o of v) {
        if (!isObject(o) || !hasOwn(o, "label") || typeof o.value !== "string") return "has an option without a label and a string value";
        const p = kindProblem(o.label, "str", catalog);
        if (p) return `has an option label that ${p}`;
      }
      return null;
    case "a11y":
      if (!isObject(v)) return `is ${typeName(v)}, not an object`;
      for (const [k, x] of Object.entries(v)) {
        if (k !== "label" && k !== "description") return `has an unknown field '${k}'`;
        const p = kindProblem(x, "str", catalog);
        if (p) return `.${k} ${p}`;
      }
      return null;
    default:
      return null;
  }
}

/** The violations of one component's own definition (A2-A5, A12, A14, A15). */
export function checkComponent(c, catalog = CATALOGS[BASIC_CATALOG_ID]) {
  const out = [];
  const def = catalog.components[c.component];
  if (!def) {
    out.push(violation("A2", `Unknown component '${c.component}'`, { path: "/component" }));
    return out;
  }
  for (const r of def.required) if (!hasOwn(c, r)) out.push(violation("A3", `${c.component} '${c.id}' has no '${r}'`, { path: `/${r}` }));
  for (const [k, v] of Object.entries(c)) {
    const kind = hasOwn(def.props, k) ? def.props[k] : COMMON_PROPS[k];
    if (kind === undefined) {
      out.push(violation("A5", `${c.component} has no property '${k}'`, { path: `/${k}` }));
      continue;
    }
    if (depthOf(v, LIMITS.dataDepth + 1) > LIMITS.dataDepth) {
      out.push(violation("A14", `Global recursion limit exceeded: logical depth of property '${k}' exceeds ${LIMITS.dataDepth}`, { path: `/${k}` }));
      continue;
    }
    const p = kindProblem(v, kind, catalog);
    if (p) out.push(violation("A4", `'${k}' ${p}`, { path: `/${k}` }));
    walkBindings(v, `/${k}`, 0, out);
  }
  return out;
}

// A12 (paths that are not pointers) and A15 (calls nested too deep) inside a property.
function walkBindings(v, at, calls, out) {
  if (Array.isArray(v)) v.forEach((x, i) => walkBindings(x, `${at}/${i}`, calls, out));
  else if (isObject(v)) {
    const depth = typeof v.call === "string" ? calls + 1 : calls;
    if (depth > LIMITS.functionDepth && !out.some((o) => o.rule === "A15")) out.push(violation("A15", `Recursion limit exceeded: functionCall depth > ${LIMITS.functionDepth}`, { path: at }));
    if (typeof v.path === "string" && !validPointer(v.path)) {
      try {
        parsePointer(v.path);
      } catch (e) {
        out.push(violation("A12", e.message, { path: `${at}/path` }));
      }
    }
    for (const [k, x] of Object.entries(v)) walkBindings(x, `${at}/${k}`, depth, out);
  }
}

// ---- references and the tree (A6-A10, A13, A14) ----------------------------

/** The component ids `c` refers to: `[{target, path, template?}]`. */
export function referencesOf(c, catalog = CATALOGS[BASIC_CATALOG_ID]) {
  const out = [];
  const def = catalog.components[c.component];
  const props = def ? def.props : { child: "id", children: "kids" };
  for (const [k, kind] of Object.entries(props)) {
    const v = c[k];
    if (v === undefined) continue;
    if (kind === "id" && typeof v === "string") out.push({ target: v, path: `/${k}` });
    else if (kind === "kids") {
      if (Array.isArray(v)) v.forEach((x, i) => typeof x === "string" && out.push({ target: x, path: `/${k}/${i}` }));
      else if (isObject(v) && typeof v.componentId === "string") out.push({ target: v.componentId, path: `/${k}/componentId`, template: v.path });
    } else if (kind === "tabs" && Array.isArray(v)) v.forEach((t, i) => isObject(t) && typeof t.child === "string" && out.push({ target: t.child, path: `/${k}/${i}/child` }));
  }
  return out;
}

/** The ids reachable from `root` (and whether the walk went deeper than the limit). */
function reachable(s, catalog) {
  const ids = new Set();
  if (!s.components.has("root")) return { ids, tooDeep: null };
  let tooDeep = null;
  const todo = [["root", 1]];
  while (todo.length) {
    const [id, d] = todo.pop();
    if (ids.has(id)) continue;
    const c = s.components.get(id);
    if (!c) continue;
    ids.add(id);
    if (d > LIMITS.treeDepth && !tooDeep) tooDeep = id;
    for (const r of referencesOf(c, catalog)) if (!ids.has(r.target)) todo.push([r.target, d + 1]);
  }
  return { ids, tooDeep };
}

/** The depth of the tree under root (the longest chain of references, cycles cut). */
function treeDepth(s, catalog) {
  const memo = new Map();
  const visiting = new Set();
  const depth = (id, n) => {
    if (memo.has(id)) return memo.get(id);
    if (visiting.has(id) || n > LIMITS.treeDepth + 1) return 0;
    const c = s.components.get(id);
    if (!c) return 0;
    visiting.add(id);
    let best = 0;
    for (const r of referencesOf(c, catalog)) best = Math.max(best, depth(r.target, n + 1));
    visiting.delete(id);
    memo.set(id, best + 1);
    return best + 1;
  };
  return depth("root", 1);
}

/** The violations of a surface's tree and bindings, once its operations are applied. */
function checkSurface(s) {
  const out = [];
  const { catalog } = catalogFor(s.catalogId);
  const at = (componentId, path = "") => ({ surfaceId: s.id, componentId, path });
  const edges = new Map();
  for (const [id, c] of s.components) {
    const next = [];
    for (const r of referencesOf(c, catalog)) {
      if (r.target === id) out.push(violation("A8", `Self-reference detected: component '${id}' references itself`, at(id, r.path)));
      else if (!s.components.has(r.target)) out.push(violation("A7", `Component '${id}' references non-existent component '${r.target}'`, at(id, r.path)));
      else next.push(r.target);
    }
    edges.set(id, next);
  }
  // cycles (each reported once, at the component that closes it)
  const state = new Map();
  for (const start of s.components.keys()) {
    if (state.get(start)) continue;
    const stack = [[start, 0]];
    state.set(start, 1);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const next = edges.get(top[0])?.[top[1]];
      if (next === undefined) {
        state.set(top[0], 2);
        stack.pop();
        continue;
      }
      top[1]++;
      const st = state.get(next) ?? 0;
      if (st === 0) {
        state.set(next, 1);
        stack.push([next, 0]);
      } else if (st === 1) {
        const from = stack.findIndex(([n]) => n === next);
        const chain = [...stack.slice(from).map(([n]) => n), next];
        out.push(violation("A9", `Circular reference detected: ${chain.join(" -> ")}`, at(top[0])));
      }
    }
  }
  if (s.created && s.components.size && !s.components.has("root")) out.push(violation("A6", `Missing root component: surface '${s.id}' has no component with id 'root'`, { surfaceId: s.id, path: "" }));
  if (s.components.has("root")) {
    const { ids } = reachable(s, catalog);
    if (treeDepth(s, catalog) > LIMITS.treeDepth) out.push(violation("A14", `Global recursion limit exceeded: logical depth > ${LIMITS.treeDepth}`, at("root")));
    if (s.created) for (const id of s.components.keys()) if (!ids.has(id) && !s.everReached.has(id)) out.push(violation("A10", `Component '${id}' is not reachable from 'root'`, at(id)));
  }
  if (s.created && isObject(s.data) && Object.keys(s.data).length) {
    for (const [id, c] of s.components) {
      for (const [k, v] of Object.entries(c)) unresolved(s.data, v, `/${k}`, (p, path) => out.push(violation("A13", `Data binding '${p}' resolves to nothing in the data model`, at(id, path))), 0);
    }
  }
  return out;
}

function unresolved(data, v, at, report, d) {
  if (d > 64) return;
  if (isObject(v)) {
    if (isBinding(v) && v.path.startsWith("/") && validPointer(v.path) && getAt(data, parsePointer(v.path)) === undefined) {
      report(v.path, `${at}/path`);
      return;
    }
    for (const [k, x] of Object.entries(v)) unresolved(data, x, `${at}/${k}`, report, d + 1);
  } else if (Array.isArray(v)) v.forEach((x, i) => unresolved(data, x, `${at}/${i}`, report, d + 1));
}

// ---------------------------------------------------------------------------
// Evaluation: bindings, function calls, formatString
// ---------------------------------------------------------------------------

/**
 * The value of a dynamic property in a surface's data: a literal, `{path}` (resolved in
 * `scope`, the tokens of the template item), or `{call, args}` (a catalog function).
 * Never throws: what cannot be computed is undefined.
 */
export function evaluate(v, data, scope = [], depth = 0) {
  if (depth > 16) return undefined;
  if (Array.isArray(v)) return v.map((x) => evaluate(x, data, scope, depth + 1));
  if (!isObject(v)) return v;
  if (isBinding(v)) {
    try {
      return getAt(data, resolvePath(v.path, scope));
    } catch {
      return undefined;
    }
  }
  if (isCall(v)) return callFunction(v.call, isObject(v.args) ? v.args : {}, data, scope, depth + 1);
  return v;
}

/** A value as display text (A2UI's coercion: nothing is "", objects are JSON). */
export function toText(v) {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";
  if (typeof v === "boolean") return String(v);
  try {
    return JSON.stringify(v);
  } catch {
    return "";
  }
}
/** A value as a number (NaN when it is not one). */
export function toNumber(v) {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v.trim() !== "") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  return NaN;
}
/** A value as a boolean ("true"/"false" strings too). */
export function toBool(v) {
  if (typeof v === "string") return v === "true" ? true : v === "false" ? false : v !== "";
  return Boolean(v);
}

const MAX_TEST_INPUT = 512;
/**
 * A regular expression from untrusted content, or null when it is not one or looks able
 * to backtrack badly (a quantified group that contains a quantifier): such a check is
 * not run, so a page never hangs on an agent's pattern.
 */
export function safeRegExp(pattern) {
  if (typeof pattern !== "string" || pattern.length > 300) return null;
  if (/\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{]/.test(pattern)) return null;
  try {
    return new RegExp(pattern, "u");
  } catch {
    try {
      return new RegExp(pattern);
    } catch {
      return null;
    }
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function callFunction(name, args, data, scope, depth) {
  const arg = (k) => (name === "formatString" && k === "value" ? args[k] : evaluate(args[k], data, scope, depth));
  switch (name) {
    case "required": {
      const v = arg("value");
      return !(v === null || v === undefined || v === "" || (Array.isArray(v) && v.length === 0));
    }
    case "regex": {
      const re = safeRegExp(args.pattern);
      if (!re) return true;
      return re.test(toText(arg("value")).slice(0, MAX_TEST_INPUT));
    }
    case "length": {
      const n = toText(arg("value")).length;
      const min = arg("min");
      const max = arg("max");
      return !(typeof min === "number" && n < min) && !(typeof max === "number" && n > max);
    }
    case "numeric": {
      const n = toNumber(arg("value"));
      if (Number.isNaN(n)) return false;
      const min = arg("min");
      const max = arg("max");
      return !(typeof min === "number" && n < min) && !(typeof max === "number" && n > max);
    }
    case "email":
      return EMAIL.test(toText(arg("value")));
    case "and": {
      const vs = args.values;
      return Array.isArray(vs) && vs.every((x) => toBool(evaluate(x, data, scope, depth)));
    }
    case "or": {
      const vs = args.values;
      return Array.isArray(vs) && vs.some((x) => toBool(evaluate(x, data, scope, depth)));
    }
    case "not":
      return !toBool(arg("value"));
    case "formatString": {
      const tpl = evaluate(args.value, data, scope, depth);
      return typeof tpl === "string" ? formatString(tpl, data, scope, depth) : toText(tpl);
    }
    case "formatNumber":
      return formatNumber(arg("value"), { decimals: arg("decimals"), grouping: arg("grouping") });
    case "formatCurrency":
      return formatCurrency(arg("value"), arg("currency"), { decimals: arg("decimals"), grouping: arg("grouping") });
    case "formatDate":
      return formatDate(arg("value"), toText(arg("format")));
    case "pluralize": {
      const n = toNumber(arg("value"));
      let cat = "other";
      try {
        cat = new Intl.PluralRules().select(Number.isNaN(n) ? 0 : n);
      } catch {}
      const pick = args[cat] !== undefined ? cat : "other";
      return toText(arg(pick));
    }
    case "capitalize": {
      const s = toText(arg("value"));
      return s.charAt(0).toUpperCase() + s.slice(1);
    }
    case "now":
      return new Date().toISOString();
    case "openUrl":
      return undefined; // a side effect of an action, not a value
    default:
      return undefined;
  }
}

/** A number for people (the locale's grouping; `decimals` fixes the fraction digits). */
export function formatNumber(value, { decimals, grouping } = {}) {
  const n = toNumber(value);
  if (Number.isNaN(n)) return "";
  const o = { useGrouping: grouping !== false };
  if (typeof decimals === "number" && decimals >= 0 && decimals <= 20) o.minimumFractionDigits = o.maximumFractionDigits = Math.floor(decimals);
  try {
    return new Intl.NumberFormat(undefined, o).format(n);
  } catch {
    return String(n);
  }
}

/** An amount in a currency (ISO 4217 code). */
export function formatCurrency(value, currency, { decimals, grouping } = {}) {
  const n = toNumber(value);
  if (Number.isNaN(n)) return "";
  const o = { style: "currency", currency: toText(currency), useGrouping: grouping !== false };
  if (typeof decimals === "number" && decimals >= 0 && decimals <= 20) o.minimumFractionDigits = o.maximumFractionDigits = Math.floor(decimals);
  try {
    return new Intl.NumberFormat(undefined, o).format(n);
  } catch {
    return `${toText(currency)} ${formatNumber(n, { decimals, grouping })}`.trim();
  }
}

/** A date from an ISO 8601 string or a number of ms ("YYYY-MM-DD" is a local date), or null. */
export function parseDate(v) {
  if (typeof v === "number" && Number.isFinite(v)) return new Date(v);
  if (typeof v !== "string" || v === "") return null;
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (m) return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  m = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(v);
  if (m) {
    const d = new Date(2000, 0, 1, Number(m[1]), Number(m[2]), Number(m[3] ?? 0));
    return d;
  }
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : new Date(t);
}

/** A date formatted with a Unicode TR35 pattern (yyyy, MMM, d, EEEE, h, HH, mm, ss, a, 'text'). */
export function formatDate(value, pattern) {
  const d = parseDate(value);
  if (!d) return toText(value);
  const name = (opts) => {
    try {
      return new Intl.DateTimeFormat(undefined, opts).format(d);
    } catch {
      return "";
    }
  };
  const pad = (n, w) => String(n).padStart(w, "0");
  let out = "";
  let i = 0;
  const p = String(pattern || "yyyy-MM-dd");
  while (i < p.length) {
    const ch = p[i];
    if (ch === "'") {
      const end = p.indexOf("'", i + 1);
      if (end === i + 1) {
        out += "'";
        i += 2;
        continue;
      }
      out += end < 0 ? p.slice(i + 1) : p.slice(i + 1, end);
      i = end < 0 ? p.length : end + 1;
      continue;
    }
    if (!/[A-Za-z]/.test(ch)) {
      out += ch;
      i++;
      continue;
    }
    let n = 1;
    while (p[i + n] === ch) n++;
    i += n;
    switch (ch) {
      case "y": out += n === 2 ? pad(d.getFullYear() % 100, 2) : String(d.getFullYear()); break;
      case "M": case "L":
        out += n >= 4 ? name({ month: "long" }) : n === 3 ? name({ month: "short" }) : pad(d.getMonth() + 1, n); break;
      case "d": out += pad(d.getDate(), n); break;
      case "E": out += n >= 4 ? name({ weekday: "long" }) : name({ weekday: "short" }); break;
      case "H": out += pad(d.getHours(), n); break;
      case "h": out += pad(d.getHours() % 12 || 12, n); break;
      case "m": out += pad(d.getMinutes(), n); break;
      case "s": out += pad(d.getSeconds(), n); break;
      case "a": out += d.getHours() < 12 ? "AM" : "PM"; break;
      default: out += ch.repeat(n);
    }
  }
  return out;
}

// ---- formatString's ${expression} language --------------------------------

/**
 * Parses a formatString template into parts: `{text}` literals and `{expr}` expressions
 * (`{path}`, `{literal}`, `{call, args}`); `\${` is a literal `${`. An expression that does
 * not parse stays literal text.
 */
export function parseTemplate(s) {
  const parts = [];
  let text = "";
  let i = 0;
  while (i < s.length) {
    if (s[i] === "\\" && s.startsWith("${", i + 1)) {
      text += "${";
      i += 3;
      continue;
    }
    if (s.startsWith("${", i)) {
      const r = parseInterpolation(s, i);
      if (r) {
        if (text) parts.push({ text });
        text = "";
        parts.push({ expr: r.expr });
        i = r.end;
        continue;
      }
    }
    text += s[i];
    i++;
  }
  if (text) parts.push({ text });
  return parts;
}

// "${" expr "}" starting at i; returns {expr, end} or null.
function parseInterpolation(s, i, depth = 0) {
  if (depth > 8) return null;
  let j = i + 2;
  const ws = () => {
    while (j < s.length && /\s/.test(s[j])) j++;
  };
  const expr = () => {
    ws();
    if (s.startsWith("${", j)) {
      const r = parseInterpolation(s, j, depth + 1);
      if (!r) return null;
      j = r.end;
      return r.expr;
    }
    const q = s[j];
    if (q === "'" || q === '"') {
      let out = "";
      j++;
      while (j < s.length && s[j] !== q) {
        if (s[j] === "\\" && j + 1 < s.length) j++;
        out += s[j++];
      }
      if (s[j] !== q) return null;
      j++;
      return { literal: out };
    }
    const m = /^[^\s,(){}:]+/.exec(s.slice(j));
    if (!m) return null;
    const word = m[0];
    j += word.length;
    ws();
    if (s[j] === "(" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(word)) {
      j++;
      const args = {};
      ws();
      while (s[j] !== ")") {
        ws();
        const k = /^[A-Za-z_][A-Za-z0-9_]*/.exec(s.slice(j));
        if (!k) return null;
        j += k[0].length;
        ws();
        if (s[j] !== ":") return null;
        j++;
        const v = expr();
        if (!v) return null;
        args[k[0]] = v;
        ws();
        if (s[j] === ",") j++;
        else if (s[j] !== ")") return null;
        ws();
      }
      j++;
      return { call: word, args };
    }
    if (word === "true" || word === "false") return { literal: word === "true" };
    if (word === "null") return { literal: null };
    if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(word)) return { literal: Number(word) };
    return { path: word };
  };
  const e = expr();
  if (!e) return null;
  ws();
  if (s[j] !== "}") return null;
  return { expr: e, end: j + 1 };
}

function evalExpr(e, data, scope, depth) {
  if (depth > 16) return undefined;
  if (hasOwn(e, "literal")) return e.literal;
  if (hasOwn(e, "path")) return evaluate({ path: e.path }, data, scope, depth);
  if (hasOwn(e, "call")) {
    const args = {};
    for (const [k, v] of Object.entries(e.args)) args[k] = evalExpr(v, data, scope, depth + 1);
    return callFunction(e.call, args, data, scope, depth + 1);
  }
  return undefined;
}

/** A formatString template filled from the data (in `scope`). */
export function formatString(tpl, data, scope = [], depth = 0) {
  return parseTemplate(tpl).map((p) => (p.text !== undefined ? p.text : toText(evalExpr(p.expr, data, scope, depth)))).join("");
}

// ---------------------------------------------------------------------------
// Checks, actions, URLs, Markdown
// ---------------------------------------------------------------------------

/** The message of the first failing check of a component, or null. */
export function failingCheck(checks, data, scope = []) {
  if (!Array.isArray(checks)) return null;
  for (const c of checks) {
    if (!isObject(c)) continue;
    if (!toBool(evaluate(c.condition, data, scope))) return typeof c.message === "string" ? c.message : "check failed";
  }
  return null;
}

/**
 * The `userAction` a component's `action.event` sends: `{name, surfaceId,
 * sourceComponentId, timestamp, context}` with the context's bindings resolved in `scope`.
 */
export function userAction(component, surfaceId, data, scope = [], now = new Date()) {
  const ev = component?.action?.event;
  if (!isObject(ev) || typeof ev.name !== "string") return null;
  const context = {};
  if (isObject(ev.context)) {
    for (const [k, v] of Object.entries(ev.context)) {
      const x = evaluate(v, data, scope);
      context[k] = x === undefined ? null : structuredCopy(x);
    }
  }
  return { name: ev.name, surfaceId, sourceComponentId: component.id, timestamp: now.toISOString(), context };
}

/**
 * A URL the console may load, or null: http(s) for everything, plus `data:` images (raster
 * or SVG, shown through <img>, which runs no script) when `kind` is "image".
 */
export function safeUrl(url, kind = "link") {
  if (typeof url !== "string") return null;
  const s = url.trim();
  if (kind === "image" && /^data:image\/(png|jpeg|jpg|gif|webp|avif|bmp|svg\+xml)[;,]/i.test(s)) return s;
  let u;
  try {
    u = new URL(s);
  } catch {
    return null;
  }
  return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
}

/** Whether an SVG path's data is plain path data (commands and numbers only). */
export const safeSvgPath = (d) => typeof d === "string" && d.length <= 8192 && /^[MmLlHhVvCcSsQqTtAaZz0-9eE.,+\-\s]*$/.test(d);

/**
 * Simple Markdown (what the Text component allows: headings, paragraphs, lists, bold,
 * italic, code, links) as a tree of plain objects; the view makes text nodes of it.
 * Blocks: {type: "h", level, inline} | {type: "p", inline} | {type: "ul"|"ol", items: [inline]}.
 * Inline: [{t: "text", v} | {t: "b"|"i", c: inline} | {t: "code", v} | {t: "link", href, c}].
 */
export function markdown(src) {
  const lines = String(src).replace(/\r\n?/g, "\n").split("\n");
  const blocks = [];
  let para = [];
  const flush = () => {
    if (para.length) blocks.push({ type: "p", inline: inline(para.join("\n")) });
    para = [];
  };
  for (const line of lines) {
    let m;
    if (/^\s*$/.test(line)) flush();
    else if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
      flush();
      blocks.push({ type: "h", level: m[1].length, inline: inline(m[2].replace(/\s+#+\s*$/, "")) });
    } else if ((m = /^\s*[-*+]\s+(.*)$/.exec(line))) {
      flush();
      const last = blocks[blocks.length - 1];
      if (last?.type === "ul") last.items.push(inline(m[1]));
      else blocks.push({ type: "ul", items: [inline(m[1])] });
    } else if ((m = /^\s*\d+[.)]\s+(.*)$/.exec(line))) {
      flush();
      const last = blocks[blocks.length - 1];
      if (last?.type === "ol") last.items.push(inline(m[1]));
      else blocks.push({ type: "ol", items: [inline(m[1])] });
    } else para.push(line);
  }
  flush();
  return blocks;
}

/** Whether a text uses any Markdown at all (plain text is drawn as it is). */
export const hasMarkdown = (s) => /(^|\n)\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s)|\*\*|(^|[^\p{L}\p{N}])__|`|\[[^\]]*\]\([^)]*\)|(^|[\s(])[*_][^*_\s]/u.test(String(s));

function inline(s, depth = 0) {
  const out = [];
  let text = "";
  const emit = () => {
    if (text) out.push({ t: "text", v: text });
    text = "";
  };
  let i = 0;
  while (i < s.length) {
    const rest = s.slice(i);
    let m;
    // `_` emphasis is not intraword (snake_case and such stay as they are), `*` may be.
    const wordBefore = i > 0 && /[\p{L}\p{N}]/u.test(s[i - 1]);
    const flanked = (m) => m[1][0] !== "_" || (!wordBefore && !/[\p{L}\p{N}]/u.test(s[i + m[0].length] ?? ""));
    if (depth < 4 && (m = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest)) && flanked(m)) {
      emit();
      out.push({ t: "b", c: inline(m[2], depth + 1) });
      i += m[0].length;
    } else if (depth < 4 && (m = /^([*_])(?=\S)([\s\S]*?\S)\1(?![*_])/.exec(rest)) && flanked(m)) {
      emit();
      out.push({ t: "i", c: inline(m[2], depth + 1) });
      i += m[0].length;
    } else if ((m = /^`([^`]+)`/.exec(rest))) {
      emit();
      out.push({ t: "code", v: m[1] });
      i += m[0].length;
    } else if (depth < 4 && (m = /^\[([^\]]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)/.exec(rest))) {
      emit();
      out.push({ t: "link", href: safeUrl(m[2], "link"), c: inline(m[1], depth + 1) });
      i += m[0].length;
    } else {
      text += s[i];
      i++;
    }
  }
  emit();
  return out;
}

/** Plain text of a Markdown inline list (for headings drawn in a variant's style). */
export const inlineText = (list) => list.map((x) => (x.t === "text" || x.t === "code" ? x.v : inlineText(x.c))).join("");

// ---------------------------------------------------------------------------
// Local edits: the user's input, kept across redraws of the same activity
// ---------------------------------------------------------------------------

/**
 * The user's edits of one activity's surfaces. `record(path, value)` notes an edit made
 * after the operations seen so far; `sync(operations)` is told each new version of the
 * activity's operations: when they extend the ones seen, the edits stay where they were
 * made (later operations of the agent apply after them); otherwise they are dropped.
 */
export class LocalEdits {
  constructor() {
    this.edits = [];
    this.seen = [];
  }
  sync(ops) {
    const sigs = ops.map((o) => JSON.stringify(o));
    const extends_ = this.seen.length <= sigs.length && this.seen.every((s, i) => s === sigs[i]);
    if (!extends_) this.edits = [];
    this.seen = sigs;
    return this.edits;
  }
  record(surfaceId, path, value) {
    this.edits.push({ at: this.seen.length, surfaceId, path, value: structuredCopy(value) });
  }
}
