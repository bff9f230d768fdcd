/**
 * A live edit request applied to an open notebook's shared model: an edit, insert or delete
 * of one cell, or the outputs of cells that ran, as ordinary changes (the notebook's undo takes
 * them back). Each names the hash of the cell source the agent read: a cell changed since
 * (the user typing in it) is not touched, and the answer carries its source now.
 */

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

export interface ISharedNotebookLike {
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
  /** Its place, in a notebook without cell ids (``cell_id`` is then ``#<index>``). */
  index?: number;
}

export interface IEditRequest {
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

export interface IAnswer {
  state: 'applied' | 'refused' | 'not-open';
  source?: string;
  skipped?: string[];
}

async function sha256(text: string): Promise<string> {
  const digest = await window.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest))
    .map(b => b.toString(16).padStart(2, '0'))
    .join('');
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
    // the hash took a turn of the event loop: the user may have typed (or moved cells) since
    const now = notebook.cells.findIndex(c => c.id === request.cell_id);
    if (now < 0) {
      return { state: 'refused' };
    }
    if (notebook.cells[now].getSource() !== current) {
      return { state: 'refused', source: notebook.cells[now].getSource() };
    }
    notebook.deleteCell(now); // an ordinary change: the notebook's undo brings it back
    return { state: 'applied' };
  }
  if (request.op === 'edit') {
    // by id; by place in a notebook without cell ids (nbformat 4.4, kept so by JupyterLab)
    const cell = request.cell_id
      ? cells.find(c => c.id === request.cell_id)
      : cells[request.index ?? -1];
    if (!cell) {
      return { state: 'refused' };
    }
    const current = cell.getSource();
    if ((await sha256(current)) !== request.read_sha) {
      return { state: 'refused', source: current };
    }
    let typed = false; // since the hash was taken (a turn of the event loop)
    notebook.transact(() => {
      if (cell.getSource() !== current) {
        typed = true;
        return;
      }
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
    return typed ? { state: 'refused', source: cell.getSource() } : { state: 'applied' };
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
  const taken: [ISharedCellLike, IRanCell, string][] = [];
  const skipped: string[] = [];
  for (const run of ran) {
    const cell =
      run.index !== undefined
        ? notebook.cells[run.index]
        : notebook.cells.find(c => c.id === run.cell_id);
    const countKept =
      run.expect_count === undefined || (cell?.execution_count ?? null) === run.expect_count;
    const source = cell?.getSource() ?? '';
    if (cell && cell.setOutputs && countKept && (await sha256(source)) === run.read_sha) {
      taken.push([cell, run, source]);
    } else {
      skipped.push(run.cell_id);
    }
  }
  notebook.transact(() => {
    for (const [cell, run, source] of taken) {
      if (cell.getSource() !== source) {
        skipped.push(run.cell_id); // typed in since its hash was taken
        continue;
      }
      cell.setOutputs?.(run.outputs);
      cell.execution_count = run.execution_count;
    }
  });
  return skipped.length === ran.length
    ? { state: 'refused', skipped }
    : { state: 'applied', skipped };
}
