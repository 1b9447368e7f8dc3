import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { DataKeyStore, KeyStoreSummary, NewDataKey, StoredDataKey, WrappedKey } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/** The scope a key serves, hashed: the name of its slot file, so a scope has one key however many processes race. */
const slotName = (key: Pick<StoredDataKey, 'tenantId' | 'conversationId' | 'expiresAt' | 'via'>): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        key.tenantId,
        key.conversationId,
        key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
        [...key.via],
      ]),
    )
    .digest('hex');

/** A marker per key with an end of retention, named `<end in ms>.<key id>`: the sweeper finds due keys by name. */
const expiryMarker = (key: Pick<StoredDataKey, 'expiresAt' | 'keyId'>): string | null =>
  key.expiresAt === null ? null : `${String(Date.parse(key.expiresAt)).padStart(15, '0')}.${key.keyId}`;
/** Ids the vault makes (UUIDs); anything else is no file name of ours. */
const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The key store in a directory (`KEYSTORE_URL=file:///path`), for one
 * machine: a file per data key (`keys/<id>.json`), a file per scope naming
 * its key (`slots/<hash>`, created exclusively, so racing writers agree), a
 * marker per key with an end of retention (`expiries/<end>.<id>`), and a
 * file per key-encryption key's check value. Writes go through a
 * temporary file, fsync and rename; a destroyed key's file is overwritten
 * before it is removed (on copy-on-write or flash storage the old blocks may
 * survive: there, and for several machines, use the PostgreSQL store).
 * Every adapter of the port passes test/contract/data-key-store.contract.ts.
 */
export class FileDataKeyStore implements DataKeyStore {
  private readonly keysDir: string;
  private readonly slotsDir: string;
  private readonly checksDir: string;
  private readonly expiriesDir: string;
  private ready: Promise<void> | null = null;

  constructor(private readonly directory: string) {
    this.keysDir = join(directory, 'keys');
    this.slotsDir = join(directory, 'slots');
    this.checksDir = join(directory, 'kek-checks');
    this.expiriesDir = join(directory, 'expiries');
  }

  async claim(keys: readonly NewDataKey[]): Promise<StoredDataKey[]> {
    await this.prepare();
    const out: StoredDataKey[] = [];
    for (const key of keys) out.push(await this.claimOne(key));
    return out;
  }

  async keysById(keyIds: readonly string[]): Promise<StoredDataKey[]> {
    await this.prepare();
    const found: StoredDataKey[] = [];
    for (const id of new Set(keyIds)) {
      if (!KEY_ID.test(id)) continue;
      const key = await this.read(id);
      if (key) found.push(key);
    }
    return found;
  }

  async destroyConversation(tenantId: string, conversationId: string): Promise<string[]> {
    const destroyed: string[] = [];
    for (const key of await this.all())
      if (key.tenantId === tenantId && (key.conversationId === conversationId || key.via.includes(conversationId))) {
        await this.destroy(key);
        destroyed.push(key.keyId);
      }
    return destroyed;
  }

  async destroyExpired(now: string, limit: number): Promise<StoredDataKey[]> {
    await this.prepare();
    const nowMs = Date.parse(now);
    const due = (await readdir(this.expiriesDir))
      .filter((name) => !name.endsWith('.tmp') && Number(name.slice(0, 15)) <= nowMs)
      .sort()
      .slice(0, limit);
    const destroyed: StoredDataKey[] = [];
    for (const marker of due) {
      const key = await this.read(marker.slice(16));
      if (key) {
        await this.destroy(key);
        destroyed.push(key);
      } else await unlink(join(this.expiriesDir, marker)).catch(() => undefined);
    }
    return destroyed;
  }

  async wrappedWithout(kekId: string, limit: number): Promise<StoredDataKey[]> {
    return (await this.all()).filter((k) => k.kekId !== kekId).slice(0, limit);
  }

  async rewrap(keyId: string, from: WrappedKey, to: WrappedKey): Promise<boolean> {
    const key = KEY_ID.test(keyId) ? await this.read(keyId) : null;
    if (!key || key.kekId !== from.kekId || key.wrapped !== from.wrapped) return false;
    await this.writeDurably(join(this.keysDir, `${keyId}.json`), JSON.stringify({ ...key, ...to }));
    return true;
  }

  async summary(now: string): Promise<KeyStoreSummary> {
    const nowMs = Date.parse(now);
    const summary: KeyStoreSummary = { byKek: {}, expiring: 0, due: 0, nextExpiry: null };
    for (const key of await this.all()) {
      summary.byKek[key.kekId] = (summary.byKek[key.kekId] ?? 0) + 1;
      if (key.expiresAt === null) continue;
      summary.expiring += 1;
      if (Date.parse(key.expiresAt) <= nowMs) summary.due += 1;
      if (summary.nextExpiry === null || Date.parse(key.expiresAt) < Date.parse(summary.nextExpiry)) summary.nextExpiry = key.expiresAt;
    }
    return summary;
  }

