import { mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnsecuredJWT } from 'jose';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { issueToken, signingKey, type SigningKey, TEST_AUDIENCE, TEST_ISSUER, writeKeySet } from '../../../test/support/test-tokens';
import { waitFor } from '../../../test/support/wait-for';
import { JwksFile } from './jwks-file';
import { JwtCallerAuthenticator } from './jwt-caller-authenticator';

const quietLog = { warn: jest.fn(), info: jest.fn() };
const claims = { tenants: ['acme'], scope: 'history:read' };

async function refusal(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await work;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return { code: (error as AppError).code, message: (error as AppError).message };
  }
  throw new Error('expected a refusal');
}

describe('JwtCallerAuthenticator', () => {
  let rsa: SigningKey;
  let ec: SigningKey;
  let ed: SigningKey;
  let stranger: SigningKey;
  let authenticator: JwtCallerAuthenticator;
  const bearer = (token: string) => [`Bearer ${token}`];

  beforeAll(async () => {
    [rsa, ec, ed, stranger] = await Promise.all([signingKey('RS256'), signingKey('ES256'), signingKey('EdDSA'), signingKey('ES256')]);
    const keys = await JwksFile.open(writeKeySet([rsa, ec, ed]), quietLog);
    authenticator = new JwtCallerAuthenticator({ keys, issuer: TEST_ISSUER, audience: TEST_AUDIENCE });
  });

  it.each(['RS256', 'ES256', 'EdDSA'])('accepts a %s token and reads the caller from its claims', async (alg) => {
    const key = { RS256: rsa, ES256: ec, EdDSA: ed }[alg]!;
    const caller = await authenticator.authenticate(bearer(await issueToken(key, claims, { subject: `worker-${alg}` })));
    expect(caller).toEqual({ subject: `worker-${alg}`, tenants: new Set(['acme']), scopes: new Set(['history:read']) });
  });

  it.each([
    ['no header', [], 'unauthenticated: no token: send the header authorization: Bearer <JWT>'],
    ['two headers', ['Bearer a.b.c', 'Bearer d.e.f'], 'unauthenticated: more than one authorization header'],
    ['another scheme', ['Basic dXNlcjpwYXNz'], 'unauthenticated: the authorization header must be Bearer <JWT>'],
    ['not a JWT', ['Bearer not-a-jwt'], 'unauthenticated: malformed token'],
    ['a huge header', [`Bearer ${'a'.repeat(20_000)}`], 'unauthenticated: malformed token'],
  ])('refuses %s', async (_what, header, message) => {
    expect(await refusal(authenticator.authenticate(header))).toEqual({ code: ErrorCode.Unauthenticated, message });
  });

  it('refuses a forged signature and a key it does not know', async () => {
    const good = await issueToken(ec, claims);
    const [head, body] = good.split('.');
    const forgedBody = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), tenants: '*' })).toString(
      'base64url',
    );
    expect(await refusal(authenticator.authenticate(bearer(`${head}.${forgedBody}.${good.split('.')[2]}`)))).toEqual({
      code: ErrorCode.Unauthenticated,
      message: 'unauthenticated: token signature does not verify',
    });
    const unknownKey = await issueToken(stranger, claims);
    expect((await refusal(authenticator.authenticate(bearer(unknownKey)))).message).toBe(
      'unauthenticated: token signed with a key that is not in the key set',
    );
    // A stranger's key under a known key id: the signature does not verify.
    const underKnownKid = await issueToken({ ...stranger, kid: ec.kid }, claims);
    expect((await refusal(authenticator.authenticate(bearer(underKnownKid)))).message).toBe(
      'unauthenticated: token signature does not verify',
    );
  });

  it('refuses unsigned and HMAC tokens', async () => {
    const unsigned = new UnsecuredJWT(claims).setIssuer(TEST_ISSUER).setAudience(TEST_AUDIENCE).setExpirationTime('1h').encode();
    expect((await refusal(authenticator.authenticate(bearer(unsigned)))).message).toMatch(/^unauthenticated: token algorithm not accepted/);
    const hmacHeader = Buffer.from(JSON.stringify({ alg: 'HS256', kid: ec.kid })).toString('base64url');
    const [, body, signature] = (await issueToken(ec, claims)).split('.');
    expect((await refusal(authenticator.authenticate(bearer(`${hmacHeader}.${body}.${signature}`)))).message).toMatch(
      /^unauthenticated: token algorithm not accepted/,
    );
  });

  it('checks expiry and not-before with 30 seconds of leeway, and requires an expiry', async () => {
    await expect(authenticator.authenticate(bearer(await issueToken(ec, claims, { expiresIn: -20 })))).resolves.toBeDefined();
    expect((await refusal(authenticator.authenticate(bearer(await issueToken(ec, claims, { expiresIn: -40 }))))).message).toBe(
      'unauthenticated: token expired',
    );
    await expect(authenticator.authenticate(bearer(await issueToken(ec, claims, { notBefore: 20 })))).resolves.toBeDefined();
    expect((await refusal(authenticator.authenticate(bearer(await issueToken(ec, claims, { notBefore: 40 }))))).message).toBe(
      'unauthenticated: token not yet valid',
    );
    expect((await refusal(authenticator.authenticate(bearer(await issueToken(ec, claims, { expiresIn: null }))))).message).toBe(
      'unauthenticated: token has no valid expiry (exp)',
    );
  });

  it('refuses a token issued by someone else or for another audience', async () => {
    expect(
      (await refusal(authenticator.authenticate(bearer(await issueToken(ec, claims, { issuer: 'https://evil.example/' }))))).message,
    ).toBe('unauthenticated: token issuer not accepted');
    expect((await refusal(authenticator.authenticate(bearer(await issueToken(ec, claims, { audience: 'billing-service' }))))).message).toBe(
      'unauthenticated: token audience not accepted',
    );
  });
});

