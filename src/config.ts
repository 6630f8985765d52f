// Settings from the environment, validated once, with defaults that work on a fresh machine.
// Each setting comes from the environment, else from the settings of the user's config file
// (src/configFile.ts), else its default; folders follow the XDG base directories (src/locations.ts).
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Budgets, SandboxLimits } from './agent/input.js';
import { readConfigFile } from './configFile.js';
import { cacheHomeFor, configFileFor, dataHomeFor, toolsRootFor } from './locations.js';
import { defaultModels, modelProviders, type ModelSettings } from './model/providerSettings.js';
import { parseAllowedImages } from './sandbox/environment/imagePolicy.js';
import type { ContentStoreLocation } from './sandbox/store/openStore.js';

export { projectRoot, toolsRootFor } from './locations.js';

const environmentSchema = z.object({
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_CLI: z.string().min(1).optional(),
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65_535).default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65_535).default(8233),
  DURABLE_DEBUGGER_HOME: z.string().min(1).optional(),
  DURABLE_DEBUGGER_TOOLS: z.string().min(1).optional(),
  DURABLE_DEBUGGER_CONFIG: z.string().min(1).optional(),
  DURABLE_DEBUGGER_TASK_QUEUE: z.string().min(1).default('durable-debugger'),
  DURABLE_DEBUGGER_SANDBOX_IMAGE: z.string().min(1).default('durable-debugger-sandbox:1'),
  DURABLE_DEBUGGER_WORKSPACES: z.string().min(1).optional(),
  DURABLE_DEBUGGER_STORE: z.string().min(1).optional(),
  DURABLE_DEBUGGER_TOOLCHAIN: z.string().min(1).optional(),
  DURABLE_DEBUGGER_HOST_ID: z
    .string()
    .regex(/^[a-zA-Z0-9._-]+$/, 'use letters, digits, dots, dashes and underscores')
    .optional(),
  DURABLE_DEBUGGER_REPO_ROOTS: z.string().min(1).optional(),
  DURABLE_DEBUGGER_ALLOWED_IMAGES: z.string().min(1).optional(),
  DURABLE_DEBUGGER_SETUP_CREDENTIALS: z
    .enum(['on', 'off', 'true', 'false', '1', '0'], { error: 'use on or off' })
    .default('off')
    .transform((value) => ['on', 'true', '1'].includes(value)),
  DURABLE_DEBUGGER_REAP_EVERY_SECONDS: z.coerce.number().positive().default(300),
  DURABLE_DEBUGGER_MAX_SANDBOXES: z.coerce.number().int().min(1).max(10_000).optional(),
  DURABLE_DEBUGGER_MAX_ENVIRONMENT_BUILDS: z.coerce.number().int().min(1).max(1_000).optional(),
  DURABLE_DEBUGGER_MAX_SANDBOXES_PER_USER: z.coerce.number().int().min(1).max(100_000).optional(),
  DURABLE_DEBUGGER_MAX_SANDBOXES_PER_QUEUE: z.coerce.number().int().min(1).max(1_000_000).optional(),
  DURABLE_DEBUGGER_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  DURABLE_DEBUGGER_METRICS_BIND: z
    .string()
    .refine((value) => isIP(value) !== 0, 'an IP address of this machine (0.0.0.0 for every interface)')
    .default('127.0.0.1'),
  DURABLE_DEBUGGER_METRICS_HOST: z
    .string()
    .regex(/^[\w.:-]+$/, 'a host name or IP address')
    .optional(),
  DURABLE_DEBUGGER_MCP_TOKEN: z.string().min(16, 'at least 16 characters').regex(/^\S+$/, 'no spaces').optional(),
  DURABLE_DEBUGGER_STREAM_REPLIES: z
    .enum(['on', 'off', 'true', 'false', '1', '0'], { error: 'use on or off' })
    .default('on')
    .transform((value) => ['on', 'true', '1'].includes(value)),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url().optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url().optional(),
  ANTHROPIC_MODEL: z.string().min(1).optional(),
  ANTHROPIC_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(600_000),
  // The model provider (src/model/providers.ts) and the settings Bedrock's and Vertex's own SDKs read.
  DURABLE_DEBUGGER_PROVIDER: z.enum(modelProviders, { error: `use one of ${modelProviders.join(', ')}` }).optional(),
  AWS_REGION: z.string().min(1).optional(),
  AWS_DEFAULT_REGION: z.string().min(1).optional(),
  AWS_PROFILE: z.string().min(1).optional(),
  AWS_BEARER_TOKEN_BEDROCK: z.string().min(1).optional(),
  AWS_ENDPOINT_URL_STS: z.url().optional(),
  ANTHROPIC_BEDROCK_BASE_URL: z.url().optional(),
  CLOUD_ML_REGION: z.string().min(1).optional(),
  ANTHROPIC_VERTEX_PROJECT_ID: z.string().min(1).optional(),
  ANTHROPIC_VERTEX_BASE_URL: z.url().optional(),
});

