/**
 * The one schema of `kiln.yaml` (TypeBox): the file's types, every default and every field's docs
 * live here. Environment variables and CLI flags are mapped onto the same fields in this module
 * too, and are checked against the same field schemas, so all three sources accept the same values.
 * `load.ts` turns file + env + flags into a deep-frozen {@link ResolvedConfig}.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { PolicyOverrides } from '../engine/kiln-types.ts';
import type { AdmissionLimits } from '../engine/admission.ts';
import type { S3ArtifactsSettings } from '../artifacts/s3-client.ts';
import { DEFAULT_LOCK_TTL_MS, DEFAULT_STAGE_POLICY } from '../core/policy/stage-policy.ts';
import type { JsonValue } from '../core/model.ts';
import { Duration } from './duration.ts';
import type { CommandPipelineSpec } from '../commands/command-spec.ts';
import { PipelineEntry, SinglePipelineSchema, WorkerCommandFields } from './command-schema.ts';
import { RETENTION_DEFAULTS, RetentionSchema, type ResolvedRetention } from './retention-settings.ts';

export { isDurationSchema, type DurationAnnotation } from './duration.ts';

/** Log levels, most verbose first; `silent` turns logging off. */
export const LogLevel = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  error: 'error',
  fatal: 'fatal',
  silent: 'silent',
} as const;
/** One of {@link LogLevel}'s values. */
export type LogLevel = (typeof LogLevel)[keyof typeof LogLevel];

/** How log lines are written: JSON, readable text, or readable text on a terminal only. */
export const LogFormat = { auto: 'auto', json: 'json', pretty: 'pretty' } as const;
/** One of {@link LogFormat}'s values. */
export type LogFormat = (typeof LogFormat)[keyof typeof LogFormat];

/** Stores `kiln.yaml`, `KILN_STORE` and `--store` can select. */
export const StoreKind = {
  /** Embedded, one file, processes of one machine (the default). */
  sqlite: 'sqlite',
  /** A PostgreSQL database shared by any number of hosts. */
  postgres: 'postgres',
  /** A Redis server (>= 7.0) shared by any number of hosts, under one key prefix per store name. */
  redis: 'redis',
} as const;
/** One of {@link StoreKind}'s values. */
export type StoreKind = (typeof StoreKind)[keyof typeof StoreKind];

/** Lock providers: every store keeps its own locks, so the provider is the selected store's kind. */
export const LockProvider = {
  sqlite: 'sqlite',
  postgres: 'postgres',
  memory: 'memory',
  redis: 'redis',
} as const;
/** One of {@link LockProvider}'s values. */
export type LockProvider = (typeof LockProvider)[keyof typeof LockProvider];

/** Default PostgreSQL schema of kiln's tables. */
export const DEFAULT_PG_SCHEMA = 'kiln';

/** Default name of a Redis store (its keys are `kiln:{default}:...`); `?name=` in the URL names another. */
export const DEFAULT_REDIS_STORE_NAME = 'default';

/** An unquoted PostgreSQL identifier that needs no quoting (lower case, at most 63 bytes). */
const SCHEMA_NAME_PATTERN = '^[a-z_][a-z0-9_]{0,62}$';

/** The resolved store: exactly one store, with what opening it needs. */
export type ResolvedStore =
  | { readonly kind: typeof StoreKind.sqlite; readonly path: string }
  | { readonly kind: typeof StoreKind.postgres; readonly url: string; readonly schema: string }
  /** `url` without its `name` query parameter, which became `name` (the key space). */
  | { readonly kind: typeof StoreKind.redis; readonly url: string; readonly name: string };

const D = DEFAULT_STAGE_POLICY;
const strict = { additionalProperties: false } as const;

