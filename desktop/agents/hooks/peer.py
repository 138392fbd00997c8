"""Who is on the other end of the hook socket, and whether its folder is private.

Hook payloads carry the user's prompts (and whatever they pasted), and the answer is put
in front of the model. So both ends check the other: the folder and socket must belong to
this user with no access for anyone else, and the kernel's credentials of the peer process
(``SO_PEERCRED`` on Linux, ``LOCAL_PEERCRED`` on macOS and the BSDs) must name this user.
Where neither exists the answer is "unknown", which every caller treats as "not this user".
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # not typing's: the hook client imports this module (see client.py)
if TYPE_CHECKING:
    import _socket
    from pathlib import Path

#: ``LOCAL_PEERCRED`` and ``SOL_LOCAL`` from <sys/un.h> (macOS and the BSDs; Python has no names).
_LOCAL_PEERCRED = 0x001
_SOL_LOCAL = 0


def peer_uid(sock: _socket.socket) -> int | None:
    """The user id of the process at the other end of a connected Unix socket; None if unknown."""
    # here, not at the top: a hook that finds no service (answers inline) never connects; the C module,
    # not ``socket`` (its enums and ``selectors`` are ~20 ms of a hook process)
    import _socket as socket
    import struct

    if hasattr(socket, "SO_PEERCRED"):  # Linux: struct ucred {pid_t pid; uid_t uid; gid_t gid;}
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", raw)
        return uid
    if sys.platform == "darwin" or "bsd" in sys.platform:
        # struct xucred {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16];}
        raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, struct.calcsize("IIh16I"))
        return int(struct.unpack_from("II", raw)[1])
    return None


def peer_pid(sock: _socket.socket) -> int | None:
    """The process id at the other end (Linux only; None elsewhere)."""
    import _socket as socket
    import struct

    if not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[0])


def _own(st: os.stat_result) -> bool:
    return st.st_uid == os.getuid() and (st.st_mode & 0o077) == 0


def private_folder(folder: str | Path) -> bool:
    """A real folder (not a link) of this user that nobody else may enter or list."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and _own(st)


def private_socket(path: str | Path) -> bool:
    """A socket (not a link) of this user that nobody else may connect to."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(st.st_mode) and _own(st)
