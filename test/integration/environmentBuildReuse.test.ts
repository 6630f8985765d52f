// What the environment builder keeps between builds so that a cold build costs little beyond the
// installer (issue 36 item 3), with real Docker and real registries: the registry proxy's holder
// container kept warm (one for builds in a row, each build's refusals its own, gone when its proxy
// is), the probes' passes remembered (a reused image is not probed again, a failing probe fails every
// time), the image of a plan's own install checked by its build (no probe container), the build
// containers removed after the build has returned, Node's toolchain in an image of its own that
// repositories share, a preparation found again remembered until Docker tells of an event touching its images,
// and each image's Python asked once per host.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type Docker from 'dockerode';
import { connectDocker, labels } from '../../src/sandbox/container/container.js';
import { networkHolderPrefix, openBuildNetwork } from '../../src/sandbox/environment/buildNetwork.js';
import {
  buildContainerPrefix,
  environmentLabels,
  type BuildHooks,
} from '../../src/sandbox/environment/imageBuilder.js';
import { KeptAnswers } from '../../src/sandbox/environment/keptAnswers.js';
import { SandboxPythons } from '../../src/sandbox/environment/python/pythonImages.js';
import type { SandboxHost } from '../../src/sandbox/sandboxHost.js';
import { startTestServer, startTestWorker, type TestServer, type TestWorker } from '../../harness/devStack.js';

const docker = connectDocker();
let server: TestServer;
let worker: TestWorker;
let host: SandboxHost;
let scratch: string;
const imagesToRemove = new Set<string>();

before(async () => {
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: {} } });
  host = worker.worker.host;
  scratch = await mkdtemp(join(tmpdir(), 'environment-reuse-test-'));
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
  for (const image of imagesToRemove)
    await docker
      .getImage(image)
      .remove()
      .catch(() => undefined);
});

/** A repository of `files` (path → text) under the test's scratch folder, read into the content store. */
async function snapshot(name: string, files: Record<string, string>): Promise<string> {
  const repo = join(scratch, `${name}-${randomBytes(4).toString('hex')}`);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(repo, path, '..'), { recursive: true });
    await writeFile(join(repo, path), text);
  }
  return (await host.snapshotRepository(repo, 'pytest')).snapshotId;
}

/** Prepares the snapshot's environment as a run of this host would; the error when it fails. */
async function prepare(
  snapshotId: string,
  hooks: BuildHooks = {},
): Promise<{ image?: string; reused?: boolean; error?: Error }> {
  try {
    const prepared = await host.environments.prepare(
      {
        snapshotId,
        choice: {},
        owner: {
          workflowId: 'environment-reuse-test',
          runId: 'test',
          host: host.options.hostId,
          scope: host.options.scope,
        },
      },
      hooks,
    );
    if (prepared) imagesToRemove.add(prepared.image);
    return { image: prepared?.image, reused: prepared?.reused };
  } catch (error) {
    return { error: error as Error };
  }
}

/** The containers this host's scope created while `work` ran, by name, with their labels. */
async function createdWhile<T>(
  work: () => Promise<T>,
): Promise<{ result: T; created: Array<{ name: string; kind?: string }> }> {
  const { result, created } = await containersCreatedWhile(`${labels.scope}=${host.options.scope}`, work);
  return {
    result,
    created: created.map((attributes) => ({ name: attributes.name ?? '', kind: attributes[environmentLabels.kind] })),
  };
}

