import { isRecord } from '../policy/is-record';
import { setJsonMember } from './json-member';
/**
 * The subset of JSONPath the policy file uses to name values to mask:
 * `$`, `.name`, `['name']`, `[n]`, `[*]` and `.*`. Parsed once at start-up;
 * a path outside the subset is an error naming it.
 */
export type PathStep = { kind: 'key'; key: string } | { kind: 'index'; index: number } | { kind: 'wildcard' };

export type ParsedPath = { ok: true; steps: PathStep[] } | { ok: false; error: string };

const STEP = /^(?:\.([A-Za-z_$][\w$-]*)|\.\*|\[\*\]|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\])/;

export function parseJsonPath(path: string): ParsedPath {
  if (!path.startsWith('$')) return { ok: false, error: `${JSON.stringify(path)} must start with $` };
  const steps: PathStep[] = [];
  let rest = path.slice(1);
  while (rest.length > 0) {
    const m = STEP.exec(rest);
    if (!m)
      return {
        ok: false,
        error: `${JSON.stringify(path)}: cannot read ${JSON.stringify(rest)} (supported: .name, ['name'], [n], [*], .*)`,
      };
    if (m[1] !== undefined) steps.push({ kind: 'key', key: m[1] });
    else if (m[2] !== undefined) steps.push({ kind: 'index', index: Number(m[2]) });
    else if (m[3] !== undefined || m[4] !== undefined) steps.push({ kind: 'key', key: (m[3] ?? m[4]).replace(/\\(.)/g, '$1') });
    else steps.push({ kind: 'wildcard' });
    rest = rest.slice(m[0].length);
  }
  if (steps.length === 0) return { ok: false, error: `${JSON.stringify(path)} names the whole document; name a field` };
  return { ok: true, steps };
}

/**
 * Returns a copy of `value` with every value the path reaches replaced by
 * `replacement`, and how many changed (one already equal to the replacement
 * does not count, so a second pass counts nothing). The input is not modified.
 */
export function replaceAtPath(value: unknown, steps: readonly PathStep[], replacement: unknown): { value: unknown; replaced: number } {
  if (steps.length === 0) return { value: replacement, replaced: value === replacement ? 0 : 1 };
  const [step, ...rest] = steps;
  if (Array.isArray(value)) {
    const indices =
      step.kind === 'wildcard' ? value.map((_, i) => i) : step.kind === 'index' && step.index < value.length ? [step.index] : [];
    if (indices.length === 0) return { value, replaced: 0 };
    let replaced = 0;
    const copy = [...value];
    for (const i of indices) {
      const r = replaceAtPath(copy[i], rest, replacement);
      copy[i] = r.value;
      replaced += r.replaced;
    }
    return { value: copy, replaced };
  }
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const keys =
      step.kind === 'wildcard'
        ? Object.keys(record)
        : step.kind === 'key' && Object.prototype.hasOwnProperty.call(record, step.key)
          ? [step.key]
          : [];
    if (keys.length === 0) return { value, replaced: 0 };
    let replaced = 0;
    const copy: Record<string, unknown> = { ...record };
    for (const k of keys) {
      const r = replaceAtPath(copy[k], rest, replacement);
      setJsonMember(copy, k, r.value);
      replaced += r.replaced;
    }
    return { value: copy, replaced };
  }
  return { value, replaced: 0 };
}

/** A path that names one value (no wildcard): what a rule reads a value with, rather than masks. */
export function parseDefinitePath(path: string): ParsedPath {
  const parsed = parseJsonPath(path);
  if (!parsed.ok) return parsed;
  if (parsed.steps.some((s) => s.kind === 'wildcard'))
    return { ok: false, error: `${JSON.stringify(path)} must name one value (no wildcard)` };
  return parsed;
}

/** The value a definite path reaches, or undefined. */
export function valueAtPath(value: unknown, steps: readonly PathStep[]): unknown {
  let current = value;
  for (const step of steps) {
    if (step.kind === 'index' && Array.isArray(current)) current = current[step.index];
    else if (step.kind === 'key' && isRecord(current) && Object.hasOwn(current, step.key)) current = current[step.key];
    else return undefined;
  }
  return current;
}
