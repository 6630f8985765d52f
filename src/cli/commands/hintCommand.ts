// `hint <id> <text>`: tell a running agent something; it reads it at its next iteration.
import type { Command } from 'commander';
import { hintSignal } from '../../temporal/definitions.js';
import { withSession } from '../commandSupport.js';

export function hintCommand(program: Command): void {
  program
    .command('hint')
    .description('tell a running agent something; it reads it at its next iteration')
    .argument('<workflow-id>')
    .argument('<text...>')
    .action(async (workflowId: string, words: string[]) =>
      withSession(async (session) => {
        await session.client.workflow.getHandle(workflowId).signal(hintSignal, words.join(' '));
        console.log('Hint sent.');
      }),
    );
}
