// The input of a debugRepository run: one JSON object, validated with zod so that a bad input
// fails at once with a message that names the field (also when started from the Temporal CLI).
import { z } from 'zod';
import { modelEndpointPattern } from './modelEndpoint.js';
import { defaultObservationLimits } from './observations.js';
import { privateQueuePattern } from './runQueues.js';
import { maxContextWindowTokens } from './payloads.js';

// Defaults measured on real suites in the sandbox (bench/suiteMemory.ts, docs/environments.md): jest +
// ts-jest with two projects and coverage peaks near 280 MB with one worker and 800 MB with four (jest
// starts a worker per core but one, whatever the sandbox's CPU limit), and took up to 110 s on one CPU.
export const sandboxLimitsSchema = z.strictObject({
  memoryMb: z.number().int().min(64).max(65_536).default(2048),
  cpus: z.number().positive().max(64).default(2),
  pids: z.number().int().min(16).max(100_000).default(1024),
  tmpMb: z.number().int().min(1).max(65_536).default(512),
  fileSizeMb: z.number().int().min(1).max(1_048_576).default(256),
  commandTimeoutSeconds: z.number().int().min(1).max(86_400).default(300),
  maxOutputBytes: z.number().int().min(1_024).max(100_000_000).default(1_000_000),
});
export type SandboxLimits = z.infer<typeof sandboxLimitsSchema>;

/** The limits a repository's durable-debugger.json may raise, and how far: it is untrusted, the run's input is not. */
export const repositoryLimitCeilings = {
  memoryMb: 8192,
  cpus: 4,
  pids: 4096,
  tmpMb: 2048,
  commandTimeoutSeconds: 1800,
} as const satisfies Partial<SandboxLimits>;
export type RepositoryLimits = Partial<Record<keyof typeof repositoryLimitCeilings, number>>;

/** The run's limits, each raised to what the repository asks for (never lowered by it). */
export function effectiveLimits(run: SandboxLimits, repository: RepositoryLimits | undefined): SandboxLimits {
  if (!repository) return run;
  const limits = { ...run };
  for (const [key, value] of Object.entries(repository) as Array<[keyof RepositoryLimits, number]>)
    limits[key] = Math.max(limits[key], value);
  return limits;
}

export const budgetsSchema = z.strictObject({
  maxIterations: z.number().int().min(1).max(10_000).default(30),
  maxTokens: z.number().int().positive().optional().describe('Input plus output tokens over the whole run.'),
  maxCostUsd: z.number().positive().optional(),
  maxMinutes: z.number().positive().optional().describe('Wall-clock time of the whole run.'),
});
export type Budgets = z.infer<typeof budgetsSchema>;

