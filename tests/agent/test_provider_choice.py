"""Which provider the settings pick: offline unless JAIWEB_LLM_MODEL says otherwise."""

from __future__ import annotations

from jaiweb.agent.providers import provider_for_settings


def test_offline_by_default_even_with_a_stray_openai_key(settings, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-stray")
    settings.JAIWEB_LLM_MODEL = None
    provider = provider_for_settings()
    assert provider.offline and provider.name == "offline-director"


def test_a_model_setting_picks_the_openai_compatible_provider(settings):
    settings.JAIWEB_LLM_MODEL = "qwen2.5"
    settings.JAIWEB_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.JAIWEB_LLM_API_KEY = None
    provider = provider_for_settings()
    assert not provider.offline and provider.name == "qwen2.5"
