import type { AppConfig } from '@toolhistory/config';
import { type AdmissionEvents, AdmissionLimiter, type AdmissionState, type RefusalReason } from './admission-limiter';

/**
 * The kinds of reads, each with limits of its own: turn-start replays are
 * many and short; audit reads (listings, search, usage, a watch's snapshot)
 * are few and may take seconds, and must not take replay's slots.
 */
export const ADMISSION_LANES = ['replay', 'audit'] as const;
export type AdmissionLane = (typeof ADMISSION_LANES)[number];

export type AdmissionOutcome = 'admitted' | 'queued' | 'refused' | 'dropped';

/** Where the admission metrics go (the service's metrics; nothing in tests that do not look). */
export interface AdmissionRecorder {
  call(lane: AdmissionLane, tenant: string, outcome: AdmissionOutcome): void;
  refusal(lane: AdmissionLane, reason: RefusalReason): void;
  waited(lane: AdmissionLane, seconds: number): void;
}

/** The label a tenant is counted under: the first `limit` tenants seen by name, every later one as `other`. */
export class TenantLabels {
  static readonly OTHER = 'other';
  private readonly named = new Set<string>();

  constructor(private readonly limit: number) {}

  of(tenant: string): string {
    if (this.named.has(tenant)) return tenant;
    if (this.named.size >= this.limit) return TenantLabels.OTHER;
    this.named.add(tenant);
    return tenant;
  }
}

/** How long after a refusal the instance still counts as overloaded (the optional readiness signal). */
export const OVERLOADED_FOR_MS = 2_000;

/**
 * Admission control of this instance's reads (docs/adr/030-admission-control.md):
 * one limiter per lane, their events counted per tenant, and whether the
 * instance refused anything lately.
 */
export class ReadAdmission {
  readonly lanes: Readonly<Record<AdmissionLane, AdmissionLimiter>>;
  private lastRefusalAt = Number.NEGATIVE_INFINITY;

  constructor(
    config: Pick<AppConfig['admission'], 'replay' | 'audit' | 'metricsTenants'>,
    recorder?: AdmissionRecorder,
    private readonly now: () => number = Date.now,
  ) {
    const labels = new TenantLabels(config.metricsTenants);
    const events = (lane: AdmissionLane): AdmissionEvents => ({
      admitted: (tenant, waitedMs) => {
        recorder?.call(lane, labels.of(tenant), 'admitted');
        if (waitedMs > 0) recorder?.waited(lane, waitedMs / 1000);
      },
      queued: (tenant) => recorder?.call(lane, labels.of(tenant), 'queued'),
      refused: (tenant, reason) => {
        this.lastRefusalAt = this.now();
        recorder?.call(lane, labels.of(tenant), 'refused');
        recorder?.refusal(lane, reason);
      },
      dropped: (tenant) => recorder?.call(lane, labels.of(tenant), 'dropped'),
    });
    this.lanes = {
      replay: new AdmissionLimiter(config.replay, events('replay'), now),
      audit: new AdmissionLimiter(config.audit, events('audit'), now),
    };
  }

  /** Refused a call within the last OVERLOADED_FOR_MS. */
  overloaded(): boolean {
    return this.now() - this.lastRefusalAt < OVERLOADED_FOR_MS;
  }

  state(): Record<AdmissionLane, AdmissionState> {
    return { replay: this.lanes.replay.state(), audit: this.lanes.audit.state() };
  }
}
