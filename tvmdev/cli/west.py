"""``west tvmdev``: tvmdev's command line as a west extension command.

Inside a west workspace the Zephyr tree is known; when ZEPHYR_BASE is not set, it is
taken from the workspace (``zephyr.base`` in the west configuration, else ``zephyr``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from west.commands import WestCommand

# Loaded by west from its file, not as part of the package: absolute imports only.
from tvmdev.cli.main import main

DESCRIPTION = """\
Run tvmdev inside a west workspace: the same commands and options as the tvmdev program.

  west tvmdev new-device woofles --platform zephyr --zephyr-driver -o modules/woofles
  west tvmdev run examples/mlp/mlp.yaml --board native_sim_64
"""


class TvmdevCommand(WestCommand):
    def __init__(self) -> None:
        super().__init__("tvmdev", "tvmdev: device APIs, AOT executors, build and run",
                         DESCRIPTION, accepts_unknown_args=True)

    def do_add_parser(self, parser_adder: Any) -> argparse.ArgumentParser:
        """Register ``west tvmdev``, which passes every argument on to tvmdev."""
        parser: argparse.ArgumentParser = parser_adder.add_parser(
            self.name, help=self.help, description=self.description,
            formatter_class=argparse.RawDescriptionHelpFormatter, add_help=False)
        parser.add_argument("tvmdev_args", nargs=argparse.REMAINDER,
                            help="arguments of the tvmdev command")
        return parser

    def do_run(self, args: argparse.Namespace, unknown: list[str]) -> None:
        """Run tvmdev in the workspace, with ZEPHYR_BASE taken from it when unset."""
        if not os.environ.get("ZEPHYR_BASE") and self.topdir:
            base = self.config.get("zephyr.base") if self.config is not None else None
            candidate = Path(self.topdir) / (base or "zephyr")
            if candidate.is_dir():
                os.environ["ZEPHYR_BASE"] = str(candidate)
        code = main([*unknown, *args.tvmdev_args])
        if code:
            raise SystemExit(code)
