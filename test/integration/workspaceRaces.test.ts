// A process of the sandbox that outlives its command (it kills its own command wrapper, so the
// per-command stop never finds it) races the worker's host-side work on the workspace folder:
// it swaps real folders with symlinks to host paths (renameat2 RENAME_EXCHANGE, in a loop)
// between the worker's checks and its uses. On the real Docker engine: whatever the timing, the
// worker never reads, removes or changes anything outside the workspace.
import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { removeLeftoverTestSandboxes, startTestSandbox, type TestSandbox } from '../support/testSandbox.js';

// The daemon swaps pairs with renameat2(RENAME_EXCHANGE): at any moment `bait` is either the real
// folder or the symlink to /proc/self (the worker's own process), `peek` either the real folder or
// the symlink to a host folder with a secret; those swap from the start until the test has read
// (it writes reads-done; the daemon puts them back and answers with reads-stopped). Each `victimN` is a real
// folder with the names of the host's canary files, `trapN` a symlink to the canary folder: those
// start swapping when the first file in the workspace is deleted (a rebuild's rm -r is under way;
// nothing else the worker does deletes), so that the race with rm -r is won reliably, not by chance.
const victims = 20;
const swapper = `
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
os.chdir('/workspace')
def swap(pairs, until=lambda: False):
    while not until():
        for a, b in pairs:
            libc.renameat2(-100, a, -100, b, 2)
def race_reads():
    pairs = [(b'bait', b'lure'), (b'peek', b'spy')]
    swap(pairs, lambda: os.path.exists('reads-done'))
    for a, b in pairs:
        if os.path.islink(a):
            libc.renameat2(-100, a, -100, b, 2)
    os.rename('reads-done', 'reads-stopped')
threading.Thread(target=race_reads).start()
fd = libc.inotify_init1(0)
for folder in [b'.', b'bait', b'peek'] + [b'victim%d' % n for n in range(${victims})]:
    libc.inotify_add_watch(fd, folder, 0x200)  # IN_DELETE
os.read(fd, 4096)
swap([(b'victim%d' % n, b'trap%d' % n) for n in range(${victims})])
`;

/** Starts the swapper as a setsid daemon, then kills the command's wrapper (the parent of `sh -c`). */
const leaveDaemonBehind =
  'setsid -f python3 /workspace/swap.py </dev/null >/dev/null 2>&1; sleep 0.5; echo started; kill -9 $PPID';

let scratch: string;
let secrets: string;
let canaries: string;
let sandbox: TestSandbox;
const canaryNames = Array.from({ length: 50 }, (_, index) => `canary-${index}.txt`);

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'workspace-races-'));
  secrets = join(scratch, 'secrets');
  canaries = join(scratch, 'canaries');
  await mkdir(secrets);
  await writeFile(join(secrets, 'secret.txt'), 'HOST SECRET outside the workspace\n');
  await mkdir(canaries);
  for (const name of canaryNames) await writeFile(join(canaries, name), `${name}\n`);
  sandbox = await startTestSandbox({
    files: {
      'swap.py': swapper,
      'bait/environ': 'harmless\n',
      'peek/secret.txt': 'the workspace’s own file\n',
      ...Object.fromEntries(
        Array.from({ length: victims }, (_, n) =>
          canaryNames.map((name) => [`victim${n}/${name}`, 'workspace copy\n']),
        ).flat(),
      ),
    },
    symlinks: {
      lure: '/proc/self',
      spy: secrets,
      ...Object.fromEntries(Array.from({ length: victims }, (_, n) => [`trap${n}`, canaries])),
    },
  });
});

after(async () => {
  await sandbox?.stop();
  await rm(scratch, { recursive: true, force: true });
  assert.equal(await removeLeftoverTestSandboxes(), 0, 'a sandbox container was left behind');
});

async function assertCanariesIntact(): Promise<void> {
  assert.deepEqual((await readdir(canaries)).sort(), [...canaryNames].sort(), 'a canary file outside was removed');
  for (const name of canaryNames) assert.equal(await readFile(join(canaries, name), 'utf8'), `${name}\n`);
  assert.equal(await readFile(join(secrets, 'secret.txt'), 'utf8'), 'HOST SECRET outside the workspace\n');
}

test('a daemon that killed its command wrapper and swaps folders with symlinks to host paths reaches nothing outside the workspace', async () => {
  // The command ends (its wrapper killed by the command itself) with the daemon still swapping.
  let commandError: unknown = null;
  const outcome = await sandbox.run(leaveDaemonBehind).catch((error: unknown) => {
    commandError = error;
    return null;
  });
  const survivors = await sandbox.sandboxUserProcesses();

  // File tools while the daemon may still swap: each read must give the workspace's own file,
  // never the worker's environment (a "binary file") or the host's secret.
  const reads: string[] = [];
  for (let round = 0; round < 40; round++) {
    for (const path of ['bait/environ', 'peek/secret.txt']) {
      const read = await sandbox.tool('read_file', { path }).catch((error: Error) => ({ content: error.message }));
      reads.push(`${path}: ${read.content.slice(0, 200)}`);
    }
  }
  const leaks = reads.filter((read) => /HOST SECRET|is a binary file/.test(read));

  // The reads' race ends with the folders in place (or with the daemon gone), so that a rebuild's walk gets through.
  await writeFile(join(sandbox.workspace, 'reads-done'), '');
  while (
    !(await access(join(sandbox.workspace, 'reads-stopped')).then(
      () => true,
      () => false,
    )) &&
    (await sandbox.sandboxUserProcesses()).length > 0
  )
    await new Promise((resolve) => setTimeout(resolve, 50));

  // Rebuilds of the workspace (the run's log and the folder differ) remove the old folder with rm -r.
  for (let round = 0; round < 10; round++) {
    await sandbox.host
      .prepare({
        sandboxId: sandbox.sandboxId,
        workflowId: `test-workflow-${sandbox.sandboxId}`,
        runId: 'test-run',
        log: { snapshotId: sandbox.snapshotId, mutations: [], digest: sandbox.snapshotId },
        limits: sandbox.limits,
      })
      .catch(() => undefined);
  }

  await assertCanariesIntact();
  assert.deepEqual(leaks, [], 'a read went through a swapped symlink out of the workspace');
  // The daemon's last swap may have left a symlink in place: a read through it is refused, never followed.
  assert.deepEqual(
    reads.filter((read) => !/\t(harmless|the workspace’s own file)$|leads outside the repository/.test(read)),
    [],
    'a read neither gave the workspace’s own file nor refused the path',
  );
  assert.equal(commandError, null, `the command's result could not be taken: ${String(commandError)}`);
  assert.match(outcome?.content ?? '', /started/);
  assert.deepEqual(survivors, [], 'a process of the sandbox user outlived its command');
  assert.deepEqual(await sandbox.sandboxUserProcesses(), []);
});
