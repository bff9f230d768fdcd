"""Replays every recorded run of the real small model and prints how it ended then and now.

Each recording in tests/replays/data is played over loopback HTTP (the openai-SDK transport,
``GET /props`` answered as that run's server did, the stuck model repeating its last reply
when asked for more than was recorded) with the default configuration, as
``python -m mercury_nb run`` would run it.

    python scripts/replay_report.py [--markdown]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing.replay import load_recording, observed_on, replay_server

DATA = Path(__file__).resolve().parents[1] / "tests" / "replays" / "data"
README = "# calc\nA tiny command-line calculator.\n"
WINDOW_SET = {"r7b_ctx2048_window8192": 8192}
"""Runs recorded with MERCURY_CONTEXT_WINDOW set."""


def _workspace(root: Path, run: str, banner_then: str) -> Path:
    if "readme" in run:
        (root / "README.md").write_text(README)
    if "git" in run or "git-verified" in banner_then:
        for args in (["init", "-q"], ["add", "-A"],
                     ["-c", "user.email=t@example.com", "-c", "user.name=t",
                      "commit", "-q", "--allow-empty", "-m", "start"]):
            subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


async def replay(path: Path) -> dict[str, str]:
    recording = load_recording(path)
    then = recording.outcome_then
    with tempfile.TemporaryDirectory() as tmp:
        workspace = _workspace(Path(tmp), recording.run, str(then.get("banner")))
        with replay_server(recording, None, "repeat_last", workspace=workspace) as server:
            config = MercuryConfig(workdir=workspace, mode=recording.mode,  # type: ignore[arg-type]
                                   model="smollm2", api_base=server.url, retry_base_s=0.0,
                                   home=Path(tmp) / ".home",
                                   context_window=WINDOW_SET.get(recording.run))
            outcome = await run_new_session(recording.task, config)
            shapes = observed_on(server)
    return {
        "run": recording.run,
        "task": recording.task or "(see the recording)",
        "then": f"{then.get('status')}: {str(then.get('banner')).splitlines()[0]}",
        "now": f"{outcome.status}: {outcome.banner.splitlines()[0]}",
        "blocker": outcome.blocker or "",
        "requests": f"{len(shapes)} ({sum(s.forced for s in shapes)} forced)",
        "resumable": "yes" if outcome.resumable else "no",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    rows = [asyncio.run(replay(path)) for path in sorted(DATA.glob("*.json"))]
    if args.markdown:
        print("| run | then | now | blocker | requests | resumable |")
        print("| --- | --- | --- | --- | --- | --- |")
        for row in rows:
            cells = [row[k].replace("|", "\\|") for k in
                     ("run", "then", "now", "blocker", "requests", "resumable")]
            print("| " + " | ".join(cells) + " |")
        return 0
    for row in rows:
        print(f"{row['run']}: {row['task']}")
        for key in ("then", "now", "blocker", "requests", "resumable"):
            print(f"  {key:9} {row[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
