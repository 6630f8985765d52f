// `env list|prune`: the environment images (dependencies installed for a repository).
import type { Command } from 'commander';
import pc from 'picocolors';
import { positiveNumber } from '../commandSupport.js';

/** Docker and the image list, loaded when used: the command line answers quickly without them. */
async function images() {
  const [{ connectDocker }, list] = await Promise.all([
    import('../../sandbox/container/container.js'),
    import('../../sandbox/environment/imageList.js'),
  ]);
  return { docker: connectDocker(), ...list };
}

export function envCommand(program: Command): void {
  const env = program
    .command('env')
    .description('the environment images (dependencies installed for a repository, cached by their manifests)');
  env
    .command('list')
    .description('list the environment images on this Docker engine')
    .option('--json', 'print JSON lines')
    .action(async (options: { json?: boolean }) => {
      const { docker, listEnvironmentImages } = await images();
      const found = await listEnvironmentImages(docker);
      for (const info of found) {
        if (options.json) {
          console.log(JSON.stringify(info));
          continue;
        }
        const packages = info.packages === null ? '' : `, ${info.packages} packages`;
        const used = info.usedBy ? pc.yellow(` · in use by ${info.usedBy} container(s)`) : '';
        const stale = info.hostSettings.length
          ? pc.red(
              ` · keeps host settings (${info.hostSettings.join(', ')}): built by an earlier version, never reused`,
            )
          : '';
        console.log(
          `${pc.bold(info.image)}  ${info.description ?? info.kind ?? ''}${packages} · ${(info.sizeBytes / 1e6).toFixed(0)} MB · ${info.createdAt.toISOString()}${used}${stale}`,
        );
      }
      if (!options.json && found.length === 0) console.log('No environment images.');
    });
  env
    .command('prune')
    .description('remove environment images that no container uses (the next run of their repository builds again)')
    .option('--older-than-days <n>', 'only images built more than n days ago', positiveNumber)
    .option(
      '--stale',
      "only images built by earlier versions that keep the host's package settings in their Config.Env",
    )
    .action(async (options: { olderThanDays?: number; stale?: boolean }) => {
      const { docker, pruneEnvironmentImages } = await images();
      const removed = await pruneEnvironmentImages(docker, {
        olderThanMs: (options.olderThanDays ?? 0) * 86_400_000,
        stale: options.stale,
      });
      for (const info of removed) console.log(`removed ${info.image} (${(info.sizeBytes / 1e6).toFixed(0)} MB)`);
      if (removed.length === 0) console.log('Nothing to prune.');
    });
}
