// The content store in PostgreSQL, for worker hosts that share no folder: two tables, created on
// first use, whose rows are named by their SHA-256. A write is INSERT … ON CONFLICT DO NOTHING, so
// two hosts writing the same blob at once need no lock (both write the same bytes; one row stays).
// A server that restarts or is briefly unreachable is waited for, so that a database restart
// does not fail the activity that happened to be writing.
import pg from 'pg';
import { checkDigest, type Tree } from '../workspace/tree.js';
import { verifiedBlob, verifiedTree, type ContentStore } from './contentStore.js';

export const blobsTable = 'durable_debugger_blobs';
export const treesTable = 'durable_debugger_trees';

/** Above this size, ask whether the blob is there before sending it (a repository snapshotted again). */
const sendOnlyIfMissingBytes = 64 * 1024;

/** Connection failures (and a server starting or shutting down) that are worth waiting out. */
const transientCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

export class PostgresStore implements ContentStore {
  private readonly pool: pg.Pool;
  private tables: Promise<void> | null = null;
  /** The URL without its password or parameters: safe to print. */
  readonly location: string;

  constructor(
    url: string,
    private readonly options: { waitForServerMs?: number } = {},
  ) {
    this.location = redactedUrl(url);
    this.pool = new pg.Pool({
      connectionString: url,
      max: 4,
      idleTimeoutMillis: 10_000,
      connectionTimeoutMillis: 10_000,
      allowExitOnIdle: true,
    });
    // An idle connection closed by the server (a restart) leaves the pool; the next query opens a new one.
    this.pool.on('error', () => undefined);
  }

  whereIs(blob: string): string {
    return `${this.location} (table ${blobsTable}, id ${checkDigest(blob, 'blob id')})`;
  }

  async putBlob(blob: string, content: Buffer): Promise<void> {
    checkDigest(blob, 'blob id');
    await this.query(async () => {
      if (content.length > sendOnlyIfMissingBytes) {
        const present = await this.pool.query(`SELECT 1 FROM ${blobsTable} WHERE id = $1`, [blob]);
        if (present.rowCount) return;
      }
      await this.pool.query(`INSERT INTO ${blobsTable} (id, content) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [
        blob,
        content,
      ]);
    });
  }

  async getBlob(blob: string): Promise<Buffer> {
    checkDigest(blob, 'blob id');
    const result = await this.query(() =>
      this.pool.query<{ content: Buffer }>(`SELECT content FROM ${blobsTable} WHERE id = $1`, [blob]),
    );
    const row = result.rows[0];
    if (!row) throw new Error(`blob ${blob} is not in the content store ${this.location}`);
    return verifiedBlob(this, blob, row.content);
  }

  async putTree(tree: Tree): Promise<void> {
    checkDigest(tree.digest, 'tree digest');
    await this.query(() =>
      this.pool.query(`INSERT INTO ${treesTable} (digest, tree) VALUES ($1, $2) ON CONFLICT (digest) DO NOTHING`, [
        tree.digest,
        JSON.stringify(tree),
      ]),
    );
  }

  async getTree(digest: string): Promise<Tree> {
    checkDigest(digest, 'tree digest');
    const result = await this.query(() =>
      this.pool.query<{ tree: string }>(`SELECT tree FROM ${treesTable} WHERE digest = $1`, [digest]),
    );
    const row = result.rows[0];
    if (!row) throw new Error(`snapshot tree ${digest} is not in the content store ${this.location}`);
    return verifiedTree(this, digest, row.tree);
  }

  describe(): string {
    return `PostgreSQL ${this.location}`;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Runs `work` once the tables exist, waiting out a server that is restarting. */
  private async query<T>(work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + (this.options.waitForServerMs ?? 60_000);
    for (let wait = 250; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        await this.ensureTables();
        return await work();
      } catch (error) {
        if (!isTransient(error) || Date.now() + wait > deadline) throw this.explained(error);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /** The tables, created once per process; idempotent, and serialized between hosts starting at once. */
  private ensureTables(): Promise<void> {
    this.tables ??= this.createTables().catch((error: unknown) => {
      this.tables = null;
      throw error;
    });
    return this.tables;
  }

  private async createTables(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Two `CREATE TABLE IF NOT EXISTS` racing can both try to create the table; one waits here instead.
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('${blobsTable}'))`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${blobsTable} (id char(64) PRIMARY KEY, content bytea NOT NULL, stored_at timestamptz NOT NULL DEFAULT now())`,
      );
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${treesTable} (digest char(64) PRIMARY KEY, tree text NOT NULL, stored_at timestamptz NOT NULL DEFAULT now())`,
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** A failure that says what to do: which store, and what was wrong with it. */
  private explained(error: unknown): Error {
    const code = (error as { code?: string }).code;
    const message = (error as Error).message;
    if (code === '3D000') {
      return new Error(
        `The content store's database does not exist (${this.location}): create it (createdb), or point DURABLE_DEBUGGER_STORE at another database.`,
      );
    }
    if (code === '28P01' || code === '28000') {
      return new Error(
        `The content store ${this.location} refused the login (${message}): check the user and password in DURABLE_DEBUGGER_STORE.`,
      );
    }
    if (isTransient(error))
      return new Error(
        `The content store ${this.location} does not answer (${message}): start PostgreSQL, or fix DURABLE_DEBUGGER_STORE.`,
      );
    return error as Error;
  }
}

function isTransient(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  if (code && transientCodes.has(code)) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|the database system is (starting up|shutting down)/i.test(
    message ?? '',
  );
}

/** postgres://user@host:port/database, without password or query parameters. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username ? `${decodeURIComponent(parsed.username)}@` : '';
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return 'postgres://(an unreadable URL)';
  }
}
