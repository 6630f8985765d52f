// A strict reader of the repository's durable-debugger.Dockerfile, following the rules of Docker's
// own parser (moby/buildkit frontend/dockerfile/parser, shared by the classic builder this worker
// drives): parser directives only at the very top (`# escape=`, `# syntax=`, `# check=`), the escape
// character ending a line (blanks may follow it) continues the instruction, comment and blank lines
// inside a continued instruction are dropped, a keyword is case-insensitive. The file is untrusted:
// whatever this reader does not understand is refused, never passed to Docker unchecked. What it
// refuses: a `syntax` directive (a frontend image would run the build), ADD of anything but a plain
// path of the repository (a URL or git source is fetched by dockerd on the host's network), build
// arguments where an image or an ADD source is named, RUN flags (--mount, --network, --security),
// heredocs, ONBUILD, and instructions Docker does not have.
import { EnvironmentConfigError, repositoryDockerfile } from './planTypes.js';
import { quoted } from './excerpt.js';

export interface DockerfileInstruction {
  /** Upper case: FROM, RUN, COPY, … */
  keyword: string;
  /** `--name=value` or `--name` words before the arguments. */
  flags: Array<{ name: string; value: string | null }>;
  /** The arguments: a JSON array's strings, or the words of the shell form. */
  words: string[];
  /** The line the instruction starts on (1-based), for messages. */
  line: number;
}

export interface ParsedDockerfile {
  instructions: DockerfileInstruction[];
  /** The images FROM names (not `scratch`, not earlier stages). */
  fromImages: string[];
  /** The images COPY --from names (not stages). */
  copiedImages: string[];
  /** Whether any COPY or ADD reads the build context (the repository). */
  readsRepository: boolean;
}

const knownInstructions = new Set([
  'FROM',
  'RUN',
  'CMD',
  'LABEL',
  'MAINTAINER',
  'EXPOSE',
  'ENV',
  'ADD',
  'COPY',
  'ENTRYPOINT',
  'VOLUME',
  'USER',
  'WORKDIR',
  'ARG',
  'STOPSIGNAL',
  'HEALTHCHECK',
  'SHELL',
]);

/** The flags each instruction may carry; instructions not named here may carry none. */
const allowedFlags: Record<string, ReadonlySet<string>> = {
  FROM: new Set(['platform']),
  COPY: new Set(['from', 'chown', 'chmod', 'link', 'parents', 'exclude']),
  ADD: new Set(['chown', 'chmod', 'link', 'exclude']),
  HEALTHCHECK: new Set(['interval', 'timeout', 'start-period', 'start-interval', 'retries']),
};

const directivePattern = /^#[ \t]*([a-zA-Z][a-zA-Z0-9]*)[ \t]*=[ \t]*(.+?)[ \t]*$/;
const knownDirectives = new Set(['syntax', 'escape', 'check']);

function refuse(line: number, what: string): never {
  throw new EnvironmentConfigError(`${repositoryDockerfile} line ${line}: ${what}`);
}

