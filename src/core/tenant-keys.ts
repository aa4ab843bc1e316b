/**
 * Keys of a tenant's own: subject ids, Idempotency-Keys, asset ids and QR request records a
 * client names are kept as `<tenant>/<key>` once API tokens are in use (see src/http/tenancy.ts),
 * so two tenants' keys never meet. Tenant names cannot contain the separator (`kiln tokens
 * create` refuses it), so the prefix is unambiguous.
 */

import { ValidationError } from './errors.ts';

/** Separates a tenant from a key of its own; tenant names never contain it. */
export const TENANT_SEPARATOR = '/';

/** Returns `tenant` when it can name a tenant; one holding {@link TENANT_SEPARATOR} is a `ValidationError` naming `flag`. */
export function checkTenantName(flag: string, tenant: string): string {
  if (tenant.includes(TENANT_SEPARATOR)) throw new ValidationError(`${flag} cannot contain "${TENANT_SEPARATOR}", got ${JSON.stringify(tenant)}`);
  return tenant;
}

/**
 * The store key of a tenant's own `key`: `<tenant>/<key>`; the plain key when there is no tenant
 * (an open server), so data written without tokens keeps its ids.
 */
export function tenantKey(tenant: string | null, key: string): string {
  return tenant === null ? key : `${tenant}${TENANT_SEPARATOR}${key}`;
}

/** The key as the tenant named it: `key` without the tenant's own prefix (unchanged without one). */
export function tenantLocal<T extends string | null>(tenant: string | null, key: T): T {
  if (tenant === null || key === null) return key;
  const prefix = `${tenant}${TENANT_SEPARATOR}`;
  return (key.startsWith(prefix) ? key.slice(prefix.length) : key) as T;
}

/**
 * A subject a run of `tenant` may publish: a key already of the tenant stays, any other is made
 * the tenant's own (so a run can never publish into another tenant's subjects); without a
 * tenant, as it is.
 */
export function tenantSubject(tenant: string | null, subject: string): string {
  if (tenant === null || subject.startsWith(`${tenant}${TENANT_SEPARATOR}`)) return subject;
  return tenantKey(tenant, subject);
}
