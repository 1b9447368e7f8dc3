/** Audit queries without a deadline from the caller are bounded by this. */
export const DEFAULT_AUDIT_BUDGET_MS = 30_000;
