"""The ``drasnap`` command line: thin commands over ``snapshot`` and ``store``."""
