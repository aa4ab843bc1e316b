import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sha256Hex } from '../../src/core/canonical.ts';
import type { PipelineError } from '../../src/core/errors.ts';
import { TokenScope, type ApiToken } from '../../src/core/ports/tokens.ts';
import { grantsScope, hashTokenSecret, looksLikeTokenSecret, newTokenSecret, parseTokenScopes, tokenRefusal } from '../../src/core/tokens.ts';
import { isLoopbackAddress } from '../../src/http/auth.ts';

describe('API token secrets and scopes', () => {
  test('a new secret is kiln_ + 43 base64url characters (256 bits), its hash sha256 hex, its last4 its end; no two alike', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { secret, secretHash, last4 } = newTokenSecret();
      assert.match(secret, /^kiln_[A-Za-z0-9_-]{43}$/);
      assert.ok(looksLikeTokenSecret(secret));
      assert.equal(secretHash, sha256Hex(secret));
      assert.equal(secretHash, hashTokenSecret(secret));
      assert.equal(last4, secret.slice(-4));
      seen.add(secret);
    }
    assert.equal(seen.size, 200);
    for (const bad of ['', 'kiln_', `kiln_${'a'.repeat(42)}`, `kiln_${'a'.repeat(44)}`, `KILN_${'a'.repeat(43)}`, `kiln_${'a'.repeat(42)}=`]) assert.equal(looksLikeTokenSecret(bad), false, bad);
  });

  test('scopes are read in canonical order; unknown or none are VALIDATION_FAILED', () => {
    assert.deepEqual(parseTokenScopes('admin, read,submit,read'), [TokenScope.read, TokenScope.submit, TokenScope.admin]);
    assert.deepEqual(parseTokenScopes('operate'), [TokenScope.operate]);
    for (const bad of ['', ' , ', 'read,write', 'READ']) {
      assert.throws(() => parseTokenScopes(bad), (err: PipelineError) => err.code === 'VALIDATION_FAILED', bad);
    }
  });

  test('admin grants every scope; the others only themselves', () => {
    for (const needed of [TokenScope.read, TokenScope.submit, TokenScope.operate, TokenScope.admin]) {
      assert.equal(grantsScope([TokenScope.admin], needed), true, needed);
      assert.equal(grantsScope([needed], needed), true, needed);
    }
    assert.equal(grantsScope([TokenScope.read, TokenScope.submit], TokenScope.operate), false);
    assert.equal(grantsScope([TokenScope.operate], TokenScope.read), false);
    assert.equal(grantsScope([TokenScope.read, TokenScope.operate], TokenScope.admin), false);
  });

  test('a token is refused once revoked, or at and after its expiry', () => {
    const token: ApiToken = { id: 'tok_1', tenant: 't', name: null, scopes: [TokenScope.read], last4: 'abcd', createdAt: 0, expiresAt: null, revokedAt: null };
    assert.equal(tokenRefusal(token, 1e15), null);
    assert.equal(tokenRefusal({ ...token, expiresAt: 100 }, 99), null);
    assert.equal(tokenRefusal({ ...token, expiresAt: 100 }, 100), 'expired');
    assert.equal(tokenRefusal({ ...token, revokedAt: 5 }, 0), 'revoked');
    assert.equal(tokenRefusal({ ...token, revokedAt: 5, expiresAt: 1 }, 10), 'revoked');
  });

  test('loopback addresses: 127.0.0.0/8, ::1 and IPv4-mapped 127.x; nothing else', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(a), true, a);
    for (const a of ['0.0.0.0', '::', '10.0.0.1', '192.0.2.2', '::ffff:10.0.0.1', 'fe80::1', '128.0.0.1']) assert.equal(isLoopbackAddress(a), false, a);
  });
});
