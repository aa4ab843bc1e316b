/**
 * Preloaded into the `kiln serve` child by `npm run bench -- qr --cpu-prof`
 * (`node --import tsx --import bench/qr/serve-cpu-profile.ts bin/kiln.js serve ...`): SIGUSR2
 * starts V8's sampling profiler in-process (see engine-pg/cpu-profile.ts for why in-process), the
 * next SIGUSR2 stops it and writes `<QR_BENCH_CPU_PROF_DIR>/summary.json` (a CpuProfileSummary)
 * next to the raw `kiln-serve-<n>.cpuprofile`, and so on. So each profile covers one measured
 * phase only, not start-up or warm-up. Installs nothing when the variable is unset.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCpuProfile, type CpuProfiler } from '../engine-pg/cpu-profile.ts';
import { PROFILE_DIR_ENV, PROFILE_SUMMARY_FILE } from './kiln-serve.ts';
/** Functions listed in the summary. */
const TOP_FUNCTIONS = 25;

const dir = process.env[PROFILE_DIR_ENV];
if (dir) {
  // Written under a temp name and renamed, so the suite never reads half a file.
  const publish = (value: unknown): void => {
    const path = join(dir, PROFILE_SUMMARY_FILE);
    writeFileSync(`${path}.tmp`, JSON.stringify(value));
    renameSync(`${path}.tmp`, path);
  };
  let profiler: Promise<CpuProfiler> | undefined;
  let profiles = 0;
  process.on('SIGUSR2', () => {
    if (profiler === undefined) {
      profiler = startCpuProfile();
      return;
    }
    const running = profiler;
    profiler = undefined;
    profiles += 1;
    void running
      .then((p) => p.stop(dir, `kiln-serve-${profiles}`, TOP_FUNCTIONS))
      .then(publish)
      .catch((err: unknown) => publish({ error: String(err) }));
  });
}
