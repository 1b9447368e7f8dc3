import type { Pool } from 'pg';
import { DEFAULT_REDACTION_POLICY, type ReasoningRules, RecordBatch, RedactionPolicy, TokenCounter } from '@toolhistory/domain';
import { o200kTokens } from '@toolhistory/tokenizer';
import { PostgresRecordingStorage } from './postgres-recording-unit';

/**
 * The recording service (`RecordBatch`) over PostgreSQL storage: one
 * transaction per partition batch with the events, the read model and the
 * offset (postgres-recording-unit.ts). A shorthand for the wiring, the
 * tests and the benchmarks, with the service's tokenizer by default.
 */
export class PostgresRecordingStore extends RecordBatch {
  constructor(
    pool: Pool,
    redaction: RedactionPolicy = DEFAULT_REDACTION_POLICY,
    tokens: TokenCounter = o200kTokens,
    reasoning?: ReasoningRules,
  ) {
    super(new PostgresRecordingStorage(pool), { redaction, tokens, reasoning });
  }
}
