/**
 * The kiln.yaml schema of pipelines declared in the file itself ("pipelines without code"): under
 * `pipelines.<name>` with a `stages:` LIST (a mapping there overrides a registered pipeline's
 * policies instead), or as the one pipeline of a top-level `pipeline:`. Each stage runs a command.
 * Part of the one schema in schema.ts; `command-pipelines.ts` resolves what these fields mean.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { PIPELINE_NAME, QUEUE_NAME, STAGE_NAME } from '../core/pipeline/define-pipeline.ts';
import { DEFAULT_STAGE_POLICY } from '../core/policy/stage-policy.ts';
import { InputType, ExitOutcome } from '../commands/command-spec.ts';
import { Duration } from './duration.ts';

const strict = { additionalProperties: false } as const;

/** Name of the pipeline a top-level `pipeline:` declares when it names none. */
export const DEFAULT_PIPELINE_NAME = 'default';
/** Cache lifetime of a command stage whose `cache` names none. */
export const DEFAULT_COMMAND_CACHE_TTL_MS = 3_600_000;

/** A union whose variant is chosen by `kilnVariant(value)` (see validate.ts), so errors name the right fields. */
export interface VariantAnnotation {
  kilnVariant: (value: unknown) => number;
}

/** A mapping whose keys must match `pattern`; other keys are reported as unknown. */
function KeyedRecord(pattern: string, value: TSchema, keyRule: string, description: string) {
  return Type.Record(Type.String({ pattern }), value, { ...strict, kilnKeyRule: keyRule, description });
}

/** One literal of a list, as a union with a readable error. */
function OneOf(values: readonly string[], description: string) {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    { description },
  );
}

const CommandLine = Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], {
  errorMessage: 'must be a command line (text, split into arguments without a shell) or a list of arguments',
  description: 'The command: argv list, or text split into argv (quotes group words; nothing is expanded).',
});

const EnvValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()], { errorMessage: 'must be text, a number or true/false' });

const Retry = Type.Union(
  [
    Type.Integer({ minimum: 0, description: 'Retries after the first attempt.' }),
    Type.Object(
      {
        retries: Type.Optional(Type.Integer({ minimum: 0, description: 'Retries after the first attempt.' })),
        backoff: Type.Optional(Duration(`First retry delay bound; doubles per retry (default ${DEFAULT_STAGE_POLICY.backoff.baseMs} ms).`)),
        maxBackoff: Type.Optional(Duration(`Upper bound of any retry delay (default ${DEFAULT_STAGE_POLICY.backoff.capMs} ms).`)),
      },
      strict,
    ),
  ],
  { errorMessage: 'must be a number of retries or a mapping {retries, backoff, maxBackoff}' },
);

const LOCAL_CACHE = '^local(:[A-Za-z0-9_.-]+)?$';

const Cache = Type.Union(
  [
    Type.String({ pattern: LOCAL_CACHE, errorMessage: 'must be local, local:<name> or a mapping {key, ttl, staleWhileRevalidate, local}' }),
    Type.Object(
      {
        key: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'References the key is made of (input.x, stage.s.outputs.k); default: the whole input and every earlier output.' })),
        ttl: Type.Optional(Duration(`Freshness of a cached output (default ${DEFAULT_COMMAND_CACHE_TTL_MS} ms).`, { minimumMs: 1 })),
        staleWhileRevalidate: Type.Optional(Duration('After ttl, serve the old output this long while one worker rebuilds.')),
        local: Type.Optional(
          Type.Union([Type.Boolean(), Type.String({ pattern: '^[A-Za-z0-9_.-]+$' })], {
            errorMessage: 'must be true, false or the name of a per-process LRU',
            description: 'A per-process LRU in front of the shared cache (true: named after the stage).',
          }),
        ),
      },
      strict,
    ),
  ],
  { errorMessage: 'must be local, local:<name> or a mapping {key, ttl, staleWhileRevalidate, local}' },
);

const Publish = Type.Object(
  {
    file: Type.String({ minLength: 1, description: 'A file the command leaves in KILN_OUTPUT_DIR.' }),
    profile: Type.String({ minLength: 1, description: 'Publication profile (e.g. thumb).' }),
    subject: Type.Optional(Type.String({ minLength: 1, description: "Subject id (template); default the run's subject id." })),
  },
  strict,
);

const Lock = Type.Object(
  {
    key: Type.String({ minLength: 1, description: 'Lock key, a template over the input: render:{{input.assetId}}.' }),
    ttl: Type.Optional(Duration('Lock TTL, renewed while the stage runs (default worker.lock.ttl).', { minimumMs: 1 })),
  },
  strict,
);

