package com.demo.notes.sync

import android.content.Context
import androidx.work.CoroutineWorker
import androidx.work.WorkerParameters
import com.demo.notes.NotesApp
import com.demo.notes.data.NoteEntity
import java.io.IOException

/**
 * Periodic background sync: uploads notes edited on the device, then pulls everything
 * changed on the server since the last run.
 */
class SyncWorker(
    context: Context,
    params: WorkerParameters,
) : CoroutineWorker(context, params) {

    private val app get() = applicationContext as NotesApp

    override suspend fun doWork(): Result {
        val repository = app.noteRepository
        val api = app.notesApi
        return try {
            for (note in repository.pendingUploads()) {
                val stored = api.saveNote(note.id, note.title, note.body)
                repository.markSynced(note, stored.revision)
            }
            val changed = api.listChangedSince(app.lastSyncMillis)
            repository.replaceFromServer(changed.map { it.toEntity() })
            app.lastSyncMillis = System.currentTimeMillis()
            Result.success()
        } catch (e: IOException) {
            Result.retry()
        }
    }

    private fun RemoteNote.toEntity() = NoteEntity(
        id = id,
        title = title,
        body = body,
        revision = revision,
        updatedAtMillis = updatedAtMillis,
    )
}

/** A note as the server sends it. */
data class RemoteNote(
    val id: String,
    val title: String,
    val body: String,
    val revision: Int,
    val updatedAtMillis: Long,
)
