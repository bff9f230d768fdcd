from pathlib import Path
from mercury_nb.agent.events import Notice
from mercury_nb.agent.loop import run_task
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call
from mercury_nb.ui.banners import STEP_BUDGET_PAUSE

def cfg(tmp_path, **kw):
    return MercuryConfig(workdir=tmp_path, retry_base_s=0.0, **kw)

async def test_steps_exhausted_continues_then_pauses(tmp_path: Path, backend) -> None:
    turns = [Turn(tool_calls=(call("list_dir", path="." + "/." * n),)) for n in range(14)]
    fake = backend(turns)
    events = []
    outcome = await run_task("build the thing", cfg(tmp_path, max_steps=2), model=fake.model,
                             on_event=events.append)
    assert outcome.status == "paused"
    assert outcome.verdict == "steps-exhausted"
    assert outcome.banner.startswith(STEP_BUDGET_PAUSE)
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert len(notices) == 6

async def test_cut_write_leaves_no_file(tmp_path: Path, scripted_model) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("create_file", path="half.py", content="x = 1\n"),),
             finish_reason="length"),
        Turn(text="I'll stop here — should I write it in sections instead?"),
    ])
    outcome = await run_task("write half.py", cfg(tmp_path), model=model)
    assert not (tmp_path / "half.py").exists()
    assert outcome.status == "completed"
    assert "no file changes" in outcome.banner
