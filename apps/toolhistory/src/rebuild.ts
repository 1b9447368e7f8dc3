import { loadConfig } from '@toolhistory/config';
import { AppError } from '@toolhistory/errors';
import { EventStoreDbEventStore } from '@toolhistory/eventstoredb';
import { connectionUrl, createPool, PostgresEventStore, PostgresReadModelRebuilder, runMigrations } from '@toolhistory/persistence';
import { RebuildReadModel } from './rebuild/rebuild-read-model';

/**
 * `npm run rebuild`: rebuilds the read model from the event store (the one
 * EVENT_STORE names) into fresh tables and swaps them in; running services
 * keep answering.
 */
async function rebuild(): Promise<void> {
  const config = loadConfig(process.env);
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
  try {
    const events = esdb ?? new PostgresEventStore(pool);
    let reported = 0;
    const outcome = await new RebuildReadModel(events, new PostgresReadModelRebuilder(pool, events, esdb ? 'row' : 'events')).execute({
      onProgress: (applied, position) => {
        if (applied - reported < 100_000) return;
        reported = applied;
        process.stdout.write(`applied ${applied} events (position ${position})\n`);
      },
    });
    process.stdout.write(
      `rebuilt the read model of schema ${config.database.schema} from ${outcome.events} events up to position ${outcome.position} ` +
        `in ${(outcome.durationMs / 1000).toFixed(1)} s; the swap held the live tables for ${outcome.swapMs} ms and applied ${outcome.eventsDuringSwap} events\n`,
    );
  } finally {
    await esdb?.close();
    await pool.end();
  }
}

rebuild().catch((error) => {
  process.stderr.write(`rebuild failed: ${error instanceof AppError || error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
