"""``%%mercury`` through a real in-process IPython shell, the real loop and a scripted model."""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from mercury_nb.agent.events import EventSink, TaskFinished, TaskStarted
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.outcome import TaskOutcome
from mercury_nb.kernel import scheduling
from mercury_nb.kernel.magics import MercuryMagics
from mercury_nb.kernel.wait_cells import WaitCellTransformer, magic_line_of
from mercury_nb.runs import registry
from mercury_nb.testing import (
    ScriptedModel,
    Turn,
    call,
    register_scripted_model,
    unregister_scripted_model,
)
from mercury_nb.transport.protocol import ModelRequest, StreamChunk
from mercury_nb.ui.views import guarded_sink

NOT_SENT_KEY = "sk-never-sent"
"""For tests that replace run_task: no request is made; without a key the cell would refuse
the start (default model, no key) before run_task is reached."""

@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    for name in MercuryConfig.model_fields:
        if name != "home":  # the ledger stays in the test's own home (tests/conftest.py)
            monkeypatch.delenv("MERCURY_" + name.upper(), raising=False)
    monkeypatch.delenv("MERCURY_PLAIN", raising=False)
    shell = InteractiveShell.instance()
    shell.config.pop("Mercury", None)  # %config also lands in the shell's config: start clean
    shell.run_line_magic("load_ext", "mercury_nb")
    yield shell
    shell.run_line_magic("unload_ext", "mercury_nb")
    shell.config.pop("Mercury", None)


class GatedModel(ScriptedModel):
    """A scripted model that holds call number ``gate_at`` (0-based) until ``gate`` is set."""

    def __init__(self, turns: Sequence[Turn], name: str, gate_at: int) -> None:
        super().__init__(turns, name=name)
        self.gate_at = gate_at
        self.calls = 0
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()

    def stream(self, request: ModelRequest) -> Any:
        return self._gated(request, self.calls)

    async def _gated(self, request: ModelRequest, number: int) -> Any:
        self.calls += 1
        if number == self.gate_at:
            self.entered.set()
            await self.gate.wait()
        chunk: StreamChunk
        async for chunk in ScriptedModel.stream(self, request):
            yield chunk


@pytest.fixture
def names() -> Iterator[list[str]]:
    registered: list[str] = []
    yield registered
    for name in registered:
        unregister_scripted_model(name)


def register(names: list[str], model_or_turns: Any) -> ScriptedModel:
    name = model_or_turns.name if isinstance(model_or_turns, ScriptedModel) else (
        f"scripted/m-{uuid.uuid4().hex[:8]}"
    )
    names.append(name)
    return register_scripted_model(name, model_or_turns)


def verified_turns(test_file: str = "test_hello.py") -> list[Turn]:
    """Create a test file, run it (exit 0, after the change), then answer."""
    check = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider {test_file}"
    return [
        Turn(tool_calls=(call("create_file", path=test_file,
                              content="def test_ok():\n    assert True\n"),)),
        Turn(tool_calls=(call("run_command", command=check),)),
        Turn(text="Created the test and it passes."),
    ]


def flags(model: ScriptedModel, workdir: Path, *extra: str) -> str:
    return " ".join([f"--model {model.name}", f"--workdir {shlex.quote(str(workdir))}",
                     "--permissions auto", *extra])  # these tasks run their check unasked


# --- --wait and blocking runs ---------------------------------------------------------


def test_wait_cell_runs_the_task_inside_the_cell(
    ip: InteractiveShell, names: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = register(names, verified_turns())
    result = ip.run_cell(f"%%mercury {flags(model, tmp_path, '--wait')}\nCreate a passing test.")
    assert result.success, result.error_in_exec
    model.assert_complete()
    assert (tmp_path / "test_hello.py").is_file()
    record = registry.latest()
    assert record is not None and record.result is not None
    out = capsys.readouterr().out
    assert record.result.banner in out
    assert "Created the test and it passes." in out


def test_cell_magic_called_directly_blocks_when_no_loop_runs(
    ip: InteractiveShell, names: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = register(names, verified_turns())
    assert ip.run_cell_magic("mercury", flags(model, tmp_path), "Create a passing test.") is None
    model.assert_complete()
    record = registry.latest()
    assert record is not None and record.result is not None
    assert record.result.task_id == record.task_id
    assert (tmp_path / "test_hello.py").is_file()
    assert record.result.banner in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "awaited"),
    [
        pytest.param("--wait", True, id="wait"),
        pytest.param("--model scripted/x --wait --max-steps 3", True, id="wait-among-flags"),
        pytest.param("--wai", True, id="abbreviated-wait"),
        pytest.param("--model scripted/x", False, id="no-wait"),
        pytest.param("--wait --bogus", False, id="bad-args-left-for-the-magic-to-report"),
        pytest.param('--wait --model "unclosed', False, id="bad-quoting"),
    ],
)
def test_transformer_awaits_only_wait_cells(ip: InteractiveShell, line: str, awaited: bool) -> None:
    code = ip.transform_cell(f"%%mercury {line}\nDo it.\n")
    assert code.startswith("await ") is awaited
    assert magic_line_of(code.removeprefix("await "), "mercury") == line


