"""Public names (loaded lazily by __init__.py; mypy reads this)."""

from .engine import DeviceActivation, Program, compile, device_activation, evaluate

__all__ = ["DeviceActivation", "Program", "compile", "device_activation", "evaluate"]
