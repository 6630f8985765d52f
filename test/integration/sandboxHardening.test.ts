// The sandbox against hostile commands, on the real Docker engine: each test runs something a
// buggy or malicious repository could run, checks that the protection held, and then checks
// that the sandbox still works (`echo ok`) with no process of the sandbox user left behind.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, test } from 'node:test';
import { SandboxNeedsPrepareError } from '../../src/sandbox/sandboxHost.js';
import { removeLeftoverTestSandboxes, startTestSandbox, type TestSandbox } from '../support/testSandbox.js';

const memoryMb = 256;
const pids = 96;
const tmpMb = 16;
const fileSizeMb = 8;
const cpus = 1.5;
const commandTimeoutSeconds = 3;
let sandbox: TestSandbox;

before(async () => {
  process.env.ANTHROPIC_API_KEY = 'sk-ant-test-secret-that-must-not-leak';
  sandbox = await startTestSandbox({ limits: { memoryMb, pids, tmpMb, fileSizeMb, cpus, commandTimeoutSeconds } });
});

after(async () => {
  await sandbox?.stop();
  assert.equal(await removeLeftoverTestSandboxes(), 0, 'a sandbox container was left behind');
});

/** The sandbox still runs commands, and nothing a previous command started is alive. */
async function assertStillUsable(): Promise<void> {
  assert.deepEqual(await sandbox.sandboxUserProcesses(), [], 'a process of the sandbox user survived its command');
  const outcome = await sandbox.run('echo ok');
  assert.match(outcome.content, /^Exit code: 0\n\nok$/);
}

/** Peak growth of this process's resident memory while `work` runs. */
async function peakMemoryGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 25);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growthMb: (peak - baseline) / 1024 / 1024 };
  } finally {
    clearInterval(sampler);
  }
}

function printedBytes(observation: string): number {
  const match = observation.match(/The command printed (\d+) bytes; (\d+) bytes from the middle were dropped/);
  assert.ok(match, `the observation does not say how much was dropped:\n${observation.slice(0, 500)}`);
  return Number(match[1]);
}

test('commands run as a non-root user, with every capability dropped and no way to gain privileges', async () => {
  const outcome = await sandbox.run('id -u; id -g; grep -E "^(CapEff|CapBnd|CapPrm|NoNewPrivs)" /proc/self/status');
  assert.match(outcome.content, /^Exit code: 0/);
  const [uid, gid, ...status] = outcome.content.split('\n\n')[1]?.split('\n') ?? [];
  assert.notEqual(uid, '0');
  assert.notEqual(gid, '0');
  assert.deepEqual(status, [
    'CapPrm:\t0000000000000000',
    'CapEff:\t0000000000000000',
    'CapBnd:\t0000000000000000',
    'NoNewPrivs:\t1',
  ]);
  await assertStillUsable();
});

