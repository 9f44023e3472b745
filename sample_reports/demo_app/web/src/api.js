/**
 * ApiClient: the web app's only door to the backend (`backend/notes/api.py`).
 * Every method resolves to decoded JSON or rejects with an ApiError.
 */

export class ApiError extends Error {
  constructor(status, code) {
    super(`request failed: ${status} ${code}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

export class ApiClient {
  /**
   * @param {string} baseUrl e.g. "https://jotter.example.com/api"
   * @param {() => string} getToken the signed-in user's bearer token
   */
  constructor(baseUrl, getToken) {
    this.baseUrl = baseUrl.replace(/\/$/, '');
    this.getToken = getToken;
  }

  async request(method, path, body) {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        'Authorization': `Bearer ${this.getToken()}`,
        'Content-Type': 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const payload = await response.json().catch(() => ({}));
    if (!response.ok) {
      throw new ApiError(response.status, payload.error ?? 'unknown');
    }
    return payload;
  }

  /** One page of the user's notes: `{items, page, pages, hasMore}`. */
  async listNotes(page = 1, perPage = 20) {
    return this.request('GET', `/notes?page=${page}&per_page=${perPage}`);
  }

  /** Save an edit; resolves to the stored note with its new `revision` and `updatedAt`. */
  async saveNote(note) {
    return this.request('PUT', `/notes/${encodeURIComponent(note.id)}`, {
      title: note.title,
      body: note.body,
    });
  }

  /** Share a note by e-mail; `expiresAt` is an ISO string or null for a permanent link. */
  async shareNote(noteId, email, expiresAt = null) {
    return this.request('POST', `/notes/${encodeURIComponent(noteId)}/shares`, {
      email,
      expiresAt,
    });
  }
}
