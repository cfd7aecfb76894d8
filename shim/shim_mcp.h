#ifndef AIRLOCK_SHIM_MCP_H
#define AIRLOCK_SHIM_MCP_H

/*
 * `airlock-shim --mcp`, what the agent's MCP configuration launches as a
 * stdio server: hands its stdin and stdout to the parent shim and waits
 * until the parent is done with them, or, when they cannot be handed over,
 * relays bytes between them and the parent. Its exit status.
 */
int shim_mcp_main(void);

#endif
