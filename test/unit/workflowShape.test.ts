// The workflow stays readable (issue #13): the loop's file is short, no class in workflows/ grows
// past a dozen members, and nothing in workflows/ repeats a rule the run core owns.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { projectRoot } from '../../src/config.js';

const workflowsFolder = join(projectRoot, 'workflows');
const maxLoopLines = 250;
const maxClassMembers = 12;

async function workflowSources(): Promise<Array<{ file: string; text: string }>> {
  const files = (await readdir(workflowsFolder)).filter((file) => file.endsWith('.ts'));
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(join(workflowsFolder, file), 'utf8') })));
}

/** Each class of a source with its members: fields, parameter properties, the constructor, methods, accessors. */
function classMembers(file: string, text: string): Array<{ name: string; members: number }> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const classes: Array<{ name: string; members: number }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const parameterProperties = node.members
        .filter(ts.isConstructorDeclaration)
        .flatMap((constructor) => constructor.parameters.filter((parameter) => ts.getModifiers(parameter)?.length));
      classes.push({
        name: node.name?.text ?? '(anonymous)',
        members: node.members.length + parameterProperties.length,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return classes;
}

test(`workflows/debugRepository.ts keeps to the handlers and the loop: at most ${maxLoopLines} lines`, async () => {
  const text = await readFile(join(workflowsFolder, 'debugRepository.ts'), 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  assert.ok(lines <= maxLoopLines, `debugRepository.ts has ${lines} lines`);
});

test(`no class in workflows/ has more than ${maxClassMembers} members`, async () => {
  const large = (await workflowSources()).flatMap(({ file, text }) =>
    classMembers(file, text)
      .filter((each) => each.members > maxClassMembers)
      .map((each) => `${file}: ${each.name} has ${each.members} members`),
  );
  assert.deepEqual(large, []);
});

test('the member count sees fields, parameter properties, the constructor and methods', () => {
  const text = 'class A { x = 1; constructor(private readonly y: number, z: number) {} get w() { return 1; } m() {} }';
  assert.deepEqual(classMembers('a.ts', text), [{ name: 'A', members: 5 }]);
});

test('the words the model is told live in the run core and its prompts, not in workflows/', async () => {
  const repeated = (await workflowSources()).filter(({ text }) =>
    /Verified: the test suite passes|Your fix was not verified/.test(text),
  );
  assert.deepEqual(
    repeated.map(({ file }) => file),
    [],
  );
});
