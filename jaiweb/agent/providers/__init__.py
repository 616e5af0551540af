"""Model providers: the offline director and any OpenAI-compatible server."""

from __future__ import annotations

from django.conf import settings

from jaiweb.agent.providers.base import Provider


def provider_for_settings() -> Provider:
    """JAIWEB_LLM_MODEL set: that model on an OpenAI-compatible server; unset: offline.

    A stray OPENAI_API_KEY in the environment never switches to a paid model: only
    JAIWEB_LLM_MODEL does, and the key is JAIWEB_LLM_API_KEY.
    """
    if settings.JAIWEB_LLM_MODEL:
        from jaiweb.agent.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(
            model=settings.JAIWEB_LLM_MODEL,
            base_url=settings.JAIWEB_LLM_BASE_URL,
            api_key=settings.JAIWEB_LLM_API_KEY,
        )
    from jaiweb.agent.providers.offline import OfflineDirector

    return OfflineDirector()