export const debugInputSchema = z.strictObject({
  repo: z
    .string()
    .min(1, { error: 'repo must be the path of the repository to debug', abort: true })
    // A relative path would be resolved against whichever worker takes the run (the Temporal CLI passes it as given).
    .refine(isAbsolutePath, {
      error: (issue) =>
        `"${String(issue.input)}" is a relative path: give the repository's absolute path (a worker would resolve it against its own folder)`,
    }),
  goal: z.string().min(1).optional(),
  testCommand: z.string().min(1).optional(),
  /** The repository's environment, overriding its durable-debugger.json: an image, and/or setup commands run once with network. */
  environment: z
    .strictObject({
      image: z.string().min(1).optional(),
      setup: z.array(z.string().min(1)).min(1).optional(),
    })
    .optional(),
  model: z.string().min(1).optional(),
  /** A model to call when `model` keeps answering overloaded (529) or rate limited (429): see fallback.ts. */
  fallbackModel: z.string().min(1).optional(),
  /** How long (seconds) `model` may keep failing so before calls go to the fallback (default 60). */
  fallbackAfterSeconds: z.number().min(0).max(3_600).optional(),
  /** Which workers may answer the model calls (set by our CLI from the starter's settings; see modelEndpoint.ts). */
  modelEndpoint: z
    .string()
    .regex(modelEndpointPattern, 'a model endpoint name (lower-case letters, digits, dots, dashes)')
    .optional(),
  /**
   * The private task queue of the CLI process that started the run (set by our CLI): the run's
   * snapshot, sandbox and model calls go there, so only that process reads its path and pays for
   * it; that worker refuses runs it did not start (src/agent/runQueues.ts, src/temporal/servedRuns.ts).
   */
  privateQueue: z
    .string()
    .regex(privateQueuePattern, 'a private task queue of a durable-debugger CLI (durable-debugger-cli-…)')
    .optional(),
  /**
   * How long a model call waits for a worker of the run's endpoint before the run says it waits;
   * each later wait doubles, up to maxSeconds (the history stays small while a run waits for days).
   */
  modelWorkerWait: z
    .strictObject({
      firstSeconds: z.number().int().min(1).max(3_600).default(30),
      maxSeconds: z.number().int().min(1).max(86_400).default(600),
    })
    .default({ firstSeconds: 30, maxSeconds: 600 }),
  maxOutputTokens: z.number().int().min(256).max(128_000).default(8_192),
  /** Extended thinking: the model's budget of thinking tokens (its thinking blocks are passed back unchanged). */
  thinkingBudgetTokens: z.number().int().min(1_024).optional(),
  /** Sent only when set, and never together with thinking (the API does not accept both). */
  temperature: z.number().min(0).max(1).optional(),
  /** The model's context window; old observations are compacted before a request would overflow it. */
  contextWindowTokens: z
    .number()
    .int()
    .min(4_096)
    .max(
      maxContextWindowTokens,
      `at most ${maxContextWindowTokens} (the largest Claude context window); give the model's real context window`,
    )
    .default(200_000),
  /** When a budget runs out, wait this long for a raiseBudget update before ending the run. */
  pauseOnBudgetMinutes: z.number().min(0).max(10_080).default(0),
  budgets: budgetsSchema.default(budgetsSchema.parse({})),
  /** The time budget (maxMinutes) also counts the time the run waits for a sandbox host with room. */
  countWaitingTime: z.boolean().default(false),
  /** Who started the run (our CLI sets the login name): a per-user limit counts the runs by it. */
  user: z.string().min(1).max(100).optional(),
  /** Among runs waiting for a sandbox host: 1 goes first, 5 last (Temporal's priority key; default 3). */
  priority: z.number().int().min(1).max(5).optional(),
  sandbox: sandboxLimitsSchema.default(sandboxLimitsSchema.parse({})),
  observation: z
    .strictObject({
      maxBytes: z.number().int().min(500).max(1_000_000).default(defaultObservationLimits.maxBytes),
      maxLines: z.number().int().min(10).max(100_000).default(defaultObservationLimits.maxLines),
    })
    .default(defaultObservationLimits),
  allowTestEdits: z.boolean().default(false),
  testFileGlobs: z.array(z.string().min(1)).optional(),
  allowCommands: z.boolean().default(false),
  /** Iterations per workflow run before continuing as new (history stays small). */
  continueAsNewEvery: z.number().int().min(1).optional(),
  /**
   * Workflow id of an earlier run to resume: this run goes on from its saved state (conversation,
   * workspace, usage); with attempts, from each of its attempts. The report names it as resumedFrom.
   */
  resumeFrom: z.string().min(1).optional(),
  /** Parallel attempts: above 1, the run starts this many child runs and keeps the best fix. */
  attempts: z.number().int().min(1).max(10).default(1),
  /** With attempts: cancel the other attempts as soon as one fix is verified. */
  firstWins: z.boolean().default(false),
  /** Which attempt a child run is, and its opening instruction (set by the parent run). */
  attempt: z
    .strictObject({ number: z.number().int().min(1), of: z.number().int().min(2), instruction: z.string().min(1) })
    .optional(),
  /**
   * Put every change into the patch, also in files the agent never edited: what test runs left
   * behind (a .coverage, a SQLite database) and binary files its commands wrote.
   */
  patchAllChanges: z.boolean().optional(),
  /** After a verified fix, wait for a person to approve it (approve/reject updates). */
  approve: z.boolean().default(false),
  /** How long to wait for that answer before ending as not_approved (default: no limit). */
  approvalTimeoutMinutes: z.number().positive().max(525_600).optional(),
});

export type DebugInput = z.infer<typeof debugInputSchema>;

/** An absolute path on the worker's machine: POSIX, or a Windows drive path. */
export function isAbsolutePath(path: string): boolean {
  return path.startsWith('/') || /^[a-zA-Z]:[\\/]/.test(path);
}
export type DebugInputJson = z.input<typeof debugInputSchema>;

export class InvalidInputError extends Error {}

/** Parses the input, or throws an error whose message names every bad field. */
export function parseDebugInput(raw: unknown): DebugInput {
  const result = debugInputSchema.safeParse(raw);
  if (result.success) {
    const conflict = conflictingFields(result.data);
    if (conflict) throw new InvalidInputError(`Invalid debugRepository input: ${conflict}`);
    return result.data;
  }
  const problems = result.error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.join('.') : 'input';
    if (issue.code === 'unrecognized_keys') {
      return `${field}: unknown field(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
    }
    return `${field}: ${issue.message}`;
  });
  throw new InvalidInputError(`Invalid debugRepository input: ${problems.join('; ')}`);
}

/** Fields that are each valid but do not go together. */
function conflictingFields(input: DebugInput): string | null {
  if (input.approvalTimeoutMinutes !== undefined && !input.approve) return 'approvalTimeoutMinutes: needs approve true';
  if (input.fallbackAfterSeconds !== undefined && !input.fallbackModel)
    return 'fallbackAfterSeconds: needs fallbackModel';
  if (input.attempts === 1) {
    if (input.firstWins) return 'firstWins: needs attempts above 1';
    return null;
  }
  if (input.attempt) return 'attempt: is set by the parent run for its children, together with attempts 1';
  if (input.attempts > input.budgets.maxIterations) {
    return `attempts: ${input.attempts} attempts need at least as many iterations (budgets.maxIterations is ${input.budgets.maxIterations}), since the budget is shared`;
  }
  return null;
}
