"""The five names ``doctor --bag`` (``cli/doctor/recording.py``) imports from here, kept while
that module is not edited (issue #44's tests are written for it); everything else imports
them from where they live: ``errors`` (``BagError``), ``reader`` (``InputBag``,
``bag_location``, ``open_bag``) and ``qos`` (``is_latched``). Holds nothing of its own;
to be removed once ``recording.py`` imports those modules.
"""

from __future__ import annotations

from .errors import BagError
from .qos import is_latched
from .reader import InputBag, bag_location, open_bag

__all__ = ["BagError", "InputBag", "bag_location", "is_latched", "open_bag"]
