/**
 * Where a task's file is for Lab: `workspace/path` relative to the server root, or null
 * when the file lies outside it (Lab cannot open it then).
 */

/** `workspace/path` relative to the server root `root`, or null when outside it. */
export function labPath(root: string, workspace: string, path: string): string | null {
  // absolute paths on the server (PathExt.join would drop the leading slash)
  const full = workspace.replace(/\/+$/, '') + '/' + path;
  const base = root.replace(/\/+$/, '');
  if (!base || !(full === base || full.startsWith(base + '/'))) {
    return null;
  }
  return full.slice(base.length + 1);
}
