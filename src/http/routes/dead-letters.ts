/** `GET /v1/dead-letters`: dead letters newest first, or grouped by error code. Replay is `POST /v1/jobs/:id/replay`. */
import type { FastifyPluginAsync } from 'fastify';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { DeadLettersQuery } from '../schemas/operator.ts';
import { jobView } from '../views.ts';

/** Options of {@link deadLetterRoutes}. */
export interface DeadLetterRoutesOptions {
  kiln: Kiln;
}

/**
 * Registers `GET /v1/dead-letters`: the dead stage jobs of `dead_lettered` runs (filters `code`,
 * `queue`, keyset cursor `before`), or with `groupBy=code` one group per error code
 * `{code, errorClass, message, count, queues, latestJobId}`, the largest first.
 */
export const deadLetterRoutes: FastifyPluginAsync<DeadLetterRoutesOptions> = async (app, { kiln }) => {
  app.get<{ Querystring: DeadLettersQuery }>('/v1/dead-letters', { schema: { querystring: DeadLettersQuery }, config: access(TokenScope.read) }, async (request) => {
    const { groupBy, ...query } = request.query;
    if (groupBy === 'code') return kiln.deadLetterGroups();
    return (await kiln.listDeadLetters(query)).map(jobView);
  });
};
