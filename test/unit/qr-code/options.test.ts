import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PipelineError } from '../../../src/index.ts';
import { QR_MAX_CONTENT_BYTES } from '../../../src/pipelines/qr-code/capacity.ts';
import { canonicalQrRequest } from '../../../src/pipelines/qr-code/canonical.ts';
import { parseQrRequest, QR_DEFAULTS, type QrRequestSource } from '../../../src/pipelines/qr-code/options.ts';

/** The error `fn` throws, asserted to be a kiln error. */
function thrown(fn: () => unknown): PipelineError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof PipelineError, `expected a PipelineError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected an error');
}

/** The field names in `details.issues` of a validation error. */
function issueFields(err: PipelineError): string[] {
  const issues = err.details?.issues as { field: string; message: string }[] | undefined;
  assert.ok(Array.isArray(issues), 'details.issues is an array');
  return issues.map((i) => i.field);
}

describe('parseQrRequest: defaults and normalization', () => {
  test('fills in every default for a content-only request', () => {
    assert.deepEqual(parseQrRequest({ content: 'hi' }, 'json'), { content: 'hi', ...QR_DEFAULTS });
  });

  test('normalizes format and ecc case and every color spelling to lowercase #rrggbbaa', () => {
    const options = parseQrRequest({ content: 'hi', format: 'SVG', ecc: 'h', fg: '#A1b', bg: '#FFEEDD80' }, 'json');
    assert.equal(options.format, 'svg');
    assert.equal(options.ecc, 'H');
    assert.equal(options.fg, '#aa11bbff');
    assert.equal(options.bg, '#ffeedd80');
    assert.equal(parseQrRequest({ content: 'hi', fg: '#123456' }, 'json').fg, '#123456ff');
  });

  test('takes scale instead of size, and then has no size', () => {
    const options = parseQrRequest({ content: 'hi', scale: 8 }, 'json');
    assert.ok('scale' in options && options.scale === 8);
    assert.equal('size' in options, false);
  });

  test('reads query-string values as strictly parsed strings', () => {
    const query = { content: 'hi', size: '1024', margin: '0', ecc: 'q', format: 'Png', fg: '#000', bg: '#fff' };
    assert.deepEqual(parseQrRequest(query, 'query'), {
      content: 'hi',
      format: 'png',
      ecc: 'Q',
      margin: 0,
      size: 1024,
      fg: '#000000ff',
      bg: '#ffffffff',
    });
    assert.ok('scale' in parseQrRequest({ content: 'hi', scale: '3' }, 'query'));
  });

  test('accepts a query object without a prototype (as node:querystring makes them)', () => {
    const query = Object.assign(Object.create(null) as Record<string, unknown>, { content: 'hi', size: '256' });
    assert.equal((parseQrRequest(query, 'query') as { size: number }).size, 256);
  });

  test('parsing the canonical form again gives it back unchanged', () => {
    const options = parseQrRequest({ content: 'x', fg: '#ABC', format: 'SVG', scale: 2 }, 'json');
    const canonical = canonicalQrRequest(options);
    assert.deepEqual(parseQrRequest(canonical, 'json'), canonical);
  });

  test('returns frozen options', () => {
    assert.ok(Object.isFrozen(parseQrRequest({ content: 'hi' }, 'json')));
  });
});

describe('parseQrRequest: malformed input gets 400 VALIDATION_FAILED naming the field', () => {
  const cases: [name: string, raw: unknown, source: QrRequestSource, fields: string[]][] = [
    ['missing content', {}, 'json', ['content']],
    ['empty content', { content: '' }, 'json', ['content']],
    ['content not a string', { content: 42 }, 'json', ['content']],
    ['content with a lone surrogate', { content: 'a\uD800b' }, 'json', ['content']],
    ['format unknown', { content: 'x', format: 'gif' }, 'json', ['format']],
    ['format not a string', { content: 'x', format: 1 }, 'json', ['format']],
    ['ecc unknown', { content: 'x', ecc: 'X' }, 'json', ['ecc']],
    ['ecc spelled out', { content: 'x', ecc: 'medium' }, 'json', ['ecc']],
    ['size below 64', { content: 'x', size: 63 }, 'json', ['size']],
    ['size above 4096', { content: 'x', size: 4097 }, 'json', ['size']],
    ['size fractional', { content: 'x', size: 100.5 }, 'json', ['size']],
    ['size as a string in JSON', { content: 'x', size: '512' }, 'json', ['size']],
    ['size null', { content: 'x', size: null }, 'json', ['size']],
    ['scale 0', { content: 'x', scale: 0 }, 'json', ['scale']],
    ['scale above 64', { content: 'x', scale: 65 }, 'json', ['scale']],
    ['size and scale together', { content: 'x', size: 512, scale: 4 }, 'json', ['scale']],
    ['margin negative', { content: 'x', margin: -1 }, 'json', ['margin']],
    ['margin above 16', { content: 'x', margin: 17 }, 'json', ['margin']],
    ['fg without #', { content: 'x', fg: '000000' }, 'json', ['fg']],
    ['fg with 4 digits', { content: 'x', fg: '#0000' }, 'json', ['fg']],
    ['fg named', { content: 'x', fg: 'black' }, 'json', ['fg']],
    ['bg with a non-hex digit', { content: 'x', bg: '#ggg' }, 'json', ['bg']],
    ['bg not a string', { content: 'x', bg: 0xffffff }, 'json', ['bg']],
    ['query size with trailing letters', { content: 'x', size: '12abc' }, 'query', ['size']],
    ['query size in exponent form', { content: 'x', size: '1e3' }, 'query', ['size']],
    ['query size with a sign', { content: 'x', size: '+512' }, 'query', ['size']],
    ['query size with a leading zero', { content: 'x', size: '0512' }, 'query', ['size']],
    ['query size with spaces', { content: 'x', size: ' 512' }, 'query', ['size']],
    ['query size fractional', { content: 'x', size: '512.0' }, 'query', ['size']],
    ['query margin empty', { content: 'x', margin: '' }, 'query', ['margin']],
    ['query number not a string', { content: 'x', size: 512 }, 'query', ['size']],
    ['query parameter repeated', { content: 'x', size: ['256', '512'] }, 'query', ['size']],
    ['query content repeated', { content: ['a', 'b'] }, 'query', ['content']],
    ['several problems at once', { content: 1, size: 1, margin: 99, fg: 'red' }, 'json', ['content', 'size', 'margin', 'fg']],
  ];
  for (const [name, raw, source, fields] of cases) {
    test(name, () => {
      const err = thrown(() => parseQrRequest(raw, source));
      assert.equal(err.code, 'VALIDATION_FAILED');
      assert.equal(err.statusCode, 400);
      assert.deepEqual(issueFields(err), fields);
      for (const field of fields) assert.match(err.message, new RegExp(`\\b${field}\\b`));
    });
  }

  for (const [name, raw] of [
    ['null', null],
    ['an array', [{ content: 'x' }]],
    ['a string', 'content=x'],
    ['a number', 7],
  ] as const) {
    test(`a body that is ${name} is rejected as a whole`, () => {
      const err = thrown(() => parseQrRequest(raw, 'json'));
      assert.equal(err.code, 'VALIDATION_FAILED');
      assert.deepEqual(issueFields(err), ['(root)']);
    });
  }

  test('unknown fields are all named, in the message and in details', () => {
    const err = thrown(() => parseQrRequest({ content: 'x', colour: '#000', width: 5, Size: 512 }, 'json'));
    assert.equal(err.code, 'VALIDATION_FAILED');
    assert.deepEqual(err.details?.unknownFields, ['Size', 'colour', 'width']);
    assert.deepEqual(issueFields(err), ['Size', 'colour', 'width']);
    for (const field of ['Size', 'colour', 'width']) assert.ok(err.message.includes(field), field);
  });

  test('inherited object keys are neither fields nor unknown fields', () => {
    const err = thrown(() => parseQrRequest({ constructor: 'x' }, 'json'));
    assert.deepEqual(issueFields(err), ['constructor', 'content']);
  });

  test('a long bad value is cut short in the message', () => {
    const err = thrown(() => parseQrRequest({ content: 'x', fg: 'z'.repeat(10_000) }, 'json'));
    assert.ok(err.message.length < 300, err.message);
  });
});

describe('parseQrRequest: well-formed but undrawable requests get 422', () => {
  test('fg equal to bg after normalization is QR_COLORS_UNREADABLE', () => {
    for (const [fg, bg] of [
      ['#fff', '#FFFFFFFF'],
      ['#12345678', '#12345678'],
      ['#000', '#000000'],
    ]) {
      const err = thrown(() => parseQrRequest({ content: 'x', fg, bg }, 'json'));
      assert.equal(err.code, 'QR_COLORS_UNREADABLE', `${fg} / ${bg}`);
      assert.equal(err.statusCode, 422);
    }
    assert.doesNotThrow(() => parseQrRequest({ content: 'x', fg: '#000000ff', bg: '#000000fe' }, 'json'));
  });

  test('two fully transparent colors are QR_COLORS_UNREADABLE too, whatever their RGB', () => {
    const err = thrown(() => parseQrRequest({ content: 'x', fg: '#00000000', bg: '#ffffff00' }, 'json'));
    assert.equal(err.code, 'QR_COLORS_UNREADABLE');
    assert.doesNotThrow(() => parseQrRequest({ content: 'x', fg: '#00000001', bg: '#ffffff00' }, 'json'));
  });

  for (const ecc of ['L', 'M', 'Q', 'H'] as const) {
    test(`content one byte past the ecc ${ecc} limit is QR_CONTENT_TOO_LONG naming the limit and the level`, () => {
      const limit = QR_MAX_CONTENT_BYTES[ecc];
      assert.doesNotThrow(() => parseQrRequest({ content: 'a'.repeat(limit), ecc }, 'json'));
      const err = thrown(() => parseQrRequest({ content: 'a'.repeat(limit + 1), ecc }, 'json'));
      assert.equal(err.code, 'QR_CONTENT_TOO_LONG');
      assert.equal(err.statusCode, 422);
      assert.deepEqual(err.details, { contentBytes: limit + 1, limitBytes: limit, ecc });
      assert.ok(err.message.includes(`${limit} bytes`), err.message);
      assert.ok(err.message.includes(`ecc ${ecc}`), err.message);
    });
  }

  test('the content limit counts UTF-8 bytes, not characters', () => {
    // "€" is 3 bytes in UTF-8: 777 of them are exactly the ecc M limit of 2331 bytes.
    assert.doesNotThrow(() => parseQrRequest({ content: '€'.repeat(777) }, 'json'));
    const err = thrown(() => parseQrRequest({ content: '€'.repeat(777) + 'a' }, 'json'));
    assert.equal(err.code, 'QR_CONTENT_TOO_LONG');
    assert.equal(err.details?.contentBytes, 2332);
  });

  test('a size with less than one pixel per module is QR_SIZE_TOO_SMALL naming the minimum size', () => {
    // 1000 bytes at ecc H need version 36: 161 modules, plus 2 x 16 margin = 193.
    const raw = { content: 'a'.repeat(1000), ecc: 'H', margin: 16 };
    const err = thrown(() => parseQrRequest({ ...raw, size: 192 }, 'json'));
    assert.equal(err.code, 'QR_SIZE_TOO_SMALL');
    assert.equal(err.statusCode, 422);
    assert.equal(err.details?.minimumSize, 193);
    assert.ok(err.message.includes('193 px'), err.message);
    assert.doesNotThrow(() => parseQrRequest({ ...raw, size: 193 }, 'json'));
  });

  test('a scale that makes the image wider than 4096 px is QR_SIZE_TOO_LARGE naming the largest scale', () => {
    // Version 40 with the default margin: 177 + 8 = 185 modules; 185 x 22 = 4070, x 23 = 4255.
    const raw = { content: 'a'.repeat(2900), ecc: 'L' };
    const err = thrown(() => parseQrRequest({ ...raw, scale: 23 }, 'json'));
    assert.equal(err.code, 'QR_SIZE_TOO_LARGE');
    assert.equal(err.statusCode, 422);
    assert.equal(err.details?.maximumScale, 22);
    assert.equal(err.details?.imageSizePx, 4255);
    assert.doesNotThrow(() => parseQrRequest({ ...raw, scale: 22 }, 'json'));
  });

  test('400 problems are reported before 422 ones', () => {
    const err = thrown(() => parseQrRequest({ content: 'a'.repeat(5000), fg: '#fff', bg: '#fff', margin: 'wide' }, 'json'));
    assert.equal(err.code, 'VALIDATION_FAILED');
  });
});
