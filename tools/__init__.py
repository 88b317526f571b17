"""The ``drasnap`` command line: thin commands over ``snapshot``, ``snapshot.simulation`` and
``store``: parse, call the library, print. Each command imports the library where it runs, so
``--help`` and usage errors answer at once.
"""
