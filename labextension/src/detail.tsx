/**
 * One task's detail: banner, blocker, answer, diffs, evidence, providers, usage, events.
 * Every value is a React text node (escaped), never HTML.
 */
import React from 'react';

import { ITaskDetail, ITaskSummary } from './api';
import { ApprovalBox } from './approval';
import { ChangedFiles, IFileOpener, WrittenCells } from './changes';
import { STATUS_COLOURS, StatusChip, stepsText } from './common';
import { eventWords } from './events';
import { UndoButton, UndoResult, undoable, useUndo } from './undo';
import { oneLine, shownName } from './untrusted';

/**
 * The model's answer as shown: its own words, framed and labelled (as the cell widget
 * does), plain text (never HTML or Markdown), each line with its controls escaped, so a
 * line of it cannot pass for the panel's verdict.
 */
function quotedAnswer(answer: string): string {
  return answer
    .trim()
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map(line => oneLine(line.replace(/\t/g, '    ')))
    .join('\n');
}

function money(usd: number | null): string {
  return usd === null ? 'unknown' : `$${usd.toFixed(4)}`;
}

/**
 * Whether "no token usage recorded" says something: only for a finished task that asked
 * a model that reports usage. A running task's usage comes at its end; a task that took no
 * step asked nothing; the scripted demo models (`scripted/…`) report none.
 */
export function usageExpected(task: ITaskSummary): boolean {
  return (
    task.status !== 'running' &&
    task.steps > 0 &&
    task.models.some(model => !model.startsWith('scripted/'))
  );
}

/** The blocker, unless the banner already says it (the key error is printed once). */
export function blockerShown(task: ITaskSummary): string | null {
  if (!task.blocker) {
    return null;
  }
  return task.banner && task.banner.includes(task.blocker) ? null : task.blocker;
}

/** The model's text as it streams, shown until the final answer replaces it. */
function LiveText(props: { text: string }): JSX.Element {
  const end = React.useRef<HTMLDivElement>(null);
  React.useEffect(() => {
    end.current?.scrollIntoView({ block: 'nearest' });
  }, [props.text]);
  return (
    <section>
      <h3>The model is writing</h3>
      <div className="jp-mercury-live-text">
        {props.text}
        <span className="jp-mercury-caret">▍</span>
        <div ref={end} />
      </div>
    </section>
  );
}

