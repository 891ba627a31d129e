// The tools a turn offers its model (contract: "Connectors (MCP servers), tools and approvals"), and the
// record of each connector call. Which tools: none with assistantToolMode 'none' or on the built-in local
// model; else the active connectors' tools and `delegate` (when the assistant has delegates), plus the
// built-ins `file_search` and `memory` when the assistant names them in `tools` (retrieval before the
// answer and memory extraction after it already run on every turn); never a tool in the twin's
// toolsDisabled; only those in the assistant's `tools` list when it has one. A connector call that
// requires approval waits at the approval gate first: nothing runs before a decision.
import type { ConnectorCatalog, ConnectorTool } from '../../ai/tools/connector-catalog.js';
import type { TurnToolSpec } from '../../ai/tools/turn-tools.js';
import type { Actor } from '../../platform/http/actor.js';
import type { ApprovalGate, CardRequest, NumberApprovalFrame } from '../approvals/approval-gate.js';
import type { ResolvedAssistant } from '../assistants/resolver.js';
import type { RetrievalEntry, ToolCallEntry } from '../history/history.tables.js';

export const BUILTIN_TOOLS = {
  fileSearch: 'file_search',
  memory: 'memory',
  delegate: 'delegate',
} as const;
/** Built-ins offered only when an assistant names them in its `tools`. */
const OPT_IN_BUILTINS: readonly string[] = [BUILTIN_TOOLS.fileSearch, BUILTIN_TOOLS.memory];

export const TOOL_RESULT_TEXT = {
  declined: 'The call was declined by the user; it did not run. Answer without it.',
  expired: 'The call was declined: the user did not decide in time; it did not run. Answer without it.',
  cancelled: 'The call was cancelled with the turn; it did not run.',
  nothingFound: 'Nothing was found in the files.',
  memoryOff: "Nothing was saved: this person's memory is switched off (Enable User Memory).",
} as const;

/** What the built-ins run on: the person's vault and memory (modules files and memory, wired by the app). */
export interface BuiltinToolRunners {
  fileSearch(actor: Actor, query: string, signal?: AbortSignal): Promise<RetrievalEntry[]>;
  /** Saves a personal memory; resolves false when the person's memory is switched off. */
  remember(actor: Actor, key: string, value: string): Promise<boolean>;
}

export interface TurnToolDeps {
  catalog: ConnectorCatalog;
  gate: ApprovalGate;
  builtins: BuiltinToolRunners;
}

/** Who the calls run for and where their cards belong. */
export interface TurnToolScene {
  actor: Actor;
  twin: { id: string; toolsDisabled: readonly string[] };
  assistant: Pick<ResolvedAssistant, 'toolMode' | 'tools' | 'delegates'>;
  historyId: string;
  conversationId: string;
  /** The built-in local model calls no tools. */
  modelKind: 'endpoint' | 'local';
  origin: CardRequest['origin'];
  approvalTimeoutMs: number;
  signal?: AbortSignal;
  /** Numbers the cards in the answer's frames, when it has numbered frames (approval-gate.ts). */
  numberApproval?: NumberApprovalFrame;
  /** Runs a delegated subagent (absent inside a subagent: delegation does not nest). */
  delegate?: DelegateRunner;
}

export interface DelegateRunner {
  /** The assistants this turn may hand a task to: id, name, description. */
  candidates: Array<{ id: string; name: string; description: string }>;
  run(assistantId: string, task: string, signal?: AbortSignal): Promise<{ text: string; failed: boolean }>;
}

/** The turn's tools, the record of its connector calls, and whether the model must call one. */
export interface TurnTools {
  specs: TurnToolSpec[];
  calls: ToolCallEntry[];
  toolChoice?: 'required';
}

export async function toolsForTurn(deps: TurnToolDeps, scene: TurnToolScene): Promise<TurnTools> {
  const calls: ToolCallEntry[] = [];
  const none: TurnTools = { specs: [], calls };
  if (scene.assistant.toolMode === 'none' || scene.modelKind === 'local') return none;
  const allowed = (key: string) =>
    !scene.twin.toolsDisabled.includes(key) && (scene.assistant.tools ? scene.assistant.tools.includes(key) : !OPT_IN_BUILTINS.includes(key));
  const specs: TurnToolSpec[] = [];
  if (allowed(BUILTIN_TOOLS.fileSearch)) specs.push(fileSearchTool(deps.builtins, scene));
  if (allowed(BUILTIN_TOOLS.memory)) specs.push(memoryTool(deps.builtins, scene));
  if (scene.delegate && scene.delegate.candidates.length > 0 && allowed(BUILTIN_TOOLS.delegate)) specs.push(delegateTool(scene.delegate));
  for (const tool of await deps.catalog.toolsFor(scene.twin.id)) {
    if (allowed(tool.key)) specs.push(connectorTool(deps, scene, tool, calls));
  }
  if (specs.length === 0) return none;
  return { specs, calls, ...(scene.assistant.toolMode === 'required' ? { toolChoice: 'required' as const } : {}) };
}

