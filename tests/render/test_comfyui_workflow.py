"""The ComfyUI workflow: what start-up refuses (naming the file and the node), what the
placeholders are filled with, and the renderer's own configuration."""

from __future__ import annotations

import json
import uuid

import pytest

from jaiweb.render.backends.comfyui import (
    BUNDLED_WORKFLOW,
    DEFAULT_CHECKPOINT,
    ComfyUIRenderer,
    ComfyUIWorkflowError,
    prompt_id_for,
    workflow_check,
    workflow_fill,
)


def bundled() -> dict:
    return json.loads(BUNDLED_WORKFLOW.read_text(encoding="utf-8"))


def write(tmp_path, workflow, name="panel.json"):
    path = tmp_path / name
    path.write_text(workflow if isinstance(workflow, str) else json.dumps(workflow))
    return path


def test_the_bundled_workflow_is_an_api_format_sd15_text_to_image_one():
    workflow = bundled()
    assert workflow_check(BUNDLED_WORKFLOW) == []
    kinds = sorted(node["class_type"] for node in workflow.values())
    assert kinds == sorted(
        [
            "CheckpointLoaderSimple",
            "CLIPTextEncode",
            "CLIPTextEncode",
            "EmptyLatentImage",
            "KSampler",
            "VAEDecode",
            "SaveImage",
        ]
    )
    placeholders = {
        value
        for node in workflow.values()
        for value in node["inputs"].values()
        if isinstance(value, str) and value.startswith("{{")
    }
    assert placeholders == {
        "{{prompt}}",
        "{{negative_prompt}}",
        "{{seed}}",
        "{{width}}",
        "{{height}}",
        "{{checkpoint}}",
    }


def test_a_missing_workflow_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "nowhere.json"
    [problem] = workflow_check(path)
    assert str(path) in problem and "does not exist" in problem


def test_an_unreadable_workflow_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    [problem] = workflow_check(path)
    assert str(path) in problem and "cannot be read" in problem


def test_a_workflow_that_is_not_json_is_refused_naming_the_file(tmp_path):
    path = write(tmp_path, '{"3": {"class_type": "KSampler",')
    [problem] = workflow_check(path)
    assert str(path) in problem and "not valid JSON" in problem


def test_a_ui_format_export_is_refused_with_how_to_export_it(tmp_path):
    path = write(
        tmp_path, {"last_node_id": 9, "nodes": [{"id": 3, "type": "KSampler"}], "links": []}
    )
    [problem] = workflow_check(path)
    assert str(path) in problem and "UI format" in problem
    assert "Save (API Format)" in problem


def test_a_workflow_without_a_save_image_node_is_refused(tmp_path):
    workflow = bundled()
    del workflow["9"]
    workflow["10"] = {"class_type": "PreviewImage", "inputs": {"images": ["8", 0]}}
    path = write(tmp_path, workflow)
    [problem] = workflow_check(path)
    assert str(path) in problem and "no SaveImage node" in problem


def test_an_unknown_placeholder_is_refused_naming_the_file_the_node_and_the_input(tmp_path):
    workflow = bundled()
    workflow["7"]["inputs"]["text"] = "{{negative}}"
    path = write(tmp_path, workflow)
    [problem] = workflow_check(path)
    assert str(path) in problem
    assert "node 7 (CLIPTextEncode, 'CLIP Text Encode (Negative Prompt)')" in problem
    assert "input 'text'" in problem and "unknown placeholder {{negative}}" in problem


def test_a_placeholder_inside_other_text_is_refused_since_it_would_never_be_filled(tmp_path):
    workflow = bundled()
    workflow["6"]["inputs"]["text"] = "masterpiece, {{prompt}}"
    path = write(tmp_path, workflow)
    problems = workflow_check(path)
    assert any(
        "node 6 (CLIPTextEncode" in p and "{{prompt}} is filled in only when" in p for p in problems
    ), problems


def test_a_workflow_that_never_takes_the_prompt_is_refused(tmp_path):
    workflow = bundled()
    workflow["6"]["inputs"]["text"] = "a pig in a ring"
    path = write(tmp_path, workflow)
    [problem] = workflow_check(path)
    assert str(path) in problem and "{{prompt}}" in problem


