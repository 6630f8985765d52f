// `demo [fixture]`: fix a fixture end to end, offline unless ANTHROPIC_API_KEY is set.
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';

export function demoCommand(program: Command): void {
  program
    .command('demo')
    .description('fix a fixture end to end, offline unless ANTHROPIC_API_KEY is set (then Claude answers)')
    .argument('[fixture]', 'fixture under fixtures/', '01_off_by_one')
    .option('--json', 'print JSON lines instead of text')
    .action(async (fixture: string, options: { json?: boolean }) => {
      const { runDemo } = await import('../demoRun.js');
      process.exitCode = await runDemo(loadConfig(), { fixture, json: Boolean(options.json) });
    });
}
