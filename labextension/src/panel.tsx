/**
 * The side panel: the task list (live), one task's detail, Stop / Continue, and a prompt box.
 * Every model text, file name, diff and command is rendered as a React text node.
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import React, { useCallback, useEffect, useRef, useState } from 'react';

import {
  IFileChange,
  IModels,
  IRunEvent,
  ITaskDetail,
  ITaskSummary,
  Status,
  continueTask,
  listModels,
  listTasks,
  startTask,
  stopTask,
  taskDetail,
  watchEvents
} from './api';

/** The cell widget's colours (mercury_nb/ui/widgets.py), plus blue for running. */
export const STATUS_COLOURS: { [status in Status]: string } = {
  running: '#1565c0',
  completed: '#2e7d32',
  paused: '#b26a00',
  failed: '#c62828',
  aborted: '#616161'
};

export interface IPanelHost {
  /** The file browser's current folder, relative to the server root. */
  currentFolder(): string;
  /** A task finished: reload the open documents it changed (asking when they are dirty). */
  changedFiles(workspace: string, changes: IFileChange[], root: string): void;
}

interface ILivePulse {
  step: number | null;
  tool: string | null;
  started: number;
  lastAt: number;
}

function age(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) {
    return `${s}s`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)}m`;
  }
  if (s < 86400) {
    return `${Math.floor(s / 3600)}h`;
  }
  return `${Math.floor(s / 86400)}d`;
}

function shortPath(path: string): string {
  const parts = path.split('/').filter(p => p.length > 0);
  return parts.length <= 2 ? path : '…/' + parts.slice(-2).join('/');
}

function StatusChip(props: { status: Status }): JSX.Element {
  return (
    <span
      className="jp-mercury-chip"
      data-status={props.status}
      style={{ background: STATUS_COLOURS[props.status] ?? '#616161' }}
    >
      {props.status}
    </span>
  );
}

function pulseLine(pulse: ILivePulse | undefined, now: number): string {
  if (!pulse) {
    return 'working…';
  }
  const parts: string[] = [];
  if (pulse.step !== null) {
    parts.push(`step ${pulse.step}`);
  }
  if (pulse.tool) {
    parts.push(pulse.tool);
  }
  parts.push(age(now - pulse.started));
  const silent = Math.round(now - pulse.lastAt);
  if (silent >= 3) {
    parts.push(`${silent} s silent`);
  }
  return parts.join(' · ');
}

function TaskRow(props: {
  task: ITaskSummary;
  pulse: ILivePulse | undefined;
  now: number;
  selected: boolean;
  onSelect: (id: string) => void;
}): JSX.Element {
  const { task } = props;
  return (
    <li
      className={'jp-mercury-row' + (props.selected ? ' jp-mod-selected' : '')}
      data-task-id={task.id}
      onClick={() => props.onSelect(task.id)}
    >
      <div className="jp-mercury-row-head">
        <StatusChip status={task.status} />
        <span className="jp-mercury-age">{age(props.now - task.updated_at)}</span>
      </div>
      <div className="jp-mercury-row-text" title={task.task}>
        {task.task}
      </div>
      <div className="jp-mercury-workspace" title={task.workspace}>
        {shortPath(task.workspace)}
      </div>
      {task.status === 'running' && (
        <div className="jp-mercury-pulse">{pulseLine(props.pulse, props.now)}</div>
      )}
    </li>
  );
}

function ChangeItem(props: { change: IFileChange }): JSX.Element {
  const { change } = props;
  const counts =
    change.measured === false
      ? `${change.kind}, not diffed`
      : `+${change.added} −${change.removed}` +
        (change.kind !== 'modified' ? ` (${change.kind})` : '');
  return (
    <details className="jp-mercury-change">
      <summary>
        <span className="jp-mercury-change-path">{change.path}</span>{' '}
        <span className="jp-mercury-change-counts">{counts}</span>
      </summary>
      <pre className="jp-mercury-diff">{change.diff || change.preview || ''}</pre>
    </details>
  );
}

function money(usd: number | null): string {
  return usd === null ? 'unknown' : `$${usd.toFixed(4)}`;
}

function Detail(props: {
  detail: ITaskDetail;
  pulse: string;
  onStop: (id: string) => void;
  onContinue: (id: string) => void;
  onClose: () => void;
  busy: boolean;
}): JSX.Element {
  const { detail } = props;
  const task = detail.task;
  const colour = STATUS_COLOURS[task.status] ?? '#616161';
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
      <div className="jp-mercury-meta">
        {task.workspace} · {task.models.join(' → ')} · {task.steps} step(s)
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
          task.status === 'aborted') && (
          <button
            className="jp-mercury-continue jp-Button jp-mod-styled jp-mod-accept"
            disabled={props.busy}
            onClick={() => props.onContinue(task.id)}
          >
            Continue
          </button>
        )}
      </div>
      {task.banner && (
        <div className="jp-mercury-banner" style={{ borderLeftColor: colour }}>
          {task.banner}
        </div>
      )}
      {task.blocker && (
        <div className="jp-mercury-blocker">
          <strong>Blocker: </strong>
          {task.blocker}
        </div>
      )}
      {detail.answer && (
        <section>
          <h3>Answer</h3>
          <div className="jp-mercury-answer">{detail.answer}</div>
        </section>
      )}
      {detail.changes.length > 0 && (
        <section>
          <h3>Changed files</h3>
          {detail.changes.map(change => (
            <ChangeItem key={change.path} change={change} />
          ))}
        </section>
      )}
      {detail.evidence.length > 0 && (
        <section>
          <h3>Evidence</h3>
          <ul className="jp-mercury-evidence">
            {detail.evidence.map((item, index) => (
              <li key={index}>
                <span>{item.exit_code === 0 ? '✓' : '✗'}</span>{' '}
                <code>{item.command}</code>{' '}
                <span>
                  exit {item.exit_code === null ? '?' : item.exit_code} · step {item.step}
                  {item.timed_out ? ' · timed out' : ''}
                </span>
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
      <section>
        <h3>Events</h3>
        <ol className="jp-mercury-events">
          {detail.events.map((event, index) => (
            <li key={event.id ?? `e${index}`} data-kind={event.kind}>
              <span className="jp-mercury-event-time">
                {new Date(event.at * 1000).toLocaleTimeString()}
              </span>{' '}
              <span className="jp-mercury-event-kind">{event.kind}</span>{' '}
              <span>{eventText(event)}</span>
            </li>
          ))}
        </ol>
      </section>
    </div>
  );
}

function eventText(event: IRunEvent): string {
  const data = event.data || {};
  const parts: string[] = [];
  for (const key of ['text', 'verdict', 'decision', 'tool', 'summary', 'command']) {
    const value = data[key];
    if (typeof value === 'string' && value.length > 0) {
      parts.push(value);
    }
  }
  return parts.join(' · ');
}

function Prompt(props: {
  models: IModels | null;
  host: IPanelHost;
  onStarted: (id: string) => void;
}): JSX.Element {
  const [text, setText] = useState('');
  const [model, setModel] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const chosen = model || props.models?.default || '';
  const submit = async (): Promise<void> => {
    if (!text.trim()) {
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const reply = await startTask({
        task: text,
        model: chosen || undefined,
        workdir: props.host.currentFolder()
      });
      setText('');
      props.onStarted(reply.task_id);
    } catch (reason) {
      setError((reason as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="jp-mercury-prompt">
      <textarea
        className="jp-mercury-prompt-text"
        placeholder="Ask mercury to do something in the current folder…"
        value={text}
        rows={3}
        onChange={event => setText(event.target.value)}
        onKeyDown={event => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
            void submit();
          }
        }}
      />
      <div className="jp-mercury-prompt-row">
        <select
          className="jp-mercury-model"
          value={chosen}
          onChange={event => setModel(event.target.value)}
        >
          {(props.models?.models ?? []).map(name => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <button
          className="jp-mercury-start jp-Button jp-mod-styled jp-mod-accept"
          disabled={busy || !text.trim()}
          onClick={() => void submit()}
        >
          Start
        </button>
      </div>
      <div className="jp-mercury-folder">in /{props.host.currentFolder()}</div>
      {error && <div className="jp-mercury-error">{error}</div>}
    </div>
  );
}

function PanelView(props: { host: IPanelHost }): JSX.Element {
  const [tasks, setTasks] = useState<ITaskSummary[]>([]);
  const [selected, setSelected] = useState<string | null>(null);
  const [detail, setDetail] = useState<ITaskDetail | null>(null);
  const [models, setModels] = useState<IModels | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(Date.now() / 1000);
  const pulses = useRef<Map<string, ILivePulse>>(new Map());
  const selectedRef = useRef<string | null>(null);
  const refreshTimer = useRef<number | null>(null);
  selectedRef.current = selected;

  const refreshList = useCallback(async () => {
    try {
      const page = await listTasks();
      for (const task of page.tasks) {
        if (task.live && task.status === 'running') {
          const known = pulses.current.get(task.id);
          pulses.current.set(task.id, {
            step: task.live.step ?? known?.step ?? null,
            tool: task.live.tool ?? null,
            started: task.live.started ?? known?.started ?? task.created_at,
            lastAt: Math.max(task.live.at ?? task.updated_at, known?.lastAt ?? 0)
          });
        }
      }
      setTasks(page.tasks);
      setError(null);
    } catch (reason) {
      setError((reason as Error).message);
    }
  }, []);

  const refreshDetail = useCallback(async (id: string) => {
    try {
      const found = await taskDetail(id);
      if (selectedRef.current === id) {
        setDetail(found);
      }
    } catch (reason) {
      setError((reason as Error).message);
    }
  }, []);

  const scheduleRefresh = useCallback(() => {
    if (refreshTimer.current !== null) {
      return;
    }
    refreshTimer.current = window.setTimeout(() => {
      refreshTimer.current = null;
      void refreshList();
      const id = selectedRef.current;
      if (id) {
        void refreshDetail(id);
      }
    }, 150);
  }, [refreshList, refreshDetail]);

  useEffect(() => {
    void refreshList();
    void listModels()
      .then(setModels)
      .catch(() => undefined);
    const socket = watchEvents(event => {
      const known = pulses.current.get(event.task_id);
      const data = event.data || {};
      const step = typeof data.step === 'number' ? data.step : known?.step ?? null;
      const tool =
        typeof data.tool === 'string'
          ? data.tool
          : typeof data.name === 'string'
            ? data.name
            : event.kind === 'step-started'
              ? null
              : known?.tool ?? null;
      pulses.current.set(event.task_id, {
        step,
        tool,
        started: known?.started ?? event.at,
        lastAt:
          event.kind === 'pulse' && typeof data.silent_s === 'number'
            ? event.at - data.silent_s
            : event.at
      });
      if (event.kind === 'task-finished') {
        void taskDetail(event.task_id)
          .then(found =>
            props.host.changedFiles(
              found.task.workspace,
              found.changes,
              models?.root ?? ''
            )
          )
          .catch(() => undefined);
      }
      scheduleRefresh();
    });
    const ticker = window.setInterval(() => setNow(Date.now() / 1000), 1000);
    const poll = window.setInterval(() => void refreshList(), 15000);
    return () => {
      socket.close();
      window.clearInterval(ticker);
      window.clearInterval(poll);
    };
  }, [models?.root]);

  const select = (id: string): void => {
    setSelected(id);
    setDetail(null);
    void refreshDetail(id);
  };

  const act = async (action: () => Promise<unknown>, id: string): Promise<void> => {
    setBusy(true);
    try {
      await action();
      setError(null);
    } catch (reason) {
      setError((reason as Error).message);
    } finally {
      setBusy(false);
      void refreshList();
      void refreshDetail(id);
    }
  };

  return (
    <div className="jp-mercury-panel">
      <div className="jp-mercury-title">
        <span>mercury · tasks</span>
      </div>
      <Prompt models={models} host={props.host} onStarted={id => select(id)} />
      {error && <div className="jp-mercury-error">{error}</div>}
      {selected && detail ? (
        <Detail
          detail={detail}
          pulse={pulseLine(pulses.current.get(detail.task.id), now)}
          busy={busy}
          onStop={id => void act(() => stopTask(id), id)}
          onContinue={id => void act(() => continueTask(id), id)}
          onClose={() => {
            setSelected(null);
            setDetail(null);
          }}
        />
      ) : (
        <ul className="jp-mercury-list">
          {tasks.length === 0 && <li className="jp-mercury-muted">No tasks yet.</li>}
          {tasks.map(task => (
            <TaskRow
              key={task.id}
              task={task}
              pulse={pulses.current.get(task.id)}
              now={now}
              selected={task.id === selected}
              onSelect={select}
            />
          ))}
        </ul>
      )}
    </div>
  );
}

export class MercuryPanel extends ReactWidget {
  constructor(private host: IPanelHost) {
    super();
    this.addClass('jp-mercury-root');
  }

  protected render(): JSX.Element {
    return <PanelView host={this.host} />;
  }
}