export interface Config {
  /** Set when the user points us at a Temporal server; otherwise the embedded dev server is used. */
  temporalAddress: string | undefined;
  namespace: string;
  temporalCli: string | undefined;
  temporalPort: number;
  temporalUiPort: number;
  /** The data home: the server's database, the content store, runs, workspaces. */
  home: string;
  /** Where setup installs tools (the Temporal CLI): one place per user, whatever the data home. */
  toolsRoot: string;
  /** The user's config file (it need not exist). */
  configFile: string;
  /** Defaults of the runs this user starts, from the config file; a command's options win. */
  runDefaults: { budgets: Partial<Budgets>; sandbox: Partial<SandboxLimits> };
  taskQueue: string;
  sandboxImage: string;
  workspaceRoot: string;
  /** Where the content store is: a folder (every host must see it) or a PostgreSQL database. */
  contentStore: ContentStoreLocation;
  /** Where the environment step keeps pip's wheel and the node/npm packages (fetched once per machine). */
  toolchainDir: string;
  hostId: string;
  /** Folders that runs' repositories must lie under; null: any folder the worker can read. */
  repoRoots: string[] | null;
  /** Images a repository's own files may build on, beyond ours (the run's input may name any). */
  allowedImages: string[];
  /** Whether a repository's `setup` commands get the registries' credentials (DURABLE_DEBUGGER_SETUP_CREDENTIALS, default off). */
  setupCredentials: boolean;
  /** How often every worker removes the sandboxes of closed runs. */
  reapEverySeconds: number;
  /** What this worker host holds at once; unset: from its cores and memory (src/sandbox/container/hostCapacity.ts). */
  capacity: { sandboxes: number | undefined; environmentBuilds: number | undefined };
  /** Sandboxes held at once by one user's runs, and by all runs of the task queue (null: no limit). */
  admissionLimits: { perUser: number | null; perQueue: number | null };
  /** The port of the worker's Prometheus metrics (0: a free port; unset: none). */
  metricsPort: number | undefined;
  /** The address the metrics listen on: loopback unless the user opens them to the network. */
  metricsBind: string;
  /** The name or address other machines reach this host's metrics at (default: its host name). */
  metricsHost: string | undefined;
  /** Whether model replies stream in, so that `watch` shows them as they are written (heartbeats every 2 s per call). */
  streamReplies: boolean;
  /** The bearer token `mcp --port` asks of every request (unset: none, the loopback address and Origin checks only). */
  mcpToken: string | undefined;
  /** Where traces go over OTLP/HTTP (the full traces URL); unset: no tracing. */
  tracesEndpoint: string | undefined;
  /** The model's settings: the provider, and for the Anthropic API (or a gateway) its key and base URL. */
  anthropic: ModelSettings;
}

export class ConfigError extends Error {}

