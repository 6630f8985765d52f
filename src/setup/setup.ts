// `durable-debugger setup`: installs and starts what is missing, idempotently (a second run takes
// seconds), one line per step. The checkout's scripts/setup.sh runs this too, after `npm ci`.
import type Docker from 'dockerode';
import type { Config } from '../config.js';
import { migrateCheckoutData } from './dataMigration.js';
import { ensureDockerEngine } from './dockerEngine.js';
import { isRoot, setupCommand, userName } from './parts.js';
import type { Progress } from './setupProgress.js';
import { ensureSandboxImage, pythonImageTarget } from './sandboxImage.js';
import { installTemporalCli } from './temporalCli.js';

/** `pythons`: sandbox images with these Pythons too (`--python 3.13`). */
export async function runSetup(
  config: Config,
  docker: Docker,
  progress: Progress,
  pythons: string[] = [],
): Promise<void> {
  const pythonImages = pythons.map((minor) => pythonImageTarget(config, minor));
  // Under sudo only the machine's parts are set up: the user's own files stay the user's.
  const underSudo = isRoot() && Boolean(process.env.SUDO_UID);
  if (underSudo) {
    progress.done(
      'user files',
      `skipped under sudo: run \`${setupCommand}\` as ${userName()} for the Temporal CLI and the data home`,
    );
  } else {
    await migrateCheckoutData(config, progress);
    await installTemporalCli(config, progress);
  }
  await ensureDockerEngine(config, docker, progress);
  await ensureSandboxImage(config, docker, progress);
  for (const target of pythonImages) await ensureSandboxImage(config, docker, progress, target);
}
