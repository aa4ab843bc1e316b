/** Run endpoints: submit, list, inspect with the stage timeline and failed attempts, cancel and resume. */
import type { FastifyPluginAsync } from 'fastify';
import { ValidationError } from '../../core/errors.ts';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln, SubmitOptions } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { attemptView } from '../operator-views.ts';
import { idempotencyKeyOf } from '../request-rules.ts';
import { tenantKey } from '../../core/tenant-keys.ts';
import { actingTenant, localRun, requestKey, viewerTenant, visibleOr404, type TenancyRequest } from '../tenancy.ts';
import { IdParams } from '../schemas/common.ts';
import { CancelRunBody, ListRunsQuery, SubmitRunBody, SubmitRunHeaders } from '../schemas/runs.ts';
import { runDetailView, runView } from '../views.ts';

/** Options of {@link runRoutes}. */
export interface RunRoutesOptions {
  kiln: Kiln;
}

/**
 * The submission options of a request: its idempotency key, subject, tenant and trace. The tenant
 * is the token's (see tenancy.ts); its subject id and Idempotency-Key are keys of that tenant.
 */
function submitOptions(request: TenancyRequest & { body: SubmitRunBody; headers: SubmitRunHeaders & Record<string, string | string[] | undefined>; traceparent: string }): SubmitOptions {
  const { body } = request;
  const options: SubmitOptions = { traceparent: request.traceparent };
  const tenant = actingTenant(request, body.tenant);
  const key = idempotencyKeyOf(request.headers);
  if (key !== undefined) options.idempotencyKey = requestKey(request, tenant, key);
  if (body.subjectId !== undefined) options.subjectId = requestKey(request, tenant, body.subjectId);
  if (body.subjectVersion !== undefined) options.subjectVersion = body.subjectVersion;
  if (tenant !== null) options.tenant = tenant;
  return options;
}

/** An ISO-8601 query value as epoch ms; a date the pattern lets through but no calendar has is a 400. */
function epochMs(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ValidationError(`querystring/${field} is not a valid date-time`, { details: { field, value } });
  return ms;
}

/**
 * The store's query for `GET /v1/runs`: creation times in epoch ms; a non-admin token's runs only
 * (its subject ids are its own keys). Null when the query names another tenant: nothing to list.
 */
function listQuery(request: TenancyRequest, query: ListRunsQuery): Parameters<Kiln['listRuns']>[0] | null {
  const { createdAfter, createdBefore, ...rest } = query;
  const after = epochMs('createdAfter', createdAfter);
  const before = epochMs('createdBefore', createdBefore);
  const viewer = viewerTenant(request);
  if (viewer !== null) {
    if (rest.tenant !== undefined && rest.tenant !== viewer) return null;
    rest.tenant = viewer;
    if (rest.subjectId !== undefined) rest.subjectId = tenantKey(viewer, rest.subjectId);
  }
  return { ...rest, ...(after === undefined ? {} : { createdAfter: after }), ...(before === undefined ? {} : { createdBefore: before }) };
}

/** The run, when the request may see it; else the 404 of a missing run. */
async function visibleRun(kiln: Kiln, request: TenancyRequest, runId: string): Promise<Awaited<ReturnType<Kiln['getRun']>>> {
  const detail = await kiln.getRun(runId);
  visibleOr404(request, detail.run, 'run', runId);
  return detail;
}

/** Checks the run is the request's to see before it is acted on (a run's tenant never changes). */
async function checkRun(kiln: Kiln, request: TenancyRequest, runId: string): Promise<void> {
  if (viewerTenant(request) !== null) await visibleRun(kiln, request, runId);
}

/** Registers the `/v1/runs` endpoints. */
export const runRoutes: FastifyPluginAsync<RunRoutesOptions> = async (app, { kiln }) => {
  app.post<{ Body: SubmitRunBody; Headers: SubmitRunHeaders }>(
    '/v1/runs',
    { schema: { body: SubmitRunBody, headers: SubmitRunHeaders }, config: access(TokenScope.submit) },
    async (request, reply) => {
      const { pipeline, input } = request.body;
      // Omitted input means {}; an explicit null goes to the pipeline like any other value.
      const { run, created } = await kiln.submit(pipeline, input === undefined ? {} : input, submitOptions(request));
      void reply.header('location', `/v1/runs/${encodeURIComponent(run.id)}`);
      // A repeated Idempotency-Key answers with the run it created first (Stripe's convention).
      if (!created) return reply.status(200).header('idempotent-replayed', 'true').send(runView(localRun(request, run)));
      return reply.status(202).send(runView(localRun(request, run)));
    },
  );

  app.get<{ Querystring: ListRunsQuery }>('/v1/runs', { schema: { querystring: ListRunsQuery }, config: access(TokenScope.read) }, async (request) => {
    const query = listQuery(request, request.query);
    if (query === null) return [];
    return (await kiln.listRuns(query)).map((run) => runView(localRun(request, run)));
  });

  app.get<{ Params: IdParams }>('/v1/runs/:id/attempts', { schema: { params: IdParams }, config: access(TokenScope.read) }, async (request) => {
    await checkRun(kiln, request, request.params.id);
    return (await kiln.listAttempts(request.params.id)).map(attemptView);
  });

  app.get<{ Params: IdParams }>('/v1/runs/:id', { schema: { params: IdParams }, config: access(TokenScope.read) }, async (request) => {
    const detail = await visibleRun(kiln, request, request.params.id);
    return runDetailView({ ...detail, run: localRun(request, detail.run) });
  });

  app.post<{ Params: IdParams; Body: CancelRunBody }>(
    '/v1/runs/:id/cancel',
    {
      schema: { params: IdParams, body: CancelRunBody },
      config: access(TokenScope.operate),
      // The body is optional: a bare POST (no Content-Type) has none, and validates as `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      await checkRun(kiln, request, request.params.id);
      return runView(localRun(request, await kiln.cancelRun(request.params.id, request.body.reason)));
    },
  );

  app.post<{ Params: IdParams }>('/v1/runs/:id/resume', { schema: { params: IdParams }, config: access(TokenScope.operate) }, async (request) => {
    await checkRun(kiln, request, request.params.id);
    return runView(localRun(request, await kiln.resumeRun(request.params.id)));
  });
};
