"""The sandbox as data: bubblewrap's flags, and why a task that asked for it refuses to start."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.sandbox_policy import (
    SandboxBroken,
    SandboxMissing,
    SandboxProbe,
    SandboxReady,
    bwrap_arguments,
    kept_through_tmp,
    unavailable_text,
)


@pytest.mark.parametrize(
    ("probe", "says"),
    [
        pytest.param(SandboxReady("/usr/bin/bwrap"), None, id="ready"),
        pytest.param(SandboxMissing("/no/bwrap"),
                     ("/no/bwrap was not found", "apt-get install bubblewrap",
                      "MERCURY_BWRAP_PATH", "run without --sandbox"), id="missing"),
        pytest.param(SandboxBroken("/usr/bin/bwrap", "No permissions to create new namespace"),
                     ("No permissions to create new namespace", "user namespaces",
                      "kernel.unprivileged_userns_clone=1", "run without --sandbox"),
                     id="no-user-namespaces"),
        pytest.param(SandboxBroken("/usr/bin/bwrap", "  "),
                     ("it failed without a message",), id="silent-failure"),
    ],
)
def test_a_refusal_says_why_and_how_to_fix_it(probe: SandboxProbe,
                                              says: tuple[str, ...] | None) -> None:
    text = unavailable_text(probe)
    if says is None:
        assert text is None
        return
    assert text is not None
    for part in says:
        assert part in text


@pytest.mark.parametrize(
    ("workspace", "network", "present", "absent"),
    [
        pytest.param("/w", False, ("--unshare-all", "--die-with-parent", "--new-session"),
                     ("--share-net",), id="no-network"),
        pytest.param("/w", True, ("--unshare-all", "--share-net"), (), id="network"),
        pytest.param(None, False, ("--unshare-all",), ("--bind", "--chdir"), id="probe"),
    ],
)
def test_bubblewrap_flags(workspace: str | None, network: bool, present: tuple[str, ...],
                          absent: tuple[str, ...]) -> None:
    args = bwrap_arguments("/usr/bin/bwrap", workspace, network=network)
    assert args[0] == "/usr/bin/bwrap"
    assert args[-1] == "--"
    assert args[1:5] == ("--ro-bind", "/", "/", "--dev")  # read-only first, then the rest
    assert "--tmpfs" in args and args[args.index("--tmpfs") + 1] == "/tmp"
    assert args[args.index("--tmpfs") + 2:args.index("--tmpfs") + 4] == ("--tmpfs", "/run")
    assert (args[args.index("--share-net") + 1:args.index("--share-net") + 4]
            == ("--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve")
            if network else "--ro-bind-try" not in args)
    assert args[args.index("--cap-drop") + 1] == "ALL"
    for flag in present:
        assert flag in args
    for flag in absent:
        assert flag not in args
    if workspace is not None:
        at = args.index("--bind")
        assert args[at:at + 3] == ("--bind", workspace, workspace)
        assert at > args.index("--tmpfs")  # a workspace under /tmp stays writable


@pytest.mark.parametrize(
    ("environ", "field", "value"),
    [
        pytest.param({"MERCURY_PASS_ENV": "A_TOKEN, B_KEY,A_TOKEN"}, "pass_env",
                     ("A_TOKEN", "B_KEY"), id="pass-env-list"),
        pytest.param({"MERCURY_SANDBOX": "workspace-write"}, "sandbox", "workspace-write",
                     id="sandbox"),
        pytest.param({"MERCURY_SANDBOX_NETWORK": "1"}, "sandbox_network", True, id="network"),
        pytest.param({"MERCURY_BWRAP_PATH": "/opt/bwrap"}, "bwrap_path", "/opt/bwrap",
                     id="bwrap-path"),
        pytest.param({}, "sandbox", "off", id="default-off"),
    ],
)
def test_the_settings_come_from_the_environment(environ: dict[str, str], field: str,
                                                value: object) -> None:
    assert getattr(MercuryConfig.load(environ), field) == value


@pytest.mark.parametrize("environ", [{"MERCURY_SANDBOX": "strict"},
                                     {"MERCURY_PASS_ENV": "NOT A NAME"}])
def test_bad_settings_are_refused(environ: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        MercuryConfig.load(environ)


@pytest.mark.parametrize(
    ("paths", "kept"),
    [
        pytest.param(("/usr", "/root/.venv"), (), id="nothing-under-tmp"),
        pytest.param(("/tmp/ci/.venv",), ("/tmp/ci/.venv",), id="a-venv-under-tmp"),
        pytest.param(("/tmp", "/tmp/"), (), id="never-tmp-itself"),
        pytest.param(("/tmpfoo/x",), (), id="a-sibling-of-tmp"),
        pytest.param(("/tmp/ci/.venv", "/tmp/ci", "/tmp/ci/.venv"), ("/tmp/ci",),
                     id="nested-and-repeated-once"),
        pytest.param(("/tmp/b", "/tmp/a/"), ("/tmp/a", "/tmp/b"), id="several"),
    ],
)
def test_kept_through_tmp(paths: tuple[str, ...], kept: tuple[str, ...]) -> None:
    assert kept_through_tmp(paths) == kept


def test_kept_folders_are_bound_read_only_after_the_private_tmp() -> None:
    args = bwrap_arguments("/usr/bin/bwrap", "/tmp/w", network=False,
                           readable=("/tmp/ci/.venv", "/usr"))
    at = args.index("--ro-bind", 2)
    assert args[at:at + 3] == ("--ro-bind", "/tmp/ci/.venv", "/tmp/ci/.venv")
    assert args.index("--tmpfs") < at < args.index("--bind")
    assert "/usr" not in args[at + 3:]