def test_transformer_leaves_other_cells_and_sync_shells_alone(ip: InteractiveShell) -> None:
    assert not ip.transform_cell("%%capture --wait\nx = 1\n").startswith("await")
    assert not ip.transform_cell("x = 1\n").startswith("await")
    ip.autoawait = False
    try:
        assert not ip.transform_cell("%%mercury --wait\nDo it.\n").startswith("await")
    finally:
        ip.autoawait = True


async def test_wait_inside_a_running_loop_returns_an_awaitable(
    ip: InteractiveShell, names: list[str], tmp_path: Path
) -> None:
    model = register(names, verified_turns())
    waiter = ip.run_cell_magic("mercury", flags(model, tmp_path, "--wait"), "Create a test.")
    assert isinstance(waiter, scheduling.WaitForTask)
    assert await waiter is None
    assert waiter.run.result is not None
    model.assert_complete()


async def test_a_wait_cells_flags_are_parsed_once_for_its_transformer_and_its_magic(
    ip: InteractiveShell, names: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mercury_nb.kernel import magics

    parser = magics._parser()
    parses: list[str] = []
    original = parser.parse_argstring
    monkeypatch.setattr(parser, "parse_argstring",
                        lambda line: parses.append(line) or original(line))
    model = register(names, verified_turns())
    line = flags(model, tmp_path, "--wait", f"--max-steps {len(names) + 40}")  # a new line
    code = ip.transform_cell(f"%%mercury {line}\nCreate a test.\n")
    assert code.startswith("await")
    waiter = ip.run_cell_magic("mercury", line, "Create a test.")
    assert await waiter is None
    assert parses == [line]


# --- background runs on the loop --------------------------------------------------------


async def test_background_cell_returns_at_once_and_the_task_finishes_on_the_loop(
    ip: InteractiveShell, names: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = register(names, GatedModel(verified_turns(), f"scripted/g-{uuid.uuid4().hex[:8]}", 0))
    assert ip.run_cell_magic("mercury", flags(model, tmp_path), "Create a passing test.") is None
    record = registry.latest()
    assert record is not None and record in registry.running()
    assert not record.task.done()
    assert not (tmp_path / "test_hello.py").exists()
    await model.entered.wait()
    model.gate.set()
    outcome = await record.task
    model.assert_complete()
    assert (tmp_path / "test_hello.py").is_file()
    assert record not in registry.running() and registry.get(record.task_id) is record
    assert outcome.banner in capsys.readouterr().out  # via the cell's display handle


async def test_stop_cancels_the_task_into_an_aborted_outcome_keeping_files(
    ip: InteractiveShell, names: list[str], tmp_path: Path
) -> None:
    model = register(names, GatedModel(verified_turns(), f"scripted/s-{uuid.uuid4().hex[:8]}", 1))
    ip.run_cell_magic("mercury", flags(model, tmp_path), "Create a passing test.")
    record = registry.latest()
    assert record is not None
    await model.entered.wait()  # the file is written, the model is mid-request
    record.stop()
    outcome = await record.task
    assert outcome.status == "aborted"
    assert (tmp_path / "test_hello.py").is_file()
    assert [change.path for change in outcome.changes] == ["test_hello.py"]


async def test_background_exception_is_surfaced_in_the_magics_cell(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def broken_run_task(*args: Any, **kwargs: Any) -> TaskOutcome:
        raise RuntimeError("boom from the agent")

    monkeypatch.setattr("mercury_nb.agent.task.run_new_session", broken_run_task)
    monkeypatch.setenv("OPENAI_API_KEY", NOT_SENT_KEY)  # past the cell's missing-key refusal
    ip.run_cell_magic("mercury", f"--workdir {shlex.quote(str(tmp_path))}", "Anything.")
    record = registry.latest()
    assert record is not None
    await asyncio.wait([record.task])
    out = capsys.readouterr().out
    assert "Traceback" in out and "RuntimeError: boom from the agent" in out


def test_wait_exception_is_the_cells_error(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async def broken_run_task(*args: Any, **kwargs: Any) -> TaskOutcome:
        raise RuntimeError("boom while waiting")

    monkeypatch.setattr("mercury_nb.agent.task.run_new_session", broken_run_task)
    monkeypatch.setenv("OPENAI_API_KEY", NOT_SENT_KEY)  # past the cell's missing-key refusal
    result = ip.run_cell(f"%%mercury --wait --workdir {shlex.quote(str(tmp_path))}\nAnything.")
    assert isinstance(result.error_in_exec, RuntimeError)
    assert str(result.error_in_exec) == "boom while waiting"


# --- usage errors start nothing ---------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "body", "message"),
    [
        pytest.param("--bogus", "Do it.", "unrecognized arguments: --bogus", id="unknown-flag"),
        pytest.param("--wait --bogus", "Do it.", "unrecognized arguments: --bogus",
                     id="unknown-flag-with-wait"),
        pytest.param("--max-steps many", "Do it.", "invalid int value: 'many'", id="non-int"),
        pytest.param("--max-steps 0", "Do it.", "max_steps", id="config-rejects-zero-steps"),
        pytest.param("", "   \n\t\n", "needs a task", id="empty-task"),
        pytest.param("--wait", "\n", "needs a task", id="blank-task-with-wait"),
        pytest.param("--wait", "", "cell body is empty", id="no-body-at-all-ipython-says-so"),
        pytest.param("--workdir /no/such/dir", "Do it.", "is not a directory",
                     id="missing-workdir"),
        pytest.param('--model "unclosed', "Do it.", "usage: %%mercury", id="bad-quoting"),
    ],
)
def test_usage_errors_start_nothing(
    ip: InteractiveShell, names: list[str], line: str, body: str, message: str,
    request: pytest.FixtureRequest,
) -> None:
    model = register(names, [Turn(text="never asked")])
    before = registry.latest()
    result = ip.run_cell(f"%%mercury --model {model.name} {line}\n{body}")
    error = result.error_in_exec
    assert isinstance(error, UsageError)
    assert message in str(error)
    if "ipython-says-so" not in request.node.name:
        assert "usage: %%mercury [--model M]" in str(error)
    assert registry.latest() is before
    assert model.requests == []


def test_settings_with_unknown_override_are_a_usage_error(ip: InteractiveShell) -> None:
    ip.run_line_magic("config", "Mercury.overrides = {'no_such_field': 1}")
    result = ip.run_cell("%%mercury\nDo it.")
    assert isinstance(result.error_in_exec, UsageError)
    assert "no_such_field" in str(result.error_in_exec)


# --- configuration precedence: defaults < traitlets < env < flags -------------------------


@pytest.fixture
def seen_configs(monkeypatch: pytest.MonkeyPatch) -> list[MercuryConfig]:
    seen: list[MercuryConfig] = []

    async def recording_run_task(
        task: str, config: MercuryConfig | None = None, *, on_event: EventSink | None = None,
        task_id: str | None = None, **_: Any,
    ) -> TaskOutcome:
        assert config is not None and on_event is not None and task_id is not None
        seen.append(config)
        on_event(TaskStarted(task_id, task, config.model, config.max_steps))
        done = TaskOutcome(task_id=task_id, task=task, status="completed", verdict="text-stop",
                           answer="ok", banner="recorded")
        on_event(TaskFinished(done))
        return done

    monkeypatch.setattr("mercury_nb.agent.task.run_new_session", recording_run_task)
    monkeypatch.setenv("OPENAI_API_KEY", NOT_SENT_KEY)  # past the cell's missing-key refusal
    return seen


@pytest.mark.parametrize(
    ("config_lines", "env", "line", "expected"),
    [
        pytest.param([], {}, "", {"model": MercuryConfig().model, "max_steps": 75,
                                  "mode": "execute", "auto_yes": False}, id="defaults"),
        pytest.param(["Mercury.model = 'from-traitlets'", "Mercury.max_steps = 9"], {}, "",
                     {"model": "from-traitlets", "max_steps": 9}, id="traitlets-over-defaults"),
        pytest.param(["Mercury.model = 'from-traitlets'"], {"MERCURY_MODEL": "from-env"}, "",
                     {"model": "from-env"}, id="env-over-traitlets"),
        pytest.param(["Mercury.model = 'from-traitlets'"], {"MERCURY_MODEL": "from-env"},
                     "--model from-flag", {"model": "from-flag"}, id="flag-over-env"),
        pytest.param(["Mercury.max_steps = 9"], {"MERCURY_MAX_STEPS": "12"}, "--max-steps 4",
                     {"max_steps": 4}, id="max-steps-all-layers"),
        pytest.param(["Mercury.fallbacks = ['t1']"], {"MERCURY_FALLBACKS": "e1,e2"},
                     "--fallback f1 --fallback f2", {"fallbacks": ("f1", "f2")},
                     id="repeated-fallback-flags"),
        pytest.param(["Mercury.fallbacks = ['t1', 't2']"], {}, "", {"fallbacks": ("t1", "t2")},
                     id="traitlets-fallbacks"),
        pytest.param(["Mercury.overrides = {'command_timeout_s': 7.5}"], {}, "",
                     {"command_timeout_s": 7.5}, id="generic-overrides"),
        pytest.param([], {}, "--chat --yes", {"mode": "chat", "auto_yes": True},
                     id="chat-and-yes-flags"),
        pytest.param(["Mercury.api_base = 'http://127.0.0.1:9/t'"], {}, "--api-base http://127.0.0.1:9/f",
                     {"api_base": "http://127.0.0.1:9/f"}, id="api-base-flag"),
        pytest.param(["Mercury.pass_env = ['T_TOKEN']"], {"MERCURY_PASS_ENV": "E_TOKEN"},
                     "--pass-env F_TOKEN --pass-env G_KEY", {"pass_env": ("F_TOKEN", "G_KEY")},
                     id="repeated-pass-env-flags"),
        pytest.param(["Mercury.pass_env = ['T_TOKEN']"], {}, "", {"pass_env": ("T_TOKEN",)},
                     id="traitlets-pass-env"),
        pytest.param(["Mercury.sandbox = 'workspace-write'", "Mercury.sandbox_network = True"],
                     {}, "--sandbox off", {"sandbox": "off", "sandbox_network": True},
                     id="sandbox-flag-over-traitlets"),
        pytest.param([], {"MERCURY_SANDBOX_NETWORK": "0"}, "--sandbox-network",
                     {"sandbox_network": True}, id="sandbox-network-flag"),
        pytest.param(["Mercury.max_cost_usd = 2.0", "Mercury.max_tokens = 9000"],
                     {"MERCURY_MAX_COST_USD": "1.5"}, "--max-cost 0.5",
                     {"max_cost_usd": 0.5, "max_tokens": 9000}, id="budget-flags-and-traitlets"),
        pytest.param([], {}, "", {"permissions": "edits", "allow": ()}, id="permissions-default"),
        pytest.param(["Mercury.permissions = 'ask'", "Mercury.allow = ['ls*']"],
                     {"MERCURY_PERMISSIONS": "read-only"},
                     '--permissions auto --allow "python -m pytest*" --allow "pip install x"',
                     {"permissions": "auto", "allow": ("python -m pytest*", "pip install x")},
                     id="permissions-and-repeated-allow-flags"),
        pytest.param(["Mercury.permissions = 'ask'", "Mercury.allow = ['ls*']"], {}, "",
                     {"permissions": "ask", "allow": ("ls*",)}, id="traitlets-permissions"),
        pytest.param(["Mercury.permissions = 'ask'"], {"MERCURY_PERMISSIONS": "read-only"}, "",
                     {"permissions": "read-only"}, id="permissions-env-over-traitlets"),
        pytest.param([], {"MERCURY_MAX_TOKENS": "100"}, "--max-tokens 50",
                     {"max_tokens": 50, "max_cost_usd": None}, id="max-tokens-flag-over-env"),
    ],
)
def test_config_precedence(
    ip: InteractiveShell, seen_configs: list[MercuryConfig], monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path, config_lines: list[str], env: dict[str, str], line: str,
    expected: dict[str, Any],
) -> None:
    for config_line in config_lines:
        ip.run_line_magic("config", config_line)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = ip.run_cell(f"%%mercury --wait --workdir {shlex.quote(str(tmp_path))} {line}\nDo it.")
    assert result.success, result.error_in_exec
    (config,) = seen_configs
    assert {key: getattr(config, key) for key in expected} == expected
    assert config.workdir == tmp_path


def test_traitlets_workdir_is_used_without_a_flag(
    ip: InteractiveShell, seen_configs: list[MercuryConfig], tmp_path: Path
) -> None:
    ip.run_line_magic("config", f"Mercury.workdir = {str(tmp_path)!r}")
    assert ip.run_cell("%%mercury --wait\nDo it.").success
    assert seen_configs[0].workdir == tmp_path


# --- extension lifecycle --------------------------------------------------------------


def test_unload_removes_the_magic_the_transformer_and_the_settings(ip: InteractiveShell) -> None:
    assert "mercury" in ip.magics_manager.magics["cell"]
    ip.run_line_magic("unload_ext", "mercury_nb")
    try:
        assert "mercury" not in ip.magics_manager.magics["cell"]
        assert not any(isinstance(t, WaitCellTransformer) for t in ip.input_transformers_post)
        assert not any(type(c).__name__ == "Mercury" for c in ip.configurables)
    finally:
        ip.run_line_magic("load_ext", "mercury_nb")
    assert isinstance(ip.magics_manager.registry["MercuryMagics"], MercuryMagics)
    assert sum(isinstance(t, WaitCellTransformer) for t in ip.input_transformers_post) == 1


class ExplodingView:
    def __init__(self) -> None:
        self.events = 0
        self.errors: list[str] = []

    def on_event(self, event: object) -> None:
        self.events += 1
        raise KeyError("view bug")

    def bind_stop(self, stop: object) -> None: ...

    def show_error(self, text: str) -> None:
        self.errors.append(text)

    def close(self) -> None: ...


def test_a_failing_view_reports_once_and_never_breaks_the_agent_loop() -> None:
    view = ExplodingView()
    sink = guarded_sink(view)
    for _ in range(3):
        sink(TaskStarted("t", "x", "m", 1))  # must not raise into the loop
    assert view.events == 1
    assert len(view.errors) == 1 and "KeyError: 'view bug'" in view.errors[0]


# --- help, usage and the README synopsis --------------------------------------------------
def magic_flags() -> set[str]:
    """The flags the magic's own help lists (what ``%%mercury --help`` prints)."""
    parser = MercuryMagics.mercury.parser  # type: ignore[attr-defined]
    return set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", parser.format_help()))


@pytest.mark.parametrize(
    "cell",
    [
        pytest.param("%%mercury --help", id="help-alone"),
        pytest.param("%%mercury -h\n", id="short-flag"),
        pytest.param("%%mercury --model scripted/x --help\nsome task", id="with-a-body"),
        pytest.param("%mercury --help", id="line-magic"),
    ],
)
def test_help_prints_the_magics_help_and_starts_nothing(
    ip: InteractiveShell, cell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    result = ip.run_cell(cell)
    assert result.success, result.error_in_exec or result.error_before_exec
    out = capsys.readouterr().out
    assert out.startswith("usage: %%mercury [--model M]")
    assert "Run the cell body as a task for the mercury agent." in out
    assert all(flag in out for flag in magic_flags())
    assert registry.running() == ()


def test_the_inspector_usage_line_reads_the_cell_magic(ip: InteractiveShell) -> None:
    text = ip.object_inspect_text("%%mercury")
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    usage_lines = [line.strip() for line in plain.splitlines() if "[--model M]" in line]
    assert usage_lines and all(line.startswith("%%mercury [") for line in usage_lines)


def test_the_readme_synopsis_lists_every_flag_the_magic_accepts() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    [synopsis] = re.findall(r"^`(%%mercury \[.*)`$", readme, flags=re.MULTILINE)
    listed = set(re.findall(r"--[a-z][a-z-]*", synopsis))
    assert listed == magic_flags() | {"--help"}
