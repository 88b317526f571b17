"""The expanders' ``--expander`` names, in their own module because it is light: the command
line lists them in its help and the settings check a chain against them while the command line
is parsed, before the expanders (and the scheduler they import) are loaded.

``expanders.STRATEGIES`` holds one strategy per name, in this order
(``tests/snapshot/autoscaler/test_expander_names.py`` keeps the two equal).
"""

from __future__ import annotations

__all__ = ["EXPANDERS"]

EXPANDERS = ("least-waste", "most-pods", "least-nodes", "priority", "random")
