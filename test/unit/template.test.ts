/**
 * Templates (`render:{{input.assetId}}`): parsed once with the roots they may name, rendered as
 * path lookups whose scalar values are inserted as text; anything else is a problem, never text.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JsonValue } from '../../src/core/model.ts';
import { parseTemplate, renderTemplate, type Template } from '../../src/core/template.ts';

const ROOTS = ['input', 'run', 'stage'];

function parsed(source: string): Template {
  const result = parseTemplate(source, ROOTS);
  assert.ok(result.ok, result.ok ? '' : result.problem);
  return result.template;
}

describe('templates', () => {
  test('literal text and references, with optional spaces inside the braces', () => {
    assert.deepEqual(parsed('render:{{input.assetId}}').parts, [{ text: 'render:' }, { path: ['input', 'assetId'] }]);
    assert.deepEqual(parsed('{{ run.id }}-{{stage.fetch.outputs.key}}').parts, [
      { path: ['run', 'id'] },
      { text: '-' },
      { path: ['stage', 'fetch', 'outputs', 'key'] },
    ]);
    assert.deepEqual(parsed('no references').parts, [{ text: 'no references' }]);
  });

  test('unknown roots, malformed paths and stray braces are problems', () => {
    const problem = (source: string) => {
      const result = parseTemplate(source, ROOTS);
      assert.equal(result.ok, false, source);
      return result.ok ? '' : result.problem;
    };
    assert.match(problem('{{assetId}}'), /must start with one of: input, run, stage/);
    assert.match(problem('{{env.HOME}}'), /must start with one of/);
    assert.match(problem('{{input..a}}'), /not a dotted path/);
    assert.match(problem('{{}}'), /not a dotted path/);
    assert.match(problem('a{{input.b'), /unbalanced braces/);
    assert.match(problem('a}}b'), /unbalanced braces/);
    assert.match(problem('{{input.a}}}}'), /unbalanced braces/);
  });

  test('strings are inserted as they are, numbers and booleans in their JSON spelling', () => {
    const template = parsed('k:{{input.s}}:{{input.n}}:{{input.b}}:{{input.deep.x}}');
    const rendered = renderTemplate(template, { input: { s: 'a b;$(id)', n: 42.5, b: false, deep: { x: 'y' } } });
    assert.deepEqual(rendered, { ok: true, text: 'k:a b;$(id):42.5:false:y' });
  });

  test('a missing value, null, an object or a list is a problem that names the reference', () => {
    const template = parsed('k:{{input.v}}');
    const cases: [JsonValue | undefined, string][] = [[undefined, 'nothing'], [null, 'null'], [{ a: 1 }, 'an object'], [[1], 'a list']];
    for (const [v, found] of cases) {
      const rendered = renderTemplate(template, { input: v === undefined ? {} : { v } });
      assert.equal(rendered.ok, false);
      assert.match(rendered.ok ? '' : rendered.problem, new RegExp(`\\{\\{input\\.v\\}\\} of "k:\\{\\{input\\.v\\}\\}" found ${found}`));
    }
    assert.equal(renderTemplate(parsed('{{input.toString}}'), { input: {} }).ok, false, 'inherited properties are not values');
    assert.equal(renderTemplate(parsed('{{input.a.b}}'), { input: { a: 'text' } }).ok, false);
  });
});
