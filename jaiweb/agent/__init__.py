"""The comic director: the agent loop, its providers and tools, and the runners."""
