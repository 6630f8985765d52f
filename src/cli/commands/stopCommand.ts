// `stop <id>`: ask a run to stop gracefully (it reports and cleans up).
import type { Command } from 'commander';
import { stopSignal } from '../../temporal/definitions.js';
import { withSession } from '../commandSupport.js';

export function stopCommand(program: Command): void {
  program
    .command('stop')
    .description('ask a run to stop gracefully (it reports and cleans up)')
    .argument('<workflow-id>')
    .argument('[reason...]')
    .action(async (workflowId: string, reason: string[]) =>
      withSession(async (session) => {
        await session.client.workflow
          .getHandle(workflowId)
          .signal(stopSignal, reason.join(' ') || 'stopped by the user');
        console.log('Stop requested.');
      }),
    );
}
