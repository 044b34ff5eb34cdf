"""loader.memory: large blocks freed go back to the system, even after a larger one was freed.

Each case runs in a fresh interpreter (the allocator's settings are the process's): it frees an
8 MiB block (glibc then serves blocks below 8 MiB from its heap), makes 300 blocks of 256 KiB with a
small block kept between each two, frees the large ones and prints how many MB the process's
resident memory fell by.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from loader.memory import return_freed_memory

PROBE = """
import sys
if sys.argv[1] == "tuned":
    from loader.memory import return_freed_memory
    assert return_freed_memory()

def rss_mb():
    with open("/proc/self/status") as status:
        return int(status.read().split("VmRSS:")[1].split("kB")[0]) // 1024

def touched(size):
    block = bytearray(size)
    block[::4096] = b"x" * len(range(0, size, 4096))
    return block

freed = touched(8 << 20)
del freed
blocks, kept = [], []
for _ in range(300):
    blocks.append(touched(256 << 10))
    kept.append(bytes(1000))
before = rss_mb()
del blocks
print(before - rss_mb())
"""


def _fell_by(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator only")
def test_freed_large_blocks_go_back_to_the_system() -> None:
    if not return_freed_memory():
        pytest.skip("not glibc")
    tuned, untuned = _fell_by("tuned"), _fell_by("as is")
    assert tuned >= 60  # of the 75 MB the blocks took
    assert tuned >= untuned  # glibc 2.3x to 2.4x as is: about 0 (kept on its heap)


def test_elsewhere_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert return_freed_memory() is False
