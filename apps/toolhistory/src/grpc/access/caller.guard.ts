import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import type { Metadata } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { authorize, type CallerAuthenticator } from '@toolhistory/domain';
import { toAppError } from '@toolhistory/errors';
import { CALLER_AUTHENTICATOR, ROOT_LOGGER } from '../../tokens';
import { toRpcException } from '../grpc-status';
import { peerOf } from '../grpc-call';
import { rememberCaller } from './callers-of-calls';

/**
 * Every ToolHistory RPC passes here before its handler (a global guard): the
 * caller is verified from the `authorization` header, then must hold the
 * RPC's scope and the request's tenant (the domain's access rules). An RPC
 * without an access rule is refused, so a new one is closed by default.
 * grpc.health.v1 is served beside NestJS and needs no token.
 */
@Injectable()
export class CallerGuard implements CanActivate {
  private readonly log: Logger;

  constructor(
    @Inject(CALLER_AUTHENTICATOR) private readonly authenticator: CallerAuthenticator,
    @Inject(ROOT_LOGGER) logger: Logger,
  ) {
    this.log = logger.child({ component: 'access' });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rpc = rpcNameOf(context);
    const rpcContext = context.switchToRpc();
    const metadata = rpcContext.getContext<Metadata>();
    const request = rpcContext.getData<{ tenant_id?: unknown } | undefined>();
    const tenantId = typeof request?.tenant_id === 'string' ? request.tenant_id : undefined;
    let subject: string | undefined;
    try {
      const caller = await this.authenticator.authenticate(metadata.get('authorization').map(String));
      subject = caller.subject;
      authorize(caller, rpc, tenantId);
      rememberCaller(metadata, caller);
      return true;
    } catch (thrown) {
      const error = toAppError(thrown);
      // One line per refusal, for whoever watches for probing; never the token.
      const fields = { rpc, subject, tenantId: tenantId?.slice(0, 256), peer: peerOf(context.getArgByIndex(2)), reason: error.message };
      if (error.retriable) this.log.warn(fields, 'call not authenticated: verification unavailable');
      else this.log.info(fields, 'call refused');
      throw toRpcException(error);
    }
  }
}

interface GrpcPattern {
  service?: string;
  rpc?: string;
}

function rpcNameOf(context: ExecutionContext): string {
  const patterns = Reflect.getMetadata(PATTERN_METADATA, context.getHandler()) as GrpcPattern[] | GrpcPattern | undefined;
  const pattern = Array.isArray(patterns) ? patterns[0] : patterns;
  return pattern?.rpc ?? '(unknown)';
}
