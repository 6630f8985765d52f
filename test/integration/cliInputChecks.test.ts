// The CLI checks what it is given before it connects to Temporal or starts a server or a worker:
// each mistake is answered at once, in one line, with exit code 2. The "server" here is a TCP
// port that counts connections: a check that came after connecting would show up there (and
// would hang, since nothing answers).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { killCliProcesses, runCli } from '../support/cli.js';

let folder: string;
let listener: Server;
let connections = 0;
let address: string;

before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'cli-input-checks-'));
  listener = createServer((socket) => {
    connections += 1;
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(listener.address() as { port: number }).port}`;
});
after(async () => {
  killCliProcesses();
  await new Promise((resolve) => listener.close(resolve));
  await rm(folder, { recursive: true, force: true });
});

async function timed(args: string[]) {
  const started = Date.now();
  const result = await runCli({ address, home: join(folder, 'home') }, args, { ANTHROPIC_API_KEY: 'sk-test' });
  return { ...result, ms: Date.now() - started };
}

test('run, start and apply refuse a bad repository or options at once, in one line, before connecting', async () => {
  const file = join(folder, 'notes.txt');
  await writeFile(file, 'not a repository\n');
  const plain = join(folder, 'plain');
  await mkdir(plain);
  await writeFile(join(plain, 'test_x.py'), 'def test_x():\n    assert False\n');
  const fresh = join(folder, 'fresh');
  await mkdir(fresh);
  execFileSync('git', ['init', '-q', fresh]);
  const committed = join(folder, 'committed');
  await mkdir(committed);
  await writeFile(join(committed, 'test_x.py'), 'def test_x():\n    assert False\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', committed, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args]);
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'first');
  git('branch', 'durable-debugger/taken-id');

  // How long the CLI takes to answer at all on this machine (loading it), printed beside the
  // refusals for comparison. What shows that they come before connecting is the listener: it
  // counts connections and never answers, so a check made after connecting would hang there.
  const version = await timed(['--version']);
  const cases: Array<[string[], RegExp]> = [
    [['run', join(folder, 'missing')], /^error: The repository ".*missing" does not exist\.$/],
    [['start', join(folder, 'missing')], /^error: The repository ".*missing" does not exist\.$/],
    [
      ['run', file],
      /^error: ".*notes\.txt" is a file, not a folder: give the folder of the repository whose tests fail\.$/,
    ],
    [['start', file], /is a file, not a folder/],
    [
      ['run', plain, '--apply'],
      /^error: --apply commits the fix on a new branch of a git repository, and ".*plain" is not one: /,
    ],
    [
      ['run', fresh, '--apply'],
      /^error: --apply needs a commit to branch from, and ".*fresh" has none yet: commit its files first\.$/,
    ],
    [
      ['run', committed, '--apply', '--id', 'taken-id'],
      /^error: --apply would create the branch durable-debugger\/taken-id, which already exists in ".*committed": delete it, or choose another --id\.$/,
    ],
    [['run', plain, '--first-wins'], /^error: Invalid options: --first-wins: needs --attempts above 1$/],
    [['start', plain, '--approval-timeout', '5'], /^error: Invalid options: --approval-timeout: needs --approve$/],
    [
      ['run', plain, '--attempts', '4', '--max-iterations', '2'],
      /^error: Invalid options: --attempts: 4 attempts need at least as many iterations \(--max-iterations is 2\)/,
    ],
    [
      ['apply', 'some-run', '--repo', plain],
      /^error: Not applied, nothing changed\. ".*plain" is not a git repository: apply the patch by hand with `durable-debugger result some-run --patch \| git apply`/,
    ],
    [['apply', 'some-run', '--repo', file], /is a file, not a folder/],
  ];
  const times: string[] = [];
  for (const [args, expected] of cases) {
    const result = await timed(args);
    const said = result.output.trim();
    assert.equal(result.code, 2, `${args.join(' ')}: ${said}`);
    assert.equal(said.split('\n').length, 1, `${args.join(' ')} answers in one line: ${said}`);
    assert.match(said, expected, args.join(' '));
    times.push(`${args[0]} ${result.ms} ms`);
  }
  console.log(`--version ${version.ms} ms; ${times.join(', ')}`);
  assert.equal(connections, 0, 'nothing connected to the Temporal address');
});
