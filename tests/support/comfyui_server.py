"""A real loopback HTTP server that behaves like ComfyUI 0.3.64's HTTP API, restarts included.

What it does is what issue 28 observed of a real ComfyUI:

* ``POST /prompt {"prompt", "prompt_id", "client_id"}`` validates the API-format workflow
  against a small node catalogue (the nodes of an SD-1.5 text-to-image workflow) and answers
  ``200 {"prompt_id", "number", "node_errors": {}}``; it takes the client's ``prompt_id``
  and never deduplicates it (the same id twice runs twice, the second overwriting the
  first in history). A bad workflow gets ``400 {"error": {"type", "message", …},
  "node_errors"}`` and never reaches history; a body that is not JSON gets aiohttp's
  plain-text 500.
* ``GET /history/<id>`` is ``{}`` while the prompt is queued or running, and its record
  (``outputs`` and ``status``) afterwards; ``GET /queue``, ``POST /queue {"delete"}``,
  ``POST /interrupt``, ``GET /system_stats``.
* A run sleeps ``run_seconds`` (per prompt: ``run_seconds_for``), one sampler step after the
  other, then waits for ``gate`` (set: no wait), then writes each SaveImage node's PNG into
  the output folder: a ``filename_prefix`` of ``jaiweb/<id>`` writes subfolder ``jaiweb``,
  file ``<id>_00001_.png`` (the next free counter, as ComfyUI does). ``failures[id]`` makes
  the prompt fail at run time (``status_str: "error"`` with the exception).
  ``GET /view?filename=&subfolder=&type=output`` serves the file (404 when missing).
* ``POST /upload/image`` (multipart: the file ``image``, ``type``, ``subfolder``,
  ``overwrite``) puts a picture into the input folder and answers ``{"name", "subfolder",
  "type"}``, renaming it ``name (1).ext`` when the name holds other bytes and overwrite is
  not "true"; a ``LoadImage`` node's ``image`` must name a file there (else 400,
  ``custom_validation_failed``). ``uploads`` holds every upload.
* ``GET /ws?clientId=`` is a websocket that hears the run's ``execution_start``,
  ``executing``, ``progress {value, max}``, ``executed`` and ``execution_success`` /
  ``execution_error`` / ``execution_interrupted``.
* ``restart(lose_outputs=False)`` is a ComfyUI restart: history and queue (memory only) are
  gone and a running prompt vanishes without a trace; the output folder stays (unless
  ``lose_outputs``). ``down()`` / ``up()`` close and reopen the listening port.

``executions[id]`` counts the runs each prompt id started; ``posts`` holds every
``POST /prompt`` body, ``accepted`` the ones that were queued, ``requests`` every request
as ``(method, path)`` and ``authorizations`` its ``Authorization`` header.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import queue
import select
import shutil
import socket
import struct
import threading
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.multipart import Part, form_fields, form_parts

VERSION = "0.3.64"
CHECKPOINTS = ("v1-5-pruned-emaonly.safetensors", "dreamshaper_8.safetensors")
GATE_LIMIT = 10.0  # a run held at the gate never waits longer than this
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
INPUT_FILE = "INPUT_FILE"  # an input naming a file of the input folder

# The node catalogue: each input's type (a tuple: a list of allowed values; "INT"/"FLOAT" with
# bounds; a link type), and which nodes are outputs. As ComfyUI's own INPUT_TYPES say.
NODES: dict[str, dict[str, Any]] = {
    "CheckpointLoaderSimple": {"inputs": {"ckpt_name": CHECKPOINTS}},
    "CLIPTextEncode": {"inputs": {"text": "STRING", "clip": "CLIP"}},
    "EmptyLatentImage": {
        "inputs": {
            "width": ("INT", 16, 16384),
            "height": ("INT", 16, 16384),
            "batch_size": ("INT", 1, 4096),
        }
    },
    "KSampler": {
        "inputs": {
            "model": "MODEL",
            "seed": ("INT", 0, 2**64 - 1),
            "steps": ("INT", 1, 10000),
            "cfg": ("FLOAT", 0.0, 100.0),
            "sampler_name": ("euler", "euler_ancestral", "dpmpp_2m", "ddim"),
            "scheduler": ("normal", "karras", "simple"),
            "positive": "CONDITIONING",
            "negative": "CONDITIONING",
            "latent_image": "LATENT",
            "denoise": ("FLOAT", 0.0, 1.0),
        }
    },
    "VAEDecode": {"inputs": {"samples": "LATENT", "vae": "VAE"}},
    "VAEEncode": {"inputs": {"pixels": "IMAGE", "vae": "VAE"}},
    # Its ``image`` is a file of the input folder (LoadImage's VALIDATE_INPUTS).
    "LoadImage": {"inputs": {"image": INPUT_FILE}},
    "SaveImage": {"inputs": {"images": "IMAGE", "filename_prefix": "STRING"}, "output": True},
    "PreviewImage": {"inputs": {"images": "IMAGE"}, "output": True},
}


def png(seed: bytes, text: dict[str, str] | None = None, *, size: int = 8) -> bytes:
    """A small valid RGB PNG whose pixels follow from ``seed``, with ``tEXt`` chunks (ComfyUI
    writes the prompt into its PNGs the same way)."""
    pixels = b""
    block = seed
    while len(pixels) < size * size * 3:
        block = hashlib.sha256(block).digest()
        pixels += block
    rows = b"".join(b"\x00" + pixels[row * size * 3 : (row + 1) * size * 3] for row in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack("!I", len(data)) + body + struct.pack("!I", zlib.crc32(body))

    texts = b"".join(
        chunk(b"tEXt", key.encode("latin-1") + b"\x00" + value.encode("latin-1", "replace"))
        for key, value in (text or {}).items()
    )
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack("!IIBBBBB", size, size, 8, 2, 0, 0, 0))
        + texts
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


class FakeComfyUI:
    """The server's state; ``start`` serves it on 127.0.0.1 (``url``)."""

    def __init__(
        self,
        output_dir: Path,
        *,
        workers: int = 1,
        run_seconds: float = 0.05,
        input_dir: Path | None = None,
    ):
        self.output_dir = Path(output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        # ComfyUI's input folder (uploads land here; LoadImage reads from it); a restart
        # keeps it, like the output folder.
        self.input_dir = Path(input_dir or self.output_dir.parent / "comfyui-input")
        self.input_dir.mkdir(parents=True, exist_ok=True)
        self.uploads: list[dict[str, Any]] = []  # every POST /upload/image, as ComfyUI read it
        self.workers = workers  # a real ComfyUI runs one prompt at a time
        self.run_seconds = run_seconds
        self.run_seconds_for: dict[str, float] = {}
        self.failures: dict[str, str] = {}  # prompt id -> the exception its run raises
        # A run waits (up to GATE_LIMIT) for its client's websocket before its first step,
        # so a test hears every progress message.
        self.wait_for_socket = False
        # False: like a ComfyUI older than client-chosen prompt ids, queue under a new uuid4.
        self.honour_prompt_id = True
        # True: POST /prompt raises inside the handler (a custom node's hook failing), which
        # aiohttp answers with its plain-text 500.
        self.crash_on_prompt = False
        self.gate = threading.Event()
        self.gate.set()
        self.executions: Counter[str] = Counter()  # runs started, per prompt id
        self.posts: list[Any] = []  # every POST /prompt body
        self.accepted: list[dict[str, Any]] = []  # the bodies that went into the queue
        self.requests: list[tuple[str, str]] = []
        self.authorizations: list[str | None] = []  # each request's Authorization header
        self.url = ""
        self.port = 0
        self._lock = threading.Condition()
        self._pending: list[list[Any]] = []  # [number, id, prompt, extra_data, outputs]
        self._running: dict[str, list[Any]] = {}
        self._history: dict[str, dict[str, Any]] = {}
        self._interrupts: set[str] = set()
        self._number = 0
        self._generation = 0  # a restart starts a new one; runs of an old one vanish
        self._stopping = False
        self._sockets: dict[str, _Socket] = {}
        self._threads: list[threading.Thread] = []
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        self.up()
        for n in range(self.workers):
            worker = threading.Thread(target=self._work, name=f"comfyui-worker-{n}", daemon=True)
            worker.start()
            self._threads.append(worker)

    def up(self) -> None:
        """Listen (again, on the same port after ``down``)."""
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        serving = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        serving.start()
        self._serving = serving

    def down(self) -> None:
        """Stop listening: connections are refused until ``up``; websockets are dropped."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
            self._serving.join(timeout=5)
        self._drop_sockets()

    def stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._generation += 1
            self._lock.notify_all()
        self.gate.set()
        self.down()
        for worker in self._threads:
            worker.join(timeout=5)

    def restart(self, *, lose_outputs: bool = False) -> None:
        """A ComfyUI restart: history and queue vanish, running prompts end without a trace,
        and the output folder stays (``lose_outputs``: it is emptied too)."""
        with self._lock:
            self._generation += 1
            self._pending.clear()
            self._running.clear()
            self._history.clear()
            self._interrupts.clear()
            self._lock.notify_all()
        self._drop_sockets()
        if lose_outputs:
            shutil.rmtree(self.output_dir)
            self.output_dir.mkdir(parents=True)

    # -- what tests look at ---------------------------------------------------------------

    def running_ids(self) -> list[str]:
        with self._lock:
            return list(self._running)

    def pending_ids(self) -> list[str]:
        with self._lock:
            return [item[1] for item in self._pending]

    def history_of(self, prompt_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._history.get(prompt_id)

    def output_files(self) -> list[Path]:
        return sorted(p for p in self.output_dir.rglob("*.png"))

    # -- the API ------------------------------------------------------------------------

    def post_prompt(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or "prompt" not in body:
            return 400, {
                "error": {
                    "type": "no_prompt",
                    "message": "No prompt provided",
                    "details": "No prompt provided",
                    "extra_info": {},
                },
                "node_errors": {},
            }
        prompt = body["prompt"]
        if not isinstance(prompt, dict):
            return 500, None
        error, outputs, node_errors = validate(prompt, input_file=self.input_file)
        if error is not None:
            return 400, {"error": error, "node_errors": node_errors}
        if self.crash_on_prompt:
            return 500, None
        chosen = body.get("prompt_id") if self.honour_prompt_id else None
        prompt_id = str(chosen or uuid.uuid4())
        extra = dict(body.get("extra_data") or {})
        if "client_id" in body:
            extra["client_id"] = body["client_id"]
        with self._lock:
            number = self._number
            self._number += 1
            self._pending.append([number, prompt_id, prompt, extra, outputs])
            self.accepted.append(body)
            self._lock.notify_all()
        return 200, {"prompt_id": prompt_id, "number": number, "node_errors": node_errors}

    def queue_answer(self) -> dict[str, Any]:
        with self._lock:
            return {
                "queue_running": [list(item) for item in self._running.values()],
                "queue_pending": [list(item) for item in self._pending],
            }

    def queue_change(self, body: Any) -> None:
        with self._lock:
            if isinstance(body, dict) and body.get("clear"):
                self._pending.clear()
            if isinstance(body, dict) and isinstance(body.get("delete"), list):
                gone = set(body["delete"])
                self._pending[:] = [item for item in self._pending if item[1] not in gone]

    def interrupt(self, body: Any) -> None:
        with self._lock:
            wanted = body.get("prompt_id") if isinstance(body, dict) else None
            for prompt_id in self._running:
                if wanted in (None, prompt_id):
                    self._interrupts.add(prompt_id)
            self._lock.notify_all()

    def history_answer(self, prompt_id: str | None) -> dict[str, Any]:
        with self._lock:
            if prompt_id is None:
                return json.loads(json.dumps(self._history))
            record = self._history.get(prompt_id)
            return {prompt_id: json.loads(json.dumps(record))} if record else {}

    def upload_image(self, parts: list[Part]) -> tuple[int, Any]:
        """``POST /upload/image`` as ComfyUI's ``image_upload`` does it: the file ``image``
        goes into the input folder (``type`` input, the default; or temp, output) under
        ``subfolder``. A name taken already: the same bytes are not written again and keep
        the name; other bytes get ``name (1).ext``, ``name (2).ext``… unless ``overwrite``
        is "true" or "1", which replaces the file. 400 without an image or for a path
        outside the folder."""
        fields = form_fields(parts)
        image = fields.get("image")
        record: dict[str, Any] = {k: v.text for k, v in fields.items() if v.filename is None}
        self.uploads.append(record)
        if image is None or image.filename is None or not image.filename:
            return 400, None
        kind = fields["type"].text if "type" in fields else "input"
        root = {"input": self.input_dir, "output": self.output_dir}.get(kind)
        if root is None:
            return 400, None
        subfolder = fields["subfolder"].text if "subfolder" in fields else ""
        folder = (root / os.path.normpath(subfolder)).resolve()
        filename = image.filename
        path = (folder / filename).resolve()
        if os.path.commonpath([path, root.resolve()]) != str(root.resolve()):
            return 400, None
        folder.mkdir(parents=True, exist_ok=True)
        stem, extension = os.path.splitext(filename)
        overwrite = fields["overwrite"].text if "overwrite" in fields else None
        duplicate = False
        if overwrite not in ("true", "1"):
            number = 1
            while path.exists():
                if path.read_bytes() == image.data:  # compare_image_hash
                    duplicate = True
                    break
                filename = f"{stem} ({number}){extension}"
                path = folder / filename
                number += 1
        if not duplicate:
            path.write_bytes(image.data)
        record.update(name=filename, data=image.data, content_type=image.content_type)
        return 200, {"name": filename, "subfolder": subfolder, "type": kind}

    def input_file(self, name: str) -> Path | None:
        """The input folder's file a LoadImage ``image`` names (``sub/name`` allowed)."""
        if not name or name.startswith("/") or ".." in name:
            return None
        path = self.input_dir / name.removesuffix(" [input]")
        return path if path.is_file() else None

    def view(self, query: dict[str, str]) -> tuple[int, bytes | None]:
        filename = query.get("filename")
        if not filename:
            return 404, None
        if filename.startswith("/") or ".." in filename:
            return 400, None
        if query.get("type", "output") != "output":
            return 404, None
        folder = (self.output_dir / query.get("subfolder", "")).resolve()
        if os.path.commonpath([folder, self.output_dir.resolve()]) != str(
            self.output_dir.resolve()
        ):
            return 403, None
        path = folder / filename
        return (200, path.read_bytes()) if path.is_file() else (404, None)

    # -- running prompts ----------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._stopping:
                    self._lock.wait()
                if self._stopping:
                    return
                item = self._pending.pop(0)
                prompt_id = item[1]
                self._running[prompt_id] = item
                self.executions[prompt_id] += 1
                generation = self._generation
            self._run(item, generation)

    def _live(self, prompt_id: str, generation: int) -> bool:
        return (
            self._generation == generation
            and not self._stopping
            and prompt_id not in self._interrupts
        )

    def _pause(self, seconds: float, prompt_id: str, generation: int) -> bool:
        """Sleep, unless a restart, an interrupt or the end comes first (then False)."""
        until = time.monotonic() + seconds
        with self._lock:
            while self._live(prompt_id, generation):
                left = until - time.monotonic()
                if left <= 0:
                    return True
                self._lock.wait(left)
            return False

    def _run(self, item: list[Any], generation: int) -> None:
        _number, prompt_id, prompt, extra, outputs = item
        client = extra.get("client_id")
        self._send(client, "execution_start", {"prompt_id": prompt_id, "timestamp": _ms()})
        self._send(client, "execution_cached", {"nodes": [], "prompt_id": prompt_id})
        messages: list[Any] = [
            ["execution_start", {"prompt_id": prompt_id, "timestamp": _ms()}],
            ["execution_cached", {"nodes": [], "prompt_id": prompt_id, "timestamp": _ms()}],
        ]
        sampler = next((n for n, node in prompt.items() if node["class_type"] == "KSampler"), None)
        steps = prompt[sampler]["inputs"].get("steps", 20) if sampler else 1
        steps = min(max(int(steps), 1), 20)
        seconds = self.run_seconds_for.get(prompt_id, self.run_seconds)
        if self.wait_for_socket:
            deadline = time.monotonic() + GATE_LIMIT
            while client not in self._sockets and time.monotonic() < deadline:
                if not self._pause(0.01, prompt_id, generation):
                    return self._ended(item, generation, messages, sampler)
        if sampler:
            self._send(client, "executing", {"node": sampler, "prompt_id": prompt_id})
        for step in range(1, steps + 1):
            if not self._pause(seconds / steps, prompt_id, generation):
                return self._ended(item, generation, messages, sampler)
            if sampler:
                progress = {"value": step, "max": steps, "prompt_id": prompt_id, "node": sampler}
                self._send(client, "progress", progress)
        deadline = time.monotonic() + GATE_LIMIT
        while not self.gate.wait(0.02):
            if time.monotonic() > deadline or not self._live(prompt_id, generation):
                return self._ended(item, generation, messages, sampler)
        failure = self.failures.get(prompt_id)
        if failure is not None:
            error = {
                "prompt_id": prompt_id,
                "node_id": sampler or next(iter(prompt)),
                "node_type": "KSampler" if sampler else prompt[next(iter(prompt))]["class_type"],
                "executed": [],
                "exception_message": failure,
                "exception_type": "RuntimeError",
                "traceback": ["Traceback (most recent call last):\n", f"RuntimeError: {failure}"],
                "current_inputs": {},
                "current_outputs": {},
                "timestamp": _ms(),
            }
            self._send(client, "execution_error", error)
            messages.append(["execution_error", error])
            return self._finish(item, generation, {}, "error", messages)
        with self._lock:  # a restart between here and the history loses the run, as in life
            if not self._live(prompt_id, generation):
                return self._ended(item, generation, messages, sampler)
            written = self._save(prompt_id, prompt, outputs)
        for node_id, output in written.items():
            executed = {"node": node_id, "output": output, "prompt_id": prompt_id}
            self._send(client, "executed", executed)
        success = {"prompt_id": prompt_id, "timestamp": _ms()}
        self._send(client, "executing", {"node": None, "prompt_id": prompt_id})
        self._send(client, "execution_success", success)
        messages.append(["execution_success", success])
        return self._finish(item, generation, written, "success", messages)

    def _save(self, prompt_id: str, prompt: dict[str, Any], outputs: list[str]) -> dict:
        written: dict[str, Any] = {}
        text = json.dumps(prompt, ensure_ascii=True, sort_keys=True)
        for node_id in outputs:
            node = prompt[node_id]
            if node["class_type"] != "SaveImage":
                continue
            prefix = os.path.normpath(str(node["inputs"].get("filename_prefix", "ComfyUI")))
            subfolder, base = os.path.dirname(prefix), os.path.basename(prefix)
            folder = self.output_dir / subfolder
            folder.mkdir(parents=True, exist_ok=True)
            counter = _next_counter(folder, base)
            filename = f"{base}_{counter:05}_.png"
            data = png(f"{prompt_id}:{text}".encode(), {"prompt": text})
            (folder / filename).write_bytes(data)
            images = [{"filename": filename, "subfolder": subfolder, "type": "output"}]
            written[node_id] = {"images": images}
        return written

    def _ended(
        self, item: list[Any], generation: int, messages: list[Any], sampler: str | None
    ) -> None:
        """A run that stopped early: lost in a restart (no trace), interrupted (history
        says so), or held at the gate past its limit (a runtime error, so a test that
        forgot to open the gate fails with a message rather than hanging)."""
        prompt_id = item[1]
        with self._lock:
            if self._generation != generation or self._stopping:
                return None
            interrupted = prompt_id in self._interrupts
        data: dict[str, Any] = {
            "prompt_id": prompt_id,
            "node_id": sampler,
            "node_type": "KSampler" if sampler else None,
            "executed": [],
            "timestamp": _ms(),
        }
        if interrupted:
            kind = "execution_interrupted"
        else:
            kind = "execution_error"
            data["exception_type"] = "TimeoutError"
            data["exception_message"] = f"the test held the gate over {GATE_LIMIT} s"
        self._send(item[3].get("client_id"), kind, data)
        messages.append([kind, data])
        return self._finish(item, generation, {}, "error", messages)

    def _finish(
        self,
        item: list[Any],
        generation: int,
        outputs: dict[str, Any],
        status: str,
        messages: list[Any],
    ) -> None:
        prompt_id = item[1]
        with self._lock:
            if self._generation != generation:
                return  # ComfyUI restarted meanwhile: the run left no trace but its files
            self._running.pop(prompt_id, None)
            self._interrupts.discard(prompt_id)
            self._history[prompt_id] = {  # the same id again overwrites the record
                "prompt": item,
                "outputs": outputs,
                "status": {
                    "status_str": status,
                    "completed": status == "success",
                    "messages": messages,
                },
                "meta": {
                    node_id: {"node_id": node_id, "display_node": node_id, "parent_node": None}
                    for node_id in outputs
                },
            }
            self._lock.notify_all()

    # -- the websocket --------------------------------------------------------------------

    def _send(self, client_id: str | None, kind: str, data: dict[str, Any]) -> None:
        with self._lock:
            target = self._sockets.get(client_id) if client_id else None
        if target is not None:
            target.outbox.put(json.dumps({"type": kind, "data": data}).encode())

    def _drop_sockets(self) -> None:
        with self._lock:
            sockets, self._sockets = list(self._sockets.values()), {}
        for sock in sockets:
            sock.close()


def validate(
    prompt: dict[str, Any], *, input_file: Any = None
) -> tuple[dict | None, list[str], dict[str, Any]]:
    """ComfyUI's ``validate_prompt``: (the error or None, the outputs to run, node_errors).
    ``input_file(name)``: the input folder's file of that name, or None."""
    for node_id, node in prompt.items():
        if not isinstance(node, dict) or "class_type" not in node:
            return (
                {
                    "type": "invalid_prompt",
                    "message": "Cannot execute because a node is missing the class_type property.",
                    "details": f"Node ID '#{node_id}'",
                    "extra_info": {},
                },
                [],
                {},
            )
        if node["class_type"] not in NODES:
            return (
                {
                    "type": "invalid_prompt",
                    "message": f"Cannot execute because node {node['class_type']} does not exist.",
                    "details": f"Node ID '#{node_id}'",
                    "extra_info": {},
                },
                [],
                {},
            )
    outputs = [n for n, node in prompt.items() if NODES[node["class_type"]].get("output")]
    if not outputs:
        return (
            {
                "type": "prompt_no_outputs",
                "message": "Prompt has no outputs",
                "details": "",
                "extra_info": {},
            },
            [],
            {},
        )
    node_errors: dict[str, Any] = {}
    good = []
    for output in outputs:
        bad = False
        for node_id in _ancestors(prompt, output):
            errors = _input_errors(prompt, node_id, input_file)
            if errors:
                bad = True
                entry = node_errors.setdefault(
                    node_id,
                    {
                        "errors": errors,
                        "dependent_outputs": [],
                        "class_type": prompt[node_id]["class_type"],
                    },
                )
                entry["dependent_outputs"].append(output)
        if not bad:
            good.append(output)
    if not good:
        return (
            {
                "type": "prompt_outputs_failed_validation",
                "message": "Prompt outputs failed validation",
                "details": "",
                "extra_info": {},
            },
            [],
            node_errors,
        )
    return None, good, node_errors


def _ancestors(prompt: dict[str, Any], node_id: str) -> list[str]:
    seen: list[str] = []
    todo = [node_id]
    while todo:
        current = todo.pop()
        if current in seen or current not in prompt:
            continue
        seen.append(current)
        for value in (prompt[current].get("inputs") or {}).values():
            if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
                todo.append(value[0])
    return seen


def _input_errors(prompt: dict[str, Any], node_id: str, input_file: Any) -> list[dict[str, Any]]:
    node = prompt[node_id]
    inputs = node.get("inputs") or {}
    errors = []
    for name, kind in NODES[node["class_type"]]["inputs"].items():
        info = {"input_name": name}
        if name not in inputs:
            errors.append(_error("required_input_missing", "Required input is missing", name))
            continue
        value = inputs[name]
        if kind == INPUT_FILE:
            found = input_file(value) if input_file and isinstance(value, str) else None
            if found is None:
                errors.append(
                    {
                        "type": "custom_validation_failed",
                        "message": "Custom validation failed for node",
                        "details": f"{name} - Invalid image file: {value}",
                        "extra_info": info,
                    }
                )
            continue
        if isinstance(kind, str) and kind.isupper() and kind != "STRING":  # a link
            if not (isinstance(value, list) and len(value) == 2 and value[0] in prompt):
                errors.append(
                    _error("bad_linked_input", "Bad linked input, must be a length-2 list", name)
                )
            continue
        if kind == "STRING":
            if not isinstance(value, str):
                value = str(value)
            continue
        if kind[0] in ("INT", "FLOAT"):
            try:
                number = int(value) if kind[0] == "INT" else float(value)
            except (TypeError, ValueError) as exc:
                errors.append(
                    {
                        "type": "invalid_input_type",
                        "message": f"Failed to convert an input value to a {kind[0]} value",
                        "details": f"{name}, {value}, {exc}",
                        "extra_info": {**info, "received_value": value},
                    }
                )
                continue
            if number < kind[1]:
                errors.append(
                    _error(
                        "value_smaller_than_min",
                        f"Value {number} smaller than min of {kind[1]}",
                        f"{name}",
                    )
                )
            elif number > kind[2]:
                errors.append(
                    _error(
                        "value_bigger_than_max",
                        f"Value {number} bigger than max of {kind[2]}",
                        f"{name}",
                    )
                )
            continue
        if value not in kind:
            errors.append(
                {
                    "type": "value_not_in_list",
                    "message": "Value not in list",
                    "details": f"{name}: '{value}' not in {list(kind)}",
                    "extra_info": {**info, "received_value": value},
                }
            )
    return errors


def _error(kind: str, message: str, name: str) -> dict[str, Any]:
    return {"type": kind, "message": message, "details": name, "extra_info": {"input_name": name}}


def _next_counter(folder: Path, base: str) -> int:
    """ComfyUI's ``get_save_image_path``: one past the highest ``<base>_NNNNN_`` in use."""
    used = []
    for path in folder.glob(f"{base}_*_.png"):
        middle = path.name[len(base) + 1 : -len("_.png")]
        if middle.isdigit():
            used.append(int(middle))
    return max(used, default=0) + 1


def _ms() -> int:
    return int(time.time() * 1000)


class _Socket:
    """One websocket client: frames from ``outbox`` go out; a close or EOF ends it."""

    def __init__(self, connection: socket.socket):
        self.connection = connection
        self.outbox: queue.Queue[bytes | None] = queue.Queue()

    def close(self) -> None:
        self.outbox.put(None)

    def serve(self) -> None:
        while True:
            readable, _, _ = select.select([self.connection], [], [], 0.02)
            if readable:
                head = self.connection.recv(2)
                if len(head) < 2 or head[0] & 0x0F == 0x8:
                    return
                self._skip(head)
            try:
                data = self.outbox.get_nowait()
            except queue.Empty:
                continue
            if data is None:
                return
            size = len(data)
            if size < 126:
                head = struct.pack("!BB", 0x81, size)
            elif size < 2**16:
                head = struct.pack("!BBH", 0x81, 126, size)
            else:
                head = struct.pack("!BBQ", 0x81, 127, size)
            self.connection.sendall(head + data)

    def _skip(self, head: bytes) -> None:
        """Read the rest of a client frame (a pong, or text the server ignores)."""
        length = head[1] & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", self._exactly(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", self._exactly(8))
        self._exactly(length + (4 if head[1] & 0x80 else 0))

    def _exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            piece = self.connection.recv(size - len(data))
            if not piece:
                raise EOFError
            data += piece
        return data


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fake: FakeComfyUI

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        fake.requests.append(("GET", parts.path))
        fake.authorizations.append(self.headers.get("Authorization"))
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/ws":
            return self._websocket(query.get("clientId") or str(uuid.uuid4()))
        if parts.path == "/system_stats":
            return self._json(200, _system_stats())
        if parts.path == "/queue":
            return self._json(200, fake.queue_answer())
        if parts.path == "/history":
            return self._json(200, fake.history_answer(None))
        if parts.path.startswith("/history/"):
            return self._json(200, fake.history_answer(parts.path.removeprefix("/history/")))
        if parts.path == "/view":
            status, data = fake.view(query)
            if data is None:
                return self._send(status, b"", "text/plain")
            return self._send(200, data, "image/png")
        return self._send(404, b"404: Not Found", "text/plain")

    def do_POST(self) -> None:
        fake = self.fake
        path = urlsplit(self.path).path
        fake.requests.append(("POST", path))
        fake.authorizations.append(self.headers.get("Authorization"))
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path == "/upload/image":
            parts = form_parts(self.headers.get("Content-Type", ""), raw)
            status, answer = fake.upload_image(parts)
            if answer is None:
                return self._send(status, b"", "text/plain")
            return self._json(status, answer)
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = None
        if path == "/prompt":
            fake.posts.append(body if body is not None else raw.decode("utf-8", "replace"))
            status, answer = (500, None) if body is None else fake.post_prompt(body)
            if status == 500:  # aiohttp's answer to an exception in a handler
                text = b"500 Internal Server Error\n\nServer got itself in trouble"
                return self._send(500, text, "text/plain; charset=utf-8")
            return self._json(status, answer)
        if path == "/queue":
            fake.queue_change(body)
            return self._send(200, b"", "text/plain")
        if path == "/interrupt":
            fake.interrupt(body)
            return self._send(200, b"", "text/plain")
        return self._send(405, b"405: Method Not Allowed", "text/plain")

    def _json(self, status: int, body: Any) -> None:
        self._send(status, json.dumps(body).encode(), "application/json; charset=utf-8")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.close_connection = True
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _websocket(self, client_id: str) -> None:
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.close_connection = True
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        sock = _Socket(self.connection)
        with self.fake._lock:
            old = self.fake._sockets.pop(client_id, None)
            self.fake._sockets[client_id] = sock
            remaining = len(self.fake._pending) + len(self.fake._running)
        if old is not None:
            old.close()
        status = {"status": {"exec_info": {"queue_remaining": remaining}}, "sid": client_id}
        sock.outbox.put(json.dumps({"type": "status", "data": status}).encode())
        with contextlib.suppress(OSError, EOFError):
            sock.serve()
        with self.fake._lock:
            if self.fake._sockets.get(client_id) is sock:
                del self.fake._sockets[client_id]


