"""The one probe of bubblewrap: missing, refused by the kernel (user namespaces off), or ready."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from mercury_nb.contract.sandbox_policy import SandboxBroken, SandboxMissing, SandboxReady
from mercury_nb.tools import sandbox_probe


@pytest.fixture(autouse=True)
def _fresh() -> None:
    sandbox_probe.forget_probe()


def _fake_bwrap(folder: Path, body: str) -> Path:
    """A stand-in ``bwrap`` that counts its calls in ``calls`` and then runs ``body``."""
    path = folder / "bwrap"
    path.write_text(f"#!/bin/sh\necho x >> {folder / 'calls'}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _calls(folder: Path) -> int:
    calls = folder / "calls"
    return len(calls.read_text().splitlines()) if calls.exists() else 0


def test_a_missing_program(tmp_path: Path) -> None:
    assert sandbox_probe.probe(str(tmp_path / "nope"), 5) == SandboxMissing(str(tmp_path / "nope"))
    assert isinstance(sandbox_probe.probe("no-such-bwrap-on-path", 5), SandboxMissing)


def test_user_namespaces_off_is_broken_and_asked_again(tmp_path: Path) -> None:
    said = ("bwrap: No permissions to creating new namespace, likely because the kernel does "
            "not allow non-privileged user namespaces.")
    fake = _fake_bwrap(tmp_path, f"echo '{said}' >&2\nexit 1")
    answer = sandbox_probe.probe(str(fake), 5)
    assert answer == SandboxBroken(str(fake), said)
    sandbox_probe.probe(str(fake), 5)
    assert _calls(tmp_path) == 2  # a failure is not remembered: a fix is seen at once


def test_a_success_is_probed_once(tmp_path: Path) -> None:
    fake = _fake_bwrap(tmp_path, "exit 0")
    assert sandbox_probe.probe(str(fake), 5) == SandboxReady(str(fake))
    assert sandbox_probe.probe(str(fake), 5) == SandboxReady(str(fake))
    assert _calls(tmp_path) == 1


def test_a_probe_that_hangs_is_broken_in_bounded_time(tmp_path: Path) -> None:
    fake = _fake_bwrap(tmp_path, "exec sleep 30")
    answer = sandbox_probe.probe(str(fake), 0.5)
    assert isinstance(answer, SandboxBroken) and "did not finish in 0.5s" in answer.why
