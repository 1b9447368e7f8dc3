/** A JSON object (not an array, not null): what every keyed section of the policy file must be. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
