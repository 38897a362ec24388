// Talking to the console's own origin and to agents (browser only): the API token, fetch
// with it, reading SSE bodies.

import { SseParser } from "./sse.js";
import { isObject, truncate } from "./util.js";

/** An error that ends a run with a message for people. */
export class RunFailure extends Error {}

// The API token: agui serve prints the console's URL with it in the fragment
// (#token=...), which never reaches logs or Referer. It is kept for this tab only and
// taken out of the address bar.
export const apiToken = (() => {
  const frag = new URLSearchParams(location.hash.slice(1));
  const t = frag.get("token");
  if (t) {
    try {
      sessionStorage.setItem("agui-token", t);
    } catch {}
    frag.delete("token");
    const url = new URL(location.href);
    url.hash = frag.toString();
    history.replaceState(null, "", url);
    return t;
  }
  try {
    return sessionStorage.getItem("agui-token");
  } catch {
    return null;
  }
})();

/** The Authorization header for `url`: only ever for the console's own origin. */
export function authHeaders(url) {
  try {
    if (apiToken && new URL(url, location.href).origin === location.origin) {
      return { Authorization: `Bearer ${apiToken}` };
    }
  } catch {}
  return {};
}

/** fetch with the token (for the console's own origin only, see authHeaders). */
export function apiFetch(url, init = {}) {
  return fetch(url, { ...init, headers: { Accept: "application/json", ...(init.headers ?? {}), ...authHeaders(url) }, cache: "no-store" });
}

/** `HTTP 404: message` for a failed response (the JSON error's message when there is one). */
export async function errorText(res) {
  let body = "";
  try {
    body = (await res.text()).trim();
    const j = JSON.parse(body);
    if (isObject(j) && typeof j.message === "string") body = j.message;
  } catch {}
  return `HTTP ${res.status}${body ? ": " + truncate(body, 200) : ""}`;
}

/** Reads an SSE response body to its end, handing each frame to onData(data, id). */
export async function readSse(res, onData) {
  if (!res.body) throw new RunFailure("The response has no readable body.");
  const reader = res.body.getReader();
  const decoder = new TextDecoder("utf-8");
  const parser = new SseParser(onData);
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (e) {
      if (e && e.name === "AbortError") throw e;
      throw new RunFailure(`The stream broke: ${e?.message ?? e}`);
    }
    if (chunk.done) break;
    parser.push(decoder.decode(chunk.value, { stream: true }));
  }
  parser.push(decoder.decode());
  parser.end();
}

/**
 * Asks the console's own agui serve to read and verify a recording (`POST /api/inspect`,
 * any format `agui inspect` reads, protobuf too): resolves to its report
 * `{format, events, violations, warnings, ok}`, or null when there is no such route here
 * (another server, not signed in).
 */
export async function inspectRemotely(body, contentType = "application/octet-stream") {
  let res;
  try {
    res = await apiFetch(new URL("/api/inspect", location.href).href, { method: "POST", headers: { "Content-Type": contentType }, body });
  } catch {
    return null;
  }
  if (res.status === 404 || res.status === 401 || res.status === 405) return null;
  if (!res.ok) throw new Error(await errorText(res));
  return res.json();
}
