-- Up Migration

-- The key store (docs/adr/033): data keys wrapped by a key-encryption key,
-- in a database apart from the payloads they seal, so that a backup of the
-- payloads holds no key. Deleting a row is crypto-shredding: every copy of
-- the payloads sealed under that key, anywhere, is unreadable from then on.
CREATE TABLE data_keys (
  key_id           uuid        PRIMARY KEY,
  tenant_id        text        NOT NULL,
  conversation_id  text        NOT NULL,
  -- The end of the retention period the key serves; NULL: until the conversation is erased.
  expires_at       timestamptz,
  -- For a fork's copy of another conversation's payloads: every conversation they came through.
  via              text[]      NOT NULL DEFAULT '{}',
  kek_id           text        NOT NULL,
  -- AES-256-GCM of the data key under the key-encryption key kek_id, base64.
  wrapped          text        NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);

-- One key per scope, however many recorders race to make it.
CREATE UNIQUE INDEX data_keys_scope ON data_keys (tenant_id, conversation_id, (coalesce(expires_at, 'infinity'::timestamptz)), via);
-- The sweeper's due keys, and erasure's copies in forks.
CREATE INDEX data_keys_expiry ON data_keys (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX data_keys_via ON data_keys USING gin (via) WHERE via <> '{}';
-- Rotation: the keys another key-encryption key wraps.
CREATE INDEX data_keys_kek ON data_keys (kek_id);

-- A known value wrapped once by each key-encryption key: a keyring whose key
-- of that id does not unwrap it is refused at start.
CREATE TABLE kek_checks (
  kek_id      text        PRIMARY KEY,
  wrapped     text        NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration

DROP TABLE kek_checks;
DROP TABLE data_keys;
