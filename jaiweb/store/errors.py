"""The refusals of the services. Each says what was refused and why; nothing was written.

Each refusal is the one table of what it answers: ``http_status`` (the API, the studio's
views and the socket all answer with it), ``api_detail()`` (the API's ``detail``, English
and part of its contract) and ``user_message()`` (a sentence for the person who asked, in
their language; the studio shows it).
"""

from __future__ import annotations

from django.utils.translation import gettext as _


class StoreError(Exception):
    """Base of the services' refusals."""

    code = "store_error"
    http_status = 409  # what was asked does not fit the session's or the operation's state

    def api_detail(self) -> str:
        """Say the refusal to an API client, in the same English words in every language."""
        return str(self)

    def user_message(self) -> str:
        """Say the refusal to the person who made the request, in the active language."""
        return _("That is not possible now: %(why)s") % {"why": self}


class SessionNotFound(StoreError):
    code = "not_found"
    http_status = 404

    def __init__(self, session_id: str):
        self.session_id = session_id
        super().__init__(f"no session {session_id!r}")

    def api_detail(self) -> str:
        return "no such session"  # not the id: a 404 tells nothing of others' data

    def user_message(self) -> str:
        return _("This session does not exist, or it is not yours.")


class OperationNotFound(StoreError):
    code = "not_found"
    http_status = 404

    def __init__(self, operation_id: str):
        self.operation_id = operation_id
        super().__init__(f"no operation {operation_id!r}")

    def api_detail(self) -> str:
        return "no such operation"

    def user_message(self) -> str:
        return _("This run does not exist, or it is not yours.")


class LabelNotFound(StoreError):
    code = "not_found"
    http_status = 404

    def __init__(self, label_id: object):
        self.label_id = label_id
        super().__init__(f"no label {label_id!r}")

    def api_detail(self) -> str:
        return "no such label"

    def user_message(self) -> str:
        return _("This label does not exist any more.")


class ShareLinkNotFound(StoreError):
    """No such link, or it was revoked: both look the same from outside."""

    code = "not_found"
    http_status = 404

    def __init__(self) -> None:
        super().__init__("no such share link")

    def api_detail(self) -> str:
        return "no such share link"

    def user_message(self) -> str:
        return _("This share link does not exist, or it was revoked.")


class NotApplicable(StoreError):
    """A valid request that the node it names cannot take: a resend of what is not a later
    prompt, a cherry-pick of what is not a panel."""

    code = "not_applicable"
    http_status = 409

    def user_message(self) -> str:
        return _("This tool does not apply to this node: %(why)s") % {"why": self}


class StaleLeaf(StoreError):
    """The append named a leaf that is no longer the session's leaf."""

    code = "stale_leaf"

    def __init__(self, session_id: str, expected: str | None, actual: str | None):
        self.session_id = session_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"session {session_id!r}: expected leaf {expected!r}, but the leaf is {actual!r}"
        )

    def user_message(self) -> str:
        return _("The session moved on in another tab; the page shows where it is now.")


class NothingToGoBackTo(StoreError):
    """ "Back to where I was" on a path no rewind has passed: there is no leaf it left."""

    code = "nothing_to_go_back_to"
    http_status = 409

    def __init__(self, session_id: str):
        self.session_id = session_id
        super().__init__(f"session {session_id!r}: no rewind on the active branch to undo")

    def user_message(self) -> str:
        return _("There is no “continue from here” on this branch to go back from.")


class InvalidEntry(StoreError, ValueError):
    """Input that cannot be kept: unknown parent, duplicate id, bad payload, bad text."""

    code = "invalid_entry"
    http_status = 422

    def user_message(self) -> str:
        return _("This cannot be kept: %(why)s") % {"why": self}


