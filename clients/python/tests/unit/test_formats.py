"""The history formats, declared once: the table's rows are the gRPC API's formats, and what the clients accept."""

from __future__ import annotations

import typing

from toolhistory import _grpc
from toolhistory.formats import FORMAT_TABLE, HISTORY_FORMATS, HistoryFormat
from toolhistory.v1 import toolhistory_pb2 as pb


def test_every_format_of_the_grpc_api_has_one_row_and_every_row_one_format() -> None:
    proto = [name for name in pb.HistoryFormat.keys() if name != "HISTORY_FORMAT_UNSPECIFIED"]  # noqa: SIM118
    assert sorted(row.proto for row in FORMAT_TABLE) == sorted(proto)
    assert len({row.client for row in FORMAT_TABLE}) == len({row.service for row in FORMAT_TABLE}) == len(proto)


def test_the_clients_names_are_the_tables() -> None:
    assert tuple(typing.get_args(HistoryFormat)) == HISTORY_FORMATS
    assert {name: pb.HistoryFormat.Name(value) for name, value in _grpc.WIRE_FORMAT.items()} == {
        row.client: row.proto for row in FORMAT_TABLE
    }
