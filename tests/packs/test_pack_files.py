"""Packs are package data: a package built as a wheel lays it out carries every file of each pack."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from loader.files.package_data import pack_files, pack_names

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_built_package_carries_every_file_of_every_pack(tmp_path: Path) -> None:
    built = tmp_path / "build"
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                    "--build-lib", str(built)], cwd=ROOT, check=True, capture_output=True, timeout=240)
    assert pack_names() == ["elmo", "xcri-cap-1.2"]
    for name in pack_names():
        for path, data in pack_files(name).items():
            assert (built / "loader" / "packs" / name / path).read_bytes() == data, path
