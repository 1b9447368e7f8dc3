import fc from 'fast-check';
import { AppError, ErrorCode } from '@toolhistory/errors';
import {
  ALL_TENANT_OPERATIONS,
  authorize,
  Caller,
  callerFromClaims,
  HTTP_ROUTE_SCOPES,
  RPC_SCOPES,
  type Scope,
  type ScopeRule,
  SCOPES,
  UNAUTHENTICATED_CALLER,
} from './access-rules';

const denial = (work: () => void): string | undefined => {
  try {
    work();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(ErrorCode.PermissionDenied);
    return (error as AppError).message;
  }
};

describe('callerFromClaims', () => {
  it('reads tenants, space-separated scopes and the subject', () => {
    const caller = callerFromClaims({ sub: 'worker-7', tenants: ['acme', 'globex'], scope: 'history:read  audit:read other:thing' });
    expect(caller).toEqual({ subject: 'worker-7', tenants: new Set(['acme', 'globex']), scopes: new Set(['history:read', 'audit:read']) });
  });

  it('reads "*" as every tenant, and a list of scopes', () => {
    expect(callerFromClaims({ sub: 'ops', tenants: '*', scope: ['conversations:erase'] })).toEqual({
      subject: 'ops',
      tenants: '*',
      scopes: new Set(['conversations:erase']),
    });
  });

  it('grants nothing for claims of the wrong shape', () => {
    for (const claims of [{}, { tenants: 'acme', scope: 7 }, { tenants: [1, null, ''], scope: null }, { tenants: ['*'] }]) {
      const caller = callerFromClaims(claims);
      expect(caller.tenants).toEqual(new Set());
      expect(caller.scopes).toEqual(new Set());
    }
  });

  it('names the subject by sub, else azp, else client_id', () => {
    expect(callerFromClaims({ azp: 'svc' }).subject).toBe('svc');
    expect(callerFromClaims({ client_id: 'cli' }).subject).toBe('cli');
    expect(callerFromClaims({}).subject).toBe('unknown');
  });
});

describe('authorize', () => {
  const caller = (tenants: Caller['tenants'], scopes: string[]): Caller =>
    callerFromClaims({ sub: 's', tenants: tenants === '*' ? '*' : [...tenants], scope: scopes.join(' ') });

  const rules: [string, ScopeRule][] = Object.entries(RPC_SCOPES);
  it.each(rules.filter((entry): entry is [string, Scope] => typeof entry[1] === 'string'))('%s needs %s', (rpc, scope) => {
    expect(denial(() => authorize(caller(new Set(['acme']), [scope]), rpc, 'acme'))).toBeUndefined();
    const others = SCOPES.filter((s) => s !== scope);
    expect(denial(() => authorize(caller(new Set(['acme']), others), rpc, 'acme'))).toBe(
      `permission denied: ${rpc} needs the scope ${scope}`,
    );
  });

  it.each(rules.filter((entry): entry is [string, readonly Scope[]] => typeof entry[1] !== 'string'))(
    '%s needs any one of %j',
    (rpc, scopes) => {
      for (const scope of scopes) expect(denial(() => authorize(caller(new Set(['acme']), [scope]), rpc, 'acme'))).toBeUndefined();
      const others = SCOPES.filter((s) => !scopes.includes(s));
      expect(denial(() => authorize(caller(new Set(['acme']), others), rpc, 'acme'))).toBe(
        `permission denied: ${rpc} needs one of the scopes ${scopes.join(', ')}`,
      );
      expect(denial(() => authorize(caller(new Set(['acme']), [scopes[0]]), rpc, 'globex'))).toMatch(/tenant "globex"/);
    },
  );

  it('refuses a tenant the caller does not hold, without saying anything about its data', () => {
    expect(denial(() => authorize(caller(new Set(['acme']), ['history:read']), 'GetReplayHistory', 'globex'))).toBe(
      'permission denied: tenant "globex" is not permitted to this caller',
    );
  });

  it('lets "*" use every tenant, only with the scopes it holds', () => {
    const operator = caller('*', ['audit:read']);
    expect(denial(() => authorize(operator, 'ListToolInvocations', 'any-tenant'))).toBeUndefined();
    expect(denial(() => authorize(operator, 'EraseConversation', 'any-tenant'))).toMatch(/needs the scope conversations:erase/);
  });

  it.each(Object.entries(HTTP_ROUTE_SCOPES) as [string, ScopeRule][])(
    'HTTP route %s needs %j, and a tenant in the route is checked',
    (route, rule) => {
      const allTenants = ALL_TENANT_OPERATIONS.has(route);
      const scopes: readonly Scope[] = typeof rule === 'string' ? [rule] : rule;
      for (const scope of scopes) {
        expect(denial(() => authorize(caller(allTenants ? '*' : new Set(['acme']), [scope]), route, 'acme'))).toBeUndefined();
      }
      expect(
        denial(() =>
          authorize(
            caller(
              '*',
              SCOPES.filter((s) => !scopes.includes(s)),
            ),
            route,
            'acme',
          ),
        ),
      ).toBe(`permission denied: ${route} needs ${scopes.length === 1 ? 'the scope' : 'one of the scopes'} ${scopes.join(', ')}`);
      if (!allTenants) expect(denial(() => authorize(caller(new Set(['acme']), [scopes[0]]), route, 'globex'))).toMatch(/tenant "globex"/);
    },
  );

  it('lets any verified caller ask who it is, whatever its scopes', () => {
    expect(denial(() => authorize(caller(new Set(['acme']), []), 'GET /api/v1/me', undefined))).toBeUndefined();
  });

  it('keeps operations that answer for every tenant (dead letters) to callers permitted every tenant', () => {
    expect(denial(() => authorize(caller(new Set(['acme', 'globex']), ['dead-letters:read']), 'GET /api/v1/dead-letters', undefined))).toBe(
      'permission denied: GET /api/v1/dead-letters answers for every tenant and needs a caller permitted every tenant',
    );
    expect(denial(() => authorize(caller('*', ['dead-letters:read']), 'GET /api/v1/dead-letters', undefined))).toBeUndefined();
  });

  it('refuses an RPC without an access rule to everyone', () => {
    expect(denial(() => authorize(UNAUTHENTICATED_CALLER, 'DropEverything', 'acme'))).toBe(
      'permission denied: DropEverything has no access rule',
    );
    expect(denial(() => authorize(UNAUTHENTICATED_CALLER, 'toString', 'acme'))).toMatch(/has no access rule/);
  });

  it('allows exactly when the scope is held and the tenant is permitted', () => {
    const rpcs = Object.keys(RPC_SCOPES) as Array<keyof typeof RPC_SCOPES>;
    const tenant = fc.constantFrom('acme', 'globex', 'initech');
    fc.assert(
      fc.property(
        fc.oneof(fc.constant<'*'>('*'), fc.uniqueArray(tenant, { maxLength: 3 })),
        fc.subarray([...SCOPES]),
        fc.constantFrom(...rpcs),
        tenant,
        (tenants, scopes, rpc, tenantId) => {
          const c = caller(tenants === '*' ? '*' : new Set(tenants), scopes);
          const rule: ScopeRule = RPC_SCOPES[rpc];
          const expected =
            (typeof rule === 'string' ? scopes.includes(rule) : rule.some((r) => scopes.includes(r))) &&
            (tenants === '*' || tenants.includes(tenantId));
          expect(denial(() => authorize(c, rpc, tenantId)) === undefined).toBe(expected);
        },
      ),
    );
  });
});
