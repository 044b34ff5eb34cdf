"""The fault options are declared once (FaultOptions); the flags of `loader sandbox serve`,
`serve_args` and the OpenAPI schema of /q/sandbox/faults are derived from that declaration."""

from __future__ import annotations

import argparse
import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.commands import sandbox as sandbox_command
from loader.sandbox.faults import MAX_DELAY_MS, MIN_RATE, FaultOptions
from loader.sandbox.openapi import build_openapi
from loader.sandbox.server import SandboxOptions, serve_args

FIELDS = [f.name for f in dataclasses.fields(FaultOptions)]


def _serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    sandbox_command.add_serve_arguments(parser)
    return parser


def _parsed(argv: list[str]) -> FaultOptions:
    return FaultOptions.from_args(_serve_parser().parse_args(argv))


def test_every_fault_option_has_a_serve_flag_and_a_schema_property() -> None:
    help_text = _serve_parser().format_help()
    for flag in ("--latency-ms", "--jitter-ms", "--error-rate", "--lost-rate", "--rate-limit", "--fault-seed"):
        assert flag in help_text
    schema = build_openapi()["components"]["schemas"]["Faults"]
    assert list(schema["properties"]) == FIELDS
    assert schema["additionalProperties"] is False
    rate_limit = dict(schema["properties"]["rate_limit"])
    assert "--rate-limit" in rate_limit.pop("description")
    assert rate_limit == {"type": ["number", "null"], "minimum": MIN_RATE}
    assert schema["properties"]["seed"]["type"] == "integer"
    assert schema["properties"]["latency_ms"]["maximum"] == MAX_DELAY_MS


def test_no_flags_give_a_well_behaved_service() -> None:
    assert _parsed([]) == FaultOptions()


rates = st.floats(0, 1, allow_nan=False)
delays = st.floats(0, MAX_DELAY_MS, allow_nan=False)


@given(
    st.builds(
        FaultOptions,
        latency_ms=delays,
        jitter_ms=delays,
        error_rate=rates,
        lost_rate=rates,
        rate_limit=st.none() | st.floats(MIN_RATE, 1e9),
        seed=st.integers(-(2**40), 2**40),
    )
)
def test_serve_args_reproduce_any_fault_options_through_the_serve_flags(faults: FaultOptions) -> None:
    argv = serve_args(SandboxOptions(faults=faults), None)
    assert _parsed(argv) == faults


@pytest.mark.parametrize("flag", ["--latency-ms", "--jitter-ms", "--error-rate", "--lost-rate", "--rate-limit"])
@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_fault_flag_out_of_bounds_or_not_finite_is_a_usage_error(flag: str, value: str) -> None:
    assert sandbox_command.main(["serve", "--port", "0", f"{flag}={value}"]) == 64


@pytest.mark.parametrize(
    "body",
    [{"latency_ms": float("nan")}, {"rate_limit": float("inf")}, {"seed": 1.5}, {"error_rate": True}, {"x": 1}],
)
def test_the_faults_body_is_checked_by_the_same_declaration(body: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        FaultOptions.from_dict(body)
