/* SPDX-License-Identifier: MIT */
/* secfile.c: the one reader of files that hold secrets. */

/*
 * Password files, the master keyring, import files: each read whole,
 * bounded, into locked memory, wiped after use.  The strictest of the
 * readers this replaces set the rules: O_NONBLOCK (no FIFO can hang a
 * KDC worker or ykadmin), a regular file only, a size bound checked
 * before and after reading (a file that grows or shrinks meanwhile is
 * refused, never half read).
 */

#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "secfile.h"
#include "secmem.h"

krb5_error_code
yk_secfile_read(const char *path, size_t max, char **buf_out,
                size_t *len_out, struct stat *st_out)
{
    krb5_error_code ret = 0;
    struct stat sb;
    char *buf = NULL, extra;
    size_t len = 0, size = 0;
    ssize_t n;
    int fd;

    *buf_out = NULL;
    *len_out = 0;
    if (path == NULL)
        return EINVAL;
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    if (fstat(fd, &sb) != 0) {
        ret = errno;
        goto cleanup;
    }
    if (st_out != NULL)
        *st_out = sb;
    if (!S_ISREG(sb.st_mode)) {
        ret = EINVAL;
        goto cleanup;
    }
    if (sb.st_size < 0 || (unsigned long long)sb.st_size > max) {
        ret = EFBIG;
        goto cleanup;
    }
    size = (size_t)sb.st_size;
    buf = malloc(size + 1);
    if (buf == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    (void)mlock(buf, size + 1);
    while (len < size) {
        n = read(fd, buf + len, size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            ret = errno;
            goto cleanup;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    /* Shorter than its size, or one byte more: it changed meanwhile. */
    do {
        n = len == size ? read(fd, &extra, 1) : 1;
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        ret = errno;
        goto cleanup;
    }
    if (len != size || n != 0) {
        ret = EAGAIN;
        goto cleanup;
    }
    buf[len] = '\0';
    *buf_out = buf;
    *len_out = len;
    buf = NULL;

cleanup:
    yk_secfile_free(buf, size);
    close(fd);
    return ret;
}

void
yk_secfile_free(char *buf, size_t len)
{
    if (buf == NULL)
        return;
    yk_zap(buf, len + 1);
    (void)munlock(buf, len + 1);
    free(buf);
}
