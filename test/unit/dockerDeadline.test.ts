// The deadline on Docker API calls, through the real dockerode client against an engine stand-in
// on a unix socket: a call the engine never answers fails at the deadline, and an attached exec
// whose stream stays quiet past the deadline once handed over is not cut.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Docker from 'dockerode';
import { DockerCallTimeoutError, withinDeadline } from '../../src/sandbox/container/dockerDeadline.js';

let folder: string;
let server: Server;
let docker: Docker;

before(async () => {
  folder = await mkdtemp(join(tmpdir(), 'docker-deadline-'));
  const socketPath = join(folder, 'docker.sock');
  server = createServer((request, response) => {
    if (request.url?.includes('/containers/json')) return; // never answers
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"Running":false,"ExitCode":0}');
  });
  // An exec start: upgraded at once, then 300 ms of silence, then one stdout frame and the end.
  server.on('upgrade', (_request, socket) => {
    socket.write(
      'HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n',
    );
    setTimeout(() => {
      const text = Buffer.from('done\n');
      const header = Buffer.alloc(8);
      header.writeUInt8(1, 0);
      header.writeUInt32BE(text.length, 4);
      socket.end(Buffer.concat([header, text]));
    }, 300);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  docker = new Docker({ socketPath });
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(folder, { recursive: true, force: true });
});

test('a call the engine never answers fails at its deadline, naming what it was', async () => {
  const started = Date.now();
  await assert.rejects(
    withinDeadline('looking up the sandbox container', (abortSignal) => docker.listContainers({ abortSignal }), 200),
    (error: Error) =>
      error instanceof DockerCallTimeoutError &&
      error.message === 'looking up the sandbox container: the Docker engine did not answer within 0.2 s',
  );
  assert.ok(Date.now() - started < 5000);
});

test('a call answered in time returns its answer', async () => {
  const info = await withinDeadline(
    'inspecting',
    (abortSignal) => docker.getExec('abc').inspect({ abortSignal }),
    2000,
  );
  assert.equal(info.ExitCode, 0);
});

test('an attached stream quiet for longer than the deadline after the start is not cut', async () => {
  const stream = (await withinDeadline(
    'starting',
    (abortSignal) => docker.getExec('abc').start({ hijack: true, stdin: false, abortSignal }),
    100,
  )) as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  assert.equal(Buffer.concat(chunks).subarray(8).toString(), 'done\n');
});
