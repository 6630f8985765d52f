// `reject <id> "feedback"`: send a verified fix back; the model reads the feedback and goes on.
import type { Command } from 'commander';
import { rejectUpdate } from '../../temporal/definitions.js';
import { answerApproval, UsageError, withSession } from '../commandSupport.js';

export function rejectCommand(program: Command): void {
  program
    .command('reject')
    .description('reject the verified fix of a run that awaits approval: the model reads your feedback and goes on')
    .argument('<workflow-id>')
    .argument('<feedback...>', "what to change, in words (the model reads it as the reviewer's)")
    .action(async (workflowId: string, words: string[]) =>
      withSession(async (session) => {
        const feedback = words.join(' ').trim();
        if (!feedback) throw new UsageError('Say what to change: reject <id> "feedback".');
        await answerApproval(session, workflowId, () =>
          session.client.workflow.getHandle(workflowId).executeUpdate(rejectUpdate, { args: [feedback] }),
        );
        console.log(`Rejected: ${workflowId} goes on with your feedback.`);
      }),
    );
}
