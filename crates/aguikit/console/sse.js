// Server-Sent Events parsing (pure: importable under Node).
//
// Incremental; LF, CRLF and CR line endings; comments; multi-line data. Like the reference
// client, a trailing event without the blank line still counts at the end of the body.

/**
 * An incremental SSE parser: `push(text)` as text arrives, `end()` at the end of the body.
 * `onData(data, lastEventId)` gets each frame's data; the id is the last `id:` field seen
 * (agui serve numbers stored events with it).
 */
export class SseParser {
  constructor(onData) {
    this.onData = onData;
    this.tail = "";
    this.data = [];
    this.lastId = "";
    this.skipLF = false; // the previous chunk ended in CR: a leading LF belongs to it
    this.started = false;
  }
  push(text) {
    if (!text) return;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let s = this.tail + text;
    this.tail = "";
    let i = 0;
    if (this.skipLF) {
      this.skipLF = false;
      if (s.charCodeAt(0) === 10) i = 1;
    }
    let start = i;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(s.slice(start, i));
      if (c === 13) {
        if (i + 1 < s.length) {
          if (s.charCodeAt(i + 1) === 10) i++;
        } else this.skipLF = true;
      }
      start = i + 1;
    }
    this.tail = s.slice(start);
  }
  end() {
    if (this.tail) this.line(this.tail);
    this.tail = "";
    this.dispatch();
  }
  line(l) {
    if (l === "") return this.dispatch();
    if (l.charCodeAt(0) === 58 /* ':' */) return; // comment / keep-alive
    const colon = l.indexOf(":");
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? "" : l.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.lastId = value;
    // event: and retry: carry nothing AG-UI uses
  }
  dispatch() {
    if (this.data.length === 0) return;
    const payload = this.data.join("\n");
    this.data = [];
    this.onData(payload, this.lastId);
  }
}

/** Every frame of a whole SSE text: [{data, id}]. */
export function parseSse(text) {
  const out = [];
  const p = new SseParser((data, id) => out.push({ data, id }));
  p.push(text);
  p.end();
  return out;
}
