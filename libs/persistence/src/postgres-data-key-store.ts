import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { runner } from 'node-pg-migrate';
import { Client, type Pool } from 'pg';
import type { DataKeyStore, KeyStoreSummary, NewDataKey, StoredDataKey, WrappedKey } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { connectionUrl, createPool, type DatabaseSettings, ensureDatabase } from './database';
import { classifyPostgresError } from './postgres-errors';
import { isoText } from './sql-rows';

const SELECT_KEY = `SELECT key_id::text AS "keyId", tenant_id AS "tenantId", conversation_id AS "conversationId",
  ${isoText('expires_at')} AS "expiresAt", via, kek_id AS "kekId", wrapped FROM data_keys`;

/** The key store's migrations, beside the service's: found from src/ and from dist/. */
function keyStoreMigrationsDirectory(): string {
  const candidates = [resolve(__dirname, '../keystore-migrations'), resolve(__dirname, '../../../../libs/persistence/keystore-migrations')];
  const found = candidates.find((dir) => existsSync(dir));
  if (!found) throw new Error(`key store migrations folder not found (looked in ${candidates.join(', ')})`);
  return found;
}

/** Creates the key store's database and schema when missing and applies its migrations, one instance at a time. */
export async function migrateKeyStore(url: string, schema: string): Promise<string[]> {
  await ensureDatabase(url);
  const lock = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await lock.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(hashtext('toolhistory.keystore-migrations'))`);
    const applied = await runner({
      databaseUrl: url,
      dir: keyStoreMigrationsDirectory(),
      direction: 'up',
      migrationsTable: 'keystore_migrations',
      schema,
      createSchema: true,
      checkOrder: true,
      singleTransaction: true,
      log: () => undefined,
      verbose: false,
    });
    return applied.map((m) => m.name);
  } finally {
    await lock.end();
  }
}

/**
 * The key store in a PostgreSQL database of its own (`KEYSTORE_URL=postgres://…`),
 * apart from the payloads' (docs/adr/033): its backups must be kept for a
 * shorter time than the payloads', or a restored key would open a restored
 * payload. Every adapter of the port passes test/contract/data-key-store.contract.ts.
 */
export class PostgresDataKeyStore implements DataKeyStore {
  private constructor(private readonly pool: Pool) {}

  /** Connects (the pool connects on first use); with `migrate`, creates and migrates the store first. */
  static async open(settings: DatabaseSettings, options: { migrate: boolean }): Promise<PostgresDataKeyStore> {
    const pool = createPool({ ...settings, applicationName: settings.applicationName ?? 'toolhistory-keystore' });
    try {
      if (options.migrate) await migrateKeyStore(connectionUrl(settings), settings.schema);
    } catch (error) {
      await pool.end();
      throw keyStoreError(error);
    }
    return new PostgresDataKeyStore(pool);
  }

  async claim(keys: readonly NewDataKey[]): Promise<StoredDataKey[]> {
    if (keys.length === 0) return [];
    const columns = [
      keys.map((k) => k.keyId),
      keys.map((k) => k.tenantId),
      keys.map((k) => k.conversationId),
      keys.map((k) => k.expiresAt),
      keys.map((k) => JSON.stringify(k.via)),
      keys.map((k) => k.kekId),
      keys.map((k) => k.wrapped),
    ];
    const input = `unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[])
      WITH ORDINALITY AS k(key_id, tenant_id, conversation_id, expires_at, via, kek_id, wrapped, n)`;
    const via = `ARRAY(SELECT json_array_elements_text(k.via::json))`;
    return this.run(async () => {
      await this.pool.query(
        `INSERT INTO data_keys (key_id, tenant_id, conversation_id, expires_at, via, kek_id, wrapped)
         SELECT k.key_id, k.tenant_id, k.conversation_id, k.expires_at, ${via}, k.kek_id, k.wrapped FROM ${input}
         ON CONFLICT (tenant_id, conversation_id, (coalesce(expires_at, 'infinity'::timestamptz)), via) DO NOTHING`,
        columns,
      );
      // The key each scope has now: ours, or the one a racer kept first (committed before this statement began).
      const { rows } = await this.pool.query<StoredDataKey & { n: string }>(
        `SELECT d.key_id::text AS "keyId", d.tenant_id AS "tenantId", d.conversation_id AS "conversationId",
           ${isoText('d.expires_at')} AS "expiresAt", d.via, d.kek_id AS "kekId", d.wrapped, k.n::text AS n
         FROM ${input} JOIN data_keys d ON d.tenant_id = k.tenant_id AND d.conversation_id = k.conversation_id
           AND coalesce(d.expires_at, 'infinity'::timestamptz) = coalesce(k.expires_at, 'infinity'::timestamptz) AND d.via = ${via}
         ORDER BY k.n`,
        columns,
      );
      if (rows.length !== keys.length) throw new AppError(ErrorCode.KeyUnavailable, 'a data key was destroyed while it was being made');
      return rows.map(({ n: _n, ...key }) => canonicalTimes(key));
    });
  }

  keysById(keyIds: readonly string[]): Promise<StoredDataKey[]> {
    const ids = keyIds.filter((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id));
    if (ids.length === 0) return Promise.resolve([]);
    return this.rows(`${SELECT_KEY} WHERE key_id = ANY($1::uuid[])`, [ids]);
  }

  async destroyConversation(tenantId: string, conversationId: string): Promise<string[]> {
    const rows = await this.rows<{ keyId: string }>(
      `DELETE FROM data_keys WHERE tenant_id = $1 AND (conversation_id = $2 OR (via <> '{}' AND via @> ARRAY[$2]::text[]))
       RETURNING key_id::text AS "keyId"`,
      [tenantId, conversationId],
    );
    return rows.map((r) => r.keyId);
  }

  destroyExpired(now: string, limit: number): Promise<StoredDataKey[]> {
    return this.rows(
      `DELETE FROM data_keys WHERE key_id IN (
         SELECT key_id FROM data_keys WHERE expires_at <= $1::timestamptz ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING key_id::text AS "keyId", tenant_id AS "tenantId", conversation_id AS "conversationId",
         ${isoText('expires_at')} AS "expiresAt", via, kek_id AS "kekId", wrapped`,
      [now, limit],
    );
  }

  wrappedWithout(kekId: string, limit: number): Promise<StoredDataKey[]> {
    return this.rows(`${SELECT_KEY} WHERE kek_id <> $1 ORDER BY key_id LIMIT $2`, [kekId, limit]);
  }

  async rewrap(keyId: string, from: WrappedKey, to: WrappedKey): Promise<boolean> {
    const rows = await this.rows(
      `UPDATE data_keys SET kek_id = $4, wrapped = $5 WHERE key_id = $1 AND kek_id = $2 AND wrapped = $3 RETURNING key_id`,
      [keyId, from.kekId, from.wrapped, to.kekId, to.wrapped],
    );
    return rows.length === 1;
  }

  async summary(now: string): Promise<KeyStoreSummary> {
    const byKek = await this.rows<{ kekId: string; count: number }>(
      'SELECT kek_id AS "kekId", count(*)::int AS count FROM data_keys GROUP BY kek_id ORDER BY kek_id',
      [],
    );
    const [expiry] = await this.rows<{ expiring: number; due: number; next: string | null }>(
      `SELECT count(*)::int AS expiring, (count(*) FILTER (WHERE expires_at <= $1::timestamptz))::int AS due, ${isoText('min(expires_at)')} AS next
       FROM data_keys WHERE expires_at IS NOT NULL`,
      [now],
    );
    return {
      byKek: Object.fromEntries(byKek.map((r) => [r.kekId, r.count])),
      expiring: expiry.expiring,
      due: expiry.due,
      nextExpiry: expiry.next,
    };
  }

  async kekChecks(): Promise<Map<string, WrappedKey>> {
    const rows = await this.rows<WrappedKey>('SELECT kek_id AS "kekId", wrapped FROM kek_checks', []);
    return new Map(rows.map((r) => [r.kekId, r]));
  }

  async claimKekCheck(check: WrappedKey): Promise<WrappedKey> {
    await this.rows('INSERT INTO kek_checks (kek_id, wrapped) VALUES ($1, $2) ON CONFLICT (kek_id) DO NOTHING', [
      check.kekId,
      check.wrapped,
    ]);
    const [kept] = await this.rows<WrappedKey>('SELECT kek_id AS "kekId", wrapped FROM kek_checks WHERE kek_id = $1', [check.kekId]);
    return kept;
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private async rows<Row = StoredDataKey>(text: string, values: unknown[]): Promise<Row[]> {
    return this.run(async () => (await this.pool.query<Row & Record<string, unknown>>(text, values)).rows.map(canonicalTimes));
  }

  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw keyStoreError(error);
    }
  }
}

/** Ends of retention as the vault writes them (toISOString), so a scope reads back the same as it was given. */
function canonicalTimes<Row>(row: Row): Row {
  const expiresAt = (row as { expiresAt?: unknown }).expiresAt;
  return typeof expiresAt === 'string' ? { ...row, expiresAt: new Date(expiresAt).toISOString() } : row;
}

/**
 * A key store that does not answer stalls what needs it (the recorder waits,
 * a read fails UNAVAILABLE) rather than losing anything: KEY_UNAVAILABLE,
 * retriable. A refused value is still the caller's fault.
 */
function keyStoreError(error: unknown): AppError {
  if (error instanceof AppError && error.code !== ErrorCode.StorageUnavailable && error.code !== ErrorCode.StorageFailed) return error;
  const classified = error instanceof AppError ? error : classifyPostgresError(error);
  if (!classified.retriable) return classified;
  return new AppError(ErrorCode.KeyUnavailable, `the key store does not answer (${classified.message})`, { cause: error });
}
