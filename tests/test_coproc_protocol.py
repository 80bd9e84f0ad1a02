"""The co-processor link's framing (runtime/coproc/protocol.c), compiled for the host and
driven through ctypes: encode and decode, the CRC against Python's own CRC-CCITT
(binascii.crc_hqx, an independent implementation of the same polynomial), resync after
garbage, truncated and corrupted frames, and the job descriptor's round trip."""

from __future__ import annotations

import binascii
import ctypes
import random
import struct
from pathlib import Path

import pytest
from conftest import REPO, need_tool, run_ok

PROTOCOL = REPO / "runtime/coproc"
SYNC, MAX_PAYLOAD = 0xA5, 2048
MAX_FRAME = 5 + MAX_PAYLOAD + 2


class Frame(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint8), ("seq", ctypes.c_uint8),
                ("length", ctypes.c_uint16), ("payload", ctypes.POINTER(ctypes.c_uint8))]


class Decoder(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_uint8 * MAX_FRAME), ("len", ctypes.c_uint32),
                ("frames", ctypes.c_uint32), ("bad_frames", ctypes.c_uint32),
                ("skipped", ctypes.c_uint32), ("returned", ctypes.c_uint8)]


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    cc = need_tool("cc", "apt-get install gcc")
    out = tmp_path_factory.mktemp("protocol") / "libprotocol.so"
    run_ok([cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
            str(PROTOCOL / "protocol.c"), "-o", str(out)])
    return ctypes.CDLL(str(out))


def reference_frame(kind: int, seq: int, payload: bytes) -> bytes:
    """The format protocol.h documents, built here independently of protocol.c."""
    body = bytes([kind, seq]) + struct.pack("<H", len(payload)) + payload
    return bytes([SYNC]) + body + struct.pack("<H", binascii.crc_hqx(body, 0xFFFF))


def encode(lib: ctypes.CDLL, kind: int, seq: int, head: bytes, tail: bytes = b"") -> bytes:
    out = (ctypes.c_uint8 * MAX_FRAME)()
    n = lib.tvmdev_coproc_encode(out, kind, seq, head, len(head), tail, len(tail))
    return bytes(out[:n])


def feed(lib: ctypes.CDLL, d: Decoder, data: bytes) -> list[tuple[int, int, bytes] | str]:
    """What the decoder makes of ``data``, byte by byte: frames and 'bad' drops."""
    seen: list[tuple[int, int, bytes] | str] = []
    frame = Frame()
    for b in data:
        r = lib.tvmdev_coproc_feed(ctypes.byref(d), ctypes.c_uint8(b), ctypes.byref(frame))
        if r == 1:
            seen.append((frame.type, frame.seq, bytes(frame.payload[:frame.length])))
        elif r == -1:
            seen.append("bad")
    return seen


def fresh(lib: ctypes.CDLL) -> Decoder:
    d = Decoder()
    lib.tvmdev_coproc_decoder_reset(ctypes.byref(d))
    return d


def test_crc_is_ccitt_false(lib: ctypes.CDLL) -> None:
    lib.tvmdev_coproc_crc16.restype = ctypes.c_uint16
    assert lib.tvmdev_coproc_crc16(0xFFFF, b"123456789", 9) == 0x29B1  # the check value
    data = random.Random(1).randbytes(300)
    assert lib.tvmdev_coproc_crc16(0xFFFF, data, 300) == binascii.crc_hqx(data, 0xFFFF)


def test_encode_matches_the_documented_format(lib: ctypes.CDLL) -> None:
    rng = random.Random(2)
    for n in (0, 1, 4, 255, 256, MAX_PAYLOAD):
        payload = rng.randbytes(n)
        assert encode(lib, 0x02, n % 256, payload[:3], payload[3:]) == \
            reference_frame(0x02, n % 256, payload)
    assert encode(lib, 0x02, 0, bytes(MAX_PAYLOAD + 1)) == b""  # too long: refused


def test_decode_frames_back_to_back(lib: ctypes.CDLL) -> None:
    frames = [(0x04, i, random.Random(i).randbytes(i * 37 % 600)) for i in range(12)]
    stream = b"".join(reference_frame(*f) for f in frames)
    d = fresh(lib)
    assert feed(lib, d, stream) == frames
    assert (d.frames, d.bad_frames, d.skipped) == (12, 0, 0)