  async kekChecks(): Promise<Map<string, WrappedKey>> {
    await this.prepare();
    const checks = new Map<string, WrappedKey>();
    for (const name of await readdir(this.checksDir)) {
      if (!name.endsWith('.json')) continue;
      const check = JSON.parse(await readFile(join(this.checksDir, name), 'utf8')) as WrappedKey;
      checks.set(check.kekId, check);
    }
    return checks;
  }

  async claimKekCheck(check: WrappedKey): Promise<WrappedKey> {
    await this.prepare();
    const path = join(this.checksDir, `${createHash('sha256').update(check.kekId).digest('hex')}.json`);
    if (await this.createExclusively(path, JSON.stringify(check))) return check;
    return JSON.parse(await readFile(path, 'utf8')) as WrappedKey;
  }

  async close(): Promise<void> {
    // Nothing held open between calls.
  }

  private async claimOne(key: NewDataKey): Promise<StoredDataKey> {
    if (!KEY_ID.test(key.keyId)) throw new AppError(ErrorCode.Internal, 'a data key id must be a UUID');
    const slot = join(this.slotsDir, slotName(key));
    const existing = await readFile(slot, 'utf8').catch(() => null);
    const known = existing === null ? null : await this.read(existing.trim());
    if (known) return known;
    const stored: StoredDataKey = { ...key, via: [...key.via] };
    // The key file first, then the slot naming it: a slot never names a key that is not there.
    await this.writeDurably(join(this.keysDir, `${key.keyId}.json`), JSON.stringify(stored));
    const marker = expiryMarker(stored);
    if (marker !== null) await this.createExclusively(join(this.expiriesDir, marker), '');
    if (await this.createExclusively(slot, key.keyId)) return stored;
    await this.destroy(stored, false);
    const winner = await this.read((await readFile(slot, 'utf8')).trim());
    if (!winner) throw new AppError(ErrorCode.KeyUnavailable, 'the key store names a data key it does not hold');
    return winner;
  }

  private async destroy(key: StoredDataKey, ownsSlot = true): Promise<void> {
    await this.remove(join(this.keysDir, `${key.keyId}.json`));
    if (ownsSlot) {
      const slot = join(this.slotsDir, slotName(key));
      const named = await readFile(slot, 'utf8').catch(() => null);
      if (named?.trim() === key.keyId) await unlink(slot).catch(() => undefined);
    }
    const marker = expiryMarker(key);
    if (marker !== null) await unlink(join(this.expiriesDir, marker)).catch(() => undefined);
  }

  /** Overwrites the file's bytes before unlinking it, then makes the removal durable. */
  private async remove(path: string): Promise<void> {
    try {
      const handle = await open(path, constants.O_RDWR);
      try {
        const { size } = await handle.stat();
        await handle.write(Buffer.alloc(size), 0, size, 0);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await unlink(path);
      await syncDirectory(this.keysDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw storageError(error);
    }
  }

  private async read(keyId: string): Promise<StoredDataKey | null> {
    try {
      return JSON.parse(await readFile(join(this.keysDir, `${keyId}.json`), 'utf8')) as StoredDataKey;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw storageError(error);
    }
  }

  private async ids(): Promise<string[]> {
    await this.prepare();
    return (await readdir(this.keysDir)).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length));
  }

  private async all(): Promise<StoredDataKey[]> {
    const keys: StoredDataKey[] = [];
    for (const id of await this.ids()) {
      const key = await this.read(id);
      if (key) keys.push(key);
    }
    return keys;
  }

  private async writeDurably(path: string, content: string): Promise<void> {
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, path);
      await syncDirectory(join(path, '..'));
    } catch (error) {
      throw storageError(error);
    }
  }

  /**
   * Creates the file, whole, only if it does not exist; answers whether this
   * call created it. Written aside and hard-linked into place: a reader never
   * sees it half written, and of racing writers exactly one links.
   */
  private async createExclusively(path: string, content: string): Promise<boolean> {
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      const handle = await open(temporary, 'wx', 0o600);
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        await link(temporary, path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      }
      await syncDirectory(join(path, '..'));
      return true;
    } catch (error) {
      throw storageError(error);
    } finally {
      await unlink(temporary).catch(() => undefined);
    }
  }

  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      for (const dir of [this.keysDir, this.slotsDir, this.checksDir, this.expiriesDir]) await mkdir(dir, { recursive: true, mode: 0o700 });
    })().catch((error: unknown) => {
      this.ready = null;
      throw storageError(error);
    });
    return this.ready;
  }
}

async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The directory cannot be read or written: the work waits (retriable) rather than losing what it would seal. */
function storageError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
  return new AppError(ErrorCode.KeyUnavailable, `the key store's directory failed (${code})`, { cause: error });
}
