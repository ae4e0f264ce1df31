/* SPDX-License-Identifier: MIT */
/* fuzz_keyring.c: libFuzzer target for the master keyring file parser. */

#include <config.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "keywrap.h"

static char dir[PATH_MAX];
static char path[PATH_MAX];

/* Remove the scratch directory at exit. */
static void
cleanup_dir(void)
{
    (void)unlink(path);
    (void)rmdir(dir);
}

/* A scratch directory for write/load round trips, on tmpfs if we can. */
static void
init_once(void)
{
    const char *base = getenv("TMPDIR");

    if (dir[0] != '\0')
        return;
    if (access("/dev/shm", W_OK) == 0)
        base = "/dev/shm";
    else if (base == NULL)
        base = "/tmp";
    snprintf(dir, sizeof(dir), "%s/fuzz_keyring.XXXXXX", base);
    if (mkdtemp(dir) == NULL)
        abort();
    snprintf(path, sizeof(path), "%s/keyring", dir);
    atexit(cleanup_dir);
}

/* A reference reading of text that parsed: the number of "key " lines and
 * their highest version, computed independently of keywrap.c. */
static void
reference_scan(const uint8_t *data, size_t size, size_t *count_out,
               uint32_t *newest_out)
{
    char *text = malloc(size + 1), *line, *save = NULL;
    unsigned long v;
    size_t count = 0;
    uint32_t newest = 0;

    if (text == NULL)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    for (line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "key ", 4) != 0)
            continue;
        v = strtoul(line + 4, NULL, 10);
        if (v == 0 || v > UINT32_MAX)
            abort();
        count++;
        if (v > newest)
            newest = (uint32_t)v;
    }
    free(text);
    *count_out = count;
    *newest_out = newest;
}

/* Wrap with one ring and unwrap with the other: same newest key. */
static void
check_same_newest(const yk_keyring *a, const yk_keyring *b)
{
    yk_token_secret s, out;
    char *rec = NULL;

    memset(&s, 0x33, sizeof(s));
    memset(&out, 0, sizeof(out));
    if (yk_keywrap_wrap(a, "fuzz@EXAMPLE.COM", "cb", &s, &rec) != 0)
        abort();
    if (yk_keywrap_unwrap(b, rec, "fuzz@EXAMPLE.COM", "cb", &out) != 0 ||
        memcmp(&s, &out, sizeof(s)) != 0)
        abort();
    free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer entry: parse, and on success write, reload and compare. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yk_keyring *kr = NULL, *again = NULL, *back = NULL;
    krb5_error_code ret;
    size_t count, ref_count;
    uint32_t newest, ref_newest;

    init_once();
    ret = yk_keyring_parse((const char *)data, size, &kr);
    if (ret != 0) {
        if (kr != NULL)
            abort();
        if (ret != YK_ERR_KEYRING_FORMAT && ret != YK_ERR_KEYRING_EMPTY)
            abort();
        return 0;
    }
    if (size > YK_KEYRING_MAX_FILE)
        abort();
    count = yk_keyring_count(kr);
    newest = yk_keyring_newest(kr);
    if (count < 1 || count > YK_KEYRING_MAX_KEYS || newest == 0)
        abort();
    reference_scan(data, size, &ref_count, &ref_newest);
    if (count != ref_count || newest != ref_newest)
        abort();

    /* Deterministic. */
    if (yk_keyring_parse((const char *)data, size, &again) != 0 ||
        yk_keyring_count(again) != count ||
        yk_keyring_newest(again) != newest)
        abort();

    /* What we write, we read back the same. */
    if (yk_keyring_write(kr, path, 0) != 0)
        abort();
    if (yk_keyring_load(path, &back) != 0)
        abort();
    (void)unlink(path);
    if (yk_keyring_count(back) != count || yk_keyring_newest(back) != newest)
        abort();
    check_same_newest(kr, back);
    check_same_newest(back, again);

    yk_keyring_free(back);
    yk_keyring_free(again);
    yk_keyring_free(kr);
    return 0;
}
