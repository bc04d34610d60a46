"""The files of an artifact, read in place: an unpacked directory, a tar archive (plain, gzip, xz, bzip2) or a zip.

Nothing is ever extracted. Members are listed first (so the layout can be
recognised from the paths), then the wanted ones are read as streams, in the
order they are stored, straight into the parsers.

What an archive can hold that a reader must not trust:
1. paths that climb out (`../x`, `/etc/x`, `C:x`): skipped, named in a warning;
2. links and device files: skipped, named (a link is never followed, a FIFO
   never opened);
3. decompression bombs: every byte coming out of a decompressor is counted;
   past `max_bytes` in all, or past `MAX_RATIO` times the archive's own size,
   reading stops with an error. A member larger than `max_member_bytes`, or a
   zip member expanding more than `MAX_RATIO` times, is refused too;
4. archives with more than `MAX_MEMBERS` entries, and zips whose entries
   overlap (the "overlapping files" bomb), are refused before anything is read.
"""

from __future__ import annotations

import bz2
import datetime as dt
import gzip
import lzma
import os
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path, PurePosixPath
from typing import IO, Protocol

from audits.collect.reading import BinaryReadable
from audits.collect.snapshot import SnapshotError

# Entries (files, directories, links) an artifact may hold: a cluster-info
# dump of 150,000 pods holds about 300,000.
MAX_MEMBERS = 500_000
# How far an archive may expand: JSON and YAML compress 5 to 30 times, and
# repetitive synthetic data up to about 100 times; a bomb, thousands of times.
MAX_RATIO = 250
# Below this many bytes out, expansion is not judged: a small archive of
# repetitive text is not a bomb, and is quickly read anyway.
RATIO_FLOOR = 64 * 1024**2
MAX_MEMBER_BYTES = 1024**3
CHUNK = 256 * 1024

ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
XZ_MAGIC = b"\xfd7zXZ\x00"
BZIP2_MAGIC = b"BZh"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
# Unix time of the first Kubernetes release: an earlier file time is a placeholder (0, or a reproducible build's).
EARLIEST_PLAUSIBLE = dt.datetime(2014, 6, 1, tzinfo=dt.UTC).timestamp()


class ArtifactError(SnapshotError):
    """An artifact that cannot be read as a whole: nothing of it is kept."""


class _ArchiveDamage(ArtifactError):
    """The compressed stream of a tar archive is damaged: nothing after the damage can be read."""


@dataclass(frozen=True)
class Member:
    """One regular file of an artifact."""

    path: str  # relative, "/"-separated, no "." or ".." parts
    size: int
    # When the file was written, as recorded by the archive (seconds since the epoch, UTC);
    # None where it is not recorded reliably (a zip without UTC times, a copied directory).
    mtime: float | None = None
    # Where the member is stored, for reading in storage order.
    position: int = 0

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass
class Listing:
    members: list[Member] = field(default_factory=list)
    # Entries that are not read, each with why (unsafe path, link, device file).
    refused: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Limits:
    max_bytes: int
    max_member_bytes: int = MAX_MEMBER_BYTES
    max_members: int = MAX_MEMBERS
    max_ratio: int = MAX_RATIO


class ArtifactSource(Protocol):
    """Where an artifact's files come from."""

    name: str
    kind: str  # "directory", "tar archive", "zip archive"

    def listing(self) -> Listing: ...

    def read(self, wanted: list[Member]) -> Iterator[tuple[Member, BinaryReadable]]:
        """The wanted members as open streams, in storage order; each stream is valid until the next."""
        ...


def archive_kind(path: Path, *, name: str | None = None) -> str | None:
    """What kind of archive a file is, from its first bytes: "zip", "tar", or None (not an archive).

    A gzip-compressed file is a tar archive only if what it expands to starts
    with a tar header; otherwise it is a gzip snapshot file. Formats Python
    cannot read (zstd) are refused with what to do.
    """
    name = name or path.name
    try:
        with path.open("rb") as fh:
            head = fh.read(512)
            if head.startswith(ZIP_MAGICS):
                return "zip"
            if head.startswith(ZSTD_MAGIC):
                raise ArtifactError(f"{name}: zstd-compressed archives cannot be read; recompress it as .tar.gz.")
            if head.startswith((GZIP_MAGIC, XZ_MAGIC, BZIP2_MAGIC)):
                fh.seek(0)
                try:
                    with _decompressor(head, fh) as inner:
                        first_block = inner.read(512)
                except (OSError, EOFError, zlib.error, lzma.LZMAError):
                    return None  # a damaged gzip snapshot says so when it is read
                if _is_tar_header(first_block):
                    return "tar"
                if head.startswith(GZIP_MAGIC):
                    return None
                raise ArtifactError(
                    f"{name}: a compressed file that is not a tar archive; decompress it, or pack it as .tar.gz."
                )
            return "tar" if _is_tar_header(head) else None
    except OSError as exc:
        raise ArtifactError(f"{name}: cannot be read ({exc.strerror}).") from None


