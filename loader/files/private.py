"""Files only their owner may read: plans, results and crash logs hold values to send (personal data).
They are written by loader.files.safe_write; this module holds their mode and private folders.

Modes are set with fchmod/chmod after creation, not left to the mode given to open/mkdtemp: that one
goes through the umask (and a directory's default ACL), so a file could come out 0400, or 0640.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PRIVATE_MODE = 0o600
PRIVATE_FOLDER_MODE = 0o700


def private_folder(prefix: str) -> Path:
    """A new folder in the temp directory only its owner may enter: a name nobody can guess, made by
    mkdtemp (refused if anything is there), mode 0700. The temp directory is resolved first, so a
    symlinked one (macOS's /tmp, a TMPDIR that is a link) gives the folder's real path."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=os.path.realpath(tempfile.gettempdir())))
    os.chmod(folder, PRIVATE_FOLDER_MODE)
    return folder
