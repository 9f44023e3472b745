/**
 * NoteEditor: the editing pane. Keeps a draft of the open note, saves it on demand
 * (button or Ctrl+S) and shows when it was last saved.
 */

const AUTOSAVE_DELAY_MS = 1500;

export class NoteEditor {
  /**
   * @param {HTMLElement} root element holding `.title`, `.body` and `.status`
   * @param {import('./api.js').ApiClient} api
   */
  constructor(root, api) {
    this.api = api;
    this.titleInput = root.querySelector('.title');
    this.bodyInput = root.querySelector('.body');
    this.status = root.querySelector('.status');
    this.note = null;
    this.autosaveTimer = null;
    this.bodyInput.addEventListener('input', () => this.scheduleAutosave());
  }

  /** Show `note` for editing. */
  open(note) {
    this.note = note;
    this.titleInput.value = note.title;
    this.bodyInput.value = note.body;
    this.status.textContent = '';
  }

  draft() {
    return { ...this.note, title: this.titleInput.value, body: this.bodyInput.value };
  }

  get isDirty() {
    return this.note !== null
      && (this.titleInput.value !== this.note.title || this.bodyInput.value !== this.note.body);
  }

  /** Persist the draft and remember the revision the server stored. */
  async save() {
    if (!this.isDirty) {
      return this.note;
    }
    clearTimeout(this.autosaveTimer);
    this.status.textContent = 'Saving…';
    const saved = this.api.saveNote(this.draft());
    this.renderSavedState(saved);
    this.note = { ...this.draft(), revision: saved.revision, updatedAt: saved.updatedAt };
    return this.note;
  }

  scheduleAutosave() {
    clearTimeout(this.autosaveTimer);
    this.autosaveTimer = setTimeout(() => {
      this.save().catch((error) => this.renderError(error));
    }, AUTOSAVE_DELAY_MS);
  }

  renderSavedState(note) {
    const time = note.updatedAt.slice(11, 16);
    this.status.textContent = `Saved at ${time} · revision ${note.revision}`;
  }

  renderError(error) {
    this.status.textContent = `Could not save: ${error.message}`;
  }
}
