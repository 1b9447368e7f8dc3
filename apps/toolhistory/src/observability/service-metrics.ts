import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ErrorCode } from '@toolhistory/errors';
import type { RecordedSummary } from '@toolhistory/domain';
import type { ReplayCacheStats } from '../replay/caching-replay-reader';
import type { AdmissionState, RefusalReason } from '../admission/admission-limiter';
import type { AdmissionLane, AdmissionOutcome, AdmissionRecorder } from '../admission/read-admission';

/** A gauge's samples, read when scraped. */
export type Samples<L extends string> = Array<{ labels: Partial<Record<L, string | number>>; value: number }>;
type SampleSource<L extends string> = () => Samples<L> | Promise<Samples<L>>;

/** Counters kept elsewhere (monotonic totals since start), exposed as Prometheus counters. */
export type Totals<L extends string> = SampleSource<L>;

const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Every metric the service exposes, declared in one place. Labels are
 * bounded: event types, error codes, redaction kinds, RPC methods and
 * statuses, partitions, pools; never a conversation or run id, and a
 * tenant only in the admission counts, at most ADMISSION_METRICS_TENANTS of
 * them by name (the rest as `other`). Values owned by other components
 * (pools, the replay cache, consumer lag, admission) are read from them
 * when scraped.
 */
export class ServiceMetrics {
  readonly registry = new Registry();

  readonly eventsRecorded = new Counter({
    name: 'toolhistory_events_recorded_total',
    help: 'Events appended to the event store, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  readonly duplicates = new Counter({
    name: 'toolhistory_events_duplicate_total',
    help: 'Events received again (same eventId) and not recorded twice',
    registers: [this.registry],
  });

