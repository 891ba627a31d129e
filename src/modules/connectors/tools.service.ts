// What the current twin's assistants may use: the built-in tools and each active connector's tools,
// each enabled unless named in the twin's toolsDisabled. Administrators holding tools.edit switch
// them; a name the twin does not have answers 404.
import type { ConnectorCatalog, ConnectorTool } from '../../ai/tools/connector-catalog.js';
import type { Database } from '../../platform/db/client.js';
import type { Actor } from '../../platform/http/actor.js';
import { NotFoundError } from '../../platform/http/errors.js';
import { requireAccess } from '../access/access.js';
import { findTwinById } from '../twins/twins.repo.js';
import { setToolDisabled } from './connectors.repo.js';
import type { ToolWire } from './connectors.schemas.js';

/** The built-in tools, as the turn names them. */
export const BUILTIN_TOOLS = [
  { name: 'file_search', description: "Searches the person's files (their vault) for passages that answer the question." },
  { name: 'memory', description: 'Saves what the person asks to be remembered (never while Enable User Memory is off).' },
  { name: 'delegate', description: "Hands a task to one of the assistant's delegates, which runs it with its own instructions and tools." },
] as const;

export function createToolService(deps: { db: Database; catalog: Pick<ConnectorCatalog, 'toolsFor'> }) {
  const { db, catalog } = deps;

  async function twinOf(actor: Actor): Promise<string> {
    const twinId = actor.twinId;
    if (!twinId) throw new NotFoundError('Institution not found', 'INSTITUTION_NOT_FOUND');
    await requireAccess(db, actor, 'tools.edit', { twin: twinId });
    return twinId;
  }

  async function toolsOf(twinId: string, disabled: readonly string[]): Promise<ToolWire[]> {
    const off = new Set(disabled);
    const builtins: ToolWire[] = BUILTIN_TOOLS.map((tool) => ({
      name: tool.name,
      kind: 'builtin',
      description: tool.description,
      enabled: !off.has(tool.name),
      server: null,
      tool: tool.name,
      requireApproval: false,
    }));
    const connectors = (await catalog.toolsFor(twinId)).map(
      (tool: ConnectorTool): ToolWire => ({
        name: tool.key,
        kind: 'connector',
        description: tool.description,
        enabled: !off.has(tool.key),
        server: { _id: tool.serverId, name: tool.serverName },
        tool: tool.tool,
        requireApproval: tool.requireApproval,
      }),
    );
    return [...builtins, ...connectors];
  }

  return {
    async list(actor: Actor): Promise<ToolWire[]> {
      const twinId = await twinOf(actor);
      const twin = await findTwinById(db, twinId);
      if (!twin) throw new NotFoundError('Institution not found', 'INSTITUTION_NOT_FOUND');
      return toolsOf(twinId, twin.toolsDisabled);
    },

    async setEnabled(actor: Actor, name: string, enabled: boolean): Promise<ToolWire> {
      const twinId = await twinOf(actor);
      const known = (await toolsOf(twinId, [])).find((tool) => tool.name === name);
      if (!known) throw new NotFoundError('Tool not found', 'TOOL_NOT_FOUND');
      const disabled = await setToolDisabled(db, twinId, name, !enabled);
      if (!disabled) throw new NotFoundError('Institution not found', 'INSTITUTION_NOT_FOUND');
      return { ...known, enabled: !disabled.includes(name) };
    },
  };
}

export type ToolService = ReturnType<typeof createToolService>;
