// The durable-debugger command of the checkout: node runs src/cli/main.ts through tsx (the
// package's bin is the built dist/cli.js). tsx is named by its file URL, so any working folder works.
import { join } from 'node:path';
import { projectRoot } from '../src/config.js';

/** Arguments to `node` before the command's own. */
export const checkoutCli = ['--import', import.meta.resolve('tsx'), join(projectRoot, 'src', 'cli', 'main.ts')];
