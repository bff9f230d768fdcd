/**
 * The prompt box: the task text, the model choice, an optional step budget ("max steps",
 * 1–1000; empty means the server's configured default) and Start, which starts a task in
 * the folder shown under it (folder.tsx: the file browser's current folder unless the user
 * picks another). An invalid budget is refused here, with a message, and never sent. Demo
 * models are marked in the picker, a chosen demo's description shown under it (the narrow
 * side bar cuts the option's own words); a start refused for want of a key says so and
 * links the "Connect a model" form (connect.tsx).
 */
import React, { useEffect, useState } from 'react';

import { APIError, IModels, startTask } from './api';
import { FolderPicker } from './folder';

export interface IPanelHost {
  /** The file browser's current folder, relative to the server root. */
  currentFolder(): string;
}

export const MAX_STEPS_LIMIT = 1000;

/** The typed budget: `undefined` when empty (the default), a number, or what is wrong. */
export function parseMaxSteps(raw: string): number | undefined | { problem: string } {
  const text = raw.trim();
  if (!text) {
    return undefined;
  }
  const value = /^[0-9]+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(value) || value < 1 || value > MAX_STEPS_LIMIT) {
    return {
      problem: `Max steps must be a whole number from 1 to ${MAX_STEPS_LIMIT}, or empty for the default.`
    };
  }
  return value;
}

/** The model preselected: the configured default, or a demo when the default has no key. */
export function firstChoice(models: IModels | null): string {
  const choices = models?.choices ?? [];
  const configured = choices.find(choice => choice.name === models?.default);
  const demo = choices.find(choice => choice.demo);
  if (configured?.missing_key && demo) {
    return demo.name;
  }
  return models?.default ?? '';
}

export function Prompt(props: {
  models: IModels | null;
  host: IPanelHost;
  /** A model just connected by the form: picked, and any "no key" refusal cleared. */
  picked?: string | null;
  onStarted: (id: string) => void;
  onConnect: () => void;
}): JSX.Element {
  const [text, setText] = useState('');
  const [model, setModel] = useState('');
  const [steps, setSteps] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [needsKey, setNeedsKey] = useState(false);
  const [folder, setFolder] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (props.picked) {
      setModel(props.picked);
      setError(null);
      setNeedsKey(false);
    }
  }, [props.picked]);
  const chosen = model || firstChoice(props.models);
  const picked = props.models?.choices?.find(choice => choice.name === chosen);
  const budget = parseMaxSteps(steps);
  const problem = typeof budget === 'object' ? budget.problem : null;
  const fallback = props.models?.max_steps;
  const submit = async (): Promise<void> => {
    if (!text.trim() || busy || typeof budget === 'object') {
      return; // an invalid budget is already explained under the field
    }
    setBusy(true);
    setError(null);
    setNeedsKey(false);
    try {
      const reply = await startTask({
        task: text,
        model: chosen || undefined,
        workdir: folder ?? props.host.currentFolder(),
        ...(budget === undefined ? {} : { max_steps: budget })
      });
      setText('');
      props.onStarted(reply.task_id);
    } catch (reason) {
      setError((reason as Error).message);
      setNeedsKey(reason instanceof APIError && reason.kind === 'missing-key');
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="jp-mercury-prompt">
      <textarea
        className="jp-mercury-prompt-text"
        placeholder="Ask mercury to do something in the current folder…"
        value={text}
        rows={3}
        onChange={event => setText(event.target.value)}
        onKeyDown={event => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
            void submit();
          }
        }}
      />
      <div className="jp-mercury-prompt-row">
        <select
          className="jp-mercury-model"
          title="Model"
          value={chosen}
          onChange={event => setModel(event.target.value)}
        >
          {(props.models?.choices ?? []).length
            ? props.models?.choices?.map(choice => (
                <option
                  key={choice.name}
                  value={choice.name}
                  title={choice.description ?? choice.missing_key ?? choice.name}
                >
                  {choice.name}
                  {choice.demo ? ' · demo, offline' : ''}
                  {choice.missing_key ? ' · no key' : ''}
                  {choice.connected ? ' · connected' : ''}
                </option>
              ))
            : (props.models?.models ?? []).map(name => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
        </select>
        <button
          className="jp-mercury-start jp-Button jp-mod-styled jp-mod-accept"
          disabled={busy || !text.trim() || problem !== null}
          onClick={() => void submit()}
        >
          Start
        </button>
      </div>
      {picked?.demo && picked.description && (
        <div className="jp-mercury-muted jp-mercury-model-note">{picked.description}</div>
      )}
      <div className="jp-mercury-prompt-row jp-mercury-steps-row">
        <label
          className="jp-mercury-steps-label"
          title={`At most this many steps, 1–${MAX_STEPS_LIMIT}; empty: the configured default${
            fallback ? ` (${fallback})` : ''
          }`}
        >
          max steps{' '}
          <input
            className={'jp-mercury-max-steps' + (problem ? ' jp-mod-invalid' : '')}
            type="text"
            inputMode="numeric"
            aria-invalid={problem !== null}
            placeholder={fallback ? String(fallback) : 'default'}
            value={steps}
            onChange={event => setSteps(event.target.value)}
            onKeyDown={event => {
              if (event.key === 'Enter') {
                void submit();
              }
            }}
          />
        </label>
        <button className="jp-mercury-connect-open jp-Button" onClick={props.onConnect}>
          Connect a model…
        </button>
      </div>
      <FolderPicker
        root={props.models?.root ?? ''}
        following={props.host.currentFolder()}
        chosen={folder}
        onChoose={setFolder}
      />
      {problem && <div className="jp-mercury-error jp-mercury-steps-error">{problem}</div>}
      {error && (
        <div className="jp-mercury-error jp-mercury-start-error">
          {needsKey ? 'Not started: ' : ''}
          {error}
          {needsKey && (
            <>
              {' '}
              <button className="jp-mercury-connect-link jp-Button" onClick={props.onConnect}>
                Connect a model
              </button>{' '}
              or pick a demo model (marked “demo, offline”).
            </>
          )}
        </div>
      )}
    </div>
  );
}
