const assert = require('node:assert/strict');
const { test } = require('node:test');
const weekday = require('release-calendar');

test('a release date has its weekday', () => {
  assert.equal(weekday('2026-12-05'), 'Sat');
});
