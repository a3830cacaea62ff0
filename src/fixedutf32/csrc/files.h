/* Chunk files read without the GIL: many small ones under an open directory,
 * or a range of one already open (_files.pxi checks each block as it lands).
 *
 * fu32_open_at does in C the per-file work of
 * fixedutf32._source.files.ChunkDirectories.read (open without following a
 * link, a regular file of exactly the size expected), so that a run of small
 * files costs a few system calls each and no Python.  Anything out of the
 * ordinary is FU32_FILE_UNUSUAL, for the Python reader to look at the careful
 * way and say what is wrong.
 */
#ifndef FIXEDUTF32_FILES_H
#define FIXEDUTF32_FILES_H

#include <stddef.h>
#include <stdint.h>

enum { FU32_FILE_READ = 0, FU32_FILE_MISSING = 1, FU32_FILE_UNUSUAL = 2 };

#if defined(_WIN32)

/* No openat nor pread: every file goes the careful way (ChunkDirectories.usable is False). */
static inline int fu32_open_at(int dir_fd, const char *name, size_t nbytes, int *fd)
{
    (void)dir_fd; (void)name; (void)nbytes;
    *fd = -1;
    return FU32_FILE_UNUSUAL;
}
static inline size_t fu32_pread_full(int fd, uint8_t *out, size_t nbytes, uint64_t offset)
{
    (void)fd; (void)out; (void)nbytes; (void)offset;
    return 0;
}
static inline void fu32_close(int fd) { (void)fd; }

#else

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0  /* then the Python layer does not come here (ChunkDirectories.usable) */
#endif

/* Open ``name`` under ``dir_fd``: FU32_FILE_READ with *fd set when it is a regular file of
 * exactly ``nbytes`` bytes; else MISSING or UNUSUAL, nothing left open. */
static inline int fu32_open_at(int dir_fd, const char *name, size_t nbytes, int *fd)
{
    /* O_NONBLOCK: a FIFO does not block the open (then it is not a regular file). */
    int opened = openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
    struct stat info;
    *fd = -1;
    if (opened < 0)
        return (errno == ENOENT || errno == ENOTDIR || errno == EISDIR) ? FU32_FILE_MISSING
                                                                         : FU32_FILE_UNUSUAL;
    if (fstat(opened, &info) != 0 || !S_ISREG(info.st_mode) || (uint64_t)info.st_size != nbytes) {
        close(opened);
        return FU32_FILE_UNUSUAL;
    }
    *fd = opened;
    return FU32_FILE_READ;
}

/* Bytes read of ``nbytes`` from ``offset``: fewer on an error or at the end of the file. */
static inline size_t fu32_pread_full(int fd, uint8_t *out, size_t nbytes, uint64_t offset)
{
    size_t done = 0;
    while (done < nbytes) {
        ssize_t got = pread(fd, out + done, nbytes - done, (off_t)(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        done += (size_t)got;
    }
    return done;
}

static inline void fu32_close(int fd) { close(fd); }

#endif
#endif
