// JSON Patch (RFC 6902) with JSON Pointers (RFC 6901), pure: importable under Node.
//
// Atomic: works on a copy and throws on the first failing operation, so the caller keeps
// the old document. Follows the reference patcher's rules (fast-json-patch, validate; see
// client.md AP12), plus a structural diff for the debugger's "what changed" view.

import { hasOwn, isObject, clone, deepEqual, escapeToken } from "./util.js";

/** The tokens of a JSON Pointer (throws on a malformed one). */
export function parsePointer(p) {
  if (typeof p !== "string") throw new Error("path is not a string");
  if (p === "") return [];
  if (p[0] !== "/") throw new Error(`"${p}" is not a JSON Pointer`);
  return p
    .slice(1)
    .split("/")
    .map((t) => {
      if (/~[^01]|~$/.test(t)) throw new Error(`bad escape in "${p}"`);
      return t.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

function checkTokens(tokens) {
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i] === "__proto__") throw new Error("__proto__ is not allowed");
    if (tokens[i] === "prototype" && i > 0 && tokens[i - 1] === "constructor")
      throw new Error("constructor/prototype is not allowed");
  }
}

const INDEX = /^(0|[1-9][0-9]*)$/;

// Walks to the container holding the last token. box.root holds the document.
function locate(box, tokens, path) {
  let node = box;
  let key = "root";
  for (const t of tokens) {
    const cur = node[key];
    if (Array.isArray(cur)) {
      if (!INDEX.test(t) || Number(t) >= cur.length) throw new Error(`${path}: no such element`);
      node = cur;
      key = Number(t);
    } else if (isObject(cur)) {
      if (!hasOwn(cur, t)) throw new Error(`${path}: no such member`);
      node = cur;
      key = t;
    } else throw new Error(`${path}: cannot walk into a ${cur === null ? "null" : typeof cur}`);
  }
  return { node, key };
}
function parentOf(box, tokens, path) {
  if (tokens.length === 0) return { container: box, key: "root", isRoot: true };
  const { node, key } = locate(box, tokens.slice(0, -1), path);
  const container = node[key];
  if (container === null || typeof container !== "object") throw new Error(`${path}: parent is not a container`);
  return { container, key: tokens[tokens.length - 1], isRoot: false };
}
function getAt(box, tokens, path) {
  const { node, key } = locate(box, tokens, path);
  return node[key];
}
function addAt(box, tokens, value, path) {
  const { container, key, isRoot } = parentOf(box, tokens, path);
  if (isRoot) return void (box.root = value);
  if (Array.isArray(container)) {
    if (key === "-") return void container.push(value);
    if (!INDEX.test(key) || Number(key) > container.length) throw new Error(`${path}: index out of range`);
    container.splice(Number(key), 0, value);
  } else container[key] = value;
}
function removeAt(box, tokens, path) {
  const { container, key, isRoot } = parentOf(box, tokens, path);
  if (isRoot) {
    const old = box.root;
    box.root = null;
    return old;
  }
  if (Array.isArray(container)) {
    if (!INDEX.test(key) || Number(key) >= container.length) throw new Error(`${path}: no such element`);
    return container.splice(Number(key), 1)[0];
  }
  if (!hasOwn(container, key)) throw new Error(`${path}: no such member`);
  const old = container[key];
  delete container[key];
  return old;
}

/** `doc` with the operations `ops` applied; throws (leaving `doc` alone) if one fails. */
export function applyPatch(doc, ops) {
  if (!Array.isArray(ops)) throw new Error("the patch is not an array");
  // Reference quirks: a null document cannot be patched below the root; a
  // scalar document silently ignores operations below the root.
  const scalar = doc !== null && typeof doc !== "object";
  const box = { root: clone(doc) };
  for (const op of ops) {
    if (!isObject(op)) throw new Error("an operation is not an object");
    const path = op.path;
    const tokens = parsePointer(path);
    checkTokens(tokens);
    if (scalar && tokens.length > 0) continue;
    switch (op.op) {
      case "add":
        if (!hasOwn(op, "value")) throw new Error(`add ${path}: no value`);
        addAt(box, tokens, clone(op.value), path);
        break;
      case "remove":
        removeAt(box, tokens, path);
        break;
      case "replace": {
        if (!hasOwn(op, "value")) throw new Error(`replace ${path}: no value`);
        if (tokens.length === 0) {
          box.root = clone(op.value);
          break;
        }
        const { node, key } = locate(box, tokens, path);
        node[key] = clone(op.value);
        break;
      }
      case "move": {
        const from = parsePointer(op.from);
        checkTokens(from);
        if (path !== op.from && path.startsWith(op.from + "/")) throw new Error(`move ${op.from} -> ${path}: cannot move into a child`);
        const value = removeAt(box, from, op.from);
        addAt(box, tokens, value, path);
        break;
      }
      case "copy": {
        const from = parsePointer(op.from);
        checkTokens(from);
        addAt(box, tokens, clone(getAt(box, from, op.from)), path);
        break;
      }
      case "test":
        if (!deepEqual(getAt(box, tokens, path), op.value)) throw new Error(`test ${path} failed`);
        break;
      default:
        throw new Error(`unknown operation "${op.op}"`);
    }
  }
  return box.root;
}

/**
 * What changed from `a` to `b`, path by path (JSON Pointers, deepest differing level):
 * `[{path, kind: "added" | "removed" | "changed", before?, after?}]` in document order.
 * Objects are compared member by member and arrays element by element; anything else that
 * differs (or a change of container type) is one "changed" entry.
 */
export function diff(a, b, path = "", out = []) {
  if (deepEqual(a, b)) return out;
  if (a === undefined) {
    out.push({ path, kind: "added", after: b });
    return out;
  }
  if (b === undefined) {
    out.push({ path, kind: "removed", before: a });
    return out;
  }
  if (isObject(a) && isObject(b)) {
    for (const k of Object.keys(a)) diff(a[k], hasOwn(b, k) ? b[k] : undefined, `${path}/${escapeToken(k)}`, out);
    for (const k of Object.keys(b)) if (!hasOwn(a, k)) out.push({ path: `${path}/${escapeToken(k)}`, kind: "added", after: b[k] });
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) diff(i < a.length ? a[i] : undefined, i < b.length ? b[i] : undefined, `${path}/${i}`, out);
    return out;
  }
  out.push({ path, kind: "changed", before: a, after: b });
  return out;
}
