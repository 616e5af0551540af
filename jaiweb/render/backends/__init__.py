"""The image backends, one module each, and the factory that picks the configured one.

``JAIWEB_IMAGE_BACKEND`` names it: ``local`` (the default, ``local.py``), ``openai``
(``openai.py``), ``a1111`` (``a1111.py``) or ``comfyui`` (``comfyui.py``). Each implements
``base.Renderer`` and declares its ``policy``; the agent's image tool records that
declaration in T1. A backend's module is imported only when it is the configured one, so
the default start-up loads no HTTP client.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from jaiweb.render.backends.base import (
    BackendError,
    BackendPolicy,
    Progress,
    RenderedImage,
    Renderer,
    server_place,
)
from jaiweb.render.backends.local import LocalRenderer

__all__ = [
    "BackendError",
    "BackendLabel",
    "BackendPolicy",
    "LocalRenderer",
    "Progress",
    "RenderedImage",
    "Renderer",
    "backend_label",
    "backend_policy",
    "image_backend_problems",
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
        from jaiweb.render.backends.comfyui import ComfyUIRenderer

        return ComfyUIRenderer.from_settings()
    raise ImproperlyConfigured(f"JAIWEB_IMAGE_BACKEND names no known backend: {backend!r}")


def backend_policy() -> BackendPolicy:
    """What the configured backend promises after a crash, read from its class: the tool
    asks at every T1, so nothing is built, read or connected for it."""
    backend = settings.JAIWEB_IMAGE_BACKEND
    if backend == "openai":
        from jaiweb.render.backends.openai import OpenAIImagesRenderer as chosen
    elif backend == "a1111":
        from jaiweb.render.backends.a1111 import A1111Renderer as chosen
    elif backend == "comfyui":
        from jaiweb.render.backends.comfyui import ComfyUIRenderer as chosen
    else:
        chosen = LocalRenderer
    return chosen.policy


def image_backend_problems() -> list[str]:
    """Why the configured backend cannot be built (a missing or broken ComfyUI workflow, a
    URL left unset), each naming its variable; empty when it can. Start-up and
    ``manage.py check`` refuse to go on with any."""
    try:
        renderer_for_settings()
    except ImproperlyConfigured as exc:
        return [str(exc)]
    return []


@dataclass(frozen=True, slots=True)
class BackendLabel:
    """What the studio tells a user about the backend drawing their panels: its name, the
    server (scheme, host and port, never a password), and the model or workflow in use."""

    name: str
    where: str
    detail_kind: str = ""  # "model" or "workflow"
    detail: str = ""


def backend_label() -> BackendLabel | None:
    """The configured backend as the session's notice names it, from the settings alone
    (no file read, no connection); None for the local renderer, which has its own notice."""
    backend = settings.JAIWEB_IMAGE_BACKEND
    if backend == "openai":
        from jaiweb.render.backends.openai import DEFAULT_BASE_URL

        where = server_place(settings.JAIWEB_IMAGE_BASE_URL or DEFAULT_BASE_URL)
        return BackendLabel("OpenAI Images", where, "model", settings.JAIWEB_IMAGE_MODEL)
    if backend == "a1111":
        return BackendLabel("AUTOMATIC1111", server_place(settings.JAIWEB_A1111_URL))
    if backend == "comfyui":
        from jaiweb.render.backends.comfyui import BUNDLED_WORKFLOW

        workflow = Path(settings.JAIWEB_COMFYUI_WORKFLOW or BUNDLED_WORKFLOW).stem
        return BackendLabel(
            "ComfyUI", server_place(settings.JAIWEB_COMFYUI_URL), "workflow", workflow
        )
    return None
