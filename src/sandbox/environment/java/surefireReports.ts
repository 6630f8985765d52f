// The Java environment's test command: Maven (or Gradle) runs, then Surefire's XML reports of every
// module (target/surefire-reports/TEST-*.xml) are printed as marked lines that src/agent/surefireOutput.ts
// reads: the results come from the reports, not the console. The reports of an earlier run are
// removed first, so a run whose build fails shows no stale results; a module with test sources but
// no reports after a failed run is named as not built. Maven runs with maven.test.failure.ignore, so a
// module's failing tests do not skip the modules that depend on it; the failures fail the command here.
import { surefireMark } from '../../../agent/surefireOutput.js';

/** Where the image keeps the script. */
export const surefireScriptPath = '/opt/java-env/surefire-reports.py';

/** The test command: `python3 <script> <maven command>`: exits with Maven's code. */
export function surefireTestCommand(command: string): string {
  return `python3 ${surefireScriptPath} ${command}`;
}

export const surefireScript = `# durable-debugger: runs the test command given as arguments, then prints its Surefire reports.
import os, shutil, subprocess, sys
import xml.etree.ElementTree as ET

MARK = ${JSON.stringify(surefireMark)}
SKIP = {".git", "node_modules", ".mvn", ".gradle", "src"}
SOURCES = (".java", ".kt", ".groovy", ".scala")

def say(line):
    print(MARK + " " + line, flush=True)

def walk():
    """Each module folder (a pom.xml or a build.gradle) and the report folders under its target/ or build/."""
    for folder, dirs, files in os.walk("."):
        dirs[:] = sorted(d for d in dirs if d not in SKIP and not os.path.islink(os.path.join(folder, d)))
        if os.path.basename(folder) in ("target", "build"):
            dirs[:] = []
            for name in ("surefire-reports", "test-results/test"):
                path = os.path.join(folder, name)
                if os.path.isdir(path):
                    yield "reports", os.path.dirname(folder), path
            continue
        if any(name in files for name in ("pom.xml", "build.gradle", "build.gradle.kts")):
            yield "module", folder, None

def has_test_sources(module):
    test = os.path.join(module, "src", "test")
    for folder, dirs, files in os.walk(test):
        if any(name.endswith(SOURCES) for name in files):
            return True
    return False

def label(module):
    """A module's artifactId (its pom.xml's own), else its folder."""
    try:
        for child in ET.parse(os.path.join(module, "pom.xml")).getroot():
            if child.tag.split("}")[-1] == "artifactId" and (child.text or "").strip():
                return child.text.strip()
    except Exception:
        pass
    return os.path.basename(os.path.abspath(module))

for kind, module, path in list(walk()):
    if kind == "reports":
        shutil.rmtree(path, ignore_errors=True)

status = subprocess.call(sys.argv[1:]) if len(sys.argv) > 1 else 2
sys.stdout.flush()

passed = failed = skipped = 0
modules, reported, failing, unreadable = [], set(), [], []
for kind, module, path in walk():
    if kind == "module":
        modules.append(module)
        continue
    counts = [0, 0, 0]
    for name in sorted(os.listdir(path)):
        if not (name.startswith("TEST-") and name.endswith(".xml")):
            continue
        try:
            root = ET.parse(os.path.join(path, name)).getroot()
        except Exception:
            unreadable.append(os.path.join(path, name))
            continue
        reported.add(os.path.normpath(module))
        for case in root.iter("testcase"):
            test = (case.get("classname") or "") + ("." if case.get("classname") else "") + (case.get("name") or "")
            if case.find("failure") is not None or case.find("error") is not None:
                counts[1] += 1
                failing.append(test)
            elif case.find("skipped") is not None:
                counts[2] += 1
            else:
                counts[0] += 1
    if os.path.normpath(module) in reported:
        say("%s: %d passed, %d failed, %d skipped" % (label(module), counts[0], counts[1], counts[2]))
        passed += counts[0]; failed += counts[1]; skipped += counts[2]

for test in sorted(set(failing)):
    say("FAILED " + test)
for path in unreadable:
    say("UNREADABLE " + path + ": a test JVM that crashed leaves its report half written")
not_built = []
if status != 0:
    for module in modules:
        if os.path.normpath(module) not in reported and has_test_sources(module):
            not_built.append(label(module))
            say("NOT BUILT %s: it has tests but no Surefire reports (its build failed, or a module it needs did)" % label(module))
say("total: %d passed, %d failed, %d skipped, %d not built (exit code %d)" % (passed, failed, skipped, len(not_built), status))
# Test failures do not stop Maven (maven.test.failure.ignore, so that every module's tests run): they fail the command here.
sys.exit(status if status != 0 else (1 if failed or not_built or unreadable else 0))
`;
