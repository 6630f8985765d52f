// The environment a run's sandbox uses: what the environment step reports to the workflow,
// and how it reads in the live output and the report.

export interface PreparedEnvironment {
  /** The image the sandbox container runs. */
  image: string;
  /** Variables the sandbox container needs to find what was installed (PATH, VIRTUAL_ENV). */
  containerEnv: string[];
  /** Folders of /workspace where each sandbox gets a writable copy of the image's installed tree (node_modules). */
  nodeModules?: string[];
  /** Folders outside /workspace where each sandbox gets a writable copy of the image's (Rust's warm target folder). */
  writableCopies?: string[];
  kind: 'python' | 'node' | 'go' | 'rust' | 'cpp' | 'java' | 'custom' | 'image' | 'dockerfile';
  /** "python · pip install -r requirements.txt" */
  description: string;
  /** True when an image built earlier was used as it was. */
  reused: boolean;
  /** Time the build took (0 when reused). */
  buildMs: number;
  /** How many packages were installed, when the installer says. */
  packages: number | null;
  /** The toolchain chosen and why: "node 20.19.5 (from .nvmrc)", "pnpm 9.15.0 (from packageManager)". */
  toolchain?: string[];
  /** Dependencies' install scripts that failed or were skipped: the environment went on without what they make. */
  installScripts?: InstallScriptProblem[];
}

export interface InstallScriptProblem {
  /** name@version */
  package: string;
  /** Opted out: run with a downloader's opt-out set; not allowed: left out by the manager, as the project asks (pnpm's onlyBuiltDependencies). */
  outcome: 'failed' | 'timed out' | 'opted out' | 'not allowed';
  /** "exit 1", "ran with PUPPETEER_SKIP_DOWNLOAD=true ...". */
  detail: string;
  lastLines: string[];
}

/**
 * "environment: built in 41 s (python, 23 packages)", "environment: reused (node, 80 packages) · node 20.19.5
 * (from .nvmrc)", and a line for each install script that failed or was skipped (with `lastLines`, that
 * many of its last lines below it: the report's detail).
 */
export function describeEnvironment(
  environment: PreparedEnvironment | null | undefined,
  options: { lastLines?: number } = {},
): string {
  if (!environment) return 'environment: the sandbox image as it is (no dependencies declared)';
  const what = [environment.kind, ...(environment.packages === null ? [] : [`${environment.packages} packages`])].join(
    ', ',
  );
  if (environment.kind === 'image') return `environment: image ${environment.image}`;
  const toolchain = environment.toolchain?.length ? ` · ${environment.toolchain.join(', ')}` : '';
  const detail = (problem: InstallScriptProblem) =>
    options.lastLines
      ? problem.lastLines
          .slice(-options.lastLines)
          .map((line) => `\n    │ ${line}`)
          .join('')
      : '';
  const scripts = (environment.installScripts ?? []).map(
    (problem) =>
      `\n  install script of ${problem.package} ${problem.outcome} (${problem.detail})` +
      (problem.outcome === 'opted out' || problem.outcome === 'not allowed'
        ? ''
        : `; the environment goes on without it${lastLine(problem)}${detail(problem)}`),
  );
  if (environment.reused) return `environment: reused (${what})${toolchain}${scripts.join('')}`;
  return `environment: built in ${Math.round(environment.buildMs / 1000)} s (${what})${toolchain}${scripts.join('')}`;
}

/** The line that says what went wrong: the last that reads like an error, else the last. */
function lastLine(problem: InstallScriptProblem): string {
  const lines = problem.lastLines.filter((each) => each.trim());
  const errors = lines.filter((each) => /error|fail|denied|refused|not found|ENOTFOUND|EAI_AGAIN|ECONN/i.test(each));
  const line = errors.at(-1) ?? lines.at(-1);
  return line ? `: ${line.trim()}` : '';
}

/** What the sandbox container needs of the environment. */
export function environmentForSandbox(
  environment: PreparedEnvironment | null | undefined,
): { image: string; containerEnv: string[]; nodeModules?: string[]; writableCopies?: string[] } | undefined {
  if (!environment) return undefined;
  const { image, containerEnv, nodeModules, writableCopies } = environment;
  return {
    image,
    containerEnv,
    ...(nodeModules?.length ? { nodeModules } : {}),
    ...(writableCopies?.length ? { writableCopies } : {}),
  };
}

/** The failure type of an environment that could not be made: the run ends with status environment_error. */
export const environmentFailure = 'EnvironmentError';
