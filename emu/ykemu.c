/* SPDX-License-Identifier: MIT */
/* ykemu.c: command line of the software YubiKey (tests and the demo). */

/*
 * ykemu FILE                  print the next OTP, save the advanced state
 * ykemu --replug FILE         simulate a power cycle (saved)
 * ykemu --init FILE [--public-id MODHEX] [--key-stdin]
 * ykemu --public-id FILE      print the public id (modhex)
 * ykemu --help
 *
 * Exit status: 0 success, 1 error, 2 usage error.  Read-modify-write
 * commands hold an exclusive flock on FILE's directory, so that two ykemu
 * runs on one token never hand out the same counter.  The state is saved
 * before an OTP is printed: a printed OTP is never produced again.
 */

#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <gcrypt.h>

#include "emu.h"
#include "errors.h"
#include "otp.h"
#include "secmem.h"

#define EXIT_USAGE 2
#define STDIN_MAX 512                /* "KEYHEX PRIVIDHEX" with slack */
#define DEFAULT_PUBID_LEN 6          /* like a factory YubiKey */

static const char usage_text[] =
    "usage: ykemu FILE                print the next OTP and save the state\n"
    "       ykemu --replug FILE       simulate a power cycle (saved)\n"
    "       ykemu --init FILE [--public-id MODHEX] [--key-stdin]\n"
    "                                 create a new token state (never\n"
    "                                 overwrites); --key-stdin reads\n"
    "                                 \"AESKEYHEX PRIVIDHEX\" (32 and 12\n"
    "                                 hex) from standard input; the\n"
    "                                 default public id is cc + 10\n"
    "                                 random modhex characters\n"
    "       ykemu --public-id FILE    print the public id (modhex)\n"
    "       ykemu --help\n"
    "FILE holds the token's AES key: for tests and demos only.\n";

/* Print the usage text to stderr and return the usage exit status. */
static int
usage_error(const char *why)
{
    if (why != NULL)
        fprintf(stderr, "ykemu: %s\n", why);
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}

/* Report an error about path and return the error exit status. */
static int
fail(const char *path, const char *what, krb5_error_code code)
{
    fprintf(stderr, "ykemu: %s: %s: %s\n", path, what, yk_strerror(code));
    return EXIT_FAILURE;
}

/* Take an exclusive flock on the directory holding path; *fd_out gets the
 * descriptor to close (which releases the lock). */
static krb5_error_code
lock_dir(const char *path, int *fd_out)
{
    krb5_error_code ret = 0;
    const char *slash = strrchr(path, '/');
    char *dir = NULL;
    int fd = -1;

    if (slash == NULL)
        dir = strdup(".");
    else if (slash == path)
        dir = strdup("/");
    else
        dir = strndup(path, (size_t)(slash - path));
    if (dir == NULL)
        return ENOMEM;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        ret = errno;
        goto cleanup;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            ret = errno;
            goto cleanup;
        }
    }
    *fd_out = fd;
    fd = -1;

cleanup:
    if (fd >= 0)
        close(fd);
    free(dir);
    return ret;
}

/* Report a failed load of path; a YK_ERR_CONFIG from yk_emu_load means a
 * malformed state file, which yk_strerror would call a configuration. */
static int
fail_load(const char *path, krb5_error_code code)
{
    if (code != YK_ERR_CONFIG)
        return fail(path, "cannot load the token state", code);
    fprintf(stderr, "ykemu: %s: cannot load the token state: malformed "
            "state file (a bad line, an unknown, repeated or missing key, "
            "or inconsistent counters)\n", path);
    return EXIT_FAILURE;
}

