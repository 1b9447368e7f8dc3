-- Up Migration

-- Read model: what the model answered in each round of a run (ModelResponseReceived):
-- its provider, model and text, and the size of the reasoning state kept apart.
CREATE TABLE model_responses (
  tenant_id          text        NOT NULL,
  conversation_id    text        NOT NULL,
  run_id             text        NOT NULL,
  round_index        integer     NOT NULL,
  provider           text        NOT NULL,
  model              text        NOT NULL,
  text               text,
  -- With encryption at rest the text rests sealed here, and text stays NULL.
  text_seal          jsonb,
  reasoning_bytes    integer     NOT NULL DEFAULT 0,
  text_tokens        integer     NOT NULL DEFAULT 0,
  response_event_id  uuid        NOT NULL,
  responded_at       timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, conversation_id, run_id, round_index)
);

-- A response's reasoning state (reasoning items, call signatures, item ids),
-- taken off its event before the event is stored, and kept only as long as
-- its rule allows (docs/adr/027-reasoning-state.md): `turn` rows go when
-- their turn ends, `always` rows with their conversation; `never` is not
-- written. Not part of the read model: a rebuild leaves it as it is.
CREATE TABLE model_reasoning (
  event_id         uuid        PRIMARY KEY,
  tenant_id        text        NOT NULL,
  conversation_id  text        NOT NULL,
  run_id           text        NOT NULL,
  round_index      integer     NOT NULL,
  turn             text        NOT NULL,
  keep             text        NOT NULL CHECK (keep IN ('turn', 'always')),
  -- The state in clear, or NULL when it rests sealed in state_seal (encryption at rest).
  state            json,
  state_seal       jsonb,
  bytes            integer     NOT NULL,
  -- What its reasoning items take in the model's context, counted once when recorded.
  tokens           integer     NOT NULL DEFAULT 0,
  recorded_at      timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE model_reasoning ADD CONSTRAINT model_reasoning_state_once CHECK ((state IS NULL) <> (state_seal IS NULL));
CREATE INDEX model_reasoning_turn_idx ON model_reasoning (tenant_id, conversation_id, turn);
CREATE INDEX model_reasoning_round_idx ON model_reasoning (tenant_id, conversation_id, run_id, round_index);

-- Down Migration

DROP TABLE model_reasoning;
DROP TABLE model_responses;
