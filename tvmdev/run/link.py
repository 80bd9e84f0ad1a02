"""Two emulated boards joined by a serial line: a main board and a co-processor.

Each board is one ``qemu-system`` process. The co-processor's accelerator UART is a
listening socket chardev (``server=on,wait=off``: it boots at once, whether or not the
other end is there); the main board's is the client, with ``reconnect=1`` so that it finds
a co-processor restarted under it. The boards' console UARTs stay on their stdout. The
socket lives in a fresh temporary folder (a UNIX socket path is short, under 108 bytes).

    run = LinkedRun(main_board, main_elf, coproc_board, coproc_elf)
    result = run.run(faults=[Fault(2.0, "kill")])   # main's exit ends both

A fault is what a test does to the co-processor at a moment after the main board started,
or when the co-processor's console says something (``after``): ``kill`` (SIGKILL: it dies
mid-inference), ``restart`` (killed, then booted again on the same socket with a new
epoch on its command line, so it says HELLO with a new epoch). A co-processor that exits
by itself is booted again too.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TvmdevError
from ..load.board import Board

SOCKET_WAIT_S = 10.0  # how long the co-processor's QEMU may take to open its socket


@dataclass(frozen=True)
class Fault:
    """What happens to the co-processor ``at_s`` seconds after the main board started,
    or, with ``after``, once its console has printed that text (and ``at_s`` passed)."""

    at_s: float
    action: str  # "kill" or "restart"
    after: str | None = None


@dataclass
class LinkedResult:
    """Both consoles, and how each machine ended."""

    main: subprocess.CompletedProcess[str]
    coproc_stdout: str
    coproc_returncodes: list[int | None] = field(default_factory=list)
    timed_out: bool = False


def link_args(board: Board, uart: int, chardev: str) -> list[str]:
    """``board``'s QEMU arguments with serial port ``uart`` on ``chardev`` (the rest as
    the board data lists them: the console on stdio, the others on null)."""
    args = list(board.run.args)
    positions = [i + 1 for i, a in enumerate(args) if a == "-serial"]
    if uart >= len(positions):
        raise TvmdevError(f"board {board.name} lists {len(positions)} serial ports in its "
                          f"run.args: it has no UART{uart} to link", board.where)
    args[positions[uart]] = "chardev:link"
    return [*args, "-chardev", chardev]


def _pump(proc: subprocess.Popen[str], sink: list[str]) -> threading.Thread:
    """Collect ``proc``'s stdout in a thread (a full pipe would stall the emulator)."""
    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            sink.append(line)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


class LinkedRun:
    """A main board and a co-processor, their accelerator UARTs joined by a socket."""

    def __init__(self, main: Board, main_elf: Path, coproc: Board, coproc_elf: Path,
                 main_uart: int = 1, coproc_uart: int = 1,
                 main_args: tuple[str, ...] = ()) -> None:
        for board in (main, coproc):
            if board.run.qemu is None or not board.run.qemu.startswith("qemu-system"):
                raise TvmdevError(f"board {board.name} does not run under qemu-system: it "
                                  f"cannot be linked to another", board.where)
        self.main, self.main_elf, self.main_uart = main, main_elf, main_uart
        self.coproc, self.coproc_elf, self.coproc_uart = coproc, coproc_elf, coproc_uart
        self.main_args = main_args  # more QEMU options of the main board (-icount)
        self._coproc_out: list[str] = []
        self._procs: list[subprocess.Popen[str]] = []
        self._boots = 0  # the epoch each boot of the co-processor gets

    def _start_coproc(self, sock: Path) -> subprocess.Popen[str]:
        sock.unlink(missing_ok=True)
        assert self.coproc.run.qemu is not None
        self._boots += 1
        argv = [self.coproc.run.qemu,
                *link_args(self.coproc, self.coproc_uart,
                           f"socket,id=link,path={sock},server=on,wait=off"),
                "-kernel", str(self.coproc_elf), "-append", str(self._boots)]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True)
        self._procs.append(proc)
        _pump(proc, self._coproc_out)
        deadline = time.monotonic() + SOCKET_WAIT_S
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise TvmdevError(f"the co-processor ({self.coproc.name}) did not open its "
                                  f"socket", str(self.coproc_elf),
                                  log="".join(self._coproc_out)[-2000:] or None)
            time.sleep(0.01)
        return proc

    def _due(self, fault: Fault, now: float, seen: int) -> bool:
        """Whether ``fault`` happens now: its time has come and its text was printed."""
        if now < fault.at_s:
            return False
        return fault.after is None or any(fault.after in line
                                          for line in self._coproc_out[seen:])

    def run(self, faults: tuple[Fault, ...] | list[Fault] = (), timeout: float | None = None
            ) -> LinkedResult:
        """Start the co-processor, wait for its socket, run the main board to its exit
        (or ``timeout``, default the main board's) applying ``faults``; both machines are
        stopped when this returns."""
        timeout = self.main.run.timeout if timeout is None else timeout
        with tempfile.TemporaryDirectory(prefix="tvmdev-link-") as tmp:
            sock = Path(tmp) / "link.sock"
            try:
                return self._run(sock, sorted(faults, key=lambda f: f.at_s), timeout)
            finally:
                for proc in self._procs:
                    if proc.poll() is None:
                        proc.kill()
                    proc.wait()

    def _run(self, sock: Path, faults: list[Fault], timeout: float) -> LinkedResult:
        coproc = self._start_coproc(sock)
        assert self.main.run.qemu is not None
        argv = [self.main.run.qemu,
                *link_args(self.main, self.main_uart,
                           f"socket,id=link,path={sock},reconnect=1"),
                *self.main_args, "-kernel", str(self.main_elf)]
        main_out: list[str] = []
        main = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True)
        self._procs.append(main)
        reader = _pump(main, main_out)
        start = time.monotonic()
        codes: list[int | None] = []
        timed_out = False
        seen = 0  # the co-processor's console up to its latest boot
        while main.poll() is None:
            now = time.monotonic() - start
            if now > timeout:
                timed_out = True
                main.kill()
                break
            if faults and self._due(faults[0], now, seen):
                fault = faults.pop(0)
                coproc.kill()
                codes.append(coproc.wait())
                if fault.action == "restart":
                    seen = len(self._coproc_out)
                    coproc = self._start_coproc(sock)
            elif coproc.poll() is not None:  # it stopped by itself: boot it again
                codes.append(coproc.returncode)
                seen = len(self._coproc_out)
                coproc = self._start_coproc(sock)
            time.sleep(0.005)
        main.wait()
        reader.join(timeout=5)
        if coproc.poll() is None:
            coproc.kill()
        codes.append(coproc.wait())
        return LinkedResult(subprocess.CompletedProcess(argv, main.returncode,
                                                        "".join(main_out), ""),
                            "".join(self._coproc_out), codes, timed_out)
