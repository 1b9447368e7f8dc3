import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM files of a throwaway CA, a server certificate for 127.0.0.1/localhost and a client certificate. */
export interface TestCertificates {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second CA and a client certificate it signed: a client the server must not trust. */
  strangerCert: string;
  strangerKey: string;
  read(file: string): Buffer;
}

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

function issue(dir: string, name: string, ca: { cert: string; key: string }, subject: string, extensions: string): void {
  openssl(dir, [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
  ]);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-CAcreateserial',
    '-days',
    '2',
    '-sha256',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.pem`,
  ]);
}

function selfSignedCa(dir: string, name: string): { cert: string; key: string } {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.pem`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return { cert: `${name}.pem`, key: `${name}.key` };
}

let made: TestCertificates | undefined;

/** Made once per test process with openssl, in a fresh temporary directory. */
export function testCertificates(): TestCertificates {
  if (made) return made;
  const dir = mkdtempSync(join(tmpdir(), 'toolhistory-tls-'));
  const ca = selfSignedCa(dir, 'test-ca');
  issue(dir, 'server', ca, '/CN=toolhistory-test-server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  issue(dir, 'client', ca, '/CN=toolhistory-test-client', 'extendedKeyUsage=clientAuth\n');
  const stranger = selfSignedCa(dir, 'stranger-ca');
  issue(dir, 'stranger', stranger, '/CN=stranger', 'extendedKeyUsage=clientAuth\n');
  const at = (file: string) => join(dir, file);
  made = {
    dir,
    caCert: at('test-ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    strangerCert: at('stranger.pem'),
    strangerKey: at('stranger.key'),
    read: (file) => readFileSync(file),
  };
  return made;
}
