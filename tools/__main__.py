"""``python -m tools`` runs the ``drasnap`` command line."""

from tools.cli import main

main()
