/**
 * kiln's public API. Explicit named exports only; stores live behind their own modules
 * (`src/stores/<name>/index.ts`) so optional drivers load only when used.
 */
export { systemClock, createFakeClock, type Clock, type FakeClock } from './core/clock.ts';
export { createIdGenerator, type IdGenerator } from './core/ids.ts';
export { canonicalJson, contentHash, sha256Hex } from './core/canonical.ts';
export {
  PipelineError,
  ConfigError,
  ValidationError,
  UnprocessableError,
  NotFoundError,
  ConflictError,
  LeaseLostError,
  StoreUnavailableError,
  ArtifactsUnavailableError,
  UnauthenticatedError,
  ForbiddenScopeError,
  TenantMismatchError,
  AdmissionRefusedError,
  SchemaVersionError,
  StageFailure,
  ErrorClass,
  ERROR_CODES,
  type ErrorCode,
  type AdmissionCode,
  type ConfigIssue,
} from './core/errors.ts';
export type { Logger } from './core/logger.ts';
export {
  RunStatus,
  StageStatus,
  JobState,
  JobKind,
  type JsonValue,
  type Run,
  type StageRecord,
  type Job,
  type LedgerEntry,
  type QueueStats,
} from './core/model.ts';
export { StageOutcome, type EngineObserver } from './core/observer.ts';
export {
  definePipeline,
  queueName,
  type PipelineDefinition,
  type PipelineDefinitionInput,
  type StageDefinition,
  type StageContext,
  type StageLock,
  type StageHandler,
  type StageModule,
  type ThreadStageInput,
} from './core/pipeline/define-pipeline.ts';
export {
  DEFAULT_STAGE_POLICY,
  DEFAULT_LOCK_TTL_MS,
  Isolation,
  type LockPolicy,
  type StagePolicy,
  type StagePolicyOverrides,
} from './core/policy/stage-policy.ts';
export type { ArtifactStore, ArtifactRef } from './core/ports/artifact-store.ts';
export type { CacheEntry } from './core/ports/cache.ts';
export type { SubmitRunResult } from './core/ports/jobs.ts';
export type { Lock, LockStats } from './core/ports/locks.ts';
export type { Publication, PublicationRequest } from './core/ports/publications.ts';
export type { RunDetail } from './core/ports/reads.ts';
export type { RequestRecord } from './core/ports/requests.ts';
export type { Store } from './core/ports/store.ts';
export { TokenScope, TOKEN_SCOPES, type ApiToken } from './core/ports/tokens.ts';
export { createKiln } from './engine/create-kiln.ts';
export {
  VerifyCheck,
  ViolationKind,
  type Violation,
  type ViolationIds,
  type VerifyOptions,
  type VerifyReport,
  type VerifyProgress,
  type CheckSummary,
} from './engine/verify/verify-types.ts';
export type { SingleFlightCache, CacheKeyOptions, CacheLookup, CacheBuildContext } from './core/cache.ts';
export { ifNoneMatch } from './http/pipeline-routes.ts';
export { access, PUBLIC, type RouteScope, type RequestAuth } from './http/auth.ts';
export { actingTenant, canSee, viewerTenant, visibleOr404, type TenancyRequest } from './http/tenancy.ts';
export { tenantKey, tenantLocal, tenantSubject } from './core/tenant-keys.ts';
export { acceptsMediaType, isMultipartForm, mediaTypeOf, mediaTypePattern, multipartError, multipartFile, uploadTooLarge, type UploadedFile } from './http/uploads.ts';
export { idempotencyKeyOf, parseQueryInteger } from './http/request-rules.ts';
export { extendRequestDeadline } from './http/request-deadline.ts';
export type { PipelineRoutes, PipelineRoutesOptions, PipelineRequest, PipelineReply } from './http/pipeline-routes.ts';
export type { Kiln, KilnOptions, SubmitOptions, Worker, WorkerOptions, PolicyOverrides } from './engine/kiln-types.ts';
export type { AdmissionLimits, TenantLimits, QueueLimits } from './engine/admission.ts';
export { runTool, type RunToolOptions, type RunToolResult } from './commands/run-tool.ts';
export { createCommandPipeline } from './commands/command-pipeline.ts';
export type { CommandPipelineSpec, CommandStageSpec } from './commands/command-spec.ts';
