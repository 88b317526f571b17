"""Benchmarks behind ``drasnap bench``: each workload reports medians measured in one run, and
the ratios between backends measured side by side. They never write into a user's database:
each workload builds its own, in a temporary folder.
"""
