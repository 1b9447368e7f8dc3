"""Cutting a payload that is too large to fit, as the TypeScript client does, so a big payload does not fail a turn.

Lengths are counted as JavaScript counts them (UTF-16 code units) and sizes are those of the JSON JavaScript's
JSON.stringify writes, so both clients cut the same payload at the same place (the shared test vectors in
libs/contract/test-vectors/fitted-events.json pin it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from toolhistory._json import to_json, utf8_length, utf16_length
from toolhistory.errors import InvalidToolEventError
from toolhistory.events import JsonValue, MaxResultChars, MaxResultCharsByTool
from toolhistory.validation import event_problems, event_too_large

TRUNCATED_ARGUMENTS_KEY = "truncatedArguments"
"""The one key of the object that stands for a call's arguments cut to fit:
`{"truncatedArguments": "<the start of their JSON text>…[truncated N chars]"}`. Arguments must stay a JSON object,
so the cut text is wrapped rather than sent as it is."""

TRUNCATION_TAIL = re.compile(r"…\[truncated [0-9,]+ chars\]\Z")
"""The truncation marker at the very end of a cut text: how a host tells a cut payload, as the service does."""

_PAYLOAD_FIELD = {"ToolCallRequested": "arguments", "ToolResultReceived": "result"}


def truncation_marker(removed: int) -> str:
    """What a cut text ends with, e.g. `…[truncated 4,900 chars]`: the number of characters (UTF-16 code units)
    removed, with en-US thousands separators."""
    return f"…[truncated {removed:,} chars]"


def _is_whole_number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def max_result_chars_problems(option: object) -> list[str]:
    """Every value of a `max_result_chars` option that is not a whole number of characters, 1 or more, and every
    unknown key; empty when the option is valid (or None)."""
    if option is None:
        return []
    problems: list[str] = []

    def check(at: str, value: object) -> None:
        if not _is_whole_number(value):
            problems.append(f"{at}: must be a whole number of characters, 1 or more (got {value!r})")

    if not isinstance(option, Mapping):
        check("max_result_chars", option)
        return problems
    for key, value in option.items():
        if key == "defaults":
            if value is not None:
                check("max_result_chars.defaults", value)
        elif key == "tools":
            if not isinstance(value, Mapping):
                problems.append("max_result_chars.tools: must be a mapping of tool names to their limits")
                continue
            for tool, limit in value.items():
                check(f"max_result_chars.tools.{tool}", limit)
        else:
            problems.append(f"max_result_chars.{key}: unknown key (allowed: defaults, tools)")
    return problems


def check_max_result_chars(option: object) -> None:
    """Raises ValueError naming every value of the option that is not a whole number of characters, 1 or more."""
    problems = max_result_chars_problems(option)
    if problems:
        raise ValueError("; ".join(problems))


def copy_max_result_chars(option: MaxResultChars | None) -> MaxResultChars | None:
    """A copy of a checked option: a caller changing its mapping later does not change what a publisher cuts."""
    if option is None or isinstance(option, int):
        return option
    copy = MaxResultCharsByTool()
    if option.get("defaults") is not None:
        copy["defaults"] = option["defaults"]
    if "tools" in option:
        copy["tools"] = dict(option["tools"])
    return copy


def result_char_limit(option: MaxResultChars | None, tool_name: str | None) -> int | None:
    """The limit of a result of `tool_name` (None: the tool is unknown): its tool's own, else the default."""
    if option is None or isinstance(option, int):
        return option
    tools = option.get("tools") or {}
    if tool_name is not None and tool_name in tools:
        return tools[tool_name]
    return option.get("defaults")


class _Utf16Text:
    """A text as JavaScript holds it (UTF-16 code units), to measure and cut it where JavaScript would."""

    def __init__(self, text: str) -> None:
        self.units = text.encode("utf-16-le", "surrogatepass")
        self.length = len(self.units) // 2

    def _unit(self, index: int) -> int:
        return int.from_bytes(self.units[2 * index : 2 * index + 2], "little")

    def cut(self, keep: int) -> str:
        """The first `keep` code units and the truncation marker. Never keeps half of a surrogate pair: JSON would
        carry the lone half as an escape, and the character would be lost anyway."""
        at = max(0, min(keep, self.length))
        if 0 < at < self.length and 0xD800 <= self._unit(at - 1) <= 0xDBFF and 0xDC00 <= self._unit(at) <= 0xDFFF:
            at -= 1
        kept = self.units[: 2 * at].decode("utf-16-le", "surrogatepass")
        return kept + truncation_marker(self.length - at)


