// The tool registry: each tool is one record here (its input schema, its description, its
// effect, how a call is described in summaries, and who executes it). The API's `tools` list is
// generated from it, the model's calls are validated against it before anything runs, and the
// sandbox keys its executors by the names of the tools whose executor is 'sandbox'.
// Descriptions are prompt engineering: they tell the model when and how to use each tool.
import { z } from 'zod';

/** How a tool's calls may be scheduled: reads run together, mutations one at a time in order. */
export type ToolEffect = 'read' | 'mutate' | 'finish';

/**
 * Who executes a call: 'sandbox' (the runTool activity, on the sandbox host's executor of that
 * name) or 'workflow' (finish: the workflow runs the test suite itself to verify the fix).
 */
export type ToolExecutor = 'sandbox' | 'workflow';

interface ToolRecord {
  input: z.ZodObject;
  description: string;
  effect: ToolEffect;
  executor: ToolExecutor;
  /** One line that says what a call does (its input unvalidated: refused calls are described too). */
  summary: (args: Record<string, unknown>) => string;
  /** Tools that are off unless the run turns them on. */
  optIn?: boolean;
}

const relativePath = z
  .string()
  .min(1)
  .describe('Path relative to the repository root, e.g. "src/stats.py". Absolute paths and ".." are refused.');

function shorten(value: unknown, max = 60): string {
  const text = String(value).replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const pathSummary = (name: string) => (args: Record<string, unknown>) =>
  `${name} ${args.path ? shorten(args.path) : '.'}`;

export const tools = {
  run_tests: {
    input: z.strictObject({
      path: z
        .string()
        .optional()
        .describe(
          'Optional test file or test id to run alone, as the summary names failing tests (e.g. "tests/test_stats.py", "tests/test_stats.py::test_mean", "example.com/m/stats.TestMean", "org.example.StatsTest.mean"). Omit to run the whole suite.',
        ),
    }),
    description:
      "Run the repository's test suite (or one test file) in the sandbox. The result starts with a summary (passed and failed counts, the names of failing tests) followed by the test output. Run it first to see what fails, and again after every fix.",
    // Tests may write files, so a test run is ordered like a mutation.
    effect: 'mutate',
    executor: 'sandbox',
    summary: (args) => (args.path ? `run_tests ${shorten(args.path)}` : 'run_tests'),
  },
  list_files: {
    input: z.strictObject({
      path: z.string().optional().describe('Folder to list, relative to the repository root. Omit for the root.'),
    }),
    description:
      'List the files of the repository (or of one folder) as a tree. Use it to find where the code under test lives.',
    effect: 'read',
    executor: 'sandbox',
    summary: pathSummary('list_files'),
  },
  read_file: {
    input: z.strictObject({
      path: relativePath,
      start_line: z.number().int().min(1).optional().describe('First line to show (1-based).'),
      end_line: z.number().int().min(1).optional().describe('Last line to show (inclusive).'),
    }),
    description:
      'Read a text file with numbered lines, optionally only a line range. Use it to inspect the code you suspect and the test that fails.',
    effect: 'read',
    executor: 'sandbox',
    summary: (args) => {
      const range = args.start_line ? `:${args.start_line}-${args.end_line ?? ''}` : '';
      return `read_file ${shorten(args.path)}${range}`;
    },
  },
  search_code: {
    input: z.strictObject({
      pattern: z.string().min(1).describe('Regular expression (extended grep syntax) to look for.'),
      path: z.string().optional().describe('Folder or file to search in. Omit for the whole repository.'),
    }),
    description:
      'Search the repository for a regular expression and list the matching lines with their file and line number. Use it to find definitions and callers.',
    effect: 'read',
    executor: 'sandbox',
    summary: (args) => `search_code ${shorten(args.pattern, 40)}${args.path ? ` in ${shorten(args.path)}` : ''}`,
  },
  edit_file: {
    input: z.strictObject({
      path: relativePath,
      old_string: z
        .string()
        .min(1)
        .describe('Exact text to replace, including indentation. It must occur exactly once in the file.'),
      new_string: z.string().describe('The text that replaces old_string.'),
    }),
    description:
      'Replace an exact piece of text in a file with new text. old_string must match the file exactly once, whitespace included; read the file first. Keep edits small: change only what fixes the bug.',
    effect: 'mutate',
    executor: 'sandbox',
    summary: pathSummary('edit_file'),
  },
  write_file: {
    input: z.strictObject({
      path: relativePath,
      content: z.string().describe('The whole content of the new file.'),
    }),
    description:
      'Create a new file (or replace a whole file) with the given content. Prefer edit_file for changes to existing files.',
    effect: 'mutate',
    executor: 'sandbox',
    summary: pathSummary('write_file'),
  },
  run_command: {
    input: z.strictObject({
      command: z.string().min(1).describe('A shell command, run with sh -c in the repository root inside the sandbox.'),
    }),
    description:
      'Run a shell command in the sandbox (no network). Use it for things the other tools cannot do, such as running a script to reproduce the bug.',
    effect: 'mutate',
    executor: 'sandbox',
    summary: (args) => `run_command ${shorten(args.command)}`,
    optIn: true,
  },
  finish: {
    input: z.strictObject({
      root_cause: z
        .string()
        .min(1)
        .describe('What was wrong and why, in one or two sentences, naming the file and the faulty logic.'),
      summary: z.string().optional().describe('What you changed to fix it.'),
    }),
    description:
      'Call this once the failing tests pass after your fix, with the root cause of the bug. The tests are then run again to verify the fix; if they still fail you will be told and can continue.',
    effect: 'finish',
    executor: 'workflow',
    summary: () => 'finish',
  },
} satisfies Record<string, ToolRecord>;

export type ToolName = keyof typeof tools;
export type ToolInput<N extends ToolName> = z.infer<(typeof tools)[N]['input']>;
/** The tools that the sandbox executes (all but finish); its executor map must cover exactly these. */
export type SandboxToolName = {
  [N in ToolName]: (typeof tools)[N]['executor'] extends 'sandbox' ? N : never;
}[ToolName];

export const toolNames = Object.keys(tools) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(tools, name);
}

