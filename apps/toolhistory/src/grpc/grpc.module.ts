import { Module } from '@nestjs/common';
import type { Pool } from 'pg';
import type { ReplayPolicy } from '@toolhistory/domain';
import { PostgresReplayReader } from '@toolhistory/persistence';
import { GetReplayHistory } from '../replay/get-replay-history';
import { GET_REPLAY_HISTORY, PG_POOL, REPLAY_POLICY } from '../tokens';
import { GrpcHealthService } from './grpc-health.service';
import { ToolHistoryController } from './tool-history.controller';

@Module({
  controllers: [ToolHistoryController],
  providers: [
    {
      provide: GET_REPLAY_HISTORY,
      inject: [PG_POOL, REPLAY_POLICY],
      useFactory: (pool: Pool, policy: ReplayPolicy) => new GetReplayHistory(new PostgresReplayReader(pool), policy),
    },
    GrpcHealthService,
  ],
})
export class GrpcModule {}
