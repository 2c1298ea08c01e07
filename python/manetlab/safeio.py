"""Writing and reading files in folders others may have touched (issue 34).

A result folder can come from someone else (a colleague's archive, a shared
scratch folder), so manetlab treats it as untrusted when it reads it or writes
into it:

* Files are written whole or not at all, never through a symbolic link: the data
  goes to a temporary file in the same folder, created with
  ``O_CREAT|O_EXCL|O_NOFOLLOW`` (a name planted there is never opened), fsynced,
  then renamed over the destination (`write_bytes`, `atomic_open`). A destination
  that is a symbolic link, or anything but a regular file, is refused with
  `UnsafePathError` before anything is written; rename(2) itself replaces a path,
  never the file a link points to, so a link planted after that check is replaced,
  not written through. Files are created with mode 0o666 minus the umask, as
  ``open()`` would.
* Files in a freshly made private folder are created with `create_new` (exclusive,
  no link followed).
* Files of a result folder are read with `read_bytes`/`read_text`: ``O_NOFOLLOW``
  and ``O_NONBLOCK``, regular files only (a link, FIFO or device is refused rather
  than followed or waited on).
* A result folder is replaced atomically with `exchange` (Linux
  ``renameat2(RENAME_EXCHANGE)`` through ctypes: glibc's wrapper, else the raw
  syscall on x86_64/aarch64); where that is unavailable, the caller falls back to
  two renames that keep the old copy until the new one is in place
  (`manetlab.results`).
* CSV cells written from input text are neutralised against spreadsheet formula
  injection (`csv_text`, `csv_frame`, `write_csv`).
"""

from __future__ import annotations

import ctypes
import errno
import io
import os
import platform
import re
import secrets
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from manetlab.textsafe import excerpt

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "NotRegularFile",
    "OutputError",
    "UnsafePathError",
    "atomic_open",
    "copy_file",
    "create_new",
    "csv_frame",
    "csv_text",
    "ensure_dir",
    "exchange",
    "file_kind",
    "is_regular_file",
    "make_dir",
    "open_read",
    "open_regular",
    "read_bytes",
    "read_text",
    "write_bytes",
    "write_csv",
    "write_text",
]

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class OutputError(OSError):
    """A file or folder manetlab will not write (or read); ``str()`` is one line
    for ``error: ...`` (the CLI exits with 1)."""

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None, err: int = errno.EPERM) -> None:
        super().__init__(err, message, None if path is None else os.fspath(path))
        self.message = message

    def __str__(self) -> str:
        return self.message


class UnsafePathError(OutputError):
    """A symbolic link, or not a regular file/folder, where manetlab reads or writes."""


def shown(path: str | os.PathLike[str], limit: int = 200) -> str:
    """A path for a one-line message: control characters escaped, at most `limit` characters."""
    s = os.fspath(path)
    return excerpt(s if isinstance(s, str) else os.fsdecode(s), limit)


def _refuse_link(path: Path, what: str = "write") -> UnsafePathError:
    return UnsafePathError(
        f"{shown(path)} is a symbolic link; manetlab does not {what} through links here (remove it, or use another path)",
        path,
        errno.ELOOP,
    )


# --- writing files ---------------------------------------------------------------


