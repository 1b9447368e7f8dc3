import { Controller, Get, Inject, Query } from '@nestjs/common';
import type { Logger } from 'pino';
import type { DeadLettersView } from '@toolhistory/console-api';
import { DEFAULT_AUDIT_BUDGET_MS } from '../audit-budget';
import type { ListDeadLetters } from './list-dead-letters';
import { answerHttp } from '../http/answer-http';
import { LIST_DEAD_LETTERS, ROOT_LOGGER } from '../tokens';
import { ConsoleQuery } from '../console/console-query';

/** The console shows the newest letters, and of each value at most this much. */
const MAX_LETTERS = 500;
const MAX_VALUE_CHARS = 16_384;
const DAY_MS = 86_400_000;

/** The dead letters (newest first; the last 7 days unless `since` says otherwise), each with whether it was redriven. */
@Controller('api/v1')
export class ListDeadLettersHttpController {
  private readonly log: Logger;

  constructor(
    @Inject(LIST_DEAD_LETTERS) private readonly deadLetters: ListDeadLetters,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'console' });
  }

  @Get('dead-letters')
  list(@Query() query: Record<string, unknown>): Promise<DeadLettersView> {
    return answerHttp(this.log, 'dead-letters', {}, DEFAULT_AUDIT_BUDGET_MS, async () => {
      const params = new ConsoleQuery(query);
      const code = params.text('code');
      const since = params.time('since') ?? Date.now() - 7 * DAY_MS;
      params.check();
      const letters = await this.deadLetters.execute({ since, codes: code ? [code] : undefined });
      return {
        letters: letters
          .sort((a, b) => (a.deadLetteredAt < b.deadLetteredAt ? 1 : a.deadLetteredAt > b.deadLetteredAt ? -1 : 0))
          .slice(0, MAX_LETTERS)
          .map((l) => ({
            place: `${l.partition}:${l.offset}`,
            errorCode: l.errorCode,
            reason: l.reason,
            deadLetteredAt: l.deadLetteredAt,
            original: l.original,
            key: l.key,
            value: l.value === null ? null : l.value.toString('utf8').slice(0, MAX_VALUE_CHARS),
            stub: l.stub,
            redriven: l.redriven,
          })),
      };
    });
  }
}
