import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { HealthEndpoint, ServingStatus } from './health-endpoint';
import type { KafkaMessaging } from '@toolhistory/messaging';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { HEALTH, HEALTH_PG_POOL, MESSAGING, ROOT_LOGGER } from '../tokens';

export const HEALTH_CHECK_INTERVAL_MS = 2_000;
const CHECK_TIMEOUT_MS = 1_500;
/**
 * Checks a dependency must fail in a row before it counts as unreachable: a
 * single late answer can be this process's own busy event loop (a timer
 * runs before the socket that holds the answer is read), not the dependency.
 */
export const FAILED_CHECKS_BEFORE_UNREACHABLE = 2;
export const SERVICE_NAMES = ['', 'toolhistory.v1.ToolHistory'];

/** Checks failed in a row, per dependency. */
export interface FailedChecks {
  database: number;
  broker: number;
}

/**
 * What health says after a check: until both dependencies first answer,
 * NOT_SERVING on any failure; once SERVING, NOT_SERVING only when a
 * dependency failed FAILED_CHECKS_BEFORE_UNREACHABLE checks in a row.
 */
export function servingAfter(current: ServingStatus, failedInARow: FailedChecks): ServingStatus {
  const needed = current === 'SERVING' ? FAILED_CHECKS_BEFORE_UNREACHABLE : 1;
  return failedInARow.database >= needed || failedInARow.broker >= needed ? 'NOT_SERVING' : 'SERVING';
}

const within = <T>(work: Promise<T>, ms: number): Promise<T> =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);

/**
 * grpc.health.v1.Health answers SERVING only while both PostgreSQL and
 * Kafka answer, so a load balancer stops sending turns to an instance that
 * cannot serve them. NOT_SERVING means a dependency is unreachable (failed
 * FAILED_CHECKS_BEFORE_UNREACHABLE checks in a row), never that the
 * instance is busy: the database is asked on a connection of its own
 * (HEALTH_PG_POOL), never behind the replay and audit reads, and overload
 * shows in the admission metrics and the optional readiness signal instead.
 */
@Injectable()
export class GrpcHealthService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer?: NodeJS.Timeout;
  private current: ServingStatus = 'NOT_SERVING';
  private draining = false;
  private readonly failedInARow: FailedChecks = { database: 0, broker: 0 };
  private readonly log: Logger;

  constructor(
    @Inject(HEALTH) private readonly health: HealthEndpoint,
    @Inject(HEALTH_PG_POOL) private readonly pool: Pool,
    @Inject(MESSAGING) private readonly messaging: KafkaMessaging,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'health' });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), HEALTH_CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  beforeApplicationShutdown(): void {
    this.drain();
  }

  /** NOT_SERVING from now on: the first step of a shutdown, so load balancers stop sending calls. */
  drain(): void {
    this.draining = true;
    clearInterval(this.timer);
    this.set('NOT_SERVING');
  }

  /** Ends the health Watch streams (they were told NOT_SERVING), so the server can stop. */
  endWatches(): number {
    return this.health.endWatches();
  }

  private async check(): Promise<void> {
    const [database, broker] = await Promise.all([this.databaseAnswers(), this.brokerAnswers()]);
    if (this.draining) return;
    this.failedInARow.database = database ? 0 : this.failedInARow.database + 1;
    this.failedInARow.broker = broker ? 0 : this.failedInARow.broker + 1;
    this.set(servingAfter(this.current, this.failedInARow), { database, broker });
  }

  private async databaseAnswers(): Promise<boolean> {
    try {
      await within(this.pool.query('SELECT 1'), CHECK_TIMEOUT_MS);
      return true;
    } catch {
      return false;
    }
  }

  private brokerAnswers(): Promise<boolean> {
    return this.messaging.answers(CHECK_TIMEOUT_MS);
  }

  private set(status: ServingStatus, detail?: Record<string, boolean>): void {
    if (status !== this.current) this.log.info({ status, ...detail }, 'health changed');
    this.current = status;
    for (const name of SERVICE_NAMES) this.health.setStatus(name, status);
  }
}
