/**
 * The side panel's frame: puts the prompt box (prompt.tsx), the filtered, paged task list
 * (tasklist.tsx over pages.ts) and one task's detail (detail.tsx) together; owns the event
 * WebSocket that keeps them live (pulses, list and detail refreshes), the selection, and
 * Stop / Continue. Every model text, file name, diff and command is a React text node.
 */
import { ReactWidget } from '@jupyterlab/ui-components';
import React, { useCallback, useEffect, useRef, useState } from 'react';

import {
  IModels,
  ITaskDetail,
  continueTask,
  listModels,
  stopTask,
  taskDetail,
  watchEvents
} from './api';
import { ILivePulse, absorbPulse, pulseLine } from './common';
import { IFileOpener } from './changes';
import { ConnectForm } from './connect';
import { Detail } from './detail';
import { useTaskPages } from './pages';
import { IPanelHost, Prompt } from './prompt';
import { TaskList } from './tasklist';

export { IPanelHost } from './prompt';

function PanelView(props: { host: IPanelHost; files?: IFileOpener }): JSX.Element {
  const [selected, setSelected] = useState<string | null>(null);
  const [detail, setDetail] = useState<ITaskDetail | null>(null);
  const [models, setModels] = useState<IModels | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [connecting, setConnecting] = useState(false);
  const [connected, setConnected] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(Date.now() / 1000);
  const pulses = useRef<Map<string, ILivePulse>>(new Map());
  const selectedRef = useRef<string | null>(null);
  const refreshTimer = useRef<number | null>(null);
  selectedRef.current = selected;
  const shownStatus = useRef<string | null>(null);
  shownStatus.current = detail ? detail.task.status : null;
  const list = useTaskPages(pulses.current);
  const refreshList = list.refresh;

  // Detail fetches may answer out of order (the server reads the ledger off its loop): a
  // reply older than the one shown is dropped, or a "running" snapshot sent before the task
  // finished would replace its ending, and no later event would come to correct it.
  const detailAsked = useRef(0);
  const detailShown = useRef(0);
  const refreshDetail = useCallback(async (id: string) => {
    const asked = ++detailAsked.current;
    try {
      const found = await taskDetail(id);
      if (asked < detailShown.current) {
        return;
      }
      if (found.task.live && found.task.status === 'running') {
        // the text shown and the status line's step come from one snapshot of the task
        absorbPulse(pulses.current, id, found.task.live, {
          started: found.task.created_at,
          at: found.task.updated_at
        });
      }
      if (selectedRef.current === id) {
        detailShown.current = asked;
        setDetail(found);
      }
    } catch (reason) {
      setError((reason as Error).message);
    }
  }, []);

  const detailStale = useRef(false);
  const scheduleRefresh = useCallback(
    (taskId: string) => {
      const open = selectedRef.current;
      if (open && (taskId === open || taskId.startsWith(`${open}.`))) {
        detailStale.current = true; // the open task (or one of its sub-agents) changed
      }
      if (refreshTimer.current !== null) {
        return;
      }
      refreshTimer.current = window.setTimeout(() => {
        refreshTimer.current = null;
        refreshList();
        const id = selectedRef.current;
        if (id && detailStale.current) {
          detailStale.current = false;
          void refreshDetail(id);
        }
      }, 150);
    },
    [refreshList, refreshDetail]
  );

  useEffect(() => {
    refreshList();
    void listModels()
      .then(setModels)
      .catch(() => undefined);
    const socket = watchEvents(event => {
      if (event.live) {
        // the server folded the task's events into its live state: shown as it comes
        absorbPulse(pulses.current, event.task_id, event.live, {
          started: event.at,
          at: event.at
        });
      }
      scheduleRefresh(event.task_id);
    });
    const ticker = window.setInterval(() => setNow(Date.now() / 1000), 1000);
    const poll = window.setInterval(() => {
      // a missed event (the socket reconnecting) leaves a running task stale not for long
      refreshList();
      if (selectedRef.current && shownStatus.current === 'running') {
        void refreshDetail(selectedRef.current);
      }
    }, 15000);
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
      refreshList();
      void refreshDetail(id);
    }
  };

  return (
    <div className="jp-mercury-panel">
      <div className="jp-mercury-title">
        <span>mercury · tasks</span>
      </div>
      <Prompt
        models={models}
        host={props.host}
        picked={connected}
        onStarted={id => select(id)}
        onConnect={() => setConnecting(true)}
      />
      {connecting && (
        <ConnectForm
          models={models}
          onClose={() => setConnecting(false)}
          onConnected={model =>
            void listModels().then(found => {
              setModels(found);
              setConnected(model); // picked in the prompt box, ready to Start
            })
          }
        />
      )}
      {(error || list.pages.error) && (
        <div className="jp-mercury-error">{error || list.pages.error}</div>
      )}
      {selected && detail ? (
        <Detail
          detail={detail}
          pulse={pulseLine(pulses.current.get(detail.task.id), now)}
          busy={busy}
          onStop={id => void act(() => stopTask(id), id)}
          onContinue={id => void act(() => continueTask(id), id)}
          onOpen={select}
          root={models ? models.root : null}
          files={props.files}
          onClose={() => {
            setSelected(null);
            setDetail(null);
          }}
        />
      ) : (
        <TaskList
          pages={list.pages}
          pulses={pulses.current}
          now={now}
          selected={selected}
          onSelect={select}
          onFilter={list.setFilter}
          onLoadMore={list.loadMore}
        />
      )}
    </div>
  );
}

export class MercuryPanel extends ReactWidget {
  constructor(
    private host: IPanelHost,
    private files?: IFileOpener
  ) {
    super();
    this.addClass('jp-mercury-root');
  }

  protected render(): JSX.Element {
    return <PanelView host={this.host} files={this.files} />;
  }
}
