/**
 * Tenants of the HTTP API: what a token's tenant may see and what it submits as.
 *
 * - An open server (loopback, no token ever created: `request.auth` is null) changes nothing:
 *   everything is visible, a submission's tenant is the one it names (`body.tenant`), ids are
 *   plain.
 * - A token that is not admin sees only its own tenant's runs, jobs, dead letters, assets, QR
 *   requests and publications; anything of another tenant answers exactly what a missing thing
 *   answers (404, same code, same message), and lists are filtered by the store (no counts or
 *   cursors of other tenants). What it submits carries its tenant; naming another tenant is 403
 *   `TENANT_MISMATCH`.
 * - An admin token sees and acts on everything; it submits for the tenant it names (or its own).
 *
 * Keys a client chooses (subject ids, Idempotency-Keys, asset ids, QR request records) are per
 * tenant: the store keeps `<tenant>/<key>` for a tenant ({@link tenantKey}), so tenant A's asset
 * `logo` and tenant B's asset `logo` are two subjects, and B's `Idempotency-Key: k` never answers
 * A's run (src/core/tenant-keys.ts). Views shown to a tenant strip its own prefix again.
 */
import type { FastifyRequest } from 'fastify';
import { NotFoundError, TenantMismatchError } from '../core/errors.ts';
import type { Run } from '../core/model.ts';
import { TokenScope } from '../core/ports/tokens.ts';
import { tenantKey, tenantLocal } from '../core/tenant-keys.ts';

/** What the functions here need of a request: its auth (null on an open server). */
export type TenancyRequest = Pick<FastifyRequest, 'auth'>;

/** True when the request's token has the admin scope. */
function isAdmin(request: TenancyRequest): boolean {
  return request.auth?.scopes.includes(TokenScope.admin) ?? false;
}

/**
 * The tenant whose things the request may see: null when it may see everything (an open
 * server, or an admin token), else its token's tenant.
 */
export function viewerTenant(request: TenancyRequest): string | null {
  if (!request.auth || isAdmin(request)) return null;
  return request.auth.tenant;
}

/** True when the request may see a thing of `tenant`. */
export function canSee(request: TenancyRequest, tenant: string | null): boolean {
  const viewer = viewerTenant(request);
  return viewer === null || viewer === tenant;
}

/**
 * Returns `thing` when the request may see it; otherwise throws the very `NotFoundError` a
 * missing thing gets (`what`, `id`), so another tenant's thing is indistinguishable from none.
 */
export function visibleOr404<T extends { tenant: string | null }>(request: TenancyRequest, thing: T, what: string, id: string): T {
  if (!canSee(request, thing.tenant)) throw new NotFoundError(what, id);
  return thing;
}

/**
 * The tenant a request acts for (what it submits is stamped with, whose keys it names):
 * - open server: the tenant it names, or none;
 * - a non-admin token: its own; naming another is {@link TenantMismatchError};
 * - an admin token: the tenant it names, or its own.
 */
export function actingTenant(request: TenancyRequest, named?: string): string | null {
  const auth = request.auth;
  if (!auth) return named ?? null;
  if (isAdmin(request)) return named ?? auth.tenant;
  if (named !== undefined && named !== auth.tenant) throw new TenantMismatchError(named, auth.tenant);
  return auth.tenant;
}

/**
 * The store key of a key the request names for `tenant` (see {@link actingTenant}): tenant-keyed
 * once tokens are in use, plain on an open server (where nothing changes).
 */
export function requestKey(request: TenancyRequest, tenant: string | null, key: string): string {
  return request.auth ? tenantKey(tenant, key) : key;
}

/** A run as a non-admin viewer sees it: its subject id and Idempotency-Key as the tenant named them. */
export function localRun(request: TenancyRequest, run: Run): Run {
  const viewer = viewerTenant(request);
  if (viewer === null) return run;
  return { ...run, subjectId: tenantLocal(viewer, run.subjectId), idempotencyKey: tenantLocal(viewer, run.idempotencyKey) };
}