def test_a_node_without_class_type_is_refused_naming_it(tmp_path):
    workflow = bundled()
    workflow["5"] = {"inputs": {"width": 512}}
    path = write(tmp_path, workflow)
    [problem] = workflow_check(path)
    assert str(path) in problem and "node 5 has no class_type" in problem


def test_the_renderer_refuses_a_bad_workflow_at_construction_with_every_problem(tmp_path):
    workflow = bundled()
    del workflow["9"]
    workflow["3"]["inputs"]["seed"] = "{{lora:Pig-Man}}"
    path = write(tmp_path, workflow)
    with pytest.raises(ComfyUIWorkflowError) as refused:
        ComfyUIRenderer(url="http://127.0.0.1:8188", workflow_path=path)
    assert len(refused.value.problems) == 2
    assert all(str(path) in p for p in refused.value.problems)
    assert "node 3 (KSampler" in str(refused.value)


@pytest.mark.parametrize("url", ["", "127.0.0.1:8188", "ftp://host/", "http://"])
def test_the_renderer_refuses_a_url_that_is_not_http(url):
    with pytest.raises(ValueError, match="ComfyUI URL"):
        ComfyUIRenderer(url=url)


def test_describe_names_the_url_and_the_workflow(tmp_path):
    assert (
        ComfyUIRenderer(url="http://gpu-box:8188/").describe()
        == "Panels come from ComfyUI at http://gpu-box:8188, workflow sd15-default."
    )
    path = write(tmp_path, bundled(), name="my-lora-flow.json")
    renderer = ComfyUIRenderer(url="http://gpu-box:8188", workflow_path=path)
    assert renderer.describe().endswith("workflow my-lora-flow.")


def test_the_prompt_id_is_the_uuid5_of_the_key():
    assert prompt_id_for("call-1") == str(uuid.uuid5(uuid.NAMESPACE_URL, "jaiweb:call-1"))
    assert prompt_id_for("call-1") != prompt_id_for("call-2")


def test_the_placeholders_are_filled_with_numbers_as_numbers_and_save_nodes_redirected():
    renderer = ComfyUIRenderer(url="http://127.0.0.1:8188", checkpoint="dreamshaper_8.safetensors")
    params = {
        "prompt": "Pig-Man eats a lollipop",
        "characters": {"Pig-Man": {"buff": "super lollipop", "skill": "", "mood": "proud"}},
        "seed": 42,
        "width": 768,
    }
    filled = workflow_fill(
        renderer.workflow, prompt_id="abc", values=renderer.values(params, key="k")
    )
    assert filled["3"]["inputs"]["seed"] == 42
    assert filled["5"]["inputs"]["width"] == 768
    assert filled["5"]["inputs"]["height"] == 512
    assert filled["4"]["inputs"]["ckpt_name"] == "dreamshaper_8.safetensors"
    assert filled["6"]["inputs"]["text"] == (
        "Comic book panel. Pig-Man eats a lollipop\nCharacters: Pig-Man (super lollipop, proud)"
    )
    assert filled["7"]["inputs"]["text"]  # the default negative prompt
    assert filled["9"]["inputs"]["filename_prefix"] == "jaiweb/abc"
    assert renderer.workflow["3"]["inputs"]["seed"] == "{{seed}}"  # the template is untouched


def test_without_a_seed_the_seed_follows_from_the_key():
    renderer = ComfyUIRenderer(url="http://127.0.0.1:8188")
    first = renderer.values({"prompt": "x"}, key="call-1")
    assert renderer.values({"prompt": "x"}, key="call-1") == first
    assert renderer.values({"prompt": "x"}, key="call-2")["seed"] != first["seed"]
    assert first["checkpoint"] == DEFAULT_CHECKPOINT
    assert (first["width"], first["height"]) == (512, 512)


@pytest.mark.parametrize(
    "params", [{"seed": -1}, {"seed": "7"}, {"seed": True}, {"width": 8}, {"height": 1.5}]
)
def test_a_bad_number_is_refused_naming_it(params):
    renderer = ComfyUIRenderer(url="http://127.0.0.1:8188")
    [name] = params
    with pytest.raises(ValueError, match=f"'{name}' must be a whole number"):
        renderer.values({"prompt": "x", **params}, key="k")
