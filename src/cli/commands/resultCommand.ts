// `result <id>`: a finished run's report, or its whole patch.
import type { Command } from 'commander';
import type { DebugReport } from '../../agent/report.js';
import { exitCodeFor, withSession } from '../commandSupport.js';
import { formatReport, wholePatch } from '../printReport.js';
import { printable } from '../terminalText.js';

export function resultCommand(program: Command): void {
  program
    .command('result')
    .description("a finished run's report (waits for a running one)")
    .argument('<workflow-id>')
    .option('--patch', 'print only the patch (for `git apply`)')
    .option('--json', 'print the report as JSON')
    .action(async (workflowId: string, options: { patch?: boolean; json?: boolean }) =>
      withSession(async (session) => {
        const report = (await session.client.workflow.getHandle(workflowId).result()) as DebugReport;
        // A patch is the repository's text: made printable for a terminal, byte-exact for `git apply` through a pipe or file.
        if (options.patch) {
          const patch = await wholePatch(session.config, report);
          process.stdout.write(process.stdout.isTTY ? printable(patch) : patch);
        } else if (options.json) console.log(JSON.stringify(report, null, 2));
        else {
          const { webUiLink } = await import('../../client.js');
          console.log(formatReport(report, { webUi: webUiLink(session.server.uiUrl, session.config, workflowId) }));
        }
        process.exitCode = exitCodeFor(report);
      }),
    );
}
