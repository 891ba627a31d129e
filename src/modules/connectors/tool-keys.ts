// The names a twin's connector tools go by (models, /api/admin/tools, toolsDisabled, an assistant's
// tools): `<server>__<tool>`, model-safe ([A-Za-z0-9_-], at most 64 characters) and unique in the twin.
// Two servers whose names make the same slug are told apart by the end of the later one's id, so a
// key stays the same as long as the server's name does.
import { createHash } from 'node:crypto';

const MAX_KEY = 64;

export function slugOf(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 24)
    .replace(/_+$/, '');
  return slug || 'server';
}

function safeTool(tool: string): string {
  return tool.replace(/[^A-Za-z0-9_-]/g, '_') || 'tool';
}

/** The key of one tool; a tool name too long for the limit keeps a hash of itself, so keys stay distinct. */
export function toolKey(prefix: string, tool: string): string {
  const key = `${prefix}__${safeTool(tool)}`;
  if (key.length <= MAX_KEY) return key;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${key.slice(0, MAX_KEY - 9)}_${hash}`;
}

/** Each server's key prefix, for servers in a twin's order (its own first, then oldest first). */
export function serverPrefixes(servers: ReadonlyArray<{ id: string; name: string }>): Map<string, string> {
  const prefixes = new Map<string, string>();
  const taken = new Set<string>();
  for (const server of servers) {
    let prefix = slugOf(server.name);
    if (taken.has(prefix)) prefix = `${prefix}_${server.id.slice(-6)}`;
    taken.add(prefix);
    prefixes.set(server.id, prefix);
  }
  return prefixes;
}
