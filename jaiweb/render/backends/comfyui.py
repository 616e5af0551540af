"""ComfyUI: panels rendered on the user's own GPU through ComfyUI's HTTP API.

A render is a ComfyUI prompt (an API-format workflow with its placeholders filled in)
under a prompt id derived from the call's idempotency key, and every ``SaveImage`` node
writes to ``jaiweb/<prompt_id>``. So whether a key's render ran can be asked of ComfyUI
itself, and ``render`` asks before it queues anything: ``/history/<prompt_id>`` (done, or
failed), then ``/queue`` (queued or running: wait for it), then the output file
``jaiweb/<prompt_id>_00001_.png`` (done before a ComfyUI restart wiped its history). Only
when all three say no is the prompt queued, with the same id. A restart of ComfyUI loses
its history and queue but keeps its output folder, so "absent everywhere" means nothing was
produced: queueing again is safe, and a render that ran is never queued a second time.

While a prompt runs, ``render`` polls its history and calls ``progress`` on every poll
that ComfyUI answers (the caller renews its lease there), with the sampler's step and
step count when ComfyUI's websocket reported them (``0, 0`` until then). The websocket
is a help only: polling decides, because the socket may drop.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import json
import os
import re
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from jaiweb.render.backends.base import (
    REFERENCE_TYPES,
    ReferenceImage,
    RenderedImage,
    image_prompt,
)
from jaiweb.render.panel.variation import own_seed

BUNDLED_WORKFLOW = Path(__file__).resolve().parent / "workflows" / "sd15-default.json"
# The checkpoint the bundled workflow loads when none is configured: the file name that
# ComfyUI's own default workflow uses for Stable Diffusion 1.5.
DEFAULT_CHECKPOINT = "v1-5-pruned-emaonly.safetensors"
DEFAULT_NEGATIVE = "lowres, blurry, jpeg artifacts, watermark, signature, text, deformed"
DEFAULT_SIZE = 512  # SD-1.5 checkpoints are trained at 512 x 512
MIN_SIZE, MAX_SIZE = 16, 16384  # what ComfyUI's EmptyLatentImage accepts
MAX_SEED = 2**64 - 1
OUTPUT_FOLDER = "jaiweb"
PLACEHOLDERS = (
    "prompt",
    "negative_prompt",
    "seed",
    "width",
    "height",
    "checkpoint",
    "reference_image",
)
# ``{{seed:<character>}}``: that character's own seed (its look), the panel's when it has none.
CHARACTER_SEED = "seed:"
PROBE_SECONDS = 2.0  # /healthz asks the backend within this
MAX_REQUEUES = 3  # a prompt ComfyUI lost (a restart) is queued again this often at most
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")

Progress = Callable[[int, int], None]


class ComfyUIError(RuntimeError):
    """ComfyUI refused the prompt, failed it, or did not finish it in time."""


class ComfyUIUnreachable(ComfyUIError):
    """ComfyUI did not answer; when raised before anything was queued, nothing ran."""


class ComfyUIWorkflowError(ValueError):
    """The configured workflow cannot be used (each problem names the file and the node)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def prompt_id_for(key: str) -> str:
    """The ComfyUI prompt id of the render under this idempotency key."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "jaiweb:" + key))


def output_filename(prompt_id: str) -> str:
    """The file ComfyUI's first SaveImage writes for this prompt, in ``OUTPUT_FOLDER``."""
    return f"{prompt_id}_00001_.png"


def seed_for(key: str) -> int:
    """The seed of a render whose parameters name none: derived from its key, so a repeat of
    the key draws the same picture."""
    return int.from_bytes(hashlib.sha256(b"jaiweb-seed:" + key.encode()).digest()[:6], "big")


# --- the workflow -----------------------------------------------------------------------


