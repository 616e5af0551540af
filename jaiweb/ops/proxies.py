"""The client's address behind reverse proxies: believe exactly the proxies configured.

A client may send any X-Forwarded-For it likes, and a proxy such as nginx with
``$proxy_add_x_forwarded_for`` only appends the address it saw to what came in. So the
list is read from the right: the entries the trusted proxies appended are skipped, and
the first address no trusted proxy holds is the client's, the one the last trusted
proxy saw. Anything further left was written by the client and is never believed.

With no trusted proxy (``JAIWEB_TRUSTED_PROXIES`` unset), X-Forwarded-For is ignored and
the client's address is the peer's. Web processes therefore run daphne *without*
``--proxy-headers``, which would put the leftmost entry in REMOTE_ADDR before this
middleware could see the peer.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Sequence

from django.conf import settings
from django.http import HttpRequest, HttpResponse

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _address(text: str) -> Address | None:
    """Read an IP address as a forwarding header may write it (bare, ``[v6]``,
    ``[v6]:port`` or ``v4:port``); return None when it is not one."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: Address, proxies: Iterable[Network]) -> bool:
    return any(address.version == net.version and address in net for net in proxies)


def client_address(peer: str, forwarded_for: str, proxies: Sequence[Network]) -> str:
    """Return the client's address, given the peer's, the X-Forwarded-For header (entries
    separated by commas, oldest first) and the trusted proxies.

    An untrusted peer is the client. From a trusted peer, the header is walked from the
    right past every trusted proxy; the first address that is not one is the client. An
    entry that is not an address stops the walk at the proxy that passed it on, since no
    proxy writes such an entry itself. A header of trusted proxies only gives its
    leftmost, the first proxy of the chain.
    """
    seen = _address(peer)
    if seen is None or not _trusted(seen, proxies):
        return peer
    for entry in reversed([e for e in forwarded_for.split(",") if e.strip()]):
        address = _address(entry)
        if address is None:
            break
        seen = address
        if not _trusted(address, proxies):
            break
    return str(seen)


class ClientAddressMiddleware:
    """Sets REMOTE_ADDR to the client's address (``client_address``). It comes first in
    MIDDLEWARE, so everything after it sees the client's address."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        proxies = settings.JAIWEB_TRUSTED_PROXIES
        if proxies:
            peer = request.META.get("REMOTE_ADDR", "")
            forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
            request.META["REMOTE_ADDR"] = client_address(peer, forwarded, proxies)
        return self.get_response(request)
