"""Reading a ``multipart/form-data`` body the way the loopback servers' real counterparts
do (aiohttp's ``request.post()``, OpenAI's form parser): each part's field name, its file
name and content type when it is a file, and its bytes."""

from __future__ import annotations

from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import HTTP


@dataclass(frozen=True)
class Part:
    name: str
    data: bytes
    filename: str | None = None
    content_type: str | None = None

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def form_parts(content_type: str, body: bytes) -> list[Part]:
    """The parts of a multipart/form-data body, in order; empty when it is not one."""
    if not content_type.lower().startswith("multipart/form-data"):
        return []
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode("latin-1") + body
    )
    if not message.is_multipart():
        return []
    parts = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name is None:
            continue
        filename = part.get_filename()
        parts.append(
            Part(
                name=str(name),
                data=part.get_payload(decode=True) or b"",
                filename=filename,
                content_type=part.get_content_type() if filename is not None else None,
            )
        )
    return parts


def form_fields(parts: list[Part]) -> dict[str, Part]:
    """The parts by field name (the last of a repeated name, as a form's ``get`` gives)."""
    return {part.name: part for part in parts}
