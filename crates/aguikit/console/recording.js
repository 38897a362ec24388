// Recordings as `agui inspect` reads them, for the console (pure: importable under Node):
// reading the text formats in the browser (when no agui serve can read it for us), and
// writing a thread as JSON Lines.

import { isObject } from "./util.js";
import { parseSse } from "./sse.js";

/**
 * The events of a recording in one of the text formats `agui inspect` reads: a JSON array,
 * JSON Lines, an SSE stream or a conformance case file. Returns `{format, events}`, where
 * an entry of `events` that is not JSON is `{error}`. Protobuf is binary: only agui serve
 * reads it (`POST /api/inspect`). Throws when the text is none of these.
 */
export function parseRecording(text) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const start = text.search(/\S/);
  if (start < 0) return { format: "json-lines", events: [] };
  const first = text[start];
  if (first === "[") {
    const v = JSON.parse(text);
    if (!Array.isArray(v)) throw new Error("not a JSON array");
    return { format: "json-array", events: v };
  }
  if (first === "{") {
    // One JSON document on its first line followed by more: JSON Lines; else one document.
    const nl = text.indexOf("\n", start);
    const firstLine = nl < 0 ? text.slice(start) : text.slice(start, nl);
    let firstOk = true;
    try {
      JSON.parse(firstLine);
    } catch {
      firstOk = false;
    }
    const rest = nl < 0 ? "" : text.slice(nl + 1);
    if (!(firstOk && /\S/.test(rest))) {
      let whole;
      try {
        whole = JSON.parse(text);
      } catch {
        whole = undefined;
      }
      if (whole !== undefined) {
        if (isObject(whole) && Array.isArray(whole.events)) return { format: "case", events: whole.events };
        return { format: "json-lines", events: [whole] };
      }
    }
    const events = [];
    for (const line of text.split(/\r?\n/)) {
      if (!/\S/.test(line)) continue;
      try {
        events.push(JSON.parse(line));
      } catch (e) {
        events.push({ error: `invalid JSON line: ${e.message}` });
      }
    }
    return { format: "json-lines", events };
  }
  if (/^(data|id|event|retry)?:/.test(text.slice(start, start + 6)) || text.slice(start).startsWith("data")) {
    const events = parseSse(text).map((f) => {
      try {
        return JSON.parse(f.data);
      } catch (e) {
        return { error: `invalid JSON in SSE frame: ${e.message}` };
      }
    });
    return { format: "sse", events };
  }
  throw new Error("not a recording: expected a JSON array, JSON Lines, an SSE stream or a case file");
}

/** Events as JSON Lines (one event per line, a newline after each). */
export function toJsonLines(events) {
  return events.map((e) => JSON.stringify(e) + "\n").join("");
}

/** Events as an SSE stream, as an agent sends them (`data: JSON` and a blank line each). */
export function toSse(events) {
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
}

/**
 * A HAR 1.2 log (the HTTP Archive format browsers' developer tools read) of runs, one entry
 * per run: the request (a POST of its RunAgentInput to `url`, when known) and the response
 * (its events as `text/event-stream`). `runs`: `[{url, input, events, startedMs, timeMs,
 * waitMs, status}]`, `input` null when the run's request is not known (a recording without
 * `RUN_STARTED.input`), `startedMs` Unix milliseconds or null, `timeMs` its duration and
 * `waitMs` the time to its first event (null when not known). No header carries a
 * credential: the archive holds only what the run sent and received.
 */
export function toHar(runs, creator = { name: "agui console", version: "1" }) {
  const entries = runs.map((r) => {
    const body = r.input === null || r.input === undefined ? null : JSON.stringify(r.input);
    const sse = toSse(r.events);
    const size = (s) => new TextEncoder().encode(s).length;
    const time = Number.isFinite(r.timeMs) ? Math.max(0, r.timeMs) : 0;
    const wait = Number.isFinite(r.waitMs) ? Math.min(time, Math.max(0, r.waitMs)) : 0;
    const request = {
      method: "POST",
      url: r.url,
      httpVersion: "HTTP/1.1",
      cookies: [],
      headers: [
        { name: "Content-Type", value: "application/json" },
        { name: "Accept", value: "text/event-stream" },
      ],
      queryString: [],
      headersSize: -1,
      bodySize: body === null ? 0 : size(body),
    };
    if (body !== null) request.postData = { mimeType: "application/json", text: body };
    else request.comment = "the request of this run was not recorded";
    const status = Number.isInteger(r.status) ? r.status : 200;
    return {
      startedDateTime: new Date(Number.isFinite(r.startedMs) ? r.startedMs : 0).toISOString(),
      time,
      request,
      response: {
        status,
        statusText: status === 200 ? "OK" : "",
        httpVersion: "HTTP/1.1",
        cookies: [],
        headers: [{ name: "Content-Type", value: "text/event-stream" }],
        content: { size: size(sse), mimeType: "text/event-stream", text: sse },
        redirectURL: "",
        headersSize: -1,
        bodySize: size(sse),
      },
      cache: {},
      timings: { send: 0, wait, receive: time - wait },
    };
  });
  return { log: { version: "1.2", creator, pages: [], entries } };
}
