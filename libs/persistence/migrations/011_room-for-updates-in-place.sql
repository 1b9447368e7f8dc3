-- Up Migration

-- Read-model rows are written once and then updated: an invocation when its
-- result arrives, a run when it ends, a conversation with every batch. None
-- of these updates changes an indexed column, so PostgreSQL can make them
-- heap-only (HOT: the new version on the same page, no index entry added),
-- but only when the page has room; at the default fillfactor (100) pages
-- are filled to the brim and every update writes every index again. The
-- free space is kept from now on (existing pages keep their layout until
-- rewritten, e.g. by a rebuild, which copies these settings).
ALTER TABLE invocations SET (fillfactor = 75);
ALTER TABLE runs SET (fillfactor = 75);
ALTER TABLE conversations SET (fillfactor = 50);

-- Down Migration

ALTER TABLE conversations RESET (fillfactor);
ALTER TABLE runs RESET (fillfactor);
ALTER TABLE invocations RESET (fillfactor);