export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  const given = Object.fromEntries(
    Object.entries(environment).filter(([, value]) => value !== undefined && value !== ''),
  ) as Record<string, string>;
  let file;
  try {
    file = readConfigFile(configFileFor(environment), Object.keys(environmentSchema.shape));
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const settings = absoluteFolders(
    { ...(file.model ? { ANTHROPIC_MODEL: file.model } : {}), ...file.settings, ...given },
    given,
    file.path,
  );
  const parsed = environmentSchema.safeParse(settings);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigError(`Invalid environment${file.exists ? ` (or settings in ${file.path})` : ''}: ${problems}`);
  }
  const env = parsed.data;
  const home = dataHomeFor(settings);
  // One workspace folder per machine name, so worker replicas sharing a data volume never collide.
  const workspaceRoot = resolve(env.DURABLE_DEBUGGER_WORKSPACES ?? join(home, 'workspaces', hostname()));
  return {
    temporalAddress: env.TEMPORAL_ADDRESS,
    namespace: env.TEMPORAL_NAMESPACE,
    temporalCli: env.TEMPORAL_CLI,
    temporalPort: env.TEMPORAL_PORT,
    temporalUiPort: env.TEMPORAL_UI_PORT,
    home,
    toolsRoot: toolsRootFor(settings),
    configFile: file.path,
    runDefaults: { budgets: file.budgets, sandbox: file.sandbox },
    taskQueue: env.DURABLE_DEBUGGER_TASK_QUEUE,
    sandboxImage: env.DURABLE_DEBUGGER_SANDBOX_IMAGE,
    workspaceRoot,
    contentStore: contentStoreFrom(env.DURABLE_DEBUGGER_STORE, home),
    toolchainDir: resolve(env.DURABLE_DEBUGGER_TOOLCHAIN ?? join(cacheHomeFor(settings), 'toolchain')),
    // Stable across restarts of the same worker, distinct for workers with different workspace roots.
    hostId:
      env.DURABLE_DEBUGGER_HOST_ID ??
      `${hostname()}-${createHash('sha256').update(workspaceRoot).digest('hex').slice(0, 8)}`,
    repoRoots: repoRootsFrom(env.DURABLE_DEBUGGER_REPO_ROOTS),
    allowedImages: parseAllowedImages(env.DURABLE_DEBUGGER_ALLOWED_IMAGES),
    setupCredentials: env.DURABLE_DEBUGGER_SETUP_CREDENTIALS,
    reapEverySeconds: env.DURABLE_DEBUGGER_REAP_EVERY_SECONDS,
    capacity: {
      sandboxes: env.DURABLE_DEBUGGER_MAX_SANDBOXES,
      environmentBuilds: env.DURABLE_DEBUGGER_MAX_ENVIRONMENT_BUILDS,
    },
    admissionLimits: {
      perUser: env.DURABLE_DEBUGGER_MAX_SANDBOXES_PER_USER ?? null,
      perQueue: env.DURABLE_DEBUGGER_MAX_SANDBOXES_PER_QUEUE ?? null,
    },
    metricsPort: env.DURABLE_DEBUGGER_METRICS_PORT,
    metricsBind: env.DURABLE_DEBUGGER_METRICS_BIND,
    metricsHost: env.DURABLE_DEBUGGER_METRICS_HOST,
    streamReplies: env.DURABLE_DEBUGGER_STREAM_REPLIES,
    mcpToken: env.DURABLE_DEBUGGER_MCP_TOKEN,
    // OpenTelemetry's own variables: the traces endpoint as given, or /v1/traces under the base endpoint.
    tracesEndpoint:
      env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
      (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces` : undefined),
    anthropic: modelSettingsFrom(env),
  };
}

/** The settings that name folders where data is written. */
const folderSettings = [
  'DURABLE_DEBUGGER_HOME',
  'DURABLE_DEBUGGER_STORE',
  'DURABLE_DEBUGGER_WORKSPACES',
  'DURABLE_DEBUGGER_TOOLCHAIN',
  'DURABLE_DEBUGGER_TOOLS',
] as const;

/**
 * Folder settings never depend on the folder a command runs in (a worker started elsewhere would
 * use another data home): a relative one in config.json is taken from the file's folder; one in the
 * environment is refused.
 */
function absoluteFolders(
  settings: Record<string, string>,
  given: Record<string, string>,
  configPath: string,
): Record<string, string> {
  const absolute = { ...settings };
  for (const name of folderSettings) {
    const value = settings[name];
    if (!value || isAbsolute(value) || (name === 'DURABLE_DEBUGGER_STORE' && /^[a-z][a-z0-9+.-]*:/i.test(value)))
      continue;
    if (given[name] !== undefined)
      throw new ConfigError(
        `Invalid environment: ${name} must be an absolute path (got "${value}", which would depend on the folder a command runs in)`,
      );
    absolute[name] = resolve(dirname(configPath), value);
  }
  return absolute;
}

function modelSettingsFrom(env: z.infer<typeof environmentSchema>): ModelSettings {
  const provider = env.DURABLE_DEBUGGER_PROVIDER ?? 'anthropic';
  return {
    provider,
    apiKey: env.ANTHROPIC_API_KEY,
    baseURL: env.ANTHROPIC_BASE_URL,
    model: env.ANTHROPIC_MODEL ?? defaultModels[provider],
    timeoutMs: env.ANTHROPIC_TIMEOUT_MS,
    bedrock: {
      region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION,
      profile: env.AWS_PROFILE,
      bearerToken: env.AWS_BEARER_TOKEN_BEDROCK,
      stsEndpoint: env.AWS_ENDPOINT_URL_STS,
      baseURL: env.ANTHROPIC_BEDROCK_BASE_URL,
    },
    vertex: {
      region: env.CLOUD_ML_REGION,
      projectId: env.ANTHROPIC_VERTEX_PROJECT_ID,
      baseURL: env.ANTHROPIC_VERTEX_BASE_URL,
    },
  };
}

/** DURABLE_DEBUGGER_STORE: a `postgres://` (or `postgresql://`) URL, else a folder (default: the data home's `store`). */
function contentStoreFrom(value: string | undefined, home: string): ContentStoreLocation {
  if (value !== undefined && /^postgres(ql)?:\/\//i.test(value)) return { kind: 'postgres', url: value };
  if (value !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ConfigError(
      `Invalid environment: DURABLE_DEBUGGER_STORE must be a folder or a postgres:// URL (got a ${value.split(':')[0]}: URL)`,
    );
  }
  return { kind: 'folder', root: resolve(value ?? join(home, 'store')) };
}

/** DURABLE_DEBUGGER_REPO_ROOTS: absolute folders separated by the path delimiter (":"). */
function repoRootsFrom(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  const roots = value.split(delimiter).filter(Boolean);
  const relative = roots.filter((root) => !isAbsolute(root));
  if (relative.length > 0 || roots.length === 0) {
    throw new ConfigError(
      `Invalid environment: DURABLE_DEBUGGER_REPO_ROOTS must list absolute folders separated by "${delimiter}" (got "${value}")`,
    );
  }
  return roots.map((root) => resolve(root));
}
