"""Why an export cannot be made on this machine."""

from __future__ import annotations


class ExportUnavailable(Exception):
    """A library or font the exports need is missing: the message says what to install.
    Nothing about the session is wrong; the faces answer 503 with this message."""

    code = "export_unavailable"
