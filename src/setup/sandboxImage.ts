// The sandbox image: built offline from deploy/sandbox-image (debootstrap a minimal Debian, then
// `docker import`), and rebuilt only when that recipe changes (its hash is the image's label).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import type { Config } from '../config.js';
import { projectRoot } from '../locations.js';
import { aptInstall, hasCommand } from './dockerEngine.js';
import { errorText, isRoot, setupAsRootCommand, setupCommand, type CheckResult } from './parts.js';
import { SetupError, type Progress } from './setupProgress.js';

const run = promisify(execFile);
const step = 'sandbox image';
const recipeFolder = join(projectRoot, 'deploy', 'sandbox-image');
export const recipeLabel = 'durable-debugger.recipe';

/** The recipe's hash: the build script and the package list. */
export function sandboxRecipe(): string {
  const hash = createHash('sha256');
  for (const file of ['build-rootfs.sh', 'packages.txt']) hash.update(readFileSync(join(recipeFolder, file)));
  return hash.digest('hex').slice(0, 16);
}

type ImageState = { present: false } | { present: true; recipe: string | undefined };

async function imageState(docker: Docker, image: string): Promise<ImageState> {
  try {
    const info = await docker.getImage(image).inspect();
    return { present: true, recipe: info.Config?.Labels?.[recipeLabel] };
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return { present: false };
    throw error;
  }
}

export async function checkSandboxImage(docker: Docker, image: string): Promise<CheckResult> {
  const fix = isRoot() ? setupCommand : setupAsRootCommand();
  try {
    const state = await imageState(docker, image);
    if (!state.present) return { name: step, status: 'fail', detail: `${image} is missing`, fix };
    if (state.recipe !== sandboxRecipe())
      return {
        name: step,
        status: 'warn',
        detail: `${image} was built from another recipe (${state.recipe ?? 'unlabelled'}; this version's is ${sandboxRecipe()})`,
        fix,
      };
    return { name: step, status: 'ok', detail: `${image} (recipe ${state.recipe})` };
  } catch (error) {
    return {
      name: step,
      status: 'fail',
      detail: `cannot inspect ${image}: ${errorText(error)}`,
      fix: 'fix the Docker engine first',
    };
  }
}

export async function ensureSandboxImage(config: Config, docker: Docker, progress: Progress): Promise<void> {
  const image = config.sandboxImage;
  const recipe = sandboxRecipe();
  const state = await imageState(docker, image);
  if (state.present && state.recipe === recipe) return progress.done(step, `${image} is up to date`);
  if (!isRoot()) {
    // debootstrap needs root; an image from an older recipe still works meanwhile.
    const problem = state.present ? `${image} is from an older recipe` : `${image} is missing`;
    if (state.present) return progress.done(step, `${problem}; to rebuild it, run: ${setupAsRootCommand()}`);
    throw new SetupError(step, `${problem} and building it needs root (debootstrap)`, `Run: ${setupAsRootCommand()}`);
  }
  if (!(await hasCommand('debootstrap'))) await aptInstall(step, ['debootstrap']);
  progress.start(step, `building ${image} with debootstrap (about a minute)`);
  await mkdir(config.home, { recursive: true });
  try {
    await run('bash', [join(recipeFolder, 'build-rootfs.sh'), image, recipe], {
      env: { ...process.env, DURABLE_DEBUGGER_HOME: config.home },
      timeout: 1_800_000,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const said = (error as { stderr?: string }).stderr?.trim().split('\n').slice(-5).join('\n') || errorText(error);
    throw new SetupError(step, `the build failed:\n${said}\n`, `Its log is ${join(config.home, 'debootstrap.log')}.`);
  }
  progress.done(step, `${image} built (recipe ${recipe})`);
}
