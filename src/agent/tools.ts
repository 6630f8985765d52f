// The tool registry: each tool is defined once, here. The API's `tools` list is generated
// from it, and the model's calls are validated against it before anything runs.
// Descriptions are prompt engineering: they tell the model when and how to use each tool.
import { z } from 'zod';

const relativePath = z
  .string()
  .min(1)
  .describe('Path relative to the repository root, e.g. "src/stats.py". Absolute paths and ".." are refused.');

export const toolInputSchemas = {
  run_tests: z.strictObject({
    path: z
      .string()
      .optional()
      .describe('Optional test file or test id to run alone (e.g. "tests/test_stats.py"). Omit to run the whole suite.'),
  }),
  list_files: z.strictObject({
    path: z.string().optional().describe('Folder to list, relative to the repository root. Omit for the root.'),
  }),
  read_file: z.strictObject({
    path: relativePath,
    start_line: z.number().int().min(1).optional().describe('First line to show (1-based).'),
    end_line: z.number().int().min(1).optional().describe('Last line to show (inclusive).'),
  }),
  search_code: z.strictObject({
    pattern: z.string().min(1).describe('Regular expression (extended grep syntax) to look for.'),
    path: z.string().optional().describe('Folder or file to search in. Omit for the whole repository.'),
  }),
  edit_file: z.strictObject({
    path: relativePath,
    old_string: z.string().min(1).describe('Exact text to replace, including indentation. It must occur exactly once in the file.'),
    new_string: z.string().describe('The text that replaces old_string.'),
  }),
  write_file: z.strictObject({
    path: relativePath,
    content: z.string().describe('The whole content of the new file.'),
  }),
  run_command: z.strictObject({
    command: z.string().min(1).describe('A shell command, run with sh -c in the repository root inside the sandbox.'),
  }),
  finish: z.strictObject({
    root_cause: z
      .string()
      .min(1)
      .describe('What was wrong and why, in one or two sentences, naming the file and the faulty logic.'),
    summary: z.string().optional().describe('What you changed to fix it.'),
  }),
};

export type ToolName = keyof typeof toolInputSchemas;

/** A tool call's input larger than this is dropped before it reaches workflow history. */
export const maxToolInputBytes = 256 * 1024;
export type ToolInput<N extends ToolName> = z.infer<(typeof toolInputSchemas)[N]>;

/** How a tool's calls may be scheduled: reads run together, mutations one at a time in order. */
export type ToolEffect = 'read' | 'mutate' | 'finish';

interface ToolDefinition {
  description: string;
  effect: ToolEffect;
  /** Tools that are off unless the run turns them on. */
  optIn?: boolean;
}

export const toolDefinitions: Record<ToolName, ToolDefinition> = {
  run_tests: {
    description:
      "Run the repository's test suite (or one test file) in the sandbox. The result starts with a summary (passed and failed counts, the names of failing tests) followed by the test output. Run it first to see what fails, and again after every fix.",
    // Tests may write files, so a test run is ordered like a mutation.
    effect: 'mutate',
  },
  list_files: {
    description:
      'List the files of the repository (or of one folder) as a tree. Use it to find where the code under test lives.',
    effect: 'read',
  },
  read_file: {
    description:
      'Read a text file with numbered lines, optionally only a line range. Use it to inspect the code you suspect and the test that fails.',
    effect: 'read',
  },
  search_code: {
    description:
      'Search the repository for a regular expression and list the matching lines with their file and line number. Use it to find definitions and callers.',
    effect: 'read',
  },
  edit_file: {
    description:
      'Replace an exact piece of text in a file with new text. old_string must match the file exactly once, whitespace included; read the file first. Keep edits small: change only what fixes the bug.',
    effect: 'mutate',
  },
  write_file: {
    description: 'Create a new file (or replace a whole file) with the given content. Prefer edit_file for changes to existing files.',
    effect: 'mutate',
  },
  run_command: {
    description:
      'Run a shell command in the sandbox (no network). Use it for things the other tools cannot do, such as running a script to reproduce the bug.',
    effect: 'mutate',
    optIn: true,
  },
  finish: {
    description:
      'Call this once the failing tests pass after your fix, with the root cause of the bug. The tests are then run again to verify the fix; if they still fail you will be told and can continue.',
    effect: 'finish',
  },
};

export const toolNames = Object.keys(toolDefinitions) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(toolDefinitions, name);
}

export interface ApiTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/**
 * The `tools` parameter of a Messages API request, in a fixed order (a stable, cacheable prefix).
 * Made once per process and kept (converting the schemas took about 1 ms per model call); the
 * list is frozen, deeply, because every model call shares it.
 */
export function apiTools(options: { allowCommands: boolean }): ApiTool[] {
  const key = options.allowCommands ? 'withCommands' : 'withoutCommands';
  madeTools[key] ??= deepFreeze(
    toolNames
      .filter((name) => !toolDefinitions[name].optIn || options.allowCommands)
      .map((name) => {
        const { $schema: _ignored, ...schema } = z.toJSONSchema(toolInputSchemas[name]) as Record<string, unknown>;
        return { name, description: toolDefinitions[name].description, input_schema: schema };
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
  const available = toolNames.filter((name) => !toolDefinitions[name].optIn || options.allowCommands);
  if (!isToolName(call.name) || !available.includes(call.name)) {
    return {
      ok: false,
      id: call.id,
      name: call.name,
      error: `Unknown tool "${call.name}". Available tools: ${available.join(', ')}.`,
    };
  }
  const parsed = toolInputSchemas[call.name].safeParse(call.input ?? {});
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
    effect: toolDefinitions[call.name].effect,
  };
}

/** One line that says what a call does, for activity summaries and progress output. */
export function describeToolCall(name: string, input: unknown): string {
  const args = (input ?? {}) as Record<string, unknown>;
  const shorten = (value: unknown, max = 60) => {
    const text = String(value).replace(/\s+/g, ' ');
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  };
  switch (name) {
    case 'read_file': {
      const range = args.start_line ? `:${args.start_line}-${args.end_line ?? ''}` : '';
      return `read_file ${shorten(args.path)}${range}`;
    }
    case 'edit_file':
    case 'write_file':
    case 'list_files':
      return `${name} ${args.path ? shorten(args.path) : '.'}`;
    case 'run_tests':
      return args.path ? `run_tests ${shorten(args.path)}` : 'run_tests';
    case 'search_code':
      return `search_code ${shorten(args.pattern, 40)}${args.path ? ` in ${shorten(args.path)}` : ''}`;
    case 'run_command':
      return `run_command ${shorten(args.command)}`;
    case 'finish':
      return 'finish';
    default:
      return shorten(name);
  }
}
