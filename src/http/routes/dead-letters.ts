/** `GET /v1/dead-letters`: dead letters newest first, or grouped by error code. Replay is `POST /v1/jobs/:id/replay`. */
import type { FastifyPluginAsync } from 'fastify';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { DeadLettersQuery } from '../schemas/operator.ts';
import { viewerTenant } from '../tenancy.ts';
import { jobView } from '../views.ts';
import type { DeadLetterGroup } from '../../core/ports/stats.ts';
import type { Job } from '../../core/model.ts';

/** Code-point order of names, as the stores order queues and codes. */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Dead letters a tenant's groups are counted over at most (pages of {@link GROUP_PAGE}). */
export const TENANT_GROUP_SCAN_LIMIT = 10_000;
const GROUP_PAGE = 500;

/**
 * Dead letters of one tenant grouped by error code, as `Kiln.deadLetterGroups` groups every
 * tenant's (the largest group first, then by code): counted from the tenant's own listing, newest
 * first, over at most {@link TENANT_GROUP_SCAN_LIMIT} dead letters.
 */
async function tenantDeadLetterGroups(kiln: Kiln, tenant: string): Promise<DeadLetterGroup[]> {
  const groups = new Map<string, DeadLetterGroup>();
  let before: string | undefined;
  for (let seen = 0; seen < TENANT_GROUP_SCAN_LIMIT; ) {
    const page: Job[] = await kiln.listDeadLetters({ tenant, limit: GROUP_PAGE, ...(before === undefined ? {} : { before }) });
    for (const job of page) {
      const code = job.lastError?.code ?? 'UNKNOWN';
      const group = groups.get(code);
      if (group) {
        group.count += 1;
        if (!group.queues.includes(job.queue)) group.queues.push(job.queue);
      } else {
        // Newest first: the first job of a code is its newest.
        groups.set(code, { code, errorClass: job.lastError?.class ?? 'transient', message: job.lastError?.message ?? '', count: 1, queues: [job.queue], latestJobId: job.id });
      }
    }
    seen += page.length;
    if (page.length < GROUP_PAGE) break;
    before = page.at(-1)?.id;
  }
  return [...groups.values()].map((g) => ({ ...g, queues: g.queues.sort(byName) })).sort((a, b) => b.count - a.count || byName(a.code, b.code));
}

/** Options of {@link deadLetterRoutes}. */
export interface DeadLetterRoutesOptions {
  kiln: Kiln;
}

/**
 * Registers `GET /v1/dead-letters`: the dead stage jobs of `dead_lettered` runs (filters `code`,
 * `queue`, keyset cursor `before`), or with `groupBy=code` one group per error code
 * `{code, errorClass, message, count, queues, latestJobId}`, the largest first. A non-admin token
 * lists and groups its tenant's dead letters only.
 */
export const deadLetterRoutes: FastifyPluginAsync<DeadLetterRoutesOptions> = async (app, { kiln }) => {
  app.get<{ Querystring: DeadLettersQuery }>('/v1/dead-letters', { schema: { querystring: DeadLettersQuery }, config: access(TokenScope.read) }, async (request) => {
    const { groupBy, ...query } = request.query;
    const viewer = viewerTenant(request);
    if (groupBy === 'code') return viewer === null ? kiln.deadLetterGroups() : tenantDeadLetterGroups(kiln, viewer);
    return (await kiln.listDeadLetters(viewer === null ? query : { ...query, tenant: viewer })).map(jobView);
  });
};
