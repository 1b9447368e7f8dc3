/**
 * The gRPC request metadata naming the tenant a read is for, which the
 * clients send beside the request's own `tenant_id`: a flooded service can
 * then refuse the read from its headers alone, before reading it
 * (docs/adr/030-admission-control.md). Everything else goes by the
 * request's `tenant_id`.
 */
export const TENANT_METADATA_KEY = 'toolhistory-tenant';
