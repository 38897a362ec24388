// The AG-UI event vocabulary as the console needs it (pure: importable under Node):
// known types, families, the lanes chunk expansion closes, one-line summaries.

import { isObject, truncate } from "./util.js";

/** The 31 event types of AG-UI 1.0. */
export const KNOWN = new Set([
  "RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "STEP_STARTED", "STEP_FINISHED",
  "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TEXT_MESSAGE_CHUNK",
  "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_CHUNK", "TOOL_CALL_RESULT",
  "STATE_SNAPSHOT", "STATE_DELTA", "MESSAGES_SNAPSHOT", "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA",
  "RAW", "CUSTOM", "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
  "REASONING_MESSAGE_END", "REASONING_MESSAGE_CHUNK", "REASONING_END", "REASONING_ENCRYPTED_VALUE",
  "SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR",
]);

/** The families the timeline colours and filters by. */
export const FAMILIES = ["run", "text", "tool", "state", "activity", "reasoning", "subagent", "step", "other", "unknown"];

/** The family of an event type (`unknown` for types outside AG-UI 1.0). */
export function category(type) {
  if (!KNOWN.has(type)) return "unknown";
  if (type.startsWith("RUN_")) return "run";
  if (type.startsWith("TEXT_")) return "text";
  if (type.startsWith("TOOL_")) return "tool";
  if (type.startsWith("STATE_") || type === "MESSAGES_SNAPSHOT") return "state";
  if (type.startsWith("ACTIVITY_")) return "activity";
  if (type.startsWith("REASONING_")) return "reasoning";
  if (type.startsWith("SUBAGENT_")) return "subagent";
  if (type.startsWith("STEP_")) return "step";
  return "other";
}

/** Events that close the pending chunk stream of their own lane (client.md §4.2). */
export const CLOSES_OWN_LANE = new Set([
  "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
  "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
  "STATE_SNAPSHOT", "STATE_DELTA", "CUSTOM", "STEP_STARTED", "STEP_FINISHED",
  "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
  "REASONING_MESSAGE_END", "REASONING_END",
]);
/** Events that close every lane. */
export const CLOSES_ALL_LANES = new Set(["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"]);

/** The three chunk types: the kind of stream they feed and the field carrying its id. */
export const CHUNK_KINDS = {
  TEXT_MESSAGE_CHUNK: { kind: "text", idKey: "messageId", label: "text message" },
  TOOL_CALL_CHUNK: { kind: "tool", idKey: "toolCallId", label: "tool call" },
  REASONING_MESSAGE_CHUNK: { kind: "reasoning", idKey: "messageId", label: "reasoning message" },
};

/** The subagent an event belongs to: its `subagentRunId` tag (or, for SUBAGENT_*, its id). */
export function subagentOf(ev) {
  return typeof ev.subagentRunId === "string" ? ev.subagentRunId : null;
}

/** A one-line summary of an event for the timeline. */
export function summarize(ev) {
  const q = (s) => JSON.stringify(truncate(s, 48));
  switch (ev.type) {
    case "RUN_STARTED": return `run ${truncate(ev.runId, 12)}`;
    case "RUN_FINISHED": return isObject(ev.outcome) ? ev.outcome.type : "success";
    case "RUN_ERROR": return truncate(ev.message, 80);
    case "TEXT_MESSAGE_CONTENT": case "REASONING_MESSAGE_CONTENT": case "TOOL_CALL_ARGS": return q(ev.delta ?? "");
    case "TEXT_MESSAGE_CHUNK": case "REASONING_MESSAGE_CHUNK": return ev.delta !== undefined ? q(ev.delta) : ev.messageId ?? "";
    case "TOOL_CALL_CHUNK": return [ev.toolCallName, ev.delta !== undefined ? q(ev.delta) : null].filter(Boolean).join(" ");
    case "TOOL_CALL_START": return `${ev.toolCallName} (${ev.toolCallId})`;
    case "TOOL_CALL_RESULT": return typeof ev.content === "string" ? q(ev.content) : `${Array.isArray(ev.content) ? ev.content.length : 0} parts`;
    case "STATE_DELTA": return Array.isArray(ev.delta) ? ev.delta.map((o) => `${o?.op} ${o?.path}`).join(", ") : "";
    case "ACTIVITY_DELTA": return `${ev.activityType}: ` + (Array.isArray(ev.patch) ? ev.patch.map((o) => `${o?.op} ${o?.path}`).join(", ") : "");
    case "ACTIVITY_SNAPSHOT": return ev.activityType;
    case "MESSAGES_SNAPSHOT": return `${Array.isArray(ev.messages) ? ev.messages.length : 0} messages`;
    case "STEP_STARTED": case "STEP_FINISHED": return ev.stepName;
    case "SUBAGENT_STARTED": return `${ev.name} (${ev.subagentRunId})`;
    case "SUBAGENT_FINISHED": return `${ev.subagentRunId}${isObject(ev.outcome) ? " " + ev.outcome.type : ""}`;
    case "SUBAGENT_ERROR": return `${ev.subagentRunId}: ${truncate(ev.message, 60)}`;
    case "CUSTOM": return ev.name;
    case "RAW": return ev.source ?? "";
    case "REASONING_ENCRYPTED_VALUE": return `${ev.subtype} ${ev.entityId}`;
    default: return ev.messageId ?? ev.toolCallId ?? "";
  }
}