/** Policy fields of one stage (or of every stage, under `defaults`); see `StagePolicy`. */
export const StagePolicySchema = Type.Object(
  {
    maxAttempts: Type.Optional(
      Type.Integer({ minimum: 1, description: `Attempts before dead-lettering, counting the first (default ${D.maxAttempts}).` }),
    ),
    backoff: Type.Optional(
      Type.Object(
        {
          baseMs: Type.Optional(Duration(`First retry delay bound; doubles per attempt (default ${D.backoff.baseMs} ms).`)),
          capMs: Type.Optional(Duration(`Upper bound of any retry delay (default ${D.backoff.capMs} ms).`)),
        },
        { ...strict, description: 'Full-jitter exponential backoff between retries.' },
      ),
    ),
    timeoutMs: Type.Optional(Duration(`The handler is aborted after this long (default ${D.timeoutMs} ms).`)),
    leaseMs: Type.Optional(Duration(`Lease per claim and per heartbeat; bounds redelivery after a crash (default ${D.leaseMs} ms).`)),
    heartbeatMs: Type.Optional(Duration(`Lease renewal interval; must be below leaseMs (default ${D.heartbeatMs} ms).`)),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, description: `Jobs of this stage one worker runs at once (default ${D.concurrency}).` })),
    prefetch: Type.Optional(
      Type.Integer({ minimum: 0, description: `Jobs claimed ahead and held while the slots are busy; raises throughput of short jobs (default ${D.prefetch}).` }),
    ),
    priority: Type.Optional(Type.Integer({ description: `Lower runs first (default ${D.priority}).` })),
    interventionAttempts: Type.Optional(
      Type.Integer({ minimum: 1, description: `Intervention failures before the run is parked (default ${D.interventionAttempts}).` }),
    ),
    maxRetriesRunning: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: "Retries of this stage's queue running at once, over every worker; past it claims take first attempts only (default: no cap).",
      }),
    ),
    isolation: Type.Optional(
      Type.Union([Type.Literal('inline'), Type.Literal('thread')], {
        description: `inline: on the worker's event loop; thread: in a worker-thread pool (default ${D.isolation}).`,
      }),
    ),
    lock: Type.Optional(
      Type.Object(
        {
          key: Type.Optional(
            Type.String({
              minLength: 1,
              description: 'Lock key template, e.g. "render:{{input.assetId}}" ({{input.<path>}}, {{run.id}}, {{run.pipeline}}, {{run.subjectId}}, {{stage.<name>.outputs.<path>}}).',
            }),
          ),
          ttlMs: Type.Optional(Duration('The lock expires this long after its last renewal; above heartbeatMs (default worker.lock.ttl).', { minimumMs: 1 })),
        },
        { ...strict, description: 'A named lock taken before the handler runs; jobs with the same key wait (without spending attempts) and never run side by side.' },
      ),
    ),
  },
  strict,
);
/** One stage's policy overrides as written in the file. */
export type StagePolicyFileConfig = Static<typeof StagePolicySchema>;

/** Overrides for one pipeline, keyed by its registered name. */
export const PipelineConfigSchema = Type.Object(
  {
    defaults: Type.Optional(
      Type.Object(StagePolicySchema.properties, { ...strict, description: 'Applied to every stage of the pipeline; a stage entry wins over it.' }),
    ),
    stages: Type.Optional(Type.Record(Type.String(), StagePolicySchema, { description: 'Per stage name.' })),
    settings: Type.Optional(Type.Unknown({ description: "The pipeline's own settings; checked by the pipeline at start (see its section of the README)." })),
  },
  strict,
);
/** One pipeline's entry as written in the file. */
export type PipelineFileConfig = Static<typeof PipelineConfigSchema>;

/** One tenant's admission limits (`admission.tenantDefaults`, `admission.tenants.<name>`). */
const TenantLimitsSchema = Type.Object(
  {
    maxInFlightRuns: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Runs of the tenant queued or running at once; a submission past it gets 429 TENANT_IN_FLIGHT_LIMIT (default: no limit).' }),
    ),
    submitRate: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        description: 'Runs the tenant may submit per second, sustained, per API process (a token bucket); past it 429 TENANT_RATE_LIMITED (default: no limit).',
      }),
    ),
    submitBurst: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Runs the tenant may submit at once after a quiet spell, with submitRate (default: submitRate rounded up).' }),
    ),
  },
  strict,
);

