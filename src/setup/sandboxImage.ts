// The sandbox image: built offline from deploy/sandbox-image (debootstrap a minimal Debian, then
// `docker import`), and rebuilt only when that recipe changes (its hash is the image's label).
// `setup --python 3.13` builds the same recipe from another Debian suite, for repositories whose
// requires-python excludes the sandbox's Python (src/sandbox/environment/python/pythonVersions.ts).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import type { Config } from '../config.js';
import { projectRoot } from '../locations.js';
import { debianPythons, pythonVariantImage } from '../sandbox/environment/python/pythonVersions.js';
import { aptInstall, hasCommand } from './dockerEngine.js';
import { errorText, isRoot, setupAsRootCommand, setupCommand, type CheckResult } from './parts.js';
import { SetupError, type Progress } from './setupProgress.js';

const run = promisify(execFile);
const step = 'sandbox image';
const recipeFolder = join(projectRoot, 'deploy', 'sandbox-image');
export const recipeLabel = 'durable-debugger.recipe';

/** The recipe's hash: the build script, the package list and the Debian suite. */
export function sandboxRecipe(suite = 'bookworm'): string {
  const hash = createHash('sha256');
  for (const file of ['build-rootfs.sh', 'packages.txt']) hash.update(readFileSync(join(recipeFolder, file)));
  hash.update(`${suite}\n`);
  return hash.digest('hex').slice(0, 16);
}

/** The sandbox image with Python `minor` (3.13, 3.11, 3.9): its tag and the Debian suite that has it. */
export function pythonImageTarget(config: Config, minor: string): SandboxImageTarget {
  const python = debianPythons.find((candidate) => candidate.minor === minor);
  if (!python)
    throw new SetupError(
      step,
      `--python ${minor}: the Debian mirror has Python ${debianPythons.map((each) => `${each.minor} (${each.suite})`).join(', ')}`,
      'For another Python, bring an image (docs/environments.md, "Python versions").',
    );
  return { image: pythonVariantImage(config.sandboxImage, minor), suite: python.suite };
}

export interface SandboxImageTarget {
  image: string;
  suite: string;
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

export async function ensureSandboxImage(
  config: Config,
  docker: Docker,
  progress: Progress,
  { image, suite }: SandboxImageTarget = { image: config.sandboxImage, suite: 'bookworm' },
): Promise<void> {
  const recipe = sandboxRecipe(suite);
  const state = await imageState(docker, image);
  if (state.present && state.recipe === recipe) return progress.done(step, `${image} is up to date`);
  if (!isRoot()) {
    // debootstrap needs root; an image from an older recipe still works meanwhile.
    const problem = state.present ? `${image} is from an older recipe` : `${image} is missing`;
    if (state.present) return progress.done(step, `${problem}; to rebuild it, run: ${setupAsRootCommand()}`);
    throw new SetupError(step, `${problem} and building it needs root (debootstrap)`, `Run: ${setupAsRootCommand()}`);
  }
  if (!(await hasCommand('debootstrap'))) await aptInstall(step, ['debootstrap']);
  progress.start(step, `building ${image} from Debian ${suite} with debootstrap (about a minute)`);
  await mkdir(config.home, { recursive: true });
  try {
    await run('bash', [join(recipeFolder, 'build-rootfs.sh'), image, recipe, suite], {
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
