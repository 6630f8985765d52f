// `setup`: install and start what is missing (Temporal CLI, Docker engine, sandbox image).
import type { Command } from 'commander';
import { UsageError } from '../commandSupport.js';

export function setupCommand(program: Command): void {
  program
    .command('setup')
    .description('install and start what is missing: the Temporal CLI, a Docker engine, the sandbox image')
    .option(
      '--python <version...>',
      'also a sandbox image with this Python (3.13, 3.9), for repositories whose requires-python excludes 3.11',
    )
    .action(async (options: { python?: string[] }) => {
      // Loaded when the command runs (Docker's client): see main.ts.
      const [{ loadConfig }, { connectDocker }, { progressLines, SetupError }, { runSetup }] = await Promise.all([
        import('../../config.js'),
        import('../../sandbox/container/container.js'),
        import('../../setup/setupProgress.js'),
        import('../../setup/setup.js'),
      ]);
      const config = loadConfig();
      try {
        await runSetup(
          config,
          connectDocker(),
          progressLines((line) => console.log(line)),
          options.python,
        );
      } catch (error) {
        if (error instanceof SetupError) throw new UsageError(`setup: ${error.message}`);
        throw error;
      }
      console.log(`setup: ready (data in ${config.home}; check it with \`durable-debugger doctor\`)`);
    });
}
