"""A plain list's compiled step (`steps._split_text`) gives what the general steps give."""

from __future__ import annotations

import datetime as dt
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from loader.source.steps import EMPTY, Steps, apply_steps, compile_steps

_VALUES = st.one_of(
    st.none(), st.sampled_from(["", " ", "a;b", " a ; ;b ", ";", "a,b", "x", "\u00a0;\u00a0", "Online;On campus"]),
    st.integers(-3, 3), st.sampled_from([1.5, 2.0, True]), st.just(dt.date(2027, 2, 28)),
)
_PLAIN = [Steps(type="list", split=";"), Steps(split=";"), Steps(type="list"), Steps(type="list", split=",")]
_NOT_PLAIN = [Steps(type="list", split=";", transform=("upper",)), Steps(type="list", map={"a": "A"}),
              Steps(type="list", has_default=True, default=["z"]), Steps(type="list", max_length=1),
              Steps(type="integer", split=";")]


@given(value=_VALUES, steps=st.sampled_from(_PLAIN + _NOT_PLAIN))
def test_a_compiled_list_step_gives_what_the_steps_give(value: Any, steps: Steps) -> None:
    compiled = compile_steps(steps)
    try:
        expected: Any = apply_steps(value, steps)
    except Exception as exc:
        expected = type(exc)
    try:
        got: Any = compiled(value)
    except Exception as exc:
        got = type(exc)
    assert got == expected and (got is EMPTY) == (expected is EMPTY)


def _compiled_to(steps: Any) -> str:
    """The name of the function `compile_steps` gives these steps to (it gives a partial of it)."""
    func = getattr(compile_steps(steps), "func", None)
    assert func is not None
    return str(func.__name__)


def test_only_a_plain_list_takes_the_split_step() -> None:
    assert all(_compiled_to(s) == "_split_text" for s in _PLAIN)
    assert all(_compiled_to(s) == "apply_steps" for s in _NOT_PLAIN)
