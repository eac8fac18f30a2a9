"""One bounded cache for the work done once per message shape (a leaf: every layer may use it).

Plans are compiled per tuple of joint-state names, per index set, per cfg key tuple. A robot
sees a few such shapes, but a buggy publisher could send a new one with every message, so each
cache keeps the ``MAX_ENTRIES`` most recently used: ``functools.lru_cache`` around the function
that builds one entry from its key. Keys are explicit, hashable values compared by equality
(name tuples, index bytes), never by identity.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import TypeVar

#: Entries kept per cache (distinct shapes a robot's publishers plausibly send, with room).
MAX_ENTRIES = 64

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def bounded_cache(build: Callable[[K], V]) -> Callable[[K], V]:
    """``build`` with its results kept for the ``MAX_ENTRIES`` most recently used keys."""
    return functools.lru_cache(maxsize=MAX_ENTRIES)(build)
