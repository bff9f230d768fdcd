/**
 * The server extension's REST API (/mercury/api/) and its event WebSocket.
 * Everything that comes back is data: the panel renders it as text, never as HTML.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { Status, TASK_STATUSES } from './status';

export type { Status };

/** A question waiting for the user (mercury_nb/runs/live_state.py: LiveState.approval). */
export interface IApproval {
  /** Its number in the run: the answer names it (a stale one is refused). */
  request: number;
  tool: string;
  what: string;
  command: string | null;
  detail: string;
  suggested_rule: string | null;
  /** Where it can be answered: the panel (buttons here), the task's cell or terminal. */
  asked_in?: 'panel' | 'cell' | 'terminal' | null;
}

export interface ILive {
  step?: number | null;
  tool?: string | null;
  activity?: string | null;
  started?: number;
  at?: number;
  /** The running tool's own progress (run_cells: `cell 7/12`); empty: none. */
  progress?: string;
  pulse?: string | null;
  /** What the model has streamed in this step so far (redacted by the server). */
  text?: string;
  /** The approval the task waits for (null: none). */
  approval?: IApproval | null;
}

export interface ITaskSummary {
  id: string;
  task: string;
  workspace: string;
  status: Status;
  verdict: string | null;
  banner: string | null;
  blocker: string | null;
  models: string[];
  steps: number;
  created_at: number;
  updated_at: number;
  live: ILive | null;
  /** For a delegate_task sub-agent: the task that delegated it. */
  parent?: string | null;
  /** Whether a continue can succeed; false for an ending no resume cures (no tool support). */
  resumable?: boolean;
}

export interface ITaskList {
  tasks: ITaskSummary[];
  limit: number;
  offset: number;
  has_more: boolean;
}

export interface IFileChange {
  path: string;
  added: number;
  removed: number;
  kind: 'created' | 'modified' | 'deleted';
  preview?: string;
  diff?: string;
  measured?: boolean;
  size?: number | null;
  binary?: boolean;
  /** For a notebook: its change cell by cell, from nbdime (mercury_nb/contract/notebook_changes.py). */
  notebook?: INotebookDiff | null;
}

export interface ISourceLine {
  /** Added, removed, kept as context, or a gap of unchanged lines left out. */
  op: '+' | '-' | ' ' | '…';
  text: string;
}

export interface ICellChange {
  kind: 'added' | 'removed' | 'modified';
  /** 1-based place after the change (before it, for a removed cell). */
  number: number;
  number_before?: number | null;
  cell_type: string;
  source: ISourceLine[];
  source_more?: number;
  outputs?: string;
  metadata_changed?: boolean;
  /** The cell's id after the change (empty: none, or removed). */
  cell_id?: string;
  /** The task that wrote the cell (its metadata.mercury.task), empty when not the agent. */
  task?: string;
}

export interface INotebookDiff {
  cells: ICellChange[];
  more_cells?: number;
  metadata_changed?: boolean;
  sources_before?: string;
  sources_after?: string;
}

export interface IEvidence {
  command: string;
  exit_code: number | null;
  step: number;
  timed_out?: boolean;
  after_last_change?: boolean;
  /** "command" (the default for older rows), "notebook" or "read-back". */
  kind?: 'command' | 'notebook' | 'read-back';
  /** The file read back, for a "read-back" entry. */
  path?: string | null;
}

export interface IRunEvent {
  id: number | null;
  task_id: string;
  kind: string;
  at: number;
  data: { [key: string]: unknown };
  /** From the event socket: the task's live state, folded by the server. */
  live?: ILive;
}

export interface ICost {
  model: string;
  usd: number | null;
  reason: string | null;
}

export interface ITaskDetail {
  task: ITaskSummary;
  answer: string | null;
  changes: IFileChange[];
  evidence: IEvidence[];
  providers: { [provider: string]: string };
  usage: { [model: string]: { [key: string]: number } };
  costs: ICost[];
  events: IRunEvent[];
  /** The sub-agents this task delegated, in the order they started. */
  subagents?: ITaskSummary[];
}

/** One model of the picker: a shipped demo, a connected model, or a configured one. */
export interface IModelChoice {
  name: string;
  demo: boolean;
  description: string | null;
  connected: boolean;
  /** Why it cannot start for want of a key (null: it can). */
  missing_key: string | null;
}

