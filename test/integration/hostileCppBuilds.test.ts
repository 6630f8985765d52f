// A hostile C/C++ build, through the real builder, Docker and registry proxy: a CMakeLists.txt
// whose configure step (run in the build, as every C/C++ environment configures and builds its
// repository once) tries to reach the Temporal server's port and a host that is no package
// registry, with CMake's own file(DOWNLOAD) (which goes through the proxy) and with a raw socket
// from execute_process (which has no way out at all). Each attempt must fail and be recorded,
// the build's output must name the refused targets, nothing may reach the stand-in listener on
// the host, and the environment must still build (Debian's packages came through the proxy).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { connectDocker } from '../../src/sandbox/container/container.js';
import { EnvironmentBuilder } from '../../src/sandbox/environment/imageBuilder.js';
import { FolderStore } from '../../src/sandbox/store/folderStore.js';
import { sha256, treeDigest, type TreeEntry } from '../../src/sandbox/workspace/tree.js';

const docker = connectDocker();
const sandboxImage = process.env.DURABLE_DEBUGGER_SANDBOX_IMAGE ?? 'durable-debugger-sandbox:1';
let scratch: string;
let listener: Server;
const connections: string[] = [];
const images = new Set<string>();

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hostile-cpp-'));
  // A stand-in for a service on the host's loopback (as Temporal's port is): any connection is recorded.
  listener = createServer((socket) => {
    connections.push('connected');
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', () => resolve()));
});

after(async () => {
  listener?.close();
  for (const image of images)
    await docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});

/** A CMake project whose configure step tries each target, writing what happened into its build folder. */
function hostileCMakeLists(targets: { temporal: string; standIn: string }): string {
  const download = (name: string, url: string) =>
    [
      `file(DOWNLOAD "${url}" "\${CMAKE_BINARY_DIR}/${name}.out" STATUS ${name}_status TIMEOUT 20)`,
      `list(GET ${name}_status 0 ${name}_code)`,
      `file(APPEND "\${CMAKE_BINARY_DIR}/hostile-attempts.txt" "download ${name}: \${${name}_code} \${${name}_status}\\n")`,
    ].join('\n');
  const socket = (name: string, hostPort: string) => {
    const [host, port] = hostPort.split(':');
    return [
      `execute_process(COMMAND python3 -c "import socket; socket.create_connection(('${host}', ${port}), timeout=10); print('connected')"`,
      `  RESULT_VARIABLE ${name}_result OUTPUT_VARIABLE ${name}_output ERROR_VARIABLE ${name}_error)`,
      `file(APPEND "\${CMAKE_BINARY_DIR}/hostile-attempts.txt" "socket ${name}: \${${name}_result} \${${name}_output}\\n")`,
    ].join('\n');
  };
  return [
    'cmake_minimum_required(VERSION 3.16)',
    'project(hostile LANGUAGES C)',
    `file(WRITE "\${CMAKE_BINARY_DIR}/hostile-attempts.txt" "")`,
    download('temporal', `http://${targets.temporal}/api/v1/namespaces`),
    download('standin', `http://${targets.standIn}/`),
    download('github', 'https://github.com/google/googletest/archive/refs/tags/v1.14.0.zip'),
    socket('temporal', targets.temporal),
    socket('standin', targets.standIn),
    socket('github', '140.82.112.3:443'),
    'add_library(hostile src/hostile.c)',
    'enable_testing()',
    'add_executable(hostile_test tests/hostile_test.c)',
    'target_link_libraries(hostile_test hostile)',
    'add_test(NAME hostile_test COMMAND hostile_test)',
    '',
  ].join('\n');
}

async function snapshotOf(store: FolderStore, files: Record<string, string>): Promise<string> {
  const entries: TreeEntry[] = [];
  for (const [path, text] of Object.entries(files)) {
    const blob = sha256(text);
    await store.putBlob(blob, Buffer.from(text));
    entries.push({ path, kind: 'file', blob, size: Buffer.byteLength(text), executable: false });
  }
  entries.sort((a, b) => (a.path < b.path ? -1 : 1));
  const digest = treeDigest(entries);
  await store.putTree({ digest, entries });
  return digest;
}

test(
  'a CMake configure step that tries the Temporal port and a host that is no registry is refused, recorded, and the environment still builds',
  { timeout: 900_000 },
  async () => {
    const standIn = `127.0.0.1:${(listener.address() as AddressInfo).port}`;
    const temporal = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
    const store = new FolderStore(join(scratch, 'store'));
    const snapshotId = await snapshotOf(store, {
      'CMakeLists.txt': hostileCMakeLists({ temporal, standIn }),
      'src/hostile.c': 'int hostile(void) { return 1; }\n',
      'tests/hostile_test.c': 'int hostile(void);\nint main(void) { return hostile() == 1 ? 0 : 1; }\n',
    });
    const builder = new EnvironmentBuilder({ docker, store, baseImage: sandboxImage, home: scratch });
    const lines: string[] = [];
    const prepared = await builder.prepare(
      { snapshotId, choice: {}, owner: { workflowId: 'hostile-cpp', runId: 'r', host: 'h', scope: 'hostile-cpp' } },
      { onLine: (line) => lines.push(line) },
    );
    assert.ok(prepared, 'a C/C++ environment');
    images.add(prepared.image);
    assert.equal(prepared.kind, 'cpp');

    const attempts = execFileSync('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      prepared.image,
      'cat',
      '/opt/build/hostile-attempts.txt',
    ]).toString();
    const downloads = [...attempts.matchAll(/^download (\w+): (\d+) /gm)].map((match) => [match[1], Number(match[2])]);
    assert.deepEqual(
      downloads.map(([name]) => name),
      ['temporal', 'standin', 'github'],
      `every download was tried:\n${attempts}`,
    );
    for (const [name, code] of downloads) assert.notEqual(code, 0, `the ${name} download succeeded:\n${attempts}`);
    const sockets = [...attempts.matchAll(/^socket (\w+): (.*)$/gm)].map((match) => [match[1], match[2]]);
    assert.equal(sockets.length, 3, attempts);
    for (const [name, result] of sockets)
      assert.doesNotMatch(result as string, /connected/, `the ${name} socket connected`);

    // The proxy refused each target, and the build said so.
    const refused = lines.filter((line) => line.includes('refused a connection to'));
    for (const target of [temporal, standIn, 'github.com:443'])
      assert.ok(
        refused.some((line) => line.includes(target)),
        `no refusal of ${target} recorded:\n${refused.join('\n')}`,
      );
    assert.deepEqual(connections, [], 'a connection reached the service on the host');
  },
);
