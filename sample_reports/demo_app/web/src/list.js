/**
 * NoteList: the sidebar. Loads the user's notes a page at a time and opens the one
 * that is clicked in the editor.
 */

export class NoteList {
  /**
   * @param {HTMLElement} root an element holding a `ul` and a `.load-more` button
   * @param {import('./api.js').ApiClient} api
   * @param {(note: object) => void} onOpen called with the clicked note
   */
  constructor(root, api, onOpen) {
    this.api = api;
    this.onOpen = onOpen;
    this.listElement = root.querySelector('ul');
    this.moreButton = root.querySelector('.load-more');
    this.notes = [];
    this.nextPage = 1;
    this.moreButton.addEventListener('click', () => this.loadMore());
  }

  /** Fetch the next page and append it. */
  async loadMore() {
    this.moreButton.disabled = true;
    try {
      const page = await this.api.listNotes(this.nextPage);
      this.notes.push(...page.items);
      this.nextPage = page.page + 1;
      this.moreButton.hidden = !page.hasMore;
      this.render();
    } finally {
      this.moreButton.disabled = false;
    }
  }

  /** Start over from the first page (after a save reorders the list). */
  async reload() {
    this.notes = [];
    this.nextPage = 1;
    await this.loadMore();
  }

  render() {
    this.listElement.replaceChildren(
      ...this.notes.map((note) => {
        const item = document.createElement('li');
        item.textContent = note.title || 'Untitled';
        item.title = `Edited ${new Date(note.updatedAt).toLocaleString()}`;
        item.addEventListener('click', () => this.onOpen(note));
        return item;
      }),
    );
  }
}