test('the container has no network, no Docker socket, no host path but its workspace, and none of the worker’s secrets', async () => {
  const container = await sandbox.container();
  const info = await container.inspect();
  assert.equal(info.HostConfig.NetworkMode, 'none');
  assert.deepEqual(
    info.Mounts.map((mount) => ({ type: mount.Type, source: mount.Source, destination: mount.Destination })),
    [{ type: 'bind', source: sandbox.workspace, destination: '/workspace' }],
  );

  // A server on the host's loopback: reachable from a container on the host network.
  const listener: Server = createServer((socket) => socket.end('hello from the host\n'));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as { port: number }).port;
  try {
    const probe = [
      'import socket',
      `for host, port in [("127.0.0.1", ${port}), ("1.1.1.1", 53), ("8.8.8.8", 443)]:`,
      '    try:',
      '        socket.create_connection((host, port), timeout=2).close()',
      '        print("reached", host, port)',
      '    except OSError as error:',
      '        print("unreachable", host, port, error.strerror)',
      'try:',
      '    socket.getaddrinfo("example.com", 443)',
      '    print("resolved example.com")',
      'except OSError as error:',
      '    print("no name resolution")',
    ].join('\n');
    const outcome = await sandbox.run(`python3 -c '${probe}'; cat /proc/net/dev | tail -n +3 | cut -d: -f1`);
    assert.doesNotMatch(outcome.content, /reached|resolved/);
    assert.equal(outcome.content.match(/^unreachable /gm)?.length, 3, outcome.content);
    assert.match(outcome.content, /no name resolution\n\s*lo$/, 'the only network interface is loopback');
  } finally {
    listener.close();
  }

  const outcome = await sandbox.run(
    'ls -l /var/run/docker.sock /run/docker.sock 2>&1; env; echo ---; grep -vE " (proc|tmpfs|sysfs|cgroup|devpts|mqueue|overlay|cgroup2) " /proc/mounts | cut -d" " -f2',
  );
  assert.match(outcome.content, /cannot access '\/var\/run\/docker\.sock': No such file or directory/);
  assert.match(outcome.content, /cannot access '\/run\/docker\.sock': No such file or directory/);
  assert.doesNotMatch(outcome.content, /ANTHROPIC|sk-ant-test-secret|TEMPORAL|DURABLE_DEBUGGER/);
  // Besides the workspace, only files the engine itself provides (its init, the hostname).
  const mounts = outcome.content.split('---\n')[1]?.trim().split('\n') ?? [];
  const engineFiles = [
    '/etc/hostname',
    '/etc/hosts',
    '/etc/resolv.conf',
    '/usr/sbin/docker-init',
    '/sbin/docker-init',
    '/run/podman-init',
  ];
  assert.ok(mounts.includes('/workspace'));
  assert.deepEqual(
    mounts.filter((mount) => mount !== '/workspace' && !engineFiles.includes(mount)),
    [],
  );
  await assertStillUsable();
});

test('a fork bomb hits the process limit and the sandbox recovers', async () => {
  const limit = await sandbox.run('cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max');
  assert.match(limit.content, new RegExp(`\\n${pids}$`));
  const started = Date.now();
  const outcome = await sandbox.run('bash -c ":(){ :|:& };:"; sleep 60');
  assert.ok(Date.now() - started < (commandTimeoutSeconds + 6) * 1000, 'the fork bomb was not stopped in time');
  assert.match(
    outcome.content,
    /Resource temporarily unavailable|Cannot fork|retry/,
    'the bomb never hit the process limit',
  );
  await assertStillUsable();
});

test('a memory hog is killed with exit code 137 and the container stays usable', async () => {
  const limit = await sandbox.run(
    'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; cat /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.swap.max',
  );
  assert.match(
    limit.content,
    new RegExp(`\\n${memoryMb * 1024 * 1024}\\n(${memoryMb * 1024 * 1024}|0)$`),
    'memory or swap not limited',
  );
  // Stops by itself at 2 GB, so that a missing limit fails the test instead of the machine.
  // Reclaiming memory at the limit is slow on a busy machine: this is about memory, not time.
  const outcome = await sandbox.run(
    "python3 -c \"chunks = [b'x' * 10**7 for _ in range(200)]; print('allocated 2 GB')\"",
    { commandTimeoutSeconds: 60 },
  );
  assert.match(
    outcome.content,
    /^The command ran out of memory \(256 MB\): the kernel killed a process of it \(exit 137\); raise it with --memory \(run, start\), sandbox\.memoryMb in the run input, or "sandbox": \{"memoryMb": 2048\} in durable-debugger\.json\. Exit code: 137/,
  );
  assert.doesNotMatch(outcome.content, /allocated 2 GB/);
  await assertStillUsable();
});

test('out of memory is told apart: Node’s heap filling up is named, a process that kills itself is not', async () => {
  // V8 stops when its heap is full (exit 134; its default heap is about half the container's memory, here 64 MB).
  const heap = await sandbox.run(
    'node --max-old-space-size=64 -e "const a = []; for (;;) a.push(new Array(1e5).fill(1))"',
    {
      commandTimeoutSeconds: 60,
    },
  );
  assert.match(
    heap.content,
    /^The command ran out of memory \(256 MB\): Node’s heap, about half of the sandbox’s memory, filled up/,
  );
  const selfKilled = await sandbox.run('kill -9 $$');
  assert.match(selfKilled.content, /^The command was killed \(exit code 137\)\.\n/);
  // A later failure of another kind is not blamed on the earlier out-of-memory end.
  const failed = await sandbox.run('exit 3');
  assert.match(failed.content, /^Exit code: 3\n/);
  await assertStillUsable();
});

