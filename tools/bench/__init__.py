"""Benchmarks behind ``drasnap bench``: each workload reports medians measured in one run."""
