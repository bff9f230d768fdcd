/**
 * The folder a task will run in: shown in full (the server root joined with the folder),
 * following the file browser's current folder until the user types another one; the
 * folders of the typed path are offered as suggestions (the contents API).
 */
import { ContentsManager } from '@jupyterlab/services';
import React, { useEffect, useState } from 'react';

const contents = new ContentsManager();

/** The sub-folders of `folder` (relative to the server root), for the suggestions. */
async function subfolders(folder: string): Promise<string[]> {
  try {
    const listing = await contents.get(folder, { content: true, type: 'directory' });
    const items = (listing.content ?? []) as { type: string; path: string }[];
    return items.filter(item => item.type === 'directory').map(item => item.path);
  } catch {
    return [];
  }
}

export function FolderPicker(props: {
  root: string;
  following: string;
  chosen: string | null;
  onChoose: (folder: string | null) => void;
}): JSX.Element {
  const folder = props.chosen ?? props.following;
  const [options, setOptions] = useState<string[]>([]);
  // listed again on focus: a folder made after the panel opened is offered too
  const [listing, setListing] = useState(0);
  useEffect(() => {
    let current = true; // a slower, older listing never replaces a newer one
    const parent = folder.includes('/') ? folder.slice(0, folder.lastIndexOf('/')) : '';
    void subfolders(folder).then(inside =>
      subfolders(parent).then(beside => {
        if (current) {
          setOptions([...new Set([...inside, ...beside])]);
        }
      })
    );
    return () => {
      current = false;
    };
  }, [folder, listing]);
  const full = `${props.root.replace(/\/$/, '')}/${folder}`.replace(/\/$/, '');
  return (
    <div className="jp-mercury-folder-picker">
      <label className="jp-mercury-folder-label">
        Runs in{' '}
        <input
          className="jp-mercury-workdir"
          list="jp-mercury-folders"
          placeholder="(the server root)"
          value={folder}
          title={full}
          onChange={event => props.onChoose(event.target.value.replace(/^\/+/, ''))}
          onFocus={() => setListing(count => count + 1)}
        />
        <datalist id="jp-mercury-folders">
          {options.map(path => (
            <option key={path} value={path} />
          ))}
        </datalist>
      </label>
      {props.chosen !== null && (
        <button
          className="jp-mercury-folder-follow jp-Button"
          title="Run in the file browser's current folder again"
          onClick={() => props.onChoose(null)}
        >
          Use file browser's folder
        </button>
      )}
      <div className="jp-mercury-folder-full">{full || '/'}</div>
    </div>
  );
}
