"""The loopback ComfyUI behaves as issue 28 observed ComfyUI 0.3.64 to behave: the crash
tests of the ComfyUI backend are only as good as this server's likeness."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from jaiweb.render.backends.comfyui import BUNDLED_WORKFLOW
from tests.support.comfyui_server import comfyui as comfyui  # the fixture
from tests.support.waiting import wait_until

WAIT = 10.0
HTTP = httpx.Client(timeout=5.0)  # one client: each new one builds its TLS context again


def workflow(prefix: str = "jaiweb/x") -> dict:
    text = BUNDLED_WORKFLOW.read_text()
    for name, value in {
        '"{{checkpoint}}"': '"v1-5-pruned-emaonly.safetensors"',
        '"{{prompt}}"': '"a pig"',
        '"{{negative_prompt}}"': '"blurry"',
        '"{{seed}}"': "7",
        '"{{width}}"': "512",
        '"{{height}}"': "512",
    }.items():
        text = text.replace(name, value)
    flow = json.loads(text)
    flow["9"]["inputs"]["filename_prefix"] = prefix
    return flow


def queue(server, prompt_id: str, flow: dict | None = None) -> httpx.Response:
    body = {"prompt": flow or workflow(f"jaiweb/{prompt_id}"), "prompt_id": prompt_id}
    return HTTP.post(f"{server.url}/prompt", json={**body, "client_id": "test"})


def history(server, prompt_id: str) -> dict:
    return HTTP.get(f"{server.url}/history/{prompt_id}").json()


def done(server, prompt_id: str) -> dict:
    return wait_until(lambda: history(server, prompt_id), WAIT, f"{prompt_id} in history")


def test_a_client_prompt_id_is_used_and_history_is_empty_until_the_run_ends(comfyui):
    comfyui.gate.clear()
    prompt_id = str(uuid.uuid4())
    answer = queue(comfyui, prompt_id)
    assert answer.status_code == 200
    assert answer.json() == {"prompt_id": prompt_id, "number": 0, "node_errors": {}}
    wait_until(lambda: prompt_id in comfyui.running_ids(), WAIT, "the run to start")
    assert history(comfyui, prompt_id) == {}
    running = HTTP.get(f"{comfyui.url}/queue").json()
    assert [item[1] for item in running["queue_running"]] == [prompt_id]
    assert running["queue_pending"] == []
    comfyui.gate.set()
    record = done(comfyui, prompt_id)[prompt_id]
    assert record["status"]["status_str"] == "success" and record["status"]["completed"]
    assert record["outputs"] == {
        "9": {
            "images": [
                {"filename": f"{prompt_id}_00001_.png", "subfolder": "jaiweb", "type": "output"}
            ]
        }
    }
    view = HTTP.get(
        f"{comfyui.url}/view",
        params={"filename": f"{prompt_id}_00001_.png", "subfolder": "jaiweb", "type": "output"},
    )
    assert view.status_code == 200 and view.content.startswith(b"\x89PNG\r\n\x1a\n")


def test_the_same_prompt_id_twice_runs_twice_and_the_second_overwrites_history(comfyui):
    prompt_id = str(uuid.uuid4())
    assert queue(comfyui, prompt_id).status_code == 200
    done(comfyui, prompt_id)
    assert queue(comfyui, prompt_id).status_code == 200
    wait_until(lambda: comfyui.executions[prompt_id] == 2, WAIT, "the second run")
    wait_until(
        lambda: "_00002_" in json.dumps(history(comfyui, prompt_id)), WAIT, "the second record"
    )
    assert [p.name for p in comfyui.output_files()] == [
        f"{prompt_id}_00001_.png",
        f"{prompt_id}_00002_.png",
    ]


def test_a_bad_workflow_gets_a_400_with_node_errors_and_never_reaches_history(comfyui):
    flow = workflow()
    flow["4"]["inputs"]["ckpt_name"] = "missing.safetensors"
    flow["3"]["inputs"]["seed"] = "{{seed}}"
    prompt_id = str(uuid.uuid4())
    answer = queue(comfyui, prompt_id, flow)
    assert answer.status_code == 400
    body = answer.json()
    assert body["error"]["type"] == "prompt_outputs_failed_validation"
    assert body["node_errors"]["4"]["class_type"] == "CheckpointLoaderSimple"
    assert body["node_errors"]["4"]["errors"][0]["type"] == "value_not_in_list"
    assert body["node_errors"]["3"]["errors"][0]["type"] == "invalid_input_type"
    assert body["node_errors"]["3"]["dependent_outputs"] == ["9"]
    del flow["9"]
    answer = queue(comfyui, prompt_id, flow)
    assert answer.status_code == 400 and answer.json()["error"]["type"] == "prompt_no_outputs"
    assert history(comfyui, prompt_id) == {} and comfyui.executions == {}
    assert HTTP.get(f"{comfyui.url}/queue").json() == {"queue_running": [], "queue_pending": []}


def test_malformed_json_gets_a_plain_text_500(comfyui):
    answer = HTTP.post(
        f"{comfyui.url}/prompt", content=b'{"prompt": ', headers={"content-type": "text/json"}
    )
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("text/plain")
    assert "500 Internal Server Error" in answer.text


def test_a_runtime_failure_is_an_error_record_with_the_exception(comfyui):
    prompt_id = str(uuid.uuid4())
    comfyui.failures[prompt_id] = "mat1 and mat2 shapes cannot be multiplied"
    queue(comfyui, prompt_id)
    status = done(comfyui, prompt_id)[prompt_id]["status"]
    assert status["status_str"] == "error" and status["completed"] is False
    kind, data = status["messages"][-1]
    assert kind == "execution_error"
    assert data["exception_message"] == "mat1 and mat2 shapes cannot be multiplied"
    assert comfyui.output_files() == []


def test_a_pending_prompt_can_be_deleted_from_the_queue(comfyui):
    comfyui.gate.clear()
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    queue(comfyui, first)
    queue(comfyui, second)
    wait_until(lambda: first in comfyui.running_ids(), WAIT, "the first run")
    assert comfyui.pending_ids() == [second]
    HTTP.post(f"{comfyui.url}/queue", json={"delete": [second]})
    assert comfyui.pending_ids() == []
    comfyui.gate.set()
    done(comfyui, first)
    assert second not in comfyui.executions


def test_a_restart_loses_history_and_queue_but_not_the_output_folder(comfyui):
    finished, running, pending = (str(uuid.uuid4()) for _ in range(3))
    queue(comfyui, finished)
    done(comfyui, finished)
    comfyui.gate.clear()
    queue(comfyui, running)
    queue(comfyui, pending)
    wait_until(lambda: running in comfyui.running_ids(), WAIT, "the run")
    comfyui.restart()
    comfyui.gate.set()
    assert history(comfyui, finished) == {}
    assert HTTP.get(f"{comfyui.url}/history").json() == {}
    assert HTTP.get(f"{comfyui.url}/queue").json() == {"queue_running": [], "queue_pending": []}
    assert [p.name for p in comfyui.output_files()] == [f"{finished}_00001_.png"]
    # the worker is free again: a new prompt runs, and the lost ones left no record behind
    after = str(uuid.uuid4())
    queue(comfyui, after)
    done(comfyui, after)
    assert history(comfyui, running) == {} and pending not in comfyui.executions


@pytest.mark.parametrize(
    "params, status",
    [
        ({"filename": "nothing_00001_.png", "subfolder": "jaiweb", "type": "output"}, 404),
        ({"filename": "../secret.png", "subfolder": "jaiweb", "type": "output"}, 400),
        ({"filename": "x.png", "subfolder": "../..", "type": "output"}, 403),
    ],
)
def test_view_refuses_what_is_missing_or_outside_the_output_folder(comfyui, params, status):
    assert HTTP.get(f"{comfyui.url}/view", params=params).status_code == status


def test_system_stats_names_the_version(comfyui):
    stats = HTTP.get(f"{comfyui.url}/system_stats").json()
    assert stats["system"]["comfyui_version"] == "0.3.64"
