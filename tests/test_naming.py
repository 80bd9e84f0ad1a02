from __future__ import annotations

import pytest

from tvmdev.errors import TvmdevError
from tvmdev.model.device import device_name
from tvmdev.naming import camel


@pytest.mark.parametrize("snake,expected", [
    ("woofles", "Woofles"), ("uart_accel", "UartAccel"), ("ethos_u", "EthosU"),
    ("npu2_core", "Npu2Core"),
])
def test_camel(snake: str, expected: str) -> None:
    assert camel(snake) == expected


def test_hyphens_become_underscores() -> None:
    assert device_name("ethos-u") == "ethos_u"


@pytest.mark.parametrize("bad,message", [
    ("int", "device name 'int' is a C keyword"),
    ("_Bool", "device name '_Bool' is reserved for the C implementation"),
    ("9lives", "device name '9lives' starts with a digit"),
    ("__npu", "device name '__npu' is reserved for the C implementation"),
    ("npu.0", "device name 'npu.0' is not a valid C identifier"),
    ("Woofles", "device name 'Woofles' must be lower case"),
    ("a__b", "device name 'a__b' has a leading, trailing or doubled '_'"),
    ("malloc", "device name 'malloc' is reserved by the C standard library"),
    ("", "device name must not be empty"),
])
def test_bad_names(bad: str, message: str) -> None:
    with pytest.raises(TvmdevError) as exc:
        device_name(bad)
    assert exc.value.message == message
