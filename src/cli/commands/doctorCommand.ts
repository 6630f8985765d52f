// `doctor`: check each part a run needs, one line each with its fix; exit code 1 when one fails.
import type { Command } from 'commander';
import pc from 'picocolors';
import type { CheckStatus } from '../../setup/parts.js';
import { checkBackgroundWorker } from '../backgroundWorkerState.js';

const marks: Record<CheckStatus, string> = { ok: pc.green('ok  '), warn: pc.yellow('warn'), fail: pc.red('FAIL') };

export function doctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check Docker, the sandbox image, Temporal, the model API, the registries and disk space')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      // Loaded when the command runs (Docker's client, the model SDK): see main.ts.
      const [{ loadConfig }, { connectDocker }, { runDoctor }] = await Promise.all([
        import('../../config.js'),
        import('../../sandbox/container/container.js'),
        import('../../setup/doctor.js'),
      ]);
      const config = loadConfig();
      // The parts a run needs, then the user's background worker (src/cli, so not among src/setup's checks).
      const checks = [...(await runDoctor(config, connectDocker())), await checkBackgroundWorker(config.home)];
      const ok = checks.every((check) => check.status !== 'fail');
      if (options.json) console.log(JSON.stringify({ ok, checks }));
      else
        for (const check of checks)
          console.log(
            `${marks[check.status]} ${check.name}: ${check.detail}${check.fix ? pc.dim(` — fix: ${check.fix}`) : ''}`,
          );
      process.exitCode = ok ? 0 : 1;
    });
}
