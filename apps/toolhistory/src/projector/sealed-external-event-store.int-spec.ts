import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoredToolEvent } from '@toolhistory/contract';
import { OpenedEventStore, parsePolicyDocument, RecordBatch, START_POSITION } from '@toolhistory/domain';
import { EnvelopeVault, FileDataKeyStore, FileKeyring } from '@toolhistory/encryption';
import { EventStoreDbEventStore, EventStoreRecordingStorage } from '@toolhistory/eventstoredb';
import {
  PostgresAuditReader,
  PostgresConsumerOffsets,
  PostgresConversationEraser,
  PostgresPayloadExpiry,
  PostgresReadModelProjection,
  PostgresReadModelRebuilder,
  PostgresReplayReader,
} from '@toolhistory/persistence';
import { o200kTokens } from '@toolhistory/tokenizer';
import { InMemoryEventStoreDbClient } from '../../../../libs/eventstoredb/src/in-memory-eventstoredb-client.fixture';
import { freshSchema, FreshSchema } from '../../../../test/support/fresh-schema';
import { dumpSchemaData } from '../../../../test/support/schema-dump';
import { runCompleted, toolCall, toolResult } from '../../../../test/support/tool-event-factory';
import { CryptoShreddingEraser } from '../erasure/crypto-shredding-eraser';
import { EventStoreConversationEraser } from '../erasure/event-store-conversation-eraser';
import { RebuildReadModel } from '../rebuild/rebuild-read-model';

const parsed = parsePolicyDocument({ tools: { short_lived: { retention: '1s' } } });
if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
const { redaction, retention } = parsed.policy;

/**
 * Encryption at rest with events in EventStoreDB (its client's in-memory
 * model): the store holds only sealed payloads (shredding reaches its
 * chunks and backups without a scavenge), the read model fed from it keeps
 * its own sealed copies ('row'), and every way out opens them.
 */
describe('sealed payloads with events in EventStoreDB, the read model fed by the projector (real PostgreSQL)', () => {
  let db: FreshSchema;
  let directory: string;
  let vault: EnvelopeVault;
  let keys: FileDataKeyStore;
  const client = new InMemoryEventStoreDbClient();
  const stored = new EventStoreDbEventStore(client.asClient());
  const kek = randomBytes(32);
  const keyring = () => new FileKeyring({ active: 'k1', keys: new Map([['k1', { reveal: () => kek }]]) });
  const secret = { argument: 'heliotrope-3390', result: 'larkspur-5521', short: 'fleeting-osprey-7070' };

  beforeAll(async () => {
    db = await freshSchema('sealed_esdb');
    directory = mkdtempSync(join(tmpdir(), 'toolhistory-sealed-esdb-'));
    keys = new FileDataKeyStore(directory);
    vault = new EnvelopeVault(keys, keyring());
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('records sealed, projects sealed copies, answers in clear, shreds on erasure and expiry', async () => {
    // The test's own clock: a 1 s retention must not run out while the projection and the rebuild run, however slow the machine.
    let nowMs = Date.now();
    const clock = () => nowMs;
    const opened = new OpenedEventStore(stored, vault, clock);
    const recorder = new RecordBatch(new EventStoreRecordingStorage(stored, new PostgresConsumerOffsets(db.pool)), {
      redaction,
      tokens: o200kTokens,
      vault,
      retention,
      now: clock,
    });
    const kept = { tenantId: 'acme', conversationId: 'kept', runId: 'r1' };
    const brief = { tenantId: 'acme', conversationId: 'brief', runId: 'r1' };
    const events: StoredToolEvent[] = [
      toolCall(kept, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', toolName: 'lookup', arguments: { q: secret.argument } }),
      toolResult(kept, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', result: secret.result }),
      runCompleted(kept, { assistantMessageId: 'm1', finishReason: 'stop' }),
      toolCall(brief, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'b1', toolName: 'short_lived', arguments: { q: secret.short } }),
    ];
    await recorder.recordBatch({
      consumerGroup: 'g',
      topic: 't',
      partition: 0,
      events: events.map((event, i) => ({ offset: String(i), event })),
      nextOffset: String(events.length),
    });
    const inStore = JSON.stringify(await stored.readAll(START_POSITION, { limit: 100 }));
    expect(inStore).toContain('"sealed"');
    for (const value of Object.values(secret)) expect(inStore).not.toContain(value);

    const projection = new PostgresReadModelProjection(db.pool, opened, o200kTokens, vault);
    await projection.apply(await opened.readAll(START_POSITION, { limit: 100 }));
    const outsideSearch = (await dumpSchemaData(db.pool, db.schema))
      .split(/^-- /m)
      .filter((part) => !['invocation_search', 'invocation_substring'].includes(part.split('\n')[0]))
      .join('\n');
    for (const value of Object.values(secret)) expect(outsideSearch).not.toContain(value);

    const replay = await new PostgresReplayReader(db.pool, undefined, vault).readConversation('acme', 'kept');
    expect(replay?.invocations[0]).toMatchObject({ arguments: { q: secret.argument }, result: secret.result });
    const audit = new PostgresAuditReader(db.pool, undefined, vault);
    const [hit] = await audit.searchInvocations({ tenantId: 'acme', query: 'larkspur', match: 'words', limit: 10 });
    expect(hit.snippet).toContain('**larkspur');

    // A rebuild from the store makes the same sealed copies.
    await new RebuildReadModel(opened, new PostgresReadModelRebuilder(db.pool, opened, 'row', o200kTokens, vault)).execute();
    const rebuilt = await new PostgresReplayReader(db.pool, undefined, vault).readConversation('acme', 'kept');
    expect(rebuilt?.invocations[0]).toMatchObject({ arguments: { q: secret.argument }, result: secret.result });

    // Expiry: the short-lived payload leaves the rows, its key goes.
    nowMs += 2_000;
    const sweep = await new PostgresPayloadExpiry(db.pool, vault).sweep(new Date(nowMs));
    expect(sweep).toMatchObject({ payloads: 1, invocations: 1 });
    const destroyed = await keys.destroyExpired(new Date(nowMs).toISOString(), 100);
    expect(destroyed.map((k) => k.conversationId)).toEqual(['brief']);
    vault.forget(destroyed.map((k) => k.keyId));
    const [briefRow] = (await new PostgresReplayReader(db.pool, undefined, vault).readConversation('acme', 'brief'))!.invocations;
    expect(briefRow).toMatchObject({ arguments: {}, expiredPayloads: ['arguments'] });
    const [briefEvent] = await opened.readStream({ tenantId: 'acme', conversationId: 'brief' });
    expect(briefEvent.event).toMatchObject({ arguments: {}, payloadExpired: true });

    // Erasure: the stream tombstoned, the rows gone, the key destroyed: a copy of the stream kept aside does not open.
    const before = await stored.readStream({ tenantId: 'acme', conversationId: 'kept' });
    const eraser = new CryptoShreddingEraser(
      new EventStoreConversationEraser(stored, new PostgresConversationEraser(db.pool, o200kTokens, vault)),
      keys,
      vault,
    );
    const outcome = await eraser.erase('acme', 'kept');
    expect(outcome.destroyedKeys).toEqual([before[0].event.sealed!.key]);
    const fresh = new EnvelopeVault(keys, keyring());
    expect(
      await fresh.open(
        before.filter((r) => r.event.sealed).map((r) => ({ tenantId: 'acme', conversationId: 'kept', sealed: r.event.sealed! })),
      ),
    ).toEqual([null, null]);
  });
});
