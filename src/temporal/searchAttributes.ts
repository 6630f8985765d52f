// Our search attributes must exist on the server before a workflow upserts them. The embedded
// server registers them at start; for any other server, the worker adds those that are missing.
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const { temporal } = proto;
import { searchAttributes } from './definitions.js';

const cliTypes = { KEYWORD: 'Keyword', INT: 'Int', DOUBLE: 'Double' } as const;
const indexedTypes = {
  KEYWORD: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  INT: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  DOUBLE: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
} as const;

export const searchAttributeRegistrations = Object.values(searchAttributes).map((key) => ({
  name: key.name,
  cliType: cliTypes[key.type as keyof typeof cliTypes],
  indexedType: indexedTypes[key.type as keyof typeof indexedTypes],
}));

export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set([
    ...Object.keys(existing.customAttributes ?? {}),
    ...Object.keys(existing.systemAttributes ?? {}),
  ]);
  const missing = searchAttributeRegistrations.filter(({ name }) => !known.has(name));
  if (missing.length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map(({ name, indexedType }) => [name, indexedType])),
    });
  } catch (error) {
    if (!/already exists/i.test(String(error))) {
      throw new Error(
        `The search attributes ${missing.map(({ name }) => name).join(', ')} are not registered on the Temporal server and could not be added (${String(error)}). Register them with \`temporal operator search-attribute create\`.`,
        { cause: error },
      );
    }
  }
}
