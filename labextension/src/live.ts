/**
 * Live edits: tells the server which notebooks are open here, takes the agent's edit
 * requests for them (a held poll), applies each to the open document's shared model as an
 * ordinary change (so the notebook's undo takes it back), saves the document, then answers.
 * An edit names the hash of the cell source the agent read: a cell changed since (the user
 * typing in it) is not touched, and the answer carries its source now.
 */
import { ILabShell } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';

import { requestAPI } from './api';

/** How long to wait before polling again after a failed poll, or with no notebook open. */
const RETRY_MS = 1000;

interface ISharedCellLike {
  readonly id: string;
  readonly cell_type: string;
  getSource(): string;
  setSource(value: string): void;
  setMetadata(key: string, value: unknown): void;
  deleteMetadata?(key: string): void;
  readonly metadata?: Record<string, unknown>;
  setOutputs?(outputs: unknown[]): void;
  execution_count?: number | null;
}

interface ISharedNotebookLike {
  readonly cells: ISharedCellLike[];
  insertCell(index: number, cell: Record<string, unknown>): unknown;
  deleteCell(index: number): void;
  transact(f: () => void, undoable?: boolean): void;
}

/** One cell's run (an outputs request): its outputs go in while its source is what ran. */
interface IRanCell {
  cell_id: string;
  read_sha: string;
  outputs: unknown[];
  execution_count: number | null;
  /** An undo's outputs go in only while the cell's count is still the one the task left. */
  expect_count?: number | null;
}

interface IEditRequest {
  id: number;
  path: string;
  op: 'edit' | 'insert' | 'delete' | 'outputs';
  cell_id?: string;
  task?: string | null;
  cells?: IRanCell[];
  read_sha?: string;
  source?: string;
  mercury?: unknown;
  /** An undo's edit: the cell's whole metadata as it was before the task. */
  metadata?: Record<string, unknown>;
  clear_outputs?: boolean;
  after_cell_id?: string | null;
  /** The anchor is a cell the file lacks (not saved yet): without it here, refuse. */
  after_required?: boolean;
  index?: number;
  cell?: Record<string, unknown>;
}

interface IAnswer {
  state: 'applied' | 'refused' | 'not-open';
  source?: string;
  skipped?: string[];
}

/** Paths this page applied a task's edits to (task id: paths), so the reload after the task
 * leaves those documents alone: they show the change already, and a reload would lose the
 * undo history (and ask about the user's own unsaved edits). */
const applied = new Map<string, Set<string>>();

export function appliedLive(taskId: string, path: string): boolean {
  return applied.get(taskId)?.has(path) ?? false;
}

async function sha256(text: string): Promise<string> {
  const digest = await window.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest))
    .map(b => b.toString(16).padStart(2, '0'))
    .join('');
}

function taskOf(request: IEditRequest): string | null {
  if (typeof request.task === 'string') {
    return request.task;
  }
  const meta = (request.op === 'insert' ? request.cell?.metadata : null) as
    | { mercury?: { task?: unknown } }
    | null
    | undefined;
  const mercury = (request.op === 'edit' ? request.mercury : meta?.mercury) as
    | { task?: unknown }
    | null
    | undefined;
  return typeof mercury?.task === 'string' ? mercury.task : null;
}

/** Applies one request to ``notebook``: the answer (the document is saved by the caller). */
export async function applyRequest(
  notebook: ISharedNotebookLike,
  request: IEditRequest
): Promise<IAnswer> {
  const cells = notebook.cells;
  if (request.op === 'outputs') {
    return setOutputs(notebook, request.cells ?? []);
  }
  if (request.op === 'delete') {
    const index = cells.findIndex(c => c.id === request.cell_id);
    if (index < 0) {
      return { state: 'refused' };
    }
    const current = cells[index].getSource();
    if ((await sha256(current)) !== request.read_sha) {
      return { state: 'refused', source: current };
    }
    notebook.deleteCell(index); // an ordinary change: the notebook's undo brings it back
    return { state: 'applied' };
  }
  if (request.op === 'edit') {
    const cell = cells.find(c => c.id === request.cell_id);
    if (!cell) {
      return { state: 'refused' };
    }
    const current = cell.getSource();
    if ((await sha256(current)) !== request.read_sha) {
      return { state: 'refused', source: current };
    }
    notebook.transact(() => {
      cell.setSource(request.source ?? '');
      if (request.mercury) {
        cell.setMetadata('mercury', request.mercury);
      }
      if (request.metadata) {
        setAllMetadata(cell, request.metadata);
      }
      if (request.clear_outputs && cell.setOutputs) {
        cell.setOutputs([]);
        cell.execution_count = null;
      }
    });
    return { state: 'applied' };
  }
  const after = request.after_cell_id
    ? cells.findIndex(c => c.id === request.after_cell_id)
    : -1;
  if (after < 0 && request.after_required) {
    return { state: 'refused' };
  }
  const index =
    after >= 0
      ? after + 1
      : request.after_cell_id
        ? cells.length
        : Math.min(request.index ?? cells.length, cells.length);
  const existing = cells.find(c => c.id === request.cell_id);
  if (request.cell_id && existing) {
    // an undo's insert of a cell that is there again (the user's Ctrl+Z): never twice
    return { state: 'refused', source: existing.getSource() };
  }
  notebook.insertCell(index, request.cell ?? {});
  return { state: 'applied' };
}

