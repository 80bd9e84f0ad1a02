"""build.json: what a firmware build found and its run measured (the stack), written
beside the build in the build folder. plan.json, beside the executor, stays what
generation wrote."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import __version__
from .planfile import json_lines

BUILD_JSON = "build.json"


def build_json(model: str, board: str, program: str, stack: Mapping[str, Any]) -> str:
    """The build's facts: the program built for ``board`` and its stack below the run
    function (:meth:`tvmdev.inspect.stack.StackUsage.to_json`, with what a run measured
    once one has)."""
    return json_lines({"generator": f"tvmdev {__version__}", "model": model, "board": board,
                       "program": program, "stack": dict(stack)}) + "\n"
