"""AUTOMATIC1111's Stable Diffusion web UI, or Forge, started with ``--api``.

One ``POST /sdapi/v1/txt2img`` per render (prompt, negative prompt, seed, width, height,
steps); the answer is ``{"images": [<base64 PNG>], "parameters": …, "info": "<json>"}``.
A failure comes back as JSON with ``error``, ``detail`` and ``errors`` (a 500 for an
exception inside the web UI), which becomes the render's error message.

While the request runs, ``GET /sdapi/v1/progress`` tells the sampler's step, passed on
as ``progress(step, steps)``: the render service renews the render's lease with each.
The web UI has no way to ask afterwards whether a request ran: at most once.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import httpx
from django.conf import settings

from jaiweb.render.backends.base import (
    PROBE_TIMEOUT,
    BackendError,
    BackendPolicy,
    Progress,
    ReferenceImage,
    RenderedImage,
    decode_base64_image,
    image_prompt,
    panel_look_seed,
    server_place,
    server_said,
)

DEFAULT_NEGATIVE_PROMPT = "lowres, blurry, watermark, signature, jpeg artifacts"
ERROR_KEYS = ("error", "detail", "errors")
SEED_RANGE = 2**31
LOOK_VARIATION = 0.3  # how far a panel strays from its character's own seed (0: not at all)


def seed_for(params: dict[str, Any], key: str) -> int:
    """The parameters' own seed when they carry one, else one drawn from the idempotency
    key: the same call draws the same picture, another call another one."""
    seed = params.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**32:
        return seed
    return int(hashlib.sha256(f"jaiweb:{key}".encode()).hexdigest()[:8], 16) % SEED_RANGE


def parse_size(size: str) -> tuple[int, int]:
    width, _, height = size.lower().partition("x")
    return int(width), int(height)


class A1111Renderer:
    """txt2img on the web UI at ``url`` (a ``user:password@`` in it is sent as basic auth,
    for a web UI started with ``--api-auth``)."""

    name = "a1111"
    remote = True
    policy: BackendPolicy = "at_most_once"
    uses_reference = False  # txt2img: a character's look reaches it as a seed only

    def __init__(
        self,
        *,
        url: str,
        size: str = "512x512",
        steps: int = 20,
        timeout: float = 300.0,
        poll_seconds: float = 1.0,
        negative_prompt: str = DEFAULT_NEGATIVE_PROMPT,
    ) -> None:
        self.url = url.rstrip("/")
        self.width, self.height = parse_size(size)
        self.steps = steps
        self.timeout = timeout
        self.poll_seconds = poll_seconds
        self.negative_prompt = negative_prompt

    @classmethod
    def from_settings(cls) -> A1111Renderer:
        return cls(
            url=settings.JAIWEB_A1111_URL,
            size=settings.JAIWEB_A1111_SIZE,
            steps=settings.JAIWEB_A1111_STEPS,
            timeout=float(settings.JAIWEB_IMAGE_TIMEOUT),
        )

    def request(self, params: dict[str, Any], *, key: str) -> dict[str, Any]:
        """The txt2img body for these render parameters.

        When a character of the panel has a seed of its own (its look; the first in the
        order the prompt names them), that is the picture's seed and the panel's seed is
        its variation seed (``subseed``, at ``LOOK_VARIATION``): panels of the character
        stay near one picture, and a regenerate still draws another. A reference picture
        is not used: txt2img has no place for one."""
        width, height = params.get("width"), params.get("height")
        look = panel_look_seed(params)
        seeds: dict[str, Any] = {"seed": seed_for(params, key)}
        if look is not None:
            seeds = {
                "seed": look[1],
                "subseed": seeds["seed"],
                "subseed_strength": LOOK_VARIATION,
            }
        return {
            "prompt": image_prompt(params),
            "negative_prompt": params.get("negative_prompt") or self.negative_prompt,
            **seeds,
            "width": width if isinstance(width, int) else self.width,
            "height": height if isinstance(height, int) else self.height,
            "steps": self.steps,
            "batch_size": 1,
            "n_iter": 1,
            "send_images": True,
            "save_images": False,
        }

    def render(
        self,
        params: dict[str, Any],
        *,
        key: str,
        progress: Progress | None = None,
        reference: ReferenceImage | None = None,
    ) -> RenderedImage:
        body = self.request(params, key=key)
        outcome: dict[str, Any] = {}
        done = threading.Event()
        with httpx.Client(timeout=self.timeout) as client:

            def post() -> None:
                try:
                    outcome["answer"] = client.post(f"{self.url}/sdapi/v1/txt2img", json=body)
                except Exception as exc:  # handed to the caller's thread below
                    outcome["error"] = exc
                finally:
                    done.set()

            if progress is None:
                post()
            else:
                # The request runs beside this thread, which asks for progress meanwhile:
                # the callback (it writes to the database) stays on the caller's thread.
                worker = threading.Thread(target=post, name="a1111-txt2img", daemon=True)
                worker.start()
                while not done.wait(self.poll_seconds):
                    step = self._sampling_step(client)
                    if step is not None:
                        progress(*step)
                worker.join()
        if "error" in outcome:
            raise self._unreachable(outcome["error"]) from None
        return self._image(outcome["answer"])

    def describe(self) -> str:
        return (
            f"Panels come from AUTOMATIC1111 at {server_place(self.url)} "
            f"({self.width}x{self.height}, {self.steps} steps)."
        )

    def probe(self) -> str | None:
        """Asks for progress (``GET /sdapi/v1/progress``), which answers at once even while
        the web UI draws."""
        try:
            answer = httpx.get(
                f"{self.url}/sdapi/v1/progress",
                params={"skip_current_image": "true"},
                timeout=PROBE_TIMEOUT,
            )
        except httpx.TimeoutException:
            return f"no answer within {PROBE_TIMEOUT:g} s"
        except httpx.HTTPError as exc:
            return f"unreachable: {exc}"
        if answer.status_code == 404:
            return "no API at this address (start the web UI with --api)"
        if answer.status_code in (401, 403):
            return f"the web UI refused the credentials (HTTP {answer.status_code})"
        if answer.status_code >= 400:
            return f"the web UI answered HTTP {answer.status_code}"
        return None

    def _sampling_step(self, client: httpx.Client) -> tuple[int, int] | None:
        """The sampler's (step, steps) now, or None when the web UI does not say."""
        try:
            answer = client.get(
                f"{self.url}/sdapi/v1/progress",
                params={"skip_current_image": "true"},
                timeout=PROBE_TIMEOUT,
            )
            state = answer.json().get("state") or {}
            step, steps = int(state.get("sampling_step", 0)), int(state.get("sampling_steps", 0))
        except (httpx.HTTPError, ValueError, TypeError, AttributeError):
            return None
        return (min(step, steps), steps) if steps > 0 else None

    def _image(self, answer: httpx.Response) -> RenderedImage:
        server = f"AUTOMATIC1111 at {server_place(self.url)}"
        if answer.status_code == 404:
            raise BackendError(f"{server} has no txt2img API (start the web UI with --api)")
        if answer.status_code >= 400:
            said = server_said(answer.status_code, answer.content, keys=ERROR_KEYS)
            raise BackendError(f"{server} failed the render: {said}")
        try:
            images = answer.json().get("images")
        except (ValueError, AttributeError):
            raise BackendError(f"{server} answered with something other than JSON") from None
        if not isinstance(images, list) or not images:
            raise BackendError(f"{server} answered with no image")
        return decode_base64_image(images[0], server=server)

    def _unreachable(self, exc: Exception) -> BackendError:
        server = f"AUTOMATIC1111 at {server_place(self.url)}"
        if isinstance(exc, httpx.TimeoutException):
            return BackendError(f"{server} did not answer within {self.timeout:g} s")
        return BackendError(f"could not reach {server}: {exc}")
