/**
 * Entry point: wires the list, the editor and the keyboard shortcuts together.
 */

import { ApiClient } from './api.js';
import { NoteEditor } from './editor.js';
import { NoteList } from './list.js';

const api = new ApiClient('/api', () => sessionStorage.getItem('token') ?? '');
const editor = new NoteEditor(document.querySelector('#editor'), api);
const list = new NoteList(document.querySelector('#notes'), api, (note) => editor.open(note));

async function saveAndRefresh() {
  await editor.save();
  await list.reload();
}

document.querySelector('#save').addEventListener('click', () => saveAndRefresh());

document.addEventListener('keydown', (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === 's') {
    event.preventDefault();
    saveAndRefresh();
  }
});

list.loadMore();
