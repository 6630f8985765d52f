// The sandbox image with Debian's C and C++ compilers and make, built once per host and shared as the
// base of the toolchain images that compile native code as CI's runners do: Go's (cgo), Node's
// (node-gyp's addons) and Rust's (rustc links through cc; build scripts compile C and C++). One layer
// of about 250 MB on disk, where each toolchain image had its own copy.
import { aptInstallScript } from './debianPackages.js';
import type { EnvironmentPlan } from '../planTypes.js';

export function compilersPlan(): EnvironmentPlan {
  return {
    // A C and C++ toolchain: listed among the environments as one.
    kind: 'cpp',
    description: "compilers · Debian's gcc, g++, make",
    installers: ['apt'],
    files: {},
    script: ['set -e', aptInstallScript(['gcc', 'g++', 'make', 'libc6-dev'])].join('\n'),
    needsRepository: false,
    toolchains: [],
    build: [],
    containerEnv: [],
    probes: [],
  };
}
