// The sandbox's tool executors: one per tool whose executor is 'sandbox' in the tool registry
// (src/agent/tools.ts), keyed by the tool's name. The map's type makes a tool without an
// executor a type error, and each executor receives its tool's validated input type.
import picomatch from 'picomatch';
import type { SandboxSettings, ToolOutcome } from '../agent/sandboxProtocol.js';
import { truncateObservation } from '../agent/observations.js';
import { describeOutOfMemory, formatTestSummary, stripAnsi, summarizeTestOutput } from '../agent/testResults.js';
import { isSandboxTool, type SandboxToolName, type ToolInput } from '../agent/tools.js';
import type { Mutation } from '../agent/workspace.js';
import type { ExecResult } from './container/exec.js';
import {
  editFileForTool,
  listFiles,
  readTextForTool,
  ToolInputError,
  writeFileForTool,
} from './workspace/fileTools.js';
import { normalizeRelativePath, PathRefusedError, resolveInsideWorkspace } from './workspace/paths.js';
import { encodedFilesMarker, filesBeyondAsciiCommand, searchEncodedFiles } from './workspace/encodedSearch.js';
import { formatSearchResults, maxSearchLinesRead } from './workspace/searchResults.js';
import { testCommandFor } from './testCommand.js';
import { ignoredFolders, type Tree } from './workspace/tree.js';
import type { WorkspaceFolder } from './workspace/workspaceFolder.js';
import { shellQuote } from './shellQuote.js';
import { runTestsGivingOneMoreTry } from './runnerGaveUp.js';

/** What an executor works with: the call's workspace as it was before the call, and the container. */
export interface ToolContext {
  callId: string;
  folder: WorkspaceFolder;
  before: Tree;
  settings: SandboxSettings;
  /** Runs a command in the sandbox container (a stopped container raises SandboxNeedsPrepareError). */
  exec(command: string, settings: SandboxSettings): Promise<ExecResult>;
}

type Executor<N extends SandboxToolName> = (input: ToolInput<N>, context: ToolContext) => Promise<ToolOutcome>;

export const defaultTestFileGlobs = [
  '**/test_*.py',
  '**/*_test.py',
  '**/conftest.py',
  '**/tests/**',
  '**/test/**',
  '**/__tests__/**',
  '**/*.test.*',
  '**/*.spec.*',
  '**/*_test.go',
];

/** Grep gets less time than a command: a pattern that runs longer is too broad to be useful. */
const searchTimeoutSeconds = 30;

export const toolExecutors: { [N in SandboxToolName]: Executor<N> } = {
  list_files: async (input, context) =>
    reply(context, await listFiles(context.folder.path, input.path, await context.folder.ignoredCheck())),
  read_file: async (input, context) => reply(context, await readTextForTool(context.folder.path, input)),
  search_code: async (input, context) => reply(context, await searchCode(input, context)),
  edit_file: (input, context) => changeFile(input.path, context, () => editFileForTool(context.folder.path, input)),
  write_file: (input, context) => changeFile(input.path, context, () => writeFileForTool(context.folder.path, input)),
  run_tests: (input, context) =>
    runInSandbox(testCommandFor(context.settings.testCommand, checkedTestTarget(input.path)), context, { tests: true }),
  run_command: (input, context) => runInSandbox(input.command, context, { tests: false }),
};

/**
 * Runs one tool call in the sandbox. A refused path or a bad input is an error the model can act
 * on; anything else is thrown to the activity.
 */
export async function executeTool(call: { name: string; input: unknown }, context: ToolContext): Promise<ToolOutcome> {
  if (!isSandboxTool(call.name)) return reply(context, `The tool "${call.name}" does not run in the sandbox.`, true);
  try {
    return await executeTyped(call.name, call.input, context);
  } catch (error) {
    if (error instanceof PathRefusedError || error instanceof ToolInputError)
      return reply(context, error.message, true);
    throw error;
  }
}

function executeTyped<N extends SandboxToolName>(name: N, input: unknown, context: ToolContext): Promise<ToolOutcome> {
  const executor: Executor<N> = toolExecutors[name];
  // The workflow validated the input against the tool's schema (parseToolCall) before sending it.
  return executor(input as ToolInput<N>, context);
}

function reply(context: ToolContext, content: string, isError = false): ToolOutcome {
  return {
    content: truncateObservation(content, context.settings.observation),
    isError,
    mutations: [],
    digest: context.before.digest,
  };
}

/** edit_file and write_file: refused on a test file unless the run allows test edits. */
async function changeFile(path: string, context: ToolContext, change: () => Promise<string>): Promise<ToolOutcome> {
  const { settings, folder } = context;
  const relative = normalizeRelativePath(path);
  if (!settings.allowTestEdits && isTestFile(relative, settings)) {
    return {
      ...reply(
        context,
        `Refused: "${relative}" is a test file, and this run does not allow changing tests (allowTestEdits is off). The tests describe the intended behaviour; fix the code under test instead.`,
        true,
      ),
      refusedBy: 'test-file-guardrail',
    };
  }
  const message = await change();
  await folder.giveToSandboxUser(relative);
  const { tree, mutations } = await folder.capture(context.before, context.callId);
  return { content: message, isError: false, mutations: madeBy('file_tool', mutations), digest: tree.digest };
}

