import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostsFile, registryRoutes } from '../../src/sandbox/environment/registryRoutes.js';

test('registry routes: one loopback address per registry host on 443; address literals, other ports and localhost go through the proxy', () => {
  const routes = registryRoutes([
    { host: 'registry.npmjs.org', port: 443 },
    { host: 'pypi.org', port: 443 },
    { host: 'registry.npmjs.org', port: 443 },
    { host: 'npm.company.example', port: 8443 },
    { host: '127.0.0.1', port: 443 },
    { host: '::1', port: 443 },
    { host: 'localhost', port: 443 },
    { host: 'mirror.example', port: 80 },
  ]);
  assert.deepEqual(routes, [
    { host: 'registry.npmjs.org', address: '127.1.0.1' },
    { host: 'pypi.org', address: '127.1.0.2' },
  ]);
  const hosts = hostsFile(routes);
  assert.match(hosts, /^127\.0\.0\.1\tlocalhost$/m);
  assert.match(hosts, /^127\.1\.0\.1\tregistry\.npmjs\.org$/m);
  assert.match(hosts, /^127\.1\.0\.2\tpypi\.org$/m);
});

test('registry routes: at most 254, in the order the registries are named', () => {
  const many = Array.from({ length: 300 }, (_, index) => ({ host: `r${index}.example`, port: 443 }));
  const routes = registryRoutes(many);
  assert.equal(routes.length, 254);
  assert.deepEqual(routes.at(-1), { host: 'r253.example', address: '127.1.0.254' });
});
