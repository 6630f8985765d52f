// The environment variables every program in the sandbox gets: what a CI runner leaves a job, and
// nothing that changes what a program does (no NO_COLOR, FORCE_COLOR, TERM=dumb, PYTHONUNBUFFERED,
// PYTHONDONTWRITEBYTECODE): a library whose tests assert colours through its colour package's own
// detection passes here as in its CI. What the model sees is cleaned on our side instead (escape
// codes stripped, output capped). docs/environments.md lists this set; an integration test
// (sandboxEnv.test.ts) compares it with `env` as the tests see it.
import { environmentPaths } from '../environment/planTypes.js';

/** The search path of the base images; an environment image's own PATH replaces it. */
export const defaultPath = '/usr/local/bin:/usr/bin:/bin';

export interface DocumentedVariable {
  name: string;
  value: string;
  reason: string;
}

/** Set in every sandbox and probe container, each for the sandbox's own need. */
export const sandboxVariables: readonly DocumentedVariable[] = [
  {
    name: 'PATH',
    value: defaultPath,
    reason: "where the tools are: the base image's folders, or the environment image's own PATH (a toolchain, a venv)",
  },
  {
    name: 'HOME',
    value: '/tmp',
    reason: 'the root filesystem is read-only and the sandbox runs as nobody: HOME is the writable tmpfs',
  },
  { name: 'LANG', value: 'C.UTF-8', reason: 'the base images name no locale: programs read and print UTF-8, as on CI' },
  { name: 'CI', value: 'true', reason: 'what every CI service sets: runners neither watch files nor prompt' },
];

/** Set by an environment image for what it installed (passed on as its containerEnv). */
export const environmentImageVariables: readonly DocumentedVariable[] = [
  {
    name: 'VIRTUAL_ENV',
    value: environmentPaths.venv,
    reason: 'a Python environment: the venv the dependencies are in, as an activated venv leaves it',
  },
  {
    name: 'NPM_CONFIG_OFFLINE',
    value: 'true',
    reason: 'a Node environment: the sandbox has no network, so npm and npx answer from what is installed at once',
  },
  {
    name: 'GOPROXY',
    value: 'off',
    reason:
      'a Go environment: the sandbox has no network, so the modules come from the image (go mod download at build time)',
  },
  {
    name: 'GOTOOLCHAIN',
    value: 'local',
    reason: 'a Go environment: the image has the Go the module asks for; go never tries to fetch another',
  },
  {
    name: 'GOMODCACHE',
    value: '/opt/go-mod',
    reason: 'a Go environment: the modules go mod download put in the image (read-only)',
  },
  {
    name: 'GOCACHE',
    value: '/tmp/go-build',
    reason: "a Go environment: a writable copy of the image's warm build cache, made by the first go command",
  },
  {
    name: 'GOPATH',
    value: '/tmp/go',
    reason: 'a Go environment: go install and friends write under the writable tmpfs',
  },
  {
    name: 'CARGO_HOME',
    value: '/opt/cargo',
    reason:
      "a Rust environment: cargo's home in the image, whose config points at the crates vendored there (read-only)",
  },
  {
    name: 'CARGO_TARGET_DIR',
    value: '/opt/rust-target',
    reason: "a Rust environment: each sandbox's writable copy of the image's target folder, the dependencies compiled",
  },
  {
    name: 'CARGO_NET_OFFLINE',
    value: 'true',
    reason: 'a Rust environment: the sandbox has no network, so cargo answers from the vendored crates at once',
  },
  {
    name: 'CACHE_DIR',
    value: '/tmp/durable-debugger-build-cache',
    reason: 'a repository with build steps: find-cache-dir caches go where each test run empties them',
  },
];

function assignments(variables: readonly DocumentedVariable[]): string[] {
  return variables.map((variable) => `${variable.name}=${variable.value}`);
}

/**
 * Whether a variable is the sandbox's to set, never a repository's (tox's setenv): the documented
 * ones above, the loader's and the C library's, and the shell's start-up ones, which would change
 * how every command there runs, ours included.
 */
export function keptBySandbox(name: string): boolean {
  return (
    [...sandboxVariables, ...environmentImageVariables].some((variable) => variable.name === name) ||
    /^(DURABLE_DEBUGGER\w*|LD_\w*|GCONV_PATH|LOCPATH|GLIBC_TUNABLES|BASH_ENV|ENV|SHELLOPTS|BASHOPTS|IFS|PS4)$/.test(
      name,
    )
  );
}

/** NAME=value lines of an environment image's variables (the node and python plans). */
export function environmentImageEnv(...names: string[]): string[] {
  return assignments(environmentImageVariables.filter((variable) => names.includes(variable.name)));
}

/** A sandbox container's Env: the documented set, with what the environment image adds (its PATH wins). */
export function sandboxContainerEnv(imageEnv: readonly string[] = []): string[] {
  const named = (line: string) => line.slice(0, line.indexOf('='));
  const fromImage = new Set(imageEnv.map(named));
  return [...assignments(sandboxVariables).filter((line) => !fromImage.has(named(line))), ...imageEnv];
}

/**
 * An environment build's Env (root installs dependencies): only where its tools are, a home, a
 * locale. The host's package settings come through the build's shell (buildSettings.ts), never Env.
 */
export const buildContainerEnv = ['HOME=/root', 'LANG=C.UTF-8', `PATH=${defaultPath}`];