  readonly batches = new Histogram({
    name: 'toolhistory_recorder_batch_duration_seconds',
    help: 'Time to record one partition batch, retries included, by outcome',
    labelNames: ['outcome'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly batchRetries = new Counter({
    name: 'toolhistory_recorder_batch_retries_total',
    help: 'Partition batches retried after a failure, by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly deadLetters = new Counter({
    name: 'toolhistory_dead_letters_total',
    help: 'Messages set aside to the dead-letter topic, by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly redactions = new Counter({
    name: 'toolhistory_redactions_total',
    help: 'Redaction markers applied to recorded events, by kind (detector kind, json_path, truncated, persist_metadata, persist_none)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly payloadsExpired = new Counter({
    name: 'toolhistory_payloads_expired_total',
    help: 'Payloads (arguments, results, approval reasons) removed from the read model and search when their retention ended; their data keys destroyed',
    registers: [this.registry],
  });

  readonly dataKeysDestroyed = new Counter({
    name: 'toolhistory_data_keys_destroyed_total',
    help: 'Data keys destroyed in the key store (crypto-shredding), by reason: expiry (retention) or erasure',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly grpcHandling = new Histogram({
    name: 'toolhistory_grpc_server_handling_seconds',
    help: 'gRPC calls served, by method and status, from the call reaching the server to its status',
    labelNames: ['method', 'code'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });

  readonly admissionCalls = new Counter({
    name: 'toolhistory_admission_calls_total',
    help: 'Reads met by admission control, by lane (replay, audit), tenant and outcome: admitted (at once or after waiting), queued (waited for a slot), refused (RESOURCE_EXHAUSTED with a pushback), dropped (the caller went away while it waited: never worked on)',
    labelNames: ['lane', 'tenant', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly admissionRefusals = new Counter({
    name: 'toolhistory_admission_refusals_total',
    help: 'Reads refused by admission control, by lane and reason: full (no slot, no room to wait), waited (no slot within the wait allowed), shed (a tenant with fewer waiting took its place)',
    labelNames: ['lane', 'reason'] as const,
    registers: [this.registry],
  });

  readonly gcFullCollectionsStarted = new Counter({
    name: 'toolhistory_gc_full_collections_started_total',
    help: 'Full collections the process had V8 start after GC_CALLS_PER_FULL_COLLECTION gRPC calls without one (docs/adr/036-full-collections-by-calls.md)',
    registers: [this.registry],
  });

  readonly admissionStreamRefusals = new Counter({
    name: 'toolhistory_admission_refused_at_stream_total',
    help: 'Reads refused from their HTTP/2 headers, before grpc-js made a call of them (also counted in toolhistory_admission_refusals_total as full), by lane',
    labelNames: ['lane'] as const,
    registers: [this.registry],
  });

  readonly admissionWait = new Histogram({
    name: 'toolhistory_admission_queue_wait_seconds',
    help: 'Time admitted reads waited for a slot, by lane (those admitted at once are not counted)',
    labelNames: ['lane'] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });

  private consumerLagSource?: SampleSource<'topic' | 'partition'>;
  private admissionSource?: () => Record<AdmissionLane, AdmissionState>;
  private projectionLagSource?: SampleSource<'projection'>;
  private poolSource?: SampleSource<'pool' | 'state'>;
  private replayCacheSource?: () => ReplayCacheStats;
  private subscriptionsSource?: () => number;

  constructor({ defaultMetrics = true } = {}) {
    if (defaultMetrics) collectDefaultMetrics({ register: this.registry });
    this.gauge(
      'toolhistory_consumer_lag_messages',
      'Messages of the events topic not yet recorded: the broker end offset minus the offset committed in PostgreSQL',
      ['topic', 'partition'],
      () => this.consumerLagSource?.() ?? [],
    );
    this.gauge(
      'toolhistory_projection_lag_events',
      'Events recorded but not yet applied to a projection',
      ['projection'],
      () => this.projectionLagSource?.() ?? [],
    );
    this.gauge(
      'toolhistory_db_pool_connections',
      'PostgreSQL pool connections, by pool and state (total, idle, waiting requests)',
      ['pool', 'state'],
      () => this.poolSource?.() ?? [],
    );
    const admission =
      (read: (state: AdmissionState) => number): SampleSource<'lane'> =>
      () =>
        Object.entries(this.admissionSource?.() ?? {}).map(([lane, state]) => ({ labels: { lane }, value: read(state) }));
    this.gauge(
      'toolhistory_admission_in_flight',
      'Reads worked on now, by lane',
      ['lane'],
      admission((a) => a.inFlight),
    );
    this.gauge(
      'toolhistory_admission_queued',
      'Reads waiting for a slot now, by lane',
      ['lane'],
      admission((a) => a.queued),
    );
    this.gauge(
      'toolhistory_admission_retry_after_ms',
      'The pushback (grpc-retry-pushback-ms) a read refused now would get, by lane',
      ['lane'],
      admission((a) => a.retryAfterMs),
    );
    this.gauge('toolhistory_subscriptions_open', 'SubscribeToolEvents streams open on this instance', [], () =>
      this.subscriptionsSource ? [{ labels: {}, value: this.subscriptionsSource() }] : [],
    );
    // The replay cache's own figures, read when scraped (nothing while the gRPC role is not in this process).
    const replay =
      <L extends string>(read: (stats: ReplayCacheStats) => Samples<L>) =>
      () => {
        const stats = this.replayCacheSource?.();
        return stats ? read(stats) : [];
      };
    const one = (value: number) => [{ labels: {}, value }];
    this.gauge(
      'toolhistory_replay_cache_bytes',
      'Bytes the replay cache holds (rows and computed histories)',
      [],
      replay((r) => one(r.bytes)),
    );
    this.gauge(
      'toolhistory_replay_cache_conversations',
      'Conversations the replay cache holds',
      [],
      replay((r) => one(r.conversations)),
    );
    this.gauge(
      'toolhistory_replay_change_feed_current',
      '1 while read-model change notifications are heard (cached conversations need no version check)',
      [],
      replay((r) => one(r.feedCurrent ? 1 : 0)),
    );
    this.counter(
      'toolhistory_replay_requests_total',
      'Replay requests answered, by how: a cached history, cached rows, or a read of the database',
      ['answer'],
      replay((r) => [
        { labels: { answer: 'cached_history' }, value: r.historyHits },
        { labels: { answer: 'cached_rows' }, value: r.rowHits },
        { labels: { answer: 'read' }, value: r.reads },
      ]),
    );
    this.counter(
      'toolhistory_replay_version_checks_total',
      'Replay requests that confirmed a cached conversation against the database',
      [],
      replay((r) => one(r.versionChecks)),
    );
    this.counter(
      'toolhistory_replay_refused_total',
      'Replay requests refused because too many were waiting on the database',
      [],
      replay((r) => one(r.refused)),
    );
  }

  /** Counts what one recorded partition batch held. */
  recordedBatch(recorded: RecordedSummary, duplicates: number, deadLetterCodes: readonly ErrorCode[]): void {
    for (const [type, n] of Object.entries(recorded.byType)) this.eventsRecorded.inc({ type }, n);
    for (const [kind, n] of Object.entries(recorded.redactions)) this.redactions.inc({ kind }, n);
    if (duplicates > 0) this.duplicates.inc(duplicates);
    for (const code of deadLetterCodes) this.deadLetters.inc({ code });
  }

  /** Where admission control reports what it did with each read. */
  admissionRecorder(): AdmissionRecorder {
    return {
      call: (lane: AdmissionLane, tenant: string, outcome: AdmissionOutcome) => this.admissionCalls.inc({ lane, tenant, outcome }),
      refusal: (lane: AdmissionLane, reason: RefusalReason) => this.admissionRefusals.inc({ lane, reason }),
      waited: (lane: AdmissionLane, seconds: number) => this.admissionWait.observe({ lane }, seconds),
    };
  }

  observeAdmission(source: () => Record<AdmissionLane, AdmissionState>): void {
    this.admissionSource = source;
  }

  observeConsumerLag(source: SampleSource<'topic' | 'partition'>): void {
    this.consumerLagSource = source;
  }

  observeProjectionLag(source: SampleSource<'projection'>): void {
    this.projectionLagSource = source;
  }

  observePools(source: SampleSource<'pool' | 'state'>): void {
    this.poolSource = source;
  }

  observeReplayCache(source: () => ReplayCacheStats): void {
    this.replayCacheSource = source;
  }

  observeSubscriptions(source: () => number): void {
    this.subscriptionsSource = source;
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private gauge<L extends string>(name: string, help: string, labelNames: L[], read: SampleSource<L>): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const { labels, value } of await read()) this.set(labels, value);
      },
    });
  }

  /** A counter whose total is kept by its owner: each scrape adds what grew since the last. */
  private counter<L extends string>(name: string, help: string, labelNames: L[], read: Totals<L>): void {
    const seen = new Map<string, number>();
    new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        for (const { labels, value } of await read()) {
          const key = JSON.stringify(labels);
          const grown = value - (seen.get(key) ?? 0);
          if (grown > 0) this.inc(labels, grown);
          else if (!seen.has(key)) this.inc(labels, 0);
          seen.set(key, value);
        }
      },
    });
  }
}
