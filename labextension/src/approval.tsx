/**
 * The panel's approvals: a running task's pending question (the server's live state,
 * mercury_nb/runs/live_state.py) with Allow once / Always allow <rule> / Deny, and the
 * badge on its list row. Every value is a React text node (escaped), never HTML.
 */
import React from 'react';

import { APIError, IApproval, ITaskSummary, requestAPI } from './api';
import { oneLine } from './untrusted';

/** The panel's answer words (mercury_nb/server/approval_handler.py ApprovalBody). */
export type PanelAnswer = 'once' | 'always' | 'deny';

/** POST tasks/{id}/approval: answer pending question `request`. */
export function answerApproval(
  id: string,
  request: number,
  answer: PanelAnswer
): Promise<{ answer: string }> {
  return requestAPI(`tasks/${encodeURIComponent(id)}/approval`, {
    method: 'POST',
    body: JSON.stringify({ request, answer })
  });
}

/** The task's pending approval, when it is running and waiting for one. */
export function pendingApproval(task: ITaskSummary): IApproval | null {
  return task.status === 'running' ? (task.live?.approval ?? null) : null;
}

/** The list row's badge while the task waits for an approval. */
export function ApprovalBadge(props: { task: ITaskSummary }): JSX.Element | null {
  const asked = pendingApproval(props.task);
  if (asked === null) {
    return null;
  }
  return (
    <span
      className="jp-mercury-approval-badge"
      role="status"
      title={`Waiting for your approval: ${oneLine(asked.what)}`}
    >
      approval needed
    </span>
  );
}

/** Where a question asked elsewhere can be answered (the panel's buttons could not). */
const ANSWER_ELSEWHERE: Record<string, string> = {
  cell: 'Answer it in the notebook cell that runs this task.',
  terminal: 'Answer it in the terminal that runs this task.'
};

/** The pending question on the task's detail, with its three answers (only when the panel
 * is where it was asked: a task of a cell or a terminal is answered there). */
export function ApprovalBox(props: { task: ITaskSummary }): JSX.Element | null {
  const asked = pendingApproval(props.task);
  const [busy, setBusy] = React.useState(false);
  const [error, setError] = React.useState<string | null>(null);
  const request = asked?.request ?? null;
  React.useEffect(() => setError(null), [props.task.id, request]);
  if (asked === null) {
    return null;
  }
  const answer = (word: PanelAnswer): void => {
    setBusy(true);
    setError(null);
    answerApproval(props.task.id, asked.request, word)
      .catch((reason: unknown) =>
        setError(reason instanceof APIError ? reason.message : String(reason))
      )
      .finally(() => setBusy(false));
  };
  const shown = asked.command ?? asked.what;
  const rule = asked.suggested_rule;
  return (
    <section
      className="jp-mercury-approval"
      role="alertdialog"
      aria-labelledby={`jp-mercury-approval-${props.task.id}`}
      data-request={asked.request}
    >
      <div className="jp-mercury-approval-title" id={`jp-mercury-approval-${props.task.id}`}>
        The agent asks to {asked.command !== null ? 'run' : oneLine(asked.tool)}:
      </div>
      <pre className="jp-mercury-approval-what">{shown}</pre>
      {asked.detail && asked.detail !== shown && (
        <pre className="jp-mercury-approval-detail">{asked.detail}</pre>
      )}
      {asked.asked_in !== 'panel' ? (
        <div className="jp-mercury-approval-elsewhere" role="note">
          {ANSWER_ELSEWHERE[asked.asked_in ?? ''] ??
            'Nobody can answer it where this task runs, so it is denied.'}
        </div>
      ) : (
        <div className="jp-mercury-approval-buttons">
          <button
            className="jp-mercury-allow-once jp-Button jp-mod-styled jp-mod-accept"
            disabled={busy}
            aria-label={`Allow once: ${oneLine(shown)}`}
            onClick={() => answer('once')}
          >
            Allow once
          </button>
          {rule !== null && (
            <button
              className="jp-mercury-allow-always jp-Button jp-mod-styled"
              disabled={busy}
              aria-label={`Always allow ${oneLine(rule)} in this workspace`}
              onClick={() => answer('always')}
            >
              Always allow <code>{oneLine(rule)}</code>
            </button>
          )}
          <button
            className="jp-mercury-deny jp-Button jp-mod-styled jp-mod-warn"
            disabled={busy}
            aria-label={`Deny: ${oneLine(shown)}`}
            onClick={() => answer('deny')}
          >
            Deny
          </button>
        </div>
      )}
      {error && (
        <div className="jp-mercury-error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
