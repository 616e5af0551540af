"""OpenAI Images (``POST /v1/images/generations``), or a server that speaks the same API.

A panel with a reference picture (a character's look) is drawn with ``POST
/v1/images/edits`` instead: the same fields as multipart form data, and the picture as
``image``. The GPT image models and ``dall-e-2`` take edits; ``dall-e-3`` does not, and
the server's refusal becomes the render's error.

Requests are made as OpenAI documents them: the GPT image models (``gpt-image-1`` and
its kin) always answer base64 and refuse a ``response_format``; the DALL·E models, and
any other model a compatible server offers, are asked for ``response_format=b64_json``.
Model, size and quality come from the settings, and so do the server's address and key,
never the LLM's. The SDK never retries by itself (``max_retries=0``): a second request
would draw, and bill, a second picture.

At most once: nothing can tell us afterwards whether a request that got no answer drew
its picture, so an interrupted render goes to the recovery inbox unless a stored result
under its key settles it.
"""

from __future__ import annotations

from typing import Any

import httpx
import openai
from django.conf import settings

from jaiweb.render.backends.base import (
    PROBE_TIMEOUT,
    REFERENCE_TYPES,
    BackendError,
    BackendPolicy,
    Progress,
    ReferenceImage,
    RenderedImage,
    decode_base64_image,
    image_prompt,
    server_place,
    server_said,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_API_KEY = "not-needed"  # a keyless compatible server: the SDK insists on a key
GPT_IMAGE_PREFIXES = ("gpt-image", "chatgpt-image")


def is_gpt_image(model: str) -> bool:
    """A GPT image model: it always answers base64 and refuses ``response_format``."""
    return model.lower().startswith(GPT_IMAGE_PREFIXES)


class OpenAIImagesRenderer:
    """One ``images.generate`` call per render, ``n=1``; ``images.edit`` with the reference
    picture when the panel has one."""

    name = "openai"
    remote = True
    policy: BackendPolicy = "at_most_once"
    uses_reference = True

    def __init__(
        self,
        *,
        model: str = "gpt-image-1",
        base_url: str | None = None,
        api_key: str | None = None,
        size: str | None = None,
        quality: str | None = None,
        timeout: float = 300.0,
    ) -> None:
        self.model = model
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.custom_server = base_url is not None
        self.api_key = api_key or PLACEHOLDER_API_KEY
        self.size = size
        self.quality = quality
        self.timeout = timeout

    @classmethod
    def from_settings(cls) -> OpenAIImagesRenderer:
        return cls(
            model=settings.JAIWEB_IMAGE_MODEL,
            base_url=settings.JAIWEB_IMAGE_BASE_URL,
            api_key=settings.JAIWEB_IMAGE_API_KEY,
            size=settings.JAIWEB_IMAGE_SIZE,
            quality=settings.JAIWEB_IMAGE_QUALITY,
            timeout=float(settings.JAIWEB_IMAGE_TIMEOUT),
        )

    def request(self, params: dict[str, Any]) -> dict[str, Any]:
        """The body of the generations (or edits) request for these render parameters."""
        body: dict[str, Any] = {"model": self.model, "prompt": image_prompt(params), "n": 1}
        if self.size:
            body["size"] = self.size
        if self.quality:
            body["quality"] = self.quality
        if not is_gpt_image(self.model):
            body["response_format"] = "b64_json"
        return body

    def render(
        self,
        params: dict[str, Any],
        *,
        key: str,
        progress: Progress | None = None,
        reference: ReferenceImage | None = None,
    ) -> RenderedImage:
        if reference is not None and reference.content_type not in REFERENCE_TYPES:
            raise BackendError(
                f"the reference picture of {reference.character}'s look is "
                f"{reference.content_type}, and {self._server()} edits only PNG, JPEG or "
                "WebP pictures (a panel of the local renderer is SVG): set the look from a "
                "panel this backend drew"
            )
        client = self._client()
        try:
            if reference is None:
                answer = client.images.generate(**self.request(params))
            else:
                picture = (
                    f"{reference.image_id}.{reference.extension}",
                    reference.data,
                    reference.content_type,
                )
                answer = client.images.edit(image=picture, **self.request(params))
        except openai.APIStatusError as exc:
            said = server_said(exc.status_code, exc.response.content, keys=("error", "detail"))
            raise BackendError(f"{self._server()} refused the image request: {said}") from None
        except openai.APITimeoutError:
            raise BackendError(
                f"{self._server()} did not answer within {self.timeout:g} s"
            ) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise BackendError(f"could not reach {self._server()}: {cause}") from None
        except openai.OpenAIError as exc:
            raise BackendError(
                f"{self._server()} sent an answer that cannot be read: {exc}"
            ) from None
        finally:
            client.close()
        data = getattr(answer, "data", None)
        first = data[0] if isinstance(data, list) and data else None
        if first is None or not hasattr(first, "b64_json"):
            raise BackendError(f"{self._server()} answered with no image")
        if not first.b64_json:
            raise BackendError(
                f"{self._server()} answered with no base64 image"
                + (" (only a URL)" if first.url else "")
            )
        return decode_base64_image(first.b64_json, server=self._server())

    def describe(self) -> str:
        if self.custom_server:
            return (
                f"Panels come from the OpenAI-compatible image server at "
                f"{server_place(self.base_url)} ({self.model})."
            )
        return f"Panels come from OpenAI Images ({self.model})."

    def probe(self) -> str | None:
        """Lists the server's models (``GET /models``): a refused key or a server error is
        a reason; a compatible server without that route still answers."""
        try:
            answer = httpx.get(
                f"{self.base_url}/models",
                headers={"Authorization": f"Bearer {self.api_key}"},
                timeout=PROBE_TIMEOUT,
            )
        except httpx.TimeoutException:
            return f"no answer within {PROBE_TIMEOUT:g} s"
        except httpx.HTTPError as exc:
            return f"unreachable: {exc}"
        if answer.status_code in (401, 403):
            return f"the server refused the API key (HTTP {answer.status_code})"
        if answer.status_code >= 500:
            return f"the server answered HTTP {answer.status_code}"
        return None

    def _client(self) -> openai.OpenAI:
        # Always a key and a base URL of our own: given None, the SDK would read
        # OPENAI_API_KEY / OPENAI_BASE_URL from the environment instead.
        client = openai.OpenAI(
            base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout
        )
        client.organization = None  # never OPENAI_ORG_ID / OPENAI_PROJECT_ID either
        client.project = None
        return client

    def _server(self) -> str:
        if self.custom_server:
            return f"the image server at {server_place(self.base_url)}"
        return "OpenAI Images"
