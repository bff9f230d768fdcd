/**
 * The "Connect a model" form: a model name, an optional API base and a key, and where the
 * key is kept (this server's memory, or a 0600 file under MERCURY_HOME). The server checks
 * the model with one cheap request; its error is shown as the provider wrote it. The key
 * field is cleared once sent: the key never comes back from the server.
 */
import React, { useState } from 'react';

import { IModels, connectModel } from './api';

export function ConnectForm(props: {
  models: IModels | null;
  onConnected: (model: string) => void;
  onClose: () => void;
}): JSX.Element {
  const [model, setModel] = useState('');
  const [base, setBase] = useState('');
  const [key, setKey] = useState('');
  const [storage, setStorage] = useState<'session' | 'file'>('session');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const where = props.models?.storage;
  const submit = async (): Promise<void> => {
    if (!model.trim() || busy) {
      return;
    }
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const reply = await connectModel({
        model: model.trim(),
        storage,
        ...(base.trim() ? { api_base: base.trim() } : {}),
        ...(key ? { key } : {})
      });
      setKey('');
      setDone(`Connected ${reply.model}: it answered "${reply.reply}". Key ${reply.kept}.`);
      props.onConnected(reply.model);
    } catch (reason) {
      setError((reason as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="jp-mercury-connect" role="form" aria-label="Connect a model">
      <div className="jp-mercury-connect-title">
        <span>Connect a model</span>
        <button className="jp-mercury-connect-close jp-Button" onClick={props.onClose}>
          Close
        </button>
      </div>
      <label>
        Model
        <input
          className="jp-mercury-connect-model"
          placeholder="openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, llama3…"
          value={model}
          onChange={event => setModel(event.target.value)}
        />
      </label>
      <label>
        API base (optional: an OpenAI-compatible endpoint)
        <input
          className="jp-mercury-connect-base"
          placeholder="http://127.0.0.1:11434/v1"
          value={base}
          onChange={event => setBase(event.target.value)}
        />
      </label>
      <label>
        API key (optional for a local server)
        <input
          className="jp-mercury-connect-key"
          type="password"
          autoComplete="off"
          value={key}
          onChange={event => setKey(event.target.value)}
        />
      </label>
      <fieldset className="jp-mercury-connect-storage">
        <legend>Where the key is kept (never in the task ledger, never sent back here)</legend>
        <label>
          <input
            type="radio"
            name="mercury-key-storage"
            value="session"
            checked={storage === 'session'}
            onChange={() => setStorage('session')}
          />{' '}
          This session only: {where?.session ?? "kept in this server's memory until Lab stops"}
        </label>
        <label>
          <input
            type="radio"
            name="mercury-key-storage"
            value="file"
            checked={storage === 'file'}
            onChange={() => setStorage('file')}
          />{' '}
          Save it: {where?.file ?? 'a file with mode 0600 under MERCURY_HOME'}
        </label>
      </fieldset>
      <button
        className="jp-mercury-connect-check jp-Button jp-mod-styled jp-mod-accept"
        disabled={busy || !model.trim()}
        onClick={() => void submit()}
      >
        {busy ? 'Checking…' : 'Check and connect'}
      </button>
      <div className="jp-mercury-connect-note">
        The check sends the model one short request (a few tokens).
      </div>
      {error && (
        <div className="jp-mercury-error jp-mercury-connect-error">
          The model refused the check: <pre>{error}</pre>
        </div>
      )}
      {done && <div className="jp-mercury-connect-done">{done}</div>}
    </div>
  );
}
