"""C identifiers: the one function that spells a name in C, validation, reserved words
and macros, case conversion.

Every name of a model (tensor, operator, device instance, device kind, the model) reaches
C through :func:`c_spelling` (which turns any string into a readable identifier) or
:func:`check_identifier` (which refuses what is not one already). What the generated code
then derives from those spellings, and the check that no two of them clash, is
:mod:`tvmdev.model.cnames`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from .errors import TvmdevError, Where, shown

C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
_Imaginary _Noreturn _Static_assert _Thread_local bool true false alignas alignof
static_assert thread_local nullptr typeof typeof_unqual constexpr
""".split())

# The generated headers are also included from C++ (extern "C"): these cannot be members.
CXX_KEYWORDS = frozenset("""
and and_eq asm bitand bitor catch char8_t char16_t char32_t class co_await co_return
co_yield compl concept consteval constinit const_cast decltype delete dynamic_cast explicit
export friend mutable namespace new noexcept not not_eq operator or or_eq private protected
public reinterpret_cast requires static_cast template this throw try typeid typename using
virtual wchar_t xor xor_eq
""".split())

# Names that would shadow the standard library if used as a device instance or kind.
RESERVED = frozenset("""
NULL errno assert main malloc calloc realloc free memcpy memset exit abort stdin stdout stderr
offsetof size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
""".split())

# Object-like macros of the C and POSIX headers, of newlib, CMSIS and the compilers, and
# tvmdev's own: a struct member or variable spelled like one of them is replaced by the
# preprocessor. Families first (the C standard reserves E*, SIG*, LC_*, FE_*, ... for its
# headers; header guards end in _H or _H_; a trailing '_' escapes every pattern), then
# the single names. tests/test_cnames.py checks the list against gcc's and newlib's headers.
_FAMILIES = [
    r"E[A-Z0-9]", r"SIG", r"SA_", r"SI_", r"SS_", r"SEGV_", r"ILL_", r"FPE_", r"BUS_",
    r"TRAP_", r"CLD_", r"POLL_", r"LC_", r"FP_", r"FE_", r"FLT_", r"DBL_", r"LDBL_",
    r"CLOCK", r"CLK_", r"PTHREAD_", r"SCHED_", r"SEEK_", r"MB_", r"BC_", r"XATTR_", r"HUGE_",
    r"MATH_", r"ARM_", r"DRIVER_", r"CMSIS_", r"TVM", r"CONFIG_",
    r"PRI[diouxX]", r"SCN[diouxX]", r"U?INT(?:[0-9]+|_LEAST[0-9]+|_FAST[0-9]+|MAX|PTR)_",
    r"sa_", r"si_", r"sigev_", r"sival_", r"sched_",
]
_MACRO_FAMILY = re.compile("(?:" + "|".join(_FAMILIES) + r")(?:[A-Za-z0-9_]*[A-Za-z0-9])?"
                           r"|[A-Z0-9_]*_(?:MAX|MIN)|[A-Z][A-Z0-9_]*_H_?")
MACROS = frozenset("""
NULL BUFSIZ CHAR_BIT DECIMAL_DIG I INFINITY NAN L_ctermid L_tmpnam P_tmpdir TMP_MAX NSIG
MINSIGSTKSZ NDEBUG MAX_CANON MAX_INPUT PIPE_BUF TIMER_ABSTIME TIME_UTC HAVE_INITFINI_ARRAY
WEOF WCONTINUED WEXITED WNOHANG WNOWAIT WSTOPPED WUNTRACED M_E M_LOG2E M_LOG10E M_LN2 M_LN10
M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2 M_SQRT1_2 ONCE_FLAG_INIT
TSS_DTOR_ITERATIONS stdin stdout stderr errno math_errhandling tzname bool true false
complex imaginary alignas alignof noreturn static_assert thread_local and and_eq bitand
bitor compl not not_eq or or_eq xor xor_eq unix linux i386 sun sparc mips vax
osWaitForever osThreadDetached osThreadJoinable osMutexRecursive osMutexPrioInherit
osMutexRobust TZ_MODULEID_T
""".split())

# Type names of the C and POSIX headers (the host harness includes <stdlib.h>): a
# variable at file scope spelled like one (a device 't' gives dev_t) clashes with it.
TYPEDEFS = frozenset("""
blkcnt_t blksize_t clock_t clockid_t dev_t fsblkcnt_t fsfilcnt_t gid_t id_t ino_t key_t
mode_t nlink_t off_t pid_t size_t ssize_t suseconds_t time_t timer_t uid_t useconds_t
ptrdiff_t wchar_t wint_t max_align_t fpos_t div_t ldiv_t lldiv_t locale_t sigset_t
sig_atomic_t va_list jmp_buf FILE mbstate_t intmax_t uintmax_t intptr_t uintptr_t
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t pthread_t
pthread_attr_t pthread_mutex_t pthread_cond_t pthread_key_t pthread_once_t
""".split())

MAX_LENGTH = 63  # C99's significant initial characters of an internal identifier

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*\Z")


def reserved(spelling: str) -> str | None:
    """Why ``spelling`` cannot be a member, variable or macro of generated code (a keyword
    or a macro some header defines), or None."""
    if spelling in C_KEYWORDS:
        return "a C keyword"
    if spelling in CXX_KEYWORDS:
        return "a C++ keyword"
    if spelling in MACROS or _MACRO_FAMILY.fullmatch(spelling):
        if spelling.startswith("TVM"):
            return "reserved for tvmdev's headers (TVM*)"
        return "a macro of the C, POSIX or CMSIS headers"
    if spelling.startswith("__") or re.match(r"_[A-Z]", spelling):
        return "reserved for the C implementation"
    return None


def c_spelling(name: str) -> str:
    """The C spelling of any name: the name itself when it is a plain identifier, else a
    readable one (``serving_default_input_1:0`` -> ``serving_default_input_1_0``, ``é`` ->
    ``e``, other non-ASCII letters as ``u4e2d``, no leading or trailing '_', a leading
    digit behind ``t_``).
    Longer than 63 characters: the first 54 and 8 hex digits of its SHA-256. A keyword or
    a macro gets a trailing '_' (``EOF`` -> ``EOF_``). Unique only per name: the caller
    makes it unique among the others (:mod:`tvmdev.model.cnames`)."""
    if _IDENT.match(name) and not name.startswith("_"):
        out = name
    else:
        parts = []
        for ch in unicodedata.normalize("NFKD", name):
            if ch.isascii():
                parts.append(ch if ch.isalnum() or ch == "_" else "_")
            elif unicodedata.combining(ch):
                continue  # the accent of a decomposed letter
            else:
                parts.append(f"_u{ord(ch):x}_" if ch.isalnum() else "_")
        out = re.sub(r"_+", "_", "".join(parts)).strip("_")
        if not out or out[0].isdigit():
            out = "t_" + out if out else "t"
    if len(out) > MAX_LENGTH:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        out = out[:MAX_LENGTH - 9].rstrip("_") + "_" + digest
    while reserved(out):
        out += "_"
    return out


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
    if len(name) > MAX_LENGTH:
        raise TvmdevError(f"{what} '{name[:20]}...' has {len(name)} characters; at most "
                          f"{MAX_LENGTH}", where, hint="pick a shorter name")
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
