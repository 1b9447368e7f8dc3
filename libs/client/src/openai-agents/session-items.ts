/**
 * How ToolHistorySession reads the items the SDK gives it (a batch's rounds
 * of calls, a response's text, a call's output and arguments), and the id it
 * keeps on the items it adds to the inner session.
 */
import type { AgentInputItem } from '@openai/agents';
import type { JsonObject } from '../tool-event-types';

/**
 * The key under which the inner session keeps the id toolhistory knows each
 * of its items by (the replay places the recorded calls by these ids).
 * getItems and popItem return the items without it.
 */
export const MESSAGE_ID_KEY = 'toolhistoryMessageId';

/** An SDK item, read by its fields. */
export type SessionItem = AgentInputItem & Record<string, unknown>;

/**
 * The tool items of a batch by model response: a response's reasoning and calls, then
 * their results (the SDK may save a whole run at once: a call after a
 * result is the next response's).
 */
export function roundsOf(items: readonly SessionItem[]): SessionItem[][] {
  const grouped: SessionItem[][] = [];
  for (const item of items) {
    const current = grouped.at(-1);
    const answered = current?.some((entry) => entry.type === 'function_call_result') ?? false;
    const starts = item.type === 'function_call' || item.type === 'reasoning' || isMessageOf(item, 'assistant');
    if (current === undefined || (starts && answered)) grouped.push([item]);
    else current.push(item);
  }
  return grouped;
}

/** Whether the model's response the item at `at` belongs to asked for calls: the next item that is neither its reasoning nor its text is a function call. */
export function callsFollow(items: readonly SessionItem[], at: number): boolean {
  const next = items.slice(at + 1).find((item) => item.type !== 'reasoning' && !isMessageOf(item, 'assistant'));
  return next?.type === 'function_call';
}

/** The text of the assistant messages among a response's items: their output text parts, joined. */
export function messageText(items: readonly SessionItem[]): string {
  return items
    .filter((item) => isMessageOf(item, 'assistant'))
    .flatMap((item) => (Array.isArray(item.content) ? (item.content as Array<{ type?: unknown; text?: unknown }>) : []))
    .map((part) => (part.type === 'output_text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** Whether the item is a message of `role` (an item without a type is a message). */
export function isMessageOf(item: SessionItem, role: string): boolean {
  return item.role === role && (item.type === undefined || item.type === 'message');
}

/** The id the session gave the item in the inner session (MESSAGE_ID_KEY), if any. */
export function messageIdOf(item: SessionItem): string | undefined {
  const id = item[MESSAGE_ID_KEY];
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** The id of the last user message among the inner session's items. */
export function lastUserMessageId(items: readonly SessionItem[]): string | undefined {
  for (let at = items.length - 1; at >= 0; at -= 1) if (isMessageOf(items[at], 'user')) return messageIdOf(items[at]);
  return undefined;
}

/** The item as the inner session keeps it: with its id under MESSAGE_ID_KEY. */
export function withId(item: AgentInputItem, messageId: string): AgentInputItem {
  return { ...item, [MESSAGE_ID_KEY]: messageId } as unknown as AgentInputItem;
}

/** The item as the SDK is given it back: without MESSAGE_ID_KEY. */
export function withoutId(item: AgentInputItem): AgentInputItem {
  if (!(MESSAGE_ID_KEY in item)) return item;
  const { [MESSAGE_ID_KEY]: _id, ...rest } = item as SessionItem;
  return rest as AgentInputItem;
}

/** The text the SDK sent the model for a call's output, when it was text. */
export function outputText(output: SessionItem): string | undefined {
  const sent = output.output as unknown;
  if (typeof sent === 'string') return sent;
  const part = sent as { type?: unknown; text?: unknown } | null;
  return typeof part === 'object' && part !== null && part.type === 'text' && typeof part.text === 'string' ? part.text : undefined;
}

/** A replayed item's identity: a call's or output's call id, a reasoning item's or round text's own id. */
export function replayedKey(item: AgentInputItem): string {
  const entry = item as { type?: unknown; callId?: unknown; id?: unknown };
  return `${String(entry.type)}:${String(entry.callId ?? entry.id)}`;
}

/** A call's arguments as a JSON object; text that is not one as `{ _raw: text }`. */
export function parseArguments(text: string): JsonObject {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as JsonObject;
  } catch {
    // not JSON: kept as it was
  }
  return { _raw: text };
}
