import { inspect } from 'node:util';
import { AppError } from '@toolhistory/errors';
import { testCertificates } from '../../../test/support/test-certificates';
import { loadConfig as loadConfigAsGiven } from './load-config';
import { withKeyring } from './encryption.fixture';

/** Encryption at rest is on by default: these specs are about other settings, so a keyring and key store are given. */
const loadConfig = (env: Record<string, string | undefined>, readFile?: (path: string) => Buffer) =>
  loadConfigAsGiven(...withKeyring(env, readFile));
import { isLoopbackHost } from './security-config';

const problemsOf = (env: Record<string, string>, readFile?: (path: string) => Buffer): string[] => {
  try {
    loadConfig(env, readFile);
  } catch (error) {
    if (error instanceof AppError) return error.details.problems as string[];
    throw error;
  }
  return [];
};

/** Files by path, as if on disk. */
const filesAt =
  (files: Record<string, string | Buffer>) =>
  (path: string): Buffer => {
    const content = files[path];
    if (content === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return Buffer.from(content);
  };

describe('isLoopbackHost', () => {
  it.each(['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '0:0:0:0:0:0:0:1'])('%s is loopback', (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });
  it.each(['0.0.0.0', '::', '[::]', '10.0.0.4', 'example.com', '128.0.0.1', 'localhost.example.com'])('%s is not', (host) => {
    expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('gRPC bind and authentication', () => {
  it('without authentication listens on loopback only', () => {
    const config = loadConfig({});
    expect(config.auth).toEqual({ mode: 'unconfigured' });
    expect(config.grpc.host).toBe('127.0.0.1');
    expect(config.grpc.tls).toBeNull();
  });

  it('refuses a public bind without authentication, naming the rule and both ways out', () => {
    const [problem, ...rest] = problemsOf({ GRPC_HOST: '0.0.0.0' });
    expect(rest).toEqual([]);
    expect(problem).toMatch(/^GRPC_HOST=0\.0\.0\.0 would let other machines call the service, but no authentication is configured/);
    expect(problem).toContain('AUTH_JWKS_FILE or AUTH_JWKS_URL');
    expect(problem).toContain('AUTH_MODE=none');
  });

  it('serves a public bind without authentication when AUTH_MODE=none says so, with a warning', () => {
    const config = loadConfig({ GRPC_HOST: '0.0.0.0', AUTH_MODE: 'none' });
    expect(config.grpc.host).toBe('0.0.0.0');
    expect(config.auth).toEqual({ mode: 'none' });
    expect(config.warnings).toEqual([expect.stringContaining('AUTH_MODE=none and GRPC_HOST=0.0.0.0')]);
  });

  it('does not apply the bind rule to a recorder-only process', () => {
    expect(problemsOf({ GRPC_HOST: '0.0.0.0', SERVICE_ROLES: 'recorder' })).toEqual([]);
  });

  it('with a key set verifies tokens and listens on every interface by default', () => {
    const config = loadConfig({
      AUTH_JWKS_FILE: '/etc/toolhistory/jwks.json',
      AUTH_ISSUER: 'https://idp.example',
      AUTH_AUDIENCE: 'toolhistory',
    });
    expect(config.auth).toEqual({
      mode: 'jwt',
      jwks: { kind: 'file', path: '/etc/toolhistory/jwks.json' },
      issuer: 'https://idp.example',
      audience: 'toolhistory',
    });
    expect(config.grpc.host).toBe('0.0.0.0');
    // No TLS on a public bind: allowed (a proxy may encrypt), said once.
    expect(config.warnings).toEqual([expect.stringContaining('in the clear')]);
  });

  it('binds HTTP (metrics, probes) by the same rule, in every role, with one warning for every listener in the clear', () => {
    expect(loadConfig({}).http).toEqual({ host: '127.0.0.1', port: 9464, tls: null });
    expect(problemsOf({ SERVICE_ROLES: 'recorder', HTTP_HOST: '0.0.0.0' })).toEqual([
      expect.stringMatching(/^HTTP_HOST=0\.0\.0\.0 would let other machines call the service, but no authentication is configured/),
    ]);
    expect(problemsOf({ HTTP_PORT: '70000' })).toEqual(['HTTP_PORT must be between 0 and 65535']);
    expect(problemsOf({ HTTP_PORT: 'metrics' })).toEqual(['HTTP_PORT must be a port number (0: any free port)']);
    const config = loadConfig({ AUTH_JWKS_URL: 'https://idp.example/.well-known/jwks.json', AUTH_AUDIENCE: 'toolhistory' });
    expect(config.http.host).toBe('0.0.0.0');
    expect(config.warnings).toEqual([
      'GRPC_HOST=0.0.0.0 and HTTP_HOST=0.0.0.0 without GRPC_TLS_CERT_FILE: tokens and tool results cross the network in the clear unless a proxy in front encrypts them',
    ]);
  });

  it('warns when tokens are not bound to this service by an audience', () => {
    const config = loadConfig({
      AUTH_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
      GRPC_HOST: '127.0.0.1',
      HTTP_HOST: '127.0.0.1',
    });
    expect(config.auth).toMatchObject({
      mode: 'jwt',
      jwks: { kind: 'url', url: 'https://idp.example/.well-known/jwks.json' },
      audience: null,
    });
    expect(config.warnings).toEqual([expect.stringContaining('AUTH_AUDIENCE is not set')]);
  });

  it('lists every contradiction in the authentication settings', () => {
    expect(problemsOf({ AUTH_MODE: 'jwt' })).toEqual(['AUTH_MODE=jwt needs a key set: set AUTH_JWKS_FILE or AUTH_JWKS_URL']);
    expect(problemsOf({ AUTH_MODE: 'none', AUTH_JWKS_FILE: '/k.json' })).toEqual([
      expect.stringContaining('AUTH_MODE=none turns authentication off'),
    ]);
    expect(problemsOf({ AUTH_JWKS_FILE: '/k.json', AUTH_JWKS_URL: 'https://idp.example/jwks' })).toEqual([
      'AUTH_JWKS_FILE and AUTH_JWKS_URL are both set: set one of them',
    ]);
    expect(problemsOf({ AUTH_ISSUER: 'https://idp.example', AUTH_AUDIENCE: 'x' })).toEqual([
      expect.stringMatching(/^AUTH_ISSUER is set, but no key set/),
      expect.stringMatching(/^AUTH_AUDIENCE is set, but no key set/),
    ]);
    expect(problemsOf({ AUTH_MODE: 'sometimes' })).toEqual(['AUTH_MODE must be one of: jwt, none']);
  });

  it('fetches keys over https only, but for a loopback address', () => {
    expect(problemsOf({ AUTH_JWKS_URL: 'http://idp.example/jwks', AUTH_AUDIENCE: 'a' })).toEqual([
      expect.stringContaining('must use https://'),
    ]);
    expect(problemsOf({ AUTH_JWKS_URL: 'http://127.0.0.1:8080/jwks', AUTH_AUDIENCE: 'a' })).toEqual([]);
    expect(problemsOf({ AUTH_JWKS_URL: 'ftp://idp.example/jwks' })).toEqual(['AUTH_JWKS_URL must be an https:// URL']);
  });

  it('has documented defaults for the limits', () => {
    expect(loadConfig({}).grpc).toMatchObject({ maxRequestBytes: 65_536, maxSubscriptionsPerTenant: 16, shutdownGraceMs: 10_000 });
    expect(
      loadConfig({ GRPC_MAX_REQUEST_BYTES: '1024', MAX_SUBSCRIPTIONS_PER_TENANT: '2', GRPC_SHUTDOWN_GRACE_MS: '0' }).grpc,
    ).toMatchObject({
      maxRequestBytes: 1024,
      maxSubscriptionsPerTenant: 2,
      shutdownGraceMs: 0,
    });
  });
});

describe('gRPC TLS', () => {
  const certs = testCertificates();

  it('reads the certificate chain, key and client CA once', () => {
    const config = loadConfig({
      GRPC_TLS_CERT_FILE: certs.serverCert,
      GRPC_TLS_KEY_FILE: certs.serverKey,
      GRPC_TLS_CLIENT_CA_FILE: certs.caCert,
    });
    expect(config.grpc.tls?.certChain).toEqual(certs.read(certs.serverCert));
    expect(config.grpc.tls?.privateKey.reveal()).toEqual(certs.read(certs.serverKey));
    expect(config.grpc.tls?.clientCa).toEqual(certs.read(certs.caCert));
  });

  it('names each unusable file: missing, not PEM, or a key of another certificate', () => {
    expect(problemsOf({ GRPC_TLS_CERT_FILE: '/nowhere/cert.pem', GRPC_TLS_KEY_FILE: certs.serverKey })).toEqual([
      'GRPC_TLS_CERT_FILE: cannot read /nowhere/cert.pem (ENOENT)',
    ]);
    expect(problemsOf({ GRPC_TLS_CERT_FILE: certs.serverKey, GRPC_TLS_KEY_FILE: certs.serverCert })).toEqual([
      'GRPC_TLS_CERT_FILE: not a PEM certificate',
      'GRPC_TLS_KEY_FILE: not an unencrypted PEM private key',
    ]);
    expect(problemsOf({ GRPC_TLS_CERT_FILE: certs.serverCert, GRPC_TLS_KEY_FILE: certs.clientKey })).toEqual([
      'GRPC_TLS_KEY_FILE does not belong to the certificate in GRPC_TLS_CERT_FILE',
    ]);
  });

  it('needs the certificate and the key together, and both for mTLS', () => {
    expect(problemsOf({ GRPC_TLS_CERT_FILE: certs.serverCert })).toEqual(['GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE must be set together']);
    expect(problemsOf({ GRPC_TLS_CLIENT_CA_FILE: certs.caCert })).toEqual([
      expect.stringContaining('GRPC_TLS_CLIENT_CA_FILE needs GRPC_TLS_CERT_FILE'),
    ]);
  });
});

describe('Kafka client security', () => {
  const certs = testCertificates();

  it('is plaintext without SASL by default', () => {
    expect(loadConfig({}).kafka).toMatchObject({ ssl: null, sasl: null });
  });

  it('reads TLS and SCRAM settings, the password from its file without the trailing line break', () => {
    const config = loadConfig(
      {
        KAFKA_SSL: 'true',
        KAFKA_SSL_CA_FILE: '/run/secrets/kafka-ca.pem',
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_SASL_USERNAME: 'toolhistory',
        KAFKA_SASL_PASSWORD_FILE: '/run/secrets/kafka-password',
      },
      filesAt({ '/run/secrets/kafka-ca.pem': certs.read(certs.caCert), '/run/secrets/kafka-password': 's3cret pass\n' }),
    );
    expect(config.kafka.ssl).toEqual({ ca: certs.read(certs.caCert), cert: null, key: null });
    expect(config.kafka.sasl?.mechanism).toBe('scram-sha-512');
    expect(config.kafka.sasl?.username).toBe('toolhistory');
    expect(config.kafka.sasl?.password.reveal()).toBe('s3cret pass');
  });

  it('takes a client certificate for mTLS to the broker', () => {
    const config = loadConfig({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: certs.clientCert, KAFKA_SSL_KEY_FILE: certs.clientKey });
    expect(config.kafka.ssl?.cert).toEqual(certs.read(certs.clientCert));
    expect(config.kafka.ssl?.key?.reveal()).toEqual(certs.read(certs.clientKey));
  });

  it('lists every incomplete or contradictory setting', () => {
    expect(problemsOf({ KAFKA_SSL_CA_FILE: '/ca.pem', KAFKA_SASL_USERNAME: 'u' })).toEqual([
      'KAFKA_SSL_CA_FILE is set but KAFKA_SSL is not true: the connection would be plaintext',
      'KAFKA_SASL_USERNAME is set but KAFKA_SASL_MECHANISM is not',
    ]);
    expect(problemsOf({ KAFKA_SASL_MECHANISM: 'scram-sha-256' })).toEqual([
      'KAFKA_SASL_MECHANISM=scram-sha-256 needs KAFKA_SASL_USERNAME',
      'KAFKA_SASL_MECHANISM=scram-sha-256 needs KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE',
    ]);
    expect(
      problemsOf(
        { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p', KAFKA_SASL_PASSWORD_FILE: '/p' },
        filesAt({ '/p': 'p' }),
      ),
    ).toEqual(['KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE are both set: set one of them']);
    expect(problemsOf({ KAFKA_SASL_MECHANISM: 'gssapi' })).toEqual([
      'KAFKA_SASL_MECHANISM must be one of: plain, scram-sha-256, scram-sha-512',
    ]);
    expect(problemsOf({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: certs.clientCert })).toEqual([
      'KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE must be set together (a client certificate and its key)',
    ]);
  });

  it('warns that PLAIN without TLS sends the password in the clear', () => {
    const config = loadConfig({ KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' });
    expect(config.warnings).toEqual([expect.stringContaining('in the clear')]);
  });
});

describe('PostgreSQL password file', () => {
  it('reads the password once and keeps it out of the URL', () => {
    const config = loadConfig(
      { DATABASE_URL: 'postgres://svc@db.internal:5432/toolhistory?sslmode=verify-full', DATABASE_PASSWORD_FILE: '/run/secrets/db' },
      filesAt({ '/run/secrets/db': 'pg-pass\n' }),
    );
    expect(config.database.url).toBe('postgres://svc@db.internal:5432/toolhistory?sslmode=verify-full');
    expect(config.database.password?.reveal()).toBe('pg-pass');
  });

  it('refuses a password in two places, and a file that cannot be read', () => {
    expect(problemsOf({ DATABASE_URL: 'postgres://svc:inline@db/x', DATABASE_PASSWORD_FILE: '/p' }, filesAt({ '/p': 'x' }))).toEqual([
      expect.stringContaining('DATABASE_URL holds a password and DATABASE_PASSWORD_FILE is set'),
    ]);
    expect(problemsOf({ DATABASE_PASSWORD_FILE: '/missing' }, filesAt({}))).toEqual([
      'DATABASE_PASSWORD_FILE: cannot read /missing (ENOENT)',
    ]);
    expect(problemsOf({ DATABASE_PASSWORD_FILE: '/empty' }, filesAt({ '/empty': '' }))).toEqual([
      'DATABASE_PASSWORD_FILE: /empty is empty',
    ]);
  });
});

describe('secrets in the config object', () => {
  it('never show when the config is logged, serialized or inspected', () => {
    const certs = testCertificates();
    const config = loadConfig(
      {
        KAFKA_SASL_MECHANISM: 'scram-sha-256',
        KAFKA_SASL_USERNAME: 'u',
        KAFKA_SASL_PASSWORD: 'kafka-password-value',
        DATABASE_PASSWORD_FILE: '/p',
        GRPC_TLS_CERT_FILE: '/cert',
        GRPC_TLS_KEY_FILE: '/key',
      },
      filesAt({ '/p': 'database-password-value', '/cert': certs.read(certs.serverCert), '/key': certs.read(certs.serverKey) }),
    );
    const keyText = certs.read(certs.serverKey).toString();
    for (const shown of [JSON.stringify(config), inspect(config, { depth: 10 }), String(config.kafka.sasl?.password)]) {
      expect(shown).not.toContain('kafka-password-value');
      expect(shown).not.toContain('database-password-value');
      expect(shown).not.toContain('PRIVATE KEY');
      expect(shown).not.toContain(keyText.slice(40, 80));
    }
  });
});
