/** Words the replay and redaction parts of the policy file share. */
export type PersistMode = 'full' | 'metadata' | 'none';
export const PERSIST_MODES: readonly PersistMode[] = ['full', 'metadata', 'none'];

/** Keys valid in `defaults` and tool rules whose values the redaction parser checks. */
export const REDACTION_KEYS = ['maskArguments', 'maskResult', 'detectors', 'maxResultChars'] as const;

/** Keys valid in `defaults`, channel and tool rules whose values the retention parser checks (`tenants` holds only these). */
export const RETENTION_KEYS = ['retention'] as const;
