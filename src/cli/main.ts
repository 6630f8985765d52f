#!/usr/bin/env node
// The durable-debugger command: the program and its commands, one file each under commands/.
// Arguments are read first and only the command that runs is loaded (issue 36): `--version`,
// `--help`, `list` or `status` never load the worker, its native core, the model SDKs or Docker's
// client. Each command's module loads what its action needs when the action runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import pc from 'picocolors';
import { projectRoot } from '../locations.js';
import type { CommandRegistration } from './commandSupport.js';
import { privateUmask } from '../setup/privateData.js';

// Everything this process and its children create (the data home, temporal.db, the store's blobs,
// patches, workspaces, sockets) is its user's alone. Workspace files still reach the sandbox:
// a root worker gives them to the sandbox user, and a worker that is not root is that user.
process.umask(privateUmask);

/** Each command's module, by the command's name, in the order `--help` lists them. */
const commandModules: Record<string, () => Promise<CommandRegistration>> = {
  run: async () => (await import('./commands/runCommand.js')).runCommand,
  start: async () => (await import('./commands/startCommand.js')).startCommand,
  watch: async () => (await import('./commands/watchCommand.js')).watchCommand,
  status: async () => (await import('./commands/statusCommand.js')).statusCommand,
  approve: async () => (await import('./commands/approveCommand.js')).approveCommand,
  reject: async () => (await import('./commands/rejectCommand.js')).rejectCommand,
  result: async () => (await import('./commands/resultCommand.js')).resultCommand,
  apply: async () => (await import('./commands/applyCommand.js')).applyCommand,
  list: async () => (await import('./commands/listCommand.js')).listCommand,
  hint: async () => (await import('./commands/hintCommand.js')).hintCommand,
  stop: async () => (await import('./commands/stopCommand.js')).stopCommand,
  resume: async () => (await import('./commands/resumeCommand.js')).resumeCommand,
  'raise-budget': async () => (await import('./commands/raiseBudgetCommand.js')).raiseBudgetCommand,
  reap: async () => (await import('./commands/reapCommand.js')).reapCommand,
  hosts: async () => (await import('./commands/hostsCommand.js')).hostsCommand,
  env: async () => (await import('./commands/envCommand.js')).envCommand,
  setup: async () => (await import('./commands/setupCommand.js')).setupCommand,
  doctor: async () => (await import('./commands/doctorCommand.js')).doctorCommand,
  worker: async () => (await import('./commands/workerCommand.js')).workerCommand,
  mcp: async () => (await import('./commands/mcpCommand.js')).mcpCommand,
  dev: async () => (await import('./commands/devCommand.js')).devCommand,
  demo: async () => (await import('./commands/demoCommand.js')).demoCommand,
};

/**
 * The command the arguments name: the first that is not an option (the program's own options,
 * --version, --help and --no-color, take no value). Undefined for none, or a name we do not know.
 */
function commandNamed(args: readonly string[]): string | undefined {
  const name = args.find((arg) => !arg.startsWith('-'));
  return name !== undefined && Object.hasOwn(commandModules, name) ? name : undefined;
}

/**
 * The commands to register: only the one named, else (the program's help, `help <command>`, no
 * command or an unknown one, which commander answers with the list or a suggestion) all of them.
 */
async function registrations(args: readonly string[]): Promise<CommandRegistration[]> {
  const named = commandNamed(args);
  if (named) return [await (commandModules[named] as () => Promise<CommandRegistration>)()];
  // `--version` alone needs no command at all.
  if (args.length > 0 && args.every((arg) => arg === '--version' || arg === '-V' || arg === '--no-color')) return [];
  return Promise.all(Object.values(commandModules).map((load) => load()));
}

const program = new Command()
  .name('durable-debugger')
  .description(
    'A self-debugging agent that finds and fixes the bug behind failing tests, made durable with Temporal.\n' +
      'Without TEMPORAL_ADDRESS, commands use an embedded Temporal dev server (Web UI on http://localhost:8233).',
  )
  .showHelpAfterError()
  .version(JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')).version as string);

// `--provider` stands for DURABLE_DEBUGGER_PROVIDER, so that every part of the command reads one setting.
program.hook('preAction', (_program, action) => {
  const provider = (action.opts() as { provider?: string }).provider;
  if (provider) process.env.DURABLE_DEBUGGER_PROVIDER = provider;
});

program.addOption(new Option('--no-color', 'no colours (also NO_COLOR=1)'));

registrations(process.argv.slice(2))
  .then((commands) => {
    for (const register of commands) register(program);
    return program.parseAsync();
  })
  .catch((error: unknown) => {
    console.error(pc.red(`error: ${error instanceof Error ? error.message : String(error)}`));
    process.exitCode = 2;
  });