def _check_destination(path: Path) -> None:
    """Refuse a destination that is a symbolic link or not a regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise _refuse_link(path)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePathError(f"{shown(path)} exists and is not a regular file; not replaced", path, errno.EEXIST)


def _open_dir(folder: Path) -> int:
    # The folder as the caller named it (a user's own link in --out is followed);
    # every file operation below is then relative to this descriptor, so the folder
    # cannot be swapped underneath.
    return os.open(folder, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)


def _new_fd(name: str, dir_fd: int, mode: int = 0o666) -> int:
    return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, mode, dir_fd=dir_fd)


@contextmanager
def _synced_file(fd: int, mode: str, kwargs: dict[str, Any]) -> Iterator[IO[Any]]:
    """The write descriptor `fd` as a file object ("wb", or "w" with `kwargs` for
    the text wrapper), flushed and fsynced when the block ends without an exception."""
    raw = os.fdopen(fd, "wb")
    f: IO[Any] = raw if mode == "wb" else io.TextIOWrapper(raw, **{"encoding": "utf-8", **kwargs})
    with f:
        yield f
        f.flush()
        os.fsync(raw.fileno())


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "wb", **kwargs: Any) -> Iterator[IO[Any]]:
    """A file object for writing `path` whole: a temporary file in the same folder
    (exclusive, no link followed), fsynced and renamed over `path` when the block
    ends without an exception (else removed). `path` must not be a symbolic link
    or anything but a regular file (`UnsafePathError`). `mode`: "wb" or "w" (then
    `kwargs` go to the text wrapper: encoding, newline)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode {mode!r} (allowed: 'w', 'wb')")
    p = Path(path)
    _check_destination(p)
    dir_fd = _open_dir(p.parent)
    try:
        for _ in range(100):
            tmp = f".{p.name[:100]}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
            try:
                fd = _new_fd(tmp, dir_fd)
                break
            except FileExistsError:
                continue
            except OSError as e:  # read-only folder, full disk: name the file asked for, not the temporary
                raise OSError(e.errno, e.strerror or str(e), os.fspath(p)) from e
        else:  # pragma: no cover - 100 random collisions
            raise OutputError(f"cannot create a temporary file beside {shown(p)}", p, errno.EEXIST)
        try:
            with _synced_file(fd, mode, kwargs) as f:
                yield f
            # Checked again just before the rename (a link planted meanwhile is
            # replaced by the rename anyway, never written through).
            _check_destination(p)
            os.rename(tmp, p.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException as e:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            if isinstance(e, OSError) and not isinstance(e, OutputError) and e.filename is None:
                # A failed write or fsync (full disk) names no file: name it.
                raise OSError(e.errno, e.strerror or str(e), os.fspath(p)) from e
            raise
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
    finally:
        os.close(dir_fd)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write `data` to `path` whole (`atomic_open`); returns the path."""
    with atomic_open(path, "wb") as f:
        f.write(data)
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    return write_bytes(path, text.encode(encoding))


@contextmanager
def create_new(path: str | os.PathLike[str], mode: str = "wb", **kwargs: Any) -> Iterator[IO[Any]]:
    """Create `path`, which must not exist (``O_EXCL|O_NOFOLLOW``: a planted file
    or link is an error, never opened), for writing; fsynced when the block ends.
    For files in a folder manetlab has just made."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o666)
    except FileExistsError:
        raise UnsafePathError(f"{shown(p)} already exists; not overwritten", p, errno.EEXIST) from None
    with _synced_file(fd, mode, kwargs) as f:
        yield f


def copy_file(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """Copy the regular file `src` (not followed if a link: `read_bytes`'s rules) to
    the new file `dst` (`create_new`)."""
    import shutil

    with os.fdopen(open_regular(src), "rb") as fin, create_new(dst, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)


def make_dir(parent: Path, prefix: str) -> Path:
    """A new empty folder `parent/prefix<random>` (mode 0o777 minus the umask, unlike
    ``tempfile.mkdtemp``'s 0o700: a result folder gets the permissions any folder would)."""
    for _ in range(100):
        d = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            os.mkdir(d, 0o777)
            return d
        except FileExistsError:
            continue
    raise OutputError(f"cannot create a temporary folder in {shown(parent)}", parent, errno.EEXIST)  # pragma: no cover


def ensure_dir(path: str | os.PathLike[str]) -> Path:
    """`path` as a real folder, made if missing (parents too): a symbolic link or a
    file there is refused. For folders manetlab makes inside a result folder
    (``figures/``), where a planted link would redirect every write."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(p, 0o777)
            return p
        except FileExistsError:
            st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        raise _refuse_link(p)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePathError(f"{shown(p)} exists and is not a folder", p, errno.ENOTDIR)
    return p


# --- reading files of a result folder ------------------------------------------------


class NotRegularFile(UnsafePathError):
    """A FIFO, device, socket or folder where a regular file is read; `kind` says
    which ("a FIFO (named pipe)", ...)."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{shown(path)} is not a regular file; not read", path, errno.EINVAL)
        self.kind = kind


def file_kind(mode: int) -> str:
    """What a file of `st_mode` `mode` is, for a message ("a directory", ...)."""
    return (
        "a regular file" if stat.S_ISREG(mode)
        else "a directory" if stat.S_ISDIR(mode)
        else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
        else "a character device" if stat.S_ISCHR(mode)
        else "a block device" if stat.S_ISBLK(mode)
        else "a socket" if stat.S_ISSOCK(mode)
        else "a symbolic link" if stat.S_ISLNK(mode)
        else "a special file"
    )


def open_regular(path: str | os.PathLike[str], *, follow_links: bool = False) -> int:
    """A read descriptor of the regular file `path`. Anything else is refused
    (`NotRegularFile`) before it is opened, and again on the open descriptor, and
    the open never blocks (O_NONBLOCK), so a FIFO swapped in meanwhile cannot hang
    the reader. A symbolic link is refused (`UnsafePathError`) unless
    `follow_links` (a user's own file named on the command line may be a link;
    files of a result folder may not)."""
    p = Path(path)
    st = os.stat(p) if follow_links else os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        raise _refuse_link(p, "read")
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(p, file_kind(st.st_mode))
    flags = os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | getattr(os, "O_NOCTTY", 0) | (0 if follow_links else _O_NOFOLLOW)
    try:
        fd = os.open(p, flags)
    except OSError as e:
        # Linux and macOS say ELOOP for a link under O_NOFOLLOW, FreeBSD EMLINK.
        if e.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(p):
            raise _refuse_link(p, "read") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFile(p, file_kind(mode))
    return fd


def read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file `path`, not following a symbolic link and never
    blocking on a FIFO (`UnsafePathError`); FileNotFoundError when missing. `limit`:
    refuse a larger file (`OutputError`)."""
    p = Path(path)
    fd = open_regular(p)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if limit is None:
            return f.read()
        data = f.read(limit + 1)
        if st.st_size > limit or len(data) > limit:
            raise OutputError(f"{shown(p)} is larger than {limit:,} bytes; not read", p, errno.EFBIG)
        return data


def open_read(path: str | os.PathLike[str], mode: str = "rb", **kwargs: Any) -> IO[Any]:
    """The regular file `path` open for reading (`read_bytes`'s rules); `mode` "rb"
    or "r" (then `kwargs` go to the text wrapper: encoding, errors)."""
    raw = os.fdopen(open_regular(path), "rb")
    return raw if mode == "rb" else io.TextIOWrapper(raw, **{"encoding": "utf-8", **kwargs})


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8", limit: int | None = None) -> str:
    return read_bytes(path, limit).decode(encoding)


def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a regular file itself (a symbolic link is not)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


# --- atomic folder exchange ----------------------------------------------------------

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2
# renameat2's number where glibc (< 2.28) has no wrapper.
_SYS_RENAMEAT2 = {"x86_64": 316, "amd64": 316, "aarch64": 276, "arm64": 276}


def _load_renameat2(wrapper: bool = True) -> Callable[[bytes, bytes, int], int] | None:
    """renameat2(AT_FDCWD, a, AT_FDCWD, b, flags) through ctypes: glibc's function
    (2.28 and later; `wrapper`), else the system call by number; None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    fn = getattr(libc, "renameat2", None) if wrapper else None
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        return lambda a, b, flags: int(fn(_AT_FDCWD, a, _AT_FDCWD, b, flags))
    nr = _SYS_RENAMEAT2.get(platform.machine().lower())
    if nr is None:
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    return lambda a, b, flags: int(
        syscall(ctypes.c_long(nr), ctypes.c_int(_AT_FDCWD), ctypes.c_char_p(a), ctypes.c_int(_AT_FDCWD), ctypes.c_char_p(b), ctypes.c_uint(flags))
    )


_renameat2 = _load_renameat2()
# errno values meaning "this kernel or file system cannot": use the fallback.
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}


def exchange(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Swap the paths `a` and `b` (both must exist) in one atomic step:
    ``renameat2(RENAME_EXCHANGE)``. False when this platform, kernel or file system
    has no such call (nothing changed); OSError for any other failure."""
    if _renameat2 is None:
        return False
    rc = _renameat2(os.fsencode(a), os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), os.fspath(a), None, os.fspath(b))


# --- CSV: formula neutralisation --------------------------------------------------------

#: First characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def csv_text(s: str) -> str:
    """`s` as a CSV cell no spreadsheet runs as a formula: a text starting with
    ``= + - @``, TAB or CR gets a leading ``'`` (OWASP's rule), except a plain
    number written as text ("-5", "+1.5e3"), which no spreadsheet evaluates."""
    if s and s[0] in FORMULA_START and not _NUMBER.fullmatch(s):
        return "'" + s
    return s


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` whose text cells and column names pass through `csv_text`;
    numbers (negative ones too), booleans and missing values are untouched."""
    import pandas as pd

    def fix(v: Any) -> Any:
        return csv_text(v) if isinstance(v, str) else v

    out = df.copy()
    out.columns = pd.Index([fix(c) for c in df.columns]) if not isinstance(df.columns, pd.MultiIndex) else df.columns
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        if isinstance(col.dtype, pd.CategoricalDtype):
            if any(isinstance(c, str) and csv_text(c) != c for c in col.cat.categories):
                out.isetitem(i, col.astype(object).map(fix))  # type: ignore[arg-type]  # pandas-stubs: isetitem takes a Series too (pandas' docs: array-like)
        elif (col.dtype == object or pd.api.types.is_string_dtype(col.dtype)) and any(isinstance(v, str) and csv_text(v) != v for v in col):
            out.isetitem(i, col.map(fix))  # type: ignore[arg-type]  # pandas-stubs: isetitem takes a Series too (pandas' docs: array-like)
    return out


def write_csv(df: pd.DataFrame, path: str | os.PathLike[str], **to_csv: Any) -> Path:
    """``df.to_csv(path, **to_csv)`` with text cells neutralised (`csv_frame`),
    written whole and never through a link (`atomic_open`)."""
    with atomic_open(path, "w", newline="") as f:
        csv_frame(df).to_csv(f, **to_csv)
    return Path(path)
