// `start <repo>`: start a run, print its workflow id and return.
import type { Command } from 'commander';
import { modelTaskQueueFor, waitingForModelWorker } from '../../agent/modelEndpoint.js';
import { startDebugRun } from '../../client.js';
import { withSession } from '../commandSupport.js';
import { inputFrom, noteConservativePrice, runOptions, type RunOptions } from '../runOptions.js';
import { endpointOfSession, hasWorker, log } from '../session.js';

export function startCommand(program: Command): void {
  runOptions(
    program
      .command('start')
      .description('start a run, print its workflow id and return')
      .argument('<repo>', 'repository with failing tests'),
  ).action(async (repo: string, options: RunOptions) =>
    withSession(async (session) => {
      const input = { ...inputFrom(repo, options, session.config.runDefaults), ...(await endpointOfSession(session)) };
      noteConservativePrice(input, session);
      const handle = await startDebugRun(session.client, {
        input,
        taskQueue: session.config.taskQueue,
        workflowId: options.id,
      });
      console.log(handle.workflowId);
      if (!(await hasWorker(session, session.config.taskQueue))) {
        log('No worker serves the task queue yet: the run starts when one does (`durable-debugger worker` or `dev`).');
      } else if (
        !(await hasWorker(session, modelTaskQueueFor(session.config.taskQueue, input.modelEndpoint), 'activities'))
      ) {
        log(
          `No worker answers its model calls yet: ${waitingForModelWorker(input.modelEndpoint, session.config.taskQueue)}.`,
        );
      }
    }),
  );
}
