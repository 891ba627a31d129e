// A turn's tools as the model sees them: each one a name, a description, a JSON Schema and a run that
// answers text for the model. The wrapper reports each call's status (the `tool` frame / TOOL_STATUS)
// and turns a failure into text the model reads, so the turn goes on; a tool that needs the person's
// approval reports its own waiting and declining (src/modules/conversations/turn-tools.ts).
import type { ToolSet } from 'ai';
import { loadAiSdk } from '../sdk.js';
import type { ToolStatus } from '../model-stream.js';
import type { JsonSchemaObject } from './connector-catalog.js';

export interface ToolRunContext {
  signal?: AbortSignal;
  /** The model's id of this call. */
  callId: string;
  /** Reports a status of this call (started, completed, failed, awaiting_approval, declined). */
  status(status: ToolStatus): void;
}

export interface TurnToolSpec {
  /** The model-safe name ([A-Za-z0-9_-], ≤ 64), as GET /api/admin/tools lists it. */
  key: string;
  description: string;
  inputSchema: JsonSchemaObject;
  /**
   * Runs the call and answers the text the model reads. Reports 'started' itself once the call really
   * runs (after an approval), and 'declined' when it does not; the wrapper reports completed or failed.
   */
  run(args: unknown, context: ToolRunContext): Promise<{ text: string; failed?: boolean }>;
}

/** What the model reads when a tool call fails. */
export const toolFailureText = (reason: string) => `The tool failed: ${reason}`;

/** The AI SDK tool set of a turn; `report` hears every status of every call. */
export async function toToolSet(specs: readonly TurnToolSpec[], report: (key: string, status: ToolStatus) => void): Promise<ToolSet> {
  const { jsonSchema, tool } = await loadAiSdk();
  const set: ToolSet = {};
  for (const spec of specs) {
    set[spec.key] = tool({
      description: spec.description,
      inputSchema: jsonSchema(spec.inputSchema),
      execute: async (args: unknown, options) => {
        let ended = false;
        const status = (value: ToolStatus) => {
          if (!ended) report(spec.key, value);
          if (value === 'declined') ended = true;
        };
        try {
          const outcome = await spec.run(args, { signal: options.abortSignal, callId: options.toolCallId, status });
          if (!ended) report(spec.key, outcome.failed ? 'failed' : 'completed');
          return outcome.text;
        } catch (error) {
          if (!ended) report(spec.key, 'failed');
          return toolFailureText(error instanceof Error ? error.message : String(error));
        }
      },
    });
  }
  return set;
}
