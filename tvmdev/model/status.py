"""The status codes every device function and kernel returns (``tvm/device/status.h``)."""

from __future__ import annotations

from dataclasses import dataclass

API_VERSION = 1
"""Bumped whenever the generated C API changes incompatibly; compiled into every header."""


@dataclass(frozen=True)
class Status:
    macro: str
    value: int
    doc: str


STATUSES: tuple[Status, ...] = (
    Status("TVM_DEVICE_OK", 0, "Success."),
    Status("TVM_DEVICE_PENDING", 1,
           "The call started a job (a copy, an operator) that ends at the device's next "
           "Wait; positive, so `ret < 0` error checks are unchanged."),
    Status("TVM_DEVICE_ERR_BUSY", -1,
           "The device is in use and the call would have to wait; try again later."),
    Status("TVM_DEVICE_ERR_TIMEOUT", -2,
           "The device did not become available or did not answer in time."),
    Status("TVM_DEVICE_ERR_NOT_READY", -3,
           "The device is missing, not initialised, not ready or not activated."),
    Status("TVM_DEVICE_ERR_INVALID", -4,
           "An argument is invalid (a NULL pointer, an out-of-range value, a wrong state)."),
    Status("TVM_DEVICE_ERR_IO", -5,
           "The driver or the hardware reported an error while talking to the device."),
    Status("TVM_DEVICE_ERR_UNSUPPORTED", -6,
           "The device or driver does not support the requested operation."),
    Status("TVM_DEVICE_DECLINED", -7,
           "A kernel declines this call (shape, layout or CPU feature it cannot serve); "
           "the executor falls back to the next kernel registered for the operator. "
           "Never returned by tvmgen_<model>_run unless no kernel accepts the call."),
)

BY_VALUE = {s.value: s for s in STATUSES}


def describe(code: int) -> str:
    """``-2`` -> ``TVM_DEVICE_ERR_TIMEOUT (-2)``; unknown codes are shown as numbers."""
    status = BY_VALUE.get(code)
    return f"{status.macro} ({code})" if status else str(code)
