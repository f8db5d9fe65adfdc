#ifndef SLUICE_SHIMS_H
#define SLUICE_SHIMS_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * GNU extensions that Swift's Glibc module does not expose (it is built without _GNU_SOURCE,
 * and defining _GNU_SOURCE here breaks the build). Prototypes as in the Linux man pages; the
 * functions are in the C library Sluice links anyway.
 */

/* pipe2(2): a pipe whose ends are created with the given flags, atomically. */
int pipe2(int pipefd[2], int flags);

/* renameat2(2): rename with flags. */
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/* signalfd(2): a descriptor that reads the signals of `mask` that are pending (and blocked). */
int signalfd(int fd, const sigset_t *mask, int flags);

/* syncfs(2): writes back and waits for everything on the file system that holds `fd`. */
int syncfs(int fd);

/* sync_file_range(2): writes back and waits for a range of a file's data, with the flags below
   (from <fcntl.h> under _GNU_SOURCE); no metadata, no cache flush. */
int sync_file_range(int fd, long long offset, long long nbytes, unsigned int flags);
static const unsigned int CSluiceShims_SYNC_FILE_RANGE_WAIT_BEFORE = 1u;
static const unsigned int CSluiceShims_SYNC_FILE_RANGE_WRITE = 2u;
static const unsigned int CSluiceShims_SYNC_FILE_RANGE_WAIT_AFTER = 4u;

/* fcntl(2)'s F_SETLEASE (F_LINUX_SPECIFIC_BASE + 0, from <fcntl.h> under _GNU_SOURCE): a lease
   of type F_RDLCK, F_WRLCK or F_UNLCK on an open file. */
static const int CSluiceShims_F_SETLEASE = 1024;
/* F_GETLEASE (F_LINUX_SPECIFIC_BASE + 1): the lease held, F_UNLCK once its break has begun. */
static const int CSluiceShims_F_GETLEASE = 1025;
/* F_SETSIG (10): the signal sent when the descriptor's lease is to be broken (0: SIGIO). */
static const int CSluiceShims_F_SETSIG = 10;

/* fgetxattr(2), fsetxattr(2), fremovexattr(2), getxattr(2): extended attributes (the
 * access ACL is "system.posix_acl_access", acl(5)). */
ssize_t fgetxattr(int fd, const char *name, void *value, size_t size);
int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags);
int fremovexattr(int fd, const char *name);
ssize_t getxattr(const char *path, const char *name, void *value, size_t size);
/* flistxattr(2), llistxattr(2), lgetxattr(2), lsetxattr(2): the names of a file's extended
 * attributes (NUL-separated), and the calls on a symbolic link itself. */
ssize_t flistxattr(int fd, char *list, size_t size);
ssize_t llistxattr(const char *path, char *list, size_t size);
ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size);
int lsetxattr(const char *path, const char *name, const void *value, size_t size, int flags);
/* lremovexattr(2): removes an extended attribute of a path, not following a symbolic link. */
int lremovexattr(const char *path, const char *name);

/* sched_getaffinity(2): the set of CPUs the thread `pid` (0: the calling thread) may run on. */
int sched_getaffinity(pid_t pid, size_t cpusetsize, cpu_set_t *mask);

/* pthread_setname_np(3): names a thread (at most 15 bytes and the NUL). */
int pthread_setname_np(pthread_t thread, const char *name);

/* copy_file_range(2): copies `len` bytes between two descriptors inside the kernel, at the
 * offsets given (which it advances) or at the descriptors' own offsets for NULL. */
ssize_t copy_file_range(int fd_in, long *off_in, int fd_out, long *off_out, size_t len, unsigned int flags);

/* ioctl_ficlone(2): FICLONE, _IOW(0x94, 9, int) in <linux/fs.h>: the destination shares all of
 * the source's extents. ioctl(2) is variadic, which Swift cannot call. */
static inline int CSluiceShims_ficlone(int destination, int source) {
    return ioctl(destination, 0x40049409ul, source);
}

/* fstatfs(2)'s f_type: the file system's magic number (<linux/magic.h>); -1 and errno on failure. */
static inline long long CSluiceShims_fstatfs_type(int fd) {
    struct statfs buffer;
    if (fstatfs(fd, &buffer) != 0) return -1;
    return (long long)(unsigned int)buffer.f_type;
}

