-- Up Migration

-- Substring search (docs/adr/025-substring-search.md): a literal text found
-- anywhere in an invocation's tool name, arguments or result, in any case,
-- inside words too ("kett" in "kettle"), which full-text search (words,
-- migration 005) cannot do. A trigram index (pg_trgm) finds the rows that
-- hold every three-character run of the text, and ILIKE checks them.
-- pg_trgm is a trusted extension (PostgreSQL 13 and later): a database
-- owner creates it without being a superuser, as with btree_gin (009).
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;

-- The text a substring search looks in, of one payload as stored (redacted;
-- NULL or '{}' when the policy kept no payload): a string payload is its own
-- text, any other its JSON text as received. Only its first 8,192
-- characters, as for words (migration 005).
CREATE FUNCTION invocation_substring_text(payload json) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT left(coalesce(CASE json_typeof(payload) WHEN 'string' THEN payload #>> '{}' ELSE payload::text END, ''), 8192)
  $$;

-- One invocation's searched text: tool name, arguments, result, joined by
-- chr(1). A query never holds that character (a control character is a
-- blank in a query), so no match spans two of them.
CREATE FUNCTION invocation_substring_document(tool_name text, arguments json, result json) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT coalesce(tool_name, '') || chr(1) || invocation_substring_text(arguments) || chr(1) || invocation_substring_text(result)
  $$;

-- Written by the substring projection, a projection of its own with its
-- own checkpoint beside the words projection of migration 009: trigrams cost
-- several times what words cost to index, and word search keeps its
-- freshness when substring search falls behind in a burst. Keyed like
-- invocation_search.
CREATE TABLE invocation_substring (
  tenant_id        text        NOT NULL,
  conversation_id  text        NOT NULL,
  run_id           text        NOT NULL,
  pair_key         text        NOT NULL,
  at               timestamptz,
  substring_text   text        NOT NULL,
  PRIMARY KEY (tenant_id, conversation_id, run_id, pair_key)
);

INSERT INTO invocation_substring (tenant_id, conversation_id, run_id, pair_key, at, substring_text)
  SELECT i.tenant_id, i.conversation_id, i.run_id, i.pair_key, i.at, invocation_substring_document(i.tool_name,
    coalesce(i.arguments, (SELECT e.payload -> 'arguments' FROM events e WHERE e.event_id = i.call_event_id)),
    coalesce(i.result, (SELECT e.payload -> 'result' FROM events e WHERE e.event_id = i.result_event_id)))
  FROM invocations i;

-- What the back-fill covered: every event recorded so far.
INSERT INTO projection_checkpoints (projection, position)
  SELECT 'substring', coalesce(max(global_position), 0) FROM events
  ON CONFLICT (projection) DO UPDATE SET position = EXCLUDED.position, updated_at = now();

-- The tenant leads, as in the words index; the operator class is named with
-- the schema pg_trgm lives in (public, or wherever it was created before).
-- Unlike the words index (migration 013), this one keeps a pending list:
-- a document has hundreds to a few thousand trigrams, and adding each to
-- the index in place made the search projection about 2.9 times slower
-- (docs/adr/025-substring-search.md, docs/benchmarks.md). Appended to the
-- pending list and merged in bulk once it holds 4 MB, they cost a fraction
-- of that; a search scans what is still pending too, and merged lists
-- leave the index larger (half-filled pages). The limit is set on the
-- index so the server's setting does not decide it.
DO $$
BEGIN
  EXECUTE format(
    'CREATE INDEX invocation_substring_tenant_text_idx ON invocation_substring USING gin (tenant_id, substring_text %I.gin_trgm_ops) WITH (fastupdate = on, gin_pending_list_limit = 4096)',
    (SELECT n.nspname FROM pg_extension x JOIN pg_namespace n ON n.oid = x.extnamespace WHERE x.extname = 'pg_trgm'));
END
$$;

-- Down Migration

DELETE FROM projection_checkpoints WHERE projection = 'substring';
DROP TABLE invocation_substring;
DROP FUNCTION invocation_substring_document(text, json, json);
DROP FUNCTION invocation_substring_text(json);