/** One queue's admission limit (`admission.queueDefaults`, `admission.queues.<queue>`). */
const QueueLimitsSchema = Type.Object(
  {
    maxBacklog: Type.Optional(
      Type.Integer({ minimum: 1, description: "Ready jobs the queue may hold; a submission whose first stage's queue is full gets 429 QUEUE_BACKLOG_FULL (default: no limit)." }),
    ),
  },
  strict,
);

/** The `admission:` section: limits on submissions (see the README, Admission control). */
export const AdmissionSchema = Type.Object(
  {
    tenantDefaults: Type.Optional(Type.Object(TenantLimitsSchema.properties, { ...strict, description: 'Limits of every tenant; runs submitted without a tenant count as one tenant.' })),
    tenants: Type.Optional(
      Type.Record(Type.String({ minLength: 1 }), TenantLimitsSchema, { description: 'Per tenant name: limits over tenantDefaults, field by field.' }),
    ),
    queueDefaults: Type.Optional(Type.Object(QueueLimitsSchema.properties, { ...strict, description: 'Limit of every queue.' })),
    queues: Type.Optional(
      Type.Record(Type.String(), QueueLimitsSchema, { description: 'Per queue (<pipeline>.<stage>, a queue of a registered or declared pipeline): over queueDefaults.' }),
    ),
  },
  strict,
);