/** The instructions of a Dockerfile, as Docker's parser reads them; refuses what it does not understand. */
export function parseDockerfile(text: string): ParsedDockerfile {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .map((line) => line.replace(/\r$/, ''));
  let escape = '\\';
  let index = 0;
  // Parser directives: only before any comment, blank line or instruction; an unknown one is a comment and ends them.
  const seen = new Set<string>();
  for (; index < lines.length; index++) {
    const match = (lines[index] as string).match(directivePattern);
    if (!match) break;
    const name = (match[1] as string).toLowerCase();
    const value = match[2] as string;
    if (!knownDirectives.has(name)) break;
    if (seen.has(name)) refuse(index + 1, `the parser directive ${name} is given twice`);
    seen.add(name);
    if (name === 'syntax')
      refuse(
        index + 1,
        `the parser directive syntax=${quoted(value)} names a builder frontend image, which would run the build: remove it (Docker's own Dockerfile syntax is used)`,
      );
    if (name === 'escape') {
      if (value !== '\\' && value !== '`') refuse(index + 1, `escape=${quoted(value)} must be \\ or \``);
      escape = value;
    }
  }
  const continuation = new RegExp(`${escape === '\\' ? '\\\\' : '`'}[ \\t]*$`);
  const isComment = (line: string) => /^[ \t]*#/.test(line);
  const isBlank = (line: string) => /^[ \t]*$/.test(line);

  const instructions: DockerfileInstruction[] = [];
  while (index < lines.length) {
    const first = lines[index] as string;
    const start = index + 1;
    index++;
    if (isComment(first) || isBlank(first)) continue;
    let logical = first.replace(/^[ \t]+/, '');
    let continued = continuation.test(logical);
    if (continued) logical = logical.replace(continuation, '');
    while (continued && index < lines.length) {
      const next = lines[index] as string;
      index++;
      if (isComment(next) || isBlank(next)) continue;
      continued = continuation.test(next);
      logical += continued ? next.replace(continuation, '') : next;
    }
    if (isBlank(logical)) continue;
    instructions.push(parseInstruction(logical, start));
  }
  return checked(instructions);
}

function parseInstruction(logical: string, line: number): DockerfileInstruction {
  const keywordMatch = logical.match(/^(\S+)(?:[ \t]+([\s\S]*))?$/);
  if (!keywordMatch) refuse(line, `cannot be read`);
  const keyword = (keywordMatch[1] as string).toUpperCase();
  if (keyword === 'ONBUILD') refuse(line, 'ONBUILD is not supported in an environment Dockerfile');
  if (!knownInstructions.has(keyword))
    refuse(line, `${quoted(keywordMatch[1] as string)} is not a Dockerfile instruction`);
  let rest = (keywordMatch[2] ?? '').trim();
  const flags: DockerfileInstruction['flags'] = [];
  for (;;) {
    const flag = rest.match(/^--([A-Za-z][A-Za-z0-9-]*)(?:=(\S*))?(?:[ \t]+|$)/);
    if (!flag) break;
    const name = (flag[1] as string).toLowerCase();
    if (!allowedFlags[keyword]?.has(name))
      refuse(line, `${keyword} --${name} is not supported in an environment Dockerfile`);
    flags.push({ name, value: flag[2] ?? null });
    rest = rest.slice(flag[0].length);
  }
  if (/^--/.test(rest)) refuse(line, `${keyword} has a flag that cannot be read: ${quoted(rest)}`);
  if (['RUN', 'COPY', 'ADD'].includes(keyword) && rest.includes('<<'))
    refuse(line, `${keyword} with a heredoc (<<) is not supported: put the script in a file of the repository`);
  return { keyword, flags, words: argumentWords(rest), line };
}

/** A JSON array's strings (exec form), else the words split on blanks (shell form). */
function argumentWords(rest: string): string[] {
  if (rest.startsWith('[')) {
    try {
      const value: unknown = JSON.parse(rest);
      if (Array.isArray(value) && value.every((word) => typeof word === 'string')) return value as string[];
    } catch {
      // not JSON: Docker takes it as the shell form too
    }
  }
  return rest.split(/[ \t]+/).filter(Boolean);
}

/** A word that names something (an image, a stage, a source) must be plain: no variable, quote or escape. */
function plain(word: string): boolean {
  return !/[$"'\\`]/.test(word);
}

function checked(instructions: DockerfileInstruction[]): ParsedDockerfile {
  const stages: string[] = [];
  const fromImages: string[] = [];
  const copiedImages: string[] = [];
  let readsRepository = false;
  if (!instructions.some((instruction) => instruction.keyword === 'FROM'))
    throw new EnvironmentConfigError(`${repositoryDockerfile} has no FROM line`);
  for (const instruction of instructions) {
    const { keyword, words, line, flags } = instruction;
    if (stages.length === 0 && keyword !== 'FROM' && keyword !== 'ARG')
      refuse(line, `${keyword} comes before the first FROM`);
    if (keyword === 'FROM') {
      const [image, as, name, ...extra] = words;
      if (!image || extra.length > 0 || (as !== undefined && (as.toUpperCase() !== 'AS' || !name)))
        refuse(line, 'FROM must be `FROM <image>` or `FROM <image> AS <name>`');
      if (!plain(image)) refuse(line, `FROM ${quoted(image)} uses a build argument or quotes; name the image itself`);
      const lower = image.toLowerCase();
      if (lower !== 'scratch' && !stages.includes(lower)) fromImages.push(image);
      stages.push(name ? name.toLowerCase() : `#${stages.length}`);
      continue;
    }
    if (keyword === 'COPY' || keyword === 'ADD') {
      const from = flags.find((flag) => flag.name === 'from');
      if (from) {
        const value = from.value ?? '';
        if (!value || !plain(value)) refuse(line, `COPY --from=${quoted(value)} must name a stage or an image itself`);
        const lower = value.toLowerCase();
        const earlier = stages.slice(0, -1);
        const isStage = earlier.includes(lower) || (/^\d+$/.test(value) && Number(value) < earlier.length);
        if (!isStage) copiedImages.push(value);
      } else readsRepository = true;
      if (words.length < 2) refuse(line, `${keyword} needs a source and a destination`);
    }
    if (keyword === 'ADD') {
      for (const source of words.slice(0, -1)) {
        const remote = /:\/\//.test(source) || /^git@/i.test(source) || /^github\.com\//i.test(source);
        if (remote)
          refuse(
            line,
            `ADD ${quoted(source)} would be fetched by Docker on the host's network: download it in a RUN step (which reaches only the package registries) or commit the file`,
          );
        if (!plain(source))
          refuse(
            line,
            `ADD ${quoted(source)} uses a build argument, quotes or escapes: name a path of the repository itself`,
          );
      }
    }
  }
  return {
    instructions,
    fromImages: [...new Set(fromImages)],
    copiedImages: [...new Set(copiedImages)],
    readsRepository,
  };
}
