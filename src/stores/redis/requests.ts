/**
 * The `requests` sub-port of the Redis store: remembered client requests (`Idempotency-Key`).
 * Remembering is one script (routines/requests-remember.lua) that checks and writes, so the
 * first request of a `(scope, key)` is stored once in every process; later ones read it back.
 */
import type { JsonValue } from '../../core/model.ts';
import type { RequestRecord, RequestsPort } from '../../core/ports/requests.ts';
import type { RedisContext } from './context.ts';
import { fieldsOf, json, required, requiredNumber, toJson, type FlatHash } from './rows.ts';

/** A stored record (flat HGETALL, see lib-requests.lua) as a {@link RequestRecord}. */
function requestRecordFrom(flat: FlatHash): RequestRecord {
  const f = fieldsOf(flat);
  return {
    scope: required(f, 'scope'),
    key: required(f, 'key'),
    requestHash: required(f, 'requestHash'),
    value: json<JsonValue>(f, 'value') as JsonValue,
    createdAt: requiredNumber(f, 'createdAt'),
  };
}

/** Remembered client requests on Redis. */
export function createRequestsPort(ctx: RedisContext): RequestsPort {
  return ctx.port<RequestsPort>({
    remember: async (record) => {
      const [created, flat] = await ctx.call<[boolean, FlatHash]>('requests-remember', [record.scope, record.key, record.requestHash, toJson(record.value)]);
      return { created, record: requestRecordFrom(flat) };
    },
    get: async (scope, key) => {
      const flat = await ctx.call<FlatHash | null>('requests-get', [scope, key]);
      return flat === null ? null : requestRecordFrom(flat);
    },
  });
}
