/**
 * Pieces shared by the list and the detail: status colours and chip, ages, the pulse line
 * (and keeping the live state the server folded, from task rows and the WebSocket).
 */
import React from 'react';

import { ILive, ITaskSummary, Status } from './api';

/** The cell widget's colours (mercury_nb/ui/widgets.py), plus blue for running. */
export const STATUS_COLOURS: { [status in Status]: string } = {
  running: '#1565c0',
  completed: '#2e7d32',
  paused: '#b26a00',
  failed: '#c62828',
  aborted: '#616161'
};

export interface ILivePulse {
  step: number | null;
  tool: string | null;
  /** The running tool's progress (`cell 7/12`), shown in its place. */
  progress: string | null;
  started: number;
  lastAt: number;
}

export function age(seconds: number): string {
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

export function shortPath(path: string): string {
  const parts = path.split('/').filter(p => p.length > 0);
  return parts.length <= 2 ? path : '…/' + parts.slice(-2).join('/');
}

export function StatusChip(props: { status: Status }): JSX.Element {
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

/** Seconds of silence after which the pulse says what it waits for. */
const SILENT_S = 3;

/**
 * The live status line, the twin of mercury_nb/ui/status.py's: `step 2 · read_file · 12s`;
 * while nothing has been heard for a while, what it waits for instead:
 * `step 2 · waiting for the model · 8 s` (or `step 2 · run_command · 8 s` while a tool runs,
 * `step 2 · cell 7/12 · 34 s` while run_cells says how far it is).
 */
export function pulseLine(pulse: ILivePulse | undefined, now: number): string {
  if (!pulse) {
    return 'working on it…';
  }
  const parts: string[] = [];
  if (pulse.step !== null) {
    parts.push(`step ${pulse.step}`);
  }
  const silent = Math.round(now - pulse.lastAt);
  const doing = pulse.progress ?? pulse.tool;
  if (silent >= SILENT_S) {
    parts.push(doing ?? 'waiting for the model', `${silent} s`);
  } else {
    parts.push(doing ?? 'thinking', age(now - pulse.started));
  }
  return parts.join(' · ');
}

/** `1 step`, `3 steps`: a finished task's count (a running one's is its pulse line's). */
export function stepsText(steps: number): string {
  return steps === 1 ? '1 step' : `${steps} steps`;
}

/**
 * Take the server's live state of one task into `pulses` (the server folds the events:
 * this only keeps what it knew when the server has not seen it yet; newer news wins).
 */
export function absorbPulse(
  pulses: Map<string, ILivePulse>,
  taskId: string,
  live: ILive,
  fallback: { started: number; at: number }
): void {
  const known = pulses.get(taskId);
  pulses.set(taskId, {
    step: live.step ?? known?.step ?? null,
    tool: live.tool ?? null,
    progress: live.progress || null,
    started: live.started ?? known?.started ?? fallback.started,
    lastAt: Math.max(live.at ?? fallback.at, known?.lastAt ?? 0)
  });
}

/** Take the live state of listed running tasks into `pulses`. */
export function absorbLive(pulses: Map<string, ILivePulse>, tasks: ITaskSummary[]): void {
  for (const task of tasks) {
    if (task.live && task.status === 'running') {
      absorbPulse(pulses, task.id, task.live, {
        started: task.created_at,
        at: task.updated_at
      });
    }
  }
}
