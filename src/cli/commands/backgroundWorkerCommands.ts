// `worker status` and `worker stop`: this user's background worker (src/cli/backgroundWorker.ts),
// and the hidden `worker background` that is that worker (started by `run`, never by hand).
import type { Command } from 'commander';

export function backgroundWorkerCommands(worker: Command): void {
  worker
    .command('status')
    .description('show your background worker: running (pid, version, idle time, task queue) or not')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const [{ loadConfig }, { backgroundWorkerStatus, describeStatus }] = await Promise.all([
        import('../../config.js'),
        import('../backgroundWorkerState.js'),
      ]);
      const status = await backgroundWorkerStatus(loadConfig().home);
      console.log(options.json ? JSON.stringify({ running: status !== null, ...status }) : describeStatus(status));
    });
  worker
    .command('stop')
    .description('stop your background worker (the next `run` starts it again); the activities it holds finish first')
    .action(async () => {
      const [{ loadConfig }, state] = await Promise.all([
        import('../../config.js'),
        import('../backgroundWorkerState.js'),
      ]);
      const paths = state.backgroundWorkerPaths(loadConfig().home);
      const running = state.readState(paths);
      const answer = running && state.processAlive(running.pid) ? await state.askWorker(paths.socket, 'stop') : null;
      if (!answer) {
        console.log('The background worker is not running.');
        return;
      }
      const { pid, activities } = answer.status;
      // It ends once its activities have: say which, rather than wait for an environment build.
      for (let waited = 0; waited < 10_000 && state.processAlive(pid); waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      console.log(
        state.processAlive(pid)
          ? `The background worker (pid ${pid}) is stopping: it finishes the ${activities} activities it holds first.`
          : `The background worker (pid ${pid}) has stopped.`,
      );
    });
  worker
    .command('background', { hidden: true })
    .description('the background worker itself, started by `run`')
    .action(async () => (await import('../backgroundWorkerProcess.js')).runBackgroundWorker());
}
