/**
 * mercury-nb's JupyterLab extension: a left-sidebar panel listing every task on the machine,
 * live, with Stop / Continue / Start; a command-palette entry and a shortcut to open it.
 */
import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { LabIcon } from '@jupyterlab/ui-components';

import mercurySvg from '../style/icons/mercury.svg';
import { listModels, taskDetail, watchEvents } from './api';
import { revealCell } from './cells';
import { startLiveEdits } from './live';
import { MercuryPanel } from './panel';
import { reloadChanged } from './reload';

export const mercuryIcon = new LabIcon({ name: 'mercury-nb:icon', svgstr: mercurySvg });

const COMMAND = 'mercury:open-panel';

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
    const panel = new MercuryPanel(
      { currentFolder: () => (browser ? browser.model.path : '') },
      {
        open: path => void docs.openOrReveal(path),
        openCell: (path, cellId) => void revealCell(docs, path, cellId)
      }
    );
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
        .then(found =>
          reloadChanged(docs, found.task.workspace, found.changes, base, event.task_id)
        )
        .catch(reason => console.warn('mercury: could not reload changed files', reason));
    });
    // the agent's edits of open notebooks land in them live (live.ts); Ctrl+Z in command
    // mode takes back a cell operation (an inserted cell) like Z does
    startLiveEdits(shell, docs);
    app.commands.addKeyBinding({
      command: 'notebook:undo-cell-action',
      keys: ['Accel Z'],
      selector: '.jp-Notebook.jp-mod-commandMode:not(.jp-mod-readWrite) :focus'
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
