"""Fake-clock table tests for the stall watchdog: pulse, reset, running commands, hard stall."""

from collections.abc import Sequence

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.stall_watchdog import (
    Activity,
    CommandFinished,
    CommandStarted,
    HardStall,
    PulseDue,
    Quiet,
    Tick,
    WatchdogDecision,
    WatchdogObservation,
    WatchdogState,
    pulse_text,
    shorten,
    start_watchdog,
    step_watchdog,
)

MIN = 60_000
DEFAULT = MercuryConfig()
Q = Quiet()


def run(
    observations: Sequence[WatchdogObservation],
    config: MercuryConfig = DEFAULT,
    state: WatchdogState | None = None,
) -> list[WatchdogDecision]:
    current = start_watchdog(0.0) if state is None else state
    decisions: list[WatchdogDecision] = []
    for observation in observations:
        current, decision = step_watchdog(current, observation, config)
        decisions.append(decision)
    return decisions


def silent(activity: str, seconds: int) -> PulseDue:
    return PulseDue(f"{activity} · {seconds} s")


@pytest.mark.parametrize(
    ("observations", "expected"),
    [
        pytest.param([Tick(3 * MIN - 1)], [Q], id="quiet-just-before-soft"),
        pytest.param(
            [Tick(3 * MIN)], [silent("waiting for the model", 180)], id="pulse-at-soft-threshold"
        ),
        pytest.param(
            [Tick(3 * MIN), Tick(3 * MIN + 20_000), Tick(5 * MIN), Tick(8 * MIN - 1)],
            [silent("waiting for the model", 180), Q, Q, Q],
            id="pulse-fires-once-per-silent-window",
        ),
        pytest.param(
            [
                Tick(3 * MIN),
                Activity(200_000, "chunk", "writing app.py"),
                Tick(200_000 + 3 * MIN - 1),
                Tick(200_000 + 3 * MIN + 999),
            ],
            [silent("waiting for the model", 180), Q, Q, silent("writing app.py", 180)],
            id="activity-rearms-the-pulse",
        ),
        pytest.param(
            [Activity(7 * MIN, "chunk", "planning"), Tick(8 * MIN), Tick(15 * MIN)],
            [Q, Q, HardStall(minutes=8, was="planning")],
            id="activity-resets-the-hard-threshold",
        ),
        pytest.param(
            [Tick(3 * MIN), Tick(8 * MIN - 1), Tick(8 * MIN)],
            [silent("waiting for the model", 180), Q, HardStall(8, "waiting for the model")],
            id="hard-stall-at-eight-minutes",
        ),
        pytest.param(
            [Tick(8 * MIN), Tick(9 * MIN), Tick(30 * MIN)],
            [HardStall(8, "waiting for the model"), Q, Q],
            id="hard-stall-fires-once-and-no-pulse-after-it",
        ),
        pytest.param(
            [Tick(8 * MIN), Activity(9 * MIN, "chunk", "retrying"), Tick(12 * MIN)],
            [HardStall(8, "waiting for the model"), Q, silent("retrying", 180)],
            id="activity-after-hard-stall-opens-a-new-window",
        ),
        pytest.param(
            [Tick(10 * MIN)],
            [HardStall(10, "waiting for the model")],
            id="coarse-tick-past-both-thresholds-is-hard-stall",
        ),
        pytest.param(
            [Activity(0, "tool_output", ""), Tick(3 * MIN)],
            [Q, silent("reading tool output", 180)],
            id="empty-tool-output-label-gets-a-default",
        ),
        pytest.param(
            [Activity(0, "chunk", ""), Tick(3 * MIN)],
            [Q, silent("waiting for the model", 180)],
            id="empty-chunk-label-gets-a-default",
        ),
        pytest.param(
            [Tick(1_000), Tick(1_000)],
            [Q, Q],
            id="time-not-moving-is-quiet",
        ),
    ],
)
def test_silent_windows(
    observations: list[WatchdogObservation], expected: list[WatchdogDecision]
) -> None:
    assert run(observations) == expected


def running(command: str, seconds: int) -> PulseDue:
    return PulseDue(f"running {command} · {seconds} s")


@pytest.mark.parametrize(
    ("observations", "expected"),
    [
        pytest.param(
            [CommandStarted(10_000, "npm run build"), Tick(10_000 + 3 * MIN)],
            [Q, running("npm run build", 180)],
            id="pulse-names-the-running-command",
        ),
        pytest.param(
            [
                CommandStarted(0, "cargo build --release"),
                Tick(3 * MIN),
                Tick(8 * MIN),
                Tick(60 * MIN),
                Tick(600 * MIN),
            ],
            [Q, running("cargo build --release", 180), Q, Q, Q],
            id="running-command-never-hard-stalls",
        ),
        pytest.param(
            [
                CommandStarted(0, "make"),
                Activity(100_000, "tool_output", "make output"),
                Tick(3 * MIN),
                Tick(100_000 + 3 * MIN),
            ],
            [Q, Q, Q, running("make", 280)],
            id="tool-output-during-command-resets-the-window",
        ),
        pytest.param(
            [
                CommandStarted(0, "pytest"),
                Tick(60 * MIN),
                CommandFinished(60 * MIN),
                Tick(63 * MIN),
                Tick(68 * MIN),
            ],
            [
                Q,
                running("pytest", 3600),
                Q,
                silent("waiting for the model", 180),
                HardStall(8, "waiting for the model"),
            ],
            id="command-finish-starts-a-fresh-window-that-can-hard-stall",
        ),
        pytest.param(
            [
                CommandStarted(0, "server"),
                CommandStarted(1_000, "client"),
                CommandFinished(2_000),
                Tick(2_000 + 10 * MIN),
            ],
            [Q, Q, Q, running("client", 601)],
            id="a-second-running-command-still-counts-as-progress",
        ),
    ],
)
def test_running_commands(
    observations: list[WatchdogObservation], expected: list[WatchdogDecision]
) -> None:
    assert run(observations) == expected


