"""One table of refusal words: every refusal of the services says itself to a person in both
languages (``user_message``) and to an API client in fixed English (``api_detail``), and the
studio and the API both answer with those words."""

from __future__ import annotations

import json
import re

import pytest
from django.test import RequestFactory
from django.utils import translation

from jaiweb.store import errors
from jaiweb.store.errors import StoreError

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")

# One refusal of each kind, as the services raise it.
SAMPLES: list[StoreError] = [
    errors.StoreError("the session's state does not allow it"),
    errors.SessionNotFound("s1"),
    errors.OperationNotFound("o1"),
    errors.LabelNotFound(7),
    errors.ShareLinkNotFound(),
    errors.NotApplicable("only a panel can be put on another branch"),
    errors.StaleLeaf("s1", "a", "b"),
    errors.NothingToGoBackTo("s1"),
    errors.InvalidEntry("the prompt is empty"),
    errors.InvalidField("variant", "no such variant"),
    errors.ImageNotYours("reference_image_id", "i1"),
    errors.SessionBusy("s1", "o1", parked=False),
    errors.SessionParked("s1", "o1"),
    errors.PromptTooLong(12, 10),
    errors.StaleLog("o1", 3, 4),
    errors.LeaseLost("o1", 2),
    errors.OperationStateConflict("nothing is running in this session"),
    errors.PromptRateLimited(6, 20),
    errors.ImportRefused(3, "not JSON"),
    errors.BundleTooLarge(1000),
    errors.ImportConflict("i1"),
]


def _every_refusal_kind(cls: type = StoreError) -> set[type]:
    return {cls} | {kind for sub in cls.__subclasses__() for kind in _every_refusal_kind(sub)}


def test_every_kind_of_refusal_has_a_sample():
    assert {type(e) for e in SAMPLES} == _every_refusal_kind()


@pytest.mark.parametrize("refusal", SAMPLES, ids=lambda e: type(e).__name__)
def test_a_refusal_says_itself_in_both_languages(refusal: StoreError):
    with translation.override("en"):
        english = refusal.user_message()
        detail = refusal.api_detail()
    with translation.override("zh-hans"):
        chinese = refusal.user_message()
        assert refusal.api_detail() == detail  # the API's words are one language
    assert english and not CJK.search(english)
    assert CJK.search(chinese), chinese
    assert not CJK.search(detail)


NOT_FOUND_DETAILS = {
    errors.SessionNotFound: "no such session",
    errors.OperationNotFound: "no such operation",
    errors.LabelNotFound: "no such label",
    errors.ShareLinkNotFound: "no such share link",
}


@pytest.mark.parametrize("refusal", SAMPLES, ids=lambda e: type(e).__name__)
def test_the_api_answers_with_the_refusals_own_detail(refusal: StoreError):
    from jaiweb.api.api import api

    request = RequestFactory().post("/api/v1/")
    response = api._lookup_exception_handler(refusal)(request, refusal)
    body = json.loads(response.content)
    assert (response.status_code, body["detail"]) == (refusal.http_status, refusal.api_detail())
    # A 404 never echoes what was asked for (docs/ARCHITECTURE.md §12).
    if type(refusal) in NOT_FOUND_DETAILS:
        assert (body["code"], body["detail"]) == ("not_found", NOT_FOUND_DETAILS[type(refusal)])
