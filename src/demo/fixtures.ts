// The fixture repositories under fixtures/: each a buggy repository with its tests, a
// fixture.json (what to expect) and a script.json (the scripted model responses).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DebugInputJson } from '../agent/input.js';
import type { RunStatus } from '../agent/report.js';
import { projectRoot } from '../config.js';
import { loadScript, type Script } from './script.js';

export interface FixtureMeta {
  description: string;
  language: string;
  expectedStatus: RunStatus;
  /** Tests that fail before the fix, by the runner's names. */
  failingBefore?: string[];
  /** Run options this fixture needs (a short command timeout, allowCommands, ...). */
  input?: Partial<DebugInputJson>;
  /** Tool calls the run must report as failed (is_error), by tool name in order; none when absent. */
  toolErrors?: string[];
  /** The environment the run must build or reuse for the repository's dependencies (none when absent). */
  environment?: 'python' | 'node' | 'rust' | 'cpp' | 'java';
  /** Regular expressions the run's environment line (toolchain, install scripts) must each match. */
  environmentMatches?: string[];
  /** Regular expressions the run's environment line must not match (an install script the build left out). */
  environmentDoesNotMatch?: string[];
  /** Regular expressions the run's stop detail must each match (an environment_error's words). */
  stopDetailMatches?: string[];
  /** Texts that must each appear in some tool result sent back to the model. */
  observations?: string[];
  /**
   * The fix, byte for byte: the files the patch changes, each with the text replaced and the
   * file's encoding (an iconv-lite name); the patched copy must hold exactly these bytes.
   */
  expectedChanges?: Array<{ path: string; encoding: string; before: string; after: string }>;
  /** Files the run changes that its patch must leave out (what its test runs leave behind); none when absent. */
  leftOutOfPatch?: string[];
  /** Run by the fixtures test as a person runs it: `durable-debugger run <fixture>` (the real CLI), not through a test worker. */
  throughCli?: boolean;
}

export interface Fixture {
  name: string;
  path: string;
  meta: FixtureMeta;
  script: Script;
  scriptPath: string;
}

export const fixturesRoot = join(projectRoot, 'fixtures');

export async function loadFixtures(root = fixturesRoot): Promise<Fixture[]> {
  const names = (await readdir(root, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  return Promise.all(names.sort().map((name) => loadFixture(name, root)));
}

export async function loadFixture(name: string, root = fixturesRoot): Promise<Fixture> {
  const path = join(root, name);
  const meta = JSON.parse(await readFile(join(path, 'fixture.json'), 'utf8')) as FixtureMeta;
  const scriptPath = join(path, 'script.json');
  return { name, path, meta, script: await loadScript(scriptPath), scriptPath };
}

/** Scripts keyed by repository name, as the fake API looks them up. */
export function scriptsByName(fixtures: Fixture[]): Record<string, Script> {
  return Object.fromEntries(fixtures.map((fixture) => [fixture.name, fixture.script]));
}

/** The run input for a fixture: its repository plus the options it asks for. */
export function fixtureInput(fixture: Fixture, extra: Partial<DebugInputJson> = {}): DebugInputJson {
  return { ...fixture.meta.input, ...extra, repo: fixture.path };
}
