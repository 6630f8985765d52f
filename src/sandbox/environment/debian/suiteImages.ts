// The sandbox image's variants from other Debian suites: `durable-debugger setup --python 3.13`
// builds the one from trixie (named after the Python it brings), on which other ecosystems build
// for a toolchain only that suite has (Java 21).
import { debianPythons, pythonVariantImage } from '../python/pythonVersions.js';

/** The sandbox image itself without a suite; else its variant from that suite. */
export function suiteImage(sandboxImage: string, suite: string | undefined): string {
  const python = suite && debianPythons.find((each) => each.suite === suite);
  return python ? pythonVariantImage(sandboxImage, python.minor) : sandboxImage;
}

/** The command that builds the variant from `suite`. */
export function suiteSetupCommand(suite: string): string {
  const python = debianPythons.find((each) => each.suite === suite);
  return python ? `durable-debugger setup --python ${python.minor}` : 'durable-debugger setup';
}
