"""The offline director's phrases, in Chinese and English: what it says, never what it does."""

from __future__ import annotations

import re

LABEL_ZH = "[离线导演] "
LABEL_EN = "[offline director] "
SENTENCE_ENDS = tuple('。！？!?.…」）)"')
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")

# Phrases, by language.
TEXT = {
    "zh": {
        "state": "更新{c}的状态：{fields}。",
        "field": "{k}「{v}」",
        "sep": "、",
        "keys": {"buff": "buff", "skill": "招式", "mood": "心情"},
        "draw": "画一格分镜：「{scene}」。",
        "publish": "把分镜 {image} 发布到剧集，配文「{caption}」。",
        "no_image": "还没有可以发布的分镜，先画一格吧。",
        "deferred": "新的这一格还没画好，画完后再发 /publish 发布。",
        "panels": "先看看这条分支上已经画了哪些分镜。",
        "missing_tool": "这里没有提供 {tool} 工具，这一步跳过。",
        "state_no_char": "/state 需要角色名，例如：/state 猪猪侠 buff=… skill=… mood=…。",
        "state_no_fields": "/state {c} 没有给出 buff/skill/mood，什么也不改。",
        "draw_empty": "/draw 后面要写场景。",
        "unknown": "不认识的命令 /{cmd}，已忽略（可用：/state /draw /publish /panels /say）。",
        "empty": "提示是空的，我没什么可画的。",
        "idle": "等你的下一条指令。",
        "caption": "新的一格分镜",
        "join": "",
        # closing narration
        "ok_state": "{c}的新状态已记下。",
        "ok_draw": "分镜画好了（{image}）。",
        "ok_draw_noid": "分镜画好了。",
        "ok_publish": "分镜已发布到剧集。",
        "ok_panels": "这条分支上共有 {n} 格分镜。",
        "ok_panels_text": "这条分支上的分镜：{text}。",
        "ok_other": "{tool} 完成了。",
        "err_denied": "你拒绝了这一步（{tool}），所以没有执行。",
        "err_credits": "点券不够，{tool} 没有执行：{text}。",
        "err_not_run": "{tool} 没有在这条分支上执行。",
        "err_other": "{tool} 出错了：{text}。",
        "no_retry": "我不会自动重试；需要的话请再下指令。",
        "done": "这一步完成了，接下来画什么？",
    },
    "en": {
        "state": "Setting {c}'s state: {fields}.",
        "field": '{k} "{v}"',
        "sep": ", ",
        "keys": {"buff": "buff", "skill": "skill", "mood": "mood"},
        "draw": 'Drawing a panel: "{scene}".',
        "publish": 'Publishing panel {image} with the caption "{caption}".',
        "no_image": "There is no panel to publish yet: draw one first.",
        "deferred": "The new panel is not drawn yet: send /publish once it is.",
        "panels": "Checking the panels on this branch.",
        "missing_tool": "The {tool} tool is not available here, so I skip that step.",
        "state_no_char": "/state needs a character, e.g. /state 猪猪侠 buff=… skill=… mood=….",
        "state_no_fields": "/state {c} gives no buff/skill/mood: nothing to change.",
        "draw_empty": "/draw needs a scene.",
        "unknown": "Unknown command /{cmd}, ignored (try /state /draw /publish /panels /say).",
        "empty": "The prompt is empty: nothing to draw.",
        "idle": "Waiting for your next prompt.",
        "caption": "A new panel",
        "join": " ",
        "ok_state": "{c}'s new state is set.",
        "ok_draw": "The panel is drawn ({image}).",
        "ok_draw_noid": "The panel is drawn.",
        "ok_publish": "The panel is published to the episode.",
        "ok_panels": "This branch has {n} panel(s).",
        "ok_panels_text": "Panels on this branch: {text}.",
        "ok_other": "{tool} is done.",
        "err_denied": "You denied this step ({tool}), so it did not run.",
        "err_credits": "Not enough credits: {tool} did not run: {text}.",
        "err_not_run": "{tool} did not run on this branch.",
        "err_other": "{tool} failed: {text}.",
        "no_retry": "I will not retry by myself; tell me if you want to try again.",
        "done": "Done. What next?",
    },
}


def short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
