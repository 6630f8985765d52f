// The tests load the package by its own name, as its users do.
const test = require('node:test');
const assert = require('node:assert/strict');
const ms = require('ms');

test('the tests exercise the workspace, not the copy debug brought from the registry', () => {
  assert.equal(ms.fromWorkspace, true);
});

test('parses units', () => {
  assert.equal(ms('2h'), 7_200_000);
  assert.equal(ms('1.5s'), 1500);
});
