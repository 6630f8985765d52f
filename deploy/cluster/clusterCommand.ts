// `npm run cluster [-- start|stop|status|metrics]`: Temporal's own server on PostgreSQL and the Web UI
// server on this machine (deploy/cluster/). `start` (the default) builds and starts what is missing
// and prints the addresses; a second run takes seconds. `metrics`: the server's figures and the
// worker hosts of the task queue (deploy/cluster/clusterMetrics.ts).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pc from 'picocolors';
import { ClusterSetupError, clusterStatus, startCluster, stopCluster } from './clusterLauncher.js';
import { loadConfig, projectRoot } from '../../src/config.js';
import { printClusterMetrics } from './clusterMetrics.js';
import { clusterAddresses, clusterDatabase, clusterNamespace, clusterPaths } from './clusterSettings.js';

const log = (line: string) => console.log(`cluster: ${line}`);
const command = process.argv[2] ?? 'start';

function printStatus(): boolean {
  const parts = clusterStatus();
  for (const part of parts) {
    const state = part.running ? pc.green(`running (pid ${part.pid})`) : pc.yellow('stopped');
    console.log(`  ${part.part.padEnd(15)} ${state}  ${part.address}  log: ${part.log}`);
  }
  return parts.every((part) => part.running);
}

try {
  if (command === 'start') {
    const started = Date.now();
    // What every command needs first (node modules, the Temporal CLI for the operator API, Docker
    // and the sandbox image for workers), idempotent and quick once done.
    const setup = spawnSync('bash', [join(projectRoot, 'scripts', 'setup.sh')], { stdio: 'inherit' });
    if (setup.status !== 0) throw new ClusterSetupError('scripts/setup.sh failed (see above)');
    await startCluster(log);
    log(`ready in ${Math.round((Date.now() - started) / 1000)} s`);
    console.log(`
  Temporal frontend (gRPC)  ${clusterAddresses.temporal}   namespace ${clusterNamespace}
  Web UI                    ${clusterAddresses.webUi}
  PostgreSQL                ${clusterAddresses.postgresqlUrl()}   password in ${clusterPaths().passwordFile}
  Server metrics            ${clusterAddresses.serverMetrics}
  Logs                      ${clusterPaths().home}

  TEMPORAL_ADDRESS=${clusterAddresses.temporal} durable-debugger worker --metrics-port 9464
  (its metrics: http://127.0.0.1:9464/metrics; a Grafana dashboard of them: deploy/grafana/durable-debugger-workers.json)
  (workers that share no folder: DURABLE_DEBUGGER_STORE=postgresql://${clusterDatabase.user}:$(cat ${clusterPaths().passwordFile})@${clusterAddresses.postgresql.host}:${clusterAddresses.postgresql.port}/${clusterDatabase.application})
  TEMPORAL_ADDRESS=${clusterAddresses.temporal} durable-debugger run <repo>
  npm run cluster -- metrics   (the server's figures and every worker host's: sandboxes, model calls, tokens, cost)
  npm run cluster -- stop`);
  } else if (command === 'stop') {
    await stopCluster(log);
    log('stopped');
  } else if (command === 'status') {
    process.exitCode = printStatus() ? 0 : 3;
  } else if (command === 'metrics') {
    await printClusterMetrics({
      serverMetrics: clusterAddresses.serverMetrics,
      temporal: clusterAddresses.temporal,
      namespace: clusterNamespace,
      taskQueue: loadConfig().taskQueue,
    }).catch((error: unknown) => {
      throw new ClusterSetupError(
        `${error instanceof Error ? error.message : String(error)}. Is the cluster running? \`npm run cluster -- status\` says, \`npm run cluster\` starts it.`,
      );
    });
  } else {
    console.error(
      `Unknown command "${command}": use \`npm run cluster\` (start), \`npm run cluster -- stop\`, \`npm run cluster -- status\` or \`npm run cluster -- metrics\`.`,
    );
    process.exitCode = 2;
  }
} catch (error) {
  console.error(
    pc.red(
      `cluster: error: ${error instanceof ClusterSetupError ? error.message : String(error instanceof Error ? error.stack : error)}`,
    ),
  );
  process.exitCode = 1;
}
