// The user's defaults: $XDG_CONFIG_HOME/durable-debugger/config.json (see docs/install.md), e.g.
//   { "model": "claude-opus-4-1", "budgets": { "maxCostUsd": 5 }, "sandbox": { "memoryMb": 2048 },
//     "settings": { "TEMPORAL_ADDRESS": "temporal.internal:7233" } }
// model, budgets and sandbox are the defaults of the runs this user starts (a command's options
// win); settings holds any environment setting by its name (the environment wins).
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { budgetsSchema, sandboxLimitsSchema, type Budgets, type SandboxLimits } from './agent/input.js';

export interface ConfigFile {
  path: string;
  /** False when there is no file (every field is then empty). */
  exists: boolean;
  model?: string;
  budgets: Partial<Budgets>;
  sandbox: Partial<SandboxLimits>;
  /** Environment settings by name, as strings (the environment schema coerces them). */
  settings: Record<string, string>;
}

export class ConfigFileError extends Error {}

const fileSchema = z.strictObject({
  model: z.string().min(1).optional(),
  budgets: z.record(z.string(), z.unknown()).optional(),
  sandbox: z.record(z.string(), z.unknown()).optional(),
  settings: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

/** Reads the file; a missing file is no defaults, a bad one an error that names the file and the field. */
export function readConfigFile(path: string, knownSettings: readonly string[]): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return { path, exists: false, budgets: {}, sandbox: {}, settings: {} };
    throw new ConfigFileError(`Cannot read ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigFileError(`${path} is not valid JSON (${(error as Error).message}); fix it or delete it.`);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) throw new ConfigFileError(`${path}: ${describeIssues(parsed.error)}`);
  const file = parsed.data;
  const unknown = Object.keys(file.settings ?? {}).filter((name) => !knownSettings.includes(name));
  if (unknown.length > 0) {
    throw new ConfigFileError(
      `${path}: settings.${unknown[0]} is not a setting; settings are environment settings by name (${knownSettings.join(', ')})`,
    );
  }
  return {
    path,
    exists: true,
    ...(file.model ? { model: file.model } : {}),
    budgets: onlyGiven(budgetsSchema, file.budgets, path, 'budgets') as Partial<Budgets>,
    sandbox: onlyGiven(sandboxLimitsSchema, file.sandbox, path, 'sandbox') as Partial<SandboxLimits>,
    settings: Object.fromEntries(Object.entries(file.settings ?? {}).map(([name, value]) => [name, String(value)])),
  };
}

/** Validates a section with the run input's own schema, keeping only the fields the file gives (not the schema's defaults). */
function onlyGiven(
  schema: z.ZodObject,
  given: Record<string, unknown> | undefined,
  path: string,
  section: string,
): Record<string, unknown> {
  if (!given) return {};
  const parsed = schema.safeParse(given);
  if (!parsed.success) throw new ConfigFileError(`${path}: ${describeIssues(parsed.error, section)}`);
  return Object.fromEntries(Object.keys(given).map((key) => [key, (parsed.data as Record<string, unknown>)[key]]));
}

function describeIssues(error: z.ZodError, section?: string): string {
  return error.issues
    .map((issue) => {
      const field = [section, ...issue.path].filter((part) => part !== undefined).join('.') || 'the file';
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}
