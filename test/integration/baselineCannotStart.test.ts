// A baseline test command that cannot start (the shell's exit 127: the program is not installed)
// ends the run with environment_error naming the program, before any model call: no edit of the
// repository could make the sandbox run it. Real Temporal dev server, real Docker, fake model API.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  runToReport,
  startTestServer,
  startTestWorker,
  type TestServer,
  type TestWorker,
} from '../../harness/devStack.js';

let server: TestServer;
let worker: TestWorker;
let scratch: string;

before(async () => {
  server = await startTestServer();
  worker = await startTestWorker(server, { fake: { scripts: {} } });
  scratch = await mkdtemp(join(tmpdir(), 'baseline-cannot-start-'));
});

after(async () => {
  await worker?.stop();
  await server?.stop();
  await rm(scratch, { recursive: true, force: true });
});

test(
  'a test command whose program is not installed ends with environment_error naming it, before any model call',
  { timeout: 300_000 },
  async () => {
    // A Ruby gem's shape: its CI runs `bundle exec rspec`; the sandbox has no Ruby.
    const repo = join(scratch, 'slugify');
    await mkdir(join(repo, 'lib'), { recursive: true });
    await mkdir(join(repo, 'spec'), { recursive: true });
    await writeFile(join(repo, 'Gemfile'), "source 'https://rubygems.org'\ngemspec\ngem 'rspec', '~> 3.13'\n");
    await writeFile(join(repo, 'lib', 'slugify.rb'), 'module Slugify\n  def self.call(text) = text.downcase\nend\n');
    await writeFile(
      join(repo, 'spec', 'slugify_spec.rb'),
      "require 'slugify'\nRSpec.describe Slugify do\n  it('dashes spaces') { expect(Slugify.call('A b')).to eq('a-b') }\nend\n",
    );
    const requestsBefore = worker.fake.requests.length;

    const { report } = await runToReport(
      server,
      worker.taskQueue,
      { repo, testCommand: 'bundle exec rspec' },
      `baseline-cannot-start-${process.pid}`,
    );
    assert.equal(report.status, 'environment_error', `${report.stopCondition}: ${report.stopDetail}`);
    assert.match(report.stopDetail, /`bundle` is not installed in the sandbox \(exit 127\)/);
    assert.match(report.stopDetail, /bundle: (command )?not found/);
    assert.equal(worker.fake.requests.length, requestsBefore, 'no model request was made');
    assert.equal(report.iterations, 0);
  },
);
