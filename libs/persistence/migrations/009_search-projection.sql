-- Up Migration

-- Search leaves the recorder's transaction (docs/adr/011-search-projection.md).
-- The document of migration 005 was a generated column of invocations, so
-- every upsert of a recorded batch parsed its payloads into words and
-- updated a GIN index. It now lives in a table of its own, written after
-- commit by the search projection, which follows the event store from its
-- checkpoint in projection_checkpoints.

-- The document of one invocation, as migration 005 made it: tool name
-- (weight A), arguments (B), result (C), 'simple' words. One definition,
-- used by the projection, by a rebuild and by the back-fill below.
CREATE FUNCTION invocation_search_document(tool_name text, arguments jsonb, result jsonb) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT setweight(to_tsvector('simple'::regconfig, coalesce(tool_name, '')), 'A')
      || setweight(to_tsvector('simple'::regconfig, invocation_search_text(arguments)), 'B')
      || setweight(to_tsvector('simple'::regconfig, invocation_search_text(result)), 'C')
  $$;

-- Keyed like the invocation it describes; the tenant leads the index, so a
-- search walks one tenant's entries of a word, not every tenant's. A GIN
-- index over a text column needs btree_gin's operator classes; they are
-- found by type wherever the extension lives, so it goes to public once per
-- database rather than into a schema that may be dropped.
CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public;

CREATE TABLE invocation_search (
  tenant_id        text     NOT NULL,
  conversation_id  text     NOT NULL,
  run_id           text     NOT NULL,
  pair_key         text     NOT NULL,
  -- The invocation's time (invocations.at), so a search can narrow by time
  -- and pick its newest matches without visiting the invocations.
  at               timestamptz,
  document         tsvector NOT NULL,
  PRIMARY KEY (tenant_id, conversation_id, run_id, pair_key)
);

INSERT INTO invocation_search (tenant_id, conversation_id, run_id, pair_key, at, document)
  SELECT tenant_id, conversation_id, run_id, pair_key, at, search_document FROM invocations;

INSERT INTO projection_checkpoints (projection, position)
  SELECT 'search', coalesce(max(global_position), 0) FROM events
  ON CONFLICT (projection) DO UPDATE SET position = EXCLUDED.position, updated_at = now();

CREATE INDEX invocation_search_tenant_document_idx ON invocation_search USING gin (tenant_id, document) WITH (fastupdate = on);

DROP INDEX invocations_search_idx;
ALTER TABLE invocations DROP COLUMN search_document;

-- Down Migration

ALTER TABLE invocations ADD COLUMN search_document tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('simple'::regconfig, coalesce(tool_name, '')), 'A')
  || setweight(to_tsvector('simple'::regconfig, invocation_search_text(arguments)), 'B')
  || setweight(to_tsvector('simple'::regconfig, invocation_search_text(result)), 'C')
) STORED;
CREATE INDEX invocations_search_idx ON invocations USING gin (search_document) WITH (fastupdate = on);
DELETE FROM projection_checkpoints WHERE projection = 'search';
DROP TABLE invocation_search;
DROP FUNCTION invocation_search_document(text, jsonb, jsonb);
