// The environment a run's sandbox uses: what the environment step reports to the workflow,
// and how it reads in the live output and the report.

export interface PreparedEnvironment {
  /** The image the sandbox container runs. */
  image: string;
  /** Variables the sandbox container needs to find what was installed (PATH, VIRTUAL_ENV). */
  containerEnv: string[];
  kind: 'python' | 'node' | 'custom' | 'image' | 'dockerfile';
  /** "python · pip install -r requirements.txt" */
  description: string;
  /** True when an image built earlier was used as it was. */
  reused: boolean;
  /** Time the build took (0 when reused). */
  buildMs: number;
  /** How many packages were installed, when the installer says. */
  packages: number | null;
}

/** "environment: built in 41 s (python, 23 packages)", "environment: reused (python, 23 packages)". */
export function describeEnvironment(environment: PreparedEnvironment | null | undefined): string {
  if (!environment) return 'environment: the sandbox image as it is (no dependencies declared)';
  const what = [environment.kind, ...(environment.packages === null ? [] : [`${environment.packages} packages`])].join(
    ', ',
  );
  if (environment.kind === 'image') return `environment: image ${environment.image}`;
  if (environment.reused) return `environment: reused (${what})`;
  return `environment: built in ${Math.round(environment.buildMs / 1000)} s (${what})`;
}

/** What the sandbox container needs of the environment. */
export function environmentForSandbox(
  environment: PreparedEnvironment | null | undefined,
): { image: string; containerEnv: string[] } | undefined {
  return environment ? { image: environment.image, containerEnv: environment.containerEnv } : undefined;
}

/** The failure type of an environment that could not be made: the run ends with status environment_error. */
export const environmentFailure = 'EnvironmentError';