def cut_text(text: str, keep: int) -> str:
    """The first `keep` characters (UTF-16 code units) of `text` and the truncation marker with the number removed;
    never splits a surrogate pair."""
    return _Utf16Text(text).cut(keep)


def _text_of(payload: object) -> str:
    """A payload as the text a limit counts: a string's own text, anything else's JSON."""
    return payload if isinstance(payload, str) else to_json(payload)


def serialize_fitted_event(
    event: Mapping[str, Any], *, max_event_bytes: int, max_result_chars: int | None = None
) -> str:
    """The JSON to send for an event, as JavaScript's JSON.stringify writes it, cut to the limits.

    The event is checked against the contract first (an invalid event raises InvalidToolEventError naming each
    problem). Then a call's `arguments` or a result's `result` that is longer than `max_result_chars` (results
    only) or makes the event larger than `max_event_bytes` is cut, with the truncation marker, to the most that
    fits, and the event gets `originalBytes`: the payload's size in bytes (UTF-8 JSON) before the cut. A result is
    cut as text (a JSON result becomes a string, the start of its JSON text); arguments become
    `{"truncatedArguments": "<the start of their JSON text>…"}`. An event that needs no cut is sent exactly as it
    is; one that cannot be made to fit (the rest of it is over the limit) raises InvalidToolEventError.
    """
    problems = event_problems(event)
    if problems:
        raise InvalidToolEventError(problems)
    json_text = to_json(dict(event))
    size = utf8_length(json_text)
    field = _PAYLOAD_FIELD.get(event["type"])
    char_limit = max_result_chars if field == "result" else None
    text = None if char_limit is None else _text_of(event["result"])
    over_char_limit = text is not None and char_limit is not None and utf16_length(text) > char_limit
    if not over_char_limit and size <= max_event_bytes:
        return json_text
    if field is None:
        raise InvalidToolEventError([event_too_large(size, max_event_bytes)])

    payload: JsonValue = event[field]
    if text is None:
        text = _text_of(payload)
    original_bytes = utf8_length(to_json(payload) if isinstance(payload, str) else text)
    wrap: Callable[[str], JsonValue] = (
        (lambda cut: {TRUNCATED_ARGUMENTS_KEY: cut}) if field == "arguments" else (lambda cut: cut)
    )

    # No spaces in the JSON: the event's size is the rest of it plus the cut payload's own JSON.
    def size_of(cut: str) -> int:
        return utf8_length(to_json(wrap(cut)))

    rest = utf8_length(to_json({**event, field: wrap(""), "originalBytes": original_bytes})) - size_of("")
    units = _Utf16Text(text)
    # A cut keeps fewer characters than the whole text: even one removed gets its marker.
    cap = char_limit if over_char_limit and char_limit is not None else units.length - 1
    keep = _longest_fitting_cut(units, cap, max_event_bytes - rest, size_of)
    if keep is None:
        raise InvalidToolEventError(
            [
                f"{event_too_large(size, max_event_bytes)}, and still is with its {field} cut to the truncation marker"
                f" alone: the rest of the event takes {rest} bytes"
            ]
        )
    return to_json({**event, field: wrap(units.cut(keep)), "originalBytes": original_bytes})


def _longest_fitting_cut(text: _Utf16Text, cap: int, budget: int, size_of: Callable[[str], int]) -> int | None:
    """The most characters of `text`, at most `cap`, that can be kept with the marker within `budget` bytes; None
    when not even the marker alone fits.

    A binary search: the size grows with what is kept, except that the marker can lose a digit on the way, so the
    answer always fits and one more character would not, which is within one character of the longest cut.
    """

    def fits(keep: int) -> bool:
        return size_of(text.cut(keep)) <= budget

    if cap < 0 or not fits(0):
        return None
    # Every character kept takes a byte of JSON or more: more than `budget` of them never fit.
    upper = min(cap, budget + 1)
    if fits(upper):
        return upper
    fitting, too_many = 0, upper
    while too_many - fitting > 1:
        middle = fitting + (too_many - fitting) // 2
        if fits(middle):
            fitting = middle
        else:
            too_many = middle
    return fitting
