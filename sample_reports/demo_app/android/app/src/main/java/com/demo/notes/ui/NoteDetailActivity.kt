package com.demo.notes.ui

import android.content.Intent
import android.os.Bundle
import androidx.activity.viewModels
import androidx.appcompat.app.AppCompatActivity
import com.demo.notes.NotesApp
import com.demo.notes.R

/**
 * Shows one note. Started from the list with [EXTRA_NOTE_ID], or from a share link
 * (`https://jotter.example.com/s/{token}?note={id}`) that the system routes here.
 */
class NoteDetailActivity : AppCompatActivity() {

    private val viewModel: NotesViewModel by viewModels {
        (application as NotesApp).viewModelFactory
    }

    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        setContentView(R.layout.activity_note_detail)
        val noteId = noteIdFrom(intent)
        if (noteId == null) {
            finish()
            return
        }
        viewModel.open(noteId)
        findViewById<android.view.View>(R.id.save).setOnClickListener { viewModel.save() }
    }

    private fun noteIdFrom(intent: Intent): String? =
        intent.getStringExtra(EXTRA_NOTE_ID) ?: intent.data?.getQueryParameter("note")

    companion object {
        const val EXTRA_NOTE_ID = "com.demo.notes.NOTE_ID"
    }
}