def open_source(path: Path, *, name: str, limits: Limits) -> ArtifactSource:
    if path.is_dir():
        return DirectorySource(path, name=name, limits=limits)
    kind = archive_kind(path, name=name)
    if kind == "zip":
        return ZipSource(path, name=name, limits=limits)
    if kind == "tar":
        return TarSource(path, name=name, limits=limits)
    raise ArtifactError(f"{name}: not a directory, a tar archive or a zip archive.")


def safe_path(raw: str) -> str | None:
    """The member's path made relative and "/"-separated ("" for the top directory itself);
    None if it could point outside the artifact."""
    if "\x00" in raw or "\\" in raw:
        return None
    if raw.startswith("/") or (len(raw) > 1 and raw[0].isalpha() and raw[1] == ":"):
        return None
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        return None
    return "/".join(parts)


def plausible_mtime(value: float | None) -> float | None:
    now = dt.datetime.now(dt.UTC).timestamp()
    if value is None or not EARLIEST_PLAUSIBLE <= value <= now + 86_400:
        return None
    return float(value)


# --- directories ----------------------------------------------------------------------------------


class DirectorySource:
    """An unpacked artifact. Links are not followed and only regular files are opened.

    File times are not used: copying a directory resets them, so they say when
    it was copied rather than captured.
    """

    kind = "directory"

    def __init__(self, root: Path, *, name: str, limits: Limits) -> None:
        self.root, self.name, self.limits = root, name, limits

    def listing(self) -> Listing:
        listing = Listing()
        seen = 0
        stack = [""]
        while stack:
            relative = stack.pop()
            try:
                entries = sorted(os.scandir(self.root / relative), key=lambda e: e.name)
            except OSError as exc:
                raise ArtifactError(f"{self.name}/{relative}: cannot be read ({exc.strerror}).") from None
            for entry in entries:
                seen += 1
                if seen > self.limits.max_members:
                    raise ArtifactError(
                        f"{self.name}: more than {self.limits.max_members:,} files and directories; refused."
                    )
                if entry.name.startswith("."):
                    continue  # .git and the like
                path = f"{relative}/{entry.name}" if relative else entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    stack.append(path)
                elif stat.S_ISREG(mode):
                    size = entry.stat(follow_symlinks=False).st_size
                    listing.members.append(Member(path, size, None, len(listing.members)))
                else:
                    listing.refused.append(f"{self.name}/{path}: {_file_type(mode)}, not read")
        return listing

    def read(self, wanted: list[Member]) -> Iterator[tuple[Member, BinaryReadable]]:
        for member in wanted:
            full = self.root / member.path
            try:
                # O_NOFOLLOW: a file replaced by a link since it was listed is not followed;
                # O_NONBLOCK: nor is a FIFO waited on.
                fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError as exc:
                raise ArtifactError(f"{self.name}/{member.path}: cannot be read ({exc.strerror}).") from None
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise ArtifactError(f"{self.name}/{member.path}: is no longer a regular file.")
            with os.fdopen(fd, "rb") as fh:
                yield member, fh


# --- tar --------------------------------------------------------------------------------------------


class TarSource:
    """A tar archive, read front to back twice (listing, then reading); never seeked, never extracted."""

    kind = "tar archive"

    def __init__(self, path: Path, *, name: str, limits: Limits) -> None:
        self.path, self.name, self.limits = path, name, limits

    def listing(self) -> Listing:
        listing = Listing()
        for position, info in enumerate(self._entries()):
            if position >= self.limits.max_members:
                raise ArtifactError(f"{self.name}: more than {self.limits.max_members:,} entries; refused.")
            path = safe_path(info.name)
            if path is None:
                listing.refused.append(f"{self.name}: {info.name!r} is an unsafe path (absolute, or with ..), not read")
            elif not path:
                continue
            elif info.isfile():
                listing.members.append(Member(path, info.size, plausible_mtime(info.mtime), position))
            elif not info.isdir():
                listing.refused.append(f"{self.name}:{path}: {_tar_type(info)}, not read")
        return listing

    def read(self, wanted: list[Member]) -> Iterator[tuple[Member, BinaryReadable]]:
        by_position = {member.position: member for member in wanted}
        if not by_position:
            return
        last = max(by_position)
        with self._open() as (tar, counter):
            for position, info in enumerate(_safe_iter(tar, self.name)):
                member = by_position.get(position)
                if member is not None and info.isfile():
                    stream = tar.extractfile(info)
                    if stream is not None:
                        counter.current = member.path
                        yield member, stream
                if position >= last:
                    return

    def _entries(self) -> Iterator[tarfile.TarInfo]:
        with self._open() as (tar, _):
            yield from _safe_iter(tar, self.name)

    def _open(self) -> _TarOpen:
        return _TarOpen(self)


