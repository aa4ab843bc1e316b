/**
 * A tiny OTLP/HTTP trace collector for tests: listens on 127.0.0.1, accepts `POST /v1/traces`
 * with the JSON encoding (what `@opentelemetry/exporter-trace-otlp-http` sends; gzip accepted)
 * and keeps every span it receives, flattened with its resource's attributes.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One received span. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  /** Its resource's attributes (`service.name`, `kiln.command`, ...). */
  resource: Record<string, unknown>;
}

/** A running collector. */
export interface OtlpCollector {
  /** `http://127.0.0.1:<port>`, the value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly endpoint: string;
  /** Every span received so far. */
  spans(): CollectedSpan[];
  /** Requests that were not valid OTLP/JSON trace exports (should stay empty). */
  rejected(): string[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[] }[] }[];
  }[];
}

function attributes(list: readonly OtlpAttribute[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    out[key] = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.doubleValue ?? value.boolValue;
  }
  return out;
}

/** OTLP/JSON ids are hex strings; base64 (protobuf's JSON mapping) is accepted too. */
function hexId(id: string | undefined): string {
  if (!id) return '';
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

async function body(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
}

/** Starts a collector on a free port of 127.0.0.1. */
export async function startOtlpCollector(): Promise<OtlpCollector> {
  const received: CollectedSpan[] = [];
  const rejected: string[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const text = (await body(request)).toString('utf8');
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !String(request.headers['content-type']).startsWith('application/json')) {
        rejected.push(`${request.method} ${request.url} ${String(request.headers['content-type'])}`);
        response.writeHead(415).end();
        return;
      }
      const payload = JSON.parse(text) as OtlpExport;
      for (const resourceSpans of payload.resourceSpans) {
        const resource = attributes(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans) {
          for (const span of scope.spans) {
            received.push({
              traceId: hexId(span.traceId),
              spanId: hexId(span.spanId),
              parentSpanId: hexId(span.parentSpanId),
              name: span.name,
              kind: span.kind,
              attributes: attributes(span.attributes),
              resource,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    })().catch((err: unknown) => {
      rejected.push(String(err));
      response.writeHead(400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    rejected: () => [...rejected],
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
