-- Up Migration

-- With fastupdate, new entries go to a pending list that is merged into the
-- index in bulk. That was chosen (migration 005) to keep the recorder's
-- upserts cheap; the search projection now writes the documents after
-- commit (migration 009), off the recording path. Merged pending lists left
-- the index about four times the size of one written entry by entry (3.25
-- MB against 0.79 MB for the storage benchmark's 800 invocations), and
-- every search scans the pending list as well. The list is merged now, as
-- turning the option off does not do it.
ALTER INDEX invocation_search_tenant_document_idx SET (fastupdate = off);
SELECT gin_clean_pending_list('invocation_search_tenant_document_idx'::regclass);

-- Down Migration

ALTER INDEX invocation_search_tenant_document_idx SET (fastupdate = on);