/** One stage of a pipeline declared in kiln.yaml. */
export const CommandStageSchema = Type.Object(
  {
    name: Type.String({ pattern: STAGE_NAME.source, errorMessage: `must be a stage name (${STAGE_NAME.source})` }),
    run: CommandLine,
    rollback: Type.Optional(CommandLine),
    shell: Type.Optional(Type.Boolean({ description: 'Run `run`/`rollback` text with /bin/sh -c (templates are then not allowed in it).' })),
    env: Type.Optional(KeyedRecord('^[A-Za-z_][A-Za-z0-9_]*$', EnvValue, 'environment variable names', 'Extra environment (values may be templates).')),
    cwd: Type.Optional(Type.String({ minLength: 1, description: "Working directory (relative to kiln.yaml); default the attempt's own directory." })),
    queue: Type.Optional(Type.String({ pattern: QUEUE_NAME.source, errorMessage: `must be a queue name (${QUEUE_NAME.source})` })),
    retry: Type.Optional(Retry),
    timeout: Type.Optional(Duration('The command (its whole process group) is killed after this long (default worker.timeout).', { minimumMs: 1 })),
    lease: Type.Optional(Duration('Lease per claim and heartbeat; bounds redelivery after a worker crash.', { minimumMs: 2 })),
    concurrency: Type.Optional(Type.Integer({ minimum: 1, description: 'Jobs of this stage one worker runs at once (default worker.concurrency).' })),
    priority: Type.Optional(Type.Integer({ description: 'Lower runs first.' })),
    cache: Type.Optional(Cache),
    lock: Type.Optional(Lock),
    exitCodes: Type.Optional(
      KeyedRecord('^(0|[1-9][0-9]{0,2}|signal)$', OneOf(Object.values(ExitOutcome), 'How the exit status is treated.'), 'exit codes 0-255 or signal', 'Exit status -> success|transient|permanent|intervention, over the defaults.'),
    ),
    publish: Type.Optional(Type.Union([Publish, Type.Array(Publish)], { errorMessage: 'must be a mapping {file, profile, subject} or a list of them' })),
  },
  strict,
);

const InputDeclaration = Type.Union(
  [
    OneOf(Object.values(InputType), 'The input\'s type (required).'),
    Type.Object(
      {
        type: Type.Optional(OneOf(Object.values(InputType), 'The input\'s type (default any).')),
        required: Type.Optional(Type.Boolean({ description: 'Default: true unless a default is given.' })),
        default: Type.Optional(Type.Unknown({ description: 'Value when the input is absent.' })),
      },
      strict,
    ),
  ],
  { errorMessage: `must be a type (${Object.values(InputType).join(', ')}) or a mapping {type, required, default}` },
);

const pipelineFields = {
  version: Type.Optional(Type.Integer({ minimum: 1, description: 'Pipeline version (default 1).' })),
  inputs: Type.Optional(KeyedRecord('^[A-Za-z_][A-Za-z0-9_-]*$', InputDeclaration, 'input names', 'The run input\'s fields; templates may name only these.')),
  stages: Type.Array(CommandStageSchema, { minItems: 1, description: 'The stages, in order; each runs a command.' }),
};

/** `pipelines.<name>` when it declares a pipeline (its `stages` is a list). */
export const CommandPipelineSchema = Type.Object(pipelineFields, strict);

/** The top-level `pipeline:`: one declared pipeline, named by `name`. */
export const SinglePipelineSchema = Type.Object(
  {
    name: Type.Optional(
      Type.String({ pattern: PIPELINE_NAME.source, errorMessage: `must be a pipeline name (${PIPELINE_NAME.source})`, description: `Default "${DEFAULT_PIPELINE_NAME}".` }),
    ),
    ...pipelineFields,
  },
  strict,
);

/** True for a `pipelines.<name>` entry that declares a pipeline (its `stages` is a list). */
export function isDeclaredPipelineEntry(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Array.isArray((value as { stages?: unknown }).stages);
}

/** `pipelines.<name>`: policy overrides of a registered pipeline (variant 0) or a declared pipeline (variant 1). */
export function PipelineEntry(overrides: TSchema) {
  const annotation: VariantAnnotation = { kilnVariant: (value) => (isDeclaredPipelineEntry(value) ? 1 : 0) };
  return Type.Union([overrides, CommandPipelineSchema], annotation);
}

/** Fields of `worker:` that declared pipelines use. */
export const WorkerCommandFields = {
  concurrency: Type.Optional(Type.Integer({ minimum: 1, description: 'Default concurrency of every stage declared in kiln.yaml.' })),
  timeout: Type.Optional(Duration('Default timeout of every stage declared in kiln.yaml.', { minimumMs: 1 })),
  workDir: Type.Optional(
    Type.String({ minLength: 1, default: './kiln-data/work', description: 'Each attempt of a command gets its own directory under this one (relative to kiln.yaml).' }),
  ),
};
