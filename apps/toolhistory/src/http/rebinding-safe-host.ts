import { isIP } from 'node:net';

/**
 * Whether a request's Host header names this machine in a way no DNS
 * answer can change: an IP address or `localhost`. Without authentication
 * the HTTP data routes answer only such requests, so a web page whose own
 * host name an attacker re-points at 127.0.0.1 (DNS rebinding) cannot read
 * them from a browser on this machine.
 */
export function isRebindingSafeHost(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  if (hostHeader.startsWith('[') && !hostHeader.includes(']')) return false;
  const host = hostHeader.startsWith('[') ? hostHeader.slice(1, hostHeader.indexOf(']')) : hostHeader.replace(/:\d+$/, '');
  return host.toLowerCase() === 'localhost' || isIP(host) !== 0;
}
