// The private task queue of one user's commands on this machine with one data folder
// (src/temporal/servedRuns.ts). Light on purpose: a command asks it before loading Temporal.
import { createHash } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { privateQueueName } from '../agent/runQueues.js';

export function dataFolderQueue(home: string): string {
  const user = (() => {
    try {
      return userInfo().username;
    } catch {
      return process.env.USER ?? 'unknown';
    }
  })();
  const folder = createHash('sha256').update(home).digest('hex').slice(0, 12);
  return privateQueueName(hostname(), user, folder);
}
