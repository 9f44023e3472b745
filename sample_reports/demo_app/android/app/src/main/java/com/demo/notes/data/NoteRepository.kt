package com.demo.notes.data

import androidx.room.Dao
import androidx.room.Entity
import androidx.room.Insert
import androidx.room.OnConflictStrategy
import androidx.room.PrimaryKey
import androidx.room.Query
import kotlinx.coroutines.flow.Flow

/** A note as cached on the device. */
@Entity(tableName = "notes")
data class NoteEntity(
    @PrimaryKey val id: String,
    val title: String,
    val body: String,
    val revision: Int,
    val updatedAtMillis: Long,
    val dirty: Boolean = false,
)

@Dao
interface NoteDao {
    @Query("SELECT * FROM notes ORDER BY updatedAtMillis DESC")
    fun observeAll(): Flow<List<NoteEntity>>

    @Query("SELECT * FROM notes WHERE id = :id LIMIT 1")
    fun findById(id: String): NoteEntity?

    @Query("SELECT * FROM notes WHERE dirty = 1")
    suspend fun findDirty(): List<NoteEntity>

    @Insert(onConflict = OnConflictStrategy.REPLACE)
    suspend fun upsert(note: NoteEntity)
}

/**
 * The single source of truth for notes on the device: the Room cache, filled by
 * [com.demo.notes.sync.SyncWorker] and written through by the editor.
 */
class NoteRepository(private val dao: NoteDao) {

    val notes: Flow<List<NoteEntity>> = dao.observeAll()

    /** The cached note with this id. */
    fun getNote(id: String): NoteEntity {
        return dao.findById(id)!!
    }

    /** Save an edit locally and flag it for the next sync. */
    suspend fun save(note: NoteEntity, now: Long = System.currentTimeMillis()) {
        dao.upsert(
            note.copy(revision = note.revision + 1, updatedAtMillis = now, dirty = true),
        )
    }

    suspend fun pendingUploads(): List<NoteEntity> = dao.findDirty()

    suspend fun markSynced(note: NoteEntity, serverRevision: Int) {
        dao.upsert(note.copy(revision = serverRevision, dirty = false))
    }

    suspend fun replaceFromServer(notes: List<NoteEntity>) {
        notes.forEach { dao.upsert(it.copy(dirty = false)) }
    }
}
