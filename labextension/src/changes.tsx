/**
 * A task's changed files in its detail: each with its counts, an Open button (Lab opens the
 * file, when it lies under the server root), and its diff, coloured: a notebook cell by
 * cell (nbdime's diff, built on the server), any other file as unified diff lines.
 * Every value is a React text node (escaped), never HTML.
 */
import React from 'react';

import { ICellChange, IFileChange, INotebookDiff } from './api';
import { labPath } from './paths';
import { oneLine, shownName } from './untrusted';

export interface IFileOpener {
  /** Opens (or shows) the file at `path`, relative to the server root, in Lab. */
  open: (path: string) => void;
  /** Opens the notebook at `path` and scrolls to the cell with id `cellId`, made active. */
  openCell?: (path: string, cellId: string) => void;
}

/** One cell a task wrote: its notebook (as the change lists it) and its id. */
export interface IWrittenCell {
  path: string;
  cellId: string;
}

/** The cells `taskId` wrote (added or changed, with its provenance), in the changes' order. */
export function writtenCells(changes: IFileChange[], taskId: string): IWrittenCell[] {
  const cells: IWrittenCell[] = [];
  for (const change of changes) {
    for (const cell of change.notebook?.cells ?? []) {
      if (cell.kind !== 'removed' && cell.cell_id && cell.task === taskId) {
        cells.push({ path: change.path, cellId: cell.cell_id });
      }
    }
  }
  return cells;
}

