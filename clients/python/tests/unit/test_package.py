"""The package as installed: what it exports, what it ships, and that no framework comes with it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources

from packaging.requirements import Requirement

import toolhistory


def test_every_exported_name_is_there() -> None:
    missing = [name for name in toolhistory.__all__ if not hasattr(toolhistory, name)]
    assert missing == []


def test_ships_its_type_marker_schema_and_stubs() -> None:
    package = resources.files("toolhistory")
    assert package.joinpath("py.typed").is_file()
    schema = json.loads(package.joinpath("_contract", "tool-event.schema.json").read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for stub in ("toolhistory_pb2.py", "toolhistory_pb2.pyi", "toolhistory_pb2_grpc.py", "toolhistory_pb2_grpc.pyi"):
        assert package.joinpath("v1", stub).is_file(), stub


def test_importing_it_imports_no_framework() -> None:
    # A fresh interpreter: this one may have imported the adapters' frameworks for other tests.
    frameworks = ("agents", "langchain_core", "langgraph", "pydantic_ai")
    probe = f"import sys, toolhistory; print(sorted(m for m in {frameworks!r} if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"


def test_its_limits_are_the_contracts() -> None:
    from toolhistory import limits

    schema = json.loads(resources.files("toolhistory").joinpath("_contract", "tool-event.schema.json").read_text())
    assert (
        schema["$defs"]["id"]["maxLength"],
        schema["$defs"]["index"]["maximum"],
        schema["$defs"]["usage"]["maxItems"],
    ) == (limits.MAX_ID_LENGTH, limits.MAX_INDEX, limits.MAX_USAGE_ENTRIES)


def test_its_protobuf_and_grpcio_floors_are_the_generated_stubs() -> None:
    # The stubs refuse a runtime older than the code they were generated as: the package's ranges must start there.
    from importlib import metadata

    from toolhistory.v1 import toolhistory_pb2_grpc

    stubs = resources.files("toolhistory").joinpath("v1", "toolhistory_pb2.py").read_text(encoding="utf-8")
    check = re.search(
        r"ValidateProtobufRuntimeVersion\(\s*_runtime_version\.Domain\.PUBLIC,\s*(\d+),\s*(\d+),\s*(\d+)", stubs
    )
    assert check is not None, "toolhistory_pb2.py has no protobuf runtime check"
    generated_for = ".".join(check.groups())
    requires = {Requirement(r).name: Requirement(r) for r in metadata.requires("toolhistory-client") or []}
    assert str(requires["protobuf"].specifier) == f"<8,>={generated_for}"
    assert f">={toolhistory_pb2_grpc.GRPC_GENERATED_VERSION}" in str(requires["grpcio"].specifier)


def test_it_is_installed_beside_every_framework_at_once() -> None:
    # requirements-test.txt installs the frameworks' full packages together with the package's every extra, and
    # scripts/python-env.sh's `pip check` fails on any requirement they leave unmet.
    from importlib import metadata

    installed = {name: metadata.version(name) for name in ("openai-agents", "agent-framework", "google-adk")}
    assert all(installed.values()), installed
    assert metadata.version("protobuf").startswith("6."), "the frameworks together need protobuf 6"
