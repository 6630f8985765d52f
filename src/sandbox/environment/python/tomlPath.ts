// A value deep in parsed TOML (pyproject.toml's [tool.hatch.build.hooks.vcs], tox.toml's
// [env_run_base]), read without trusting its shape: the repository wrote it.

/** The value at a path of keys; undefined where the path is not there. */
export function valueAt(value: unknown, ...keys: string[]): unknown {
  return keys.reduce<unknown>(
    (node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
    value,
  );
}
