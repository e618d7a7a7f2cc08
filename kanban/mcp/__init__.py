"""The MCP endpoint for agents: a tools-only server over one project's Knowledge and KV."""
