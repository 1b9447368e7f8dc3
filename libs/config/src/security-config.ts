import { createPrivateKey, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { ConfigFiles } from './config-files';
import type { Settings } from './read-settings';
import { Secret } from './secret';
import type { KafkaSaslMechanism } from './settings';

/** PEM files for a TLS endpoint, read once at boot. */
export interface TlsFiles {
  certChain: Buffer;
  privateKey: Secret<Buffer>;
  /** When set, clients must present a certificate signed by this CA (mTLS). */
  clientCa: Buffer | null;
}

/**
 * `jwt`: callers need a verified token. `none`: deliberately no authentication
 * (AUTH_MODE=none). `unconfigured`: nothing was said, so the server serves
 * the loopback interface only.
 */
export type AuthConfig =
  | {
      mode: 'jwt';
      jwks: { kind: 'file'; path: string } | { kind: 'url'; url: string };
      issuer: string | null;
      audience: string | null;
    }
  | { mode: 'none' }
  | { mode: 'unconfigured' };

export interface KafkaSecurity {
  /** null: plaintext. */
  ssl: { ca: Buffer | null; cert: Buffer | null; key: Secret<Buffer> | null } | null;
  sasl: { mechanism: KafkaSaslMechanism; username: string; password: Secret } | null;
}

/** What a rule found: problems stop start-up, warnings are logged once it starts. */
export interface Findings {
  problems: string[];
  warnings: string[];
}

const LOOPBACK_NAMES = new Set(['localhost', 'ip6-localhost', 'ip6-loopback']);

/** True when only this machine can reach `host`: 127.0.0.0/8, ::1, localhost. Wildcards (0.0.0.0, ::) are not. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (LOOPBACK_NAMES.has(bare)) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^(0{0,4}:){7}0{0,3}1$/.test(bare) || /^::ffff:127\./.test(bare);
  return false;
}

export function authConfig({ values, given }: Settings, findings: Findings): AuthConfig {
  const { AUTH_MODE: mode, AUTH_JWKS_FILE: file, AUTH_ISSUER: issuer, AUTH_AUDIENCE: audience } = values;
  // As set: a URL its parser refused still names a key set.
  const url = given.AUTH_JWKS_URL;
  const { problems, warnings } = findings;
  if (file !== undefined && url !== undefined) problems.push('AUTH_JWKS_FILE and AUTH_JWKS_URL are both set: set one of them');
  const keySet = file !== undefined ? ({ kind: 'file', path: file } as const) : url !== undefined ? ({ kind: 'url', url } as const) : null;
  if (mode === 'none') {
    if (keySet)
      problems.push('AUTH_MODE=none turns authentication off, but AUTH_JWKS_FILE or AUTH_JWKS_URL is set: remove one or the other');
    return { mode: 'none' };
  }
  if (keySet === null) {
    if (mode === 'jwt') problems.push('AUTH_MODE=jwt needs a key set: set AUTH_JWKS_FILE or AUTH_JWKS_URL');
    for (const name of ['AUTH_ISSUER', 'AUTH_AUDIENCE'] as const) {
      if (values[name] !== undefined)
        problems.push(`${name} is set, but no key set to verify tokens with: set AUTH_JWKS_FILE or AUTH_JWKS_URL`);
    }
    return { mode: 'unconfigured' };
  }
  if (keySet.kind === 'url') {
    let parsed: URL | null = null;
    try {
      parsed = new URL(keySet.url);
    } catch {
      problems.push('AUTH_JWKS_URL must be an https:// URL');
    }
    if (parsed?.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
      problems.push(
        'AUTH_JWKS_URL must use https:// (http:// is accepted for a loopback address only): keys fetched in the clear can be swapped',
      );
    }
  }
  if (audience === undefined) {
    warnings.push(
      'AUTH_AUDIENCE is not set: any token of the identity provider that names tenants and scopes is accepted, whatever service it was issued for',
    );
  }
  return { mode: 'jwt', jwks: keySet, issuer: issuer ?? null, audience: audience ?? null };
}

/** Where a listener binds (`variable`: GRPC_HOST or HTTP_HOST): loopback unless callers must authenticate, or the operator says so. */
export function listenHost(variable: 'GRPC_HOST' | 'HTTP_HOST', { given }: Settings, auth: AuthConfig, findings: Findings): string {
  // As set: an address its parser refused is still where the operator asked to listen.
  const host = given[variable] ?? (auth.mode === 'jwt' ? '0.0.0.0' : '127.0.0.1');
  if (isLoopbackHost(host)) return host;
  if (auth.mode === 'unconfigured') {
    findings.problems.push(
      `${variable}=${host} would let other machines call the service, but no authentication is configured. ` +
        'Set AUTH_JWKS_FILE or AUTH_JWKS_URL so callers need a token, or AUTH_MODE=none to serve without authentication deliberately ' +
        '(without authentication the service listens on 127.0.0.1 only)',
    );
  } else if (auth.mode === 'none') {
    findings.warnings.push(
      variable === 'GRPC_HOST'
        ? `AUTH_MODE=none and GRPC_HOST=${host}: every caller that reaches the port reads and erases every tenant's history`
        : `AUTH_MODE=none and HTTP_HOST=${host}: every caller that reaches the port reads the service's metrics and, ` +
            "where the gRPC role runs, every tenant's invocations, search, usage and dead letters through the audit console's API",
    );
  }
  return host;
}

/** One warning for every listener other machines reach without TLS while callers send tokens. */
export function warnOfPlaintextListeners(
  listeners: ReadonlyArray<{ variable: string; host: string }>,
  auth: AuthConfig,
  tls: TlsFiles | null,
  findings: Findings,
): void {
  const exposed = listeners.filter((l) => !isLoopbackHost(l.host));
  if (tls !== null || auth.mode !== 'jwt' || exposed.length === 0) return;
  findings.warnings.push(
    `${exposed.map((l) => `${l.variable}=${l.host}`).join(' and ')} without GRPC_TLS_CERT_FILE: tokens and tool results cross the network in the clear unless a proxy in front encrypts them`,
  );
}

export function grpcTls({ values }: Settings, files: ConfigFiles, findings: Findings): TlsFiles | null {
  const { GRPC_TLS_CERT_FILE: certFile, GRPC_TLS_KEY_FILE: keyFile, GRPC_TLS_CLIENT_CA_FILE: caFile } = values;
  if (certFile === undefined && keyFile === undefined) {
    if (caFile !== undefined)
      findings.problems.push(
        'GRPC_TLS_CLIENT_CA_FILE needs GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE: client certificates are checked over TLS',
      );
    return null;
  }
  if (certFile === undefined || keyFile === undefined) {
    findings.problems.push('GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE must be set together');
    return null;
  }
  const certChain = files.bytes('GRPC_TLS_CERT_FILE', certFile);
  const privateKey = files.bytes('GRPC_TLS_KEY_FILE', keyFile);
  const clientCa = files.bytes('GRPC_TLS_CLIENT_CA_FILE', caFile);
  if (certChain === null || privateKey === null || (caFile !== undefined && clientCa === null)) return null;
  checkKeyPair('GRPC_TLS', certChain, privateKey, findings);
  if (clientCa !== null) checkCertificate('GRPC_TLS_CLIENT_CA_FILE', clientCa, findings);
  return { certChain, privateKey: new Secret(privateKey), clientCa };
}

export function kafkaSecurity({ values: v, given }: Settings, files: ConfigFiles, findings: Findings): KafkaSecurity {
  const { problems, warnings } = findings;
  const sslOn = v.KAFKA_SSL;
  let ssl: KafkaSecurity['ssl'] = null;
  if (!sslOn) {
    for (const name of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'] as const) {
      if (v[name] !== undefined) problems.push(`${name} is set but KAFKA_SSL is not true: the connection would be plaintext`);
    }
  } else {
    if ((v.KAFKA_SSL_CERT_FILE === undefined) !== (v.KAFKA_SSL_KEY_FILE === undefined)) {
      problems.push('KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE must be set together (a client certificate and its key)');
    }
    const ca = files.bytes('KAFKA_SSL_CA_FILE', v.KAFKA_SSL_CA_FILE);
    const cert = files.bytes('KAFKA_SSL_CERT_FILE', v.KAFKA_SSL_CERT_FILE);
    const key = files.bytes('KAFKA_SSL_KEY_FILE', v.KAFKA_SSL_KEY_FILE);
    if (ca !== null) checkCertificate('KAFKA_SSL_CA_FILE', ca, findings);
    if (cert !== null && key !== null) checkKeyPair('KAFKA_SSL', cert, key, findings);
    ssl = { ca, cert, key: key === null ? null : new Secret(key) };
  }

  const {
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: username,
    KAFKA_SASL_PASSWORD: password,
    KAFKA_SASL_PASSWORD_FILE: passwordFile,
  } = v;
  if (mechanism === undefined) {
    // A mechanism its parser refused is set all the same: its problem is listed already.
    for (const name of ['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD', 'KAFKA_SASL_PASSWORD_FILE'] as const) {
      if (v[name] !== undefined && given.KAFKA_SASL_MECHANISM === undefined)
        problems.push(`${name} is set but KAFKA_SASL_MECHANISM is not`);
    }
    return { ssl, sasl: null };
  }
  if (username === undefined) problems.push(`KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_USERNAME`);
  if (password !== undefined && passwordFile !== undefined)
    problems.push('KAFKA_SASL_PASSWORD and KAFKA_SASL_PASSWORD_FILE are both set: set one of them');
  if (password === undefined && passwordFile === undefined) {
    problems.push(`KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_PASSWORD or KAFKA_SASL_PASSWORD_FILE`);
  }
  const secret = password ?? files.text('KAFKA_SASL_PASSWORD_FILE', passwordFile);
  if (mechanism === 'plain' && !sslOn)
    warnings.push('KAFKA_SASL_MECHANISM=plain without KAFKA_SSL: the password crosses the network in the clear');
  if (username === undefined || secret === null || secret === undefined) return { ssl, sasl: null };
  return { ssl, sasl: { mechanism, username, password: new Secret(secret) } };
}

export function databasePassword({ values, given }: Settings, files: ConfigFiles, findings: Findings): Secret | null {
  if (values.DATABASE_PASSWORD_FILE === undefined) return null;
  // As set: a URL its parser refused may still hold the password.
  if (given.DATABASE_URL !== undefined && urlHasPassword(given.DATABASE_URL)) {
    findings.problems.push('DATABASE_URL holds a password and DATABASE_PASSWORD_FILE is set: keep the password in one place (the file)');
  }
  const password = files.text('DATABASE_PASSWORD_FILE', values.DATABASE_PASSWORD_FILE);
  return password === null ? null : new Secret(password);
}

function urlHasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

function checkCertificate(variable: string, pem: Buffer, findings: Findings): void {
  try {
    new X509Certificate(pem);
  } catch {
    findings.problems.push(`${variable}: not a PEM certificate`);
  }
}

/** `prefix`_CERT_FILE must hold a certificate whose public key matches `prefix`_KEY_FILE's private key. */
function checkKeyPair(prefix: string, certPem: Buffer, keyPem: Buffer, findings: Findings): void {
  let cert: X509Certificate | null = null;
  try {
    cert = new X509Certificate(certPem);
  } catch {
    findings.problems.push(`${prefix}_CERT_FILE: not a PEM certificate`);
  }
  let key = null;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    findings.problems.push(`${prefix}_KEY_FILE: not an unencrypted PEM private key`);
  }
  if (cert && key && !cert.checkPrivateKey(key)) {
    findings.problems.push(`${prefix}_KEY_FILE does not belong to the certificate in ${prefix}_CERT_FILE`);
  }
}
