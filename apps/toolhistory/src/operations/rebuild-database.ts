import type { AppConfig } from '@toolhistory/config';
import { EventStoreDbEventStore } from '@toolhistory/eventstoredb';
import { connectionUrl, createPool, PostgresEventStore, PostgresReadModelRebuilder, runMigrations } from '@toolhistory/persistence';
import { RebuildReadModel } from '../rebuild/rebuild-read-model';
import { OpenedEventStore } from '@toolhistory/domain';
import { o200kTokens } from '@toolhistory/tokenizer';
import { openEncryption } from '../encryption/open-encryption';

/**
 * Rebuilds the read model from the event store (the one
 * EVENT_STORE names) into fresh tables and swaps them in; running services
 * keep answering.
 */
export async function rebuildDatabase(config: AppConfig, write: (line: string) => void): Promise<void> {
  await runMigrations(connectionUrl(config.database), config.database.schema);
  // A rebuild's statements (copying, indexing) run long by design: no statement limit.
  const pool = createPool({
    ...config.database,
    applicationName: 'toolhistory-rebuild',
    statementTimeoutMs: 0,
    idleInTransactionTimeoutMs: 0,
  });
  const esdb =
    config.eventStore.kind === 'eventstoredb' && config.eventStore.url ? EventStoreDbEventStore.connect(config.eventStore.url) : null;
  // Sealed payloads are opened to count tokens and make search documents, and their seals noted on the rows again.
  const encryption = await openEncryption(config).catch(async (error: unknown) => {
    await esdb?.close();
    await pool.end();
    throw error;
  });
  try {
    const stored = esdb ?? new PostgresEventStore(pool);
    const events = encryption === null ? stored : new OpenedEventStore(stored, encryption.vault, Date.now);
    let reported = 0;
    const rebuilder = new PostgresReadModelRebuilder(pool, events, esdb ? 'row' : 'events', o200kTokens, encryption?.vault ?? null);
    const outcome = await new RebuildReadModel(events, rebuilder).execute({
      onProgress: (applied, position) => {
        if (applied - reported < 100_000) return;
        reported = applied;
        write(`applied ${applied} events (position ${position})`);
      },
    });
    write(
      `rebuilt the read model of schema ${config.database.schema} from ${outcome.events} events up to position ${outcome.position} ` +
        `in ${(outcome.durationMs / 1000).toFixed(1)} s; the swap held the live tables for ${outcome.swapMs} ms and applied ${outcome.eventsDuringSwap} events`,
    );
  } finally {
    await encryption?.close();
    await esdb?.close();
    await pool.end();
  }
}
