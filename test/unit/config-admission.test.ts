/**
 * `admission:` in kiln.yaml: tenant limits (a default and per-tenant overrides: maxInFlightRuns,
 * submitRate, submitBurst) and queue backlog limits. Absent: no limits. Bad values and names are
 * refused at load with file, line and path; the engine gets exactly what the file says.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load.ts';
import { definePipeline } from '../../src/core/pipeline/define-pipeline.ts';
import { admissionConfigured } from '../../src/engine/admission.ts';
import { issuesOf, useConfigDir } from '../support/config-files.ts';

const render = definePipeline({ name: 'render', version: 1, stages: [{ name: 'draw', handler: () => null }, { name: 'store', handler: () => null }] });

const dir = useConfigDir('kiln-config-admission-');

function load(yaml: string) {
  dir.writeYaml(yaml);
  return loadConfig({ cwd: dir.path(), env: {}, pipelines: [render] });
}

describe('admission', () => {
  test('without the section there are no limits, and the engine skips admission', () => {
    const config = load('log: { level: warn }\n');
    assert.deepEqual(config.admission, {});
    assert.equal(admissionConfigured(config.admission), false);
  });

  test('tenant defaults, per-tenant overrides and queue limits are read as written', () => {
    const config = load(
      [
        'admission:',
        '  tenantDefaults: { maxInFlightRuns: 100, submitRate: 2.5, submitBurst: 10 }',
        '  tenants:',
        '    acme: { maxInFlightRuns: 1000 }',
        '  queueDefaults: { maxBacklog: 5000 }',
        '  queues:',
        '    render.draw: { maxBacklog: 50 }',
        '',
      ].join('\n'),
    );
    assert.deepEqual(config.admission, {
      tenantDefaults: { maxInFlightRuns: 100, submitRate: 2.5, submitBurst: 10 },
      tenants: { acme: { maxInFlightRuns: 1000 } },
      queueDefaults: { maxBacklog: 5000 },
      queues: { 'render.draw': { maxBacklog: 50 } },
    });
    assert.equal(admissionConfigured(config.admission), true);
  });

  test('zero, negative, fractional counts and unknown keys are refused at their line', () => {
    const issues = issuesOf(() =>
      load(['admission:', '  tenantDefaults:', '    maxInFlightRuns: 0', '    submitRate: -1', '  queueDefaults: { maxBacklog: 2.5 }', '  tenants: { acme: { maxRuns: 3 } }', ''].join('\n')),
    );
    const byPath = new Map(issues.map((i) => [i.path, i]));
    assert.equal(byPath.get('admission.tenantDefaults.maxInFlightRuns')?.line, 3, JSON.stringify(issues));
    assert.equal(byPath.get('admission.tenantDefaults.submitRate')?.line, 4, JSON.stringify(issues));
    assert.equal(byPath.get('admission.queueDefaults.maxBacklog')?.line, 5, JSON.stringify(issues));
    assert.ok([...byPath.keys()].some((p) => p.startsWith('admission.tenants.acme')), JSON.stringify(issues));
  });

  test('a queue no pipeline has is refused, naming the queues that exist', () => {
    const issues = issuesOf(() => load('admission:\n  queues:\n    render.paint: { maxBacklog: 5 }\n'));
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.equal(issues[0]?.path, 'admission.queues.render.paint');
    assert.equal(issues[0]?.line, 3);
    assert.match(issues[0]?.message ?? '', /unknown queue "render\.paint" \(queues: render\.draw, render\.store\)/);
  });

  test('submitBurst without a submitRate (here or in tenantDefaults) is refused', () => {
    const issues = issuesOf(() => load('admission:\n  tenants:\n    acme: { submitBurst: 5 }\n'));
    assert.deepEqual(issues.map((i) => [i.path, i.message]), [['admission.tenants.acme.submitBurst', 'submitBurst needs a submitRate (here or in tenantDefaults)']]);
    const inherited = load('admission:\n  tenantDefaults: { submitRate: 1 }\n  tenants:\n    acme: { submitBurst: 5 }\n');
    assert.deepEqual(inherited.admission.tenants, { acme: { submitBurst: 5 } });
  });
});
