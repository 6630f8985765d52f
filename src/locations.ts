// Where durable-debugger keeps its files: the XDG base directories, as installed command-line tools do.
//   data    $XDG_DATA_HOME/durable-debugger (~/.local/share/…): the server's database, the content
//           store, the runs' patches, workspaces (DURABLE_DEBUGGER_HOME overrides)
//   cache   $XDG_CACHE_HOME/durable-debugger (~/.cache/…): tools and toolchains, fetched again when
//           deleted (DURABLE_DEBUGGER_TOOLS, DURABLE_DEBUGGER_TOOLCHAIN override)
//   config  $XDG_CONFIG_HOME/durable-debugger/config.json (~/.config/…): the user's defaults
//           (DURABLE_DEBUGGER_CONFIG overrides)
// Nothing is written beside the code: an installed package's folder may belong to root.
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's folder (the checkout, or the installed package): its code, fixtures and recipes, never data. */
export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const appFolder = 'durable-debugger';

/** An XDG base directory: the variable when it holds an absolute path (the spec ignores others), else its default under the home folder. */
function xdgBase(environment: NodeJS.ProcessEnv, variable: string, underHome: string[]): string {
  const value = environment[variable];
  if (value && isAbsolute(value)) return value;
  return join(environment.HOME || homedir(), ...underHome);
}

export function dataHomeFor(environment: NodeJS.ProcessEnv): string {
  return resolve(
    environment.DURABLE_DEBUGGER_HOME || join(xdgBase(environment, 'XDG_DATA_HOME', ['.local', 'share']), appFolder),
  );
}

export function cacheHomeFor(environment: NodeJS.ProcessEnv): string {
  return join(xdgBase(environment, 'XDG_CACHE_HOME', ['.cache']), appFolder);
}

/** Where setup installs tools (the Temporal CLI): one place per user, whatever the data home. */
export function toolsRootFor(environment: NodeJS.ProcessEnv = process.env): string {
  return resolve(environment.DURABLE_DEBUGGER_TOOLS || join(cacheHomeFor(environment), 'tools'));
}

export function configFileFor(environment: NodeJS.ProcessEnv): string {
  return resolve(
    environment.DURABLE_DEBUGGER_CONFIG ||
      join(xdgBase(environment, 'XDG_CONFIG_HOME', ['.config']), appFolder, 'config.json'),
  );
}

/**
 * Where the checkout's commands kept everything before they followed XDG: its own `.durable-debugger`.
 * `setup` moves the runs found there to the data home (src/setup/dataMigration.ts).
 */
export const checkoutDataHome = join(projectRoot, '.durable-debugger');
