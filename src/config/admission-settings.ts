/**
 * The `admission:` section of `kiln.yaml` (limits on submissions, see src/engine/admission.ts):
 * its shape is checked by the schema; here the names it gives are checked against the queues of
 * the pipelines this process knows (a misspelt queue would silently limit nothing), and a
 * `submitBurst` without a `submitRate` to refill it is refused.
 */
import type { ConfigIssue } from '../core/errors.ts';
import type { AdmissionLimits, TenantLimits } from '../engine/admission.ts';
import type { ConfigFile } from './config-file.ts';
import { isPlainObject } from './validate.ts';

/** Result of {@link resolveAdmission}. */
export interface AdmissionResult {
  admission: AdmissionLimits;
  issues: ConfigIssue[];
}

/**
 * Resolves `admission:` of a validated file. `queues`: every queue (`<pipeline>.<stage>`) of the
 * registered and declared pipelines. A section with schema issues (`pathsWithIssues`) resolves to
 * no limits (the schema issues stop the start anyway).
 */
export function resolveAdmission(file: ConfigFile | null, queues: ReadonlySet<string>, pathsWithIssues: readonly string[]): AdmissionResult {
  const section = file?.value['admission'];
  const issues: ConfigIssue[] = [];
  if (!file || !isPlainObject(section) || pathsWithIssues.some((p) => p === 'admission' || p.startsWith('admission.'))) return { admission: {}, issues };
  const admission = section as AdmissionLimits;
  const issue = (path: string[], message: string): void => {
    issues.push({ source: file.source, path: path.join('.'), ...file.positionOf(path, 'key'), message });
  };
  for (const queue of Object.keys(admission.queues ?? {})) {
    if (!queues.has(queue)) issue(['admission', 'queues', queue], `unknown queue "${queue}" (queues: ${[...queues].sort().join(', ') || 'none'})`);
  }
  const defaults = admission.tenantDefaults ?? {};
  const checkBurst = (path: string[], limits: TenantLimits): void => {
    if (limits.submitBurst !== undefined && limits.submitRate === undefined) issue([...path, 'submitBurst'], 'submitBurst needs a submitRate (here or in tenantDefaults)');
  };
  checkBurst(['admission', 'tenantDefaults'], defaults);
  for (const [tenant, limits] of Object.entries(admission.tenants ?? {})) checkBurst(['admission', 'tenants', tenant], { ...defaults, ...limits });
  return { admission, issues };
}
