"""Request and response bodies of the JSON API (docs/ARCHITECTURE.md §12).

Entries and records are the journal's own pydantic models (docs/ARCHITECTURE.md §5, §6), so the
OpenAPI document describes exactly what is stored and exported; entries add ``seq``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from django.conf import settings
from ninja import Schema
from ninja.schema import DjangoGetter
from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StringConstraints,
    create_model,
    field_validator,
    model_validator,
)

from jaiweb.agent.tools.character import max_length
from journal.appstate import IMAGE_ID_PATTERN, AppState, Seed
from journal.entries import AppStateEntry, BranchEntry, CompactionEntry, MessageEntry
from journal.jsonvalues import TEXT_RULE, Id, JsonObject, Text, check_text, whole_number
from journal.lettering import BUBBLES_MAX, CAPTION_MAX, NAME_MAX, ORDER_MAX, SPEECH_MAX, EntryId
from journal.records import Record
from journal.recovery import Verdict
from journal.variants import VARIANTS_MAX, VARIANTS_MIN

SessionState = Literal["idle", "running", "parked"]


def _whitespace_class() -> str:
    """What ``str.strip()`` removes, as ``\\uXXXX`` ranges for a regex character class.

    Spelled out because ``\\s`` differs between regex dialects: ECMA-262's (the one JSON
    Schema names) leaves out U+001C–U+001F and U+0085 and adds U+FEFF, so a prompt "\\x1e"
    matched the document's pattern and was then refused as empty (the fuzzing gate).
    """
    spaces = [c for c in range(0x10000) if chr(c).isspace()]
    ranges: list[list[int]] = []
    for c in spaces:
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


# The schema says what the server enforces (a fuzzer of the OpenAPI document keeps to it):
# at least one character that str.strip() keeps, and no NUL.
NOT_BLANK = rf"^[^\u0000]*[^{_whitespace_class()}\u0000][^\u0000]*$"
BLANK = "must not be empty or only whitespace"


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError(BLANK)
    return value


def _stripped(value: str) -> str:
    return value.strip()


def stripped_text(max_length: int | None, description: str) -> Any:
    """Text checked as it was sent, as the document says — at most ``max_length`` characters
    (the schema's ``maxLength`` counts the text as sent), no NUL, not only whitespace — then
    kept without its leading and trailing whitespace. The length comes first: its message
    names the limit."""
    return Annotated[
        str,
        StringConstraints(min_length=1, max_length=max_length),
        AfterValidator(check_text),
        AfterValidator(_not_blank),
        AfterValidator(_stripped),
        Field(json_schema_extra={"pattern": NOT_BLANK, "description": description}),
    ]


KEPT_STRIPPED = "kept without leading and trailing whitespace"
Title = stripped_text(
    200, f"1 to 200 characters as sent, not only whitespace; {KEPT_STRIPPED}; {TEXT_RULE}"
)
LabelText = stripped_text(
    80,
    "a label's (or a bookmark's) words: 1 to 80 characters as sent, not only whitespace; "
    f"{KEPT_STRIPPED}; {TEXT_RULE}",
)
Reason = stripped_text(None, f"not empty or only whitespace; {KEPT_STRIPPED}; {TEXT_RULE}")
# A name the set_character_state tool keeps (it strips its arguments): not only whitespace.
NotBlankText = Annotated[
    str,
    AfterValidator(check_text),
    AfterValidator(_not_blank),
    Field(json_schema_extra={"pattern": NOT_BLANK, "description": f"{BLANK}; {TEXT_RULE}"}),
]


# -- errors -------------------------------------------------------------------------


class FieldError(Schema):
    field: str
    message: str


class ErrorOut(Schema):
    """Every error: a sentence and a stable code; 422s name the field."""

    detail: str
    code: str
    field: str | None = Field(default=None, description="422: the first field refused")
    errors: list[FieldError] | None = Field(default=None, description="422: every field refused")
    leaf_id: str | None = Field(default=None, description="409 stale_leaf: the leaf now")


# -- request bodies -----------------------------------------------------------------


class BodyIn(Schema):
    """A request body: a JSON object, nothing else.

    ninja's Schema reads attributes from whatever it is given, so a JSON string "AAA" was
    read as an object whose ``title`` was ``"AAA".title()``: a session named "Aaa".
    """

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        # ninja's own (outer) validator has wrapped what was sent in a DjangoGetter already.
        if not isinstance(value._obj if isinstance(value, DjangoGetter) else value, dict):
            raise ValueError("must be a JSON object")
        return value


# -- sessions -----------------------------------------------------------------------


class SessionCreateIn(BodyIn):
    title: Title
    initial_app_state: AppState | None = Field(
        default=None,
        description="kept as sent (unknown fields too), once the agent can read it; "
        "default: no characters, permission mode ask; the session's `language` (en / zh), "
        "unless given here, is the one Accept-Language asks for, when it asks",
    )

    def app_state_as_sent(self) -> dict | None:
        if self.initial_app_state is None:
            return None
        return self.initial_app_state.model_dump(mode="json", exclude_unset=True)


class SessionRenameIn(BodyIn):
    title: Title


class SessionSummaryOut(Schema):
    id: str
    title: str
    leaf_id: str | None
    entry_count: int
    created_at: datetime
    updated_at: datetime


class SessionOut(SessionSummaryOut):
    owner: str
    app_state: dict[str, Any]
    state: SessionState
    operation_id: str | None = Field(description="the unfinished operation, if any")
    parked_reason: str | None = Field(
        default=None, description="why an admin is needed, when the state is parked"
    )


def _with_seq(model: type) -> type:
    return create_model(
        model.__name__ + "Out",
        __base__=model,
        seq=(int, Field(description="1, 2, … per session, in append order")),
    )


EntryOut = Annotated[
    _with_seq(MessageEntry)
    | _with_seq(AppStateEntry)
    | _with_seq(CompactionEntry)
    | _with_seq(BranchEntry),
    Field(discriminator="type"),
]


# -- writes on a session ------------------------------------------------------------


def _prompt_schema(schema: dict) -> None:
    limit = settings.JAIWEB_MAX_PROMPT_CHARS  # read when the document is made
    schema.update(
        minLength=1,
        maxLength=limit,
        pattern=NOT_BLANK,
        description=f"1 to {limit} characters (JAIWEB_MAX_PROMPT_CHARS), not only "
        f"whitespace; {TEXT_RULE}",
    )


PromptText = Annotated[str, AfterValidator(check_text), Field(json_schema_extra=_prompt_schema)]


# Whole JSON numbers: 3.0 is 3, as JSON Schema reads it; 2.5, "3" and true are refused.
VariantsCount = Annotated[
    int,
    Field(ge=VARIANTS_MIN, le=VARIANTS_MAX, strict=True),
    BeforeValidator(whole_number),
]
VariantNumber = Annotated[
    int, Field(ge=1, le=VARIANTS_MAX, strict=True), BeforeValidator(whole_number)
]


class PromptTextIn(BodyIn):
    text: PromptText
    # The leaf the sender's page shows: an idle session that left that node's branch since
    # answers 409 with its current leaf (a running one takes the prompt as steering).
    expected_leaf_id: Id | None = None

    @field_validator("text")
    @classmethod
    def _length(cls, value: str) -> str:
        # Checked here too (the store has the last word) so the error names the field
        # before the prompt counts against the rate limit.
        limit = settings.JAIWEB_MAX_PROMPT_CHARS
        if len(value) > limit:
            raise ValueError(
                f"the prompt has {len(value)} characters; at most {limit} are accepted"
            )
        if not value.strip():
            raise ValueError("the prompt is empty")
        return value


class PromptIn(PromptTextIn):
    variants: VariantsCount | None = Field(
        default=None,
        description=f"{VARIANTS_MIN} to {VARIANTS_MAX}: ask for that many variants of the "
        "panel, drawn and charged each on its own, approved once; the prompt is sent as "
        "that request in the page's language",
    )


class PromptOut(Schema):
    operation_id: str
    queued: bool = Field(description="true: steering for the run in progress")
    input_entry_id: str = Field(description="the entry the text is (or will be) written under")


class NavigateIn(BodyIn):
    entry_id: Id
    expected_leaf_id: Id | None = None
    keep_characters: bool = Field(
        default=False,
        description="story only: after the rewind, write back the characters the leaf has "
        "now (an app_state entry in the same transaction); false: story and characters",
    )


class NavigateOut(Schema):
    leaf_id: str | None
    app_state: dict[str, Any]


class StopOut(Schema):
    operation_id: str


# -- operations ---------------------------------------------------------------------


class OperationOut(Schema):
    id: str
    session_id: str
    state: Literal["running", "parked", "finished"]
    outcome: str | None
    created_at: datetime
    finished_at: datetime | None
    parked_reason: str | None
    verdict: Verdict | None = Field(
        description="what recovery would do with the log now; null if the log is corrupted"
    )
    records: list[Record]


class ApprovalIn(BodyIn):
    tool_call_id: Id
    # The page's buttons say approve/deny; the journal records approved/denied.
    decision: Literal["approve", "deny", "approved", "denied"]
    auto_from_now: bool = False


class ApprovalOut(Schema):
    operation_id: str
    tool_call_id: str
    decision: Literal["approved", "denied"]


# -- inbox --------------------------------------------------------------------------


class InboxItemOut(Schema):
    operation_id: str
    session_id: str
    session_title: str
    owner: str
    attention: str
    parked_at: datetime | None
    claims: int
    tool_call_id: str | None = Field(description="null: the operation as a whole needs attention")
    tool_name: str
    args: dict[str, Any]
    idempotency_key: str
    policy: str
    dispatch_attempt: int
    dispatched_at: datetime | None
    evidence: dict[str, Any]


class InboxResultIn(BodyIn):
    content: Text = ""
    details: JsonObject | None = None


class InboxResolveIn(BodyIn):
    resolution: Literal["retry", "confirmed", "failed"]
    reason: Reason
    result: InboxResultIn | None = None


class InboxResolveOut(Schema):
    operation_id: str
    tool_call_id: str
    resolution: str


# -- wallet -------------------------------------------------------------------------


class LedgerEntryOut(Schema):
    kind: str
    amount: int
    balance_after: int
    job_key: str | None
    note: str
    created_at: datetime


class CreditRequestOut(Schema):
    id: int
    amount: int = Field(description="the credits asked for")
    message: str
    status: Literal["open", "granted", "declined"]
    created_at: datetime
    granted: int = Field(description="the credits an admin granted (0 until granted)")
    decided_by: str
    decided_at: datetime | None
    reason: str = Field(description="the admin's word to the user")


class WalletOut(Schema):
    balance: int
    monthly_topup: int = Field(
        0, description="credits added at the wallet's first movement of each month (0: none)"
    )
    panel_cost: int = Field(10, description="what one panel costs")
    level: Literal["ok", "last", "out"] = Field(
        "ok", description="ok; last: enough for one more panel only; out: not enough for one"
    )
    open_request: CreditRequestOut | None = Field(
        None, description="the user's open ask for credits, if any"
    )
    ledger: list[LedgerEntryOut] = Field(description="newest first")


class CreditRequestIn(BodyIn):
    amount: int = Field(ge=1, le=10_000, description="the credits asked for: 1 to 10000")
    message: Annotated[str, StringConstraints(max_length=500), AfterValidator(check_text)] = Field(
        "", description=f"why, for the admin: at most 500 characters; {TEXT_RULE}"
    )


# -- branches -----------------------------------------------------------------------


class EffectsOut(Schema):
    """What entries did outside the journal."""

    credits: int = Field(description="credits the panels drawn here charged")
    panels: int
    posts: int = Field(description="panels published to the feed")


class ChangeOut(Schema):
    character: str | None = Field(description="null: the permission mode or the chapters")
    field: str = Field(
        description="a character's buff, skill or mood; permission_mode; or chapters (the "
        "chapter titles of the branch, joined by ' · ')"
    )
    before: str | None = Field(description="null: the character (or any chapter) is not there")
    after: str | None


class BranchSideOut(Schema):
    node_id: str | None
    entry_count: int = Field(description="entries from the fork point on to the node")
    entries: list[EntryOut] = Field(
        description="the first `limit` of them, from the fork point on, root → node"
    )
    app_state: dict[str, Any] = Field(description="the state at the node")
    effects: EffectsOut


class ComparisonOut(Schema):
    fork_id: str | None = Field(description="the last entry both share; null: none")
    left: BranchSideOut
    right: BranchSideOut
    changes: list[ChangeOut] = Field(description="left's state → right's")


class RewindPreviewOut(Schema):
    target_id: str
    changes: list[ChangeOut] = Field(description="what rolls back: the state now → at the target")
    story_only_changes: list[ChangeOut] = Field(
        default_factory=list,
        description="what rolls back with keep_characters (story only): the same, less the "
        "characters",
    )
    left_behind: int = Field(description="entries of the current branch past the fork point")
    stays: EffectsOut = Field(description="what they spent and published stays so")
    choices: int = Field(
        default=0, description="panels drawn as variants whose chosen variant differs there"
    )
    lettering: int = Field(
        default=0, description="panels whose caption or bubbles differ there (they go back)"
    )
    layout: str | None = Field(
        default=None, description="the page layout there, when it differs; null: the same"
    )
    order: bool = Field(default=False, description="the panels' order differs there")


class AppStateOut(Schema):
    entry_id: str | None
    app_state: dict[str, Any]


class StateWriteOut(Schema):
    leaf_id: str
    app_state: dict[str, Any]


class VariantChoiceIn(BodyIn):
    variant: VariantNumber = Field(description="which drawn variant, from 1")
    expected_leaf_id: Id | None = Field(
        default=None, description="the leaf the sender saw; left out: the leaf as it is now"
    )


def _character_field(name: str, *, required: bool = False) -> Any:
    """The set_character_state tool's own limit for the field."""
    return Field(default=... if required else None, min_length=1, max_length=max_length(name))


class CharacterIn(BodyIn):
    """One character edited by hand, as the set_character_state tool would."""

    name: NotBlankText = _character_field("character", required=True)
    buff: Text | None = _character_field("buff")
    skill: Text | None = _character_field("skill")
    mood: Text | None = _character_field("mood")
    seed: Seed | None = Field(
        default=None,  # a whole JSON number (46.0 too): "7" is no seed
        description="the character's own seed (its look): the backends draw it with this",
    )
    reference_image_id: str | None = Field(
        default=None,
        pattern=IMAGE_ID_PATTERN,
        description="the character's reference picture (its look): one of the session "
        "owner's images, else refused (404 image_not_yours, naming this field)",
    )
    expected_leaf_id: Id | None = Field(
        default=None, description="the leaf the caller saw; refused (409) when it moved"
    )


class PermissionModeIn(BodyIn):
    mode: Literal["ask", "auto"]
    expected_leaf_id: Id | None = None


class LabelIn(BodyIn):
    entry_id: Id
    kind: Literal["label", "bookmark"] = "label"
    text: LabelText


class LabelOut(Schema):
    id: int
    entry_id: str
    kind: Literal["label", "bookmark"]
    text: str
    created_at: datetime


class SearchHitOut(Schema):
    entry_id: str
    seq: int | None = Field(description="null for a label (its node's seq is not read)")
    where: Literal["prompt", "narration", "state", "summary", "label"]
    text: str = Field(description="the matching text, cut around the match")


class ForkIn(BodyIn):
    entry_id: Id = Field(description="the node the new session's branch ends at")
    title: Title | None = Field(default=None, description="default: this session's title")


class ResendIn(PromptTextIn):
    """The edited prompt; ``expected_leaf_id`` as for a prompt (409 when the leaf moved)."""


class RegenerateIn(BodyIn):
    expected_leaf_id: Id | None = None


class CherryPickIn(BodyIn):
    take_state: bool = Field(default=False, description="bring that panel's state too")
    expected_leaf_id: Id | None = Field(default=None, description="default: the leaf as it is now")


class CherryPickOut(Schema):
    leaf_id: str


class ShareLinkIn(BodyIn):
    leaf_id: Id | None = Field(default=None, description="the node to pin; default: the leaf")


class ShareLinkOut(Schema):
    id: int
    leaf_id: str
    created_at: datetime
    revoked_at: datetime | None


class ShareLinkMadeOut(ShareLinkOut):
    url: str = Field(description="the link itself: shown this once, kept only as a hash")


class ImportRefusedOut(ErrorOut):
    """An import refused (422): the file's first problem, and at which line it is."""

    line: int | None = Field(
        default=None, description="import_refused: the line (1, 2, …) of the first problem"
    )


# --- the comic's layer: lettering and pages (journal.lettering) ----------------------------

CaptionText = stripped_text(
    CAPTION_MAX,
    f"the caption: 1 to {CAPTION_MAX} characters as sent, not only whitespace; "
    f"{KEPT_STRIPPED}; {TEXT_RULE}",
)
BubbleText = stripped_text(
    SPEECH_MAX,
    f"the bubble's words: 1 to {SPEECH_MAX} characters as sent, not only whitespace; "
    f"{KEPT_STRIPPED}; {TEXT_RULE}",
)
Place = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class BubbleIn(BodyIn):
    character: Annotated[
        str, StringConstraints(max_length=NAME_MAX), AfterValidator(check_text)
    ] = Field(default="", description="who speaks (empty: nobody named)")
    text: BubbleText
    x: Place | None = Field(
        default=None, description="the bubble's centre across the picture, from 0 to 1"
    )
    y: Place | None = Field(default=None, description="the bubble's top down the picture, 0 to 1")


def at_least_one_of(*names: str) -> dict[str, Any]:
    """The JSON Schema rule that one of these fields is there and not null, as the
    service requires (a body that changes nothing is 422)."""
    return {
        "anyOf": [
            {"required": [name], "properties": {name: {"not": {"type": "null"}}}} for name in names
        ]
    }


class LetteringIn(BodyIn):
    """A panel's lettering changed: the caption, the bubbles (every one, in order), or both."""

    model_config = {"json_schema_extra": at_least_one_of("caption", "speech")}

    caption: CaptionText | None = None
    speech: list[BubbleIn] | None = Field(default=None, max_length=BUBBLES_MAX)
    expected_leaf_id: Id | None = Field(
        default=None, description="the leaf the caller saw; refused (409) when it moved"
    )


class BubbleOut(Schema):
    character: str
    text: str
    x: float | None = None
    y: float | None = None


class LetteringOut(Schema):
    leaf_id: str | None = Field(description="the node read at: after an edit, the new leaf")
    entry_id: str
    caption: str
    speech: list[BubbleOut]
    edited: bool = Field(description="whether the words were edited (else the script's)")
    number: int = Field(description="the panel's place in reading order, from 1")


class PageIn(BodyIn):
    """How the branch reads as pages: a layout, the panels' order (entry ids), or both."""

    model_config = {"json_schema_extra": at_least_one_of("layout", "order")}

    layout: Literal["2x2", "3-tier", "strip", "splash"] | None = None
    order: list[EntryId] | None = Field(default=None, max_length=ORDER_MAX)
    expected_leaf_id: Id | None = Field(
        default=None, description="the leaf the caller saw; refused (409) when it moved"
    )


class PageOut(Schema):
    entry_id: str | None
    layout: str
    order: list[str]
