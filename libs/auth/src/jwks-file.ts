import { stat, readFile } from 'node:fs/promises';
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { AppError, ErrorCode } from '@toolhistory/errors';
import type { KeySource } from './key-source';

export interface JwksFileLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** A changed file is noticed within this time; an unknown key id makes it look at once. */
const CHECK_INTERVAL_MS = 1_000;

/**
 * A JSON Web Key Set on disk (`AUTH_JWKS_FILE`), re-read when it changes, so
 * keys rotate without a restart: the file is looked at (stat) at most once a
 * second while tokens arrive, and at once when a token names an unknown key.
 * A file that becomes unreadable or invalid keeps the keys that were good,
 * with a warning; at start-up it stops the service.
 */
export class JwksFile implements KeySource {
  private keys: JWTVerifyGetKey;
  private version: string;
  private checkedAt = Date.now();
  private checking: Promise<boolean> | null = null;
  private readonly listeners: Array<() => void> = [];

  private constructor(
    private readonly path: string,
    loaded: { keys: JWTVerifyGetKey; version: string },
    private readonly log: JwksFileLog,
  ) {
    this.keys = loaded.keys;
    this.version = loaded.version;
  }

  static async open(path: string, log: JwksFileLog): Promise<JwksFile> {
    try {
      return new JwksFile(path, await load(path), log);
    } catch (error) {
      throw new AppError(ErrorCode.InvalidConfig, `AUTH_JWKS_FILE: ${reasonOf(error, path)}`, { cause: error });
    }
  }

  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    await this.refresh(false);
    try {
      return await this.keys(header, token);
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY' && (await this.refresh(true))) return this.keys(header, token);
      throw error;
    }
  };

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** True when new keys were loaded. */
  private refresh(force: boolean): Promise<boolean> {
    const now = Date.now();
    if (this.checking) return this.checking;
    if (!force && now - this.checkedAt < CHECK_INTERVAL_MS) return Promise.resolve(false);
    if (force && now - this.checkedAt < CHECK_INTERVAL_MS / 10) return Promise.resolve(false);
    this.checkedAt = now;
    this.checking = this.reloadIfChanged().finally(() => (this.checking = null));
    return this.checking;
  }

  private async reloadIfChanged(): Promise<boolean> {
    try {
      if ((await versionOf(this.path)) === this.version) return false;
      const loaded = await load(this.path);
      this.keys = loaded.keys;
      this.version = loaded.version;
      this.log.info({ path: this.path }, 'key set reloaded');
      for (const listener of this.listeners) listener();
      return true;
    } catch (error) {
      this.log.warn({ path: this.path, reason: reasonOf(error, this.path) }, 'key set file unusable; keeping the keys loaded before');
      return false;
    }
  }
}

const versionOf = async (path: string): Promise<string> => {
  const s = await stat(path);
  return `${s.ino}:${s.size}:${s.mtimeMs}`;
};

async function load(path: string): Promise<{ keys: JWTVerifyGetKey; version: string }> {
  const version = await versionOf(path);
  const jwks = parseKeySet(await readFile(path, 'utf8'));
  return { keys: createLocalJWKSet(jwks), version };
}

/** Private key members (RFC 7518): a key set that holds them leaks signing keys to whoever reads it. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

export function parseKeySet(text: string): JSONWebKeySet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('is not JSON');
  }
  const keys = (parsed as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error('must be a JSON Web Key Set: {"keys": [...]} with at least one key');
  keys.forEach((key, i) => {
    if (typeof key !== 'object' || key === null || typeof (key as { kty?: unknown }).kty !== 'string')
      throw new Error(`keys[${i}] is not a JSON Web Key (no kty)`);
    const secret = PRIVATE_MEMBERS.find((member) => Object.hasOwn(key, member));
    if (secret) throw new Error(`keys[${i}] holds private key material ("${secret}"): publish public keys only`);
  });
  return parsed as JSONWebKeySet;
}

function reasonOf(error: unknown, path: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code) return `cannot read ${path} (${code})`;
  return `${path} ${error instanceof Error ? error.message : String(error)}`;
}
