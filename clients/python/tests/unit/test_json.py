"""JSON text as JavaScript's JSON.stringify writes it: what event ids and payload cuts are computed over."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolhistory._json import as_javascript_string, to_json, utf16_length

# What JavaScript writes for each number: String(n) in Node.js.
NUMBERS = [
    (1.0, "1"),
    (100.0, "100"),
    (-0.0, "0"),
    (0.1, "0.1"),
    (-1.5, "-1.5"),
    (123.456, "123.456"),
    (1e20, "100000000000000000000"),
    (1e21, "1e+21"),
    (1.5e300, "1.5e+300"),
    (1e-6, "0.000001"),
    (1.5e-6, "0.0000015"),
    (1e-7, "1e-7"),
    (-2.5e-10, "-2.5e-10"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (123456789012345680000.0, "123456789012345680000"),
]


@pytest.mark.parametrize(("number", "text"), NUMBERS)
def test_a_float_is_written_as_javascript_writes_it(number: float, text: str) -> None:
    assert to_json(number) == text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_reads_back_as_itself(number: float) -> None:
    assert float(to_json(number)) == number


def test_integer_like_keys_come_first_in_ascending_order_as_in_javascript_objects() -> None:
    value = {"b": 1, "10": 2, "2": 3, "01": 4, "4294967295": 5, "4294967294": 6, "-1": 7}
    assert to_json(value) == '{"2":3,"10":2,"4294967294":6,"b":1,"01":4,"4294967295":5,"-1":7}'


def test_escapes_are_javascripts() -> None:
    assert (
        to_json('q" b\\ n\n t\t bell\x07 del\x7f sep\u2028 é 😀')
        == '"q\\" b\\\\ n\\n t\\t bell\\u0007 del\x7f sep\u2028 é 😀"'
    )


def test_a_lone_surrogate_is_escaped_and_a_split_pair_joined_into_its_character() -> None:
    assert to_json("a\ud800b\udfff") == '"a\\ud800b\\udfff"'
    assert to_json("\ud83d\ude00") == '"😀"'
    assert as_javascript_string("\ud83d\ude00") == "😀"


def test_lengths_are_utf16_code_units() -> None:
    assert utf16_length("a😀é") == 4
    assert utf16_length("\ud800") == 1


def test_what_is_not_json_is_refused() -> None:
    with pytest.raises(ValueError, match="nan"):
        to_json([math.nan])
    with pytest.raises(TypeError, match="tuple"):
        to_json({"a": (1, 2)})
    with pytest.raises(TypeError, match="keys must be strings"):
        to_json({1: "a"})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        # Keys that are no JavaScript array index: their order is kept.
        | st.dictionaries(st.text().filter(lambda key: not key.isdigit()), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_json_without_floats_or_index_keys_is_pythons_compact_json(value: object) -> None:
    assert to_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
