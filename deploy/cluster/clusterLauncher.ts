// Starts and stops the cluster of clusterSettings.ts on this machine, idempotently: PostgreSQL 15
// as a cluster of its own (its data folder under the cluster home, its own port), Temporal's
// schemas set up by Temporal's schema tool, the Temporal server and the Web UI server with our
// configuration files (deploy/), and the namespace and search attributes registered through the
// operator API with the Temporal CLI, as an operator would. Each part that already runs is kept.
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig, projectRoot } from '../../src/config.js';
import { portAnswers, temporalCliPath } from '../../src/temporal/embeddedServer.js';
import { searchAttributeRegistrations } from '../../src/temporal/searchAttributes.js';
import {
  clusterAddresses,
  clusterConfigFiles,
  clusterDatabase,
  clusterNamespace,
  clusterPassword,
  clusterPaths,
  clusterPorts,
  clusterVersions,
  newClusterPassword,
  type ClusterPaths,
} from './clusterSettings.js';
import { ClusterSetupError, ensureClusterTools } from './goBuilds.js';

export { ClusterSetupError } from './goBuilds.js';

type Log = (line: string) => void;
const quiet: Log = () => undefined;

const postgresqlBin = `/usr/lib/postgresql/${clusterVersions.postgresql}/bin`;
const host = '127.0.0.1';

export type ClusterPart = 'postgresql' | 'temporalServer' | 'uiServer';

