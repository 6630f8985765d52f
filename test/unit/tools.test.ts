import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  apiTools,
  describeToolCall,
  dropOversizedInputs,
  maxToolInputBytes,
  oversizedInputError,
  parseToolCall,
  toolNames,
  tools,
} from '../../src/agent/tools.js';
import type { AssistantBlock } from '../../src/agent/conversation.js';
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
  const extra = parseToolCall(
    { id: '3', name: 'edit_file', input: { path: 'a', old_string: 'x', new_string: 'y', force: true } },
    { allowCommands: false },
  );
  assert.equal(extra.ok, false);
  const commandOff = parseToolCall(
    { id: '4', name: 'run_command', input: { command: 'ls' } },
    { allowCommands: false },
  );
  assert.equal(commandOff.ok, false);
  const good = parseToolCall(
    { id: '5', name: 'read_file', input: { path: 'a.py', start_line: 2 } },
    { allowCommands: false },
  );
  assert.equal(good.ok && good.effect, 'read');
});

test('workflow input errors name the field', () => {
  assert.throws(() => parseDebugInput({}), /repo: /);
  assert.throws(() => parseDebugInput({ repo: '/x', budgets: { maxIterations: 'many' } }), /budgets\.maxIterations: /);
  assert.throws(() => parseDebugInput({ repo: '/x', colour: 'blue' }), /unknown field\(s\) "colour"/);
  // Relative to what? A worker would resolve it against its own folder.
  for (const relative of ['myrepo', './myrepo', '../x', '~/src/app'])
    assert.throws(
      () => parseDebugInput({ repo: relative }),
      new RegExp(
        `Invalid debugRepository input: repo: "${relative.replace(/[.]/g, '\\.')}" is a relative path: give the repository's absolute path`,
      ),
    );
  assert.throws(
    () => parseDebugInput({ repo: '' }),
    /Invalid debugRepository input: repo: repo must be the path of the repository to debug$/,
  );
  assert.equal(parseDebugInput({ repo: 'C:\\src\\app' }).repo, 'C:\\src\\app');
  const input = parseDebugInput({ repo: '/x' });
  assert.equal(input.budgets.maxIterations, 30);
  assert.equal(input.sandbox.memoryMb, 2048);
  assert.equal(input.allowTestEdits, false);
});

test('each tool is one record: schema, description, effect, summary and executor', () => {
  for (const name of toolNames) {
    const record = tools[name];
    assert.ok(record.description.length > 20, name);
    assert.equal(record.input.safeParse(null).success, false, name);
    assert.ok(['read', 'mutate', 'finish'].includes(record.effect), name);
    assert.ok(['sandbox', 'workflow'].includes(record.executor), name);
    assert.equal((record.effect === 'finish') === (record.executor === 'workflow'), true, name);
    assert.ok(describeToolCall(name, {}).startsWith(name), name);
  }
});

test('a call is described in one short line from its record, whatever its input', () => {
  assert.equal(describeToolCall('read_file', { path: 'a.py', start_line: 3, end_line: 9 }), 'read_file a.py:3-9');
  assert.equal(describeToolCall('read_file', { path: 'a.py', start_line: 3 }), 'read_file a.py:3-');
  assert.equal(describeToolCall('edit_file', { path: 'src/x.py' }), 'edit_file src/x.py');
  assert.equal(describeToolCall('list_files', undefined), 'list_files .');
  assert.equal(describeToolCall('run_tests', {}), 'run_tests');
  assert.equal(describeToolCall('run_tests', { path: 't.py::x' }), 'run_tests t.py::x');
  assert.equal(describeToolCall('search_code', { pattern: 'def +mean', path: 'src' }), 'search_code def +mean in src');
  assert.equal(describeToolCall('run_command', { command: 'ls   -la\n\tpwd' }), 'run_command ls -la pwd');
  assert.equal(describeToolCall('write_file', { path: 'x'.repeat(100) }), `write_file ${'x'.repeat(59)}…`);
  assert.equal(describeToolCall('finish', { root_cause: 'anything' }), 'finish');
  // Unknown names (and names of Object.prototype members) are shown, shortened, not run.
  assert.equal(describeToolCall('toString', {}), 'toString');
  assert.equal(describeToolCall('y'.repeat(80), null), `${'y'.repeat(59)}…`);
});

test('the oversized-input rule drops a too large input and keeps the call, so it can be refused', () => {
  const atLimit = {
    path: 'a',
    content: 'x'.repeat(maxToolInputBytes - JSON.stringify({ path: 'a', content: '' }).length),
  };
  const over = { path: 'b', content: 'x'.repeat(maxToolInputBytes) };
  const blocks: AssistantBlock[] = [
    { type: 'text', text: 'Writing two files.' },
    { type: 'tool_use', id: 'kept', name: 'write_file', input: atLimit },
    { type: 'tool_use', id: 'dropped', name: 'write_file', input: over },
  ];
  const { blocks: kept, oversized } = dropOversizedInputs(blocks);
  assert.deepEqual(kept.slice(0, 2), blocks.slice(0, 2));
  assert.deepEqual(kept[2], { type: 'tool_use', id: 'dropped', name: 'write_file', input: {} });
  assert.deepEqual(oversized, [{ id: 'dropped', bytes: JSON.stringify(over).length }]);
  assert.match(
    oversizedInputError('write_file', 300_000),
    /write_file call was 300000 bytes, over the limit of 262144\. Make smaller changes/,
  );
});
