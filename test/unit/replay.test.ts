// Determinism: stored histories of scripted runs (test/histories, recorded by
// scripts/record-histories.ts) must replay against the current workflow code. A workflow
// change that would break runs in flight fails here; record again only for intentional
// changes, guarded with patched() when old runs may still be going.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { projectRoot } from '../../src/config.js';
import { closingViewSinks } from '../../src/temporal/closingViews.js';
import { installQuietRuntime, workflowBundle } from '../../src/worker.js';

const historiesFolder = join(projectRoot, 'test', 'histories');

async function storedHistories() {
  const files = (await readdir(historiesFolder)).filter((file) => file.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => ({
      // The id it was recorded with (scripts/record-histories.ts): a parent's commands name its children by it.
      workflowId: `history-${file.replace(/\.json$/, '')}`,
      history: historyFromJSON(JSON.parse(await readFile(join(historiesFolder, file), 'utf8'))),
    })),
  );
}

async function replayFailures(bundle: Awaited<ReturnType<typeof workflowBundle>>): Promise<string[]> {
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories(
    // The sinks the workers register: a replay calls none, and names none that is missing.
    { workflowBundle: bundle, sinks: closingViewSinks },
    await storedHistories(),
  )) {
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  return failures;
}

test('stored histories replay against the current workflow code', async () => {
  installQuietRuntime();
  const histories = await storedHistories();
  assert.ok(histories.length >= 4, 'histories are stored');
  assert.deepEqual(await replayFailures(await workflowBundle()), []);
});

test('the replay check catches a workflow change that breaks determinism', async () => {
  installQuietRuntime();
  // A copy of the workflows with one extra timer before any work (parents of attempts included):
  // old histories cannot match it.
  const mutant = await mkdtemp(join(projectRoot, 'workflows-mutant-'));
  try {
    await cp(join(projectRoot, 'workflows'), mutant, { recursive: true });
    const file = join(mutant, 'debugRepository.ts');
    const source = await readFile(file, 'utf8');
    const changed =
      "import { sleep } from '@temporalio/workflow';\n" +
      source.replace(
        '  const input = validateInput(rawInput);\n',
        "  await sleep('1 second');\n  const input = validateInput(rawInput);\n",
      );
    assert.match(changed, /await sleep/);
    assert.notEqual(changed, source);
    await writeFile(file, changed);
    // The sandbox queue's workflow too (its own history is stored): a timer before anything else.
    const queueFile = join(mutant, 'sandboxAdmission.ts');
    const queueSource = await readFile(queueFile, 'utf8');
    const queueChanged = queueSource.replace(
      /(export async function sandboxAdmission\([^)]*\): Promise<void> \{\n)/,
      "$1  await sleep('1 second');\n",
    );
    assert.notEqual(queueChanged, queueSource);
    await writeFile(queueFile, queueChanged);
    const bundle = await bundleWorkflowCode({ workflowsPath: join(mutant, 'index.ts'), logger: silent });
    const failures = await replayFailures(bundle);
    assert.equal(failures.length, (await storedHistories()).length);
    assert.match(failures[0] ?? '', /[Nn]ondeterminism|determinism/);
  } finally {
    await rm(mutant, { recursive: true, force: true });
  }
});

const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
