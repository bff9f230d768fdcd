/**
 * mercury-nb's JupyterLab extension: a left-sidebar panel listing every task on the machine,
 * live, with Stop / Continue / Start; a command-palette entry and a shortcut to open it.
 */
import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { Dialog, ICommandPalette, showDialog } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { LabIcon } from '@jupyterlab/ui-components';

import mercurySvg from '../style/icons/mercury.svg';
import { IFileChange, listModels, taskDetail, watchEvents } from './api';
import { MercuryPanel } from './panel';

export const mercuryIcon = new LabIcon({ name: 'mercury-nb:icon', svgstr: mercurySvg });

const COMMAND = 'mercury:open-panel';

/** `workspace/path` relative to the server root, or null when outside it. */
function labPath(root: string, workspace: string, path: string): string | null {
  // absolute paths on the server (PathExt.join would drop the leading slash)
  const full = workspace.replace(/\/+$/, '') + '/' + path;
  const base = root.replace(/\/+$/, '');
  if (!base || !(full === base || full.startsWith(base + '/'))) {
    return null;
  }
  return full.slice(base.length + 1);
}

async function reloadChanged(
  docs: IDocumentManager,
  workspace: string,
  changes: IFileChange[],
  root: string
): Promise<void> {
  for (const change of changes) {
    if (change.kind === 'deleted') {
      continue;
    }
    const path = labPath(root, workspace, change.path);
    const widget = path === null ? undefined : docs.findWidget(path);
    const context = widget ? docs.contextForWidget(widget) : undefined;
    if (!context || path === null) {
      continue;
    }
    if (!context.model.dirty) {
      await context.revert();
      continue;
    }
    const answer = await showDialog({
      title: 'File changed by a mercury task',
      body: `${path} was changed on disk by a task, and it has unsaved edits here. Reload it from disk (your edits are lost) or keep your edits (saving will overwrite the task's changes)?`,
      buttons: [
        Dialog.cancelButton({ label: 'Keep my edits' }),
        Dialog.warnButton({ label: 'Reload from disk' })
      ]
    });
    if (answer.button.accept) {
      await context.revert();
    }
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'mercury-nb:panel',
  description: 'The mercury-nb side panel: tasks, live, with Stop, Continue and Start.',
  autoStart: true,
  requires: [ILabShell, IDocumentManager],
  optional: [ICommandPalette, IDefaultFileBrowser],
  activate: (
    app: JupyterFrontEnd,
    shell: ILabShell,
    docs: IDocumentManager,
    palette: ICommandPalette | null,
    browser: IDefaultFileBrowser | null
  ) => {
    const panel = new MercuryPanel({
      currentFolder: () => (browser ? browser.model.path : '')
    });
    // Whether or not the panel is open: when any task finishes, reload the open documents
    // it changed (or ask, when they have unsaved edits).
    let root: string | null = null;
    void listModels()
      .then(found => {
        root = found.root;
      })
      .catch(() => undefined);
    watchEvents(event => {
      if (event.kind !== 'task-finished' || root === null) {
        return;
      }
      const base = root;
      void taskDetail(event.task_id)
        .then(found => reloadChanged(docs, found.task.workspace, found.changes, base))
        .catch(reason => console.warn('mercury: could not reload changed files', reason));
    });
    panel.id = 'mercury-panel';
    panel.title.icon = mercuryIcon;
    panel.title.caption = 'mercury tasks';
    shell.add(panel, 'left', { rank: 650 });

    app.commands.addCommand(COMMAND, {
      label: 'Open the mercury tasks panel',
      icon: mercuryIcon,
      execute: () => shell.activateById(panel.id)
    });
    app.commands.addKeyBinding({
      command: COMMAND,
      keys: ['Alt Shift M'],
      selector: 'body'
    });
    palette?.addItem({ command: COMMAND, category: 'mercury' });
  }
};

export default plugin;
