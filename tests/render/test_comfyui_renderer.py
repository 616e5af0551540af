"""The ComfyUI backend against a loopback ComfyUI (tests/support/comfyui_server.py): the
workflow it sends, ComfyUI's refusals and failures, and the reconciliation that never queues
a second render of a prompt that ran, across restarts of ComfyUI and of ourselves."""

from __future__ import annotations

import base64
import json
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from django.core.exceptions import ImproperlyConfigured

from jaiweb.render.backends.comfyui import (
    ComfyUIError,
    ComfyUIRenderer,
    ComfyUIUnreachable,
    output_filename,
    prompt_id_for,
    workflow_fill,
)
from tests.support.comfyui_server import comfyui as comfyui  # the fixture
from tests.support.waiting import wait_until

PARAMS = {
    "prompt": "Pig-Man eats a lollipop in the ring",
    "characters": {"Pig-Man": {"buff": "super lollipop", "skill": "slap", "mood": "proud"}},
}
WAIT = 10.0


def renderer(server, **kwargs) -> ComfyUIRenderer:
    kwargs.setdefault("poll_seconds", 0.02)
    kwargs.setdefault("timeout_seconds", 20.0)
    return ComfyUIRenderer(url=server.url, **kwargs)


def server_file(server, key: str, counter: int = 1) -> bytes:
    name = output_filename(prompt_id_for(key)).replace("_00001_", f"_{counter:05}_")
    return (server.output_dir / "jaiweb" / name).read_bytes()


def prompt_posts(server) -> int:
    return server.requests.count(("POST", "/prompt"))


@dataclass
class Background:
    """A render in a thread of its own (as a runner's worker does it)."""

    thread: threading.Thread
    outcome: dict[str, Any] = field(default_factory=dict)

    def result(self):
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the render did not end"
        if "error" in self.outcome:
            raise self.outcome["error"]
        return self.outcome["image"]


def in_background(render: ComfyUIRenderer, key: str, params=PARAMS, **kwargs) -> Background:
    outcome: dict[str, Any] = {}

    def run():
        try:
            outcome["image"] = render.render(params, key=key, **kwargs)
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return Background(thread, outcome)


# --- what is sent, and what comes back ----------------------------------------------------


def test_the_filled_workflow_is_queued_under_the_keys_prompt_id_and_its_png_returned(comfyui):
    calls = []
    image = renderer(comfyui, checkpoint="dreamshaper_8.safetensors").render(
        {**PARAMS, "seed": 1234, "width": 640, "height": 384},
        key="call-1",
        progress=lambda value, most: calls.append((value, most)),
    )
    [body] = comfyui.accepted
    prompt_id = prompt_id_for("call-1")
    assert body["prompt_id"] == prompt_id and body["client_id"]
    workflow = body["prompt"]
    assert workflow["3"]["inputs"]["seed"] == 1234
    assert (workflow["5"]["inputs"]["width"], workflow["5"]["inputs"]["height"]) == (640, 384)
    assert workflow["4"]["inputs"]["ckpt_name"] == "dreamshaper_8.safetensors"
    assert "Pig-Man eats a lollipop in the ring" in workflow["6"]["inputs"]["text"]
    assert "super lollipop, slap, proud" in workflow["6"]["inputs"]["text"]
    assert workflow["9"]["inputs"]["filename_prefix"] == f"jaiweb/{prompt_id}"
    assert not any("{{" in json.dumps(node) for node in workflow.values())
    # the stored image is the server's bytes, in the file the prompt id names
    assert image.data == server_file(comfyui, "call-1")
    assert (image.content_type, image.extension) == ("image/png", "png")
    assert comfyui.executions == {prompt_id: 1}
    assert calls  # the caller's lease is renewed while ComfyUI answers


def test_progress_carries_the_samplers_steps_from_the_websocket(comfyui):
    comfyui.wait_for_socket = True  # the run starts once our socket listens
    comfyui.run_seconds = 0.4
    calls = []
    renderer(comfyui).render(PARAMS, key="steps", progress=lambda v, m: calls.append((v, m)))
    assert calls[0] == (0, 0)  # queued: no step yet
    steps = [value for value, most in calls if most == 20]  # the bundled workflow's steps
    assert steps and steps == sorted(steps) and all(1 <= v <= 20 for v in steps)


