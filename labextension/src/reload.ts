/**
 * After a task ends: reload the open documents it changed on disk, silently when they hold
 * no edits of their own (a notebook dirty only by its metadata or outputs holds none), else
 * ask, Keep being the default; then briefly highlight the notebook cells that changed and
 * say in a toast what changed. A notebook the task edited live (live.ts) is left alone.
 */
import { Notification } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';

import { IFileChange, INotebookDiff } from './api';
import { askSafely } from './dialogs';
import { appliedLive } from './live';
import { labPath } from './paths';
import { shownName } from './untrusted';

/** How long changed cells stay highlighted after a reload. */
export const HIGHLIGHT_MS = 6000;
const HIGHLIGHT_CLASS = 'jp-mercury-reloaded-cell';

interface ICellLike {
  node: HTMLElement;
}

interface INotebookLike {
  content?: { widgets?: ReadonlyArray<ICellLike> };
}

interface ICellJSON {
  cell_type?: string;
  source?: string | string[];
}

/** SHA-256 (hex) of the cells' types and sources as compact JSON: the server's
 * `sources_digest` (mercury_nb/workspace/notebook_diff.py) of an open notebook's model. */
async function sourcesDigest(cells: ICellJSON[]): Promise<string | null> {
  if (!window.crypto?.subtle) {
    return null;
  }
  const pairs = cells.map(cell => [
    String(cell.cell_type ?? ''),
    Array.isArray(cell.source) ? cell.source.join('') : String(cell.source ?? '')
  ]);
  const bytes = new TextEncoder().encode(JSON.stringify(pairs));
  const digest = await window.crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest))
    .map(b => b.toString(16).padStart(2, '0'))
    .join('');
}

/** Whether the open notebook's cells (types and sources) are those the task started from or
 * those it left: its dirtiness is then only metadata (a kernel's `language_info`) or outputs,
 * and reloading loses none of the user's edits. */
export async function onlyMetadataDirty(
  content: unknown,
  notebook: INotebookDiff | null | undefined
): Promise<boolean> {
  const cells = (content as { cells?: unknown } | null)?.cells;
  if (!notebook || !Array.isArray(cells)) {
    return false;
  }
  const digest = await sourcesDigest(cells as ICellJSON[]);
  return (
    digest !== null && (digest === notebook.sources_before || digest === notebook.sources_after)
  );
}

/** The changed cells in words: "cell 2 changed, cell 3 added, cell 5 removed". */
export function cellWords(notebook: INotebookDiff): string {
  const kept = notebook.cells.filter(cell => cell.kind !== 'removed');
  const removed = notebook.cells.length - kept.length;
  const words = kept.map(
    cell => `cell ${cell.number} ${cell.kind === 'modified' ? 'changed' : cell.kind}`
  );
  if (removed > 0) {
    words.push(`${removed} cell${removed === 1 ? '' : 's'} removed`);
  }
  const more = notebook.more_cells ?? 0;
  const shown = words.slice(0, 4);
  const left = words.length - shown.length + more;
  if (left > 0) {
    shown.push(`${left} more`);
  }
  if (shown.length === 0) {
    return notebook.metadata_changed ? 'metadata changed' : 'no cell changed';
  }
  return shown.join(', ');
}

/** Marks the changed cells for HIGHLIGHT_MS. The notebook builds its cell views as the
 * reloaded model arrives, so the marks are laid again a few times while they show. */
function highlight(widget: INotebookLike, notebook: INotebookDiff): void {
  const places = notebook.cells
    .filter(cell => cell.kind !== 'removed')
    .map(cell => cell.number - 1);
  const marked = new Set<HTMLElement>();
  const mark = (): void => {
    const cells = widget.content?.widgets ?? [];
    for (const place of places) {
      const node = cells[place]?.node;
      if (node && !marked.has(node)) {
        node.classList.add(HIGHLIGHT_CLASS);
        marked.add(node);
      }
    }
  };
  mark();
  for (const delay of [100, 400, 1000]) {
    window.setTimeout(mark, delay);
  }
  window.setTimeout(() => {
    marked.forEach(node => node.classList.remove(HIGHLIGHT_CLASS));
  }, HIGHLIGHT_MS);
}

function whatChanged(path: string, change: IFileChange, taskId: string): string {
  const what = change.notebook
    ? cellWords(change.notebook)
    : change.measured === false
      ? change.kind
      : `+${change.added} −${change.removed}`;
  return `${shownName(path)} reloaded: ${what} (by task ${taskId})`;
}

export async function reloadChanged(
  docs: IDocumentManager,
  workspace: string,
  changes: IFileChange[],
  root: string,
  taskId: string
): Promise<void> {
  for (const change of changes) {
    if (change.kind === 'deleted') {
      continue;
    }
    const path = labPath(root, workspace, change.path);
    const widget = path === null ? undefined : docs.findWidget(path);
    const context = widget ? docs.contextForWidget(widget) : undefined;
    if (!context || !widget || path === null) {
      continue;
    }
    if (appliedLive(taskId, path)) {
      continue; // the open document took the task's edits live and shows them already
    }
    // only a notebook's model is JSON (a text model's toJSON parses its text and throws)
    const onlyMetadata =
      change.notebook !== undefined &&
      change.notebook !== null &&
      (await onlyMetadataDirty(context.model.toJSON(), change.notebook));
    if (context.model.dirty && !onlyMetadata) {
      const reload = await askSafely({
        title: 'File changed by a mercury task',
        body: `${path} was changed on disk by a task, and it has unsaved edits here. Reload it from disk (your edits are lost) or keep your edits (saving will overwrite the task's changes)?`,
        safe: 'Keep my edits',
        risky: 'Reload from disk'
      });
      if (!reload) {
        continue;
      }
    }
    await context.revert();
    if (change.notebook) {
      highlight(widget as INotebookLike, change.notebook);
    }
    Notification.info(whatChanged(path, change, taskId), { autoClose: 8000 });
  }
}
