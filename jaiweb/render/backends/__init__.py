"""The image backends, one module each, and the factory that picks the configured one.

``JAIWEB_IMAGE_BACKEND`` names it: ``local`` (the default, ``local.py``), ``openai``
(``openai.py``), ``a1111`` (``a1111.py``) or ``comfyui`` (``comfyui.py``). Each implements
``base.Renderer`` and declares its ``policy``; the agent's image tool records that
declaration in T1. A backend's module is imported only when it is the configured one, so
the default start-up loads no HTTP client.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from jaiweb.render.backends.base import (
    BackendError,
    BackendPolicy,
    Progress,
    RenderedImage,
    Renderer,
)
from jaiweb.render.backends.local import LocalRenderer

__all__ = [
    "BackendError",
    "BackendPolicy",
    "LocalRenderer",
    "Progress",
    "RenderedImage",
    "Renderer",
    "renderer_for_settings",
]


def renderer_for_settings() -> Renderer:
    """The backend ``JAIWEB_IMAGE_BACKEND`` names, configured from its own settings.

    Cheap: no connection is opened here (the tool asks it for its policy at every T1)."""
    backend = settings.JAIWEB_IMAGE_BACKEND
    if backend == "local":
        return LocalRenderer()
    if backend == "openai":
        from jaiweb.render.backends.openai import OpenAIImagesRenderer

        return OpenAIImagesRenderer.from_settings()
    if backend == "a1111":
        from jaiweb.render.backends.a1111 import A1111Renderer

        return A1111Renderer.from_settings()
    if backend == "comfyui":
        # The ComfyUI backend plugs in here, from its own module:
        #     from jaiweb.render.backends.comfyui import ComfyUIRenderer
        #     return ComfyUIRenderer.from_settings()
        raise ImproperlyConfigured(
            "JAIWEB_IMAGE_BACKEND is 'comfyui', but this build has no ComfyUI backend"
        )
    raise ImproperlyConfigured(f"JAIWEB_IMAGE_BACKEND names no known backend: {backend!r}")
