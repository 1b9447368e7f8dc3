/** Reasoning state kept apart, in memory: what the recorder's steps leave (the PostgreSQL adapter's SQL, restated for tests). */
import type { ModelResponseRow } from '../projection/read-model.types';
import type { RecordedResponse } from '../ports/replay-reader.port';
import type { KeptReasoning, ReasoningStep } from './reasoning-apart';

export class InMemoryReasoning {
  readonly rows = new Map<string, KeptReasoning>();

  apply(steps: readonly ReasoningStep[]): void {
    for (const step of steps) {
      const matching = (keep: (row: KeptReasoning) => boolean) => [...this.rows.values()].filter(keep);
      switch (step.kind) {
        case 'keep':
          if (!this.rows.has(step.reasoning.eventId)) this.rows.set(step.reasoning.eventId, step.reasoning);
          break;
        case 'end-turn':
          for (const row of matching((r) => sameConversation(r, step.conversation) && r.turn === step.turn && r.keep === 'turn'))
            this.rows.delete(row.eventId);
          break;
        case 'other-turns':
          for (const row of matching((r) => sameConversation(r, step.conversation) && r.turn !== step.turn && r.keep === 'turn'))
            this.rows.delete(row.eventId);
          break;
        case 'tool-rule':
          for (const row of matching(
            (r) => sameConversation(r, step.run) && r.runId === step.run.runId && r.roundIndex === step.roundIndex,
          )) {
            if (step.keep === 'never') this.rows.delete(row.eventId);
            else if (step.keep === 'turn' && row.keep === 'always') this.rows.set(row.eventId, { ...row, keep: 'turn' });
          }
          break;
      }
    }
  }

  /** The responses as replay reads them: each row with its state while it rests. */
  recorded(responses: Iterable<ModelResponseRow>): RecordedResponse[] {
    return [...responses].map((r) => {
      const kept = this.rows.get(r.responseEventId);
      return { ...r, state: kept?.state ?? null, reasoningTokens: kept?.tokens ?? 0 };
    });
  }
}

const sameConversation = (a: { tenantId: string; conversationId: string }, b: { tenantId: string; conversationId: string }) =>
  a.tenantId === b.tenantId && a.conversationId === b.conversationId;