/* ykemu FILE: advance the token, save it, then print the OTP. */
static int
cmd_next(const char *path)
{
    krb5_error_code ret;
    yk_emu emu;
    char otp[YK_OTP_MAX_LEN + 1];
    int lock = -1, status = EXIT_FAILURE;

    memset(&emu, 0, sizeof(emu));
    ret = lock_dir(path, &lock);
    if (ret) {
        status = fail(path, "cannot lock its directory", ret);
        goto cleanup;
    }
    ret = yk_emu_load(path, &emu);
    if (ret) {
        status = fail_load(path, ret);
        goto cleanup;
    }
    ret = yk_emu_next(&emu, otp);
    if (ret) {
        status = fail(path, "no OTP", ret);
        goto cleanup;
    }
    ret = yk_emu_save(&emu, path);
    if (ret) {
        status = fail(path, "cannot save the token state", ret);
        goto cleanup;
    }
    if (printf("%s\n", otp) < 0 || fflush(stdout) != 0) {
        status = fail("standard output", "cannot write the OTP", errno);
        goto cleanup;
    }
    status = EXIT_SUCCESS;

cleanup:
    if (lock >= 0)
        close(lock);
    yk_emu_clear(&emu);
    return status;
}

/* ykemu --replug FILE: simulate a power cycle and save. */
static int
cmd_replug(const char *path)
{
    krb5_error_code ret;
    yk_emu emu;
    int lock = -1, status = EXIT_FAILURE;

    memset(&emu, 0, sizeof(emu));
    ret = lock_dir(path, &lock);
    if (ret) {
        status = fail(path, "cannot lock its directory", ret);
        goto cleanup;
    }
    ret = yk_emu_load(path, &emu);
    if (ret) {
        status = fail_load(path, ret);
        goto cleanup;
    }
    yk_emu_replug(&emu);
    ret = yk_emu_save(&emu, path);
    if (ret) {
        status = fail(path, "cannot save the token state", ret);
        goto cleanup;
    }
    status = EXIT_SUCCESS;

cleanup:
    if (lock >= 0)
        close(lock);
    yk_emu_clear(&emu);
    return status;
}

/* ykemu --public-id FILE: print the token's public id in modhex. */
static int
cmd_pubid(const char *path)
{
    krb5_error_code ret;
    yk_emu emu;
    char mh[YK_PUBID_MODHEX_MAX + 1];
    int status = EXIT_FAILURE;

    memset(&emu, 0, sizeof(emu));
    ret = yk_emu_load(path, &emu);
    if (ret) {
        status = fail_load(path, ret);
        goto cleanup;
    }
    yk_modhex_encode(emu.pubid, emu.pubid_len, mh);
    if (printf("%s\n", mh) < 0 || fflush(stdout) != 0) {
        status = fail("standard output", "cannot write", errno);
        goto cleanup;
    }
    status = EXIT_SUCCESS;

cleanup:
    yk_emu_clear(&emu);
    return status;
}

/* Read "AESKEYHEX PRIVIDHEX" (whitespace separated, nothing else) from
 * standard input into emu's key and private id; the input is wiped. */
static krb5_error_code
read_secrets(yk_emu *emu)
{
    krb5_error_code ret = 0;
    char buf[STDIN_MAX + 1];
    const char *tok[3] = { NULL, NULL, NULL };
    size_t toklen[3] = { 0, 0, 0 }, len = 0, i, ntok = 0;
    ssize_t n;

    memset(buf, 0, sizeof(buf));
    while (len < sizeof(buf)) {
        n = read(STDIN_FILENO, buf + len, sizeof(buf) - len);
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
    if (len > STDIN_MAX) {
        ret = EFBIG;
        goto cleanup;
    }

    /* Split into at most three words: a third one is an error. */
    for (i = 0; i < len && ntok < 3; i++) {
        if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' ||
            buf[i] == '\r')
            continue;
        tok[ntok] = buf + i;
        while (i < len && buf[i] != ' ' && buf[i] != '\t' &&
               buf[i] != '\n' && buf[i] != '\r')
            i++;
        toklen[ntok] = (size_t)(buf + i - tok[ntok]);
        ntok++;
    }
    if (ntok != 2 || toklen[0] != 2 * YK_AES_KEY_LEN ||
        toklen[1] != 2 * YK_PRIVID_LEN) {
        ret = YK_ERR_HEX;
        goto cleanup;
    }
    ret = yk_hex_decode(tok[0], toklen[0], emu->aes_key,
                        sizeof(emu->aes_key));
    if (ret)
        goto cleanup;
    ret = yk_hex_decode(tok[1], toklen[1], emu->private_id,
                        sizeof(emu->private_id));

cleanup:
    yk_zap(buf, sizeof(buf));
    return ret;
}

