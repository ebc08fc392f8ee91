# case-insensitive, case-preserving passthrough (like a macOS/Windows share)
import os, sys, errno
from fuse import FUSE, Operations, FuseOSError
class CI(Operations):
    def __init__(s, root): s.root = root
    def _r(s, path, create=False):
        cur = s.root
        parts = [p for p in path.split('/') if p]
        for i, p in enumerate(parts):
            cand = os.path.join(cur, p)
            if not os.path.lexists(cand):
                try:
                    m = [n for n in os.listdir(cur) if n.lower() == p.lower()]
                except OSError: m = []
                if m: cand = os.path.join(cur, m[0])
            cur = cand
        return cur
    def access(s, p, mode):
        if not os.access(s._r(p), mode, follow_symlinks=False): raise FuseOSError(errno.EACCES)
    def getattr(s, p, fh=None):
        try: st = os.lstat(s._r(p))
        except OSError as e: raise FuseOSError(e.errno)
        return {k: getattr(st, k) for k in ('st_atime','st_ctime','st_gid','st_mode','st_mtime','st_nlink','st_size','st_uid','st_ino')}
    def readdir(s, p, fh): return ['.', '..'] + os.listdir(s._r(p))
    def readlink(s, p): return os.readlink(s._r(p))
    def mknod(s, p, mode, dev): os.mknod(s._r(p), mode, dev)
    def rmdir(s, p): os.rmdir(s._r(p))
    def mkdir(s, p, mode): os.mkdir(s._r(p), mode)
    def statfs(s, p):
        v = os.statvfs(s._r(p)); return {k: getattr(v, k) for k in ('f_bavail','f_bfree','f_blocks','f_bsize','f_favail','f_ffree','f_files','f_flag','f_frsize','f_namemax')}
    def unlink(s, p): os.unlink(s._r(p))
    def symlink(s, name, target): os.symlink(target, s._r(name))
    def rename(s, old, new): os.rename(s._r(old), s._r(new))
    def link(s, target, name): os.link(s._r(name), s._r(target))
    def chmod(s, p, mode): os.chmod(s._r(p), mode, follow_symlinks=False) if not os.path.islink(s._r(p)) else None
    def chown(s, p, uid, gid): os.lchown(s._r(p), uid, gid)
    def utimens(s, p, times=None): os.utime(s._r(p), times, follow_symlinks=False)
    def open(s, p, flags): return os.open(s._r(p), flags)
    def create(s, p, mode, fi=None): return os.open(s._r(p), os.O_WRONLY | os.O_CREAT, mode)
    def read(s, p, n, off, fh): os.lseek(fh, off, 0); return os.read(fh, n)
    def write(s, p, buf, off, fh): os.lseek(fh, off, 0); return os.write(fh, buf)
    def truncate(s, p, length, fh=None):
        with open(s._r(p), 'r+') as f: f.truncate(length)
    def flush(s, p, fh): return 0
    def release(s, p, fh): return os.close(fh)
    def fsync(s, p, ds, fh): return os.fsync(fh)
if __name__ == '__main__':
    FUSE(CI(sys.argv[1]), sys.argv[2], foreground=True, nothreads=True, allow_other=True, use_ino=True)
