"""Model providers: the offline director and any OpenAI-compatible server."""