/** The attributes (name, image, labels) of each container with `label` that Docker created while `work` ran. */
async function containersCreatedWhile<T>(
  label: string,
  work: () => Promise<T>,
): Promise<{ result: T; created: Array<Record<string, string>> }> {
  const created: Array<Record<string, string>> = [];
  const events = (await docker.getEvents({
    filters: { type: ['container'], event: ['create'], label: [label] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  let buffered = '';
  events.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines.filter(Boolean))
      created.push((JSON.parse(line) as { Actor: { Attributes: Record<string, string> } }).Actor.Attributes);
  });
  try {
    const result = await work();
    await new Promise((resolve) => setTimeout(resolve, 500)); // the last events may trail the work
    return { result, created };
  } finally {
    events.destroy();
  }
}

async function containersNamed(prefix: string): Promise<Docker.ContainerInfo[]> {
  const all = await docker.listContainers({ all: true, filters: { label: [`${labels.scope}=${host.options.scope}`] } });
  return all.filter((container) => container.Names.some((name) => name.replace(/^\//, '').startsWith(prefix)));
}

test(
  'builds in a row share one warm registry proxy: each build is refused only its own hosts, and a clean build after them builds; their containers are gone once the builder closes',
  { timeout: 600_000 },
  async () => {
    const salt = `${process.pid}-${Date.now()}`;
    const reaching = (host: string) =>
      snapshot('reaches', { 'requirements.txt': `tiny-thing @ https://${host}/tiny-thing-1.0.tar.gz\n# ${salt}\n` });
    const { created, result } = await createdWhile(async () => [
      await prepare(await reaching('example.com')),
      await prepare(await reaching('example.org')),
      await prepare(await snapshot('clean', { 'requirements.txt': `iniconfig==2.0.0\n# ${salt}\n` })),
    ]);
    const [first, second, clean] = result;
    assert.match(String(first?.error?.message), /The build tried to reach example\.com:443/);
    assert.match(String(second?.error?.message), /The build tried to reach example\.org:443/);
    assert.doesNotMatch(
      String(second?.error?.message),
      /example\.com/,
      'the first build’s refusals are not the second’s',
    );
    assert.equal(clean?.error, undefined, clean?.error?.message);
    assert.equal(clean?.reused, false);
    assert.equal(created.filter((container) => container.name.startsWith(buildContainerPrefix)).length, 3);
    assert.equal(
      created.filter((container) => container.name.startsWith(networkHolderPrefix)).length,
      1,
      `one holder for the three builds: ${created.map((container) => container.name).join(', ')}`,
    );
    await host.environments.close();
    assert.deepEqual(await containersNamed(buildContainerPrefix), [], 'no build container is left');
    assert.deepEqual(await containersNamed(networkHolderPrefix), [], 'no holder is left once the builder closes');
  },
);

test('a holder whose proxy is gone (its worker died) exits, and Docker removes it', { timeout: 120_000 }, async () => {
  const folder = join(host.options.environmentRoot ?? scratch, `proxy-test-${randomBytes(3).toString('hex')}`);
  const network = await openBuildNetwork({
    docker,
    image: host.options.image,
    folder,
    name: `${networkHolderPrefix}test-${randomBytes(3).toString('hex')}`,
    labels: { [labels.scope]: host.options.scope },
    allowed: [],
    upstream: { https: null, http: null, noProxy: [] },
  });
  const id = network.networkMode.replace(/^container:/, '');
  try {
    assert.equal((await docker.getContainer(id).inspect()).State.Running, true);
    await network.proxy.stop(); // the proxy stops, the holder is left: as when the worker dies
    let gone = false;
    for (let attempt = 0; attempt < 60 && !gone; attempt++) {
      gone = await docker
        .getContainer(id)
        .inspect()
        .then(
          () => false,
          () => true,
        );
      if (!gone) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    assert.ok(gone, 'the holder removed itself');
  } finally {
    await network.close().catch(() => undefined);
  }
});

test(
  'a reused image is not probed again for the same files; a probe that fails fails every preparation',
  { timeout: 300_000 },
  async () => {
    const dockerfile = (shadow: boolean) =>
      [
        'FROM durable-debugger-sandbox:1',
        `# environment reuse test ${process.pid}-${Date.now()}-${shadow}`,
        ...(shadow
          ? [
              'USER root',
              'RUN mkdir -p /usr/lib/python3/dist-packages/shop && echo \'VERSION = "released"\' > /usr/lib/python3/dist-packages/shop/__init__.py',
            ]
          : []),
      ].join('\n');
    const files = (shadow: boolean) => ({
      'src/shop/__init__.py': 'VERSION = "workspace"\n',
      'test_shop.py': 'from shop import VERSION\n\ndef test_v():\n    assert VERSION == "workspace"\n',
      'durable-debugger.Dockerfile': dockerfile(shadow),
    });
    const probes = (created: Array<{ kind?: string }>) =>
      created.filter((container) => container.kind === 'probe').length;

    const clean = await snapshot('probed', files(false));
    const firstRun = await createdWhile(() => prepare(clean));
    assert.equal(firstRun.result.error, undefined, firstRun.result.error?.message);
    assert.equal(probes(firstRun.created), 1, 'the first preparation probes the image');
    const again = await createdWhile(() => prepare(clean));
    assert.equal(again.result.reused, true);
    assert.equal(probes(again.created), 0, 'the same image and files passed already');
    // Another snapshot whose probed files differ is probed again.
    const changed = await snapshot('probed', { ...files(false), 'src/shop/__init__.py': 'VERSION = "changed"\n' });
    const other = await createdWhile(() => prepare(changed));
    assert.equal(probes(other.created), 1, 'other files are probed');

    const shadowed = await snapshot('shadowed', files(true));
    for (const attempt of [1, 2]) {
      const run = await createdWhile(() => prepare(shadowed));
      assert.match(String(run.result.error?.message), /`import shop` loads \/usr\/lib\/python3\/dist-packages\/shop/);
      assert.equal(probes(run.created), 1, `preparation ${attempt} probes the image`);
    }
  },
);

test(
  "an image of the plan's own install is checked by the build that makes it: no probe container, cold or reused",
  { timeout: 600_000 },
  async () => {
    const salt = `${process.pid}-${Date.now()}`;
    const python = await snapshot('checked-python', {
      'pyproject.toml': `# ${salt}\n[project]\nname = "shop"\nversion = "1.0.0"\ndependencies = ["iniconfig"]\n\n[project.optional-dependencies]\ntest = ["pytest"]\n\n[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n`,
      'src/shop/__init__.py': 'VERSION = "workspace"\n',
      'tests/test_shop.py': 'from shop import VERSION\n\ndef test_v():\n    assert VERSION == "workspace"\n',
    });
    const node = await snapshot('checked-node', {
      'package.json': JSON.stringify({
        name: 'shop',
        version: '1.0.0',
        description: salt,
        scripts: { test: 'node --test' },
        dependencies: { ms: '2.1.3' },
      }),
      'test/shop.test.js': "require('node:test')('ms', () => require('ms'));\n",
    });
    for (const snapshotId of [python, node]) {
      const lines: string[] = [];
      const cold = await createdWhile(() => prepare(snapshotId, { onLine: (line) => lines.push(line) }));
      assert.equal(cold.result.error, undefined, cold.result.error?.message);
      assert.equal(cold.result.reused, false, lines.join('\n'));
      assert.deepEqual(
        cold.created.filter((container) => container.kind === 'probe'),
        [],
        'the build checked its image: no probe container',
      );
      assert.ok(!lines.some((line) => line.startsWith('@@durable-debugger')), 'the checks print no marks for people');
      const again = await createdWhile(() => prepare(snapshotId));
      assert.equal(again.result.reused, true);
      assert.deepEqual(again.created, [], 'a reused image starts no container');
    }
  },
);

test(
  'a build that leaves a listener on the loopback of the network kept for the next build: the next build, in the same network, cannot reach it',
  { timeout: 300_000 },
  async () => {
    const salt = `${process.pid}-${Date.now()}`;
    const port = 4555;
    const listener = `import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", ${port})); s.listen(); [c.sendall(b"leaked") or c.close() for c, _ in iter(s.accept, None)]`;
    const reach = `import socket, sys; c = socket.create_connection(("127.0.0.1", ${port}), timeout=5); print("reached", c.recv(16).decode()); sys.exit(3)`;
    const repository = (setup: string[]) =>
      snapshot('listener', {
        'test_ok.py': 'def test_ok():\n    assert True\n',
        'durable-debugger.json': JSON.stringify({ setup: [`: ${salt}`, ...setup], testCommand: 'pytest' }),
      });
    const { result, created } = await createdWhile(async () => [
      // The first build's listener answers it (so there is something to leak), and is left running.
      await prepare(
        await repository([
          `(python3 -c '${listener}' >/dev/null 2>&1 &)`,
          'sleep 2',
          `python3 -c '${reach}' || test $? -eq 3`,
        ]),
      ),
      await prepare(await repository([`python3 -c '${reach}'`])),
    ]);
    const [leaving, next] = result;
    assert.equal(leaving?.error, undefined, leaving?.error?.message);
    assert.equal(
      created.filter((container) => container.name.startsWith(networkHolderPrefix)).length,
      1,
      'both builds ran in one kept network',
    );
    assert.match(String(next?.error?.message), /ConnectionRefusedError|Connection refused/);
    assert.doesNotMatch(String(next?.error?.message), /reached leaked/);
  },
);

test(
  'Node repositories asking the same Node and package manager share one toolchain image; their own images hold only their dependencies; found again, an image is remembered until an event touches it',
  { timeout: 600_000 },
  async () => {
    const salt = `${process.pid}-${Date.now()}`;
    const repository = (name: string) =>
      snapshot(name, {
        'package.json': JSON.stringify({
          name,
          version: '1.0.0',
          description: `environment reuse test ${salt}`,
          scripts: { test: 'node --test' },
          dependencies: { 'is-number': '7.0.0' },
        }),
        'test/number.test.js': "const test = require('node:test');\ntest('loads', () => require('is-number'));\n",
      });
    const snapshots = [await repository('first-node-repo'), await repository('second-node-repo')];
    const built = [await prepare(snapshots[0] as string), await prepare(snapshots[1] as string)];
    const toolchains: string[] = [];
    for (const each of built) {
      assert.equal(each.error, undefined, each.error?.message);
      assert.equal(each.reused, false);
      // docker history: the image's own layer first, then those it was built on, each with its commit's comment.
      const layers = (await docker.getImage(each.image as string).history()) as Array<{
        Id: string;
        Comment: string;
        Size: number;
      }>;
      const toolchain = layers.find((layer) => layer.Comment.startsWith('node toolchain'));
      assert.ok(
        toolchain,
        `a toolchain image under ${each.image}: ${layers.map((layer) => layer.Comment).join(' | ')}`,
      );
      toolchains.push(toolchain.Id);
      // Node's binary alone is about 100 MB: it is in the toolchain's layer, not in the repository's.
      assert.ok(toolchain.Size > 50e6, `the toolchain layer is ${toolchain.Size} bytes`);
      assert.ok((layers[0]?.Size ?? 0) < 20e6, `the repository's own layer is ${layers[0]?.Size} bytes`);
      // No run's labels: a container made from the image is no sandbox of the run that built it (the reaper's).
      const imageLabels = (await docker.getImage(each.image as string).inspect()).Config.Labels ?? {};
      for (const label of [labels.project, labels.workflowId, labels.runId, labels.scope, labels.host])
        assert.equal(imageLabels[label], '', `${label} on ${each.image}`);
    }
    assert.equal(toolchains[0], toolchains[1], 'both repositories are built on one toolchain image');

    // Found again, each image of the chain (the sandbox image, the toolchain's, the repository's) is
    // asked about once: the image a level finds is the next level's base.
    const { result: again, asked } = await imagesAskedWhile(() => prepare(snapshots[1] as string));
    assert.equal(again.reused, true);
    assert.ok(asked.length >= 3, `asked about ${asked.join(', ')}`);
    assert.deepEqual(asked, [...new Set(asked)], 'an image was asked about twice');

    // Found again once, it is remembered by the worker: no image is asked about while Docker tells of
    // no event touching its images (another image made and removed is none).
    const other = await docker.createContainer({ Image: host.options.image, Cmd: ['true'], NetworkDisabled: true });
    const made = await other.commit({ repo: 'durable-debugger-reuse-test', tag: salt });
    await other.remove({ force: true });
    await docker.getImage((made as { Id: string }).Id).remove({ force: true });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the events reach the worker within milliseconds
    const { result: third, asked: askedThird } = await imagesAskedWhile(() => prepare(snapshots[1] as string));
    assert.deepEqual(third, again);
    assert.deepEqual(askedThird, []);
    // A removed image of its own is such an event: the next preparation looks again, and builds what is gone.
    await docker.getImage(again.image as string).remove();
    await new Promise((resolve) => setTimeout(resolve, 200)); // the event reaches the worker within milliseconds
    const rebuilt = await prepare(snapshots[1] as string);
    assert.equal(rebuilt.error, undefined, rebuilt.error?.message);
    assert.equal(rebuilt.reused, false);
    assert.equal(rebuilt.image, again.image);
  },
);

/** The images the environment builder asked Docker about (inspect) while `work` ran, in order. */
async function imagesAskedWhile<T>(work: () => Promise<T>): Promise<{ result: T; asked: string[] }> {
  const client = host.environments.options.docker;
  const getImage = client.getImage.bind(client);
  const asked: string[] = [];
  client.getImage = (name: string) => {
    const image = getImage(name);
    const inspect = image.inspect.bind(image);
    image.inspect = ((...args: Parameters<typeof inspect>) => {
      asked.push(name);
      return inspect(...args);
    }) as typeof image.inspect;
    return image;
  };
  try {
    return { result: await work(), asked };
  } finally {
    client.getImage = getImage;
  }
}

test('an image is asked for its Python once per host: a second builder (another worker) finds the answer kept and starts no container', async () => {
  const folder = await mkdtemp(join(scratch, 'python-versions-'));
  const image = await docker.getImage(host.options.image).inspect();
  const manifests = { 'pyproject.toml': '[project]\nname = "kept"\nrequires-python = ">=3.8"\n' };
  const ask = () =>
    createdFrom(image.Id, () =>
      new SandboxPythons(docker, host.options.image, new KeptAnswers(folder)).onAllowedPython(
        null,
        ['pyproject.toml'],
        manifests,
      ),
    );
  assert.equal(await ask(), 1, 'the first builder asks the image, in a container');
  const kept = await readdir(folder);
  assert.deepEqual(kept, [image.Id.replace(/^sha256:/, '')]);
  assert.match(await readFile(join(folder, kept[0] as string), 'utf8'), /^3\.\d+\.\d+$/);
  assert.equal(await ask(), 0, 'the second finds the answer kept');
});

/** How many containers of `imageId` Docker created while `work` ran. */
async function createdFrom(imageId: string, work: () => Promise<unknown>): Promise<number> {
  const { created } = await containersCreatedWhile(labels.project, work);
  return created.filter((attributes) => attributes.image === imageId).length;
}
