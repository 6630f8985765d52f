// The fixtures run by language in three integration test files (fixturesPython, fixturesNode,
// fixturesCompiled): each a job of its own, so that none nears the runner's time limit and the
// lanes share the work; and each language's toolchain images are built in one lane's engine only.
import type { Fixture } from '../../src/demo/fixtures.js';

const languagesOf = {
  python: ['python'],
  node: ['javascript'],
  compiled: ['go', 'rust', 'java', 'c', 'cpp'],
} as const;

export type FixtureGroup = keyof typeof languagesOf;

export const fixtureGroupNames = Object.keys(languagesOf) as FixtureGroup[];

/** The group whose test file runs this fixture; null for a language no group takes. */
export function groupOf(fixture: Fixture): FixtureGroup | null {
  return (
    fixtureGroupNames.find((group) => (languagesOf[group] as readonly string[]).includes(fixture.meta.language)) ?? null
  );
}

/** The integration test file that runs a group's fixtures. */
export function groupTestFile(group: FixtureGroup): string {
  return `test/integration/fixtures${group[0]?.toUpperCase()}${group.slice(1)}.test.ts`;
}
