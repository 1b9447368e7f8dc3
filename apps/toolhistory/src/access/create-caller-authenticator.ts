import type { Logger } from 'pino';
import { JwksFile, JwksUrl, JwtCallerAuthenticator } from '@toolhistory/auth';
import type { AuthConfig } from '@toolhistory/config';
import { type CallerAuthenticator, UNAUTHENTICATED_CALLER } from '@toolhistory/domain';

/** Authentication off (loopback only, or AUTH_MODE=none): every call acts as the unrestricted caller. */
const OPEN_ACCESS: CallerAuthenticator = { authenticate: () => Promise.resolve(UNAUTHENTICATED_CALLER) };

/** The authenticator the configuration asks for; a key set file that is unusable at start stops start-up. */
export async function createCallerAuthenticator(auth: AuthConfig, log: Logger): Promise<CallerAuthenticator> {
  switch (auth.mode) {
    case 'jwt': {
      const { jwks, issuer, audience } = auth;
      let keys;
      if (jwks.kind === 'file') {
        keys = await JwksFile.open(jwks.path, log);
      } else {
        keys = new JwksUrl(jwks.url);
        await keys.warmUp(log);
      }
      return new JwtCallerAuthenticator({ keys, issuer, audience });
    }
    case 'none':
    case 'unconfigured':
      return OPEN_ACCESS;
  }
}