/** run_tests and run_command: the command's changes are kept, except to test files when those are protected. */
async function runInSandbox(command: string, context: ToolContext, options: { tests: boolean }): Promise<ToolOutcome> {
  const { settings, folder, before } = context;
  const run = () => context.exec(command, settings);
  const result = options.tests ? await runTestsGivingOneMoreTry(run) : await run();
  const testSummary = options.tests
    ? summarizeTestOutput(result.output, result.exitCode, result.timedOut, result.outOfMemory)
    : undefined;
  let { tree, mutations } = await folder.capture(before, context.callId);
  let note = '';
  const forbidden = settings.allowTestEdits ? [] : mutations.filter((m) => isTestFile(m.path, settings));
  if (forbidden.length > 0) {
    await folder.restore(
      before,
      forbidden.map((m) => m.path),
    );
    ({ tree, mutations } = await folder.capture(before, context.callId));
    note = `\n\nNote: the command changed test files, which this run does not allow; they were restored: ${forbidden.map((m) => m.path).join(', ')}.`;
  }
  const body = describeExec(result, settings);
  const content = testSummary ? `${formatTestSummary(testSummary)}\n\n${body}` : body;
  return {
    content: truncateObservation(content, settings.observation) + note,
    isError: false,
    mutations: madeBy(options.tests ? 'test_run' : 'command', mutations),
    digest: tree.digest,
    testSummary,
  };
}

/** Marks what made the changes: the patch leaves out what only test runs and commands left behind. */
function madeBy(maker: NonNullable<Mutation['madeBy']>, mutations: Mutation[]): Mutation[] {
  return mutations.map((mutation) => ({ ...mutation, madeBy: maker }));
}

/** grep in the sandbox (a hostile pattern cannot stall the worker); see searchResults.ts for what is shown. */
async function searchCode(input: ToolInput<'search_code'>, context: ToolContext): Promise<string> {
  const { settings } = context;
  // grep follows a symlink named on its command line: check the path on the host first.
  const target = (await resolveInsideWorkspace(context.folder.path, input.path ?? '')).relative || '.';
  const excluded = [...ignoredFolders].map((folder) => `--exclude-dir=${folder}`).join(' ');
  // -Z ends each file name with a NUL, so names with colons are read back exactly. Then the files
  // grep skips as binary that may be text in another encoding (see encodedSearch.ts).
  const command =
    `grep -rnEZ --binary-files=without-match ${excluded} -e ${shellQuote(input.pattern)} -- ${shellQuote(target)} | head -n ${maxSearchLinesRead}; ` +
    `printf '${encodedFilesMarker.replace(/\0/g, '\\000').replace(/\n/g, '\\n')}'; ${filesBeyondAsciiCommand(excluded, shellQuote(target))}`;
  const result = await context.exec(command, {
    ...settings,
    limits: { ...settings.limits, commandTimeoutSeconds: searchTimeoutSeconds },
  });
  if (result.timedOut) return 'The search timed out; narrow the pattern or the path.';
  const [matches = '', listing = ''] = result.output.split(encodedFilesMarker);
  const decoded = await searchEncodedFiles(
    context.folder.path,
    context.before,
    listing,
    input.pattern,
    maxSearchLinesRead,
  );
  return formatSearchResults([matches, ...decoded].join('\n'), context.before, target, input.pattern);
}

export function isTestFile(relative: string, settings: SandboxSettings): boolean {
  const globs = settings.testFileGlobs ?? defaultTestFileGlobs;
  return picomatch(globs, { dot: true })(relative) || picomatch(globs, { dot: true, basename: true })(relative);
}

/** A run_tests target is a path (optionally with a ::test id) that must stay inside the workspace. */
function checkedTestTarget(target: string | undefined): string | undefined {
  if (!target) return undefined;
  const [file, ...rest] = target.split('::');
  const relative = normalizeRelativePath(file ?? '');
  return [relative, ...rest].join('::');
}

function describeExec(result: ExecResult, settings: SandboxSettings): string {
  const lines: string[] = [];
  if (result.timedOut) {
    lines.push(
      `The command timed out after ${settings.limits.commandTimeoutSeconds} s and was stopped, together with everything it started.`,
    );
  } else if (result.outOfMemory) {
    lines.push(`${upperFirst(describeOutOfMemory(result.outOfMemory, 'the command'))}. Exit code: ${result.exitCode}`);
  } else if (result.exitCode === 137) {
    lines.push('The command was killed (exit code 137).');
  } else {
    lines.push(`Exit code: ${result.exitCode}`);
  }
  if (result.droppedBytes > 0) {
    lines.push(
      `The command printed ${result.outputBytes} bytes; ${result.droppedBytes} bytes from the middle were dropped.`,
    );
  }
  // Programs print colours as in CI; the model reads the text without the escape codes.
  lines.push('', stripAnsi(result.output).trimEnd() || '(no output)');
  return lines.join('\n');
}

function upperFirst(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
