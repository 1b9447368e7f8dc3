-- Up Migration

-- Full-text search over invocations (docs/adr/006-full-text-search.md).
--
-- The searchable text of one payload as stored (already redacted; '{}' or
-- NULL when the policy kept no payload, so nothing else can be found):
-- - a string payload is its own text, anything else its JSON text with the
--   escapes that would glue a letter to the next word (\n, \t, \uXXXX, \\)
--   turned into spaces;
-- - only its first 8,192 characters count, which bounds what parsing and
--   indexing one upsert costs the recorder, and keeps every document far
--   below the 1 MB limit of a tsvector (an oversized one would fail the
--   recorder's whole batch);
-- - a space follows every '/', so 'src/app.ts' is found by 'src', 'app.ts'
--   and 'src/app.ts' (the parser would otherwise keep a path as one word).
--   Queries get the same treatment, and snippets have it undone.
-- IMMUTABLE is true (only immutable built-ins, no lookups), which a
-- generated column requires; plain SQL, so the planner inlines it.
CREATE FUNCTION invocation_search_text(payload jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT replace(left(coalesce(CASE jsonb_typeof(payload)
      WHEN 'string' THEN payload #>> '{}'
      ELSE regexp_replace(payload::text, '\\(\\|[bfnrt]|u[0-9a-fA-F]{4})', ' ', 'g')
    END, ''), 8192), '/', '/ ')
  $$;

-- The search document lives on the row it describes, so a copy of the table
-- (CREATE TABLE ... (LIKE invocations INCLUDING ALL)) carries it and its
-- index along. 'simple': lower-cased words, no stemming and no stop words,
-- because tool traffic is identifiers, paths and code as much as prose, in
-- any language. Weights: tool name A, arguments B, result C.
ALTER TABLE invocations ADD COLUMN search_document tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('simple'::regconfig, coalesce(tool_name, '')), 'A')
  || setweight(to_tsvector('simple'::regconfig, invocation_search_text(arguments)), 'B')
  || setweight(to_tsvector('simple'::regconfig, invocation_search_text(result)), 'C')
) STORED;

-- fastupdate (the default, stated on purpose): new entries go to a pending
-- list that is merged in bulk, so the recorder's batch upserts stay cheap;
-- searches, which are rare, scan that list too.
CREATE INDEX invocations_search_idx ON invocations USING gin (search_document) WITH (fastupdate = on);

-- Down Migration

DROP INDEX invocations_search_idx;
ALTER TABLE invocations DROP COLUMN search_document;
DROP FUNCTION invocation_search_text(jsonb);
