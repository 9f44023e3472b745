package com.demo.notes.ui

import androidx.lifecycle.ViewModel
import androidx.lifecycle.viewModelScope
import com.demo.notes.data.NoteEntity
import com.demo.notes.data.NoteRepository
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.SharingStarted
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.flow.stateIn
import kotlinx.coroutines.launch

/** What the detail screen shows. */
data class EditorState(
    val note: NoteEntity? = null,
    val saving: Boolean = false,
)

/**
 * Holds the list of notes and the note being edited; survives rotation.
 */
class NotesViewModel(private val repository: NoteRepository) : ViewModel() {

    val notes: StateFlow<List<NoteEntity>> = repository.notes
        .stateIn(viewModelScope, SharingStarted.WhileSubscribed(5_000), emptyList())

    private val _editor = MutableStateFlow(EditorState())
    val editor: StateFlow<EditorState> = _editor.asStateFlow()

    /** Load a note into the editor, e.g. from the list or from a shared link. */
    fun open(noteId: String) {
        val note = repository.getNote(noteId)
        _editor.value = EditorState(note = note)
    }

    fun updateText(title: String, body: String) {
        val current = _editor.value.note ?: return
        _editor.value = _editor.value.copy(note = current.copy(title = title, body = body))
    }

    fun save() {
        val note = _editor.value.note ?: return
        _editor.value = _editor.value.copy(saving = true)
        viewModelScope.launch {
            try {
                repository.save(note)
            } finally {
                _editor.value = _editor.value.copy(saving = false)
            }
        }
    }
}