export interface ClusterPartStatus {
  part: ClusterPart;
  running: boolean;
  pid: number | null;
  address: string;
  log: string;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/** Commands of PostgreSQL run as its own user: the server refuses to run as root. */
function asPostgresUser(): Pick<SpawnSyncOptions, 'uid' | 'gid'> {
  if (process.getuid?.() !== 0) return {};
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((line) => line.startsWith('postgres:'));
  if (!entry)
    throw new ClusterSetupError(
      "The postgres user does not exist; install Debian's postgresql package (apt-get install postgresql).",
    );
  const [, , uid, gid] = entry.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

function run(
  command: string,
  args: string[],
  options: SpawnSyncOptions = {},
): { status: number | null; output: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  return {
    status: result.status,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`.trim(),
  };
}

function ensurePostgresqlInstalled(log: Log): void {
  if (existsSync(join(postgresqlBin, 'pg_ctl'))) return;
  log(`Installing PostgreSQL ${clusterVersions.postgresql} (apt-get install postgresql)`);
  const asRoot = process.getuid?.() === 0 ? [] : ['sudo'];
  const environment = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['apt-get', 'update', '-qq'],
    ['apt-get', 'install', '-y', '-qq', `postgresql-${clusterVersions.postgresql}`],
  ]) {
    const [command, ...rest] = [...asRoot, ...args] as [string, ...string[]];
    const result = run(command, rest, { env: environment });
    if (result.status !== 0) throw new ClusterSetupError(`${args.join(' ')} failed: ${result.output.slice(-2000)}`);
  }
  if (!existsSync(join(postgresqlBin, 'pg_ctl'))) {
    throw new ClusterSetupError(
      `PostgreSQL ${clusterVersions.postgresql} is not at ${postgresqlBin} after installing it; this needs Debian's postgresql-${clusterVersions.postgresql}.`,
    );
  }
}

/** pg_ctl on our data folder, as the postgres user. */
function pgCtl(paths: ClusterPaths, args: string[]): { status: number | null; output: string } {
  return run(join(postgresqlBin, 'pg_ctl'), ['-D', paths.postgresqlData, ...args], { ...asPostgresUser(), cwd: '/' });
}

export function postgresqlRunning(paths: ClusterPaths = clusterPaths()): boolean {
  return existsSync(join(paths.postgresqlData, 'PG_VERSION')) && pgCtl(paths, ['status']).status === 0;
}

export async function startPostgresql(paths: ClusterPaths = clusterPaths(), log: Log = quiet): Promise<void> {
  ensurePostgresqlInstalled(log);
  mkdirSync(paths.home, { recursive: true });
  const owner = asPostgresUser();
  if (!existsSync(join(paths.postgresqlData, 'PG_VERSION'))) {
    log(`Creating the PostgreSQL ${clusterVersions.postgresql} cluster in ${paths.postgresqlData}`);
    rmSync(paths.postgresqlData, { recursive: true, force: true });
    mkdirSync(paths.postgresqlData, { mode: 0o700 });
    // A password of this cluster's own; initdb reads it from a file that is gone right after.
    const passwordFile = join(paths.home, '.initdb-password');
    writeFileSync(passwordFile, `${newClusterPassword(paths)}\n`, { mode: 0o600 });
    if (owner.uid !== undefined) {
      chownSync(paths.postgresqlData, owner.uid, owner.gid as number);
      chownSync(passwordFile, owner.uid, owner.gid as number);
    }
    const result = run(
      join(postgresqlBin, 'initdb'),
      [
        '-D',
        paths.postgresqlData,
        '-U',
        clusterDatabase.user,
        `--pwfile=${passwordFile}`,
        '--auth-host=scram-sha-256',
        '--auth-local=peer',
        '-E',
        'UTF8',
        '--locale=C.UTF-8',
      ],
      { ...owner, cwd: '/' },
    );
    rmSync(passwordFile, { force: true });
    if (result.status !== 0) throw new ClusterSetupError(`initdb failed: ${result.output.slice(-2000)}`);
  }
  if (!postgresqlRunning(paths)) startPostgresqlServer(paths, owner, log);
  await replaceFixedPassword(paths, log);
}

/** pg_ctl start on the cluster's data folder, listening on 127.0.0.1 and its own socket folder. */
function startPostgresqlServer(paths: ClusterPaths, owner: Pick<SpawnSyncOptions, 'uid' | 'gid'>, log: Log): void {
  // The server log is written by the postgres user: it must own the file.
  if (!existsSync(paths.logs.postgresql)) writeFileSync(paths.logs.postgresql, '');
  if (owner.uid !== undefined) chownSync(paths.logs.postgresql, owner.uid, owner.gid as number);
  // TCP on 127.0.0.1 only, and the Unix socket in the data folder (not the system's /var/run/postgresql).
  const options = `-p ${clusterPorts.postgresql} -c listen_addresses=${host} -c unix_socket_directories=${paths.postgresqlData}`;
  log(`Starting PostgreSQL on ${host}:${clusterPorts.postgresql} (log: ${paths.logs.postgresql})`);
  const result = pgCtl(paths, ['start', '-w', '-t', '60', '-l', paths.logs.postgresql, '-o', options]);
  if (result.status !== 0)
    throw new ClusterSetupError(
      `PostgreSQL did not start: ${result.output.slice(-1000)}; see ${paths.logs.postgresql}`,
    );
}

/** What clusters created before passwords were generated used. */
const formerFixedPassword = 'temporal';

/**
 * A cluster created with the former fixed password (it has no password file) gets a generated
 * one: set through that password, as a SCRAM verifier, so the new one never reaches the server's
 * log even when the statement fails.
 */
async function replaceFixedPassword(paths: ClusterPaths, log: Log): Promise<void> {
  if (existsSync(paths.passwordFile)) return;
  log(`Replacing the fixed PostgreSQL password of this cluster with a generated one (kept in ${paths.passwordFile})`);
  const client = new pg.Client({ ...clusterAddresses.postgresql, password: formerFixedPassword, database: 'postgres' });
  await client.connect().catch((error: Error) => {
    throw new ClusterSetupError(
      `This cluster has no password file (${paths.passwordFile}) and does not take the former fixed password (${error.message}): stop it and move ${paths.home} away to create a new cluster.`,
    );
  });
  try {
    const password = randomBytes(24).toString('base64url');
    await client.query(`ALTER ROLE ${clusterDatabase.user} PASSWORD '${scramVerifier(password)}'`);
    mkdirSync(paths.home, { recursive: true });
    writeFileSync(paths.passwordFile, `${password}\n`, { mode: 0o600, flag: 'wx' });
  } finally {
    await client.end();
  }
}

/** PostgreSQL's SCRAM-SHA-256 verifier of a password (RFC 5802, 7677): what the server stores instead of it. */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
  const storedKey = createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

export function stopPostgresql(paths: ClusterPaths = clusterPaths(), log: Log = quiet): void {
  if (!postgresqlRunning(paths)) return;
  log('Stopping PostgreSQL');
  const result = pgCtl(paths, ['stop', '-w', '-t', '60', '-m', 'fast']);
  if (result.status !== 0) throw new ClusterSetupError(`PostgreSQL did not stop: ${result.output}`);
}

/** deploy/temporal/temporal-setup.sh, the setup steps docker-compose.yml runs too; its output goes to the setup log. */
function temporalSetup(paths: ClusterPaths, args: string[], what: string): void {
  const logFile = openSync(paths.logs.setup, 'a');
  const result = spawnSync('sh', [join(projectRoot, clusterConfigFiles.setupScript), ...args], {
    stdio: ['ignore', logFile, logFile],
    timeout: 300_000,
    env: {
      ...process.env,
      TEMPORAL_SQL_TOOL: paths.tools.schemaTool,
      TEMPORAL_SCHEMA_DIR: join(paths.tools.schemas, 'v12'),
      TEMPORAL_CLI: temporalCliPath(loadConfig()),
      TEMPORAL_ADDRESS: clusterAddresses.temporal,
      TEMPORAL_NAMESPACE: clusterNamespace,
      SQL_PLUGIN: 'postgres12',
      SQL_HOST: host,
      SQL_PORT: String(clusterPorts.postgresql),
      SQL_USER: clusterDatabase.user,
      SQL_PASSWORD: clusterPassword(paths),
      APPLICATION_DATABASE: clusterDatabase.application,
    },
  });
  if (result.status !== 0) throw new ClusterSetupError(`${what} failed; see ${paths.logs.setup}`);
}

/** Temporal's two databases with its schema tool, each updated to the latest schema, and our own database. */
export function ensureTemporalSchemas(paths: ClusterPaths, log: Log): void {
  log(
    `Setting up the databases ${clusterDatabase.temporal}, ${clusterDatabase.visibility} (Temporal's schema tool) and ${clusterDatabase.application}`,
  );
  temporalSetup(paths, ['schema'], 'Setting up the schemas');
}

// ---------------------------------------------------------------------------------------------
// The Temporal server and the Web UI server: processes of ours, found again by their pid files.

function pidOf(pidFile: string, binary: string): number | null {
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    // The pid is ours only while it still runs our binary (pids are reused).
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return commandLine.startsWith(binary) ? pid : null;
  } catch {
    return null;
  }
}

