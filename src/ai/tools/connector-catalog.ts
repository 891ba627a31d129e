// What a turn needs of the connectors (MCP servers): the tools a twin's turn may offer, and a way to call
// one. The connectors module (src/modules/connectors) implements it over the MCP SDK's client; the
// conversation engine offers the tools to the model and asks for approval where a server requires it.

/** A JSON Schema object, as an MCP server lists a tool's input. */
export type JsonSchemaObject = { type: 'object'; properties?: Record<string, unknown>; required?: string[]; [key: string]: unknown };

/** One tool of an active connector that a turn of the twin may offer. */
export interface ConnectorTool {
  /** The name models and administrators see (`/api/admin/tools`, `toolsDisabled`, an assistant's `tools`): model-safe, [A-Za-z0-9_-], at most 64 characters, unique in the twin. */
  key: string;
  serverId: string;
  /** The server's record name (the approval card's `server`). */
  serverName: string;
  /** The tool's own name on the server (the card's `tool`; what `approve_conversation` remembers). */
  tool: string;
  description: string;
  inputSchema: JsonSchemaObject;
  /** The server's `requireApproval`: a call stops for the person's decision before it runs. */
  requireApproval: boolean;
}

/** What a tool call answered: its text for the model, and whether the server said it failed. */
export interface ConnectorCallResult {
  text: string;
  isError: boolean;
  /** The server's structured content or content list, kept on the history record. */
  raw: unknown;
}

export interface ConnectorCatalog {
  /** The active connectors' tools for a twin: its own servers and the system-wide ones, each server's `allowedTools` applied (not the twin's `toolsDisabled`: the turn applies that). */
  toolsFor(twinId: string): Promise<ConnectorTool[]>;
  /** Calls one tool through this process's client of that server (guarded address, call timeout). Rejects when the server cannot be reached or times out; a tool's own failure resolves with isError. */
  call(serverId: string, tool: string, args: unknown, options?: { signal?: AbortSignal }): Promise<ConnectorCallResult>;
}
