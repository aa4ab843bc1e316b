/**
 * Statements of the `requests` sub-port: remembered client requests (`request_records`), written
 * once per `(scope, key)` and never changed.
 */
import { statement, type Statement } from '../database.ts';

/**
 * In: now, scope, key, request hash, value JSON. Out: one row: `created` (this call stored the
 * record) and the stored record's columns — this call's, or the first request's. The
 * `remember_request` function (routines/requests.sql) reads the winner's row after losing an
 * insert race.
 */
export const rememberRequest = (s: string): Statement =>
  statement(
    'remember_request',
    `SELECT r.created, (r.stored).*
     FROM ${s}.remember_request($2, $3, $4, $5::json, $1::bigint) AS r`,
  );

/** In: scope, key. Out: the remembered request's row or nothing. */
export const getRequest = (s: string): Statement =>
  statement(
    'get_request',
    `SELECT scope, key, request_hash, value, created_at FROM ${s}.request_records WHERE scope = $1 AND key = $2`,
  );
