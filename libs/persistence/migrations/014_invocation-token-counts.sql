-- Up Migration

-- Tokens of each call and result as replayed (o200k_base), counted once by
-- the writer that records the invocation, so a token budget at replay adds
-- stored numbers instead of tokenizing the history on every turn. Rows
-- recorded before this migration have none: replay counts them when it
-- reads them, and a rebuild stores them.
ALTER TABLE invocations ADD COLUMN call_tokens integer, ADD COLUMN result_tokens integer;

-- Down Migration

ALTER TABLE invocations DROP COLUMN result_tokens, DROP COLUMN call_tokens;
