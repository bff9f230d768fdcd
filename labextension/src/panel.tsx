/**
 * The side panel: the task list (live), one task's detail, Stop / Continue, and a prompt box.
 * Every model text, file name, diff and command is rendered as a React text node.
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import React, { useCallback, useEffect, useRef, useState } from 'react';

import {
  IModels,
  ITaskDetail,
  ITaskSummary,
  continueTask,
  listModels,
  listTasks,
  startTask,
  stopTask,
  taskDetail,
  watchEvents
} from './api';
import { ILivePulse, StatusChip, age, pulseLine, shortPath } from './common';
import { Detail } from './detail';

export interface IPanelHost {
  /** The file browser's current folder, relative to the server root. */
  currentFolder(): string;
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
      {task.parent && (
        <div className="jp-mercury-parent">↳ sub-agent of {task.parent}</div>
      )}
      {task.status === 'running' && (
        <div className="jp-mercury-pulse">{pulseLine(props.pulse, props.now)}</div>
      )}
    </li>
  );
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
      scheduleRefresh();
    });
    const ticker = window.setInterval(() => setNow(Date.now() / 1000), 1000);
    const poll = window.setInterval(() => void refreshList(), 15000);
    return () => {
      socket.close();
      window.clearInterval(ticker);
      window.clearInterval(poll);
    };
  }, []);

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
          onOpen={select}
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
