// Wire shapes of approval cards (contract: "Connectors (MCP servers), tools and approvals"): the card
// every tab shows, the decision body and answer, the pending list, and the events that carry them.
import { z } from 'zod';
import { CARD_DECISIONS, PERSON_DECISIONS, type ToolApprovalRow } from './approvals.tables.js';

export const approvalCard = z
  .object({
    approvalId: z.string(),
    server: z.string().describe("the connector's name"),
    tool: z.string().describe("the tool's own name on that server"),
    arguments: z.unknown().describe('what the model asked the tool to run with'),
    expiresAt: z.string().describe('when the card expires; expiry counts as deny'),
    historyId: z.string().describe('the answer (history record) the call belongs to'),
    conversationId: z.string(),
    seq: z
      .number()
      .int()
      .optional()
      .describe("the card's place in its answer's numbered frames (live cards; a resume of the answer replays it with the same seq)"),
  })
  .meta({ id: 'approvalCard' });
export type ApprovalCardWire = z.infer<typeof approvalCard>;

export const decisionBody = z.object({
  decision: z.enum(PERSON_DECISIONS).describe('approve (this call), approve_conversation (this tool of this server for the rest of the conversation) or deny'),
});
export const approvalParams = z.object({ approvalId: z.string().min(1).max(64) });
export const decisionAnswer = z.object({ success: z.literal(true), decision: z.enum(PERSON_DECISIONS) });
export const pendingAnswer = z.object({ success: z.literal(true), approvals: z.array(approvalCard) });

/** TOOL_APPROVAL_DECIDED / SSE `approval_decided`: how a card ended, for every tab. */
export const decidedEvent = z.object({ approvalId: z.string(), decision: z.enum(CARD_DECISIONS), decidedAt: z.string() });
export type DecidedEventWire = z.infer<typeof decidedEvent>;

export const APPROVAL_EVENTS = {
  card: 'TOOL_APPROVAL',
  decided: 'TOOL_APPROVAL_DECIDED',
} as const;

declare module '../../platform/realtime/client-frames.js' {
  interface ClientFrames {
    /** A card for every tab: TOOL_APPROVAL on Socket.IO, the `approval` frame on SSE. */
    approval: { sse: ApprovalCardWire; socket: { event: 'TOOL_APPROVAL'; payload: ApprovalCardWire } };
    /** How it ended: TOOL_APPROVAL_DECIDED, the `approval_decided` frame. */
    approval_decided: { sse: DecidedEventWire; socket: { event: 'TOOL_APPROVAL_DECIDED'; payload: DecidedEventWire } };
  }
}

export function presentCard(row: ToolApprovalRow): ApprovalCardWire {
  return {
    approvalId: row.id,
    server: row.serverName,
    tool: row.tool,
    arguments: row.arguments,
    expiresAt: row.expiresAt.toISOString(),
    historyId: row.historyId,
    conversationId: row.conversationId,
  };
}
