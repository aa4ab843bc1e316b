// Confirmation before any action that changes state, and toasts that report how it went.
import { h } from './dom.js';

/**
 * Asks the operator to confirm: a modal <dialog> with the question, an explanation and two
 * buttons. Resolves true when confirmed; Escape, Cancel or a click outside resolve false.
 */
export function confirmAction({ title, body, confirm = 'Confirm', danger = false }) {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'confirm', 'aria-labelledby': 'confirm-title' },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: 'confirm-title' }, title),
        body ? h('p', {}, body) : null,
        h(
          'div',
          { class: 'dialog-actions' },
          h('button', { value: 'cancel', class: 'button', 'data-action': 'cancel' }, 'Cancel'),
          h('button', { value: 'confirm', class: `button ${danger ? 'danger' : 'primary'}`, 'data-action': 'confirm' }, confirm),
        ),
      ),
    );
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue === 'confirm');
    });
    dialog.addEventListener('click', (event) => {
      if (event.target === dialog) dialog.close('cancel');
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Shows a short message at the bottom right for a few seconds; `kind` is `ok` or `error`. */
export function toast(message, kind = 'ok') {
  let area = document.getElementById('toasts');
  if (!area) {
    area = h('div', { id: 'toasts', role: 'status', 'aria-live': 'polite' });
    document.body.append(area);
  }
  const item = h('div', { class: `toast ${kind}` }, message);
  area.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 8_000 : 4_000);
}

/**
 * Runs an action after confirmation and reports it: resolves true when it ran without error.
 * `run` performs the API calls; its resolved string (if any) is the success message.
 */
export async function confirmed(question, run) {
  if (!(await confirmAction(question))) return false;
  try {
    const message = await run();
    toast(message ?? 'Done');
    return true;
  } catch (err) {
    toast(`${err.code ? `${err.code}: ` : ''}${err.message}`, 'error');
    return false;
  }
}