/* ykemu --init FILE [--public-id MODHEX] [--key-stdin]: create a token
 * state in a file that must not exist yet. */
static int
cmd_init(int argc, char **argv)
{
    krb5_error_code ret;
    yk_emu emu;
    unsigned char pubid[YK_PUBID_MAX];
    const char *path = NULL, *pubid_arg = NULL;
    size_t pubid_len = 0, mhlen;
    int i, key_stdin = 0, fd = -1, created = 0, status = EXIT_FAILURE;

    memset(&emu, 0, sizeof(emu));
    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--public-id") == 0 && i + 1 < argc &&
            pubid_arg == NULL)
            pubid_arg = argv[++i];
        else if (strcmp(argv[i], "--key-stdin") == 0 && !key_stdin)
            key_stdin = 1;
        else if (argv[i][0] != '-' && path == NULL)
            path = argv[i];
        else
            return usage_error("--init: bad or repeated argument");
    }
    if (path == NULL)
        return usage_error("--init needs a FILE");

    /* The public id: the given one, or "cc" + 10 random modhex. */
    ret = yk_crypto_init();
    if (ret)
        return fail(path, "libgcrypt", ret);
    if (pubid_arg != NULL) {
        mhlen = strlen(pubid_arg);
        if (mhlen % 2 != 0 || mhlen > YK_PUBID_MODHEX_MAX)
            return usage_error("--public-id: 0 to 32 modhex characters, "
                               "an even number");
        if (mhlen > 0) {
            ret = yk_modhex_decode(pubid_arg, mhlen, pubid, sizeof(pubid),
                                   &pubid_len);
            if (ret)
                return usage_error("--public-id: not modhex");
        }
    } else {
        pubid[0] = 0x00;
        gcry_randomize(pubid + 1, DEFAULT_PUBID_LEN - 1, GCRY_STRONG_RANDOM);
        pubid_len = DEFAULT_PUBID_LEN;
    }

    ret = yk_emu_init(&emu, pubid, pubid_len);
    if (ret) {
        status = fail(path, "cannot create a token", ret);
        goto cleanup;
    }
    if (key_stdin) {
        ret = read_secrets(&emu);
        if (ret) {
            status = fail("standard input",
                          "expected \"AESKEYHEX PRIVIDHEX\"", ret);
            goto cleanup;
        }
    }

    /* Claim the name first (O_EXCL): never replace an existing token. */
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        status = fail(path, errno == EEXIST ? "refusing to overwrite" :
                      "cannot create", errno);
        goto cleanup;
    }
    created = 1;
    close(fd);
    ret = yk_emu_save(&emu, path);
    if (ret) {
        status = fail(path, "cannot save the token state", ret);
        goto cleanup;
    }
    created = 0;
    status = EXIT_SUCCESS;

cleanup:
    if (created)
        (void)unlink(path);
    yk_emu_clear(&emu);
    return status;
}

/* Dispatch on the first argument; see the usage text. */
int
main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error(NULL);
    if (strcmp(argv[1], "--help") == 0 && argc == 2) {
        fputs(usage_text, stdout);
        return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    if (strcmp(argv[1], "--init") == 0)
        return cmd_init(argc - 2, argv + 2);
    if (strcmp(argv[1], "--replug") == 0 && argc == 3)
        return cmd_replug(argv[2]);
    if (strcmp(argv[1], "--public-id") == 0 && argc == 3)
        return cmd_pubid(argv[2]);
    if (argv[1][0] != '-' && argc == 2)
        return cmd_next(argv[1]);
    return usage_error(NULL);
}
