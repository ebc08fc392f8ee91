#!/usr/bin/env python3
"""A case-insensitive view of a directory over FUSE, for the tests: every name is looked up
ignoring case by Unicode case folding (as on a casefold ext4 directory), and listed as stored.
Usage: casefold_fs.py BACKING MOUNTPOINT  (runs in the foreground until unmounted)."""
import errno
import os
import sys

from fuse import FUSE, FuseOSError, Operations


class CaseFold(Operations):
    def __init__(self, root):
        self.root = root

    def _real(self, path):
        real = self.root
        for part in [p for p in path.split("/") if p]:
            exact = os.path.join(real, part)
            if os.path.lexists(exact):
                real = exact
                continue
            try:
                names = os.listdir(real)
            except OSError:
                raise FuseOSError(errno.ENOENT)
            match = [n for n in names if n.casefold() == part.casefold()]
            real = os.path.join(real, match[0] if match else part)
        return real

    def getattr(self, path, fh=None):
        try:
            st = os.lstat(self._real(path))
        except OSError as e:
            raise FuseOSError(e.errno)
        keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime", "st_mtime",
                "st_ctime", "st_ino")
        return {k: getattr(st, k) for k in keys}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._real(path))

    def readlink(self, path):
        return os.readlink(self._real(path))

    def access(self, path, mode):
        if not os.access(self._real(path), mode):
            raise FuseOSError(errno.EACCES)

    def open(self, path, flags):
        return os.open(self._real(path), flags)

    def read(self, path, size, offset, fh):
        os.lseek(fh, offset, os.SEEK_SET)
        return os.read(fh, size)

    def release(self, path, fh):
        os.close(fh)

    def statfs(self, path):
        st = os.statvfs(self._real(path))
        return {k: getattr(st, k) for k in ("f_bsize", "f_blocks", "f_bavail", "f_bfree",
                                            "f_files", "f_ffree", "f_namemax")}


if __name__ == "__main__":
    FUSE(CaseFold(sys.argv[1]), sys.argv[2], foreground=True, allow_other=True,
         use_ino=True, ro=True)
