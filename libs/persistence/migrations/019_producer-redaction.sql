-- Up Migration

-- The call's or the result's producer redacted its payload before
-- publishing (the events' producerRedacted). Rows recorded before this
-- migration had no producer redaction: false is their truth.
ALTER TABLE invocations ADD COLUMN producer_redacted boolean NOT NULL DEFAULT false;

-- Down Migration

ALTER TABLE invocations DROP COLUMN producer_redacted;