export interface IModels {
  default: string;
  models: string[];
  root: string;
  /** The configured step budget: what an empty max-steps field means. */
  max_steps?: number;
  choices?: IModelChoice[];
  /** Where a connected model's key is kept, by the form's choice. */
  storage?: { session: string; file: string };
}

/** An API error: the server's message, and its `kind` / `link` when it gave them. */
export class APIError extends Error {
  constructor(
    message: string,
    readonly kind: string | null = null,
    readonly link: string | null = null
  ) {
    super(message);
  }
}

export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {}
): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'mercury', 'api', endPoint);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  const text = await response.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message =
      data && typeof data.error === 'string' ? data.error : response.statusText;
    const field = (name: string): string | null =>
      data && typeof data[name] === 'string' ? data[name] : null;
    throw new APIError(message, field('kind'), field('link'));
  }
  return data as T;
}

/** The statuses the panel's filter offers first: the ones that may still need you. */
const FILTER_FIRST: readonly Status[] = ['running', 'paused'];

/** The statuses a task can have, in the order the panel's filter offers them. */
export const STATUSES: readonly Status[] = [
  ...FILTER_FIRST,
  ...TASK_STATUSES.filter(status => !FILTER_FIRST.includes(status))
];

/** The largest `limit` the server accepts (mercury_nb/server/models.py MAX_PAGE). */
export const MAX_PAGE = 200;

/** One page of the task list; without `limit` the server's page size (see `limit` back). */
export function listTasks(
  query: { status?: Status; limit?: number; offset?: number } = {}
): Promise<ITaskList> {
  const params = new URLSearchParams();
  if (query.status) {
    params.set('status', query.status);
  }
  if (query.limit !== undefined) {
    params.set('limit', String(query.limit));
  }
  if (query.offset) {
    params.set('offset', String(query.offset));
  }
  const search = params.toString();
  return requestAPI<ITaskList>(search ? `tasks?${search}` : 'tasks');
}

export function taskDetail(id: string): Promise<ITaskDetail> {
  return requestAPI<ITaskDetail>(`tasks/${encodeURIComponent(id)}`);
}

export function startTask(body: {
  task: string;
  model?: string;
  workdir: string;
  max_steps?: number;
}): Promise<{ task_id: string }> {
  return requestAPI('tasks', { method: 'POST', body: JSON.stringify(body) });
}

export function stopTask(id: string): Promise<{ kind: string; message: string }> {
  return requestAPI(`tasks/${encodeURIComponent(id)}/stop`, {
    method: 'POST',
    body: '{}'
  });
}

export function continueTask(id: string): Promise<{ task_id: string }> {
  return requestAPI(`tasks/${encodeURIComponent(id)}/continue`, {
    method: 'POST',
    body: '{}'
  });
}

export function listModels(): Promise<IModels> {
  return requestAPI<IModels>('models');
}

/** "Connect a model": checked by the server with one cheap request; the key never comes back. */
export function connectModel(body: {
  model: string;
  api_base?: string;
  key?: string;
  storage: 'session' | 'file';
}): Promise<{ model: string; reply: string; kept: string }> {
  return requestAPI('models/connect', { method: 'POST', body: JSON.stringify(body) });
}

/** Opens the event socket; reconnects with a short backoff until `close()` is called. */
export function watchEvents(onEvent: (event: IRunEvent) => void): { close: () => void } {
  const settings = ServerConnection.makeSettings();
  let socket: WebSocket | null = null;
  let closed = false;
  let delay = 500;
  const open = (): void => {
    let url = URLExt.join(settings.wsUrl, 'mercury', 'api', 'events') + '?after=latest';
    if (settings.token) {
      url += `&token=${encodeURIComponent(settings.token)}`;
    }
    socket = new settings.WebSocket(url);
    socket.onopen = () => {
      delay = 500;
    };
    socket.onmessage = message => {
      try {
        onEvent(JSON.parse(String(message.data)) as IRunEvent);
      } catch (error) {
        console.warn('mercury: bad event', error);
      }
    };
    socket.onclose = () => {
      if (!closed) {
        window.setTimeout(open, delay);
        delay = Math.min(delay * 2, 10000);
      }
    };
  };
  open();
  return {
    close: () => {
      closed = true;
      socket?.close();
    }
  };
}
