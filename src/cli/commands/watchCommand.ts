// `watch <id>`: follow a run live (reattaches to a run started elsewhere).
import type { Command } from 'commander';
import { exitCodeFor, follow, withSession } from '../commandSupport.js';

export function watchCommand(program: Command): void {
  program
    .command('watch')
    .description('follow a run live (reattaches to a run started elsewhere)')
    .argument('<workflow-id>')
    .option('--json', 'print JSON lines')
    .action(async (workflowId: string, options: { json?: boolean }) =>
      withSession(async (session) => {
        process.exitCode = exitCodeFor(await follow(session, workflowId, Boolean(options.json)));
      }),
    );
}
