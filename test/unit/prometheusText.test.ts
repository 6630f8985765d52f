// Prometheus' text format as worker hosts and the Temporal server serve it (issue 26): the parser
// reads samples, labels with escapes and special values; a page that is garbage, too large, slow
// or an error is a one-line reason from scrapeMetrics (real HTTP on this machine), never a hang.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, test } from 'node:test';
import { parsePrometheusText, scrapeMetrics, sumBy, sumOf } from '../../src/temporal/prometheusText.js';

test('samples: names, labels (escaped quotes, backslashes, newlines, commas, braces), values and timestamps', () => {
  const samples = parsePrometheusText(
    [
      '# HELP durable_debugger_sandboxes sandboxes this host holds',
      '# TYPE durable_debugger_sandboxes gauge',
      'durable_debugger_sandboxes{host="a",task_queue="q"} 2',
      'up 1',
      'odd{path="C:\\\\dir \\"x\\", {y}\\nz",} 1.5e3 1700000000000',
      'h_bucket{le="+Inf"} +Inf',
      'nan_metric NaN',
      '',
    ].join('\n'),
  );
  assert.deepEqual(samples, [
    { name: 'durable_debugger_sandboxes', labels: { host: 'a', task_queue: 'q' }, value: 2 },
    { name: 'up', labels: {}, value: 1 },
    { name: 'odd', labels: { path: 'C:\\dir "x", {y}\nz' }, value: 1500 },
    { name: 'h_bucket', labels: { le: '+Inf' }, value: Infinity },
    { name: 'nan_metric', labels: {}, value: NaN },
  ]);
});

test('garbled lines are left out, the rest is read; sums skip values that are not finite', () => {
  const samples = parsePrometheusText(
    [
      'tokens_total{model="m",kind="input"} 10',
      'tokens_total{model="m",kind="output"} 5',
      'tokens_total{model="m" 7',
      'tokens_total{model=m} 7',
      'tokens_total{model="n"} abc',
      '<html><body>502 Bad Gateway</body></html>',
      '9lives 1',
      'tokens_total{model="n",kind="input"} 3',
      'tokens_total{model="n",kind="input"} +Inf',
    ].join('\n'),
  );
  assert.equal(samples.length, 4);
  assert.equal(sumOf(samples, 'tokens_total'), 18);
  assert.equal(sumOf(samples, 'tokens_total', { kind: 'input' }), 13);
  assert.deepEqual(Object.fromEntries(sumBy(samples, 'tokens_total', 'model')), { m: 15, n: 3 });
});

const servers: Server[] = [];
after(() => {
  for (const server of servers) server.closeAllConnections();
  for (const server of servers) server.close();
});

/** A real HTTP server on this machine answering every request with `handle`; its URL. */
async function endpoint(handle: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`;
}

test('scrapeMetrics reads a real endpoint', async () => {
  const url = await endpoint((_request, response) => response.end('durable_debugger_sandboxes{host="a"} 1\n'));
  assert.deepEqual(await scrapeMetrics(url), [{ name: 'durable_debugger_sandboxes', labels: { host: 'a' }, value: 1 }]);
});

test('an endpoint that hangs, or trickles its page, is given up after the timeout', async () => {
  const hangs = await endpoint(() => undefined);
  let started = Date.now();
  await assert.rejects(scrapeMetrics(hangs, 300), /no answer within 0.3 s/);
  assert.ok(Date.now() - started < 2_000);
  const trickles = await endpoint((_request, response) => {
    response.write('up 1\n');
    const timer = setInterval(() => response.write('# still here\n'), 50);
    response.on('close', () => clearInterval(timer));
  });
  started = Date.now();
  await assert.rejects(scrapeMetrics(trickles, 300), /no whole answer within 0.3 s/);
  assert.ok(Date.now() - started < 2_000);
});

test('an endpoint that answers garbage, an error, a redirect, nothing listening or an endless page is a reason, not a crash', async () => {
  const garbage = await endpoint((_request, response) => response.end('<html>hello</html>\n\u0000\u0001{{{'));
  await assert.rejects(scrapeMetrics(garbage), /answered with no Prometheus samples/);
  const failing = await endpoint((_request, response) => {
    response.statusCode = 500;
    response.end('boom');
  });
  await assert.rejects(scrapeMetrics(failing), /answered HTTP 500/);
  const redirects = await endpoint((_request, response) => {
    response.statusCode = 302;
    response.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
    response.end();
  });
  await assert.rejects(scrapeMetrics(redirects), /redirect/);
  const closed = await endpoint(() => undefined);
  const port = new URL(closed).port;
  await new Promise<void>((resolve) => (servers.pop() as Server).close(() => resolve()));
  await assert.rejects(scrapeMetrics(`http://127.0.0.1:${port}/metrics`), /ECONNREFUSED/);
  const endless = await endpoint((_request, response) => {
    const line = `${'x'.repeat(1023)}\n`.repeat(1024);
    const write = () => {
      while (response.write(line));
    };
    response.on('drain', write);
    write();
  });
  await assert.rejects(scrapeMetrics(endless, 30_000), /answered more than 16 MiB/);
});
