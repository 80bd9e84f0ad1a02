"""The command line: parses arguments and wires the pipeline's stages together."""

from __future__ import annotations

from .main import main

__all__ = ["main"]
