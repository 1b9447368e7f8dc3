-- Up Migration

-- Payloads keep the text they were recorded with (docs/adr/012-payload-text-as-received.md).
-- jsonb stores a parsed form and gives keys back in its own order
-- ({"status","carrier","eta"} came back as {"eta","status","carrier"}), so the
-- first replay of a conversation was not the text the model saw and missed
-- the provider's prompt cache. json keeps the text as written, which is the
-- producer's own serialization after redaction, and costs less to write
-- (checked, not parsed into a second form). Nothing queries inside payloads.
-- Both statements rewrite their table: on a large one, a maintenance window.
ALTER TABLE events ALTER COLUMN payload TYPE json USING payload::json;
ALTER TABLE invocations
  ALTER COLUMN arguments TYPE json USING arguments::json,
  ALTER COLUMN result TYPE json USING result::json;

-- The same searchable text as migration 005, from json (its text is the stored text).
CREATE FUNCTION invocation_search_text(payload json) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT replace(left(coalesce(CASE json_typeof(payload)
      WHEN 'string' THEN payload #>> '{}'
      ELSE regexp_replace(payload::text, '\\(\\|[bfnrt]|u[0-9a-fA-F]{4})', ' ', 'g')
    END, ''), 8192), '/', '/ ')
  $$;

CREATE FUNCTION invocation_search_document(tool_name text, arguments json, result json) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT setweight(to_tsvector('simple'::regconfig, coalesce(tool_name, '')), 'A')
      || setweight(to_tsvector('simple'::regconfig, invocation_search_text(arguments)), 'B')
      || setweight(to_tsvector('simple'::regconfig, invocation_search_text(result)), 'C')
  $$;

DROP FUNCTION invocation_search_document(text, jsonb, jsonb);

-- Down Migration

CREATE FUNCTION invocation_search_document(tool_name text, arguments jsonb, result jsonb) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$
    SELECT setweight(to_tsvector('simple'::regconfig, coalesce(tool_name, '')), 'A')
      || setweight(to_tsvector('simple'::regconfig, invocation_search_text(arguments)), 'B')
      || setweight(to_tsvector('simple'::regconfig, invocation_search_text(result)), 'C')
  $$;
DROP FUNCTION invocation_search_document(text, json, json);
DROP FUNCTION invocation_search_text(json);
ALTER TABLE invocations
  ALTER COLUMN arguments TYPE jsonb USING arguments::jsonb,
  ALTER COLUMN result TYPE jsonb USING result::jsonb;
ALTER TABLE events ALTER COLUMN payload TYPE jsonb USING payload::jsonb;
