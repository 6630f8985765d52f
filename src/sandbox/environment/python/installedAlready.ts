// After a lock's own installer (poetry install) has filled the venv, the requirements the build
// adds (the test runner) are usually there already, and pip would only start to say so: about 0.7 s
// of a Poetry build. A short check with the venv's Python answers first. It is conservative: any line
// it does not fully understand (options, URLs, extras, hashes) leaves the decision to pip.

const check = String.raw`import sys
def main():
    import importlib.metadata as metadata
    from pip._vendor.packaging.requirements import Requirement
    seen = set()
    def installed(requirement):
        if requirement.url or requirement.extras:
            return False
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            return True
        try:
            version = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            return False
        if not requirement.specifier.contains(version, prereleases=True):
            return False
        if requirement.name.lower() in seen:
            return True
        seen.add(requirement.name.lower())
        return all(installed(Requirement(each)) for each in metadata.requires(requirement.name) or [])
    for path in sys.argv[1:]:
        for line in open(path):
            line = line.split(" #")[0].strip()
            if line and not line.startswith("#") and (line.startswith("-") or not installed(Requirement(line))):
                return False
    return True
try:
    sys.exit(0 if main() else 1)
except Exception:
    sys.exit(1)`;

/** The check, as the build container gets it (/env-input/<file>). */
export const installedAlreadyCheck = {
  file: 'durable-debugger-installed-already.py',
  text: check,
};

/** A sh command that succeeds when every requirement of `files` and what each requires is installed in the venv of `python`. */
export function installedAlready(python: string, files: string[]): string {
  return `${python} /env-input/${installedAlreadyCheck.file} ${files.join(' ')}`;
}
