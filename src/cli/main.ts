// The durable-debugger command.
import { Command, InvalidArgumentError } from 'commander';
import pc from 'picocolors';
import { ConfigError, loadConfig } from '../config.js';
import { runDemo } from './demo.js';

function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new InvalidArgumentError('expected a positive whole number');
  return number;
}

const program = new Command()
  .name('durable-debugger')
  .description('A self-debugging agent that finds and fixes the bug behind failing tests, made durable with Temporal.')
  .showHelpAfterError();

program
  .command('demo')
  .description('Fix a fixture end to end: embedded Temporal server, worker, live progress, report and patch')
  .argument('[fixture]', 'fixture under fixtures/', '01_off_by_one')
  .option('--json', 'print JSON lines instead of text')
  .action(async (fixture: string, options: { json?: boolean }) => {
    process.exitCode = await runDemo(loadConfig(), { fixture, json: Boolean(options.json) });
  });

void positiveInteger;

program.parseAsync().catch((error: unknown) => {
  const message = error instanceof ConfigError || error instanceof Error ? error.message : String(error);
  console.error(pc.red(`error: ${message}`));
  process.exitCode = 2;
});
