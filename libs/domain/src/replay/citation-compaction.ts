/**
 * Citation compaction: a search tool's result lists sources the run's final
 * answer cites as `[sourceN]`; once the run completed and said which numbers
 * its answer cites (RunCompleted.citedSources), replay keeps only the cited
 * items. The numbers are never changed, so every `[sourceN]` in the stored
 * answers still points at the item it meant. The rule comes from the policy
 * file (`citations`, tools only); this file reads it and applies it to one
 * result.
 */
import type { JsonValue } from '@toolhistory/contract';
import { isRecord } from '../policy/is-record';
import { setJsonMember } from '../redaction/json-member';
import { parseDefinitePath, parseJsonPath, PathStep, valueAtPath } from '../redaction/json-path';
import type { InvocationRow, RunRow, RunStatus } from '../projection/read-model.types';

/** `{"items": "$.results[*]", "number": "$.sourceNumber"}`: where a result lists its sources, and where each says its number. */
export interface CitationRule {
  /** As written in the policy, for messages. */
  itemsPath: string;
  /** The path to the list (the written path without its final `[*]`). */
  list: readonly PathStep[];
  numberPath: string;
  number: readonly PathStep[];
}

const CITATION_KEYS = ['items', 'number'];

/** Reads a tool's `citations` rule; every problem is named by its place (`tools.web_search.citations.items`). */
export function parseCitationRule(at: string, value: unknown, problems: string[]): CitationRule | undefined {
  if (!isRecord(value)) {
    problems.push(`${at}: must be an object {"items": <path to the listed items, ending with [*]>, "number": <path in each item>}`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(value))
    if (!CITATION_KEYS.includes(key)) problems.push(`${at}.${key}: unknown key (allowed here: ${CITATION_KEYS.join(', ')})`);
  const list = itemsListPath(value.items);
  if (!list.ok) problems.push(`${at}.items: ${list.error}`);
  const number = numberInItemPath(value.number);
  if (!number.ok) problems.push(`${at}.number: ${number.error}`);
  if (problems.length > before || !list.ok || !number.ok) return undefined;
  return { itemsPath: value.items as string, list: list.steps, numberPath: value.number as string, number: number.steps };
}

type StepsOrError = { ok: true; steps: PathStep[] } | { ok: false; error: string };

/** One wildcard, at the end: it names the list whose items are the sources. */
function itemsListPath(path: unknown): StepsOrError {
  if (typeof path !== 'string') return { ok: false, error: 'must be a path such as "$.results[*]"' };
  const parsed = parseJsonPath(path);
  if (!parsed.ok) return parsed;
  const { steps } = parsed;
  const wildcards = steps.filter((s) => s.kind === 'wildcard').length;
  if (steps[steps.length - 1].kind !== 'wildcard' || !path.endsWith('[*]'))
    return { ok: false, error: `${JSON.stringify(path)} must end with [*]` };
  if (wildcards > 1) return { ok: false, error: `${JSON.stringify(path)} must have one wildcard, the final [*]` };
  // Compaction leaves a result that is not a JSON object as it is, so the list must be a member of one.
  if (steps.length === 1) return { ok: false, error: `${JSON.stringify(path)} must name a list inside the result, such as "$.results[*]"` };
  return { ok: true, steps: steps.slice(0, -1) };
}

function numberInItemPath(path: unknown): StepsOrError {
  if (typeof path !== 'string') return { ok: false, error: 'must be a path such as "$.sourceNumber"' };
  return parseDefinitePath(path);
}

const DIGITS = /^\d{1,15}$/;

/**
 * An item's source number: a whole number 0 or more, or a string of digits
 * ("3" is source 3); anything else has no readable number.
 */
export function sourceNumberOf(item: unknown, rule: Pick<CitationRule, 'number'>): number | undefined {
  const value = valueAtPath(item, rule.number);
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === 'string' && DIGITS.test(value)) return Number(value);
  return undefined;
}

export interface CompactedResult {
  result: JsonValue;
  /** How many items were left out (0: the result is the one recorded). */
  compactedItems: number;
}