/* FS_IOC_GETFLAGS, _IOR('f', 1, long) in <linux/fs.h>, which reads an int (ioctl_iflags(2)): the
 * inode flags chattr(1) sets. 0 and the flags in *flags, or -1 and errno. */
static inline int CSluiceShims_inode_flags(int fd, unsigned int *flags) {
    int value = 0;
    if (ioctl(fd, 0x80086601ul, &value) != 0) return -1;
    *flags = (unsigned int)value;
    return 0;
}
/* <linux/fs.h>: FS_IMMUTABLE_FL (chattr +i) and FS_APPEND_FL (chattr +a). */
static const unsigned int CSluiceShims_FS_IMMUTABLE_FL = 0x10u;
static const unsigned int CSluiceShims_FS_APPEND_FL = 0x20u;

/* fchmodat2(2) (Linux 6.6, number 452 on every architecture) with AT_SYMLINK_NOFOLLOW: the
 * bits of `name` itself, never of what a symbolic link there points to (EOPNOTSUPP for a link).
 * Older kernels: the C library's fchmodat(AT_SYMLINK_NOFOLLOW), which does the same through an
 * O_PATH descriptor and /proc. syscall(2) is variadic, which Swift cannot call. */
static inline int CSluiceShims_fchmodat_nofollow(int directory, const char *name, mode_t mode) {
    long result = syscall(452, directory, name, mode, 0x100);
    if (result == -1 && errno == ENOSYS) return fchmodat(directory, name, mode, 0x100);
    return (int)result;
}

/* statx(2)'s birth time (STATX_BTIME, 0x800): 0 and the time in *seconds and *nanoseconds, 1
 * when the file system keeps none, -1 and errno on failure. The buffer is the kernel's struct
 * statx (256 bytes; stx_mask at 0, stx_btime at 80), so no header beyond glibc's is needed. */
int statx(int dirfd, const char *pathname, int flags, unsigned int mask, void *statxbuf);
static inline int CSluiceShims_birth_time(int fd, long long *seconds, unsigned int *nanoseconds) {
    unsigned char buffer[256] __attribute__((aligned(8)));
    if (statx(fd, "", 0x1000 /* AT_EMPTY_PATH */, 0x800u, buffer) != 0) return -1;
    if ((*(unsigned int *)buffer & 0x800u) == 0) return 1;
    *seconds = *(long long *)(buffer + 80);
    *nanoseconds = *(unsigned int *)(buffer + 88);
    return 0;
}

/* Flags and values from <fcntl.h> and <linux/fs.h>. */
/* O_TMPFILE (__O_TMPFILE | O_DIRECTORY): an unnamed file in the directory opened, which linkat(2)
 * can name later unless O_EXCL was given. */
static const int CSluiceShims_O_TMPFILE = 020200000;
static const int CSluiceShims_AT_FDCWD = -100;
static const int CSluiceShims_AT_SYMLINK_NOFOLLOW = 0x100;
static const int CSluiceShims_AT_REMOVEDIR = 0x200;
static const int CSluiceShims_AT_SYMLINK_FOLLOW = 0x400;
static const int CSluiceShims_AT_EMPTY_PATH = 0x1000;
static const unsigned int CSluiceShims_RENAME_NOREPLACE = 1u;
/* <unistd.h> (GNU): lseek(2)'s whence for the next data and the next hole at or after an offset. */
static const int CSluiceShims_SEEK_DATA = 3;
static const int CSluiceShims_SEEK_HOLE = 4;
/* <sys/signalfd.h>: SFD_NONBLOCK is O_NONBLOCK, SFD_CLOEXEC is O_CLOEXEC. */
static const int CSluiceShims_SFD_NONBLOCK = 04000;
static const int CSluiceShims_SFD_CLOEXEC = 02000000;
/* <sys/stat.h>: the tv_nsec that tells utimensat(2) and futimens(2) to leave a time as it is. */
static const long CSluiceShims_UTIME_OMIT = (1l << 30) - 2l;

#endif
