import { AppError, ErrorCode } from '@toolhistory/errors';

export interface OpenSubscription {
  tenantId: string;
  /** Ends the stream because the server is going away (the caller resumes elsewhere). */
  endForShutdown(): void;
}

/**
 * The SubscribeToolEvents and WatchConversation streams open in this process: at most a number per
 * tenant (one tenant's consumers cannot take every connection), and all of
 * them ended cleanly on shutdown.
 */
export class OpenSubscriptions {
  private readonly byTenant = new Map<string, Set<OpenSubscription>>();
  private closing = false;

  constructor(private readonly perTenantLimit: number) {}

  /** Throws RESOURCE_EXHAUSTED past the tenant's limit (UNAVAILABLE while shutting down); the returned release is idempotent. */
  admit(subscription: OpenSubscription): () => void {
    if (this.closing) throw new AppError(ErrorCode.ShuttingDown, 'server shutting down');
    const open = this.byTenant.get(subscription.tenantId) ?? new Set<OpenSubscription>();
    if (open.size >= this.perTenantLimit) {
      throw new AppError(
        ErrorCode.ResourceExhausted,
        `tenant has ${open.size} open streams (subscriptions and watches) on this server, the most it allows (MAX_SUBSCRIPTIONS_PER_TENANT); close one first`,
      );
    }
    open.add(subscription);
    this.byTenant.set(subscription.tenantId, open);
    return () => {
      open.delete(subscription);
      if (open.size === 0 && this.byTenant.get(subscription.tenantId) === open) this.byTenant.delete(subscription.tenantId);
    };
  }

  count(tenantId?: string): number {
    if (tenantId !== undefined) return this.byTenant.get(tenantId)?.size ?? 0;
    let total = 0;
    for (const open of this.byTenant.values()) total += open.size;
    return total;
  }

  /** Refuses new streams and ends every open one. */
  closeAll(): number {
    this.closing = true;
    const all = [...this.byTenant.values()].flatMap((open) => [...open]);
    for (const subscription of all) subscription.endForShutdown();
    return all.length;
  }
}