def _node_name(node_id: str, node: Any) -> str:
    """``node 6 (CLIPTextEncode, 'Positive')``: the id, the class and the title if any."""
    node = node if isinstance(node, dict) else {}
    meta = node.get("_meta") if isinstance(node.get("_meta"), dict) else {}
    label = [str(node["class_type"])] if isinstance(node.get("class_type"), str) else []
    if meta.get("title"):
        label.append(repr(str(meta["title"])))
    return f"node {node_id} ({', '.join(label)})" if label else f"node {node_id}"


def _load(path: Path) -> tuple[Any, list[str]]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, [f"{path}: the ComfyUI workflow file does not exist"]
    except (OSError, UnicodeDecodeError) as exc:
        return None, [f"{path}: the ComfyUI workflow file cannot be read ({exc})"]
    try:
        return json.loads(text), []
    except ValueError as exc:
        return None, [f"{path}: the ComfyUI workflow is not valid JSON ({exc})"]


def _problems(path: Path, workflow: Any) -> list[str]:
    if isinstance(workflow, dict) and isinstance(workflow.get("nodes"), list):
        return [
            f"{path}: this is a workflow in ComfyUI's UI format (it has 'nodes' and 'links'); "
            "export it with 'Save (API Format)' (Workflow > Export (API) in newer ComfyUI)"
        ]
    if not isinstance(workflow, dict) or not workflow:
        return [f"{path}: not an API-format ComfyUI workflow (a JSON object of nodes by id)"]
    problems: list[str] = []
    saves = 0
    prompts = 0
    for node_id, node in workflow.items():
        where = f"{path}: {_node_name(node_id, node)}"
        if not isinstance(node, dict) or not isinstance(node.get("class_type"), str):
            problems.append(f"{where} has no class_type; export the workflow in API format")
            continue
        inputs = node.get("inputs", {})
        if not isinstance(inputs, dict):
            problems.append(f"{where}: its inputs are not a JSON object")
            continue
        if node["class_type"] == "SaveImage":
            saves += 1
        for name, value in inputs.items():
            if not isinstance(value, str):
                continue
            found = _PLACEHOLDER.findall(value)
            whole = _PLACEHOLDER.fullmatch(value.strip())
            for placeholder in found:
                if not _known(placeholder):
                    known = ", ".join(["{{" + p + "}}" for p in PLACEHOLDERS])
                    known += ", {{seed:<character>}}"
                    problems.append(
                        f"{where}, input '{name}': unknown placeholder {{{{{placeholder}}}}} "
                        f"(known: {known})"
                    )
                elif not whole:
                    problems.append(
                        f"{where}, input '{name}': {{{{{placeholder}}}}} is filled in only when "
                        "it is the input's whole value"
                    )
                elif placeholder == "prompt":
                    prompts += 1
    if saves == 0:
        problems.append(
            f"{path}: the workflow has no SaveImage node; jaiweb takes the panel from a "
            "SaveImage node's output"
        )
    if prompts == 0:
        problems.append(
            f"{path}: no node has an input whose value is {{{{prompt}}}}, so the panel's "
            "prompt would never reach ComfyUI (put it in the positive CLIPTextEncode's text)"
        )
    return problems


def _known(placeholder: str) -> bool:
    if placeholder.startswith(CHARACTER_SEED):
        return bool(placeholder.removeprefix(CHARACTER_SEED).strip())
    return placeholder in PLACEHOLDERS


def placeholders_in(workflow: dict[str, Any]) -> set[str]:
    """The placeholders the workflow's inputs are (each input's whole value)."""
    found = set()
    for node in workflow.values():
        inputs = node.get("inputs") if isinstance(node, dict) else None
        for value in (inputs or {}).values() if isinstance(inputs, dict) else ():
            whole = _PLACEHOLDER.fullmatch(value.strip()) if isinstance(value, str) else None
            if whole:
                found.add(whole.group(1))
    return found


def reference_upload_name(reference: ReferenceImage) -> str:
    """The file name a reference picture is uploaded under: the same for the same image,
    so uploading it again (``overwrite``) replaces it rather than piling up copies."""
    return f"jaiweb-{reference.image_id}.{reference.extension}"


