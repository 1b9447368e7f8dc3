import type { IHeaders } from 'kafkajs';

/** A message's headers as text, by name: the first value of a repeated header. */
export function textHeaders(headers: IHeaders | undefined): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const first = Array.isArray(value) ? value[0] : value;
    out[name] = first === undefined ? undefined : first.toString();
  }
  return out;
}