describe('JwksFile', () => {
  it('refuses at start-up a file that is missing, not a key set, or holds private keys', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolhistory-jwks-'));
    const at = (name: string, content: string) => {
      writeFileSync(join(dir, name), content);
      return join(dir, name);
    };
    const key = await signingKey('ES256');
    const opened = (path: string) => refusal(JwksFile.open(path, quietLog));
    expect(await opened(join(dir, 'missing.json'))).toEqual({
      code: ErrorCode.InvalidConfig,
      message: `AUTH_JWKS_FILE: cannot read ${join(dir, 'missing.json')} (ENOENT)`,
    });
    expect((await opened(at('text.json', 'keys'))).message).toMatch(/is not JSON$/);
    expect((await opened(at('empty.json', '{"keys":[]}'))).message).toMatch(/must be a JSON Web Key Set/);
    const { exportJWK } = await import('jose');
    const privateJwk = await exportJWK(key.privateKey);
    expect((await opened(at('private.json', JSON.stringify({ keys: [privateJwk] })))).message).toMatch(
      /keys\[0\] holds private key material \("d"\)/,
    );
  });

  it('picks up a rotated key without a restart, and keeps the old keys if the file turns bad', async () => {
    const [before, after] = await Promise.all([signingKey('ES256', 'before'), signingKey('ES256', 'after')]);
    const path = writeKeySet([before]);
    const log = { warn: jest.fn(), info: jest.fn() };
    const authenticator = new JwtCallerAuthenticator({ keys: await JwksFile.open(path, log), issuer: null, audience: null });
    const tokenBefore = await issueToken(before, claims);
    await expect(authenticator.authenticate([`Bearer ${tokenBefore}`])).resolves.toBeDefined();

    // Rotation: the new key replaces the old one; a token of the new key is accepted without a restart.
    writeKeySet([after], path);
    utimesSync(path, new Date(), new Date(Date.now() + 5_000));
    const tokenAfter = await issueToken(after, claims);
    const outcome = (token: string) =>
      authenticator.authenticate([`Bearer ${token}`]).then(
        () => 'accepted',
        (error: AppError) => error.message,
      );
    await waitFor(
      () => outcome(tokenAfter),
      (o) => o === 'accepted',
      { what: 'the rotated key', timeoutMs: 5_000, intervalMs: 20 },
    );
    expect(log.info).toHaveBeenCalledWith({ path }, 'key set reloaded');
    // The retired key's tokens are refused, even one verified before (the change clears what was remembered).
    expect(await outcome(tokenBefore)).toBe('unauthenticated: token signed with a key that is not in the key set');

    // A file that turns bad keeps the keys that were good, with a warning.
    writeFileSync(path, '{ broken');
    utimesSync(path, new Date(), new Date(Date.now() + 10_000));
    await waitFor(
      async () => (await outcome(await issueToken(before, claims)), log.warn.mock.calls.length),
      (n) => n > 0,
      {
        what: 'the bad file to be noticed',
        timeoutMs: 5_000,
        intervalMs: 20,
      },
    );
    expect(log.warn).toHaveBeenCalledWith(
      expect.objectContaining({ reason: expect.stringContaining('is not JSON') }),
      expect.stringContaining('keeping the keys'),
    );
    expect(await outcome(await issueToken(after, claims))).toBe('accepted');
  });
});