/** Links to the cells the task wrote: "cell <id> in analysis.ipynb" opens it there. */
export function WrittenCells(props: {
  changes: IFileChange[];
  taskId: string;
  workspace: string;
  root: string | null;
  files?: IFileOpener;
}): JSX.Element | null {
  const { files } = props;
  const cells = writtenCells(props.changes, props.taskId);
  if (cells.length === 0) {
    return null;
  }
  return (
    <section>
      <h3>Cells it wrote</h3>
      <ul className="jp-mercury-written-cells">
        {cells.map(cell => {
          const label = `cell ${oneLine(cell.cellId)} in ${shownName(cell.path)}`;
          const path =
            props.root === null ? null : labPath(props.root, props.workspace, cell.path);
          const openCell = files?.openCell;
          return (
            <li key={`${cell.path}#${cell.cellId}`}>
              {path === null || !openCell ? (
                <span>{label}</span>
              ) : (
                <button
                  className="jp-mercury-link jp-mercury-written-cell"
                  title={`Open ${path} at this cell`}
                  onClick={() => openCell(path, cell.cellId)}
                >
                  {label}
                </button>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** A line of code or diff as shown: tabs as spaces, every other control escaped. */
function codeText(line: string): string {
  return oneLine(line.replace(/\t/g, '    '));
}

function lineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) {
    return 'jp-mercury-diff-file';
  }
  if (line.startsWith('@@')) {
    return 'jp-mercury-diff-hunk';
  }
  if (line.startsWith('+')) {
    return 'jp-mercury-diff-add';
  }
  if (line.startsWith('-')) {
    return 'jp-mercury-diff-del';
  }
  return 'jp-mercury-diff-same';
}

/** A unified diff (or a preview of +/- lines), one coloured line each. */
export function DiffText(props: { text: string }): JSX.Element {
  const lines = props.text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') {
    lines.pop();
  }
  return (
    <pre className="jp-mercury-diff">
      {lines.map((line, index) => (
        <div key={index} className={lineClass(line)}>
          {codeText(line) || ' '}
        </div>
      ))}
    </pre>
  );
}

const OP_CLASS: { [op: string]: string } = {
  '+': 'jp-mercury-diff-add',
  '-': 'jp-mercury-diff-del',
  ' ': 'jp-mercury-diff-same',
  '…': 'jp-mercury-diff-gap'
};

function cellTitle(cell: ICellChange): string {
  if (cell.kind === 'removed') {
    return `Was cell ${cell.number} · ${oneLine(cell.cell_type)} · removed`;
  }
  const kind = cell.kind === 'modified' ? 'changed' : cell.kind;
  const moved =
    cell.number_before && cell.number_before !== cell.number ? ` (was ${cell.number_before})` : '';
  return `Cell ${cell.number}${moved} · ${oneLine(cell.cell_type)} · ${kind}`;
}

function CellItem(props: { cell: ICellChange }): JSX.Element {
  const { cell } = props;
  return (
    <div className={`jp-mercury-cell jp-mercury-cell-${cell.kind}`} data-cell={cell.number}>
      <div className="jp-mercury-cell-title">{cellTitle(cell)}</div>
      {cell.source.length > 0 && (
        <pre className="jp-mercury-diff">
          {cell.source.map((line, index) => (
            <div key={index} className={OP_CLASS[line.op] ?? 'jp-mercury-diff-same'}>
              <span className="jp-mercury-diff-op">{line.op === '…' ? '…' : line.op}</span>
              {line.op === '…' ? ` ${oneLine(line.text)}` : codeText(line.text) || ' '}
            </div>
          ))}
          {(cell.source_more ?? 0) > 0 && (
            <div className="jp-mercury-diff-gap">… {cell.source_more} more line(s) not shown</div>
          )}
        </pre>
      )}
      {cell.outputs && <div className="jp-mercury-cell-outputs">{oneLine(cell.outputs)}</div>}
      {cell.metadata_changed && <div className="jp-mercury-muted">cell metadata changed</div>}
    </div>
  );
}

/** A notebook's change cell by cell. */
export function NotebookCells(props: { notebook: INotebookDiff }): JSX.Element {
  const { notebook } = props;
  return (
    <div className="jp-mercury-notebook-diff">
      {notebook.cells.map((cell, index) => (
        <CellItem key={index} cell={cell} />
      ))}
      {(notebook.more_cells ?? 0) > 0 && (
        <div className="jp-mercury-muted">… {notebook.more_cells} more changed cell(s)</div>
      )}
      {notebook.metadata_changed && (
        <div className="jp-mercury-muted">notebook metadata changed</div>
      )}
      {notebook.cells.length === 0 && !notebook.metadata_changed && (
        <div className="jp-mercury-muted">no cell changed (execution counts or ids only)</div>
      )}
    </div>
  );
}

function OpenFile(props: {
  change: IFileChange;
  workspace: string;
  root: string | null;
  files?: IFileOpener;
}): JSX.Element | null {
  const { change, files } = props;
  if (change.kind === 'deleted' || !files || props.root === null) {
    return null;
  }
  const path = labPath(props.root, props.workspace, change.path);
  if (path === null) {
    return <span className="jp-mercury-outside">outside the server root, not openable here</span>;
  }
  return (
    <button
      className="jp-mercury-link jp-mercury-open-file"
      title={`Open ${path} in JupyterLab`}
      onClick={event => {
        event.preventDefault(); // a click on the button does not fold the diff
        files.open(path);
      }}
    >
      Open
    </button>
  );
}

function ChangeItem(props: {
  change: IFileChange;
  workspace: string;
  root: string | null;
  files?: IFileOpener;
  onRevert?: (path: string) => void;
}): JSX.Element {
  const { onRevert, ...opener } = props;
  const { change } = props;
  const counts =
    change.measured === false
      ? `${change.kind}, not diffed`
      : `+${change.added} −${change.removed}` +
        (change.kind !== 'modified' ? ` (${change.kind})` : '');
  return (
    <details className="jp-mercury-change" data-path={change.path}>
      <summary>
        <span className="jp-mercury-change-path">{shownName(change.path)}</span>{' '}
        <span className="jp-mercury-change-counts">{counts}</span>{' '}
        <OpenFile {...opener} />{' '}
        {onRevert && (
          <button
            className="jp-mercury-link jp-mercury-revert"
            title={`Put ${shownName(change.path)} back as it was before the task`}
            onClick={event => {
              event.preventDefault(); // a click on the button does not fold the diff
              onRevert(change.path);
            }}
          >
            Revert
          </button>
        )}
      </summary>
      {change.notebook ? (
        <NotebookCells notebook={change.notebook} />
      ) : (
        <DiffText text={change.diff || change.preview || ''} />
      )}
    </details>
  );
}

export function ChangedFiles(props: {
  changes: IFileChange[];
  workspace: string;
  root: string | null;
  files?: IFileOpener;
  /** Revert one file (a finished task's detail offers it). */
  onRevert?: (path: string) => void;
}): JSX.Element {
  return (
    <section>
      <h3>Changed files</h3>
      {props.changes.map(change => (
        <ChangeItem
          key={change.path}
          change={change}
          workspace={props.workspace}
          root={props.root}
          files={props.files}
          onRevert={props.onRevert}
        />
      ))}
    </section>
  );
}
