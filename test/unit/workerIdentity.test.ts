// A worker host's identity carries its host id and where its metrics are (issue 26): what the
// `hosts` command reads back from the task queue's pollers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseWorkerHostIdentity, workerHostIdentity } from '../../src/temporal/workerIdentity.js';

test('a host with a metrics port advertises it at its machine name, and it reads back', () => {
  const identity = workerHostIdentity({
    pid: 4321,
    machine: 'gpu-box-7',
    hostId: 'gpu-box-7-1a2b3c4d',
    metricsPort: 9464,
  });
  assert.equal(identity, '4321@gpu-box-7 host:gpu-box-7-1a2b3c4d metrics:http://gpu-box-7:9464/metrics');
  assert.deepEqual(parseWorkerHostIdentity(identity), {
    process: '4321@gpu-box-7',
    hostId: 'gpu-box-7-1a2b3c4d',
    metricsUrl: 'http://gpu-box-7:9464/metrics',
  });
});

test('a host without metrics says so; a machine named by an IPv6 address is put in brackets', () => {
  assert.deepEqual(
    parseWorkerHostIdentity(workerHostIdentity({ pid: 1, machine: 'a.example', hostId: 'a', metricsPort: null })),
    { process: '1@a.example', hostId: 'a', metricsUrl: null },
  );
  assert.equal(
    parseWorkerHostIdentity(workerHostIdentity({ pid: 1, machine: 'fd00::1', hostId: 'a', metricsPort: 80 }))
      .metricsUrl,
    'http://[fd00::1]:80/metrics',
  );
});

test('DURABLE_DEBUGGER_METRICS_HOST names where other machines reach the metrics; the identity keeps the machine', () => {
  const identity = workerHostIdentity({
    pid: 9,
    machine: 'worker-7f9c',
    hostId: 'w1',
    metricsPort: 9464,
    metricsHost: '10.0.3.17',
  });
  assert.deepEqual(parseWorkerHostIdentity(identity), {
    process: '9@worker-7f9c',
    hostId: 'w1',
    metricsUrl: 'http://10.0.3.17:9464/metrics',
  });
  assert.equal(loadConfig({ DURABLE_DEBUGGER_METRICS_HOST: '10.0.3.17' }).metricsHost, '10.0.3.17');
  assert.equal(loadConfig({}).metricsHost, undefined);
  assert.throws(() => loadConfig({ DURABLE_DEBUGGER_METRICS_HOST: 'evil/path?x' }), ConfigError);
});

test('the metrics listen on loopback unless DURABLE_DEBUGGER_METRICS_BIND names an address', () => {
  assert.equal(loadConfig({}).metricsBind, '127.0.0.1');
  assert.equal(loadConfig({ DURABLE_DEBUGGER_METRICS_BIND: '0.0.0.0' }).metricsBind, '0.0.0.0');
  assert.equal(loadConfig({ DURABLE_DEBUGGER_METRICS_BIND: '::' }).metricsBind, '::');
  assert.throws(() => loadConfig({ DURABLE_DEBUGGER_METRICS_BIND: 'example.com' }), ConfigError);
});

test("other pollers' identities (the SDK's default, a model worker's, anything) have no host and no metrics", () => {
  for (const identity of ['77@box', '77@box model:abc123', '', 'x host:', 'x host:a metrics:file:///etc/passwd'])
    assert.deepEqual(parseWorkerHostIdentity(identity), { process: identity, hostId: null, metricsUrl: null });
});