def _system_stats() -> dict[str, Any]:
    return {
        "system": {
            "os": "posix",
            "ram_total": 8 * 2**30,
            "ram_free": 4 * 2**30,
            "comfyui_version": VERSION,
            "python_version": "3.12.3",
            "pytorch_version": "2.8.0+cpu",
            "embedded_python": False,
            "argv": ["main.py", "--cpu"],
        },
        "devices": [
            {
                "name": "cpu",
                "type": "cpu",
                "index": None,
                "vram_total": 8 * 2**30,
                "vram_free": 4 * 2**30,
                "torch_vram_total": 0,
                "torch_vram_free": 0,
            }
        ],
    }


@pytest.fixture
def comfyui(tmp_path) -> Iterator[FakeComfyUI]:
    """A running fake ComfyUI (``comfyui.url``) writing into ``tmp_path / "comfyui-output"``."""
    server = FakeComfyUI(tmp_path / "comfyui-output")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def reference_workflow(workflow: dict[str, Any], *, character: str) -> dict[str, Any]:
    """An image-to-image variant of an SD-1.5 text-to-image workflow (core nodes only): the
    reference picture (``{{reference_image}}``, a LoadImage) encoded as the sampler's latent,
    denoised at 0.6, with ``character``'s own seed (``{{seed:<character>}}``)."""
    flow = json.loads(json.dumps(workflow))
    flow["10"] = {"class_type": "LoadImage", "inputs": {"image": "{{reference_image}}"}}
    flow["11"] = {"class_type": "VAEEncode", "inputs": {"pixels": ["10", 0], "vae": ["4", 2]}}
    sampler = flow["3"]["inputs"]
    sampler.update(latent_image=["11", 0], denoise=0.6, seed="{{seed:" + character + "}}")
    return flow