/** Sets the cell's metadata to ``metadata``: keys it lacks are removed (but the page's own
 * ``trusted``), keys whose value differs are set. */
function setAllMetadata(cell: ISharedCellLike, metadata: Record<string, unknown>): void {
  const now = cell.metadata ?? {};
  for (const key of Object.keys(now)) {
    if (!(key in metadata) && key !== 'trusted') {
      cell.deleteMetadata?.(key);
    }
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (JSON.stringify(now[key]) !== JSON.stringify(value)) {
      cell.setMetadata(key, value);
    }
  }
}

/** Sets each ran cell's outputs and execution count, for the cells whose source is still
 * the source that ran; the others are answered as skipped. */
async function setOutputs(notebook: ISharedNotebookLike, ran: IRanCell[]): Promise<IAnswer> {
  const taken: [ISharedCellLike, IRanCell][] = [];
  const skipped: string[] = [];
  for (const run of ran) {
    const cell = notebook.cells.find(c => c.id === run.cell_id);
    const countKept =
      run.expect_count === undefined || (cell?.execution_count ?? null) === run.expect_count;
    if (
      cell &&
      cell.setOutputs &&
      countKept &&
      (await sha256(cell.getSource())) === run.read_sha
    ) {
      taken.push([cell, run]);
    } else {
      skipped.push(run.cell_id);
    }
  }
  if (taken.length === 0) {
    return { state: 'refused', skipped };
  }
  notebook.transact(() => {
    for (const [cell, run] of taken) {
      cell.setOutputs?.(run.outputs);
      cell.execution_count = run.execution_count;
    }
  });
  return { state: 'applied', skipped };
}

/** The open notebooks (path relative to the server root: their document context). */
function openNotebooks(shell: ILabShell, docs: IDocumentManager) {
  const found = new Map<string, ReturnType<IDocumentManager['contextForWidget']>>();
  for (const widget of shell.widgets('main')) {
    const context = docs.contextForWidget(widget);
    if (context && context.path.endsWith('.ipynb') && !found.has(context.path)) {
      found.set(context.path, context);
    }
  }
  return found;
}

async function answer(id: number, reply: IAnswer, cell?: string): Promise<void> {
  const body = JSON.stringify({ id, ...reply, ...(cell ? { cell } : {}) });
  await requestAPI('live/ack', { method: 'POST', body });
}

async function handle(
  request: IEditRequest,
  open: ReturnType<typeof openNotebooks>
): Promise<void> {
  const context = open.get(request.path);
  const shared = context?.model.sharedModel as unknown as ISharedNotebookLike | undefined;
  if (!context || !shared) {
    return answer(request.id, { state: 'not-open' });
  }
  let reply: IAnswer;
  try {
    reply = await applyRequest(shared, request);
  } catch (error) {
    console.warn('mercury: could not apply a live edit', error);
    return answer(request.id, { state: 'not-open' });
  }
  if (reply.state === 'applied') {
    // the file on disk is what the user sees before the tool returns (summary, gate, undo);
    // a save that fails still answers, so the tool never writes the change a second time
    try {
      await context.save();
    } catch (error) {
      console.warn('mercury: could not save after a live edit', error);
    }
    const task = taskOf(request);
    if (task !== null) {
      applied.set(task, (applied.get(task) ?? new Set<string>()).add(request.path));
    }
  }
  await answer(request.id, reply, request.cell_id);
}

/** Polls for edit requests for as long as the page lives; a change of the open notebooks
 * ends the held poll so the next one names them. */
export function startLiveEdits(shell: ILabShell, docs: IDocumentManager): void {
  let controller = new AbortController();
  let named = '';
  shell.layoutModified.connect(() => {
    if ([...openNotebooks(shell, docs).keys()].sort().join('\n') !== named) {
      controller.abort();
    }
  });
  const pause = (): Promise<void> => new Promise(done => window.setTimeout(done, RETRY_MS));
  const loop = async (): Promise<void> => {
    for (;;) {
      const open = openNotebooks(shell, docs);
      const paths = [...open.keys()].sort();
      named = paths.join('\n');
      controller = new AbortController();
      if (paths.length === 0) {
        await pause();
        continue;
      }
      try {
        const reply = await requestAPI<{ requests: IEditRequest[] }>('live/poll', {
          method: 'POST',
          body: JSON.stringify({ paths }),
          signal: controller.signal
        });
        for (const request of reply.requests) {
          await handle(request, openNotebooks(shell, docs));
        }
      } catch (error) {
        if (!controller.signal.aborted) {
          await pause();
        }
      }
    }
  };
  void loop();
}
