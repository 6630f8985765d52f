// `npm run cluster -- metrics`: what the cluster's Temporal server has done since it started
// (its own metrics endpoint) and the worker hosts of the task queue with their figures (the
// `durable-debugger hosts` view): the fleet at a glance without Prometheus or Grafana.
import { Client, Connection } from '@temporalio/client';
import { describeTaskQueueHosts, formatTaskQueueView } from '../../src/temporal/workerHosts.js';
import { formatServerFigures, readServerMetrics, serverFigures } from './serverMetrics.js';

export async function printClusterMetrics(options: {
  serverMetrics: string;
  temporal: string;
  namespace: string;
  taskQueue: string;
  print?: (line: string) => void;
}): Promise<void> {
  const print = options.print ?? ((line: string) => console.log(line));
  print(`Temporal server (${options.serverMetrics}), since it started:`);
  for (const line of formatServerFigures(serverFigures(await readServerMetrics(options.serverMetrics))))
    print(`  ${line}`);
  const connection = await Connection.connect({ address: options.temporal });
  try {
    const client = new Client({ connection, namespace: options.namespace });
    const view = await describeTaskQueueHosts(client, options.namespace, options.taskQueue);
    print('');
    for (const line of formatTaskQueueView(view)) print(line);
  } finally {
    await connection.close();
  }
}
