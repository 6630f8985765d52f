// The fixtures cover the cases the project needs, and each runs in exactly one integration test
// file: a fixture of a language no group takes would silently never run.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../src/config.js';
import { loadFixtures } from '../../src/demo/fixtures.js';
import { fixtureGroupNames, groupOf, groupTestFile } from '../support/fixtureGroups.js';

const fixtures = await loadFixtures();

test('the fixtures cover the cases the project needs', () => {
  assert.ok(fixtures.length >= 13, `only ${fixtures.length} fixtures`);
  const languages = fixtures.map((fixture) => fixture.meta.language);
  assert.ok(languages.filter((language) => language === 'javascript').length >= 4, 'fewer than 4 JavaScript fixtures');
  assert.ok(languages.includes('python'));
  for (const fixture of fixtures) {
    assert.match(fixture.name, /^\d\d_[a-z0-9_]+$/, `${fixture.name}: fixture folders are named NN_short_name`);
    assert.ok(fixture.meta.description, `${fixture.name}: no description`);
    // The scripted answers and the expectations must stay hidden from the agent.
    const hidden = readFileSync(join(fixture.path, '.durable-debugger-ignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim());
    assert.ok(
      hidden.includes('fixture.json') && hidden.includes('script.json'),
      `${fixture.name}: .durable-debugger-ignore must list fixture.json and script.json`,
    );
  }
});

test('every fixture runs in one group, and every group has its test file', () => {
  const ungrouped = fixtures.filter((fixture) => groupOf(fixture) === null).map((fixture) => fixture.name);
  assert.deepEqual(ungrouped, [], 'fixtures of a language no group runs');
  for (const group of fixtureGroupNames) {
    const file = groupTestFile(group);
    assert.ok(existsSync(join(projectRoot, file)), `${file} is missing`);
    assert.match(readFileSync(join(projectRoot, file), 'utf8'), new RegExp(`fixtureSuite\\('${group}'\\)`), file);
    assert.ok(
      fixtures.some((fixture) => groupOf(fixture) === group),
      `no fixture in ${group}`,
    );
  }
});