def test_different_keys_give_different_pictures(comfyui):
    render = renderer(comfyui)
    assert render.render(PARAMS, key="a").data != render.render(PARAMS, key="b").data


# --- ComfyUI says no --------------------------------------------------------------------


def test_node_errors_are_a_clear_error_and_nothing_runs(comfyui):
    render = renderer(comfyui, checkpoint="not-on-this-box.safetensors")
    with pytest.raises(ComfyUIError) as refused:
        render.render(PARAMS, key="bad-checkpoint")
    said = str(refused.value)
    assert f"ComfyUI at {comfyui.url} refused the workflow" in said
    assert "prompt_outputs_failed_validation" in said
    assert "node 4 (CheckpointLoaderSimple): Value not in list" in said
    assert "not-on-this-box.safetensors" in said
    assert comfyui.executions == {} and comfyui.history_of(prompt_id_for("bad-checkpoint")) is None


def test_an_unknown_node_is_a_clear_error(comfyui, tmp_path):
    workflow = json.loads(renderer(comfyui).workflow_path.read_text())
    workflow["11"] = {"class_type": "LoraLoaderPlus", "inputs": {"model": ["4", 0]}}
    path = tmp_path / "with-lora.json"
    path.write_text(json.dumps(workflow))
    with pytest.raises(ComfyUIError, match=r"invalid_prompt.*LoraLoaderPlus does not exist"):
        renderer(comfyui, workflow_path=path).render(PARAMS, key="lora")
    assert comfyui.executions == {}


def test_a_plain_text_500_is_a_clear_error(comfyui):
    comfyui.crash_on_prompt = True
    with pytest.raises(ComfyUIError) as failed:
        renderer(comfyui).render(PARAMS, key="crash")
    assert "answered 500 to POST /prompt" in str(failed.value)
    assert "Server got itself in trouble" in str(failed.value)
    assert comfyui.executions == {}


def test_a_runtime_error_is_a_clear_error_and_is_not_run_again(comfyui):
    prompt_id = prompt_id_for("oom")
    comfyui.failures[prompt_id] = "CUDA out of memory. Tried to allocate 2.00 GiB"
    with pytest.raises(ComfyUIError) as failed:
        renderer(comfyui).render(PARAMS, key="oom")
    said = str(failed.value)
    assert f"failed prompt {prompt_id} in node 3 (KSampler)" in said
    assert "RuntimeError: CUDA out of memory" in said
    # asked again (a retry after a crash of ours): ComfyUI's history answers, nothing runs
    with pytest.raises(ComfyUIError, match="CUDA out of memory"):
        renderer(comfyui).render(PARAMS, key="oom")
    assert comfyui.executions == {prompt_id: 1} and prompt_posts(comfyui) == 1


def test_an_interrupted_prompt_is_a_clear_error(comfyui):
    comfyui.gate.clear()
    prompt_id = prompt_id_for("cancelled")
    job = in_background(renderer(comfyui), "cancelled")
    wait_until(lambda: prompt_id in comfyui.running_ids(), WAIT, "the prompt to run")
    httpx.post(f"{comfyui.url}/interrupt", json={"prompt_id": prompt_id})
    with pytest.raises(ComfyUIError, match=f"interrupted prompt {prompt_id}"):
        job.result()


def test_an_unreachable_comfyui_is_a_clear_error_and_probe_says_why(comfyui):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}"
    render = ComfyUIRenderer(url=url, poll_seconds=0.02)
    with pytest.raises(ComfyUIUnreachable, match=f"ComfyUI at {url} is unreachable"):
        render.render(PARAMS, key="nowhere")
    assert f"ComfyUI at {url} is unreachable" in render.probe()
    assert renderer(comfyui).probe() is None