function startProcess(
  binary: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
  pidFile: string,
): number {
  const output = openSync(logFile, 'a');
  const child = spawn(binary, args, {
    cwd: projectRoot,
    detached: true,
    stdio: ['ignore', output, output],
    env: { ...process.env, ...env },
  });
  child.unref();
  writeFileSync(pidFile, String(child.pid));
  return child.pid as number;
}

async function waitFor(
  what: string,
  logFile: string,
  pid: number,
  ready: () => Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ready()) return;
    if (!existsSync(`/proc/${pid}`)) throw new ClusterSetupError(`${what} exited at once; see ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new ClusterSetupError(`${what} did not answer within ${timeoutMs / 1000} s; see ${logFile}`);
}

async function stopProcess(pid: number | null, what: string, log: Log): Promise<void> {
  if (pid === null) return;
  log(`Stopping ${what} (pid ${pid})`);
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // it ended meanwhile
  }
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && existsSync(`/proc/${pid}`)) await new Promise((resolve) => setTimeout(resolve, 200));
  if (existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
}

/** The variables deploy/temporal/server.yaml reads (its defaults are the compose deployment's), with the cluster's password. */
export function temporalServerEnvironment(password: string): Record<string, string> {
  return {
    POSTGRES_SEEDS: host,
    DB_PORT: String(clusterPorts.postgresql),
    POSTGRES_USER: clusterDatabase.user,
    POSTGRES_PWD: password,
    BIND_ON_IP: host,
    TEMPORAL_BROADCAST_ADDRESS: host,
    FRONTEND_GRPC_PORT: String(clusterPorts.frontendGrpc),
    FRONTEND_HTTP_PORT: String(clusterPorts.frontendHttp),
    FRONTEND_MEMBERSHIP_PORT: String(clusterPorts.frontendMembership),
    HISTORY_GRPC_PORT: String(clusterPorts.history),
    HISTORY_MEMBERSHIP_PORT: String(clusterPorts.historyMembership),
    MATCHING_GRPC_PORT: String(clusterPorts.matching),
    MATCHING_MEMBERSHIP_PORT: String(clusterPorts.matchingMembership),
    WORKER_GRPC_PORT: String(clusterPorts.worker),
    WORKER_MEMBERSHIP_PORT: String(clusterPorts.workerMembership),
    DYNAMIC_CONFIG_FILE_PATH: join(projectRoot, clusterConfigFiles.dynamicConfig),
    PROMETHEUS_ENDPOINT: `${host}:${clusterPorts.serverMetrics}`,
  };
}

export function temporalServerPid(paths: ClusterPaths = clusterPaths()): number | null {
  return pidOf(paths.pids.temporalServer, paths.tools.temporalServer);
}

/** Starts the Temporal server (PostgreSQL must run) and waits until its frontend answers. */
export async function startTemporalServer(paths: ClusterPaths = clusterPaths(), log: Log = quiet): Promise<void> {
  if (temporalServerPid(paths) !== null) return;
  if (await portAnswers(host, clusterPorts.frontendGrpc)) {
    throw new ClusterSetupError(
      `Port ${clusterPorts.frontendGrpc} is taken by a process that is not this cluster's Temporal server.`,
    );
  }
  log(
    `Starting the Temporal server ${clusterVersions.temporalServer} on ${clusterAddresses.temporal} (log: ${paths.logs.temporalServer})`,
  );
  const pid = startProcess(
    paths.tools.temporalServer,
    ['--config-file', join(projectRoot, clusterConfigFiles.temporalServer), '--allow-no-auth', 'start'],
    temporalServerEnvironment(clusterPassword(paths)),
    paths.logs.temporalServer,
    paths.pids.temporalServer,
  );
  await waitFor(
    'The Temporal server',
    paths.logs.temporalServer,
    pid,
    async () =>
      (await portAnswers(host, clusterPorts.frontendGrpc)) &&
      temporalCli(['operator', 'cluster', 'health']).status === 0,
  );
}

