import fc from 'fast-check';
import { AppError, ErrorCode } from '@toolhistory/errors';
import {
  ALL_TENANT_OPERATIONS,
  authorize,
  Caller,
  callerFromClaims,
  CONVERSATION_ONLY_SCOPES,
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
      // A request naming a conversation: what a scope limited to one conversation needs (below).
      for (const scope of scopes) expect(denial(() => authorize(caller(new Set(['acme']), [scope]), rpc, 'acme', 'c-1'))).toBeUndefined();
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
      const scopes: readonly Scope[] = typeof rule === 'string' ? [rule] : rule;
      const allTenants = ALL_TENANT_OPERATIONS.has(route);
      for (const scope of scopes)
        expect(denial(() => authorize(caller(allTenants ? '*' : new Set(['acme']), [scope]), route, 'acme', 'c-1'))).toBeUndefined();
      const others = SCOPES.filter((s) => !scopes.includes(s));
      expect(denial(() => authorize(caller('*', others), route, 'acme'))).toBe(
        `permission denied: ${route} needs ${scopes.length === 1 ? `the scope ${scopes[0]}` : `one of the scopes ${scopes.join(', ')}`}`,
      );
      if (!allTenants) expect(denial(() => authorize(caller(new Set(['acme']), [scopes[0]]), route, 'globex'))).toMatch(/tenant "globex"/);
    },
  );

  describe('a scope limited to one conversation (an agent searching its own history)', () => {
    const cases: [string, string[], string | undefined, string | undefined][] = [
      // operation, scopes, conversation, denial
      ['SearchToolHistory', ['history:read'], 'c-1', undefined],
      [
        'SearchToolHistory',
        ['history:read'],
        undefined,
        'permission denied: SearchToolHistory with history:read needs conversation_id (all of a tenant needs the scope audit:read)',
      ],
      [
        'SearchToolHistory',
        ['history:read'],
        '',
        'permission denied: SearchToolHistory with history:read needs conversation_id (all of a tenant needs the scope audit:read)',
      ],
      ['SearchToolHistory', ['audit:read'], undefined, undefined],
      ['SearchToolHistory', ['audit:read', 'history:read'], undefined, undefined],
      [
        'SearchToolHistory',
        ['events:subscribe'],
        'c-1',
        'permission denied: SearchToolHistory needs one of the scopes audit:read, history:read',
      ],
      [
        'GET /api/v1/tenants/:tenant/search',
        ['history:read'],
        undefined,
        'permission denied: GET /api/v1/tenants/:tenant/search with history:read needs conversation (all of a tenant needs the scope audit:read)',
      ],
      ['GET /api/v1/tenants/:tenant/search', ['history:read'], 'c-1', undefined],
      // Other operations taking history:read are not limited by it.
      ['WatchConversation', ['history:read'], undefined, undefined],
      ['GetReplayHistory', ['history:read'], undefined, undefined],
    ];
    it.each(cases)('%s with %j and conversation %j', (operation, scopes, conversationId, expected) => {
      expect(denial(() => authorize(caller(new Set(['acme']), scopes), operation, 'acme', conversationId))).toBe(expected);
    });

    it('checks the tenant before the conversation: another tenant is refused whatever conversation is named', () => {
      expect(denial(() => authorize(caller(new Set(['acme']), ['history:read']), 'SearchToolHistory', 'globex', 'c-1'))).toMatch(
        /tenant "globex"/,
      );
    });

    it('names only operations that have an access rule holding the limited scope beside a wider one', () => {
      const operations: Record<string, ScopeRule> = { ...RPC_SCOPES, ...HTTP_ROUTE_SCOPES };
      for (const [operation, { scope }] of Object.entries(CONVERSATION_ONLY_SCOPES)) {
        const rule = operations[operation];
        expect(Array.isArray(rule) && rule.includes(scope) && rule.length > 1).toBe(true);
      }
    });
  });

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

  it('allows exactly when the scope is held, the tenant is permitted and a conversation is named where the scope needs one', () => {
    const rpcs = Object.keys(RPC_SCOPES) as Array<keyof typeof RPC_SCOPES>;
    const tenant = fc.constantFrom('acme', 'globex', 'initech');
    fc.assert(
      fc.property(
        fc.oneof(fc.constant<'*'>('*'), fc.uniqueArray(tenant, { maxLength: 3 })),
        fc.subarray([...SCOPES]),
        fc.constantFrom(...rpcs),
        tenant,
        fc.option(fc.constantFrom('', 'c-1'), { nil: undefined }),
        (tenants, scopes, rpc, tenantId, conversationId) => {
          const c = caller(tenants === '*' ? '*' : new Set(tenants), scopes);
          const rule: ScopeRule = RPC_SCOPES[rpc];
          const limited = Object.hasOwn(CONVERSATION_ONLY_SCOPES, rpc) ? CONVERSATION_ONLY_SCOPES[rpc].scope : undefined;
          // A scope that allows only one conversation counts only when the request names one.
          const counts = (scope: Scope) => scopes.includes(scope) && (scope !== limited || Boolean(conversationId));
          const expected = (typeof rule === 'string' ? counts(rule) : rule.some(counts)) && (tenants === '*' || tenants.includes(tenantId));
          expect(denial(() => authorize(c, rpc, tenantId, conversationId)) === undefined).toBe(expected);
        },
      ),
    );
  });
});
