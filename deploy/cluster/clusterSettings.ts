// The cluster that `npm run cluster` runs on this machine: Temporal's own server on PostgreSQL
// and the Temporal Web UI server, each a process of its own, with the versions and configuration
// files that docker-compose.yml uses too (test/unit/clusterSettings.test.ts keeps them in step).
// Everything another module needs to reach or drive the cluster is here; deploy/cluster/clusterLauncher.ts
// starts and stops it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot, toolsRootFor } from '../../src/config.js';

/** Pinned versions: the binaries built by `npm run cluster` and the images of docker-compose.yml. */
export const clusterVersions = {
  /** go.temporal.io/server (cmd/server and its schema tool cmd/tools/sql); image temporalio/server. */
  temporalServer: '1.32.2',
  /** github.com/temporalio/ui-server/v2 (cmd/server); image temporalio/ui. */
  uiServer: '2.58.1',
  /** Debian's postgresql package (bookworm: 15); image postgres. */
  postgresql: '15',
  /** The server's go.mod needs a newer Go than Debian's: `go install` fetches this toolchain. */
  goToolchain: 'go1.27.3',
} as const;

/** Our configuration files, shared with docker-compose.yml (paths relative to the project root). */
export const clusterConfigFiles = {
  temporalServer: 'deploy/temporal/server.yaml',
  dynamicConfig: 'deploy/temporal/dynamicconfig.yaml',
  uiServer: 'deploy/temporal/ui-server.yaml',
  /** Schemas, namespace and search attributes, as an operator would set them up. */
  setupScript: 'deploy/temporal/temporal-setup.sh',
} as const;

/**
 * DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET (a multiple of 20 from 0 to 200, default 0) shifts every port
 * below, so that clusters of two checkouts run side by side (the steps of 20 keep their port ranges apart).
 */
function portOffset(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  const offset = Number(value);
  if (!Number.isInteger(offset) || offset < 0 || offset > 200 || offset % 20 !== 0) {
    throw new Error(`DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET must be a multiple of 20 from 0 to 200 (got "${value}")`);
  }
  return offset;
}
const offset = portOffset(process.env.DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET);

/**
 * Ports on 127.0.0.1, away from the defaults (7233, 8233, 5432) so that the cluster runs beside
 * the embedded dev server and a system PostgreSQL.
 */
export const clusterPorts = {
  postgresql: 55432 + offset,
  frontendGrpc: 17233 + offset,
  frontendHttp: 17243 + offset,
  history: 17234 + offset,
  matching: 17235 + offset,
  worker: 17239 + offset,
  frontendMembership: 16933 + offset,
  historyMembership: 16934 + offset,
  matchingMembership: 16935 + offset,
  workerMembership: 16939 + offset,
  webUi: 18233 + offset,
  serverMetrics: 17290 + offset,
} as const;

export const clusterDatabase = {
  user: 'temporal',
  // No password here: each cluster makes its own (clusterPassword).

  /** Temporal's databases, set up by its schema tool. */
  temporal: 'temporal',
  visibility: 'temporal_visibility',
  /** A database of ours, for what workers share over the network (created empty by `npm run cluster`). */
  application: 'durable_debugger',
} as const;

export const clusterNamespace = 'default';

const host = '127.0.0.1';

/** Where the running cluster answers. */
export const clusterAddresses = {
  /** TEMPORAL_ADDRESS for workers and clients. */
  temporal: `${host}:${clusterPorts.frontendGrpc}`,
  webUi: `http://${host}:${clusterPorts.webUi}`,
  /** The Temporal server's Prometheus metrics. */
  serverMetrics: `http://${host}:${clusterPorts.serverMetrics}/metrics`,
  postgresql: { host, port: clusterPorts.postgresql, user: clusterDatabase.user },
  /** A database on the cluster's PostgreSQL, without the password: what is shown. */
  postgresqlUrl: (database: string = clusterDatabase.application) =>
    `postgresql://${clusterDatabase.user}@${host}:${clusterPorts.postgresql}/${database}`,
} as const;

/** A connection URL with the cluster's password, for the workers' DURABLE_DEBUGGER_STORE (never printed). */
export function clusterDatabaseUrl(
  paths: ClusterPaths = clusterPaths(),
  database: string = clusterDatabase.application,
) {
  const password = encodeURIComponent(clusterPassword(paths));
  return `postgresql://${clusterDatabase.user}:${password}@${host}:${clusterPorts.postgresql}/${database}`;
}

/**
 * The cluster's PostgreSQL password, made at random when the cluster is created (newPassword) and
 * kept in a file that only its owner reads, never in a log or the output.
 */
export function clusterPassword(paths: ClusterPaths = clusterPaths()): string {
  try {
    return readFileSync(paths.passwordFile, 'utf8').trim();
  } catch {
    throw new Error(`The cluster has no password file (${paths.passwordFile}): start it with \`npm run cluster\`.`);
  }
}

/** A new password for the cluster (192 random bits, URL-safe), written to its password file readable by its owner only. */
export function newClusterPassword(paths: ClusterPaths): string {
  const password = randomBytes(24).toString('base64url');
  mkdirSync(paths.home, { recursive: true });
  rmSync(paths.passwordFile, { force: true });
  writeFileSync(paths.passwordFile, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}

export interface ClusterPaths {
  /** The cluster's data and logs: PostgreSQL's data folder, pid files, one log per process. */
  home: string;
  postgresqlData: string;
  logs: { postgresql: string; temporalServer: string; uiServer: string; setup: string };
  pids: { temporalServer: string; uiServer: string };
  /** The built binaries, cached per version. */
  tools: {
    root: string;
    temporalServer: string;
    schemaTool: string;
    /** Temporal's PostgreSQL schemas, copied from the module: v12/temporal/versioned, v12/visibility/versioned. */
    schemas: string;
    uiServer: string;
    /** Build logs of the go install steps. */
    buildLogs: string;
  };
  /** The rendered UI server config (the UI server reads a folder with one file per environment). */
  uiConfigFolder: string;
  /** The PostgreSQL password of this cluster (mode 0600). */
  passwordFile: string;
}

/** DURABLE_DEBUGGER_CLUSTER_HOME moves the data; DURABLE_DEBUGGER_TOOLS the binaries (as for setup). */
export function clusterPaths(environment: NodeJS.ProcessEnv = process.env): ClusterPaths {
  const home = environment.DURABLE_DEBUGGER_CLUSTER_HOME || join(projectRoot, '.durable-debugger', 'cluster');
  const tools = toolsRootFor(environment);
  const server = join(tools, `temporal-server-${clusterVersions.temporalServer}`);
  const ui = join(tools, `temporal-ui-server-${clusterVersions.uiServer}`);
  return {
    home,
    postgresqlData: join(home, 'postgresql'),
    logs: {
      postgresql: join(home, 'postgresql.log'),
      temporalServer: join(home, 'temporal-server.log'),
      uiServer: join(home, 'ui-server.log'),
      setup: join(home, 'setup.log'),
    },
    pids: { temporalServer: join(home, 'temporal-server.pid'), uiServer: join(home, 'ui-server.pid') },
    tools: {
      root: tools,
      temporalServer: join(server, 'server'),
      schemaTool: join(server, 'sql'),
      schemas: join(server, 'schema', 'postgresql'),
      uiServer: join(ui, 'server'),
      buildLogs: join(tools, 'build-logs'),
    },
    uiConfigFolder: join(home, 'ui-config'),
    passwordFile: join(home, 'postgresql-password'),
  };
}