/** The whole `kiln.yaml`. Every field is optional; `default` annotations are the defaults. */
export const KilnFileSchema = Type.Object(
  {
    store: Type.Optional(
      Type.Object(
        {
          kind: Type.Optional(
            Type.Union([Type.Literal(StoreKind.sqlite), Type.Literal(StoreKind.postgres), Type.Literal(StoreKind.redis)], {
              description: 'Which store; when omitted, `url` selects postgres or redis by its scheme and otherwise sqlite is used.',
            }),
          ),
          path: Type.Optional(
            Type.String({ minLength: 1, default: './kiln.db', description: 'SQLite file (relative to kiln.yaml); env KILN_DB, flag --db.' }),
          ),
          url: Type.Optional(
            Type.String({
              pattern: '^([Pp][Oo][Ss][Tt][Gg][Rr][Ee][Ss]([Qq][Ll])?|[Rr][Ee][Dd][Ii][Ss][Ss]?)://',
              errorMessage: 'must be a postgres://, postgresql://, redis:// or rediss:// URL',
              kilnSecret: true,
              description:
                'Connection URL: postgres://user@host:5432/db selects the postgres store, redis://host:6379[/db][?name=<store name>] (rediss:// for TLS) the redis store. Env KILN_STORE, flag --store (which also take sqlite:<path>).',
            }),
          ),
          schema: Type.Optional(
            Type.String({
              pattern: SCHEMA_NAME_PATTERN,
              default: DEFAULT_PG_SCHEMA,
              errorMessage: 'must be a lower-case SQL identifier of at most 63 characters (letters, digits, _; not starting with a digit)',
              description: 'PostgreSQL schema holding kiln\'s tables (created by migrate); env KILN_PG_SCHEMA.',
            }),
          ),
        },
        { ...strict, default: {} },
      ),
    ),
    artifacts: Type.Optional(
      Type.Object(
        {
          root: Type.Optional(
            Type.String({
              minLength: 1,
              default: './kiln-data/artifacts',
              description: 'Directory of the content-addressed artifact store (relative to kiln.yaml); env KILN_ARTIFACTS.',
            }),
          ),
          maxBytes: Type.Optional(
            Type.Integer({
              minimum: 1,
              description:
                'Most bytes of stored objects in the filesystem store under root (not S3); past it a write fails as on a full disk: 503 ARTIFACTS_UNAVAILABLE with Retry-After, a transient stage failure that is retried. Unset: no limit.',
            }),
          ),
          inlineMaxBytes: Type.Optional(
            Type.Integer({
              minimum: 0,
              default: 16384,
              description:
                'Artifacts written as buffers of at most this many bytes are kept in the store (its database) instead of under root or in S3, made durable by the store\'s commits instead of a file or PUT of their own (README "Artifacts"); 0 keeps every artifact in the files/S3 tier. maxBytes does not count them.',
            }),
          ),
          url: Type.Optional(
            Type.String({
              pattern: '^[Ss]3://[^/?#]+(/[^?#]*)?$',
              errorMessage: 'must be an s3://bucket or s3://bucket/prefix URL',
              description: 'Keep artifacts in an S3-compatible bucket (s3://bucket/prefix) instead of under root; env KILN_ARTIFACTS_URL.',
            }),
          ),
          endpoint: Type.Optional(
            Type.String({
              pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
              errorMessage: 'must be an http:// or https:// URL',
              description: 'S3-compatible endpoint (MinIO, ...); else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL; else AWS S3.',
            }),
          ),
          region: Type.Optional(Type.String({ minLength: 1, description: 'S3 region; else AWS_REGION or AWS_DEFAULT_REGION; else us-east-1.' })),
          forcePathStyle: Type.Optional(Type.Boolean({ description: 'Path-style S3 URLs (endpoint/bucket/key); default: true when an endpoint is set.' })),
          accessKeyId: Type.Optional(Type.String({ minLength: 1, description: 'S3 access key id (with secretAccessKey); else AWS_ACCESS_KEY_ID and the AWS default chain.' })),
          secretAccessKey: Type.Optional(
            Type.String({ minLength: 1, kilnSecret: true, description: 'S3 secret access key (with accessKeyId); else AWS_SECRET_ACCESS_KEY and the AWS default chain.' }),
          ),
        },
        { ...strict, default: {} },
      ),
    ),
    http: Type.Optional(
      Type.Object(
        {
          host: Type.Optional(Type.String({ minLength: 1, default: '127.0.0.1', description: 'Listen address; env KILN_HOST or HOST, flag --host.' })),
          port: Type.Optional(
            Type.Integer({ minimum: 0, maximum: 65_535, default: 8080, description: 'Listen port, 0 = any free port; env KILN_PORT or PORT, flag --port.' }),
          ),
          bodyLimitBytes: Type.Optional(Type.Integer({ minimum: 1, default: 65_536, description: 'Largest accepted request body, bytes.' })),
          requestTimeoutMs: Type.Optional(
            Duration('A request not answered within this long (counted once its body is in, plus a route\'s documented wait such as the QR wait) gets 503 STORE_UNAVAILABLE (a store that hangs must not hang clients).', {
              default: 10_000,
              minimumMs: 1,
            }),
          ),
          auth: Type.Optional(
            Type.Object(
              {
                metrics: Type.Optional(
                  Type.Union([Type.Literal('public'), Type.Literal('token')], {
                    default: 'public',
                    description:
                      'Whether GET /metrics needs an API token (token: the admin scope, since its series carry tenant labels) or not (public). Every other route but /healthz needs one as soon as a token exists or the server listens beyond loopback.',
                  }),
                ),
              },
              { ...strict, default: {} },
            ),
          ),
        },
        { ...strict, default: {} },
      ),
    ),
    worker: Type.Optional(
      Type.Object(
        {
          pollMs: Type.Optional(Duration('Poll interval of an idle worker; wake hints cut it short.', { default: 250, minimumMs: 1 })),
          reapMs: Type.Optional(Duration('Interval of the expired-lease reaper and temp sweep.', { default: 1_000, minimumMs: 1 })),
          shutdownGraceMs: Type.Optional(Duration('On stop, in-flight jobs may finish within this long.', { default: 10_000 })),
          tempGraceMs: Type.Optional(Duration('Artifact temp files older than this are collected.', { default: 3_600_000 })),
          artifactGraceMs: Type.Optional(
            Duration('Artifacts referenced by no publication, cache entry or live run are removed once last written longer ago than this.', {
              default: 3_600_000,
            }),
          ),
          ...WorkerCommandFields,
          lock: Type.Optional(
            Type.Object(
              {
                provider: Type.Optional(
                  Type.String({
                    minLength: 1,
                    description: "Where stage locks are kept: the store's own (store, or its kind: sqlite, postgres, redis or memory; default: the selected store).",
                  }),
                ),
                ttl: Type.Optional(
                  Duration('TTL of stage locks whose policy sets none (lock.ttlMs); a crashed holder\'s lock is free this long after its last renewal.', {
                    default: DEFAULT_LOCK_TTL_MS,
                    minimumMs: 1,
                  }),
                ),
              },
              { ...strict, default: {} },
            ),
          ),
        },
        { ...strict, default: {} },
      ),
    ),
    log: Type.Optional(
      Type.Object(
        {
          level: Type.Optional(
            Type.Union(
              Object.values(LogLevel).map((l) => Type.Literal(l)),
              { default: LogLevel.info, description: 'Minimum level logged; env KILN_LOG_LEVEL, flag --log-level.' },
            ),
          ),
          format: Type.Optional(
            Type.Union(
              Object.values(LogFormat).map((f) => Type.Literal(f)),
              {
                default: LogFormat.auto,
                description: 'json (one object per line), pretty (readable text), or auto: pretty when the log stream is a terminal, else json; env KILN_LOG_FORMAT, flag --log-format.',
              },
            ),
          ),
        },
        { ...strict, default: {} },
      ),
    ),
    retention: Type.Optional(RetentionSchema),
    pipelines: Type.Optional(
      Type.Record(Type.String(), PipelineEntry(PipelineConfigSchema), {
        default: {},
        description:
          'Per pipeline name: policy overrides of a registered pipeline (unknown pipelines and stages are errors), or, with a list of stages, a pipeline declared here whose stages run commands.',
      }),
    ),
    pipeline: Type.Optional(SinglePipelineSchema),
    admission: Type.Optional(AdmissionSchema),
  },
  strict,
);
/** `kiln.yaml` as written (durations still in either form). */
export type KilnFileConfig = Static<typeof KilnFileSchema>;

