const assert = require('node:assert/strict');
const { test } = require('node:test');
const semver = require('semver');
const probe = require('@hostile/probe');

test('dependencies from both registries are installed', () => {
  assert.equal(semver.maxSatisfying(['1.0.0', '1.4.2', '2.0.0'], '^1.0.0'), '1.4.2');
  assert.equal(probe.name, '@hostile/probe');
});
