"""The recording tape's handles (lessons/tape.py): what a trainee's program holds instead of an API object."""

import pytest

from lessons.recording import RecordingError
from lessons.tape import Live


def test_a_handle_the_program_made_itself_is_a_named_error_not_a_recursion():
    """``executor.__class__.__new__(executor.__class__)`` in lesson 12 gave a RecursionError from the handle."""
    forged = Live.__new__(Live)
    with pytest.raises(RecordingError, match="made itself"):
        _ = forged.op_type
    with pytest.raises(RecordingError, match="made itself"):
        _ = forged._h  # what the tape reads when the handle is passed to an API call