def test_resync_after_garbage_and_corruption(lib: ctypes.CDLL) -> None:
    good1, good2 = reference_frame(0x06, 7, b"\x00" * 8), reference_frame(0x07, 8, b"ok!!")
    corrupt = bytearray(reference_frame(0x04, 9, b"payload"))
    corrupt[-1] ^= 0x01  # a bad CRC
    garbage = bytes([0x13, SYNC, 0x00, 0xFF, 0xFF, 0x42, SYNC])  # a sync with a huge length
    d = fresh(lib)
    seen = feed(lib, d, garbage + good1 + bytes(corrupt) + good2)
    frames = [s for s in seen if s != "bad"]
    assert frames == [(0x06, 7, b"\x00" * 8), (0x07, 8, b"ok!!")]
    assert "bad" in seen[seen.index(frames[0]):]  # the corrupted frame was reported
    assert d.frames == 2 and d.bad_frames >= 2


def test_truncated_frame_then_a_good_one(lib: ctypes.CDLL) -> None:
    """A frame cut short (the sender died) is dropped once enough bytes follow to show
    its CRC cannot match; the frames inside those bytes are still found, in order. A
    receiver that stops waiting resets its decoder, and the next frame is found at once."""
    cut = reference_frame(0x04, 1, b"x" * 40)[:20]
    good = reference_frame(0x01, 2, b"hello frame")
    good2 = reference_frame(0x06, 3, b"\x01\x02\x03\x04\x05\x06\x07\x08")
    d = fresh(lib)
    seen = feed(lib, d, cut + good + good2)
    assert [s for s in seen if s != "bad"] == [(0x01, 2, b"hello frame"),
                                               (0x06, 3, bytes(range(1, 9)))]
    d = fresh(lib)
    assert feed(lib, d, cut + good) == []  # the cut frame still waits for its bytes
    lib.tvmdev_coproc_decoder_reset(ctypes.byref(d))  # a timeout: start afresh
    assert feed(lib, d, good) == [(0x01, 2, b"hello frame")]


def test_job_round_trip(lib: ctypes.CDLL) -> None:
    words = list(range(100, 126))
    job = (ctypes.c_int32 * 26)(*words)
    mult = (ctypes.c_int32 * 3)(1 << 30, -5, 12345)
    shift = (ctypes.c_int32 * 3)(-1, -7, 2)
    out = (ctypes.c_uint8 * MAX_PAYLOAD)()
    n = lib.tvmdev_coproc_job_encode(out, 2, job, 3, mult, shift)
    assert n == 4 + 4 * 26 + 8 * 3
    raw = bytes(out[:n])
    assert struct.unpack("<HH26i3i3i", raw) == (2, 3, *words, 1 << 30, -5, 12345, -1, -7, 2)
    back = (ctypes.c_int32 * 26)()
    m2, s2 = (ctypes.c_int32 * 241)(), (ctypes.c_int32 * 241)()
    kernel = ctypes.c_uint16()
    assert lib.tvmdev_coproc_job_decode(out, n, ctypes.byref(kernel), back, m2, s2) == 3
    assert kernel.value == 2 and list(back) == words
    assert list(m2[:3]) == list(mult) and list(s2[:3]) == list(shift)
    assert lib.tvmdev_coproc_job_decode(out, n - 1, ctypes.byref(kernel), back, m2, s2) == -3
    too_many = (ctypes.c_int32 * 300)()
    assert lib.tvmdev_coproc_job_encode(out, 2, job, 300, too_many, too_many) == 0


def test_protocol_header_documents_every_type() -> None:
    text = (PROTOCOL / "protocol.h").read_text()
    for name in ("HELLO", "WRITE", "READ", "DATA", "RUN", "DONE", "STATUS", "ERROR", "DEBUG"):
        assert f" *   {name}" in text and f"TVMDEV_COPROC_{name} = 0x" in text, name
    assert Path(PROTOCOL / "protocol.c").is_file()
