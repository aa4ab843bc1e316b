/** Job endpoints: inspect jobs and replay dead-lettered ones. */
import type { FastifyPluginAsync } from 'fastify';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { IdParams } from '../schemas/common.ts';
import { ListJobsQuery } from '../schemas/jobs.ts';
import { viewerTenant, visibleOr404, type TenancyRequest } from '../tenancy.ts';
import { jobView } from '../views.ts';

/** Options of {@link jobRoutes}. */
export interface JobRoutesOptions {
  kiln: Kiln;
}

/** The job, when the request may see it (a job has its run's tenant); else the 404 of a missing job. */
async function visibleJob(kiln: Kiln, request: TenancyRequest, jobId: string) {
  return visibleOr404(request, await kiln.getJob(jobId), 'job', jobId);
}

/** Registers `GET /v1/jobs`, `GET /v1/jobs/:id` and `POST /v1/jobs/:id/replay` (a non-admin token: its tenant's jobs only). */
export const jobRoutes: FastifyPluginAsync<JobRoutesOptions> = async (app, { kiln }) => {
  app.get<{ Querystring: ListJobsQuery }>('/v1/jobs', { schema: { querystring: ListJobsQuery }, config: access(TokenScope.read) }, async (request) => {
    const viewer = viewerTenant(request);
    const jobs = await kiln.listJobs(viewer === null ? request.query : { ...request.query, tenant: viewer });
    return jobs.map(jobView);
  });

  app.get<{ Params: IdParams }>('/v1/jobs/:id', { schema: { params: IdParams }, config: access(TokenScope.read) }, async (request) => {
    return jobView(await visibleJob(kiln, request, request.params.id));
  });

  app.post<{ Params: IdParams }>('/v1/jobs/:id/replay', { schema: { params: IdParams }, config: access(TokenScope.operate) }, async (request) => {
    if (viewerTenant(request) !== null) await visibleJob(kiln, request, request.params.id);
    return jobView(await kiln.replayJob(request.params.id));
  });
};