def workflow_check(path: Path) -> list[str]:
    """What is wrong with the workflow file at ``path`` (empty: nothing), each problem
    naming the file and, where one is at fault, the node."""
    workflow, problems = _load(path)
    return problems or _problems(path, workflow)


def workflow_fill(workflow: dict[str, Any], *, prompt_id: str, values: dict[str, Any]) -> dict:
    """A copy of ``workflow`` with each input whose whole value is a placeholder set to its
    value, and every SaveImage node writing to ``jaiweb/<prompt_id>``."""
    filled = copy.deepcopy(workflow)
    for node in filled.values():
        inputs = node.setdefault("inputs", {})
        for name, value in inputs.items():
            if isinstance(value, str):
                whole = _PLACEHOLDER.fullmatch(value.strip())
                if whole and whole.group(1) in values:
                    inputs[name] = values[whole.group(1)]
        if node.get("class_type") == "SaveImage":
            inputs["filename_prefix"] = f"{OUTPUT_FOLDER}/{prompt_id}"
    return filled


def _whole_number(params: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = params.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"the render parameter {name!r} must be a whole number from {low} "
                         f"to {high}, not {value!r}")  # fmt: skip
    return value


# --- the renderer -----------------------------------------------------------------------


class ComfyUIRenderer:
    """Renders a panel with a ComfyUI workflow and reconciles with ComfyUI before queueing,
    so a key's render runs once even across crashes of ours and restarts of ComfyUI."""

    name = "comfyui"
    remote = True
    policy = "idempotent"

    def __init__(
        self,
        *,
        url: str,
        workflow_path: Path | None = None,
        checkpoint: str | None = None,
        timeout_seconds: float = 900.0,
        poll_seconds: float = 1.0,
        request_seconds: float = 10.0,
        outage_seconds: float = 60.0,
        websocket: bool = True,
    ):
        parts = urlsplit(url or "")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the ComfyUI URL must look like http://host:8188, not {url!r}")
        if timeout_seconds <= 0 or poll_seconds <= 0 or request_seconds <= 0:
            raise ValueError("the ComfyUI timeouts and poll interval must be positive")
        # A user:password in the URL (a ComfyUI behind a proxy's basic auth) is sent as such
        # and never shown: ``url`` is the address without it.
        self.auth = (
            (unquote(parts.username), unquote(parts.password or "")) if parts.username else None
        )
        netloc = parts.netloc.rpartition("@")[2]
        self.url = parts._replace(netloc=netloc, query="", fragment="").geturl().rstrip("/")
        self.workflow_path = Path(workflow_path) if workflow_path else BUNDLED_WORKFLOW
        self.checkpoint = checkpoint or DEFAULT_CHECKPOINT
        self.timeout_seconds = timeout_seconds
        self.poll_seconds = poll_seconds
        self.request_seconds = request_seconds
        self.outage_seconds = outage_seconds
        self.websocket = websocket
        workflow, problems = _load(self.workflow_path)
        problems = problems or _problems(self.workflow_path, workflow)
        if problems:
            raise ComfyUIWorkflowError(problems)
        self.workflow: dict[str, Any] = workflow
        self.placeholders = placeholders_in(workflow)
        # The render service reads a panel's reference picture for this backend only when
        # the workflow has a place for it.
        self.uses_reference = "reference_image" in self.placeholders

    @classmethod
    def from_settings(cls) -> ComfyUIRenderer:
        """The backend ``JAIWEB_COMFYUI_URL``, ``JAIWEB_COMFYUI_WORKFLOW`` and
        ``JAIWEB_COMFYUI_CHECKPOINT`` describe; a bad value is refused naming its variable."""
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        url = getattr(settings, "JAIWEB_COMFYUI_URL", None)
        workflow = getattr(settings, "JAIWEB_COMFYUI_WORKFLOW", None)
        if not url:
            raise ImproperlyConfigured(
                "JAIWEB_IMAGE_BACKEND is 'comfyui', so JAIWEB_COMFYUI_URL must be set "
                "(for example http://127.0.0.1:8188)"
            )
        try:
            return cls(
                url=str(url),
                workflow_path=Path(workflow) if workflow else None,
                checkpoint=getattr(settings, "JAIWEB_COMFYUI_CHECKPOINT", None),
            )
        except ComfyUIWorkflowError as exc:
            raise ImproperlyConfigured(f"JAIWEB_COMFYUI_WORKFLOW: {exc}") from exc
        except ValueError as exc:
            raise ImproperlyConfigured(f"JAIWEB_COMFYUI_URL: {exc}") from exc

    def client(self, *, timeout: float | None = None) -> httpx.Client:
        """An HTTP client for ComfyUI's API."""
        return httpx.Client(
            base_url=self.url, auth=self.auth, timeout=timeout or self.request_seconds
        )

    def describe(self) -> str:
        return f"Panels come from ComfyUI at {self.url}, workflow {self.workflow_path.stem}."

    def probe(self) -> str | None:
        """None when ComfyUI answers, else why it does not."""
        reason = "no answer"
        with self.client(timeout=PROBE_SECONDS) as client:
            for path in ("/system_stats", "/queue"):
                try:
                    response = client.get(path)
                except httpx.HTTPError as exc:
                    return f"ComfyUI at {self.url} is unreachable ({type(exc).__name__}: {exc})"
                if response.status_code == 200:
                    return None
                reason = f"ComfyUI at {self.url} answered {response.status_code} to GET {path}"
        return reason

    def values(
        self, params: dict[str, Any], *, key: str, reference_name: str | None = None
    ) -> dict[str, Any]:
        """What the placeholders are filled with for these render parameters:
        ``{{seed:<character>}}`` with that character's own seed (the panel's seed when it
        has none), ``{{reference_image}}`` with the uploaded reference's name."""
        negative = params.get("negative_prompt")
        seed = _whole_number(params, "seed", seed_for(key), 0, MAX_SEED)
        values: dict[str, Any] = {
            "prompt": image_prompt(params),
            "negative_prompt": negative if isinstance(negative, str) else DEFAULT_NEGATIVE,
            "seed": seed,
            "width": _whole_number(params, "width", DEFAULT_SIZE, MIN_SIZE, MAX_SIZE),
            "height": _whole_number(params, "height", DEFAULT_SIZE, MIN_SIZE, MAX_SIZE),
            "checkpoint": self.checkpoint,
        }
        characters = params.get("characters")
        characters = characters if isinstance(characters, dict) else {}
        for placeholder in self.placeholders:
            if placeholder.startswith(CHARACTER_SEED):
                name = placeholder.removeprefix(CHARACTER_SEED).strip()
                own = own_seed(characters.get(name))
                values[placeholder] = seed if own is None else own
        if reference_name is not None:
            values["reference_image"] = reference_name
        return values

    def render(
        self,
        params: dict[str, Any],
        *,
        key: str,
        progress: Progress | None = None,
        reference: ReferenceImage | None = None,
    ) -> RenderedImage:
        prompt_id = prompt_id_for(key)
        with self.client() as client:
            uploaded = self._reference_uploaded(client, reference) if self.uses_reference else None
            values = self.values(params, key=key, reference_name=uploaded)
            workflow = workflow_fill(self.workflow, prompt_id=prompt_id, values=values)
            return _Render(self, client, prompt_id, progress).run(workflow)

    def _reference_uploaded(self, client: httpx.Client, reference: ReferenceImage | None) -> str:
        """Upload the panel's reference picture (``POST /upload/image`` into ComfyUI's input
        folder, replacing an earlier upload of it) and give the name ComfyUI answers with,
        which ``{{reference_image}}`` is filled with."""
        where = f"{self.workflow_path}: {{{{reference_image}}}}"
        if reference is None:
            raise ComfyUIError(
                f"the workflow takes a reference picture ({where}), and no character of this "
                "panel has one: set a character's look from one of your panels first"
            )
        if reference.content_type not in REFERENCE_TYPES:
            raise ComfyUIError(
                f"the reference picture of {reference.character}'s look is "
                f"{reference.content_type}, which ComfyUI's LoadImage cannot read (a panel "
                "of the local renderer is SVG): set the look from a panel ComfyUI drew"
            )
        name = reference_upload_name(reference)
        try:
            response = client.post(
                "/upload/image",
                files={"image": (name, reference.data, reference.content_type)},
                data={"type": "input", "overwrite": "true"},
            )
        except httpx.HTTPError as exc:  # before anything was queued: nothing ran
            raise ComfyUIUnreachable(
                f"ComfyUI at {self.url} is unreachable ({type(exc).__name__}: {exc})"
            ) from exc
        try:
            answered = response.json().get("name") if response.status_code == 200 else None
        except (ValueError, AttributeError):
            answered = None
        if not isinstance(answered, str) or not answered:
            raise ComfyUIError(
                f"ComfyUI at {self.url} did not take the reference picture of "
                f"{reference.character}'s look: POST /upload/image answered "
                f"{response.status_code} {response.text.strip()[:200]}"
            )
        return answered