def test_long_command_is_shortened_in_the_pulse() -> None:
    command = "python -m pytest tests/integration/test_everything.py -x -q --maxfail=1 -k slow"
    [_, pulse] = run([CommandStarted(0, command), Tick(3 * MIN)])
    assert isinstance(pulse, PulseDue)
    shown = pulse.text.removeprefix("running ").removesuffix(" · 180 s")
    assert shown.endswith("…")
    assert len(shown) == 48
    assert command.startswith(shown[:-1])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("ls", "ls", id="short-unchanged"),
        pytest.param("  npm   run\tbuild ", "npm run build", id="whitespace-collapsed"),
        pytest.param("cat <<EOF\nhello\nEOF", "cat <<EOF …", id="first-line-only"),
        pytest.param("x" * 60, "x" * 47 + "…", id="cut-to-limit-with-ellipsis"),
    ],
)
def test_shorten(text: str, expected: str) -> None:
    assert shorten(text) == expected


def test_hard_stall_report_text() -> None:
    [_, stall] = run([Activity(0, "chunk", "writing app.py"), Tick(8 * MIN + 30_000)])
    assert isinstance(stall, HardStall)
    assert stall.text == "Task stalled 8 minutes with no progress (was: writing app.py)"


@pytest.mark.parametrize(
    ("config", "quiet_at", "stall_at", "minutes"),
    [
        pytest.param(DEFAULT, 8 * MIN - 1, 8 * MIN, 8, id="defaults-soft-3-hard-8"),
        pytest.param(
            MercuryConfig(stall_soft_ms=MIN),
            6 * MIN - 1,
            6 * MIN,
            6,
            id="only-soft-set-hard-is-soft-plus-5",
        ),
        pytest.param(
            MercuryConfig.load(environ={"MERCURY_STALL_SOFT_MS": "120000"}),
            7 * MIN - 1,
            7 * MIN,
            7,
            id="only-soft-set-from-env",
        ),
        pytest.param(
            MercuryConfig(stall_soft_ms=MIN, stall_hard_ms=2 * MIN),
            2 * MIN - 1,
            2 * MIN,
            2,
            id="both-set-hard-is-taken-as-given",
        ),
    ],
)
def test_hard_threshold_comes_from_config(
    config: MercuryConfig, quiet_at: int, stall_at: int, minutes: int
) -> None:
    decisions = run([Tick(quiet_at), Tick(stall_at)], config)
    assert isinstance(decisions[0], PulseDue)
    assert decisions[1] == HardStall(minutes, "waiting for the model")


def test_millisecond_thresholds_for_integration_tests() -> None:
    config = MercuryConfig(stall_soft_ms=50, stall_hard_ms=200)
    decisions = run([Tick(49), Tick(50), Tick(199), Tick(200)], config)
    assert decisions == [
        Q,
        silent("waiting for the model", 0),
        Q,
        HardStall(0, "waiting for the model"),
    ]


def test_unstarted_watchdog_starts_its_window_at_the_first_tick() -> None:
    decisions = run([Tick(1_000_000), Tick(1_000_000 + 3 * MIN)], state=WatchdogState())
    assert decisions == [Q, silent("waiting for the model", 180)]


def test_pulse_text_can_be_redrawn_between_decisions() -> None:
    state, _ = step_watchdog(start_watchdog(0.0), Activity(0, "chunk", "thinking"), DEFAULT)
    assert pulse_text(state, 42_500) == "thinking · 42 s"


def test_a_pulse_carries_its_activity_and_silent_seconds_as_fields() -> None:
    state = start_watchdog(0.0, "waiting for the model")
    _, pulse = step_watchdog(state, Tick(3 * MIN + 2_500), MercuryConfig())
    assert isinstance(pulse, PulseDue)
    assert (pulse.activity, pulse.silent_s, pulse.command) == ("waiting for the model", 182, None)
    state, _ = step_watchdog(state, CommandStarted(1_000, "sleep 999"), MercuryConfig())
    _, pulse = step_watchdog(state, Tick(1_000 + 3 * MIN + 1_000), MercuryConfig())
    assert isinstance(pulse, PulseDue)
    assert (pulse.silent_s, pulse.command) == (181, "sleep 999")
