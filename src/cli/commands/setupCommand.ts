// `setup`: install and start what is missing (Temporal CLI, Docker engine, sandbox image).
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { connectDocker } from '../../sandbox/container/container.js';
import { progressLines, SetupError } from '../../setup/setupProgress.js';
import { runSetup } from '../../setup/setup.js';
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
