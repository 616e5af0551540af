"""The offline director: a deterministic stand-in for the model, so the studio works with no key.

What it understands (commands and keywords, in both languages) is ``docs/DIRECTOR.md``.
"""

from __future__ import annotations

from jaiweb.agent.providers.offline.director import OfflineDirector
from jaiweb.agent.providers.offline.keywords import RULES

__all__ = ["RULES", "OfflineDirector"]
