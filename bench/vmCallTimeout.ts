// What the SDK's isolateExecutionTimeout costs each call into a workflow's V8 context: Node starts
// a watchdog thread for every vm call made with a `timeout`, and the SDK makes three per activation
// (activate, tryUnblockConditions, concludeActivation). Alternating, in one run, the same one-line
// script with and without a timeout.
//   node --import tsx bench/vmCallTimeout.ts [calls]
import vm from 'node:vm';
import { figure, number } from './stats.js';

const calls = Number(process.argv[2] ?? 5_000);
const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
const script = new vm.Script('globalThis.n = (globalThis.n || 0) + 1');

function microsecondsPerCall(options: vm.RunningScriptOptions): number {
  const started = process.hrtime.bigint();
  for (let call = 0; call < calls; call++) script.runInContext(context, options);
  return Number(process.hrtime.bigint() - started) / calls / 1000;
}

const timed: number[] = [];
const untimed: number[] = [];
for (let round = 0; round < 5; round++) {
  timed.push(microsecondsPerCall({ timeout: 5_000 }));
  untimed.push(microsecondsPerCall({}));
}
const [withTimeout, without] = [figure(timed), figure(untimed)];
console.log(`vm call, median of 5 rounds of ${calls} calls:`);
console.log(`  with the SDK's timeout (5 s)   ${number(withTimeout.median)} µs`);
console.log(`  without a timeout              ${number(without.median)} µs`);
console.log(`  ratio                          ${number(withTimeout.median / without.median)}×`);