def test_a_comfyui_that_picks_its_own_prompt_ids_is_refused_and_its_prompt_dropped(comfyui):
    comfyui.gate.clear()
    holder = in_background(renderer(comfyui), "holder")  # keeps the one worker busy
    wait_until(comfyui.running_ids, WAIT, "the first prompt to run")
    # Only now does the server pick its own ids: a holder refused as well could drop its
    # prompt before the worker took it, and nothing would ever run.
    comfyui.honour_prompt_id = False
    with pytest.raises(ComfyUIError, match="too old"):
        renderer(comfyui).render(PARAMS, key="old")
    assert comfyui.pending_ids() == []  # the prompt it queued under its own id is gone
    comfyui.gate.set()
    holder.result()


def test_a_render_that_outlasts_the_timeout_fails_and_leaves_the_queue(comfyui):
    comfyui.gate.clear()
    holder = in_background(renderer(comfyui), "holder")
    wait_until(comfyui.running_ids, WAIT, "the first prompt to run")
    with pytest.raises(ComfyUIError, match=r"did not finish prompt .* within 0\.3 s"):
        renderer(comfyui, timeout_seconds=0.3).render(PARAMS, key="slow")
    assert prompt_id_for("slow") not in comfyui.pending_ids()
    comfyui.gate.set()
    holder.result()
    assert prompt_id_for("slow") not in comfyui.executions


def test_a_comfyui_that_stays_down_mid_render_is_a_clear_error(comfyui):
    comfyui.gate.clear()
    prompt_id = prompt_id_for("outage")
    job = in_background(renderer(comfyui, outage_seconds=0.3), "outage")
    wait_until(lambda: prompt_id in comfyui.running_ids(), WAIT, "the prompt to run")
    comfyui.down()
    with pytest.raises(ComfyUIUnreachable, match=rf"unreachable .* prompt {prompt_id}"):
        job.result()
    comfyui.up()


# --- reconciliation: one execution per prompt that ran ----------------------------------


def test_the_same_key_twice_executes_once(comfyui):
    first = renderer(comfyui).render(PARAMS, key="twice")
    second = renderer(comfyui).render(PARAMS, key="twice")  # a new process, the same call
    assert second.data == first.data
    assert comfyui.executions == {prompt_id_for("twice"): 1}
    assert prompt_posts(comfyui) == 1


def test_a_prompt_found_queued_or_running_is_waited_for_not_queued_again(comfyui):
    """A crash of ours after POST /prompt: the recovering render finds the prompt in the
    queue (pending behind another, then running) and waits for it."""
    comfyui.gate.clear()
    holder = in_background(renderer(comfyui), "holder")
    wait_until(comfyui.running_ids, WAIT, "the first prompt to run")
    render = renderer(comfyui)
    prompt_id = prompt_id_for("crashed")
    workflow = workflow_fill(
        render.workflow, prompt_id=prompt_id, values=render.values(PARAMS, key="crashed")
    )
    httpx.post(  # what the crashed process had sent
        f"{comfyui.url}/prompt",
        json={"prompt": workflow, "prompt_id": prompt_id, "client_id": "gone"},
    ).raise_for_status()
    assert comfyui.pending_ids() == [prompt_id]
    calls = []
    job = in_background(render, "crashed", progress=lambda v, m: calls.append((v, m)))
    wait_until(lambda: len(calls) >= 2, WAIT, "the recovering render to wait and say so")
    comfyui.gate.set()
    image = job.result()
    holder.result()
    assert image.data == server_file(comfyui, "crashed")
    assert comfyui.executions[prompt_id] == 1
    assert [p["prompt_id"] for p in comfyui.posts] == [prompt_id_for("holder"), prompt_id]


def test_a_restart_that_loses_the_running_prompt_queues_it_again_under_the_same_id(comfyui):
    comfyui.gate.clear()
    prompt_id = prompt_id_for("lost")
    job = in_background(renderer(comfyui), "lost")
    wait_until(lambda: prompt_id in comfyui.running_ids(), WAIT, "the prompt to run")
    comfyui.restart()  # history and queue gone, nothing written
    comfyui.gate.set()
    image = job.result()
    assert image.data == server_file(comfyui, "lost")
    assert comfyui.executions == {prompt_id: 2}
    assert [p["prompt_id"] for p in comfyui.accepted] == [prompt_id, prompt_id]


