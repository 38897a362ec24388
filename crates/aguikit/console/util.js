// Small pure helpers shared by the console's modules (no DOM: importable under Node).

/** Whether `o` has its own property `k`. */
export const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

/** Whether `v` is a plain JSON object (not null, not an array). */
export const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** A deep copy of a JSON value (`undefined` stays `undefined`). */
export const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

/** Structural JSON equality: key order does not matter, `1` equals `1.0`. */
export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!hasOwn(b, k) || !deepEqual(a[k], b[k])) return false;
  return true;
}

/** `s` cut to `n` characters, with an ellipsis when cut. */
export function truncate(s, n) {
  s = String(s);
  return s.length > n ? s.slice(0, n - 1) + "…" : s;
}

/** A JSON Pointer token for an object key (RFC 6901 escaping). */
export const escapeToken = (k) => String(k).replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * A UUID v4: crypto.randomUUID() where it exists (secure contexts, Node), else from
 * getRandomValues (the console may be opened over plain http on a LAN address, where
 * randomUUID does not exist).
 */
export function uuid() {
  const c = globalThis.crypto;
  if (typeof c.randomUUID === "function") return c.randomUUID();
  const b = new Uint8Array(16);
  c.getRandomValues(b);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Pretty JSON text of any value (never throws). */
export function jsonText(v) {
  try {
    return JSON.stringify(v, null, 2) ?? String(v);
  } catch {
    return String(v);
  }
}
