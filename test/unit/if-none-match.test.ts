import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { ifNoneMatch } from '../../src/http/pipeline-routes.ts';

const withHeader = (value: string | undefined): FastifyRequest => ({ headers: value === undefined ? {} : { 'if-none-match': value } }) as unknown as FastifyRequest;

test('If-None-Match matches the strong tag, its weak form, one of a list, or *; nothing else', () => {
  const etag = '"abc"';
  assert.equal(ifNoneMatch(withHeader('"abc"'), etag), true);
  assert.equal(ifNoneMatch(withHeader('W/"abc"'), etag), true);
  assert.equal(ifNoneMatch(withHeader('"x", "abc"'), etag), true);
  assert.equal(ifNoneMatch(withHeader('*'), etag), true);
  assert.equal(ifNoneMatch(withHeader('"abcd"'), etag), false);
  assert.equal(ifNoneMatch(withHeader('abc'), etag), false);
  assert.equal(ifNoneMatch(withHeader(undefined), etag), false);
});
