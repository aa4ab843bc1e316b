/**
 * `pipelines.<name>.settings` of `kiln.yaml`: each registered pipeline with a `parseSettings` gets
 * its settings checked and normalised here, at start-up, so a bad value fails the process with the
 * file and line instead of failing jobs later.
 */
import { ValidationError, type ConfigIssue } from '../core/errors.ts';
import type { JsonValue } from '../core/model.ts';
import type { PipelineDefinition } from '../core/pipeline/define-pipeline.ts';
import type { ConfigFile } from './config-file.ts';
import { isPlainObject } from './validate.ts';

/** Result of {@link resolvePipelineSettings}. */
export interface PipelineSettingsResult {
  settings: Record<string, JsonValue>;
  issues: ConfigIssue[];
}

/** The raw `settings` value of pipeline `name` in the file, or undefined. */
function rawSettings(file: ConfigFile | null, name: string): unknown {
  const section = file?.value['pipelines'];
  if (!isPlainObject(section)) return undefined;
  const entry = section[name];
  return isPlainObject(entry) ? entry['settings'] : undefined;
}

/** Parses every pipeline's settings (defaults for pipelines the file does not mention). */
export function resolvePipelineSettings(file: ConfigFile | null, definitions: readonly PipelineDefinition[]): PipelineSettingsResult {
  const settings: Record<string, JsonValue> = {};
  const issues: ConfigIssue[] = [];
  for (const definition of definitions) {
    const raw = rawSettings(file, definition.name);
    const path = ['pipelines', definition.name, 'settings'];
    const at = { source: file?.source ?? 'file', path: path.join('.'), ...file?.positionOf(path, 'key') };
    if (!definition.parseSettings) {
      if (raw !== undefined) issues.push({ ...at, message: `pipeline ${definition.name} takes no settings` });
      continue;
    }
    try {
      settings[definition.name] = definition.parseSettings(raw);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      issues.push({ ...at, message: err.message });
    }
  }
  return { settings, issues };
}
