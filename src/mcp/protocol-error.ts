/**
 * A JSON-RPC error for the SDK to send back. The SDK's McpError puts "MCP error <code>:" into its message,
 * and the client adds the same prefix again when it reports the error; a plain Error with a code does not.
 */
export function protocolError(code: number, message: string, data?: unknown): Error {
  return Object.assign(new Error(message), data === undefined ? { code } : { code, data });
}

/**
 * A JSON-RPC error whose `data.code` names it: one of MCP's refusals (MCP_REFUSALS, its JSON-RPC code from
 * there) or a MemgitError's code, beside any other data.
 */
export function codedError(rpc: number, message: string, code: string, data: Record<string, unknown> = {}): Error {
  return protocolError(rpc, message, { ...data, code });
}

export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** The MCP specification's code for an unknown resource. */
export const RESOURCE_NOT_FOUND = -32002;
