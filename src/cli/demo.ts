// `durable-debugger demo`: the whole product on one fixture. It starts (or reuses) the embedded
// Temporal server and an in-process worker, runs the fixture, shows progress live, and ends
// with the report and the patch. Without ANTHROPIC_API_KEY the model is a local fake
// Anthropic API playing the fixture's scripted responses, and the output says so.
import { relative } from 'node:path';
import pc from 'picocolors';
import type { Config } from '../config.js';
import { projectRoot } from '../config.js';
import { connectClient, startDebugRun, webUiLink } from '../client.js';
import { createModelClient } from '../model/anthropic.js';
import { ensureTemporalServer } from '../temporal/embeddedServer.js';
import { startWorker } from '../worker.js';
import { FakeAnthropicApi } from '../demo/fakeAnthropicApi.js';
import { fixtureInput, loadFixtures, scriptsByName } from '../demo/fixtures.js';
import { followRun } from './follow.js';
import { printFinalReport } from './printReport.js';

export async function runDemo(config: Config, options: { fixture: string; json: boolean }): Promise<number> {
  const log = (line: string) => process.stderr.write(`${pc.dim(line)}\n`);
  const fixtures = await loadFixtures();
  const fixture = fixtures.find((candidate) => candidate.name === options.fixture);
  if (!fixture) {
    throw new Error(`No fixture named "${options.fixture}". Fixtures: ${fixtures.map((candidate) => candidate.name).join(', ')}`);
  }
  const server = await ensureTemporalServer(config, log);
  let fake: FakeAnthropicApi | null = null;
  let answeredBy: string;
  let anthropic;
  if (config.anthropic.apiKey) {
    answeredBy = `Claude (${config.anthropic.model})`;
  } else {
    fake = new FakeAnthropicApi({ scripts: scriptsByName(fixtures) });
    await fake.start();
    const scriptPath = relative(projectRoot, fixture.scriptPath);
    answeredBy = `scripted responses from ${scriptPath}, played by a local fake Anthropic API at ${fake.url} (no ANTHROPIC_API_KEY is set; set it to use Claude)`;
    anthropic = createModelClient({ apiKey: 'scripted-demo', baseURL: fake.url, timeoutMs: 60_000 });
  }
  const describe = () => answeredBy;
  const worker = await startWorker({
    config,
    address: server.address,
    anthropic,
    describeAnswerer: fake ? describe : undefined,
    // A task queue of its own, so a worker started elsewhere never picks up the demo's run.
    taskQueue: `${config.taskQueue}-demo-${process.pid}`,
    log,
  });
  try {
    const client = await connectClient(server.address, config.namespace);
    const handle = await startDebugRun(client, { input: fixtureInput(fixture), taskQueue: worker.taskQueue });
    const link = webUiLink(server.uiUrl, config, handle.workflowId);
    if (!options.json) {
      console.log(pc.bold(`durable-debugger demo: ${fixture.name}`) + pc.dim(` — ${fixture.meta.description}`));
      console.log(`${pc.bold('Model:')} ${answeredBy}`);
      console.log(`${pc.bold('Run:')} ${handle.workflowId}${link ? pc.dim(` · ${link}`) : ''}`);
      console.log('');
    }
    const report = await followRun(handle, { json: options.json });
    await printFinalReport(config, report, { webUi: link, json: options.json });
    await client.connection.close();
    return report.status === fixture.meta.expectedStatus ? 0 : 1;
  } finally {
    await worker.shutdown();
    await fake?.stop();
  }
}
