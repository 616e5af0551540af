"""The offline director's words, in Chinese and English: its phrases, captions and dialogue.

Only what it says lives here; what it does is ``director.py``. ``{c}`` is a character,
``{o}`` an opponent, ``{cost}`` credits. The language is the UI's when the caller says
it, else the conversation's (see ``director.language_for``).
"""

from __future__ import annotations

import re

from jaiweb.agent.providers.offline.keywords import ENGLISH_NAMES

LABELS = {"zh": "[离线导演] ", "en": "[offline director] "}
SENTENCE_ENDS = tuple('。！？!?.…」）)"”')
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")

TEXT: dict[str, dict[str, str]] = {
    "zh": {
        "state": "更新{c}的状态：{fields}。",
        "field": "{k}「{v}」",
        "sep": "、",
        "key_buff": "增益",
        "key_skill": "技能",
        "key_mood": "情绪",
        "draw": "画一格分镜：「{caption}」。",
        "scene_guess": "我把这句当成要画的场景。",
        "cost_one": "这一格要花 {cost} 积分。",
        "cost_many": "这 {n} 格一共要花 {cost} 积分。",
        "cost_ask": "你点「批准」之后才会画。",
        "cost_auto": "现在是自动模式：不再询问，直接画、直接扣积分。",
        "publish": "把「{panel}」这一格发布到剧集，配文「{caption}」。",
        "publish_same": "把「{panel}」这一格发布到剧集（配文就用这一格的旁白）。",
        "publish_free": "发布不花积分，但会公开，所以会先问你。",
        "no_image": "还没有可以发布的分镜，先画一格吧。",
        "deferred": "新的这一格还没画好，画完后再发 /publish 发布。",
        "panels": "先看看这条分支上已经画了哪些分镜（只是查看，不花积分）。",
        "missing_tool": "这里没有提供「{tool}」这个工具，这一步跳过。",
        "state_no_char": "/state 需要角色名，例如：/state 猪猪侠 buff=… skill=… mood=…。",
        "state_no_fields": "/state {c} 没有给出增益、技能或情绪（buff/skill/mood），什么也不改。",
        "draw_empty": "/draw 后面要写场景，例如：/draw 猪猪侠在擂台上对决超人强。",
        "ask_scene": "要画什么？直接说出场景就行，例如：猪猪侠在擂台上对决超人强。",
        "unknown": (
            "不认识的命令 /{cmd}，已忽略（可用：/draw /state /publish /panels /say /help）。"
        ),
        "empty": "提示是空的，我没什么可画的。",
        "idle": "等你的下一条指令。",
        "caption": "新的一格分镜",
        "join": "",
        "mood": "把{c}的情绪改成「{mood}」：只改状态，不画图，不花积分。",
        "mood_offer": "要画出来吗？/draw {scene}",
        "mood_scene": "{c}一脸{mood}的样子",
        "offer": (
            "我不确定你是不是想画一格（每格 {cost} 积分），所以先没画。要画出来吗？/draw {text}"
        ),
        "ask_who": "「{mention}」是指{names}？请写出名字，我再动手。",
        "or": "还是",
        "answer": "这个问题我离线答不了，我只会按指令画分镜、改状态。",
        "hello": "你好！我是离线导演：一格一格地画这一集，并记住每个角色的状态。",
        "help": (
            "可以这样说："
            "「猪猪侠吃下超级棒棒糖」（改状态并画一格）；"
            "「/draw 猪猪侠在擂台上对决超人强」（画一格，{cost} 积分）；"
            "「让猪猪侠难过」（只改状态，免费）；「猪猪侠现在什么状态？」；"
            "「列出分镜」；「/publish 配文」（发布最新的一格）。"
            "想撤销，就在树里点更早的节点，再点「从这里继续」。"
        ),
        "state_answer": "{c}{source}：增益「{buff}」，技能「{skill}」，情绪「{mood}」。",
        "source_app": "在这条分支上",
        "source_conv": "（按这段对话的记录）",
        "state_unknown": (
            "这段对话里还没改过{c}的状态；角色面板显示的就是当前状态"
            "（默认：增益 无，技能 无，情绪 平静）。"
        ),
        "state_nobody": "这段对话里还没改过任何角色的状态；当前状态请看角色面板。",
        "state_how": "要改状态：/state 猪猪侠 mood=开心，或者说「让猪猪侠开心」。",
        "undo_last": (
            "要撤销最后一格（「{panel}」），就回到它前面的那一轮：在树里点那一轮（「{before}」，"
            "导演说完话的地方），再点「从这里继续」。"
        ),
        "undo_first": (
            "最后一格（「{panel}」）是在第一轮画的：在树里点那条提示「{turn}」，再点"
            "「从这里继续」，就能换个方向重来。"
        ),
        "undo_summarized": (
            "要撤销最后一格（「{panel}」），在树里点提示「{turn}」之前的那个节点，"
            "再点「从这里继续」。"
        ),
        "undo_none": (
            "这条分支上还没有分镜可以撤销。要回到任何地方，在树里点那个节点，再点「从这里继续」。"
        ),
        "undo_after": (
            "状态会跟着退回去；回退不花积分，撤掉的那格留在它自己的分支上（已花的积分不退）。"
        ),
        # closing narration
        "ok_state": "{c}的新状态已记下。",
        "ok_draw": "这一格画好了：「{caption}」。",
        "ok_publish": "这一格已经发布到剧集。",
        "ok_panels": "这条分支上共有 {n} 格分镜：{list}。",
        "ok_panels_none": "这条分支上还没有分镜。",
        "ok_panels_text": "这条分支上的分镜：{text}。",
        "ok_other": "「{tool}」完成了。",
        "err_denied": "你拒绝了这一步（{tool}），所以没有执行。",
        "err_credits": "积分不够，「{tool}」没有执行：{text}。",
        "err_not_run": "「{tool}」没有在这条分支上执行。",
        "err_other": "「{tool}」出错了：{text}。",
        "no_retry": "我不会自动重试；需要的话请再下指令。",
        "done": "这一步完成了，接下来画什么？",
        "list_item": "{n}.「{caption}」",
        "list_sep": "；",
    },
    "en": {
        "state": "Setting the state of {c}: {fields}.",
        "field": '{k} "{v}"',
        "sep": ", ",
        "key_buff": "buff",
        "key_skill": "skill",
        "key_mood": "mood",
        "draw": 'Drawing a panel: "{caption}".',
        "scene_guess": "I read this as a scene to draw.",
        "cost_one": "This panel costs {cost} credits.",
        "cost_many": "These {n} panels cost {cost} credits.",
        "cost_ask": "Nothing is drawn until you approve.",
        "cost_auto": "Auto mode is on: it is drawn and charged without asking.",
        "publish": 'Publishing the panel "{panel}" to the episode with the caption "{caption}".',
        "publish_same": 'Publishing the panel "{panel}" to the episode, with its own caption.',
        "publish_free": "Publishing is free but public, so you will be asked first.",
        "no_image": "There is no panel to publish yet: draw one first.",
        "deferred": "The new panel is not drawn yet: send /publish once it is.",
        "panels": "Checking the panels on this branch (a free look, no credits).",
        "missing_tool": 'The "{tool}" tool is not available here, so I skip that step.',
        "state_no_char": "/state needs a character, e.g. /state Pig-Man buff=… skill=… mood=….",
        "state_no_fields": "/state {c} gives no buff/skill/mood: nothing to change.",
        "draw_empty": "/draw needs a scene, e.g. /draw Pig-Man faces Super Strong in the ring.",
        "ask_scene": (
            "What should the panel show? Just say the scene, e.g. "
            '"Pig-Man faces Super Strong in the ring".'
        ),
        "unknown": (
            "Unknown command /{cmd}, ignored (try /draw /state /publish /panels /say /help)."
        ),
        "empty": "The prompt is empty: nothing to draw.",
        "idle": "Waiting for your next prompt.",
        "caption": "A new panel",
        "join": " ",
        "mood": 'Setting the mood of {c} to "{mood}": a state change only, no panel, no credits.',
        "mood_offer": "Draw it? /draw {scene}",
        "mood_scene": "{c} looking {mood}",
        "offer": (
            "I'm not sure you want a panel drawn (a panel costs {cost} credits), so I haven't "
            "drawn one. Draw it? /draw {text}"
        ),
        "ask_who": 'Who do you mean by "{mention}": {names}? Say the name and I will go on.',
        "or": " or ",
        "answer": "I can't answer that offline: I draw panels and keep the characters' state.",
        "hello": (
            "Hi! I'm the offline director: I draw the episode panel by panel and remember "
            "each character's state."
        ),
        "help": (
            'Try: "Pig-Man eats a super lollipop" (sets his state and '
            'draws); "/draw Pig-Man faces Super Strong in the ring" (one panel, {cost} '
            'credits); "Make Pig-Man sad" (state only, free); "What\'s Pig-Man\'s state?"; '
            '"list panels"; "/publish <caption>" (publishes the latest panel). To undo, click '
            'an earlier node in the tree and choose "Continue from here".'
        ),
        "state_answer": '{c}{source}: buff "{buff}", skill "{skill}", mood "{mood}".',
        "source_app": " on this branch",
        "source_conv": " (as this conversation recorded it)",
        "state_unknown": (
            "I haven't changed the state of {c} in this conversation; the characters panel shows "
            "the current state (by default: no buff, no skill, a calm mood)."
        ),
        "state_nobody": (
            "I haven't changed anyone's state in this conversation; the characters panel "
            "shows the current state."
        ),
        "state_how": 'To change it: /state Pig-Man mood=happy, or "Make Pig-Man happy".',
        "undo_last": (
            'To undo the last panel ("{panel}"), go back to the turn before it: in the tree, '
            'click that turn ("{before}", where the director finished it) and choose '
            '"Continue from here".'
        ),
        "undo_first": (
            'The last panel ("{panel}") was drawn in your first turn: click that prompt '
            '("{turn}") in the tree and choose "Continue from here" to take the story '
            "another way."
        ),
        "undo_summarized": (
            'To undo the last panel ("{panel}"), click the node just before your prompt '
            '"{turn}" in the tree and choose "Continue from here".'
        ),
        "undo_none": (
            "There is no panel on this branch to undo. To go back anywhere, click that node "
            'in the tree and choose "Continue from here".'
        ),
        "undo_after": (
            "The state goes back with it; rewinding costs nothing, and the undone panel stays "
            "on its own branch (the credits it cost are not refunded)."
        ),
        "ok_state": "The new state of {c} is set.",
        "ok_draw": 'The panel is drawn: "{caption}".',
        "ok_publish": "The panel is published to the episode.",
        "ok_panels": "This branch has {n} panel(s): {list}.",
        "ok_panels_none": "There are no panels on this branch yet.",
        "ok_panels_text": "Panels on this branch: {text}.",
        "ok_other": '"{tool}" is done.',
        "err_denied": "You denied this step ({tool}), so it did not run.",
        "err_credits": "Not enough credits: {tool} did not run: {text}.",
        "err_not_run": "{tool} did not run on this branch.",
        "err_other": "{tool} failed: {text}.",
        "no_retry": "I will not retry by myself; tell me if you want to try again.",
        "done": "Done. What next?",
        "list_item": '{n}. "{caption}"',
        "list_sep": "; ",
    },
}

