import { isRebindingSafeHost } from './rebinding-safe-host';

describe('isRebindingSafeHost', () => {
  it.each(['127.0.0.1:9464', '127.0.0.1', 'localhost:9464', 'LOCALHOST', '[::1]:9464', '[::1]', '10.0.0.7:9464'])('accepts %s', (host) => {
    expect(isRebindingSafeHost(host)).toBe(true);
  });

  it.each([undefined, '', 'attacker.example:9464', 'localhost.attacker.example', '127.0.0.1.nip.io:9464', 'toolhistory:9464', '[::1'])(
    'refuses %s',
    (host) => {
      expect(isRebindingSafeHost(host)).toBe(false);
    },
  );
});
