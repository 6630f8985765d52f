// `apply <id>`: commit a fixed run's patch on a new branch of its repository.
import type { Command } from 'commander';
import type { DebugReport } from '../../agent/report.js';
import { applyFix, withSession } from '../commandSupport.js';
import { applyRefusal } from '../fixBranch.js';
import { UsageError } from '../commandSupport.js';
import { refuseUnlessFolder } from '../runOptions.js';

export function applyCommand(program: Command): void {
  program
    .command('apply')
    .description("commit a fixed run's patch on a new branch durable-debugger/<id> of its git repository")
    .argument('<workflow-id>')
    .option('--repo <path>', "the repository to apply it to (default: the run's repository)")
    .option('--json', 'print JSON')
    .action(async (workflowId: string, options: { repo?: string; json?: boolean }) => {
      // A repository named here is checked before anything connects.
      if (options.repo) {
        refuseUnlessFolder(options.repo);
        const refusal = applyRefusal(options.repo, workflowId);
        if (refusal) throw new UsageError(`Not applied, nothing changed. ${refusal}`);
      }
      return withSession(async (session) => {
        const report = (await session.client.workflow.getHandle(workflowId).result()) as DebugReport;
        await applyFix(session.config, report, options.repo ?? report.repository, Boolean(options.json));
      });
    });
}
