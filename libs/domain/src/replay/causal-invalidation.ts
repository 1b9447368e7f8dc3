/**
 * Causal invalidation: a successful call of a mutating tool makes earlier
 * results of the tools it names stale (`cancel_order` makes the
 * `get_order` of the same order out of date), whatever their freshness
 * window says. The rules come from the policy file (`invalidates`); this
 * file reads them and applies them to a conversation's rows.
 */
import { isRecord } from '../policy/is-record';
import { millisOf as at } from '../projection/row-time';
import { invocationKeyString } from '../projection/read-model-keys';
import type { InvocationRow } from '../projection/read-model.types';
import { REDACTION_MARKER } from '../redaction/redact-text';
import { parseDefinitePath, PathStep, valueAtPath } from '../redaction/json-path';

/** One `match` entry: a value of the earlier call's arguments that must equal one of the mutating call's. */
export interface InvalidationMatch {
  /** As written in the policy, for messages. */
  earlierPath: string;
  earlier: readonly PathStep[];
  mutatingPath: string;
  mutating: readonly PathStep[];
}

/** `{"tool": "get_order", "match": {"$.orderId": "$.id"}}`: which earlier results a successful call makes stale. */
export interface InvalidationRule {
  tool: string;
  match: readonly InvalidationMatch[];
}

/** One marker anywhere in a text (REDACTION_MARKER is global, so stateful in test()). */
const HAS_MARKER = new RegExp(REDACTION_MARKER.source);

/**
 * Reads a tool's `invalidates` list; every problem is named by its place
 * (`tools.cancel_order.invalidates[0].match["$.orderId"]`). Paths name one
 * value each: a wildcard could reach several, and equality of several
 * values has no single meaning.
 */
export function parseInvalidationRules(at: string, value: unknown, problems: string[]): InvalidationRule[] {
  if (!Array.isArray(value) || value.length === 0) {
    problems.push(`${at}: must be a non-empty list of {"tool": <name>, "match": {<path in its arguments>: <path in these arguments>}}`);
    return [];
  }
  const rules: InvalidationRule[] = [];
  value.forEach((entry, i) => {
    const here = `${at}[${i}]`;
    if (!isRecord(entry)) {
      problems.push(`${here}: must be an object with "tool" and "match"`);
      return;
    }
    const before = problems.length;
    for (const key of Object.keys(entry))
      if (key !== 'tool' && key !== 'match') problems.push(`${here}.${key}: unknown key (allowed here: tool, match)`);
    if (typeof entry.tool !== 'string' || entry.tool.length === 0) problems.push(`${here}.tool: must be a tool name`);
    const match: InvalidationMatch[] = [];
    if (!isRecord(entry.match) || Object.keys(entry.match).length === 0) {
      problems.push(`${here}.match: must map at least one path in the earlier call's arguments to a path in this call's arguments`);
    } else {
      for (const [earlierPath, mutatingPath] of Object.entries(entry.match)) {
        const place = `${here}.match[${JSON.stringify(earlierPath)}]`;
        const earlier = parseDefinitePath(earlierPath);
        const mutating =
          typeof mutatingPath === 'string' ? parseDefinitePath(mutatingPath) : { ok: false as const, error: 'must be a path' };
        if (!earlier.ok) problems.push(`${place}: key ${earlier.error}`);
        if (!mutating.ok) problems.push(`${place}: value ${mutating.error}`);
        if (earlier.ok && mutating.ok)
          match.push({ earlierPath, earlier: earlier.steps, mutatingPath: mutatingPath as string, mutating: mutating.steps });
      }
    }
    if (problems.length === before) rules.push({ tool: entry.tool as string, match });
  });
  return rules;
}

/**
 * Equal as JSON values (object members in any order). A value holding a
 * redaction marker equals nothing: two different e-mail addresses both
 * read `[REDACTED:email]`.
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return false;
  const text = canonical(a);
  return !HAS_MARKER.test(text) && text === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isRecord(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * Which rows are invalidated at `asOf`, each with the mutating row that
 * invalidated it: the first (by the time its result was recorded) of the
 * mutations whose successful result was recorded by `asOf`, no earlier
 * than the row's own result, with every matched value equal. A mutation
 * counts in any run of the conversation, whatever replay shows of that run:
 * the change it made happened. An error result invalidates nothing, and a
 * row never invalidates itself.
 */
export function findInvalidations(
  invocations: readonly InvocationRow[],
  rulesOf: (toolName: string) => readonly InvalidationRule[] | undefined,
  asOf: number,
): Map<InvocationRow, InvocationRow> {
  const recordedBy = (row: InvocationRow) =>
    row.callEventId !== null && at(row.requestedAt) <= asOf && row.resultEventId !== null && at(row.completedAt) <= asOf;
  const mutations = invocations
    .filter((row) => row.toolName !== null && rulesOf(row.toolName) !== undefined && recordedBy(row) && row.isError !== true)
    .sort((a, b) => at(a.completedAt) - at(b.completedAt) || compareText(invocationKeyString(a), invocationKeyString(b)));
  const invalidated = new Map<InvocationRow, InvocationRow>();
  if (mutations.length === 0) return invalidated;
  for (const row of invocations) {
    if (row.toolName === null || !recordedBy(row)) continue;
    const completed = at(row.completedAt);
    const by = mutations.find(
      (m) =>
        m !== row &&
        at(m.completedAt) >= completed &&
        rulesOf(m.toolName!)!.some(
          (rule) =>
            rule.tool === row.toolName &&
            rule.match.every((p) => sameValue(valueAtPath(row.arguments, p.earlier), valueAtPath(m.arguments, p.mutating))),
        ),
    );
    if (by) invalidated.set(row, by);
  }
  return invalidated;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
