// `env list|prune`: the environment images (dependencies installed for a repository).
import type { Command } from 'commander';
import pc from 'picocolors';
import { connectDocker } from '../../sandbox/container.js';
import { listEnvironmentImages, pruneEnvironmentImages } from '../../sandbox/environment/imageList.js';
import { positiveNumber } from '../commandSupport.js';

export function envCommand(program: Command): void {
  const env = program
    .command('env')
    .description('the environment images (dependencies installed for a repository, cached by their manifests)');
  env
    .command('list')
    .description('list the environment images on this Docker engine')
    .option('--json', 'print JSON lines')
    .action(async (options: { json?: boolean }) => {
      const images = await listEnvironmentImages(connectDocker());
      for (const info of images) {
        if (options.json) {
          console.log(JSON.stringify(info));
          continue;
        }
        const packages = info.packages === null ? '' : `, ${info.packages} packages`;
        const used = info.usedBy ? pc.yellow(` · in use by ${info.usedBy} container(s)`) : '';
        console.log(
          `${pc.bold(info.image)}  ${info.description ?? info.kind ?? ''}${packages} · ${(info.sizeBytes / 1e6).toFixed(0)} MB · ${info.createdAt.toISOString()}${used}`,
        );
      }
      if (!options.json && images.length === 0) console.log('No environment images.');
    });
  env
    .command('prune')
    .description('remove environment images that no container uses (the next run of their repository builds again)')
    .option('--older-than-days <n>', 'only images built more than n days ago', positiveNumber)
    .action(async (options: { olderThanDays?: number }) => {
      const removed = await pruneEnvironmentImages(connectDocker(), {
        olderThanMs: (options.olderThanDays ?? 0) * 86_400_000,
      });
      for (const info of removed) console.log(`removed ${info.image} (${(info.sizeBytes / 1e6).toFixed(0)} MB)`);
      if (removed.length === 0) console.log('Nothing to prune.');
    });
}
