import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiTools, parseToolCall } from '../../src/agent/tools.js';
import { parseDebugInput } from '../../src/agent/input.js';

test('the API tool list is generated from the registry, with run_command only when allowed', () => {
  const tools = apiTools({ allowCommands: false });
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['run_tests', 'list_files', 'read_file', 'search_code', 'edit_file', 'write_file', 'finish'],
  );
  const readFile = tools.find((tool) => tool.name === 'read_file');
  assert.equal(readFile?.input_schema.type, 'object');
  assert.deepEqual(readFile?.input_schema.required, ['path']);
  assert.ok(apiTools({ allowCommands: true }).some((tool) => tool.name === 'run_command'));
});

test('the API tool list is made once per setting and shared, frozen, by every model call', () => {
  const first = apiTools({ allowCommands: false });
  assert.equal(apiTools({ allowCommands: false }), first);
  assert.notEqual(apiTools({ allowCommands: true }), first);
  assert.equal(apiTools({ allowCommands: true }), apiTools({ allowCommands: true }));
  const readFile = first.find((tool) => tool.name === 'read_file');
  assert.throws(() => {
    (readFile?.input_schema as Record<string, unknown>).type = 'array';
  }, TypeError);
  assert.equal(readFile?.input_schema.type, 'object');
});

test('bad tool calls become errors the model can act on', () => {
  const unknown = parseToolCall({ id: '1', name: 'delete_everything', input: {} }, { allowCommands: false });
  assert.equal(unknown.ok, false);
  assert.match(!unknown.ok ? unknown.error : '', /Unknown tool "delete_everything"\. Available tools: run_tests/);
  const bad = parseToolCall({ id: '2', name: 'read_file', input: { path: 7 } }, { allowCommands: false });
  assert.match(!bad.ok ? bad.error : '', /Invalid input for read_file: path:/);
  const extra = parseToolCall({ id: '3', name: 'edit_file', input: { path: 'a', old_string: 'x', new_string: 'y', force: true } }, { allowCommands: false });
  assert.equal(extra.ok, false);
  const commandOff = parseToolCall({ id: '4', name: 'run_command', input: { command: 'ls' } }, { allowCommands: false });
  assert.equal(commandOff.ok, false);
  const good = parseToolCall({ id: '5', name: 'read_file', input: { path: 'a.py', start_line: 2 } }, { allowCommands: false });
  assert.equal(good.ok && good.effect, 'read');
});

test('workflow input errors name the field', () => {
  assert.throws(() => parseDebugInput({}), /repo: /);
  assert.throws(() => parseDebugInput({ repo: '/x', budgets: { maxIterations: 'many' } }), /budgets\.maxIterations: /);
  assert.throws(() => parseDebugInput({ repo: '/x', colour: 'blue' }), /unknown field\(s\) "colour"/);
  const input = parseDebugInput({ repo: '/x' });
  assert.equal(input.budgets.maxIterations, 30);
  assert.equal(input.sandbox.memoryMb, 512);
  assert.equal(input.allowTestEdits, false);
});