class _TarOpen:
    """The archive opened for one front-to-back pass, its decompressed bytes counted."""

    def __init__(self, source: TarSource) -> None:
        self.source = source
        self._raw: IO[bytes] | None = None

    def __enter__(self) -> tuple[tarfile.TarFile, _CountingReader]:
        source = self.source
        try:
            self._raw = raw = source.path.open("rb")
            head = raw.read(6)
            raw.seek(0)
            inner = _decompressor(head, raw) if head.startswith((GZIP_MAGIC, XZ_MAGIC, BZIP2_MAGIC)) else raw
            # Damage anywhere in a compressed tar stream leaves the rest unreadable: it is the archive's error.
            counter = _CountingReader(
                inner, name=source.name, limits=source.limits, packed=source.path.stat().st_size, damage=_ArchiveDamage
            )
            tar = tarfile.open(fileobj=counter, mode="r|")  # type: ignore[call-overload]
        except (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
            self.__exit__()
            raise ArtifactError(f"{source.name}: not a readable tar archive ({exc}).") from None
        except _ArchiveDamage as exc:
            self.__exit__()
            detail = str(exc).split(": damaged data ", 1)[-1].strip("().")
            raise ArtifactError(f"{source.name}: the archive is damaged or truncated ({detail}).") from None
        except BaseException:
            self.__exit__()
            raise
        return tar, counter

    def __exit__(self, *exc: object) -> None:
        if self._raw is not None:
            self._raw.close()


def _safe_iter(tar: tarfile.TarFile, name: str) -> Iterator[tarfile.TarInfo]:
    """The archive's entries; a damaged or truncated archive is an error naming the last good entry."""
    last = ""
    while True:
        try:
            info = tar.next()
        except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError, _ArchiveDamage) as exc:
            after = f" after {last}" if last else ""
            detail = str(exc).split(": damaged data ", 1)[-1].strip("().") if isinstance(exc, _ArchiveDamage) else exc
            raise ArtifactError(f"{name}: the archive is damaged or truncated{after} ({detail}).") from None
        if info is None:
            return
        last = info.name
        yield info


# --- zip --------------------------------------------------------------------------------------------


class ZipSource:
    """A zip archive: members are read from their own offsets, each through a counted stream."""

    kind = "zip archive"

    def __init__(self, path: Path, *, name: str, limits: Limits) -> None:
        self.path, self.name, self.limits = path, name, limits

    def listing(self) -> Listing:
        listing = Listing()
        with self._open() as archive:
            infos = archive.infolist()
            if len(infos) > self.limits.max_members:
                raise ArtifactError(f"{self.name}: more than {self.limits.max_members:,} entries; refused.")
            _refuse_overlaps(infos, self.name)
            for info in infos:
                path = safe_path(info.filename)
                mode = info.external_attr >> 16
                if path is None:
                    listing.refused.append(
                        f"{self.name}: {info.filename!r} is an unsafe path (absolute, or with ..), not read"
                    )
                elif not path or info.is_dir():
                    continue
                elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):  # zips written on Unix record the file type
                    listing.refused.append(f"{self.name}:{path}: {_file_type(mode)}, not read")
                elif info.flag_bits & 0x1:
                    listing.refused.append(f"{self.name}:{path}: encrypted, not read")
                else:
                    listing.members.append(Member(path, info.file_size, _zip_mtime(info), info.header_offset))
        return listing

    def read(self, wanted: list[Member]) -> Iterator[tuple[Member, BinaryReadable]]:
        packed = self.path.stat().st_size
        with self._open() as archive:
            infos = {info.header_offset: info for info in archive.infolist()}
            total = _CountingReader(None, name=self.name, limits=self.limits, packed=packed)
            for member in sorted(wanted, key=lambda m: m.position):
                info = infos[member.position]
                try:
                    stream = archive.open(info)
                except (NotImplementedError, zipfile.BadZipFile, RuntimeError, OSError) as exc:
                    # Raised when read, so that this member is skipped and the others still read.
                    yield member, _Unreadable(f"{self.name}:{member.path}: cannot be read ({exc}).")
                    continue
                own = _CountingReader(stream, name=self.name, limits=self.limits, packed=info.compress_size)
                own.current = total.current = member.path
                own.parent = total
                with stream:
                    yield member, own

    def _open(self) -> zipfile.ZipFile:
        try:
            return zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise ArtifactError(f"{self.name}: not a readable zip archive ({exc}).") from None


class _MemberError(SnapshotError):
    """One member cannot be read; the others can."""


