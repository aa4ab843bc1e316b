/** Queue endpoints: depth and age, recent activity, and the operator's pause / resume / drain. */
import type { FastifyPluginAsync } from 'fastify';
import { ValidationError } from '../../core/errors.ts';
import { ACTIVITY_MINUTE_MS, ACTIVITY_RETENTION_MS } from '../../core/ports/stats.ts';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { queueActivityView } from '../operator-views.ts';
import { QueueActivityQuery } from '../schemas/operator.ts';
import { QueueParams } from '../schemas/queues.ts';
import { queueView, type QueueView } from '../views.ts';

/** Options of {@link queueRoutes}. */
export interface QueueRoutesOptions {
  kiln: Kiln;
}

/** The queue's stats after an operator action (a queue of a registered pipeline with no jobs yet shows as empty). */
async function currentQueue(kiln: Kiln, queue: string): Promise<QueueView> {
  const stats = (await kiln.queues()).find((q) => q.queue === queue);
  if (stats) return queueView(stats);
  return { queue, paused: false, ready: 0, scheduled: 0, inFlight: 0, parked: 0, dead: 0, oldestReadyAgeMs: 0 };
}

/**
 * Registers `GET /v1/queues`, `GET /v1/queues/activity` (completions and failed attempts per
 * bucket as workers recorded them, ages of ready jobs; every known queue listed) and
 * `POST /v1/queues/:queue/{pause,resume,drain}` (admin: queues are shared by every tenant; a queue no
 * registered pipeline has: 404 `UNKNOWN_QUEUE`). The reads are aggregate counts, no ids or tenants:
 * any read token sees them.
 */
export const queueRoutes: FastifyPluginAsync<QueueRoutesOptions> = async (app, { kiln }) => {
  app.get('/v1/queues', { config: access(TokenScope.read) }, async () => (await kiln.queues()).map(queueView));

  app.get<{ Querystring: QueueActivityQuery }>('/v1/queues/activity', { schema: { querystring: QueueActivityQuery }, config: access(TokenScope.read) }, async (request) => {
    const { bucketMinutes = 1, buckets = 15 } = request.query;
    if (bucketMinutes * buckets * ACTIVITY_MINUTE_MS > ACTIVITY_RETENTION_MS) {
      throw new ValidationError(`bucketMinutes x buckets covers more than the ${ACTIVITY_RETENTION_MS / 60_000} minutes of activity kept`, {
        details: { bucketMinutes, buckets },
      });
    }
    const [report, queues] = await Promise.all([kiln.queueActivity({ bucketMinutes, buckets }), kiln.queues()]);
    return queueActivityView(report, queues.map((q) => q.queue));
  });

  // Pausing or draining a queue acts on every tenant's jobs on it (a drain cancels their runs): admin only.
  const opts = { schema: { params: QueueParams }, config: access(TokenScope.admin) };
  app.post<{ Params: QueueParams }>('/v1/queues/:queue/pause', opts, async (request) => {
    await kiln.pauseQueue(request.params.queue);
    return currentQueue(kiln, request.params.queue);
  });

  app.post<{ Params: QueueParams }>('/v1/queues/:queue/resume', opts, async (request) => {
    await kiln.resumeQueue(request.params.queue);
    return currentQueue(kiln, request.params.queue);
  });

  app.post<{ Params: QueueParams }>('/v1/queues/:queue/drain', opts, async (request) => {
    const drained = await kiln.drainQueue(request.params.queue);
    return { ...(await currentQueue(kiln, request.params.queue)), drained };
  });
};