export async function stopTemporalServer(paths: ClusterPaths = clusterPaths(), log: Log = quiet): Promise<void> {
  await stopProcess(temporalServerPid(paths), 'the Temporal server', log);
}

export function uiServerPid(paths: ClusterPaths = clusterPaths()): number | null {
  return pidOf(paths.pids.uiServer, paths.tools.uiServer);
}

export async function startUiServer(paths: ClusterPaths = clusterPaths(), log: Log = quiet): Promise<void> {
  if (uiServerPid(paths) !== null) return;
  if (await portAnswers(host, clusterPorts.webUi)) {
    throw new ClusterSetupError(
      `Port ${clusterPorts.webUi} is taken by a process that is not this cluster's Web UI server.`,
    );
  }
  log(
    `Starting the Web UI server ${clusterVersions.uiServer} on ${clusterAddresses.webUi} (log: ${paths.logs.uiServer})`,
  );
  // The UI server reads <root>/<config>/<env>.yaml: deploy/temporal/ui-server.yaml.
  const config = clusterConfigFiles.uiServer;
  const pid = startProcess(
    paths.tools.uiServer,
    [
      '--root',
      projectRoot,
      '--config',
      config.slice(0, config.lastIndexOf('/')),
      '--env',
      config.slice(config.lastIndexOf('/') + 1).replace(/\.yaml$/, ''),
      'start',
    ],
    {
      TEMPORAL_ADDRESS: clusterAddresses.temporal,
      TEMPORAL_UI_HOST: host,
      TEMPORAL_UI_PORT: String(clusterPorts.webUi),
      TEMPORAL_CORS_ORIGINS: clusterAddresses.webUi,
    },
    paths.logs.uiServer,
    paths.pids.uiServer,
  );
  await waitFor('The Web UI server', paths.logs.uiServer, pid, async () => {
    try {
      return (await fetch(`${clusterAddresses.webUi}/api/v1/settings`)).ok;
    } catch {
      return false;
    }
  });
}

