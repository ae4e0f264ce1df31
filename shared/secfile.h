/* SPDX-License-Identifier: MIT */
/* secfile.h: the one reader of files that hold secrets. */
#ifndef YK_SECFILE_H
#define YK_SECFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <krb5.h>

/*
 * Read the whole file at path into a buffer in locked memory (mlock, as
 * far as the limits allow), NUL-terminated: *buf_out (len bytes in
 * *len_out), to give back with yk_secfile_free.  Opened without
 * following a controlling terminal and without blocking (a FIFO planted
 * at path never hangs the caller), then fstat'd: *st_out (may be NULL)
 * is what was opened, for the caller's mode and owner checks, set as
 * soon as fstat succeeded (on EINVAL and EFBIG too).  Errors:
 * errno's (open, read), EINVAL for anything but a regular file, EFBIG
 * for a file over max bytes, EAGAIN for one that changed size while
 * being read.  Nothing is left behind on failure.
 */
krb5_error_code yk_secfile_read(const char *path, size_t max,
                                char **buf_out, size_t *len_out,
                                struct stat *st_out);

/* Wipe, unlock and free a buffer of yk_secfile_read (len: its length as
 * returned); NULL is accepted. */
void yk_secfile_free(char *buf, size_t len);

#endif /* YK_SECFILE_H */
