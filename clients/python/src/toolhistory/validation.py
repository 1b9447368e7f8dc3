"""Checks an event with the contract's own rules before it leaves the host, as the TypeScript client does.

The rules: the contract's JSON Schema (draft 2020-12, with `date-time` checked as the service checks it), and what
JSON Schema cannot state: how deep `arguments` and `result` nest, that they hold JSON values only, and the event's
size. Each problem names its field (`usage.0.model must NOT have more than 256 characters`), in the words the
TypeScript client uses.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, cast

from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators

from toolhistory._json import to_json, utf8_length
from toolhistory.errors import InvalidToolEventError
from toolhistory.limits import MAX_JSON_DEPTH

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

DEFAULT_MAX_EVENT_BYTES = 1024 * 1024
"""The largest message value the service accepts by default (its MAX_EVENT_BYTES may lower it)."""

_MAX_REPORTED_VALUES = 10


def _javascript_pattern(validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """`pattern` as the service's JavaScript regular expressions (with the `u` flag) match it: `\\d` is an ASCII
    digit, and `$` is the very end (Python's `$` also matches before a final newline)."""
    if isinstance(instance, str) and _compile_pattern(pattern).search(instance) is None:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@cache
def _compile_pattern(pattern: str) -> re.Pattern[str]:
    translated = re.sub(r"(?<!\\)\$", r"\\Z", pattern)
    return re.compile(translated, re.ASCII)


_TIME = re.compile(r"(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?\Z", re.ASCII | re.IGNORECASE)
_DATE = re.compile(r"(\d\d\d\d)-(\d\d)-(\d\d)\Z", re.ASCII)
_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _is_date(text: str) -> bool:
    match = _DATE.match(text)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    return 1 <= month <= 12 and 1 <= day <= (29 if month == 2 and _is_leap_year(year) else _DAYS_IN_MONTH[month])


def _is_time(text: str) -> bool:
    match = _TIME.match(text)
    if match is None:
        return False
    hour, minute, second = int(match[1]), int(match[2]), float(match[3])
    zone_sign = -1 if match[5] == "-" else 1
    zone_hours, zone_minutes = int(match[6] or 0), int(match[7] or 0)
    if zone_hours > 23 or zone_minutes > 59 or not match[4]:
        return False
    if hour <= 23 and minute <= 59 and second < 60:
        return True
    # A leap second: 23:59:60 in UTC.
    utc_minute = minute - zone_minutes * zone_sign
    utc_hour = hour - zone_hours * zone_sign - (1 if utc_minute < 0 else 0)
    return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61


def is_date_time(instance: object) -> bool:
    """RFC 3339's date-time, checked as the service's JSON Schema validator (ajv-formats) checks it: a real day of
    a real month, a time of day, and a time zone."""
    if not isinstance(instance, str):
        return True
    parts = re.split(r"[tT\s]", instance)
    return len(parts) == 2 and _is_date(parts[0]) and _is_time(parts[1])


@cache
def _schema_validator() -> Validator:
    schema = json.loads(resources.files("toolhistory._contract").joinpath("tool-event.schema.json").read_text("utf-8"))
    format_checker = FormatChecker(formats=())
    format_checker.checks("date-time")(is_date_time)
    contract_validator = validators.extend(Draft202012Validator, {"pattern": _javascript_pattern})  # type: ignore[no-untyped-call]
    contract_validator.check_schema(schema)
    validator: Validator = contract_validator(schema, format_checker=format_checker)
    return validator


def _describe(error: ValidationError) -> list[str]:
    """An error as the TypeScript client words it (ajv's messages): `<field> <rule>`."""
    field = ".".join(str(part) for part in error.absolute_path)
    rule, value = error.validator, cast("Any", error.validator_value)
    if rule == "required":
        instance = error.instance if isinstance(error.instance, Mapping) else {}
        return [f"{field + '.' if field else ''}{name} is required" for name in value if name not in instance]
    if rule == "type":
        message = f"must be {value if isinstance(value, str) else ','.join(value)}"
    elif rule == "enum":
        message = "must be equal to one of the allowed values"
    elif rule == "const":
        message = "must be equal to constant"
    elif rule in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        comparison = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}[str(rule)]
        message = f"must be {comparison} {value}"
    elif rule in ("minLength", "maxLength", "minItems", "maxItems"):
        bound = "fewer" if str(rule).startswith("min") else "more"
        unit = "characters" if str(rule).endswith("Length") else "items"
        message = f"must NOT have {bound} than {value} {unit}"
    elif rule == "pattern":
        message = f'must match pattern "{value}"'
    elif rule == "format":
        message = f'must match format "{value}"'
    elif rule == "not":
        message = "must NOT be valid"
    else:
        message = error.message
    return [f"{field or 'event'} {message}"]


