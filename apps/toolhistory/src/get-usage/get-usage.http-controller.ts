import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import type { Logger } from 'pino';
import type { UsageView } from '@toolhistory/console-api';
import { DEFAULT_AUDIT_BUDGET_MS } from '../audit-budget';
import type { GetUsage } from './get-usage';
import { answerHttp } from '../http/answer-http';
import { GET_USAGE, ROOT_LOGGER } from '../tokens';
import { ConsoleQuery } from '../console/console-query';

const DAY_MS = 86_400_000;

/** Calls, errors and durations per tool and period (the GetUsage rules); the last 7 days by hour unless asked otherwise. */
@Controller('api/v1/tenants/:tenant')
export class GetUsageHttpController {
  private readonly log: Logger;

  constructor(
    @Inject(GET_USAGE) private readonly useCase: GetUsage,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'console' });
  }

  @Get('usage')
  usage(@Param('tenant') tenantId: string, @Query() query: Record<string, unknown>): Promise<UsageView> {
    return answerHttp(this.log, 'usage', { tenantId }, DEFAULT_AUDIT_BUDGET_MS, async (signal) => {
      const params = new ConsoleQuery(query);
      const bucket = params.oneOf('bucket', ['hour', 'day'] as const) ?? 'hour';
      const to = params.time('to') ?? Date.now();
      const from = params.time('from') ?? to - 7 * DAY_MS;
      params.check();
      const report = await this.useCase.execute({ tenantId, from, to, bucket }, signal);
      return { bucket, from: new Date(from).toISOString(), to: new Date(to).toISOString(), ...report };
    });
  }
}