/** The resolved configuration; deep-frozen, every field present, durations in ms. */
export interface ResolvedConfig {
  /** Absolute path of the kiln.yaml used, or null. */
  readonly source: string | null;
  readonly store: ResolvedStore;
  /**
   * Artifacts under `root` (at most `maxBytes` of objects, when set), or in S3 when `s3` is set
   * (`artifacts.url`); buffers of at most `inlineMaxBytes` in the store (0: none).
   */
  readonly artifacts: { readonly root: string; readonly maxBytes?: number; readonly inlineMaxBytes: number; readonly s3?: Readonly<ResolvedS3Artifacts> };
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly bodyLimitBytes: number;
    readonly requestTimeoutMs: number;
    /** `metrics`: whether GET /metrics needs a token. */
    readonly auth: { readonly metrics: 'public' | 'token' };
  };
  readonly worker: {
    readonly pollMs: number;
    readonly reapMs: number;
    readonly shutdownGraceMs: number;
    readonly tempGraceMs: number;
    readonly artifactGraceMs: number;
    /** Default concurrency of the stages declared in kiln.yaml. */
    readonly concurrency?: number;
    /** Default timeout of the stages declared in kiln.yaml, in ms. */
    readonly timeout?: number;
    /** Folder of the attempts' working directories (absolute). */
    readonly workDir: string;
    /** Stage locks: kept by the selected store (`provider`), with this default TTL. */
    readonly lock: { readonly provider: LockProvider; readonly ttlMs: number };
  };
  readonly log: { readonly level: LogLevel; readonly format: LogFormat };
  /** How long ended runs and request records are kept, and the reaper's prune pace. */
  readonly retention: ResolvedRetention;
  /** pipeline -> stage -> overrides, with a pipeline's `defaults` folded into each of its stages. */
  readonly policies: PolicyOverrides;
  /** Limits on submissions (`admission:`); empty: none (no check at all). */
  readonly admission: AdmissionLimits;
  /** pipeline -> its settings as its `parseSettings` returned them (every registered pipeline that has one). */
  readonly settings: Readonly<Record<string, JsonValue>>;
  /** Pipelines declared in kiln.yaml (`pipeline:`, and `pipelines.<name>` with a list of stages), resolved. */
  readonly commandPipelines: readonly CommandPipelineSpec[];
}

/** The sections of {@link ResolvedConfig} that come straight from fields (not `source`, `policies`). */
export type ResolvedSections = Omit<ResolvedConfig, 'source' | 'policies' | 'settings' | 'commandPipelines' | 'admission'>;

