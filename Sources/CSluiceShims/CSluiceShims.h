#ifndef SLUICE_SHIMS_H
#define SLUICE_SHIMS_H

/*
 * GNU extensions that Swift's Glibc module does not expose (it is built without _GNU_SOURCE,
 * and defining _GNU_SOURCE here breaks the build). Prototypes as in the Linux man pages; the
 * functions are in the C library Sluice links anyway.
 */

/* pipe2(2): a pipe whose ends are created with the given flags, atomically. */
int pipe2(int pipefd[2], int flags);

/* renameat2(2): rename with flags. */
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);

/* Flags and values from <fcntl.h> and <linux/fs.h>. */
static const int CSluiceShims_AT_FDCWD = -100;
static const unsigned int CSluiceShims_RENAME_NOREPLACE = 1u;

#endif
