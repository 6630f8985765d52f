// A hostile Maven build, through the real worker, Docker, Debian's archive and Maven Central: the
// repository's pom.xml binds exec-maven-plugin to the validate phase, so the environment's own
// resolution runs it. It tries the Temporal server's port and a host that is no registry, directly
// and through the registry proxy, and records every attempt in the image. Each must fail (the proxy
// answering 403), Maven Central must still answer, and the environment must still build.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { connectDocker } from '../../src/sandbox/container/container.js';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

const run = promisify(execFile);
const docker = connectDocker();
const repository = join(import.meta.dirname, 'repositories', 'hostile_maven_builds');

let server: TestServer;
let worker: TestWorker;
let scratch: string;
const imagesBuilt = new Set<string>();

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hostile-java-builds-'));
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: {} } });
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  for (const image of imagesBuilt)
    await docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
  await rm(scratch, { recursive: true, force: true });
});

function xmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

interface Attempt {
  attempt: string;
  reached: boolean;
  detail: string;
}

test(
  'a Maven plugin run by the build reaches nothing but the registries (the Temporal port, another host: refused, recorded)',
  { timeout: 900_000 },
  async () => {
    const repo = join(scratch, 'hostile_maven_builds');
    await cp(repository, repo, { recursive: true });
    const targets = JSON.stringify({
      temporal: `127.0.0.1:${new URL(`http://${server.address}`).port}`,
      nonRegistry: 'services.gradle.org:443',
    });
    // The build gets the pom.xml files only: the probe travels inside the plugin's configuration.
    const pom = (await readFile(join(repo, 'pom.template.xml'), 'utf8'))
      .replace('@PROBE@', xmlText(await readFile(join(repo, 'probe.py'), 'utf8')))
      .replace('@TARGETS@', xmlText(targets));
    await writeFile(join(repo, 'pom.xml'), pom);
    await rm(join(repo, 'pom.template.xml'));

    const requestsBefore = worker.fake.requests.length;
    const { report } = await runToReport(server, worker.taskQueue, { repo }, `hostile-maven-${process.pid}`);
    if (report.environment) imagesBuilt.add(report.environment.image);
    // The environment built, and the repository's test passed in the sandbox (where the plugin runs again, offline).
    assert.equal(report.status, 'no_failing_tests', `${report.stopCondition}: ${report.stopDetail}`);
    assert.equal(report.environment?.kind, 'java');
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model call');

    const { stdout } = await run('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      report.environment?.image as string,
      'cat',
      '/hostile-probes/maven-exec.json',
    ]);
    const attempts = JSON.parse(stdout) as Attempt[];
    const byName = new Map(attempts.map((attempt) => [attempt.attempt, attempt]));
    assert.deepEqual(
      [...byName.keys()],
      [
        "the Temporal server's port",
        'a host that is no registry',
        "the Temporal server's port through the proxy",
        'a host that is no registry through the proxy',
        'Maven Central through the proxy',
      ],
      'the probe ran every attempt',
    );
    for (const attempt of attempts) {
      if (attempt.attempt === 'Maven Central through the proxy')
        assert.equal(attempt.reached, true, `the registry must still work: ${attempt.detail}`);
      else assert.equal(attempt.reached, false, `${attempt.attempt} was reached: ${attempt.detail}`);
    }
    // The proxy itself refused: 403 for the Temporal port and for a host that is no registry.
    for (const name of ["the Temporal server's port through the proxy", 'a host that is no registry through the proxy'])
      assert.match(byName.get(name)?.detail ?? '', /^HTTP\/1\.1 403/, name);
  },
);