# --- one render ---------------------------------------------------------------------------


class _Unanswered(Exception):
    """ComfyUI gave no usable answer to one request (down, restarting, or a 5xx)."""

    def __init__(self, reason: str, *, connect: bool = False):
        self.connect = connect  # the request never reached ComfyUI
        super().__init__(reason)


WAITING = "waiting"  # queued or running
ABSENT = "absent"  # in neither history nor queue, and no output file


class _Render:
    def __init__(
        self,
        renderer: ComfyUIRenderer,
        client: httpx.Client,
        prompt_id: str,
        progress: Progress | None,
    ):
        self.renderer = renderer
        self.url = renderer.url
        self.client = client
        self.prompt_id = prompt_id
        self.client_id = f"jaiweb-{prompt_id}"  # so a recovering process hears its progress
        self.progress = progress
        self.socket: _ProgressSocket | None = None

    def run(self, workflow: dict[str, Any]) -> RenderedImage:
        renderer = self.renderer
        deadline = time.monotonic() + renderer.timeout_seconds
        try:
            found = self._where()
        except _Unanswered as exc:
            raise ComfyUIUnreachable(f"ComfyUI at {self.url} is unreachable ({exc})") from exc
        if isinstance(found, RenderedImage):
            return found
        if renderer.websocket:
            self.socket = _ProgressSocket(
                self.url, self.client_id, self.prompt_id, auth=renderer.auth
            )
            self.socket.start()
        try:
            if found == ABSENT:
                try:
                    self._queue(workflow)
                except _Unanswered as exc:
                    if exc.connect:  # nothing reached ComfyUI: nothing runs
                        raise ComfyUIUnreachable(
                            f"ComfyUI at {self.url} is unreachable ({exc})"
                        ) from exc
            return self._wait(workflow, deadline)
        finally:
            if self.socket is not None:
                self.socket.stop()

    def _wait(self, workflow: dict[str, Any], deadline: float) -> RenderedImage:
        renderer = self.renderer
        requeued = 0
        answered = time.monotonic()
        self._tick()
        while True:
            if time.monotonic() >= deadline:
                self._drop_pending()
                raise ComfyUIError(
                    f"ComfyUI at {self.url} did not finish prompt {self.prompt_id} within "
                    f"{renderer.timeout_seconds:g} s"
                )
            if self.socket is not None:
                self.socket.woken.wait(renderer.poll_seconds)
                self.socket.woken.clear()
            else:
                time.sleep(renderer.poll_seconds)
            try:
                found = self._where()
                if found == ABSENT:  # ComfyUI lost it (a restart): nothing was produced
                    if requeued >= MAX_REQUEUES:
                        raise ComfyUIError(
                            f"ComfyUI at {self.url} lost prompt {self.prompt_id} "
                            f"{requeued + 1} times; not queueing it again"
                        )
                    self._queue(workflow)
                    requeued += 1
                    found = WAITING
            except _Unanswered as exc:
                if time.monotonic() - answered > renderer.outage_seconds:
                    raise ComfyUIUnreachable(
                        f"ComfyUI at {self.url} is unreachable ({exc}) while prompt "
                        f"{self.prompt_id} was pending"
                    ) from exc
                continue
            answered = time.monotonic()
            if isinstance(found, RenderedImage):
                return found
            self._tick()

    def _tick(self) -> None:
        if self.progress is not None:
            step = self.socket.step if self.socket is not None else (0, 0)
            self.progress(*step)

    # -- what ComfyUI knows about the prompt ----------------------------------------

    def _where(self) -> RenderedImage | str:
        """The image when the prompt is done, WAITING when it is queued or running, ABSENT
        when ComfyUI knows nothing of it; raises when ComfyUI reports its failure."""
        record = self._history()
        if record is not None:
            return self._outcome(record)
        if self._in_queue():
            return WAITING
        record = self._history()  # it may have finished between the two questions
        if record is not None:
            return self._outcome(record)
        image = self._view(OUTPUT_FOLDER, output_filename(self.prompt_id))
        return image if image is not None else ABSENT

    def _get(self, path: str, **params: str) -> httpx.Response:
        try:
            response = self.client.get(path, params=params or None)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise _Unanswered(f"{type(exc).__name__}: {exc}", connect=True) from exc
        except httpx.HTTPError as exc:
            raise _Unanswered(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code >= 500:
            raise _Unanswered(f"{response.status_code} to GET {path}")
        return response

    def _json(self, path: str) -> Any:
        response = self._get(path)
        if response.status_code != 200:
            raise _Unanswered(f"{response.status_code} to GET {path}")
        try:
            return response.json()
        except ValueError as exc:
            raise _Unanswered(f"GET {path} answered something that is not JSON") from exc

    def _history(self) -> dict[str, Any] | None:
        found = self._json(f"/history/{self.prompt_id}")
        record = found.get(self.prompt_id) if isinstance(found, dict) else None
        return record if isinstance(record, dict) else None

    def _in_queue(self) -> bool:
        queue = self._json("/queue")
        if not isinstance(queue, dict):
            raise _Unanswered("GET /queue answered something that is not a queue")
        for part in ("queue_running", "queue_pending"):
            for item in queue.get(part) or ():
                if isinstance(item, list) and len(item) > 1 and item[1] == self.prompt_id:
                    return True
        return False

    def _view(self, subfolder: str, filename: str) -> RenderedImage | None:
        response = self._get("/view", filename=filename, subfolder=subfolder, type="output")
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise _Unanswered(f"{response.status_code} to GET /view of {subfolder}/{filename}")
        if not response.content.startswith(PNG_SIGNATURE):
            raise ComfyUIError(
                f"ComfyUI at {self.url} answered GET /view of {subfolder}/{filename} with "
                "something that is not a PNG image"
            )
        return RenderedImage(response.content, "image/png", "png")

    def _outcome(self, record: dict[str, Any]) -> RenderedImage:
        status = record.get("status") if isinstance(record.get("status"), dict) else {}
        if status.get("status_str") == "error":
            raise ComfyUIError(self._failure(status))
        mine = f"{self.prompt_id}_"
        outputs = record.get("outputs") if isinstance(record.get("outputs"), dict) else {}
        for output in outputs.values():
            images = output.get("images") if isinstance(output, dict) else None
            for image in images or ():
                if (
                    isinstance(image, dict)
                    and image.get("type", "output") == "output"
                    and image.get("subfolder") == OUTPUT_FOLDER
                    and str(image.get("filename", "")).startswith(mine)
                ):
                    found = self._view(OUTPUT_FOLDER, str(image["filename"]))
                    if found is None:
                        raise ComfyUIError(
                            f"ComfyUI at {self.url} finished prompt {self.prompt_id}, but its "
                            f"image {OUTPUT_FOLDER}/{image['filename']} is gone from its "
                            "output folder"
                        )
                    return found
        found = self._view(OUTPUT_FOLDER, output_filename(self.prompt_id))
        if found is None:
            raise ComfyUIError(
                f"ComfyUI at {self.url} finished prompt {self.prompt_id} without saving an "
                "image (does the workflow's SaveImage node get its input?)"
            )
        return found

    def _failure(self, status: dict[str, Any]) -> str:
        for message in status.get("messages") or ():
            if not (isinstance(message, list) and len(message) == 2):
                continue
            kind, data = message
            data = data if isinstance(data, dict) else {}
            node = f"node {data.get('node_id')} ({data.get('node_type')})"
            if kind == "execution_error":
                return (
                    f"ComfyUI at {self.url} failed prompt {self.prompt_id} in {node}: "
                    f"{data.get('exception_type', 'error')}: {data.get('exception_message', '')}"
                ).strip()
            if kind == "execution_interrupted":
                return (
                    f"ComfyUI at {self.url} interrupted prompt {self.prompt_id} in {node} "
                    "(someone pressed cancel there)"
                )
        return f"ComfyUI at {self.url} reports prompt {self.prompt_id} failed"

    # -- queueing ------------------------------------------------------------------------

    def _queue(self, workflow: dict[str, Any]) -> None:
        body = {"prompt": workflow, "prompt_id": self.prompt_id, "client_id": self.client_id}
        try:
            response = self.client.post("/prompt", json=body)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise _Unanswered(f"{type(exc).__name__}: {exc}", connect=True) from exc
        except httpx.HTTPError:
            return  # sent, its answer lost: waiting reconciles (queued, or absent: again)
        if response.status_code == 400:
            raise ComfyUIError(self._refusal(response))
        if response.status_code != 200:
            raise ComfyUIError(
                f"ComfyUI at {self.url} answered {response.status_code} to POST /prompt: "
                f"{response.text.strip()[:300]}"
            )
        try:
            answered = response.json().get("prompt_id")
        except (ValueError, AttributeError):
            answered = None
        if answered != self.prompt_id:
            if isinstance(answered, str):
                with contextlib.suppress(httpx.HTTPError):
                    self.client.post("/queue", json={"delete": [answered]})
            raise ComfyUIError(
                f"ComfyUI at {self.url} queued the prompt as {answered!r}, not under the "
                f"prompt_id jaiweb chose ({self.prompt_id}); this ComfyUI is too old to let a "
                "render be looked up after a crash: update it"
            )

    def _refusal(self, response: httpx.Response) -> str:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return f"ComfyUI at {self.url} refused the workflow: {response.text.strip()[:300]}"
        error = body.get("error") if isinstance(body.get("error"), dict) else {}
        parts = [
            f"ComfyUI at {self.url} refused the workflow "
            f"({error.get('type', 'error')}: {error.get('message', '')})"
        ]
        node_errors = body.get("node_errors") if isinstance(body.get("node_errors"), dict) else {}
        for node_id, found in node_errors.items():
            found = found if isinstance(found, dict) else {}
            said = "; ".join(
                " ".join(str(e.get(k, "")) for k in ("message", "details") if e.get(k))[:200]
                for e in found.get("errors") or ()
                if isinstance(e, dict)
            )
            parts.append(f"node {node_id} ({found.get('class_type', '?')}): {said}")
        if len(parts) == 1 and error.get("details"):
            parts.append(str(error["details"])[:300])
        return "; ".join(parts)

    def _drop_pending(self) -> None:
        """Take the prompt out of ComfyUI's queue if it has not started (best effort)."""
        with contextlib.suppress(httpx.HTTPError):
            self.client.post("/queue", json={"delete": [self.prompt_id]})


# --- ComfyUI's websocket, for progress only ------------------------------------------------


class _ProgressSocket(threading.Thread):
    """Listens on ``/ws?clientId=…`` for this prompt's sampler progress (``step``) and its
    end (``woken``). A minimal RFC 6455 client: text frames in, pongs and a close out."""

    def __init__(
        self, url: str, client_id: str, prompt_id: str, *, auth: tuple[str, str] | None = None
    ):
        super().__init__(name=f"comfyui-ws-{prompt_id[:8]}", daemon=True)
        self.url = url
        self.auth = auth
        self.client_id = client_id
        self.prompt_id = prompt_id
        self.step: tuple[int, int] = (0, 0)
        self.woken = threading.Event()
        self._stopping = threading.Event()
        self._sock: socket.socket | None = None

    def stop(self) -> None:
        self._stopping.set()
        sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.join(timeout=2)

    def run(self) -> None:
        with contextlib.suppress(OSError, ValueError, EOFError):
            self._listen()

    def _listen(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme != "http":  # wss would need TLS: polling alone is enough
            return
        port = parts.port or 80
        sock = socket.create_connection((parts.hostname, port), timeout=5)
        self._sock = sock
        if self._stopping.is_set():
            sock.close()
            return
        with sock:
            nonce = base64.b64encode(os.urandom(16)).decode()
            path = (parts.path or "").rstrip("/") + f"/ws?clientId={self.client_id}"
            credentials = ""
            if self.auth is not None:
                token = base64.b64encode(":".join(self.auth).encode()).decode()
                credentials = f"Authorization: Basic {token}\r\n"
            sock.sendall(
                (
                    f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
                    f"Connection: Upgrade\r\nSec-WebSocket-Key: {nonce}\r\n"
                    f"Sec-WebSocket-Version: 13\r\n{credentials}\r\n"
                ).encode()
            )
            reader = sock.makefile("rb")
            status = reader.readline()
            if b" 101 " not in status:
                return
            while reader.readline() not in (b"\r\n", b"\n", b""):
                pass
            sock.settimeout(None)
            while not self._stopping.is_set():
                opcode, payload = _read_frame(reader)
                if opcode == 0x8:  # close
                    return
                if opcode == 0x9:  # ping
                    sock.sendall(_frame(0xA, payload))
                elif opcode == 0x1:
                    self._heard(payload)

    def _heard(self, payload: bytes) -> None:
        try:
            message = json.loads(payload)
        except ValueError:
            return
        data = message.get("data") if isinstance(message, dict) else None
        if not isinstance(data, dict) or data.get("prompt_id") != self.prompt_id:
            return
        kind = message.get("type")
        if kind == "progress":
            value, most = data.get("value"), data.get("max")
            if isinstance(value, int) and isinstance(most, int):
                self.step = (value, most)
        elif kind in ("execution_success", "execution_error", "execution_interrupted"):
            self.woken.set()


def _read_frame(reader: Any) -> tuple[int, bytes]:
    head = reader.read(2)
    if len(head) < 2:
        raise EOFError
    opcode = head[0] & 0x0F
    length = head[1] & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", reader.read(2))
    elif length == 127:
        (length,) = struct.unpack("!Q", reader.read(8))
    mask = reader.read(4) if head[1] & 0x80 else b""
    payload = reader.read(length)
    if len(payload) < length:
        raise EOFError
    if mask:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return opcode, payload


def _frame(opcode: int, payload: bytes) -> bytes:
    """One masked frame from the client (RFC 6455 requires clients to mask)."""
    mask = os.urandom(4)
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    elif size < 2**16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
