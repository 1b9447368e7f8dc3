import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { issueToken, signingKey, type SigningKey, TEST_AUDIENCE, TEST_ISSUER } from '../../../test/support/test-tokens';
import { JwksUrl } from './jwks-url';
import { JwtCallerAuthenticator } from './jwt-caller-authenticator';

/** An identity provider's JWKS endpoint on loopback, serving whatever keys the test sets. */
describe('JwksUrl against a JWKS endpoint', () => {
  let server: Server;
  let url: string;
  let served: SigningKey[] = [];
  let status = 200;
  let requests = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      requests += 1;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 200 ? JSON.stringify({ keys: served.map((k) => k.publicJwk) }) : 'down');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  });

  afterAll(() => new Promise((done) => server.close(done)));

  it('fetches once, then fetches again when a token names a key it does not hold (rotation)', async () => {
    const [first, second] = await Promise.all([signingKey('RS256'), signingKey('ES256')]);
    served = [first];
    const keys = new JwksUrl(url, { cooldownMs: 0 });
    await keys.warmUp({ warn: () => undefined });
    const authenticator = new JwtCallerAuthenticator({ keys, issuer: TEST_ISSUER, audience: TEST_AUDIENCE });
    const before = requests;
    await authenticator.authenticate([`Bearer ${await issueToken(first, { tenants: ['a'] })}`]);
    await authenticator.authenticate([`Bearer ${await issueToken(first, { tenants: ['b'] })}`]);
    expect(requests).toBe(before);

    served = [first, second];
    const caller = await authenticator.authenticate([`Bearer ${await issueToken(second, { tenants: ['c'], scope: 'audit:read' })}`]);
    expect(caller.scopes).toEqual(new Set(['audit:read']));
    expect(requests).toBe(before + 1);
  });

  it('answers AUTH_UNAVAILABLE (retriable) when the keys cannot be had, never blaming the token', async () => {
    status = 503;
    const key = await signingKey('ES256');
    const warnings: string[] = [];
    const keys = new JwksUrl(url, { cooldownMs: 0 });
    await keys.warmUp({ warn: (_fields, message) => warnings.push(message) });
    expect(warnings).toEqual(['key set not fetched at start-up; retrying as tokens arrive']);
    const authenticator = new JwtCallerAuthenticator({ keys, issuer: null, audience: null });
    const refusal = await authenticator.authenticate([`Bearer ${await issueToken(key, {})}`]).catch((error: AppError) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: ErrorCode.AuthUnavailable, retriable: true });

    status = 200;
    served = [key];
    await expect(authenticator.authenticate([`Bearer ${await issueToken(key, {})}`])).resolves.toBeDefined();
  });
});
