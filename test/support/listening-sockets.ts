import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';

const LISTEN = '0A';

function ipv4(hex: string): string {
  // /proc/net/tcp writes the address as one little-endian 32-bit word.
  const bytes = hex.match(/../g)!.map((b) => parseInt(b, 16));
  return bytes.reverse().join('.');
}

function ipv6(hex: string): string {
  // Four little-endian 32-bit words.
  const words = hex.match(/.{8}/g)!.map((w) => w.match(/../g)!.reverse().join(''));
  const groups = words
    .join('')
    .match(/.{4}/g)!
    .map((g) => g.replace(/^0+(?=.)/, ''));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/**
 * The local addresses on which some process of this machine listens on TCP
 * `port`, read from the kernel's socket tables (Linux): where a server is
 * reachable from, without connecting to anything.
 */
export function listeningAddresses(port: number): string[] {
  const found: string[] = [];
  for (const [file, decode] of [
    ['/proc/net/tcp', ipv4],
    ['/proc/net/tcp6', ipv6],
  ] as const) {
    let table: string;
    try {
      table = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of table.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 4 || fields[3] !== LISTEN) continue;
      const [address, portHex] = fields[1].split(':');
      if (parseInt(portHex, 16) === port) found.push(decode(address));
    }
  }
  return found;
}

/** Whether something accepts a TCP connection on 127.0.0.1:`port` now. */
export function answersOnLoopback(port: number): Promise<boolean> {
  return new Promise<boolean>((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}