TOOL_LABELS = {
    "zh": {
        "set_character_state": "改角色状态",
        "generate_image": "画这一格",
        "publish_panel": "发布分镜",
        "list_panels": "列出分镜",
    },
    "en": {
        "set_character_state": "changing the state",
        "generate_image": "drawing the panel",
        "publish_panel": "publishing the panel",
        "list_panels": "listing the panels",
    },
}

# What a rule of the story says before it acts, and what its panel shows and says.
# ``speech``: (who, words) with who "c" (the character), "o" (the opponent) or the role of
# a character of the cast (``journal.cast.STARTERS``), who speaks when the prompt names it.
STORY: dict[str, dict[str, dict]] = {
    "zh": {
        "laxative": {
            "intro": "糟糕，{c}吃下的是过期泻药丸：拉肚子虚脱，招式全没了！",
            "caption": "糟糕！{c}吃下的是过期泻药丸，肚子疼得直冒冷汗……",
            "speech": (("c", "哎哟……我的肚子……"), ("teacher", "哎呀，拿错药了！")),
        },
        "lollipop": {
            "intro": "{c}吃下超级棒棒糖，变身功夫大师，学会了降龙十巴掌！",
            "caption": "{c}吃下超级棒棒糖，变身功夫大师！",
            "speech": (("c", "超级棒棒糖，能量满满！"),),
        },
        "finishing": {
            "intro": "绝招时刻！角色就按这条分支上现在的状态来画，不改状态。",
            "caption": "{c}使出绝招「{skill}」！",
            "caption_o": "{c}使出绝招「{skill}」，一掌拍飞{o}！",
            "caption_plain": "{c}使出了绝招！",
            "caption_plain_o": "{c}使出绝招，一掌拍飞{o}！",
            "speech": (("c", "{skill}！"),),
            "skill": "绝招",
        },
    },
    "en": {
        "laxative": {
            "intro": "Oops, {c} got an expired laxative pill: weak, sweating, no skill left!",
            "caption": "Oh no! The medicine was expired: {c} doubles over with a stomach ache.",
            "speech": (("c", "Ouch… my stomach…"), ("teacher", "Oops, wrong bottle!")),
        },
        "lollipop": {
            "intro": "{c} eats the super lollipop and becomes a kung-fu master!",
            "caption": "{c} eats the super lollipop and turns into a kung-fu master!",
            "speech": (("c", "Super lollipop, full power!"),),
        },
        "finishing": {
            "intro": (
                "Finishing move! The characters are drawn as this branch says; no state change."
            ),
            "caption": "{c} unleashes the finishing move: {skill}!",
            "caption_o": "{c} unleashes the finishing move: {skill}! {o} goes flying!",
            "caption_plain": "{c} unleashes the finishing move!",
            "caption_plain_o": "{c} unleashes the finishing move! {o} goes flying!",
            "speech": (("c", "{skill}!"),),
            "skill": "finishing move",
        },
    },
}