def _type_name(value: object) -> str:
    return type(value).__name__


def _render(path: object) -> str:
    """A value's place in its field, kept as (parent, key) pairs while walking: a dotted path."""
    parts: list[str] = []
    while isinstance(path, tuple):
        path, key = path
        parts.append(str(key))
    parts.append(str(path))
    return ".".join(reversed(parts))


def _value_problems(field: str, value: object) -> list[str]:
    """What JSON Schema cannot say about a field: that it nests at most MAX_JSON_DEPTH levels deep (the contract's
    rule for `arguments` and `result`; no other field comes near it), and that it holds JSON values only (str, int,
    float, bool, None, list, dict with str keys; finite numbers). Iterative: the value may be deep on purpose."""
    problems: list[str] = []
    not_json = 0
    too_deep = False

    def report(problem: str) -> None:
        nonlocal not_json
        not_json += 1
        if not_json <= _MAX_REPORTED_VALUES:
            problems.append(problem)

    stack: list[tuple[object, int, object]] = [(value, 1, field)]
    while stack:
        current, depth, path = stack.pop()
        if isinstance(current, (str, bool, int)) or current is None:
            continue
        if isinstance(current, float):
            if not math.isfinite(current):
                report(f"{_render(path)} must be a finite number (JSON has no {current!r})")
        elif isinstance(current, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                # Deeper is no tool payload (and may be a cycle): not walked further.
                too_deep = True
                continue
            if isinstance(current, list):
                stack.extend((item, depth + 1, (path, index)) for index, item in reversed(list(enumerate(current))))
                continue
            children: list[tuple[object, int, object]] = []
            for key, item in current.items():
                if isinstance(key, str):
                    children.append((item, depth + 1, (path, key)))
                else:
                    report(f"{_render(path)} must have string keys (got {_type_name(key)} {key!r})")
            stack.extend(reversed(children))
        else:
            report(f"{_render(path)} must be a JSON value (got {_type_name(current)})")
    if not_json > _MAX_REPORTED_VALUES:
        problems.append(f"{field} holds {not_json - _MAX_REPORTED_VALUES} more values that are not JSON")
    if too_deep:
        problems.insert(0, f"{field} must not nest deeper than {MAX_JSON_DEPTH} levels")
    return problems


def event_problems(event: Mapping[str, Any]) -> list[str]:
    """What breaks the contract in an event apart from its size: the JSON Schema's rules, the payload depth, and
    values that are not JSON. Empty when the event is valid."""
    problems: list[str] = []
    fields_with_schema_errors: set[str] = set()
    for error in _schema_validator().iter_errors(event):
        if error.absolute_path:
            fields_with_schema_errors.add(str(error.absolute_path[0]))
        for message in _describe(error):
            if message not in problems:
                problems.append(message)
    if not isinstance(event, Mapping):
        return problems
    for field, value in event.items():
        if not isinstance(field, str):
            problems.append(f"event must have string keys (got {_type_name(field)} {field!r})")
        elif field not in fields_with_schema_errors:
            problems.extend(_value_problems(field, value))
    return problems


def event_too_large(size: int, max_event_bytes: int) -> str:
    """The problem of an event over the size limit."""
    return f"event is {size} bytes, larger than the limit of {max_event_bytes} bytes"


def serialize_valid_event(event: Mapping[str, Any], max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> str:
    """The event's JSON (as JavaScript's JSON.stringify writes it), after checking it with the contract's rules.

    Raises InvalidToolEventError naming each problem, or the event's size when it is over `max_event_bytes`.
    """
    problems = event_problems(event)
    if problems:
        raise InvalidToolEventError(problems)
    text = to_json(dict(event))
    size = utf8_length(text)
    if size > max_event_bytes:
        raise InvalidToolEventError([event_too_large(size, max_event_bytes)])
    return text
