/**
 * The product's one way to ask the user something in a dialog: the safe answer is the
 * first button and the default one (focused, and what Enter picks), the risky one is
 * a warning button that must be chosen on purpose. Every dialog goes through `askSafely`
 * (tests/browser/test_review.py checks the focus; tests/test_labextension_dialogs.py that no
 * other module opens a dialog).
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';

export interface ISafeQuestion {
  title: string;
  body: string;
  /** The answer that loses nothing (Keep, Cancel): first, focused, picked by Enter. */
  safe: string;
  /** The answer that can lose something: a warning button, never the default. */
  risky: string;
}

/** True only when the user picked the risky answer on purpose. */
export async function askSafely(question: ISafeQuestion): Promise<boolean> {
  const answer = await showDialog({
    title: question.title,
    body: question.body,
    buttons: [
      Dialog.cancelButton({ label: question.safe, className: 'jp-mercury-safe' }),
      Dialog.warnButton({ label: question.risky, className: 'jp-mercury-risky' })
    ],
    defaultButton: 0
  });
  return answer.button.accept && answer.button.label === question.risky;
}
