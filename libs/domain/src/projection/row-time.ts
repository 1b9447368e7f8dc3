/** A row's timestamp in milliseconds; NaN when it has none (every comparison with NaN is false). */
export const millisOf = (iso: string | null): number => (iso === null ? Number.NaN : Date.parse(iso));
