"""``python -m tools`` runs the ``drasnap`` command line."""

from tools.entry import main

main()
