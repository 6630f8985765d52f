// `npm run cluster`'s PostgreSQL on a real server (Debian's PostgreSQL 15, the cluster's own data
// folder in a temporary home; no Temporal server is built): a new cluster takes only its generated
// password, a cluster created with the former fixed password gets a generated one, and neither
// password is in what the launcher says or in PostgreSQL's log. The cluster's ports are moved
// (DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET) so that a cluster running on this machine is not touched.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { postgresBinaries, startTestPostgres, type TestPostgres } from '../support/postgres.js';

/** The first cluster port offset whose PostgreSQL port nothing listens on. */
async function freeOffset(): Promise<string> {
  for (let offset = 200; offset >= 20; offset -= 20) {
    const taken = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port: 55432 + offset });
      socket.once('connect', () => resolve(socket.destroy() !== undefined));
      socket.once('error', () => resolve(false));
    });
    if (!taken) return String(offset);
  }
  throw new Error('every cluster port offset has a PostgreSQL on it');
}

process.env.DURABLE_DEBUGGER_CLUSTER_PORT_OFFSET = await freeOffset();
const settings = await import('../../deploy/cluster/clusterSettings.js');
const launcher = await import('../../deploy/cluster/clusterLauncher.js');

let home: string;
let paths: ReturnType<typeof settings.clusterPaths>;
const said: string[] = [];
const log = (line: string) => said.push(line);

before(async () => {
  postgresBinaries(); // says how to install PostgreSQL when it is missing
  home = await mkdtemp(join(tmpdir(), 'cluster-password-'));
  await chmod(home, 0o755); // the postgres user reads its data folder below it
  paths = settings.clusterPaths({ DURABLE_DEBUGGER_CLUSTER_HOME: home });
});
after(async () => {
  if (paths) launcher.stopPostgresql(paths);
  if (home) await rm(home, { recursive: true, force: true });
});

/** Logs in to the cluster's PostgreSQL with a password: null when accepted, else the server's error code. */
async function login(password: string): Promise<string | null> {
  const client = new pg.Client({ ...settings.clusterAddresses.postgresql, password, database: 'postgres' });
  try {
    await client.connect();
    return null;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

test('a new cluster takes its generated password only; a cluster made with the fixed one gets a generated one', async () => {
  await launcher.startPostgresql(paths, log);
  const first = settings.clusterPassword(paths);
  assert.equal((await stat(paths.passwordFile)).mode & 0o777, 0o600);
  assert.equal(await login(first), null);
  assert.equal(await login('temporal'), '28P01', 'the former fixed password is refused');

  // A cluster from before: the fixed password, and no password file.
  const client = new pg.Client({ ...settings.clusterAddresses.postgresql, password: first, database: 'postgres' });
  await client.connect();
  await client.query(`ALTER ROLE ${settings.clusterDatabase.user} PASSWORD 'temporal'`);
  await client.end();
  await rm(paths.passwordFile);
  launcher.stopPostgresql(paths);
  await launcher.startPostgresql(paths, log);
  const second = settings.clusterPassword(paths);
  assert.notEqual(second, first);
  assert.equal(await login(second), null);
  assert.equal(await login('temporal'), '28P01');
  assert.match(said.join('\n'), /Replacing the fixed PostgreSQL password of this cluster with a generated one/);

  const shown = [said.join('\n'), await readFile(paths.logs.postgresql, 'utf8')].join('\n');
  for (const password of [first, second]) assert.ok(!shown.includes(password), 'no password in the logs');
  for (const part of launcher.clusterStatus(paths)) assert.ok(!part.address.includes(second));
});

test('the SCRAM verifier set for a replaced password is the one PostgreSQL makes of it', async () => {
  let server: TestPostgres | null = null;
  try {
    server = await startTestPostgres();
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query(`SET password_encryption = 'scram-sha-256'`);
    await client.query(`CREATE ROLE verifier_probe LOGIN PASSWORD 'pencil and paper'`);
    const stored = (await client.query(`SELECT rolpassword FROM pg_authid WHERE rolname = 'verifier_probe'`)).rows[0]
      .rolpassword as string;
    await client.end();
    const [, iterations, salt] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(stored) ?? [];
    assert.equal(
      launcher.scramVerifier('pencil and paper', Buffer.from(salt as string, 'base64'), Number(iterations)),
      stored,
    );
  } finally {
    await server?.stop();
  }
});
