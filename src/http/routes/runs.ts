/** Run endpoints: submit, list, inspect with the stage timeline and failed attempts, cancel and resume. */
import type { FastifyPluginAsync } from 'fastify';
import { ValidationError } from '../../core/errors.ts';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln, SubmitOptions } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import { attemptView } from '../operator-views.ts';
import { idempotencyKeyOf } from '../request-rules.ts';
import { IdParams } from '../schemas/common.ts';
import { CancelRunBody, ListRunsQuery, SubmitRunBody, SubmitRunHeaders } from '../schemas/runs.ts';
import { runDetailView, runView } from '../views.ts';

/** Options of {@link runRoutes}. */
export interface RunRoutesOptions {
  kiln: Kiln;
}

/** The submission options of a request: its idempotency key, subject, tenant and trace. */
function submitOptions(body: SubmitRunBody, headers: SubmitRunHeaders & Record<string, string | string[] | undefined>, traceparent: string): SubmitOptions {
  const options: SubmitOptions = { traceparent };
  const key = idempotencyKeyOf(headers);
  if (key !== undefined) options.idempotencyKey = key;
  if (body.subjectId !== undefined) options.subjectId = body.subjectId;
  if (body.subjectVersion !== undefined) options.subjectVersion = body.subjectVersion;
  if (body.tenant !== undefined) options.tenant = body.tenant;
  return options;
}

/** An ISO-8601 query value as epoch ms; a date the pattern lets through but no calendar has is a 400. */
function epochMs(field: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ValidationError(`querystring/${field} is not a valid date-time`, { details: { field, value } });
  return ms;
}

/** The store's query for `GET /v1/runs`: creation times in epoch ms. */
function listQuery(query: ListRunsQuery): Parameters<Kiln['listRuns']>[0] {
  const { createdAfter, createdBefore, ...rest } = query;
  const after = epochMs('createdAfter', createdAfter);
  const before = epochMs('createdBefore', createdBefore);
  return { ...rest, ...(after === undefined ? {} : { createdAfter: after }), ...(before === undefined ? {} : { createdBefore: before }) };
}

/** Registers the `/v1/runs` endpoints. */
export const runRoutes: FastifyPluginAsync<RunRoutesOptions> = async (app, { kiln }) => {
  app.post<{ Body: SubmitRunBody; Headers: SubmitRunHeaders }>(
    '/v1/runs',
    { schema: { body: SubmitRunBody, headers: SubmitRunHeaders }, config: access(TokenScope.submit) },
    async (request, reply) => {
      const { pipeline, input } = request.body;
      // Omitted input means {}; an explicit null goes to the pipeline like any other value.
      const { run, created } = await kiln.submit(pipeline, input === undefined ? {} : input, submitOptions(request.body, request.headers, request.traceparent));
      void reply.header('location', `/v1/runs/${encodeURIComponent(run.id)}`);
      // A repeated Idempotency-Key answers with the run it created first (Stripe's convention).
      if (!created) return reply.status(200).header('idempotent-replayed', 'true').send(runView(run));
      return reply.status(202).send(runView(run));
    },
  );

  app.get<{ Querystring: ListRunsQuery }>('/v1/runs', { schema: { querystring: ListRunsQuery }, config: access(TokenScope.read) }, async (request) => {
    const runs = await kiln.listRuns(listQuery(request.query));
    return runs.map(runView);
  });

  app.get<{ Params: IdParams }>('/v1/runs/:id/attempts', { schema: { params: IdParams }, config: access(TokenScope.read) }, async (request) => {
    return (await kiln.listAttempts(request.params.id)).map(attemptView);
  });

  app.get<{ Params: IdParams }>('/v1/runs/:id', { schema: { params: IdParams }, config: access(TokenScope.read) }, async (request) => {
    return runDetailView(await kiln.getRun(request.params.id));
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
    async (request) => runView(await kiln.cancelRun(request.params.id, request.body.reason)),
  );

  app.post<{ Params: IdParams }>('/v1/runs/:id/resume', { schema: { params: IdParams }, config: access(TokenScope.operate) }, async (request) => {
    return runView(await kiln.resumeRun(request.params.id));
  });
};