export function Detail(props: {
  detail: ITaskDetail;
  pulse: string;
  onStop: (id: string) => void;
  onContinue: (id: string) => void;
  onOpen: (id: string) => void;
  onClose: () => void;
  busy: boolean;
  /** The server root (changed files under it open in Lab) and how to open one. */
  root?: string | null;
  files?: IFileOpener;
}): JSX.Element {
  const { detail } = props;
  const task = detail.task;
  const colour = STATUS_COLOURS[task.status] ?? '#616161';
  const undo = useUndo(task.id);
  const canUndo = undoable(task, detail.changes.length);
  return (
    <div className="jp-mercury-detail" data-task-id={task.id} data-status={task.status}>
      <div className="jp-mercury-detail-head">
        <button className="jp-mercury-back jp-Button" onClick={props.onClose}>
          ← tasks
        </button>
        <StatusChip status={task.status} />
        <span className="jp-mercury-id">{task.id}</span>
      </div>
      <div className="jp-mercury-task-text">{task.task}</div>
      {task.parent && (
        <div className="jp-mercury-parent">
          sub-agent of{' '}
          <button
            className="jp-mercury-link jp-mercury-open-parent"
            onClick={() => props.onOpen(task.parent as string)}
          >
            {task.parent}
          </button>
        </div>
      )}
      <div className="jp-mercury-meta">
        {task.workspace} · {task.models.join(' → ')}
        {task.status === 'running' ? '' : ` · ${stepsText(task.steps)}`}
      </div>
      {task.status === 'running' && <div className="jp-mercury-pulse">{props.pulse}</div>}
      <div className="jp-mercury-actions">
        {task.status === 'running' && (
          <button
            className="jp-mercury-stop jp-Button jp-mod-styled jp-mod-warn"
            disabled={props.busy}
            onClick={() => props.onStop(task.id)}
          >
            Stop
          </button>
        )}
        {(task.status === 'paused' ||
          task.status === 'failed' ||
          task.status === 'aborted') &&
          task.resumable !== false && (
          <button
            className="jp-mercury-continue jp-Button jp-mod-styled jp-mod-accept"
            disabled={props.busy}
            onClick={() => props.onContinue(task.id)}
          >
            Continue
          </button>
        )}
        {canUndo && <UndoButton undo={undo} />}
      </div>
      <UndoResult undo={undo} />
      <ApprovalBox task={task} />
      {task.banner && (
        <div className="jp-mercury-banner" style={{ borderLeftColor: colour }}>
          {task.banner}
        </div>
      )}
      {blockerShown(task) && (
        <div className="jp-mercury-blocker">
          <strong>Blocker: </strong>
          {oneLine(task.blocker ?? '')}
        </div>
      )}
      {task.status === 'running' && task.live?.text && <LiveText text={task.live.text} />}
      {detail.answer && (
        <section className="jp-mercury-answer-section">
          <h3>Answer</h3>
          <div className="jp-mercury-answer-label">The model&apos;s answer:</div>
          <blockquote className="jp-mercury-answer">{quotedAnswer(detail.answer)}</blockquote>
        </section>
      )}
      {(detail.subagents ?? []).length > 0 && (
        <section>
          <h3>Sub-agents</h3>
          <ul className="jp-mercury-subagents">
            {(detail.subagents ?? []).map(sub => (
              <li key={sub.id} data-task-id={sub.id}>
                <StatusChip status={sub.status} />{' '}
                <button
                  className="jp-mercury-link jp-mercury-open-sub"
                  onClick={() => props.onOpen(sub.id)}
                >
                  {sub.id}
                </button>{' '}
                <span className="jp-mercury-sub-text">{sub.task}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      <WrittenCells
        changes={detail.changes}
        taskId={task.id}
        workspace={task.workspace}
        root={props.root ?? null}
        files={props.files}
      />
      {detail.changes.length > 0 && (
        <ChangedFiles
          changes={detail.changes}
          workspace={task.workspace}
          root={props.root ?? null}
          files={props.files}
          onRevert={canUndo && !undo.busy ? undo.run : undefined}
        />
      )}
      {detail.evidence.length > 0 && (
        <section>
          <h3>Evidence</h3>
          <ul className="jp-mercury-evidence">
            {detail.evidence.map((item, index) => (
              <li key={index}>
                <span>{item.exit_code === 0 ? '✓' : '✗'}</span>{' '}
                {item.kind === 'read-back' ? (
                  <span>
                    read back <code>{shownName(item.path ?? '')}</code> · step {item.step}
                    {item.exit_code === 0 ? '' : ' · could not be read'}
                  </span>
                ) : (
                  <>
                    <code>{oneLine(item.command ?? '')}</code>{' '}
                    <span>
                      exit {item.exit_code === null ? '?' : item.exit_code} · step {item.step}
                      {item.timed_out ? ' · timed out' : ''}
                    </span>
                  </>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      {Object.keys(detail.providers).length > 0 && (
        <section>
          <h3>Providers</h3>
          <ul className="jp-mercury-providers">
            {Object.entries(detail.providers).map(([name, error]) => (
              <li key={name}>
                <code>{name}</code>: {error}
              </li>
            ))}
          </ul>
        </section>
      )}
      {(Object.keys(detail.usage).length > 0 || usageExpected(task)) && (
      <section>
        <h3>Tokens and cost</h3>
        {Object.keys(detail.usage).length === 0 ? (
          <div className="jp-mercury-muted">no token usage recorded</div>
        ) : (
          <ul className="jp-mercury-usage">
            {Object.entries(detail.usage).map(([model, counts]) => {
              const cost = detail.costs.find(c => c.model === model);
              const input = counts.prompt_tokens ?? counts.input_tokens ?? 0;
              const output = counts.completion_tokens ?? counts.output_tokens ?? 0;
              return (
                <li key={model}>
                  <code>{model}</code>: {input} in · {output} out · est.{' '}
                  {money(cost ? cost.usd : null)}
                  {cost && cost.reason ? ` (${cost.reason})` : ''}
                </li>
              );
            })}
          </ul>
        )}
      </section>
      )}
      <section>
        <h3>Events</h3>
        <ol className="jp-mercury-events">
          {detail.events.map((event, index) => {
            const words = eventWords(event.kind, event.data);
            return words === null ? null : (
              <li key={event.id ?? `e${index}`} data-kind={event.kind}>
                <span className="jp-mercury-event-time">
                  {new Date(event.at * 1000).toLocaleTimeString()}
                </span>{' '}
                <span className="jp-mercury-event-text">{words}</span>
              </li>
            );
          })}
        </ol>
      </section>
    </div>
  );
}
