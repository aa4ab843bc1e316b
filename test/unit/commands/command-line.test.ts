/**
 * Command lines of command stages without a shell: splitting text into argv, and templates that
 * fill values into ONE argument each, checked against the inputs and stages that exist.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { splitArgv } from '../../../src/commands/argv.ts';
import { parseTemplate, renderTemplate, templateRefProblem, templateRefs } from '../../../src/commands/templates.ts';

describe('splitArgv', () => {
  it('splits at blanks, groups quoted words and expands nothing', () => {
    assert.deepEqual(splitArgv(`convert  'a b.png' "c \\"d\\" e" f\\ g $HOME ~ *.png ; | > x`), {
      argv: ['convert', 'a b.png', 'c "d" e', 'f g', '$HOME', '~', '*.png', ';', '|', '>', 'x'],
    });
  });

  it('keeps a template with blanks inside one word, and glued to its neighbours', () => {
    assert.deepEqual(splitArgv('tool --size={{ input.size }}px {{input.a}}'), { argv: ['tool', '--size={{ input.size }}px', '{{input.a}}'] });
  });

  it('reports an unterminated quote with its offset', () => {
    assert.deepEqual(splitArgv(`echo "oops`), { problem: 'unterminated double quote', offset: 5 });
    assert.deepEqual(splitArgv(`echo 'oops`), { problem: 'unterminated single quote', offset: 5 });
  });
});

describe('templates', () => {
  const scope = { inputs: ['url', 'size'], stages: ['fetch'], allStages: ['fetch', 'render', 'publish'] };

  it('renders each reference as text inside its one argument, whatever the value holds', () => {
    const template = parseTemplate('--src={{input.url}}');
    const values: Record<string, string> = { 'input.url': 'x; touch /tmp/pwned $(id)' };
    assert.equal(renderTemplate(template, (_ref, expression) => values[expression] ?? ''), '--src=x; touch /tmp/pwned $(id)');
  });

  it('names inputs, outputs and artifacts (file names may hold dots) and run fields', () => {
    const refs = templateRefs(parseTemplate('{{input.a.b}} {{stage.fetch.outputs.etag}} {{stage.fetch.artifacts.page.v2.html}} {{run.id}}'));
    assert.deepEqual(refs, [
      { kind: 'input', path: ['a', 'b'] },
      { kind: 'output', stage: 'fetch', key: 'etag' },
      { kind: 'artifact', stage: 'fetch', file: 'page.v2.html' },
      { kind: 'run', field: 'id' },
    ]);
  });

  it('reports malformed and unknown references', () => {
    assert.match(parseTemplate('{{input.url').problems[0]?.message ?? '', /unterminated/);
    assert.match(parseTemplate('{{env.HOME}}').problems[0]?.message ?? '', /unknown template/);
    assert.match(parseTemplate('{{stage.fetch.logs.x}}').problems[0]?.message ?? '', /stage\.<name>\.outputs/);
    assert.match(parseTemplate('{{run.secret}}').problems[0]?.message ?? '', /run fields are/);
  });

  it('accepts only declared inputs and stages that ran before, naming what exists', () => {
    const problem = (text: string) => {
      const [ref] = templateRefs(parseTemplate(text));
      return ref ? templateRefProblem(ref, scope) : 'no ref';
    };
    assert.equal(problem('{{input.url}}'), null);
    assert.equal(problem('{{stage.fetch.outputs.x}}'), null);
    assert.match(problem('{{input.nope}}') ?? '', /unknown input "nope" \(declared: url, size\)/);
    assert.match(problem('{{stage.render.outputs.x}}') ?? '', /has not run yet/);
    assert.match(problem('{{stage.missing.outputs.x}}') ?? '', /unknown stage "missing"/);
    assert.match(templateRefProblem({ kind: 'input', path: ['url'] }, { ...scope, inputs: null }) ?? '', /declares no inputs/);
  });
});