class InvalidField(InvalidEntry):
    """Input that cannot be kept, for a reason of one named field of the request."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


class ImageNotYours(InvalidEntry):
    """A character's look names an image that is not one of the session owner's (or no
    image at all: the two are told apart for no one)."""

    code = "image_not_yours"
    http_status = 404  # another user's data reads like no data at all

    def __init__(self, field: str, image_id: str):
        self.field = field
        self.image_id = image_id
        super().__init__(f"{field}: {image_id!r} is not one of your images")

    def user_message(self) -> str:
        return _("That picture is not one of your images.")


class SessionBusy(StoreError):
    """The session has an unfinished operation, so it cannot be navigated or edited."""

    code = "session_busy"

    def __init__(self, session_id: str, operation_id: str, parked: bool):
        self.session_id = session_id
        self.operation_id = operation_id
        self.parked = parked
        why = "waiting for an admin" if parked else "a run is in progress"
        super().__init__(f"session {session_id!r}: {why} (operation {operation_id!r})")

    def user_message(self) -> str:
        return _("A run is going; wait for it to finish or stop it.")


class SessionParked(SessionBusy):
    """The session's operation waits in the recovery inbox: new prompts wait too."""

    code = "waiting_for_admin"

    def __init__(self, session_id: str, operation_id: str):
        super().__init__(session_id, operation_id, parked=True)

    def user_message(self) -> str:
        return _("This session is waiting for an admin; try again once it is resolved.")


class PromptTooLong(StoreError):
    code = "prompt_too_long"
    http_status = 422

    def __init__(self, length: int, limit: int):
        self.length = length
        self.limit = limit
        super().__init__(f"the prompt has {length} characters; at most {limit} are accepted")

    def api_detail(self) -> str:
        return f"text: {self}"  # the field it refuses, as a 422 of the API names it

    def user_message(self) -> str:
        return _("The prompt is %(n)s characters long; at most %(limit)s are allowed.") % {
            "n": self.length,
            "limit": self.limit,
        }


class StaleLog(StoreError):
    """A runner decided from an operation log that has grown since: decide again.

    Another writer (a steering prompt, a stop, an approval, an admin) appended a record
    between the runner's read and its append; nothing of the append was written.
    """

    code = "stale_log"

    def __init__(self, operation_id: str, expected: int, actual: int | None):
        self.operation_id = operation_id
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"operation {operation_id!r}: decided at record {expected}, "
            f"but the log has {actual} records"
        )

    def user_message(self) -> str:
        return _("The run changed meanwhile; try again.")


class LeaseLost(StoreError):
    """A runner's lease was taken over: its fencing number no longer matches."""

    code = "lease_lost"

    def __init__(self, operation_id: str, fencing: int):
        self.operation_id = operation_id
        self.fencing = fencing
        super().__init__(f"operation {operation_id!r}: lease {fencing} is no longer held")

    def user_message(self) -> str:
        return _("The run changed meanwhile; try again.")


class OperationStateConflict(StoreError):
    """A write from the web that the operation's current state does not allow."""

    code = "conflict"


class PromptRateLimited(StoreError):
    """Too many prompts from one user in the current minute."""

    code = "rate_limited"
    http_status = 429

    def __init__(self, limit: int, retry_after: int):
        self.limit = limit
        self.retry_after = retry_after
        super().__init__(f"at most {limit} prompts a minute; try again in {retry_after} s")

    def user_message(self) -> str:
        return _("Too many prompts: at most %(limit)s a minute. Try again in %(s)s s.") % {
            "limit": self.limit,
            "s": self.retry_after,
        }


class ImportRefused(StoreError):
    """The file cannot be imported; nothing was written."""

    code = "import_refused"
    http_status = 422

    def __init__(self, line_no: int, reason: str):
        self.line_no = line_no
        self.reason = reason
        super().__init__(f"line {line_no}: {reason}")

    def user_message(self) -> str:
        return _("Line %(line)s: %(reason)s. Nothing was imported.") % {
            "line": self.line_no,
            "reason": self.reason,
        }


class BundleTooLarge(StoreError):
    """The file is larger than ``JAIWEB_MAX_BUNDLE_BYTES``; nothing was read past it."""

    code = "bundle_too_large"
    http_status = 413

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(f"the session file is larger than {limit} bytes (JAIWEB_MAX_BUNDLE_BYTES)")

    def user_message(self) -> str:
        return _("The file is larger than %(limit)s bytes, the most an import takes.") % {
            "limit": self.limit
        }


class ImportConflict(StoreError):
    """Another import wrote one of the same images at the same moment; nothing was written."""

    code = "import_conflict"

    def __init__(self, image_id: str):
        self.image_id = image_id
        super().__init__(f"image {image_id!r} was written by another import meanwhile; try again")

    def user_message(self) -> str:
        return _("Another import wrote the same pictures at the same moment; try again.")
