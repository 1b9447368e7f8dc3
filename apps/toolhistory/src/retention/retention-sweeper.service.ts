import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap, Optional } from '@nestjs/common';
import type { Pool } from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '@toolhistory/config';
import { PostgresPayloadExpiry } from '@toolhistory/persistence';
import type { Encryption } from '../encryption/open-encryption';
import type { ServiceMetrics } from '../observability/service-metrics';
import { APP_CONFIG, ENCRYPTION, METRICS, PG_POOL, ROOT_LOGGER } from '../tokens';
import { RetentionSweeper } from './retention-sweeper';

/** The retention sweeper in the recorder role, while payloads rest sealed (without keys there is nothing to expire). */
@Injectable()
export class RetentionSweeperService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private sweeper: RetentionSweeper | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    @Inject(METRICS) private readonly metrics: ServiceMetrics,
    @Optional() @Inject(ENCRYPTION) private readonly encryption: Encryption | null,
  ) {}

  onApplicationBootstrap(): void {
    const { encryption } = this;
    if (!encryption) return;
    this.sweeper = new RetentionSweeper({
      expiry: new PostgresPayloadExpiry(this.pool, encryption.vault),
      keys: encryption.keys,
      forget: (ids) => encryption.vault.forget(ids),
      counted: (outcome) => {
        this.metrics.payloadsExpired.inc(outcome.payloads);
        this.metrics.dataKeysDestroyed.inc({ reason: 'expiry' }, outcome.keysDestroyed);
      },
      log: this.logger,
    });
    this.sweeper.start(this.config.encryption.retentionSweepIntervalMs);
  }

  // Before the pools close (DatabaseModule shuts down after this module).
  async beforeApplicationShutdown(): Promise<void> {
    await this.sweeper?.stop();
  }
}
