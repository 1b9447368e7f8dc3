import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import type { Metadata } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Request } from 'express';
import { authorize, type CallerAuthenticator, OPEN_HTTP_ROUTES, UNAUTHENTICATED_CALLER } from '@toolhistory/domain';
import { AppError, ErrorCode, toAppError } from '@toolhistory/errors';
import { CALLER_AUTHENTICATOR, ROOT_LOGGER } from '../tokens';
import { toHttpException } from '../http/http-status';
import { isRebindingSafeHost } from '../http/rebinding-safe-host';
import { toRpcException } from '../grpc/grpc-status';
import { peerOf } from '../grpc/grpc-call';
import { rememberCaller, rememberHttpCaller } from './callers-of-calls';

/**
 * Every ToolHistory RPC and every HTTP route passes here before its handler
 * (a global guard): the caller is verified from the `authorization` header,
 * then must hold the operation's scope and the request's tenant, and name a
 * conversation where its scope allows only one (the domain's access rules). An RPC or route without an access rule is
 * refused, so a new one is closed by default. grpc.health.v1 is served
 * beside NestJS and, like the HTTP probes, needs no token.
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
    return context.getType() === 'http' ? this.checkHttp(context) : this.checkRpc(context);
  }

  private async checkHttp(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const route = `${request.method} ${(request.route as { path?: string } | undefined)?.path ?? request.path}`;
    if (OPEN_HTTP_ROUTES.has(route)) return true;
    const tenantId = typeof request.params?.tenant === 'string' ? request.params.tenant : undefined;
    const conversationId = typeof request.query?.conversation === 'string' ? request.query.conversation : undefined;
    let subject: string | undefined;
    try {
      const authorization = request.headers.authorization;
      const caller = await this.authenticator.authenticate(authorization === undefined ? [] : [authorization]);
      subject = caller.subject;
      if (caller === UNAUTHENTICATED_CALLER && !isRebindingSafeHost(request.headers.host)) {
        throw new AppError(
          ErrorCode.PermissionDenied,
          'permission denied: without authentication, HTTP routes answer only requests addressed to an IP address or localhost ' +
            '(a host name could be re-pointed at this machine); configure authentication to serve other host names',
        );
      }
      authorize(caller, route, tenantId, conversationId);
      rememberHttpCaller(request, caller);
      return true;
    } catch (thrown) {
      this.refused(thrown, { route, subject, tenantId: tenantId?.slice(0, 256), peer: request.socket.remoteAddress });
      throw toHttpException(thrown);
    }
  }

  private async checkRpc(context: ExecutionContext): Promise<boolean> {
    const rpc = rpcNameOf(context);
    const rpcContext = context.switchToRpc();
    const metadata = rpcContext.getContext<Metadata>();
    const request = rpcContext.getData<{ tenant_id?: unknown; conversation_id?: unknown } | undefined>();
    const tenantId = typeof request?.tenant_id === 'string' ? request.tenant_id : undefined;
    const conversationId = typeof request?.conversation_id === 'string' ? request.conversation_id : undefined;
    let subject: string | undefined;
    try {
      const caller = await this.authenticator.authenticate(metadata.get('authorization').map(String));
      subject = caller.subject;
      authorize(caller, rpc, tenantId, conversationId);
      rememberCaller(metadata, caller);
      return true;
    } catch (thrown) {
      this.refused(thrown, { rpc, subject, tenantId: tenantId?.slice(0, 256), peer: peerOf(context.getArgByIndex(2)) });
      throw toRpcException(thrown);
    }
  }

  /** One line per refusal, for whoever watches for probing; never the token. */
  private refused(thrown: unknown, fields: Record<string, unknown>): void {
    const error = toAppError(thrown);
    if (error.retriable) this.log.warn({ ...fields, reason: error.message }, 'call not authenticated: verification unavailable');
    else this.log.info({ ...fields, reason: error.message }, 'call refused');
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
