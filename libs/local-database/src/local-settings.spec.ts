import { readLocalSettings } from './local-settings';

describe('readLocalSettings', () => {
  it('defaults to port 5432 and .cache/postgres in the repository', () => {
    expect(readLocalSettings({}, '/repo')).toEqual({ localPostgresPort: 5432, embeddedPostgresDir: '/repo/.cache/postgres' });
  });

  it('takes a port and a folder, relative to the repository or absolute', () => {
    expect(readLocalSettings({ LOCAL_POSTGRES_PORT: '6543', EMBEDDED_POSTGRES_DIR: 'tmp/pg' }, '/repo')).toEqual({
      localPostgresPort: 6543,
      embeddedPostgresDir: '/repo/tmp/pg',
    });
    expect(readLocalSettings({ EMBEDDED_POSTGRES_DIR: '/var/tmp/pg' }, '/repo').embeddedPostgresDir).toBe('/var/tmp/pg');
  });

  it('names every problem at once', () => {
    expect(() => readLocalSettings({ LOCAL_POSTGRES_PORT: '99999', EMBEDDED_POSTGRES_DIR: ' ' }, '/repo')).toThrow(
      'invalid settings: LOCAL_POSTGRES_PORT must be a port number (1-65535), not "99999"; EMBEDDED_POSTGRES_DIR must not be empty when set',
    );
    expect(() => readLocalSettings({ LOCAL_POSTGRES_PORT: 'five' }, '/repo')).toThrow(/LOCAL_POSTGRES_PORT must be a port number/);
  });
});