class _Unreadable:
    """A member that could not be opened: reading it raises why."""

    def __init__(self, message: str) -> None:
        self.message = message

    def read(self, size: int = -1) -> bytes:
        raise _MemberError(self.message)


def _refuse_overlaps(infos: list[zipfile.ZipInfo], name: str) -> None:
    """Refuse entries whose data overlap: one stored stream listed many times expands without end."""
    ordered = sorted(infos, key=lambda info: info.header_offset)
    for current, following in pairwise(ordered):
        # The local header is at least 30 bytes plus the name; its extra field can only make it longer.
        end = current.header_offset + 30 + len(current.orig_filename.encode()) + current.compress_size
        if end > following.header_offset:
            raise ArtifactError(
                f"{name}: entries {current.filename!r} and {following.filename!r} overlap, "
                "which only a zip bomb does; refused."
            )


def _zip_mtime(info: zipfile.ZipInfo) -> float | None:
    """The UTC modification time from the "extended timestamp" extra field (0x5455), if present.

    The classic zip date is local time with no zone, so it cannot place a capture in time.
    """
    extra = info.extra
    offset = 0
    while offset + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, offset)
        body = extra[offset + 4 : offset + 4 + size]
        if tag == 0x5455 and len(body) >= 5 and body[0] & 0x1:
            return plausible_mtime(struct.unpack_from("<i", body, 1)[0])
        offset += 4 + size
    return None


# --- counting what comes out of decompressors ----------------------------------------------------------


class _CountingReader:
    """Counts decompressed bytes against the limits: the artifact's total, its expansion, one member's size."""

    def __init__(
        self,
        inner: BinaryReadable | None,
        *,
        name: str,
        limits: Limits,
        packed: int,
        damage: type[SnapshotError] | None = None,
    ) -> None:
        self.inner = inner
        self.damage = damage or _MemberError
        self.name = name
        self.limits = limits
        self.packed = max(packed, 1)
        self.count = 0
        self.current = ""  # the member being read, for messages
        self.parent: _CountingReader | None = None

    def read(self, size: int = -1) -> bytes:
        assert self.inner is not None
        try:
            data = self.inner.read(size)
        except (OSError, EOFError, zlib.error, lzma.LZMAError, zipfile.BadZipFile) as exc:
            where = f"{self.name}:{self.current}" if self.current else self.name
            raise self.damage(f"{where}: damaged data ({exc}).") from None
        self.add(len(data))
        return data

    def add(self, size: int) -> None:
        self.count += size
        if self.parent is not None:
            self.parent.add(size)
            if self.count > self.limits.max_member_bytes:
                raise ArtifactError(
                    f"{self.name}:{self.current}: expands past {self.limits.max_member_bytes:,} bytes; refused."
                )
        elif self.count > self.limits.max_bytes:
            raise ArtifactError(
                f"{self.name}: expands past {self.limits.max_bytes:,} bytes (SNAPSHOT_MAX_BYTES); refused. "
                "Raise the limit if the artifact is really that large."
            )
        if self.count > RATIO_FLOOR and self.count > self.limits.max_ratio * self.packed:
            what = f"{self.name}:{self.current}" if self.parent is not None else self.name
            raise ArtifactError(
                f"{what}: expands more than {self.limits.max_ratio} times its compressed size, "
                "as decompression bombs do; refused."
            )


def _decompressor(head: bytes, fh: IO[bytes]) -> gzip.GzipFile | lzma.LZMAFile | bz2.BZ2File:
    if head.startswith(GZIP_MAGIC):
        return gzip.GzipFile(fileobj=fh, mode="rb")
    if head.startswith(XZ_MAGIC):
        return lzma.LZMAFile(fh)
    return bz2.BZ2File(fh)


def _is_tar_header(block: bytes) -> bool:
    if len(block) < 512:
        return False
    if block[:512] == bytes(512):
        return True  # the end-of-archive block: an empty archive
    try:
        tarfile.TarInfo.frombuf(block[:512], "utf-8", "surrogateescape")
    except tarfile.HeaderError:
        return False
    return True


def _tar_type(info: tarfile.TarInfo) -> str:
    if info.issym():
        return f"a symbolic link to {info.linkname!r}"
    if info.islnk():
        return f"a hard link to {info.linkname!r}"
    if info.ischr() or info.isblk():
        return "a device file"
    if info.isfifo():
        return "a FIFO"
    return f"an entry of tar type {info.type!r}"


def _file_type(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def member_display(source_name: str, member: Member, kind: str) -> str:
    """How messages name a member: `dump/ns/pods.json` in a directory, `dump.tar.gz:ns/pods.json` in an archive."""
    separator = "/" if kind == "directory" else ":"
    return f"{source_name}{separator}{PurePosixPath(member.path)}"