/**
 * The result with only the cited items of its list: kept items keep their
 * order and their numbers, everything else of the result is untouched. A
 * result that is not a JSON object (or the JSON text of one, see
 * compactJsonText), or whose path reaches no list, is left as it is; an
 * item without a readable number is kept, since it may be what the answer
 * cites. The input is not modified.
 */
export function compactCitedItems(result: JsonValue, rule: CitationRule, citedSources: ReadonlySet<number>): CompactedResult {
  if (typeof result === 'string') return compactJsonText(result, rule, citedSources);
  const unchanged = { result, compactedItems: 0 };
  if (!isRecord(result)) return unchanged;
  const items = valueAtPath(result, rule.list);
  if (!Array.isArray(items)) return unchanged;
  const kept = items.filter((item) => {
    const number = sourceNumberOf(item, rule);
    return number === undefined || citedSources.has(number);
  });
  if (kept.length === items.length) return unchanged;
  return { result: withListReplaced(result, rule.list, kept) as JsonValue, compactedItems: items.length - kept.length };
}

/**
 * A text result that is the JSON text of an object: LangChain and other
 * frameworks hand a tool's object to the model as its JSON text, and that
 * text is what they record. It is compacted as the object and written back
 * as JSON text; when nothing is left out, the text is kept as recorded.
 * Text that is not a JSON object, or holds a number JavaScript cannot keep
 * exactly (an integer past 2^53, or past the largest double), is left as it
 * is, so no value a kept item holds is changed.
 */
function compactJsonText(text: string, rule: CitationRule, citedSources: ReadonlySet<number>): CompactedResult {
  const unchanged = { result: text, compactedItems: 0 };
  if (!text.trimStart().startsWith('{')) return unchanged;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return unchanged;
  }
  if (!isRecord(parsed) || holdsInexactNumber(parsed)) return unchanged;
  const compacted = compactCitedItems(parsed as JsonValue, rule, citedSources);
  return compacted.compactedItems === 0
    ? unchanged
    : { result: JSON.stringify(compacted.result), compactedItems: compacted.compactedItems };
}

function holdsInexactNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value));
  if (Array.isArray(value)) return value.some(holdsInexactNumber);
  if (isRecord(value)) return Object.values(value).some(holdsInexactNumber);
  return false;
}

/** A copy of `value` along the path with the list at its end replaced; the path is known to reach it. */
function withListReplaced(value: unknown, steps: readonly PathStep[], list: unknown[]): unknown {
  if (steps.length === 0) return list;
  const [step, ...rest] = steps;
  if (step.kind === 'index') {
    const copy = [...(value as unknown[])];
    copy[step.index] = withListReplaced(copy[step.index], rest, list);
    return copy;
  }
  const key = (step as { key: string }).key;
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...record };
  setJsonMember(copy, key, withListReplaced(record[key], rest, list));
  return copy;
}

/** What a kept call's result is compacted by: its tool's rule and the numbers the answer it fed cites. */
export interface CallCitations {
  rule: CitationRule;
  citedSources: ReadonlySet<number>;
}

/**
 * The citations a call's result is compacted by, if any: its tool's
 * citations rule is given, the result is a successful one, and the run the result
 * was recorded in (the call's own, or the run that resumed it after a
 * person's decision: the run whose answer the result fed) had completed
 * by asOf saying what its answer cites.
 */
export function callCitations(
  call: { row: Pick<InvocationRow, 'runId' | 'resultRunId' | 'isError'>; hasResult: boolean },
  rule: CitationRule | undefined,
  runs: ReadonlyMap<string, { run: Pick<RunRow, 'citedSources'>; status: RunStatus }>,
): CallCitations | undefined {
  if (rule === undefined || !call.hasResult || call.row.isError === true) return undefined;
  const fed = runs.get(call.row.resultRunId ?? call.row.runId);
  if (fed === undefined || fed.status !== 'completed' || fed.run.citedSources === null) return undefined;
  return { rule, citedSources: new Set(fed.run.citedSources) };
}
