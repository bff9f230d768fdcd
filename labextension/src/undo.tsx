/**
 * Undo in a task's detail: the Undo button (every file), Revert (one changed file), and
 * what the undo did: restored, left as is (and why), and what no undo takes back.
 * Every value is a React text node (escaped), never HTML.
 */
import React from 'react';

import { APIError, ITaskSummary, requestAPI } from './api';
import { oneLine, shownName } from './untrusted';

/** POST tasks/{id}/undo's reply (mercury_nb/runs/undoing.py UndoReport.to_json). */
export interface IUndoReport {
  task_id: string;
  /** null: the undo changed nothing, so it was not recorded (nothing to put back). */
  undo_id: string | null;
  restored: string[];
  left: { path: string; why: string }[];
  not_undoable: string[];
}

/** Undo the task's file changes, or only `path`'s. */
export function undoTask(id: string, path?: string): Promise<IUndoReport> {
  return requestAPI(`tasks/${encodeURIComponent(id)}/undo`, {
    method: 'POST',
    body: JSON.stringify(path === undefined ? {} : { path })
  });
}

/** Whether the task may be undone from the panel: it has finished and changed files. */
export function undoable(task: ITaskSummary, changed: number): boolean {
  return task.status !== 'running' && changed > 0;
}

export interface IUndoState {
  report: IUndoReport | null;
  error: string | null;
  busy: boolean;
  /** Undo every file (no `path`) or one. */
  run: (path?: string) => void;
}

/** The undo of task `id`: its last report, its error, and how to run it. */
export function useUndo(id: string): IUndoState {
  const [report, setReport] = React.useState<IUndoReport | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [busy, setBusy] = React.useState(false);
  // the task shown now: an undo's reply for a task no longer shown is not its result
  const shown = React.useRef(id);
  React.useEffect(() => {
    shown.current = id;
    setReport(null);
    setError(null);
    setBusy(false);
  }, [id]);
  const run = (path?: string): void => {
    const asked = id;
    const current = (): boolean => shown.current === asked;
    setBusy(true);
    setError(null);
    undoTask(asked, path)
      .then(reply => current() && setReport(reply))
      .catch(
        (reason: unknown) =>
          current() &&
          setError(reason instanceof APIError ? reason.message : String(reason))
      )
      .finally(() => current() && setBusy(false));
  };
  return { report, error, busy, run };
}

export function UndoButton(props: { undo: IUndoState }): JSX.Element {
  return (
    <button
      className="jp-mercury-undo jp-Button jp-mod-styled"
      title="Put every file this task changed back as it was before it (a file changed since is left as is)"
      disabled={props.undo.busy}
      onClick={() => props.undo.run()}
    >
      Undo
    </button>
  );
}

/** What the last undo did, or why it could not run. */
export function UndoResult(props: { undo: IUndoState }): JSX.Element | null {
  const { report, error } = props.undo;
  if (error !== null) {
    return <div className="jp-mercury-undo-result jp-mercury-blocker">{oneLine(error)}</div>;
  }
  if (report === null) {
    return null;
  }
  return (
    <section className="jp-mercury-undo-result" data-undo-id={report.undo_id ?? ''}>
      <h3>Undo</h3>
      <div>
        {report.restored.length} file(s) restored
        {report.restored.length > 0 ? ': ' : ''}
        {report.restored.map(shownName).join(', ')}
      </div>
      {report.left.length > 0 && (
        <ul className="jp-mercury-undo-left">
          {report.left.map((item, index) => (
            <li key={index} data-path={item.path}>
              {oneLine(item.why)}
            </li>
          ))}
        </ul>
      )}
      {report.not_undoable.length > 0 && (
        <>
          <div>Not undoable:</div>
          <ul className="jp-mercury-not-undoable">
            {report.not_undoable.map((what, index) => (
              <li key={index}>{oneLine(what)}</li>
            ))}
          </ul>
        </>
      )}
      {report.undo_id !== null && (
        <div className="jp-mercury-muted">to put them back, undo task {report.undo_id}</div>
      )}
    </section>
  );
}
