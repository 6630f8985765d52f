// What a project's noxfile.py installs for its tests, as `nox` in CI installs it: the
// `session.install(...)` calls of its test sessions (named for tests, or running pytest) and of the
// noxfile's own functions they call (google-cloud's `install_unittest_dependencies`). Read without
// running Python: string literals, and lists of them spread with `*NAME`; an argument computed any
// other way is left out. The arguments are read as pip reads them (pipInstallArguments.ts).
import { pipInstallArguments, type TestInstalls } from './pipInstallArguments.js';

/** The file the build gets them in, beside the repository's requirements files (`-r` lines stay relative to the root). */
export const noxRequirements = 'durable-debugger-nox-deps.txt';

export function noxTestDeps(text: string | undefined): TestInstalls {
  if (text === undefined) return { requirements: [], extras: [] };
  const code = withoutComments(text);
  const constants = listConstants(code);
  const functions = topLevelFunctions(code);
  const read = new Set<string>();
  const pending = [...functions.values()].filter((fn) => fn.session && isTestSession(fn)).map((fn) => fn.name);
  const args: string[] = [];
  for (let name = pending.shift(); name !== undefined; name = pending.shift()) {
    const fn = functions.get(name);
    if (!fn || read.has(name)) continue;
    read.add(name);
    for (const call of calls(fn.body, 'session.install')) args.push(...literalArguments(call, constants));
    // The noxfile's own helpers a test session calls with its session.
    for (const [, called] of fn.body.matchAll(/\b([A-Za-z_]\w*)\(\s*session\b/g))
      if (functions.has(called as string)) pending.push(called as string);
  }
  return pipInstallArguments(args);
}

interface NoxFunction {
  name: string;
  /** Decorated with @nox.session. */
  session: boolean;
  body: string;
}

/** A session named for tests, or one that runs pytest (`session.run("pytest", ...)`, `-m pytest`, `py.test`). */
function isTestSession(fn: NoxFunction): boolean {
  return (
    /test|unit/i.test(fn.name) ||
    /session\.run\(\s*(["'](py\.?test|coverage)["']|["']python3?["']\s*,\s*["']-m["']\s*,\s*["']pytest["'])/.test(
      fn.body,
    )
  );
}

/** Python without its `#` comments (a `#` inside a string literal is kept). */
function withoutComments(text: string): string {
  return text.replace(
    /("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|#[^\n]*/g,
    (match, literal: string | undefined) => literal ?? '',
  );
}

/** More requirements than any test session installs. */
const maxListItems = 1000;

/**
 * Lists of string literals by name: `NAME = ["a", "b"]`, and sums of such lists and names
 * (`deps = STANDARD + EXTRA`), at module level or in a function (google-cloud's `standard_deps`).
 * Read in one pass: a list's text runs to its first `]`.
 */
function listConstants(code: string): Map<string, string[]> {
  const constants = new Map<string, string[]>();
  const assignment = /^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*(?=[[A-Za-z_])/gm;
  for (let match = assignment.exec(code); match; match = assignment.exec(code)) {
    const items: string[] = [];
    let at = assignment.lastIndex;
    let known = false;
    for (;;) {
      if (code[at] === '[') {
        const end = code.indexOf(']', at);
        // No `]` to the end: no later list closes either, and nothing is left to read.
        if (end === -1) {
          at = code.length;
          break;
        }
        items.push(...stringLiterals(code.slice(at + 1, end)));
        known = true;
        at = end + 1;
      } else {
        const name = /^[A-Za-z_]\w*/.exec(code.slice(at, at + 200))?.[0];
        if (!name || !constants.has(name)) break;
        items.push(...(constants.get(name) as string[]));
        known = true;
        at += name.length;
      }
      const plus = /^\s*\+\s*/.exec(code.slice(at, at + 200));
      if (!plus) break;
      at += plus[0].length;
    }
    // Capped: lists that add up each other (`b = a + a`, `c = b + b`, …) would double at every line.
    if (known && /^[ \t]*(\n|$)/.test(code.slice(at, at + 200)))
      constants.set(match[1] as string, items.slice(0, maxListItems));
    assignment.lastIndex = Math.max(assignment.lastIndex, at);
  }
  return constants;
}

/**
 * Top-level `def name(...)` bodies, each up to the next top-level statement, and whether the
 * decorators right above it make it a session. One pass over the lines: the file is the repository's.
 */
function topLevelFunctions(code: string): Map<string, NoxFunction> {
  const functions = new Map<string, NoxFunction>();
  let decorators: string[] = [];
  let current: { fn: NoxFunction; lines: string[] } | null = null;
  const close = () => {
    if (current) functions.set(current.fn.name, { ...current.fn, body: current.lines.join('\n') });
    current = null;
  };
  for (const line of code.split('\n')) {
    const topLevel = /^[^\s)\]}]/.test(line);
    if (!topLevel) {
      if (current) current.lines.push(line);
      else if (decorators.length) decorators.push(line);
      continue;
    }
    close();
    const def = line.match(/^def\s+([A-Za-z_]\w*)\s*\((.*)$/);
    if (def) {
      const session = decorators.some((decorator) => /^@nox\.session\b/.test(decorator));
      current = { fn: { name: def[1] as string, session, body: '' }, lines: [def[2] as string] };
      decorators = [];
    } else if (line.startsWith('@')) decorators.push(line);
    else decorators = [];
  }
  close();
  return functions;
}

/** The argument text of each `callee(...)` in `body`, up to its matching parenthesis. */
function calls(body: string, callee: string): string[] {
  const found: string[] = [];
  for (let at = body.indexOf(`${callee}(`); at !== -1; at = body.indexOf(`${callee}(`, at + 1)) {
    let depth = 0;
    const open = at + callee.length;
    for (let index = open; index < body.length; index++) {
      const char = body[index];
      if (char === '(') depth++;
      else if (char === ')' && --depth === 0) {
        found.push(body.slice(open + 1, index));
        break;
      }
    }
  }
  return found;
}

/** A call's positional string arguments: literals, and `*NAME` of a module-level list; keyword arguments left out. */
function literalArguments(call: string, constants: Map<string, string[]>): string[] {
  const args: string[] = [];
  for (const part of topLevelParts(call)) {
    const text = part.trim();
    if (!text || /^\w+\s*=/.test(text)) continue;
    const spread = text.match(/^\*\s*([A-Za-z_]\w*)$/);
    if (spread) args.push(...(constants.get(spread[1] as string) ?? []));
    else if (/^(["']).*\1$/s.test(text)) args.push(...stringLiterals(text));
  }
  return args;
}

/** A call's arguments: split at the commas outside string literals and brackets. */
function topLevelParts(call: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let index = 0; index < call.length; index++) {
    const char = call[index] as string;
    if (quote) {
      if (char === '\\') index++;
      else if (char === quote) quote = null;
    } else if (char === '"' || char === "'") quote = char;
    else if ('([{'.includes(char)) depth++;
    else if (')]}'.includes(char)) depth--;
    else if (char === ',' && depth === 0) {
      parts.push(call.slice(start, index));
      start = index + 1;
    }
  }
  return [...parts, call.slice(start)];
}

function stringLiterals(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'/g)].map(
    (match) => (match[1] ?? match[2]) as string,
  );
}
