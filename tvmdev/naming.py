"""C identifiers: validation, reserved words and case conversion."""

from __future__ import annotations

import re

from .errors import TvmdevError, Where, shown

C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
_Imaginary _Noreturn _Static_assert _Thread_local bool true false alignas alignof
static_assert thread_local nullptr typeof typeof_unqual constexpr
""".split())

# Names that would shadow the standard library or common macros if used as a device or
# tensor name in generated code.
RESERVED = frozenset("""
NULL errno assert main malloc calloc realloc free memcpy memset exit abort stdin stdout stderr
offsetof size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
""".split())

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*\Z")


def check_identifier(name: object, what: str, where: Where | None = None, *,
                     snake: bool = False) -> str:
    """Return ``name`` if it is usable as a C identifier, else raise :class:`TvmdevError`."""
    if not isinstance(name, str) or not name:
        raise TvmdevError(f"{what} must be a non-empty string, got {shown(name)}", where)
    if name[0].isdigit():
        raise TvmdevError(f"{what} {shown(name)} starts with a digit", where,
                          hint="C identifiers start with a letter or '_'")
    if not _IDENT.match(name):
        raise TvmdevError(f"{what} {shown(name)} is not a valid C identifier", where,
                          hint="use letters, digits and '_' only")
    if name.startswith("__") or (name.startswith("_") and len(name) > 1 and name[1].isupper()):
        raise TvmdevError(f"{what} {shown(name)} is reserved for the C implementation", where,
                          hint="names starting with '__' or '_' and a capital are reserved")
    if name in C_KEYWORDS:
        raise TvmdevError(f"{what} {shown(name)} is a C keyword", where, hint="pick another name")
    if name in RESERVED:
        raise TvmdevError(f"{what} {shown(name)} is reserved by the C standard library", where,
                          hint="pick another name")
    if snake and not _SNAKE.match(name):
        raise TvmdevError(f"{what} {shown(name)} must be lower snake_case", where,
                          hint="for example: woofles, uart_accel, ethos_u")
    return name


def camel(name: str) -> str:
    """snake_case to CamelCase: ``uart_accel`` -> ``UartAccel``, ``ethos_u`` -> ``EthosU``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


def upper(name: str) -> str:
    """The macro spelling of a name: ``uart_accel`` -> ``UART_ACCEL``."""
    return name.upper()


def sanitize(name: str) -> str:
    """The C spelling of an arbitrary name (used to detect collisions)."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if out and out[0].isdigit():
        out = "_" + out
    return out
