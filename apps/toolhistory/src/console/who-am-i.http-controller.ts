import { Controller, Get, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { ConsoleCaller } from '@toolhistory/console-api';
import { UNAUTHENTICATED_CALLER } from '@toolhistory/domain';
import { callerOf } from '../access/callers-of-calls';

/** Who the console is talking as: its tenants and scopes decide what the console offers. */
@Controller('api/v1')
export class WhoAmIHttpController {
  @Get('me')
  me(@Req() request: Request): ConsoleCaller {
    const caller = callerOf(request);
    return {
      subject: caller.subject,
      tenants: caller.tenants === '*' ? '*' : [...caller.tenants].sort(),
      scopes: [...caller.scopes].sort(),
      authenticated: caller !== UNAUTHENTICATED_CALLER,
    };
  }
}
