"""The prompts of the article's story, as the suites play them in Chinese, and the shape of
the entries a run of it leaves."""

from __future__ import annotations

from jaiweb.store.models import Entry

# One prompt that sets the hero's state and draws a panel: the crash and chaos tests' run.
STORY = "吃下超级棒棒糖，上擂台对决超人强！"
# The entries STORY leaves with the offline director when nothing crashes (tree kinds:
# user / assistant / app_state / tool_result:<tool>).
STORY_SHAPE = [
    "user",
    "assistant",
    "app_state",
    "tool_result:set_character_state",
    "tool_result:generate_image",
    "assistant",
]
# The whole story: the lollipop, the laxative side story, and the finishing move after
# rewinding to before the side story.
LOLLIPOP = "画一张猪猪侠在武林大会擂台上对决超人强，掏出超级棒棒糖吃下！"
LAXATIVE = "先别正经打，画一格搞笑支线：迷糊老师不小心把棒棒糖拿错了，给猪猪侠吃了一颗过期泻药丸！"
FINISHER = "使出绝招降龙十巴掌，一掌拍飞超人强！"


def entry_kinds(session) -> list[str]:
    """Every entry of ``session`` in append order as its tree kind (``user``,
    ``assistant``, ``app_state``, ``tool_result:<tool>``, …), as STORY_SHAPE spells them."""
    out = []
    for row in Entry.objects.filter(session=session).order_by("seq"):
        e = row.to_journal()
        if e.type == "message":
            m = e.message
            out.append(f"tool_result:{m.tool_name}" if m.role == "tool_result" else m.role)
        else:
            out.append(e.type)
    return out
