/**
 * How an MCP OAuth access token begins: the API's session routes pass it over (it is the MCP server's
 * alone). Its own file, because every function's authentication reads it and must not load the MCP
 * groups' route tables at init to do so.
 */
export const MCP_ACCESS_TOKEN_PREFIX = 'mcp_at_';