/** The S3 artifact store's settings (`artifacts.url` and the fields beside it). */
export type ResolvedS3Artifacts = S3ArtifactsSettings;

/** The section names of {@link ResolvedSections}. */
export const SECTIONS = ['store', 'artifacts', 'http', 'worker', 'log', 'retention'] as const satisfies readonly (keyof ResolvedSections)[];

/** Defaults of every section, read from the schema's `default` annotations. */
export const CONFIG_DEFAULTS: ResolvedSections = (() => {
  const raw = Value.Default(KilnFileSchema, {}) as Record<string, unknown>;
  // Default durations are written as integer ms, so they need no conversion.
  delete raw['pipelines'];
  delete raw['pipeline'];
  delete raw['admission'];
  // The file's store fields cover both stores; the default selects SQLite at the default path.
  raw['store'] = { kind: StoreKind.sqlite, path: (raw['store'] as { path: string }).path };
  // The file's `lock.ttl` resolves to `ttlMs`, kept by the default store (see lock-settings.ts).
  const worker = raw['worker'] as Record<string, unknown>;
  worker['lock'] = Object.freeze({ provider: LockProvider.sqlite, ttlMs: DEFAULT_LOCK_TTL_MS });
  // The file's `retention` fields (succeeded, interval, ...) resolve to a policy in ms.
  raw['retention'] = RETENTION_DEFAULTS;
  for (const section of Object.values(raw)) Object.freeze(section);
  return Object.freeze(raw) as unknown as ResolvedSections;
})();

/** Fields holding filesystem paths: resolved against kiln.yaml's folder (file) or cwd (env, flags). */
export const PATH_FIELDS: readonly string[] = ['store.path', 'artifacts.root', 'worker.workDir'];

/** An environment variable bound to a field. */
export interface EnvBinding {
  readonly name: string;
  /** Dotted field path in {@link KilnFileSchema}. */
  readonly field: string;
}

/** Environment variable naming the config file (must exist when set). */
export const CONFIG_FILE_ENV = 'KILN_CONFIG';

/**
 * Every environment variable kiln reads, in application order: later entries win, so the
 * `KILN_`-prefixed name beats the generic one (`KILN_PORT` over `PORT`). Empty values count as unset.
 */
export const ENV_BINDINGS: readonly EnvBinding[] = [
  { name: 'KILN_DB', field: 'store.path' },
  { name: 'KILN_PG_SCHEMA', field: 'store.schema' },
  { name: 'KILN_ARTIFACTS', field: 'artifacts.root' },
  { name: 'KILN_ARTIFACTS_URL', field: 'artifacts.url' },
  { name: 'HOST', field: 'http.host' },
  { name: 'KILN_HOST', field: 'http.host' },
  { name: 'PORT', field: 'http.port' },
  { name: 'KILN_PORT', field: 'http.port' },
  { name: 'KILN_LOG_LEVEL', field: 'log.level' },
  { name: 'KILN_LOG_FORMAT', field: 'log.format' },
];

/**
 * A store spec (`postgres://...`, `redis://...` or `sqlite:<path>`, see `store-url.ts`) that selects the store:
 * it sets `store.url` or `store.path`, so it cannot be combined with `KILN_DB` / `--db`.
 */
export const STORE_SPEC = { env: 'KILN_STORE', flag: '--store' } as const;

/** CLI flags that override fields, keyed by their `LoadConfigOptions.flags` property. */
export const FLAG_BINDINGS = {
  db: { flag: '--db', field: 'store.path' },
  host: { flag: '--host', field: 'http.host' },
  port: { flag: '--port', field: 'http.port' },
  logLevel: { flag: '--log-level', field: 'log.level' },
  logFormat: { flag: '--log-format', field: 'log.format' },
} as const;

/** The schema of one field by dotted path (`http.port`); throws on a path the schema lacks. */
export function fieldSchema(field: string): TSchema {
  let schema: TSchema = KilnFileSchema;
  for (const key of field.split('.')) {
    const next = (schema as { properties?: Record<string, TSchema> }).properties?.[key];
    if (!next) throw new Error(`no config field ${field}`);
    schema = next;
  }
  return schema;
}