export function isSandboxTool(name: string): name is SandboxToolName {
  return isToolName(name) && tools[name].executor === 'sandbox';
}

/** A tool call's input larger than this is dropped before it reaches workflow history. */
export const maxToolInputBytes = 256 * 1024;

/** The size the oversized-input rule counts: the input's JSON, in UTF-16 code units as before. */
export function toolInputBytes(input: unknown): number {
  return JSON.stringify(input ?? {}).length;
}

/**
 * The oversized-input rule, applied where the model's reply arrives (the model activity): a tool
 * call whose input is over `maxToolInputBytes` keeps its id and name but loses its input, so the
 * input never enters workflow history; the call is then refused with `oversizedInputError`.
 */
export function dropOversizedInputs<B extends { type: string }>(
  blocks: B[],
): { blocks: B[]; oversized: Array<{ id: string; bytes: number }> } {
  const oversized: Array<{ id: string; bytes: number }> = [];
  const kept = blocks.map((block) => {
    if (block.type !== 'tool_use') return block;
    const call = block as B & { id: string; input?: unknown };
    const bytes = toolInputBytes(call.input);
    if (bytes <= maxToolInputBytes) return block;
    oversized.push({ id: call.id, bytes });
    return { ...block, input: {} };
  });
  return { blocks: kept, oversized };
}

/** What the model is told about a call whose input was dropped for its size. */
export function oversizedInputError(name: string, bytes: number): string {
  return `The input of this ${name} call was ${bytes} bytes, over the limit of ${maxToolInputBytes}. Make smaller changes, one edit at a time.`;
}

export interface ApiTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

function availableTools(options: { allowCommands: boolean }): ToolName[] {
  return toolNames.filter((name) => {
    const record: ToolRecord = tools[name];
    return !record.optIn || options.allowCommands;
  });
}

/**
 * The `tools` parameter of a Messages API request, in a fixed order (a stable, cacheable prefix).
 * Made once per process and kept (converting the schemas took about 1 ms per model call); the
 * list is frozen, deeply, because every model call shares it.
 */
export function apiTools(options: { allowCommands: boolean }): ApiTool[] {
  const key = options.allowCommands ? 'withCommands' : 'withoutCommands';
  madeTools[key] ??= deepFreeze(
    availableTools(options).map((name) => {
      const { $schema: _ignored, ...schema } = z.toJSONSchema(tools[name].input) as Record<string, unknown>;
      return { name, description: tools[name].description, input_schema: schema };
    }),
  );
  return madeTools[key];
}

const madeTools: { withCommands?: ApiTool[]; withoutCommands?: ApiTool[] } = {};

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export type ParsedToolCall =
  | { ok: true; id: string; name: ToolName; input: Record<string, unknown>; effect: ToolEffect }
  | { ok: false; id: string; name: string; error: string };

/** Validates a model's tool call. A bad call is an error the model can act on, never a crash. */
export function parseToolCall(
  call: { id: string; name: string; input: unknown },
  options: { allowCommands: boolean },
): ParsedToolCall {
  const available = availableTools(options);
  if (!isToolName(call.name) || !available.includes(call.name)) {
    return {
      ok: false,
      id: call.id,
      name: call.name,
      error: `Unknown tool "${call.name}". Available tools: ${available.join(', ')}.`,
    };
  }
  const parsed = tools[call.name].input.safeParse(call.input ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `${issue.path.length ? issue.path.join('.') : 'input'}: ${issue.message}`)
      .join('; ');
    return { ok: false, id: call.id, name: call.name, error: `Invalid input for ${call.name}: ${problems}.` };
  }
  return {
    ok: true,
    id: call.id,
    name: call.name,
    input: parsed.data as Record<string, unknown>,
    effect: tools[call.name].effect,
  };
}

/** One line that says what a call does, for activity summaries and progress output. */
export function describeToolCall(name: string, input: unknown): string {
  if (!isToolName(name)) return shorten(name);
  return tools[name].summary((input ?? {}) as Record<string, unknown>);
}
