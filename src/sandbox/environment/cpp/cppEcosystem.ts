// C and C++: CMakeLists.txt (configure, build, ctest), else a Makefile with a `check` or `test`
// target; the toolchain and libraries from Debian (cppPlan.ts).
import type { Ecosystem } from '../ecosystem.js';
import { planCpp } from './cppPlan.js';
import { cppWorkspaceProbe } from './cppProbes.js';
import { isCppManifest, readCppProject } from './cppProject.js';

export const cppEcosystem: Ecosystem = {
  kind: 'cpp',
  isManifest: isCppManifest,
  plan: ({ files, manifests, chosen }) => {
    const plan = planCpp(files, manifests, chosen.apt ?? []);
    return plan && { ...plan, testCommand: chosen.testCommand ?? plan.testCommand };
  },
  workspaceProbe: (files, manifests) => {
    const project = readCppProject(files, manifests);
    return project ? cppWorkspaceProbe(files, project, false) : null;
  },
};