def test_a_restart_with_downtime_while_waiting_ends_in_one_picture(comfyui):
    comfyui.gate.clear()
    prompt_id = prompt_id_for("downtime")
    job = in_background(renderer(comfyui), "downtime")
    wait_until(lambda: prompt_id in comfyui.running_ids(), WAIT, "the prompt to run")
    comfyui.down()
    comfyui.restart()
    comfyui.up()
    comfyui.gate.set()
    assert job.result().data == server_file(comfyui, "downtime")
    assert comfyui.executions == {prompt_id: 2}
    assert len(comfyui.output_files()) == 1


def test_after_a_restart_a_finished_prompts_file_is_taken_and_nothing_runs(comfyui):
    first = renderer(comfyui).render(PARAMS, key="done")
    comfyui.restart()  # its history is gone; its file in output/ is not
    posts = prompt_posts(comfyui)
    again = renderer(comfyui).render(PARAMS, key="done")
    assert again.data == first.data == server_file(comfyui, "done")
    assert comfyui.executions == {prompt_id_for("done"): 1}
    assert prompt_posts(comfyui) == posts
    assert ("GET", "/queue") in comfyui.requests  # asked in order: history, queue, file


def test_a_restart_that_lost_the_output_too_renders_again_once(comfyui):
    renderer(comfyui).render(PARAMS, key="wiped")
    comfyui.restart(lose_outputs=True)  # no evidence left: nothing of it survived
    image = renderer(comfyui).render(PARAMS, key="wiped")
    assert image.data == server_file(comfyui, "wiped")
    assert comfyui.executions == {prompt_id_for("wiped"): 2}


def test_a_finished_prompt_whose_file_was_deleted_is_an_error_not_a_second_render(comfyui):
    renderer(comfyui).render(PARAMS, key="deleted")
    for path in comfyui.output_files():
        path.unlink()
    with pytest.raises(ComfyUIError, match="is gone from its output folder"):
        renderer(comfyui).render(PARAMS, key="deleted")
    assert comfyui.executions == {prompt_id_for("deleted"): 1}


# --- configuration ------------------------------------------------------------------------


def test_a_password_in_the_url_is_sent_as_basic_auth_and_never_shown(comfyui):
    url = comfyui.url.replace("http://", "http://artist:s%40cret@")
    render = ComfyUIRenderer(url=url, poll_seconds=0.02)
    assert "s@cret" not in render.describe() and "artist" not in render.describe()
    assert render.describe().startswith(f"Panels come from ComfyUI at {comfyui.url},")
    render.render(PARAMS, key="behind-a-proxy")
    expected = "Basic " + base64.b64encode(b"artist:s@cret").decode()
    assert comfyui.authorizations and set(comfyui.authorizations) == {expected}


def test_from_settings_builds_the_backend_and_names_a_bad_variable(settings, tmp_path):
    settings.JAIWEB_COMFYUI_URL = "http://gpu-box:8188"
    settings.JAIWEB_COMFYUI_WORKFLOW = None
    settings.JAIWEB_COMFYUI_CHECKPOINT = "dreamshaper_8.safetensors"
    render = ComfyUIRenderer.from_settings()
    assert (
        render.describe()
        == "Panels come from ComfyUI at http://gpu-box:8188, workflow sd15-default."
    )
    assert render.values(PARAMS, key="k")["checkpoint"] == "dreamshaper_8.safetensors"
    settings.JAIWEB_COMFYUI_WORKFLOW = str(tmp_path / "missing.json")
    with pytest.raises(ImproperlyConfigured, match=r"JAIWEB_COMFYUI_WORKFLOW: .*missing\.json"):
        ComfyUIRenderer.from_settings()
    settings.JAIWEB_COMFYUI_URL = None
    with pytest.raises(ImproperlyConfigured, match="JAIWEB_COMFYUI_URL must be set"):
        ComfyUIRenderer.from_settings()
    settings.JAIWEB_COMFYUI_URL = "gpu-box:8188"
    settings.JAIWEB_COMFYUI_WORKFLOW = None
    with pytest.raises(ImproperlyConfigured, match="JAIWEB_COMFYUI_URL: "):
        ComfyUIRenderer.from_settings()
