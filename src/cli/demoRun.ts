// `durable-debugger demo`: the whole product on one fixture. It starts (or reuses) the embedded
// Temporal server and an in-process worker, runs the fixture, shows progress live, and ends
// with the report and the patch. Without ANTHROPIC_API_KEY the model is a local fake
// Anthropic API playing the fixture's scripted responses, and the output says so.
import { relative } from 'node:path';
import pc from 'picocolors';
import type { Config } from '../config.js';
import { projectRoot } from '../config.js';
import { connectClient, startDebugRun, webUiLink } from '../client.js';
import { scriptedModelEndpoint } from '../agent/modelEndpoint.js';
import { ensureTemporalServer } from '../temporal/embeddedServer.js';
import { fixtureInput, loadFixtures } from '../demo/fixtures.js';
import { startScriptedModel, type ScriptedModel } from '../demo/scriptedModel.js';
import { followRun } from './follow.js';
import { printFinalReport } from './printReport.js';

export async function runDemo(config: Config, options: { fixture: string; json: boolean }): Promise<number> {
  const log = (line: string) => process.stderr.write(`${pc.dim(line)}\n`);
  const fixtures = await loadFixtures();
  const fixture = fixtures.find((candidate) => candidate.name === options.fixture);
  if (!fixture) {
    throw new Error(
      `No fixture named "${options.fixture}". Fixtures: ${fixtures.map((candidate) => candidate.name).join(', ')}`,
    );
  }
  const server = await ensureTemporalServer(config, log);
  let scripted: ScriptedModel | null = null;
  let answeredBy: string;
  if (config.anthropic.apiKey) {
    answeredBy = `Claude (${config.anthropic.model})`;
  } else {
    scripted = await startScriptedModel();
    const scriptPath = relative(projectRoot, fixture.scriptPath);
    answeredBy = `scripted responses from ${scriptPath}, played by a local fake Anthropic API at ${scripted.fake.url} (no ANTHROPIC_API_KEY is set; set it to use Claude)`;
  }
  const describe = () => answeredBy;
  const { startWorker } = await import('../worker.js');
  const worker = await startWorker({
    config,
    address: server.address,
    ...(scripted
      ? { anthropic: scripted.anthropic, modelEndpoint: scriptedModelEndpoint, describeAnswerer: describe }
      : {}),
    // A task queue of its own, so a worker started elsewhere never picks up the demo's run.
    taskQueue: `${config.taskQueue}-demo-${process.pid}`,
    log,
  });
  try {
    const client = await connectClient(server.address, config.namespace);
    const input = {
      ...fixtureInput(fixture),
      ...(worker.modelEndpoint ? { modelEndpoint: worker.modelEndpoint } : {}),
    };
    const handle = await startDebugRun(client, { input, taskQueue: worker.taskQueue });
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
    await scripted?.stop();
  }
}
