import { AppError, ErrorCode } from '@toolhistory/errors';

/** What a token may allow, one scope per kind of use (least privilege). */
export const SCOPES = [
  'history:read',
  'audit:read',
  'events:subscribe',
  'conversations:erase',
  'conversations:fork',
  'metrics:read',
  'dead-letters:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/** The scope an operation needs, or a list of scopes of which any one will do. */
export type ScopeRule = Scope | readonly Scope[];

/**
 * Every RPC of toolhistory.v1.ToolHistory and the scope it needs. An RPC
 * missing here is refused to every caller, so a new RPC is closed until it
 * is given a scope (test/architecture.spec.ts compares this with the proto).
 */
export const RPC_SCOPES = {
  GetReplayHistory: 'history:read',
  ListToolInvocations: 'audit:read',
  GetUsage: 'audit:read',
  // A whole tenant with audit:read; an agent its own conversation with history:read (CONVERSATION_ONLY_SCOPES).
  SearchToolHistory: ['audit:read', 'history:read'],
  SubscribeToolEvents: 'events:subscribe',
  EraseConversation: 'conversations:erase',
  // Copies a conversation's history (its payloads) into a new one: a right of its own, like erasure.
  ForkConversation: 'conversations:fork',
  // A UI showing one conversation live: an agent's own view, or an auditor's.
  WatchConversation: ['history:read', 'audit:read'],
} as const satisfies Record<string, ScopeRule>;
export type ToolHistoryRpc = keyof typeof RPC_SCOPES;

/**
 * Every HTTP route and the one scope it needs, as `METHOD /path`; like an
 * RPC, a route missing here is refused to every caller.
 */
export const HTTP_ROUTE_SCOPES = {
  'GET /metrics': 'metrics:read',
  // The audit console's API: the tenant is the route's `:tenant`, checked like an RPC's tenant_id.
  'GET /api/v1/tenants/:tenant/conversations/:conversation/timeline': 'audit:read',
  // WatchConversation as server-sent events: the console's live timeline.
  'GET /api/v1/tenants/:tenant/conversations/:conversation/watch': ['history:read', 'audit:read'],
  'GET /api/v1/tenants/:tenant/search': ['audit:read', 'history:read'],
  'GET /api/v1/tenants/:tenant/usage': 'audit:read',
  'GET /api/v1/dead-letters': 'dead-letters:read',
} as const satisfies Record<string, ScopeRule>;

/**
 * Operations where a scope allows only one conversation at a time: a caller
 * holding it, and none of the operation's other scopes, must name the
 * conversation (by the request field given here). An agent with
 * history:read may search its own conversation, not its whole tenant.
 */
export const CONVERSATION_ONLY_SCOPES: Readonly<Record<string, { scope: Scope; conversationField: string }>> = {
  SearchToolHistory: { scope: 'history:read', conversationField: 'conversation_id' },
  'GET /api/v1/tenants/:tenant/search': { scope: 'history:read', conversationField: 'conversation' },
};

/**
 * Routes any verified caller may use, whatever its scopes: they tell the
 * caller only what its own token says (the console asks who it is).
 */
export const AUTHENTICATED_HTTP_ROUTES: ReadonlySet<string> = new Set(['GET /api/v1/me']);

/**
 * Operations whose answer can hold any tenant's data (a dead letter may not
 * even name its tenant): only a caller permitted every tenant may use them.
 */
export const ALL_TENANT_OPERATIONS: ReadonlySet<string> = new Set(['GET /api/v1/dead-letters']);

/**
 * Routes that need no token. The probes, like grpc.health.v1, tell nothing
 * but up or down; the console's page and its built assets are code, the
 * same for everyone, and ask the API (which checks the caller) for data.
 */
export const OPEN_HTTP_ROUTES: ReadonlySet<string> = new Set(['GET /livez', 'GET /readyz', 'GET /console', 'GET /console/assets/:file']);

const OPERATION_SCOPES: Readonly<Record<string, ScopeRule>> = { ...RPC_SCOPES, ...HTTP_ROUTE_SCOPES };

/** Who is calling: verified from a token, or everyone when authentication is off. */
export interface Caller {
  /** The token's `sub` (else `azp` or `client_id`), for audit lines; never a secret. */
  subject: string;
  /** `'*'`: every tenant (operators). */
  tenants: '*' | ReadonlySet<string>;
  scopes: ReadonlySet<Scope>;
}

/** The caller when the operator turned authentication off (loopback, or AUTH_MODE=none). */
export const UNAUTHENTICATED_CALLER: Caller = Object.freeze({
  subject: 'anonymous',
  tenants: '*',
  scopes: new Set(SCOPES),
});

const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/**
 * Reads the claims this service defines: `tenants` (an array of tenant ids,
 * or the string "*") and `scope` (space-separated; an array of strings is
 * read too). A claim of the wrong shape grants nothing; unknown scopes are
 * ignored, so one token can also carry other services' scopes.
 */
export function callerFromClaims(claims: Readonly<Record<string, unknown>>): Caller {
  const { tenants, scope } = claims;
  const scopeWords =
    typeof scope === 'string' ? scope.split(/\s+/) : Array.isArray(scope) ? scope.filter((s) => typeof s === 'string') : [];
  const subject = [claims.sub, claims.azp, claims.client_id].find((v): v is string => typeof v === 'string' && v !== '') ?? 'unknown';
  return {
    subject,
    tenants:
      tenants === '*'
        ? '*'
        : new Set(Array.isArray(tenants) ? tenants.filter((t): t is string => typeof t === 'string' && t !== '' && t !== '*') : []),
    scopes: new Set(scopeWords.filter(isScope)),
  };
}

export function isKnownRpc(rpc: string): rpc is ToolHistoryRpc {
  return Object.hasOwn(RPC_SCOPES, rpc);
}

/**
 * Throws PERMISSION_DENIED unless the caller holds the RPC's (or HTTP route's) scope and may
 * use the tenant (and, with a scope limited to one conversation, names the
 * conversation: `conversationId`, the request's, if it has one).
 * Checked before anything is read, and the answer is the same whether the
 * tenant has data or not. An empty tenant id passes here: the use case
 * refuses it as a missing argument.
 */
export function authorize(caller: Caller, rpc: string, tenantId: string | undefined, conversationId?: string): void {
  if (AUTHENTICATED_HTTP_ROUTES.has(rpc)) return;
  if (!Object.hasOwn(OPERATION_SCOPES, rpc)) throw new AppError(ErrorCode.PermissionDenied, `permission denied: ${rpc} has no access rule`);
  const needed = OPERATION_SCOPES[rpc];
  if (!holdsScope(caller, needed))
    throw new AppError(ErrorCode.PermissionDenied, `permission denied: ${rpc} needs ${describeScopeRule(needed)}`);
  if (ALL_TENANT_OPERATIONS.has(rpc) && caller.tenants !== '*') {
    throw new AppError(
      ErrorCode.PermissionDenied,
      `permission denied: ${rpc} answers for every tenant and needs a caller permitted every tenant`,
    );
  }
  if (tenantId && caller.tenants !== '*' && !caller.tenants.has(tenantId)) {
    throw new AppError(
      ErrorCode.PermissionDenied,
      `permission denied: tenant ${JSON.stringify(tenantId.slice(0, 256))} is not permitted to this caller`,
    );
  }
  const limited = Object.hasOwn(CONVERSATION_ONLY_SCOPES, rpc) ? CONVERSATION_ONLY_SCOPES[rpc] : undefined;
  if (limited && !conversationId && !holdsScope(caller, scopesBeside(needed, limited.scope))) {
    throw new AppError(
      ErrorCode.PermissionDenied,
      `permission denied: ${rpc} with ${limited.scope} needs ${limited.conversationField} ` +
        `(all of a tenant needs ${describeScopeRule(scopesBeside(needed, limited.scope))})`,
    );
  }
}

/** The rule's scopes other than `scope`: those that allow the operation without its limit. */
function scopesBeside(rule: ScopeRule, scope: Scope): readonly Scope[] {
  return (typeof rule === 'string' ? [rule] : rule).filter((s) => s !== scope);
}

/** Whether the caller holds the scope, or one of the scopes of a list. */
export function holdsScope(caller: Caller, rule: ScopeRule): boolean {
  return typeof rule === 'string' ? caller.scopes.has(rule) : rule.some((scope) => caller.scopes.has(scope));
}

function describeScopeRule(rule: ScopeRule): string {
  if (typeof rule !== 'string' && rule.length === 1) return `the scope ${rule[0]}`;
  return typeof rule === 'string' ? `the scope ${rule}` : `one of the scopes ${rule.join(', ')}`;
}
