// A plain file of the contract with no imports of its own: bundled into the package when it is built.
import { truncationMarker } from '../../contract/src/truncation-marker';
import { eventProblems, eventTooLarge } from './event-validation';
import { InvalidToolEventError } from './tool-history-errors';

/**
 * The one key of the object that stands for a call's arguments cut to fit:
 * `{ "truncatedArguments": "<the start of their JSON text>…[truncated N chars]" }`.
 * Arguments must stay a JSON object (the contract says so, and so do the
 * providers' tool-call formats), so the cut text is wrapped rather than sent
 * as it is.
 */
export const TRUNCATED_ARGUMENTS_KEY = 'truncatedArguments';

/**
 * The most characters (UTF-16 code units, as JavaScript counts them) a
 * result may have as text (a string result's text, another result's JSON
 * text): one limit for every tool, or per tool over a default, as the
 * service's policy file states its `maxResultChars`. A tool without a limit
 * of its own, or a result whose tool is unknown, gets `defaults` (none when
 * unset).
 */
export type MaxResultChars = number | { defaults?: number; tools?: Record<string, number> };

/** Throws a TypeError naming every value of the option that is not a whole number of characters, 1 or more. */
export function checkMaxResultChars(option: unknown): void {
  if (option === undefined) return;
  const problems: string[] = [];
  const check = (at: string, value: unknown) => {
    if (!(typeof value === 'number' && Number.isSafeInteger(value) && value >= 1))
      problems.push(`${at}: must be a whole number of characters, 1 or more (got ${JSON.stringify(value) ?? String(value)})`);
  };
  if (typeof option !== 'object' || option === null || Array.isArray(option)) check('maxResultChars', option);
  else {
    for (const [key, value] of Object.entries(option)) {
      if (key === 'defaults') {
        if (value !== undefined) check('maxResultChars.defaults', value);
      } else if (key === 'tools') {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) {
          problems.push('maxResultChars.tools: must be an object of tool names and their limits');
        } else {
          for (const [tool, limit] of Object.entries(value)) check(`maxResultChars.tools.${tool}`, limit);
        }
      } else problems.push(`maxResultChars.${key}: unknown key (allowed: defaults, tools)`);
    }
  }
  if (problems.length > 0) throw new TypeError(problems.join('; '));
}

/** The limit of a result of `toolName` (undefined: the tool is unknown): its tool's own, else the default. */
export function resultCharLimit(option: MaxResultChars | undefined, toolName: string | undefined): number | undefined {
  if (option === undefined || typeof option === 'number') return option;
  const tools = option.tools ?? {};
  return toolName !== undefined && Object.hasOwn(tools, toolName) ? tools[toolName] : option.defaults;
}

/**
 * The first `keep` characters of `text` and the truncation marker, with the
 * number of characters removed. Never keeps half of a surrogate pair: JSON
 * would carry the lone half as an escape, and the character would be lost
 * anyway.
 */
export function cutText(text: string, keep: number): string {
  let at = Math.max(0, Math.min(keep, text.length));
  if (at > 0 && at < text.length && isHighSurrogate(text.charCodeAt(at - 1)) && isLowSurrogate(text.charCodeAt(at))) at -= 1;
  return text.slice(0, at) + truncationMarker(text.length - at);
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** How large one event may be, and how long its result's text (the limit of the result's tool). */
export interface EventLimits {
  maxEventBytes: number;
  maxResultChars?: number;
}

const PAYLOAD_FIELD: Partial<Record<string, 'arguments' | 'result'>> = {
  ToolCallRequested: 'arguments',
  ToolResultReceived: 'result',
};

/**
 * The JSON to send for an event: checked against the contract first (an
 * invalid event throws InvalidToolEventError naming each problem), then, so
 * that a large payload does not fail the turn, a call's `arguments` or a
 * result's `result` that is over the result limit or makes the event larger
 * than `maxEventBytes` is cut, with the contract's truncation marker, to the
 * most that fits, and the event gets `originalBytes`: the payload's size in
 * bytes (UTF-8 JSON) before the cut. A result is cut as text (a JSON result
 * becomes a string, the start of its JSON text); arguments become
 * `{ "truncatedArguments": "<the start of their JSON text>…" }`. An event that
 * needs no cut is sent exactly as it is; one that cannot be made to fit
 * (the rest of it is over the limit) throws.
 */
export function serializeFittedEvent(event: Record<string, unknown>, limits: EventLimits): string {
  const problems = eventProblems(event);
  if (problems.length > 0) throw new InvalidToolEventError(problems);
  const json = JSON.stringify(event);
  const bytes = Buffer.byteLength(json);
  const field = PAYLOAD_FIELD[event.type as string];
  const charLimit = field === 'result' ? limits.maxResultChars : undefined;
  let text = charLimit === undefined ? undefined : textOf(event.result);
  const overCharLimit = text !== undefined && charLimit !== undefined && text.length > charLimit;
  if (!overCharLimit && bytes <= limits.maxEventBytes) return json;
  if (field === undefined) throw new InvalidToolEventError([eventTooLarge(bytes, limits.maxEventBytes)]);

  const payload = event[field];
  text ??= textOf(payload);
  const originalBytes = Buffer.byteLength(typeof payload === 'string' ? JSON.stringify(payload) : text);
  const wrap = field === 'arguments' ? (cut: string) => ({ [TRUNCATED_ARGUMENTS_KEY]: cut }) : (cut: string) => cut;
  // JSON.stringify adds no space: the event's size is the rest of it plus the cut payload's own JSON.
  const sizeOf = (cut: string) => Buffer.byteLength(JSON.stringify(wrap(cut)));
  const rest = Buffer.byteLength(JSON.stringify({ ...event, [field]: wrap(''), originalBytes })) - sizeOf('');
  // A cut keeps fewer characters than the whole text: even one removed gets its marker.
  const cap = overCharLimit ? charLimit! : text.length - 1;
  const keep = longestFittingCut(text, cap, limits.maxEventBytes - rest, sizeOf);
  if (keep === undefined) {
    throw new InvalidToolEventError([
      `${eventTooLarge(bytes, limits.maxEventBytes)}, and still is with its ${field} cut to the truncation marker alone: the rest of the event takes ${rest} bytes`,
    ]);
  }
  return JSON.stringify({ ...event, [field]: wrap(cutText(text, keep)), originalBytes });
}

/** A payload as the text a limit counts: a string's own text, anything else's JSON. */
function textOf(payload: unknown): string {
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

/**
 * The most characters of `text`, at most `cap`, that can be kept with the
 * marker within `budget` bytes; undefined when not even the marker alone
 * fits. A binary search: the size grows with what is kept, except that the
 * marker can lose a digit on the way, so the answer always fits and one more
 * character would not, which is within one character of the longest cut.
 */
function longestFittingCut(text: string, cap: number, budget: number, sizeOf: (cut: string) => number): number | undefined {
  const fits = (keep: number) => sizeOf(cutText(text, keep)) <= budget;
  if (cap < 0 || !fits(0)) return undefined;
  // Every character kept takes a byte of JSON or more: more than `budget` of them never fit.
  const upper = Math.min(cap, budget + 1);
  if (fits(upper)) return upper;
  let fitting = 0;
  let tooMany = upper;
  while (tooMany - fitting > 1) {
    const middle = fitting + Math.floor((tooMany - fitting) / 2);
    if (fits(middle)) fitting = middle;
    else tooMany = middle;
  }
  return fitting;
}
