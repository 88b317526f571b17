"""``python -m tools`` runs the ``drasnap`` command line."""

from drasnap.tools.entry import main

main()
