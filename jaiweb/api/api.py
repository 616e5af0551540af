"""The JSON API at /api/v1/ (docs/ARCHITECTURE.md §12), OpenAPI at /api/v1/openapi.json.

Views only check access, call the agent's actions or the store's services and selectors,
and shape the answer; every refusal becomes ``{"detail", "code"}`` in ``errors``.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest
from ninja import NinjaAPI
from ninja.operation import Operation
from ninja.parser import Parser
from ninja.renderers import JSONRenderer
from ninja.responses import NinjaJSONEncoder
from pydantic_core import to_jsonable_python

from jaiweb.api import (
    branches,
    chapters,
    comic,
    inbox,
    operations,
    sessions,
    transfer,
    variants,
    wallet,
)
from jaiweb.api.auth import AUTH
from jaiweb.api.errors import install_error_handlers
from jaiweb.api.openapi import document_json_values
from journal.jsonvalues import json_loads


class JournalJSONRenderer(JSONRenderer):
    """Values as the journal writes them: Django's encoder would cut timestamps to milliseconds,
    so an entry read here would differ from the same entry exported."""

    def render(self, request: HttpRequest, data: Any, *, response_status: int) -> str:
        fallback = NinjaJSONEncoder().default
        return json.dumps(to_jsonable_python(data, fallback=fallback), ensure_ascii=False)


class JournalJSONParser(Parser):
    """Bodies read as the journal reads JSON from outside: a body nested past the limit is
    refused before it is parsed (``errors``: 422), never a RecursionError."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        return json_loads(request.body)


class JaiwebAPI(NinjaAPI):
    def get_openapi_schema(self, **kwargs: Any):
        """ninja's document, with the rule for free JSON values (``jaiweb.api.openapi``)."""
        return document_json_values(super().get_openapi_schema(**kwargs))

    def get_openapi_operation_id(self, operation: Operation) -> str:
        """The view's name (``submit_prompt``), not ninja's module-qualified one."""
        return operation.view_func.__name__


api = JaiwebAPI(
    title="jaiweb",
    version="1",
    description="Comic sessions on an append-only tree, and the agent's runs on them.",
    auth=AUTH,
    urls_namespace="api-v1",
    renderer=JournalJSONRenderer(),
    parser=JournalJSONParser(),
)
install_error_handlers(api)
# transfer first: its /sessions/import must come before /sessions/{session_id}.
for module in (transfer, sessions, branches, chapters, variants, comic, operations, inbox, wallet):
    api.add_router("", module.router)
