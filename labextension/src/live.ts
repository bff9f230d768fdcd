/**
 * Live edits: tells the server which notebooks are open here, takes the agent's edit
 * requests for them (a held poll), applies each to the open document's shared model
 * (live_apply.ts), saves the document, then answers. The answer to a change of a document
 * with unsaved changes carries the document as it was before it.
 */
import { ILabShell } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';

import { requestAPI } from './api';
import { applyRequest, IAnswer, IEditRequest, ISharedNotebookLike } from './live_apply';

/** How long to wait before polling again after a failed poll, or with no notebook open. */
const RETRY_MS = 1000;

/** Paths this page applied a task's edits to (task id: paths), so the reload after the task
 * leaves those documents alone: they show the change already, and a reload would lose the
 * undo history (and ask about the user's own unsaved edits). */
const applied = new Map<string, Set<string>>();

export function appliedLive(taskId: string, path: string): boolean {
  return applied.get(taskId)?.has(path) ?? false;
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

/** Answers a request; ``before``: the document just before an applied change, when it held
 * unsaved changes (the user's, which the save wrote with the agent's: the task does not count
 * them as its own). An answer the server does not take with it (too large) goes without. */
async function answer(
  id: number,
  reply: IAnswer,
  cell?: string,
  before?: unknown
): Promise<void> {
  const body = { id, ...reply, ...(cell ? { cell } : {}) };
  if (before !== undefined) {
    try {
      await requestAPI('live/ack', { method: 'POST', body: JSON.stringify({ ...body, before }) });
      return;
    } catch (error) {
      console.warn('mercury: the answer with the unsaved document was not taken', error);
    }
  }
  await requestAPI('live/ack', { method: 'POST', body: JSON.stringify(body) });
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
  // the user's unsaved changes, which the save after the change writes too
  const before = context.model.dirty ? context.model.toJSON() : undefined;
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
  await answer(request.id, reply, request.cell_id, reply.state === 'applied' ? before : undefined);
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
