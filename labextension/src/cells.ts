/**
 * Opening a notebook at one cell: the panel's links to the cells a task wrote. The notebook
 * is opened (or shown), and once its model is ready the cell with that id is made active and
 * scrolled into view. Typed by the shape it uses, so the panel needs no notebook package.
 */
import { IDocumentManager } from '@jupyterlab/docmanager';

interface ICellLike {
  model: { id: string };
  node: HTMLElement;
}

interface INotebookPanelLike {
  context: { ready: Promise<void> };
  revealed: Promise<void>;
  content: {
    widgets: ReadonlyArray<ICellLike>;
    activeCellIndex: number;
    scrollToItem?: (index: number, behavior?: string) => Promise<void>;
  };
}

function isNotebookPanel(widget: unknown): widget is INotebookPanelLike {
  const panel = widget as Partial<INotebookPanelLike> | null;
  return (
    !!panel &&
    !!panel.context &&
    !!panel.content &&
    Array.isArray((panel.content as { widgets?: unknown }).widgets)
  );
}

/** Opens `path` (relative to the server root) and reveals the cell `cellId` in it. */
export async function revealCell(
  docs: IDocumentManager,
  path: string,
  cellId: string
): Promise<void> {
  const widget: unknown = docs.openOrReveal(path);
  if (!isNotebookPanel(widget)) {
    return;
  }
  await widget.context.ready;
  await widget.revealed;
  const notebook = widget.content;
  const index = notebook.widgets.findIndex(cell => cell.model.id === cellId);
  if (index < 0) {
    return;
  }
  notebook.activeCellIndex = index;
  if (notebook.scrollToItem) {
    await notebook.scrollToItem(index, 'center');
  } else {
    notebook.widgets[index].node.scrollIntoView({ block: 'center' });
  }
}
