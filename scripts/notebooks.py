"""Tutorial notebooks: strip volatile metadata (``strip``) or re-run and strip (``refresh``).

``python scripts/notebooks.py strip [FILE ...]`` rewrites notebooks so that running one in
JupyterLab or nbclient changes nothing but outputs and execution counts once stripped again:
no execution timings in cell metadata, no saved widget state, no interpreter version in
``language_info``, one fixed kernelspec. ``--stdin`` reads one notebook and writes it to
stdout, so it can serve as a git clean filter (see README, "Tutorials").
``python scripts/notebooks.py refresh [FILE ...]`` executes each notebook in its folder
(as nbval will) and strips it. Default FILEs: notebooks/*.ipynb.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python", "file_extension": ".py", "mimetype": "text/x-python"}
CELL_KEYS_DROPPED = ("execution", "collapsed", "scrolled", "jp-MarkdownHeadingCollapsed")


def strip(nb: dict[str, Any]) -> dict[str, Any]:
    """``nb`` with only stable metadata (a pure function of the notebook's content)."""
    meta = dict(nb.get("metadata", {}))
    meta.pop("widgets", None)
    meta["kernelspec"] = dict(KERNELSPEC)
    meta["language_info"] = dict(LANGUAGE_INFO)
    nb = {**nb, "metadata": meta}
    cells = []
    for cell in nb.get("cells", []):
        cell = {**cell, "metadata": {k: v for k, v in cell.get("metadata", {}).items()
                                     if k not in CELL_KEYS_DROPPED}}
        cells.append(cell)
    nb["cells"] = cells
    return nb


def dumps(nb: dict[str, Any]) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def default_files() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def refresh(path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    class AsNbvalSees(NotebookClient):  # type: ignore[misc]
        """nbval applies no display updates (a finished widget's display keeps its first
        output), so the stored outputs must not either, or the tutorial fails as written."""

        def _update_display_id(self, display_id: str, msg: dict[str, Any]) -> None:
            return None

        async def async_execute_cell(self, cell: Any, cell_index: int, *args: Any,
                                     **kwargs: Any) -> Any:
            """A cell tagged ``nbval-skip`` is not run (nbval skips it): it keeps what it had,
            so a refresh never sends a real request or stores a placeholder key's output."""
            if "nbval-skip" in cell.get("metadata", {}).get("tags", ()):
                return cell
            return await super().async_execute_cell(cell, cell_index, *args, **kwargs)

    nb = nbformat.read(path, as_version=4)
    AsNbvalSees(nb, timeout=600, kernel_name="python3",
                resources={"metadata": {"path": str(path.parent)}}).execute()
    path.write_text(dumps(strip(json.loads(nbformat.writes(nb)))), encoding="utf-8")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("strip", "refresh"):
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "strip" and rest == ["--stdin"]:
        sys.stdout.write(dumps(strip(json.load(sys.stdin))))
        return 0
    for path in [Path(p) for p in rest] or default_files():
        if command == "refresh":
            refresh(path)
        else:
            nb = json.loads(path.read_text(encoding="utf-8"))
            path.write_text(dumps(strip(nb)), encoding="utf-8")
        print(f"{command}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
