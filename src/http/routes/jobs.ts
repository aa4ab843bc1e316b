/** Job endpoints: inspect jobs and replay dead-lettered ones. */
import type { FastifyPluginAsync } from 'fastify';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { IdParams } from '../schemas/common.ts';
import { ListJobsQuery } from '../schemas/jobs.ts';
import { jobView } from '../views.ts';

/** Options of {@link jobRoutes}. */
export interface JobRoutesOptions {
  kiln: Kiln;
}

/** Registers `GET /v1/jobs`, `GET /v1/jobs/:id` and `POST /v1/jobs/:id/replay`. */
export const jobRoutes: FastifyPluginAsync<JobRoutesOptions> = async (app, { kiln }) => {
  app.get<{ Querystring: ListJobsQuery }>('/v1/jobs', { schema: { querystring: ListJobsQuery }, config: access(TokenScope.read) }, async (request) => {
    const jobs = await kiln.listJobs(request.query);
    return jobs.map(jobView);
  });

  app.get<{ Params: IdParams }>('/v1/jobs/:id', { schema: { params: IdParams }, config: access(TokenScope.read) }, async (request) => {
    return jobView(await kiln.getJob(request.params.id));
  });

  app.post<{ Params: IdParams }>('/v1/jobs/:id/replay', { schema: { params: IdParams }, config: access(TokenScope.operate) }, async (request) => {
    return jobView(await kiln.replayJob(request.params.id));
  });
};
