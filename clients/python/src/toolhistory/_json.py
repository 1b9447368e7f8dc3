"""JSON text exactly as JavaScript's `JSON.stringify` writes it, and string lengths as JavaScript counts them.

The TypeScript client derives event ids from JSON text and cuts payloads by their JSON size and their length in
UTF-16 code units; this package must give the same ids and the same cuts for the same input, byte for byte. Python's
`json.dumps` differs from `JSON.stringify` in numbers (`1.0`, `1e-05`), in the order of integer-like object keys
(JavaScript puts them first), and in lone surrogates (which it cannot encode as UTF-8 without escaping them).
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

# The C encoder of Python's json module: escapes `"`, `\\` and the control characters as JSON.stringify does
# (`\n`, `\u0007` in lower-case hex) and leaves every other character as it is.
_encode_string = json.encoder.encode_basestring

_SURROGATE = re.compile("[\ud800-\udfff]")
# A JavaScript array index: a canonical decimal integer below 2**32 - 1.
_ARRAY_INDEX = re.compile(r"(?:0|[1-9][0-9]{0,9})\Z")
_MAX_ARRAY_INDEX = 2**32 - 2


def as_javascript_string(text: str) -> str:
    """The string JavaScript would hold for `text`: adjacent surrogate code points joined into the one character
    they encode in UTF-16 (Python keeps them apart), lone surrogates left as they are."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf16_length(text: str) -> int:
    """The length of `text` as JavaScript counts it: UTF-16 code units (a character beyond U+FFFF counts two)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf8_length(json_text: str) -> int:
    """The size in bytes of JSON text this module wrote (it has no lone surrogates: they are escaped)."""
    return len(json_text.encode("utf-8"))


def _string(text: str) -> str:
    text = as_javascript_string(text)
    encoded: str = _encode_string(text)
    if _SURROGATE.search(encoded) is None:
        return encoded
    # JSON.stringify writes a lone surrogate as an escape in lower-case hex.
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", encoded)


def _number(value: float) -> str:
    """A finite float as JavaScript's Number::toString writes it: the shortest digits that read back as the same
    number (Python's repr finds the same ones), laid out by JavaScript's rules."""
    if value == 0:
        return "0"
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    # The value is 0.<digits> x 10**point.
    point = len(whole) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    count = len(digits)
    sign = "-" if value < 0 else ""
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * -point + digits
    power = point - 1
    exponent_text = f"e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + (digits if count == 1 else digits[0] + "." + digits[1:]) + exponent_text


def _ordered_keys(value: Mapping[str, object]) -> list[str]:
    """An object's keys in JavaScript's order: array indices first, ascending, then the others as inserted."""
    keys = list(value)
    indices = [key for key in keys if isinstance(key, str) and _ARRAY_INDEX.match(key) and int(key) <= _MAX_ARRAY_INDEX]
    if not indices:
        return keys
    index_set = set(indices)
    return sorted(indices, key=int) + [key for key in keys if key not in index_set]


def _write(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no JSON form")
        out.append(_number(value))
    elif isinstance(value, list):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        for index, key in enumerate(_ordered_keys(value)):
            if not isinstance(key, str):
                raise TypeError(f"object keys must be strings (got {type(key).__name__} {key!r})")
            if index:
                out.append(",")
            out.append(_string(key))
            out.append(":")
            _write(value[key], out)
        out.append("}")
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def to_json(value: object) -> str:
    """`value` (str, int, float, bool, None, list, dict with str keys) as JSON.stringify would write it.

    Raises TypeError for anything else, ValueError for NaN and the infinities.
    """
    if isinstance(value, str):
        return _string(value)
    out: list[str] = []
    _write(value, out)
    return "".join(out)
