"""The simulation scenarios behind ``drasnap simulate``: scale-up and scale-down.

Each scenario is configurable and deterministic for a given seed, keeps its own progress in the
store (kind ``Simulation``, key ``run``) so that a checkpoint holds both the cluster state and
where the simulation was, and resumes from the last checkpoint after a crash.
"""
