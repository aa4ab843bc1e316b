/**
 * `GET /v1/verify`: the invariant audit of `kiln verify` over HTTP (an operator's tool: scope
 * `admin`, since one call scans the whole store and its violations name ids of every tenant). It answers within the request
 * deadline: the audit gets most of `http.requestTimeoutMs` and, when that runs out, answers what
 * it found so far with `complete: false` (the CLI, which has no deadline, audits a large store to
 * the end).
 */
import type { FastifyPluginAsync } from 'fastify';
import { TokenScope } from '../../core/ports/tokens.ts';
import type { Kiln } from '../../engine/kiln-types.ts';
import { access } from '../auth.ts';
import type { VerifyCheck } from '../../engine/verify/verify-types.ts';
import { VerifyQuery, VerifyReportSchema } from '../schemas/verify.ts';
import { verifyReportView } from '../views.ts';

/** Options of {@link verifyRoutes}. */
export interface VerifyRoutesOptions {
  kiln: Kiln;
  /** How long an audit may run before it answers what it found so far. */
  budgetMs: number;
  /** Default temp grace (the reaper's `worker.tempGraceMs`); the engine's default when absent. */
  tempGraceMs?: number;
}

/** Registers `GET /v1/verify`. */
export const verifyRoutes: FastifyPluginAsync<VerifyRoutesOptions> = async (app, { kiln, budgetMs, tempGraceMs }) => {
  app.get<{ Querystring: VerifyQuery }>('/v1/verify', { schema: { querystring: VerifyQuery, response: { 200: VerifyReportSchema } }, config: access(TokenScope.admin) }, async (request) => {
    const { checks, leaseGraceMs, maxViolations } = request.query;
    const graceMs = request.query.tempGraceMs ?? tempGraceMs;
    const report = await kiln.verify({
      ...(checks === undefined ? {} : { checks: checks.split(',') as VerifyCheck[] }),
      ...(leaseGraceMs === undefined ? {} : { leaseGraceMs }),
      ...(graceMs === undefined ? {} : { tempGraceMs: graceMs }),
      ...(maxViolations === undefined ? {} : { maxViolations }),
      signal: AbortSignal.timeout(budgetMs),
    });
    return verifyReportView(report);
  });
};
