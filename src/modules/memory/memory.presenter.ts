// The memory parameter on the wire, field by field, as the spec spells it.
import type { MemoryWithTwin } from './memory.repo.js';
import type { MemoryParameterWire } from './memory.schemas.js';

export function presentMemory(row: MemoryWithTwin, viewer: { isAuthor: boolean; editable: boolean }): MemoryParameterWire {
  return {
    _id: row.id,
    key_name: row.keyName,
    key_value: row.keyValue,
    key_description: row.keyDescription,
    key_namespace: row.keyNamespace,
    shared: row.shared,
    editable: viewer.editable,
    isAuthor: viewer.isAuthor,
    created: row.createdAt.toISOString(),
    institution: { _id: row.twin.id, name: row.twin.name, ainame: row.twin.ainame, picture: row.twin.picture },
  };
}
