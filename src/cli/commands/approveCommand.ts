// `approve <id>`: accept the verified fix of a run that awaits approval.
import type { Command } from 'commander';
import { approveUpdate } from '../../temporal/definitions.js';
import { answerApproval, withSession } from '../commandSupport.js';

export function approveCommand(program: Command): void {
  program
    .command('approve')
    .description('approve the verified fix of a run that awaits approval (started with --approve)')
    .argument('<workflow-id>')
    .action(async (workflowId: string) =>
      withSession(async (session) => {
        await answerApproval(session, workflowId, () =>
          session.client.workflow.getHandle(workflowId).executeUpdate(approveUpdate),
        );
        console.log(`Approved: ${workflowId} ends as fixed.`);
      }),
    );
}
