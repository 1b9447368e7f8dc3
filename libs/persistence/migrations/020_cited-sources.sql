-- Up Migration

-- The source numbers a completed run's final answer cites (RunCompleted.citedSources,
-- a JSON list of integers): replay keeps only the cited items of results a
-- citations rule names. NULL when the run did not say (replayed whole).
ALTER TABLE runs ADD COLUMN cited_sources jsonb;

-- Down Migration

ALTER TABLE runs DROP COLUMN cited_sources;
