// The options of `run` and `start`, and the run input they make.
import type { Command } from 'commander';
import { readdirSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { InvalidInputError, parseDebugInput, sandboxLimitsSchema, type DebugInputJson } from '../agent/input.js';
import type { Config } from '../config.js';
import { modelTaskQueueFor } from '../agent/modelEndpoint.js';
import { conservativePriceNote, hasListedPrice } from '../model/pricing.js';
import { nonNegativeNumber, positiveInteger, positiveNumber, providerOption, UsageError } from './commandSupport.js';
import { gitSucceeds } from '../sandbox/workspace/safeGit.js';
import { fixBranchName } from './fixBranch.js';
import { hasWorker, log, type Session } from './session.js';

export interface RunOptions {
  goal?: string;
  testCommand?: string;
  model?: string;
  fallbackModel?: string;
  fallbackAfter?: number;
  maxIterations?: number;
  maxTokens?: number;
  maxCost?: number;
  maxMinutes?: number;
  commandTimeout?: number;
  memory?: number;
  cpus?: number;
  pids?: number;
  allowTestEdits?: boolean;
  allowCommands?: boolean;
  envImage?: string;
  setup?: string[];
  id?: string;
  json?: boolean;
  apply?: boolean;
  attempts?: number;
  firstWins?: boolean;
  approve?: boolean;
  approvalTimeout?: number;
  patchAllChanges?: boolean;
  priority?: number;
  user?: string;
  countWaitingTime?: boolean;
}

const defaultLimits = sandboxLimitsSchema.parse({});

export function runOptions(command: Command): Command {
  return providerOption(command)
    .option('--goal <text>', 'what to achieve, in words (default: make the failing tests pass)')
    .option('--test-command <command>', 'the command that runs the tests (default: detected)')
    .option(
      '--model <id>',
      'Claude model id as the provider names it (default: ANTHROPIC_MODEL, else Sonnet 4.6: claude-sonnet-4-6, on Bedrock global.anthropic.claude-sonnet-4-6)',
    )
    .option(
      '--fallback-model <id>',
      'a model to call when --model keeps answering overloaded (529) or rate limited (429); the report says which calls it made',
    )
    .option(
      '--fallback-after <seconds>',
      'with --fallback-model: how long the model may keep failing so before calls go to the fallback (default 60)',
      nonNegativeNumber,
    )
    .option('--max-iterations <n>', 'iteration budget (default 30)', positiveInteger)
    .option('--max-tokens <n>', 'token budget, input plus output', positiveInteger)
    .option(
      '--max-cost <usd>',
      'cost budget in USD (a model without a listed price counts at the highest listed price)',
      positiveNumber,
    )
    .option('--max-minutes <n>', 'wall-clock budget', positiveNumber)
    .option(
      '--command-timeout <seconds>',
      `timeout of each command in the sandbox (default ${defaultLimits.commandTimeoutSeconds})`,
      positiveInteger,
    )
    .option('--memory <MB>', `the sandbox's memory limit in MB (default ${defaultLimits.memoryMb})`, positiveInteger)
    .option('--cpus <n>', `CPUs the sandbox may use (default ${defaultLimits.cpus})`, positiveNumber)
    .option('--pids <n>', `processes and threads the sandbox may run (default ${defaultLimits.pids})`, positiveInteger)
    .option('--allow-test-edits', 'let the agent change test files')
    .option('--allow-commands', 'give the agent the run_command tool (any shell command in the sandbox)')
    .option(
      '--attempts <n>',
      'parallel attempts, each a child run with a share of the budgets; the smallest verified fix is kept (default 1)',
      positiveInteger,
    )
    .option('--first-wins', 'with --attempts: cancel the other attempts as soon as one fix is verified')
    .option('--approve', 'after a verified fix, wait for `approve <id>` or `reject <id> "feedback"` before ending')
    .option(
      '--approval-timeout <minutes>',
      'with --approve: end as not_approved after this long without an answer',
      positiveNumber,
    )
    .option(
      '--patch-all-changes',
      'put every change into the patch, also files the agent never edited (test outputs, binary files commands wrote)',
    )
    .option('--priority <1-5>', 'among runs waiting for a sandbox host: 1 goes first, 5 last (default 3)', priorityKey)
    .option('--user <name>', 'who the run is for, as a per-user limit counts it (default: your login name)')
    .option('--count-waiting-time', 'the time budget also counts the time spent waiting for a sandbox host')
    .option('--id <workflow-id>', 'the workflow id (default: debug-<repo>-<time>)')
    .option(
      '--env-image <image>',
      'the image the sandbox runs (instead of building one from the repository’s manifests)',
    )
    .option(
      '--setup <command>',
      'a setup command run once with network to make the environment (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--json', 'print JSON lines instead of text');
}

/**
 * The run's input from the command line, checked before anything connects or starts (a server, a
 * worker): a repository that is not a readable folder, `--apply` where no branch can be made, and
 * options that do not go together are each refused with one line, at once.
 */
export function checkedRunInput(
  repo: string,
  options: RunOptions & { apply?: boolean },
  defaults: Config['runDefaults'],
): DebugInputJson {
  refuseUnlessFolder(repo);
  if (options.apply) refuseUnlessBranchable(repo, options.id);
  const input = inputFrom(resolve(repo), options, defaults);
  try {
    parseDebugInput(input);
  } catch (error) {
    if (error instanceof InvalidInputError) throw new UsageError(inOptionWords(error.message));
    throw error;
  }
  return input;
}

/** A repository path that is not a folder this user can read is refused, saying which. */
export function refuseUnlessFolder(repo: string): void {
  let stats;
  try {
    stats = statSync(repo);
    if (stats.isDirectory()) readdirSync(repo);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError(`The repository "${repo}" does not exist.`);
    throw new UsageError(`The repository "${repo}" cannot be read (${code}).`);
  }
  if (!stats.isDirectory())
    throw new UsageError(`"${repo}" is a file, not a folder: give the folder of the repository whose tests fail.`);
}

/**
 * `--apply` commits the fix on a new branch of the repository: refused at once where that cannot
 * happen (not a git repository, no commit to branch from, the branch of --id already there).
 */
export function refuseUnlessBranchable(repo: string, workflowId?: string): void {
  const git = (...args: string[]) => gitSucceeds(repo, args);
  if (!git('rev-parse', '--is-inside-work-tree')) {
    throw new UsageError(
      `--apply commits the fix on a new branch of a git repository, and "${repo}" is not one: leave out --apply (the patch is printed), or make it a git repository with a first commit.`,
    );
  }
  if (!git('rev-parse', '--verify', '--quiet', 'HEAD^{commit}')) {
    throw new UsageError(`--apply needs a commit to branch from, and "${repo}" has none yet: commit its files first.`);
  }
  const branch = workflowId && fixBranchName(workflowId);
  if (branch && git('rev-parse', '--verify', '--quiet', `refs/heads/${branch}`)) {
    throw new UsageError(
      `--apply would create the branch ${branch}, which already exists in "${repo}": delete it, or choose another --id.`,
    );
  }
}

/** An input error in the words of the command line: each field that has an option is named by it. */
function inOptionWords(message: string): string {
  const words: Array<[RegExp, string]> = [
    [/\bbudgets\.maxIterations\b/g, '--max-iterations'],
    [/\bbudgets\.maxTokens\b/g, '--max-tokens'],
    [/\bbudgets\.maxCostUsd\b/g, '--max-cost'],
    [/\bbudgets\.maxMinutes\b/g, '--max-minutes'],
    [/\bsandbox\.commandTimeoutSeconds\b/g, '--command-timeout'],
    [/\bapprovalTimeoutMinutes\b/g, '--approval-timeout'],
    [/\bapprove true\b/g, '--approve'],
    [/\bfirstWins\b/g, '--first-wins'],
    [/\battempts(?=:| above)/g, '--attempts'],
    [/\btestCommand\b/g, '--test-command'],
  ];
  const problem = message.replace(/^Invalid debugRepository input: /, '');
  return `Invalid options: ${words.reduce((text, [field, option]) => text.replace(field, option), problem)}`;
}

/** The run input from the options; the user's config file gives the budgets and sandbox limits the options leave out. */
export function inputFrom(repo: string, options: RunOptions, defaults: Config['runDefaults']): DebugInputJson {
  if (options.fallbackAfter !== undefined && !options.fallbackModel)
    throw new UsageError(
      '--fallback-after needs --fallback-model: the model to call when the first one keeps failing.',
    );
  const budgets = {
    ...defaults.budgets,
    ...(options.maxIterations ? { maxIterations: options.maxIterations } : {}),
    ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
    ...(options.maxCost ? { maxCostUsd: options.maxCost } : {}),
    ...(options.maxMinutes ? { maxMinutes: options.maxMinutes } : {}),
  };
  const sandbox = {
    ...defaults.sandbox,
    ...(options.commandTimeout ? { commandTimeoutSeconds: options.commandTimeout } : {}),
    ...(options.memory ? { memoryMb: options.memory } : {}),
    ...(options.cpus ? { cpus: options.cpus } : {}),
    ...(options.pids ? { pids: options.pids } : {}),
  };
  return {
    repo,
    ...(options.goal ? { goal: options.goal } : {}),
    ...(options.testCommand ? { testCommand: options.testCommand } : {}),
    ...(options.model ? { model: options.model } : {}),
    ...(options.fallbackModel ? { fallbackModel: options.fallbackModel } : {}),
    ...(options.fallbackAfter !== undefined ? { fallbackAfterSeconds: options.fallbackAfter } : {}),
    ...(Object.keys(budgets).length ? { budgets } : {}),
    ...(Object.keys(sandbox).length ? { sandbox } : {}),
    ...(options.allowTestEdits ? { allowTestEdits: true } : {}),
    ...(options.allowCommands ? { allowCommands: true } : {}),
    ...(options.attempts ? { attempts: options.attempts } : {}),
    ...(options.firstWins ? { firstWins: true } : {}),
    ...(options.approve ? { approve: true } : {}),
    ...(options.approvalTimeout ? { approvalTimeoutMinutes: options.approvalTimeout } : {}),
    ...(options.patchAllChanges ? { patchAllChanges: true } : {}),
    ...(options.priority ? { priority: options.priority } : {}),
    user: options.user ?? loginName(),
    ...(options.countWaitingTime ? { countWaitingTime: true } : {}),
    ...(options.envImage || options.setup?.length
      ? {
          environment: {
            ...(options.envImage ? { image: options.envImage } : {}),
            ...(options.setup?.length ? { setup: options.setup } : {}),
          },
        }
      : {}),
  };
}

function priorityKey(value: string): number {
  const key = Number(value);
  if (!Number.isInteger(key) || key < 1 || key > 5) throw new UsageError(`--priority must be 1 to 5 (got "${value}")`);
  return key;
}

function loginName(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown'; // no passwd entry for this uid (a container)
  }
}

/** A cost budget counts a model without a listed price at a conservative price: say so before the run starts. */
export function noteConservativePrice(input: DebugInputJson, config: Config): void {
  const model = input.model ?? config.anthropic.model;
  if (input.budgets?.maxCostUsd !== undefined && !hasListedPrice(model)) {
    log(`Note: ${conservativePriceNote(model)}, unless the API answers as a model with a listed price.`);
  }
}

/**
 * `run` without a key names no endpoint: its run goes to the workers of the default endpoint.
 * When none is there, say at once what to do instead of starting a run that would wait.
 */
export async function refuseWhenNobodyServesTheModel(session: Session, endpoint: string | undefined): Promise<void> {
  if (endpoint || (await hasWorker(session, modelTaskQueueFor(session.config.taskQueue, endpoint), 'activities')))
    return;
  throw new UsageError(
    'ANTHROPIC_API_KEY is not set and no worker answers model calls for runs without one. Set ANTHROPIC_API_KEY ' +
      '(and ANTHROPIC_BASE_URL for a gateway), or start `durable-debugger dev --scripted` to run the fixtures offline, or try `durable-debugger demo`.',
  );
}
