// `reap`: remove sandbox containers and workspaces whose run has ended.
import type { Command } from 'commander';
import { withSession } from '../commandSupport.js';

export function reapCommand(program: Command): void {
  program
    .command('reap')
    .description(
      'remove sandbox containers, workspaces and places in the sandbox queue whose run has ended (or is unknown)',
    )
    .action(async () =>
      withSession(async (session) => {
        const { reapOrphans } = await import('../../reaper.js');
        const { connectDocker } = await import('../../sandbox/container/container.js');
        const reaped = await reapOrphans({
          docker: connectDocker(),
          client: session.client,
          scope: `${session.server.address}/${session.config.namespace}`,
          workspaceRoot: session.config.workspaceRoot,
          taskQueue: session.config.taskQueue,
        });
        for (const item of reaped) console.log(`removed ${item.kind} ${item.id} (${item.reason})`);
        if (reaped.length === 0) console.log('Nothing to reap.');
      }),
    );
}