# A line for a character drawn in a scene, by its mood.
DIALOGUE = {
    "zh": {"proud": "哼哼，看我的厉害！", "happy": "太棒啦！", "sad": "呜呜……", "angry": "可恶！",
           "scared": "救、救命啊！", "tired": "好累……", "sick": "肚子好痛……"},
    "en": {"proud": "Heh, watch this!", "happy": "Yay!", "sad": "Sniff…", "angry": "Grr!",
           "scared": "H-help!", "tired": "So tired…", "sick": "My stomach…"},
}  # fmt: skip


def words(lang: str) -> dict[str, str]:
    return TEXT[lang]


def name_in(name: str, lang: str, *, panel: bool = False) -> str:
    """A character as the narration says it: its name, but a built-in's Chinese name in
    English (``Pig-Man`` for 猪猪侠, in a session from before names followed the language),
    so an English page shows no Chinese that no user typed."""
    english = ENGLISH_NAMES.get(name)
    return english if lang == "en" and english else name


def tool_label(tool: str, lang: str) -> str:
    return TOOL_LABELS[lang].get(tool, tool)


def short(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word or CJK boundary, "…" when cut (for the
    narration only: a panel's own text is never cut)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    dropped = text[limit - 1]
    inside_word = (
        cut[-1] != " " and dropped != " " and not CJK.match(cut[-1]) and not CJK.match(dropped)
    )
    if inside_word and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,，、;；:：") + "…"
