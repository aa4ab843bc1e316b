/**
 * The OpenTelemetry SDK of a kiln process, set up once by the CLI runtime (src/cli/runtime.ts);
 * core and engine only ever use `@opentelemetry/api` (src/engine/tracing.ts). Spans are exported
 * by OTLP/HTTP (JSON) when the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is) or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/traces`) is set, and nothing is registered otherwise, so
 * a process without them pays only the API's no-op. The SDK's other standard variables apply
 * (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`,
 * `OTEL_EXPORTER_OTLP_HEADERS`, ...); `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`
 * turn export off. The SDK's modules are loaded only then: a process that does not export does
 * not pay for loading them at start.
 */
import { hostname } from 'node:os';
import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { Logger } from '../core/logger.ts';

/** Options of {@link startTracing}. */
export interface TracingOptions {
  /** Where the `OTEL_*` variables are read. */
  env: Readonly<Record<string, string | undefined>>;
  /** Export problems (an unreachable collector) are logged here as warnings. */
  logger: Logger;
  /** `service.version` of the spans (kiln's version). */
  version: string;
  /** The kiln command running (`serve`, `worker`, ...), recorded as resource attribute `kiln.command`. */
  command?: string;
  /** Export to this exporter instead of OTLP (tests), whatever the environment says. */
  exporter?: SpanExporter;
}

/** The SDK of a process, or nothing when no endpoint is configured. */
export interface Tracing {
  /** The OTLP/HTTP traces URL spans go to; null when tracing is off (or an exporter was given). */
  readonly endpoint: string | null;
  /** True when an SDK is registered (spans are recorded and exported). */
  readonly enabled: boolean;
  /** Exports every finished span now. */
  flush(): Promise<void>;
  /** Exports what is left and unregisters the SDK (the API is a no-op again). Idempotent. */
  shutdown(): Promise<void>;
}

/** The OTLP/HTTP traces URL the environment names, per the OpenTelemetry exporter specification. */
export function otlpTracesEndpoint(env: Readonly<Record<string, string | undefined>>): string | null {
  const traces = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim();
  if (traces) return traces;
  const base = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : null;
}

const OFF: Tracing = { endpoint: null, enabled: false, flush: async () => {}, shutdown: async () => {} };

/** Registers the SDK when export is configured (see the module comment); else changes nothing. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  const { env } = options;
  const endpoint = options.exporter ? null : otlpTracesEndpoint(env);
  const disabled = env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true' || env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase() === 'none';
  if (!options.exporter && (endpoint === null || disabled)) return OFF;
  const [{ OTLPTraceExporter }, { defaultResource, detectResources, envDetector, resourceFromAttributes }, { BatchSpanProcessor, NodeTracerProvider }, semconv] =
    await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/semantic-conventions'),
    ]);
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: endpoint ?? undefined });
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({
        [semconv.ATTR_SERVICE_NAME]: 'kiln',
        [semconv.ATTR_SERVICE_VERSION]: options.version,
        'host.name': hostname(),
        'process.pid': process.pid,
        ...(options.command ? { 'kiln.command': options.command } : {}),
      }),
    )
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over kiln's own attributes.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  const log = options.logger;
  diag.setLogger(
    {
      error: (message, ...args) => log.warn({ args }, `opentelemetry: ${message}`),
      warn: (message, ...args) => log.warn({ args }, `opentelemetry: ${message}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () =>
      (stopped ??= provider.shutdown().finally(() => {
        trace.disable();
        context.disable();
        propagation.disable();
        diag.disable();
      })),
  };
}