export async function stopUiServer(paths: ClusterPaths = clusterPaths(), log: Log = quiet): Promise<void> {
  await stopProcess(uiServerPid(paths), 'the Web UI server', log);
}

// ---------------------------------------------------------------------------------------------
// The namespace and search attributes, through the operator API (the Temporal CLI).

function temporalCli(args: string[]): { status: number | null; output: string } {
  return run(temporalCliPath(loadConfig()), [...args, '--address', clusterAddresses.temporal], { timeout: 60_000 });
}

export function ensureNamespaceAndSearchAttributes(paths: ClusterPaths, log: Log): void {
  log(
    `Registering the namespace ${clusterNamespace} and ${searchAttributeRegistrations.length} search attributes (temporal operator)`,
  );
  temporalSetup(paths, ['namespace', ...searchAttributeArguments()], 'Registering the namespace and search attributes');
}

/** The search attributes as deploy/temporal/temporal-setup.sh takes them (Name=Type), from src/temporal/searchAttributes.ts. */
export function searchAttributeArguments(): string[] {
  return searchAttributeRegistrations.map(({ name, cliType }) => `${name}=${cliType}`);
}

// ---------------------------------------------------------------------------------------------
// The whole cluster

/** Builds what is missing and starts what is not running; returns when every part answers. */
export async function startCluster(log: Log = quiet, paths: ClusterPaths = clusterPaths()): Promise<void> {
  mkdirSync(paths.home, { recursive: true });
  chmodSync(paths.home, 0o755);
  await ensureClusterTools(paths, log);
  await startPostgresql(paths, log);
  ensureTemporalSchemas(paths, log);
  await startTemporalServer(paths, log);
  ensureNamespaceAndSearchAttributes(paths, log);
  await startUiServer(paths, log);
}

export async function stopCluster(log: Log = quiet, paths: ClusterPaths = clusterPaths()): Promise<void> {
  await stopUiServer(paths, log);
  await stopTemporalServer(paths, log);
  stopPostgresql(paths, log);
}

export function clusterStatus(paths: ClusterPaths = clusterPaths()): ClusterPartStatus[] {
  const postgresPid = existsSync(join(paths.postgresqlData, 'postmaster.pid'))
    ? Number(readFileSync(join(paths.postgresqlData, 'postmaster.pid'), 'utf8').split('\n')[0])
    : null;
  const postgresRunning = postgresqlRunning(paths);
  return [
    {
      part: 'postgresql',
      running: postgresRunning,
      pid: postgresRunning ? postgresPid : null,
      address: clusterAddresses.postgresqlUrl(),
      log: paths.logs.postgresql,
    },
    {
      part: 'temporalServer',
      running: temporalServerPid(paths) !== null,
      pid: temporalServerPid(paths),
      address: clusterAddresses.temporal,
      log: paths.logs.temporalServer,
    },
    {
      part: 'uiServer',
      running: uiServerPid(paths) !== null,
      pid: uiServerPid(paths),
      address: clusterAddresses.webUi,
      log: paths.logs.uiServer,
    },
  ];
}
