// C and C++'s check that the tests build from the workspace's sources: CMake's build folder is
// configured from /workspace, and no installed package (a Debian -dev package of the project
// itself, pulled in by the apt list) provides the project's own headers, which an #include <…>
// could find before the workspace's. Pure: the builder runs it (probeRunner.ts).
import type { EnvironmentProbe } from '../planTypes.js';
import type { CppProject } from './cppProject.js';

/** The project's public headers as an #include names them: include/foo/bar.h → foo/bar.h. */
function ownHeaders(files: string[]): string[] {
  return files
    .filter((path) => /^include\/[\w+./-]+\.(h|hh|hpp|hxx)$/.test(path))
    .map((path) => path.slice('include/'.length))
    .slice(0, 200);
}

export function cppWorkspaceProbe(files: string[], project: CppProject, inOurImage: boolean): EnvironmentProbe {
  const headers = ownHeaders(files);
  const lines = ['status=0'];
  // An image the repository or the run names has no /opt/build of ours: only its headers are checked.
  if (inOurImage && project.build.kind === 'cmake') {
    lines.push(
      'source=$(sed -n "s/^CMAKE_HOME_DIRECTORY:INTERNAL=//p" /opt/build/CMakeCache.txt 2>/dev/null)',
      'if [ "$source" != /workspace ]; then echo "CMake\'s build folder /opt/build is configured from ${source:-nothing}, not from /workspace"; status=1; fi',
    );
  }
  if (headers.length) {
    lines.push(
      `for header in ${headers.map((header) => `'${header}'`).join(' ')}; do`,
      '  for root in /usr/include /usr/local/include; do',
      '    if [ -e "$root/$header" ]; then echo "$root/$header is installed in the image: an #include <$header> could find it instead of /workspace/include/$header (a Debian package of the project itself?)"; status=1; fi',
      '  done',
      'done',
    );
  }
  lines.push('exit $status');
  return {
    description:
      'the tests build from /workspace: CMake is configured from it, and no installed package has its headers',
    files: [],
    script: lines.join('\n'),
    advice:
      "The image holds the project's own build or headers: leave the project out of the apt list, and in an image or Dockerfile you bring, do not make install it.",
  };
}
