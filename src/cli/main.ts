#!/usr/bin/env node
// The durable-debugger command: the program and its commands, one file each under commands/.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import pc from 'picocolors';
import { projectRoot } from '../config.js';
import { applyCommand } from './commands/applyCommand.js';
import { approveCommand } from './commands/approveCommand.js';
import { demoCommand } from './commands/demoCommand.js';
import { devCommand } from './commands/devCommand.js';
import { doctorCommand } from './commands/doctorCommand.js';
import { envCommand } from './commands/envCommand.js';
import { hintCommand } from './commands/hintCommand.js';
import { hostsCommand } from './commands/hostsCommand.js';
import { listCommand } from './commands/listCommand.js';
import { mcpCommand } from './commands/mcpCommand.js';
import { raiseBudgetCommand } from './commands/raiseBudgetCommand.js';
import { reapCommand } from './commands/reapCommand.js';
import { rejectCommand } from './commands/rejectCommand.js';
import { resultCommand } from './commands/resultCommand.js';
import { resumeCommand } from './commands/resumeCommand.js';
import { setupCommand } from './commands/setupCommand.js';
import { runCommand } from './commands/runCommand.js';
import { startCommand } from './commands/startCommand.js';
import { statusCommand } from './commands/statusCommand.js';
import { stopCommand } from './commands/stopCommand.js';
import { watchCommand } from './commands/watchCommand.js';
import { workerCommand } from './commands/workerCommand.js';
import type { CommandRegistration } from './commandSupport.js';
import { privateUmask } from '../setup/privateData.js';

// Everything this process and its children create (the data home, temporal.db, the store's blobs,
// patches, workspaces, sockets) is its user's alone. Workspace files still reach the sandbox:
// a root worker gives them to the sandbox user, and a worker that is not root is that user.
process.umask(privateUmask);

const program = new Command()
  .name('durable-debugger')
  .description(
    'A self-debugging agent that finds and fixes the bug behind failing tests, made durable with Temporal.\n' +
      'Without TEMPORAL_ADDRESS, commands use an embedded Temporal dev server (Web UI on http://localhost:8233).',
  )
  .showHelpAfterError()
  .version(JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')).version as string);

const commands: CommandRegistration[] = [
  runCommand,
  startCommand,
  watchCommand,
  statusCommand,
  approveCommand,
  rejectCommand,
  resultCommand,
  applyCommand,
  listCommand,
  hintCommand,
  stopCommand,
  resumeCommand,
  raiseBudgetCommand,
  reapCommand,
  hostsCommand,
  envCommand,
  setupCommand,
  doctorCommand,
  workerCommand,
  mcpCommand,
  devCommand,
  demoCommand,
];
for (const register of commands) register(program);
// `--provider` stands for DURABLE_DEBUGGER_PROVIDER, so that every part of the command reads one setting.
program.hook('preAction', (_program, action) => {
  const provider = (action.opts() as { provider?: string }).provider;
  if (provider) process.env.DURABLE_DEBUGGER_PROVIDER = provider;
});

program.addOption(new Option('--no-color', 'no colours (also NO_COLOR=1)'));

program.parseAsync().catch((error: unknown) => {
  console.error(pc.red(`error: ${error instanceof Error ? error.message : String(error)}`));
  process.exitCode = 2;
});
