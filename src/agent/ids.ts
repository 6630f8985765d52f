// Names derived from a workflow id, the same on every replay and every worker.

/** A Docker-safe, unique sandbox id: a readable slug of the workflow id plus a hash of it. */
export function sandboxIdFor(workflowId: string): string {
  const slug = workflowId
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${slug || 'run'}-${fnv1a(workflowId)}`;
}

/** FNV-1a, 32 bits, as 8 hex digits: no crypto module is needed (workflow code has none). */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
