import { AppError, ErrorCode } from '@toolhistory/errors';

/** Larger than any token an identity provider issues; a bigger header is not a token. */
const MAX_TOKEN_CHARS = 16 * 1024;
const BEARER = /^Bearer +([A-Za-z0-9_.~+/=-]+)$/i;

export const unauthenticated = (reason: string, cause?: unknown): AppError =>
  new AppError(ErrorCode.Unauthenticated, `unauthenticated: ${reason}`, { cause });

/** The token of the call's one `authorization: Bearer <token>` header. */
export function bearerToken(authorization: readonly string[]): string {
  if (authorization.length === 0) throw unauthenticated('no token: send the header authorization: Bearer <JWT>');
  if (authorization.length > 1) throw unauthenticated('more than one authorization header');
  const [value] = authorization;
  if (value.length > MAX_TOKEN_CHARS + 7) throw unauthenticated('malformed token');
  const token = BEARER.exec(value.trim())?.[1];
  if (token === undefined) throw unauthenticated('the authorization header must be Bearer <JWT>');
  return token;
}