test('an endless output flood (yes) is capped and stopped at its timeout, with bounded worker memory', async () => {
  const started = Date.now();
  const timeoutSeconds = 6;
  const { result: outcome, growthMb } = await peakMemoryGrowth(() =>
    sandbox.run('yes', { commandTimeoutSeconds: timeoutSeconds }),
  );
  const elapsedMs = Date.now() - started;
  const printed = printedBytes(outcome.content);
  console.log(
    `yes: ${Math.round(printed / 1e6)} MB printed in ${elapsedMs} ms; worker memory grew by at most ${growthMb.toFixed(0)} MB`,
  );
  assert.match(outcome.content, new RegExp(`^The command timed out after ${timeoutSeconds} s and was stopped`));
  assert.ok(elapsedMs < (timeoutSeconds + 4) * 1000, `took ${elapsedMs} ms`);
  assert.ok(outcome.content.length <= sandbox.settings.observation.maxBytes + 200, 'the observation is not capped');
  // Holding what was printed (as buffers, then as a string) would take more than twice the bound.
  assert.ok(printed > 150e6, `only ${printed} bytes were printed: too few to tell a bounded worker from a leaking one`);
  assert.ok(growthMb < 150, `worker memory grew by ${growthMb.toFixed(0)} MB`);
  await assertStillUsable();
});

test('200 MB of output is capped (head and tail kept, the rest counted) with bounded worker memory', async () => {
  const { result: outcome, growthMb } = await peakMemoryGrowth(() =>
    sandbox.run('echo FIRST-LINE; head -c 200000000 /dev/zero | tr "\\0" "y"; echo; echo LAST-LINE', {
      commandTimeoutSeconds: 120,
    }),
  );
  console.log(`200 MB of output: worker memory grew by at most ${growthMb.toFixed(0)} MB`);
  assert.match(outcome.content, /^Exit code: 0\n/);
  assert.equal(printedBytes(outcome.content), 200_000_000 + 'FIRST-LINE\n'.length + 1 + 'LAST-LINE\n'.length);
  assert.match(outcome.content, /FIRST-LINE/);
  assert.match(outcome.content, /LAST-LINE$/);
  assert.ok(outcome.content.length <= sandbox.settings.observation.maxBytes + 200);
  assert.ok(growthMb < 150, `worker memory grew by ${growthMb.toFixed(0)} MB`);
  await assertStillUsable();
});

test('the CPU limit is applied', async () => {
  const quota = await sandbox.run(
    'cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us 2>/dev/null || cat /sys/fs/cgroup/cpu.max',
  );
  const [limit, period] = (quota.content.split('\n\n')[1] ?? '').split(/\s+/).map(Number);
  assert.equal((limit ?? 0) / (period ?? 1), cpus, quota.content);
});

test('a file larger than the file-size limit cannot be written, even in the workspace', async () => {
  const outcome = await sandbox.run(
    `head -c ${fileSizeMb * 2}M /dev/zero > big; echo exit $?; du -m big | cut -f1; rm -f big`,
  );
  assert.match(outcome.content, /exit 153\n/, 'the write was not stopped by the file-size limit (SIGXFSZ)');
  // The shell's "File size limit exceeded" (stderr) may come before or after the size (stdout).
  assert.match(outcome.content, new RegExp(`\\n${fileSizeMb}(\\n|$)`));
  await assertStillUsable();
});