function fileSearchTool(builtins: BuiltinToolRunners, scene: TurnToolScene): TurnToolSpec {
  return {
    key: BUILTIN_TOOLS.fileSearch,
    description: "Searches the person's own files and answers the passages that match best.",
    inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'what to look for' } }, required: ['query'] },
    async run(args, context) {
      context.status('started');
      const passages = await builtins.fileSearch(scene.actor, stringArg(args, 'query'), context.signal);
      if (passages.length === 0) return { text: TOOL_RESULT_TEXT.nothingFound };
      return { text: passages.map((passage) => `[${passage.originalname}] ${passage.chunkText}`).join('\n\n') };
    },
  };
}

function memoryTool(builtins: BuiltinToolRunners, scene: TurnToolScene): TurnToolSpec {
  return {
    key: BUILTIN_TOOLS.memory,
    description: 'Saves something the person asked you to remember, as a short key and its value.',
    inputSchema: {
      type: 'object',
      properties: { key: { type: 'string', description: 'a short name, e.g. "preferred language"' }, value: { type: 'string' } },
      required: ['key', 'value'],
    },
    async run(args, context) {
      context.status('started');
      const saved = await builtins.remember(scene.actor, stringArg(args, 'key'), stringArg(args, 'value'));
      return saved ? { text: 'Saved.' } : { text: TOOL_RESULT_TEXT.memoryOff, failed: true };
    },
  };
}

function delegateTool(runner: DelegateRunner): TurnToolSpec {
  const list = runner.candidates.map((candidate) => `${candidate.id}: ${candidate.name}${candidate.description ? ` (${candidate.description})` : ''}`).join('; ');
  return {
    key: BUILTIN_TOOLS.delegate,
    description: `Hands a task to another assistant, which works on it with its own instructions and tools and answers with its result. Assistants: ${list}`,
    inputSchema: {
      type: 'object',
      properties: {
        assistantId: { type: 'string', enum: runner.candidates.map((candidate) => candidate.id) },
        task: { type: 'string', description: 'what the assistant should do, with everything it needs to know' },
      },
      required: ['assistantId', 'task'],
    },
    async run(args, context) {
      context.status('started');
      return runner.run(stringArg(args, 'assistantId'), stringArg(args, 'task'), context.signal);
    },
  };
}

function connectorTool(deps: TurnToolDeps, scene: TurnToolScene, tool: ConnectorTool, calls: ToolCallEntry[]): TurnToolSpec {
  return {
    key: tool.key,
    description: tool.description || `${tool.tool} (${tool.serverName})`,
    inputSchema: tool.inputSchema,
    async run(args, context) {
      const entry: ToolCallEntry = { id: context.callId, server: tool.serverName, tool: tool.tool, arguments: args ?? {}, status: 'pending', startedAt: new Date().toISOString() };
      calls.push(entry);
      if (tool.requireApproval) {
        context.status('awaiting_approval');
        const outcome = await deps.gate.ask(
          {
            twinId: scene.twin.id,
            userId: scene.actor.userId,
            historyId: scene.historyId,
            conversationId: scene.conversationId,
            serverId: tool.serverId,
            serverName: tool.serverName,
            tool: tool.tool,
            arguments: args ?? {},
            origin: scene.origin,
          },
          { timeoutMs: scene.approvalTimeoutMs, signal: context.signal ?? scene.signal, number: scene.numberApproval },
        );
        const person = outcome.decision === 'approve' || outcome.decision === 'approve_conversation' || outcome.decision === 'deny';
        entry.approval = {
          approvalId: outcome.approvalId,
          decision: outcome.decision,
          decidedAt: outcome.decidedAt.toISOString(),
          decidedBy: person ? scene.actor.userId : null,
        };
        if (outcome.decision !== 'approve' && outcome.decision !== 'approve_conversation') {
          const text = outcome.decision === 'expired' ? TOOL_RESULT_TEXT.expired : outcome.decision === 'cancelled' ? TOOL_RESULT_TEXT.cancelled : TOOL_RESULT_TEXT.declined;
          entry.status = 'declined';
          entry.result = text;
          context.status('declined');
          return { text, failed: true };
        }
      }
      context.status('started');
      const started = Date.now();
      entry.startedAt = new Date(started).toISOString();
      try {
        const result = await deps.catalog.call(tool.serverId, tool.tool, args ?? {}, { signal: context.signal });
        entry.status = result.isError ? 'error' : 'ok';
        entry.result = result.raw;
        return { text: result.text, failed: result.isError };
      } catch (error) {
        entry.status = 'error';
        entry.result = error instanceof Error ? error.message : String(error);
        throw error;
      } finally {
        entry.durationMs = Date.now() - started;
      }
    },
  };
}

function stringArg(args: unknown, name: string): string {
  const value = args && typeof args === 'object' ? (args as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}
