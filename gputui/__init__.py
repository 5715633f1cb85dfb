"""gputui: a terminal UI for on-call operators of GPU clusters run by the NVIDIA GPU Operator."""

__version__ = "0.1.0"