test('writing outside the workspace fails: the root is read-only and /tmp is a small tmpfs', async () => {
  const outcome = await sandbox.run(
    [
      'for path in /etc/evil /usr/local/bin/evil /var/tmp/evil /run/lock/evil /evil; do touch $path 2>&1; done',
      // Files under the file-size limit, more of them than /tmp holds.
      `for i in $(seq ${Math.ceil((tmpMb * 2) / (fileSizeMb - 2))}); do head -c ${fileSizeMb - 2}M /dev/zero > /tmp/fill$i || break; done`,
      'echo tmp holds $(du -sm /tmp | cut -f1) MB; rm -f /tmp/fill*',
      'touch /workspace/inside && echo workspace writable',
    ].join('; '),
  );
  // /var/tmp and /run/lock are writable by everyone on a normal root filesystem.
  for (const path of ['/etc/evil', '/usr/local/bin/evil', '/var/tmp/evil', '/run/lock/evil', '/evil']) {
    assert.match(outcome.content, new RegExp(`cannot touch '${path}': Read-only file system`));
  }
  assert.match(outcome.content, /No space left on device/);
  const held = Number(outcome.content.match(/tmp holds (\d+) MB/)?.[1]);
  assert.ok(held <= tmpMb, `/tmp took ${held} MB`);
  assert.match(outcome.content, /workspace writable/);
  await assertStillUsable();
});

test('a hanging test stops at its timeout together with a setsid background child', async () => {
  const hangingSandbox = await startTestSandbox({
    limits: { commandTimeoutSeconds },
    testCommand: 'setsid sh -c "sleep 1000" & python3 -c "import time; time.sleep(1000)"',
  });
  try {
    const started = Date.now();
    const outcome = await hangingSandbox.tool('run_tests', {});
    const elapsedMs = Date.now() - started;
    assert.match(outcome.content, new RegExp(`The command timed out after ${commandTimeoutSeconds} s and was stopped`));
    assert.ok(elapsedMs >= commandTimeoutSeconds * 1000, `stopped early, after ${elapsedMs} ms`);
    assert.ok(elapsedMs < (commandTimeoutSeconds + 4) * 1000, `stopped late, after ${elapsedMs} ms`);
    assert.deepEqual(await hangingSandbox.sandboxUserProcesses(), [], 'the setsid child survived');
    assert.match((await hangingSandbox.run('echo ok')).content, /\n\nok$/);
  } finally {
    await hangingSandbox.stop();
  }
});

test('a command that leaves a background process behind returns when it exits, and the process is stopped', async () => {
  const started = Date.now();
  const outcome = await sandbox.run('sleep 1000 & setsid sleep 1000 & echo started');
  const elapsedMs = Date.now() - started;
  assert.match(outcome.content, /^Exit code: 0\n\nstarted$/);
  // Docker itself closes the stream 2 s after the exec exits; other engines wait for the leftovers.
  assert.ok(elapsedMs < 1800, `waited ${elapsedMs} ms for the background processes`);
  await assertStillUsable();
});

test('cancelling a command stops it at once, with everything it started', async () => {
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(new Error('cancelled by the test')), 1000);
  await assert.rejects(
    sandbox.run('setsid sleep 1000 & sleep 1000', { hooks: { signal: controller.signal } }),
    /cancelled by the test/,
  );
  assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms to stop`);
  await assertStillUsable();
});

test('a long command reports progress while it runs (activity heartbeats)', async () => {
  const ticks: number[] = [];
  const outcome = await sandbox.run('sleep 2.5; echo done', {
    hooks: { onProgress: (elapsedMs) => ticks.push(elapsedMs) },
  });
  assert.match(outcome.content, /\n\ndone$/);
  assert.ok(ticks.length >= 2, `progress was reported ${ticks.length} times`);
  await assertStillUsable();
});

test('a container killed while a command runs is reported as a lost sandbox, not as the command’s exit code', async () => {
  const container = await sandbox.container();
  setTimeout(() => void container.kill().catch(() => undefined), 1000);
  await assert.rejects(sandbox.run('sleep 30'), SandboxNeedsPrepareError);
  // The next call finds the sandbox gone too, until the workflow prepares it again.
  await assert.rejects(sandbox.run('echo ok'), SandboxNeedsPrepareError);
  const prepared = await sandbox.host.prepare({
    sandboxId: sandbox.sandboxId,
    workflowId: 'test-workflow',
    runId: 'test-run',
    log: sandbox.log,
    limits: sandbox.limits,
  });
  assert.equal(prepared.containerCreated, true);
  await assertStillUsable();
});
