import { formatDuration, type DataKeyStore, type KeyStoreSummary, type RetentionPolicy } from '@toolhistory/domain';
import type { ExpiryStatus } from '@toolhistory/persistence';

export interface RetentionStatusReport {
  at: string;
  /** The policy's retention per level, as the policy file writes it. */
  policy: { defaults: string | null; tenants: Record<string, string>; channels: Record<string, string>; tools: Record<string, string> };
  /** Payload fields in the read model: due now, to expire later (the earliest when), removed so far. */
  payloads: ExpiryStatus;
  /** Data keys in the key store, by key-encryption key; those with an end of retention, and those due. */
  keys: KeyStoreSummary;
}

/**
 * `toolhistory retention status`: what the sweeper has to do now and next
 * (docs/adr/033). Due work left for long means no recorder is sweeping
 * (the recorder role runs the sweeper every RETENTION_SWEEP_INTERVAL).
 */
export class RetentionStatus {
  constructor(
    private readonly expiry: { status(now: Date): Promise<ExpiryStatus> },
    private readonly keys: DataKeyStore,
    private readonly policy: RetentionPolicy,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async execute(): Promise<RetentionStatusReport> {
    const at = this.now();
    const formatted = (rules: Record<string, number>) =>
      Object.fromEntries(Object.entries(rules).map(([k, ms]) => [k, formatDuration(ms)]));
    return {
      at: at.toISOString(),
      policy: {
        defaults: this.policy.defaults === undefined ? null : formatDuration(this.policy.defaults),
        tenants: formatted(this.policy.tenants),
        channels: formatted(this.policy.channels),
        tools: formatted(this.policy.tools),
      },
      payloads: await this.expiry.status(at),
      keys: await this.keys.summary(at.toISOString()),
    };
  }
}
