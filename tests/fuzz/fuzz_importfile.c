/* SPDX-License-Identifier: MIT */
/* fuzz_importfile.c: libFuzzer target for the import-file and map parsers. */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "importfile.h"
#include "otp.h"

#define NFORMATS 4

/* Abort with a message when an invariant does not hold. */
#define CHECK(cond)                                                     \
    do {                                                                \
        if (!(cond)) {                                                  \
            fprintf(stderr, "fuzz_importfile: invariant failed: %s "    \
                    "(line %d)\n", #cond, __LINE__);                    \
            abort();                                                    \
        }                                                               \
    } while (0)

static const int formats[NFORMATS] = {
    YK_IMPORT_AUTO, YK_IMPORT_YKMAN_CSV, YK_IMPORT_TRADITIONAL, YK_IMPORT_KSM
};

/* The input split into lines as an editor numbers them, lower-cased, so
 * that a token's fields can be found in the line it claims to come from. */
typedef struct {
    char *low;                  /* lower-cased copy of the input */
    size_t *start;              /* start offset of line i + 1 */
    size_t *len;                /* length of line i + 1, without the LF */
    size_t n;                   /* number of lines */
} lines;

/* Split size bytes at data into l (own code, independent of the parser). */
static void
lines_init(lines *l, const uint8_t *data, size_t size)
{
    size_t i, begin = 0;

    l->low = malloc(size + 1);
    l->start = calloc(size + 1, sizeof(size_t));
    l->len = calloc(size + 1, sizeof(size_t));
    CHECK(l->low != NULL && l->start != NULL && l->len != NULL);
    l->n = 0;
    for (i = 0; i < size; i++)
        l->low[i] = (char)((data[i] >= 'A' && data[i] <= 'Z') ?
                           data[i] + 32 : data[i]);
    for (i = 0; i <= size; i++) {
        if (i == size || data[i] == '\n') {
            if (i == size && begin == size)
                break;
            l->start[l->n] = begin;
            l->len[l->n] = i - begin;
            l->n++;
            begin = i + 1;
        }
    }
}

static void
lines_free(lines *l)
{
    free(l->low);
    free(l->start);
    free(l->len);
}

/* 1 if the NUL-terminated s occurs in line number lineno (1-based). */
static int
line_has(const lines *l, size_t lineno, const char *s)
{
    const char *p = l->low + l->start[lineno - 1];
    size_t n = l->len[lineno - 1], m = strlen(s), i;

    for (i = 0; i + m <= n; i++) {
        if (memcmp(p + i, s, m) == 0)
            return 1;
    }
    return 0;
}

/* 1 if the string is canonical modhex of even length 2..32. */
static int
canonical_pubid(const char *s)
{
    size_t n = strlen(s), i;

    if (n < 2 || n > YK_PUBID_MODHEX_MAX || n % 2 != 0)
        return 0;
    for (i = 0; i < n; i++) {
        if (s[i] == '\0' || strchr("cbdefghijklnrtuv", s[i]) == NULL)
            return 0;
    }
    return 1;
}

/* An error message: terminated, whole, one line, never a run of 12 or
 * more hex digits that could not be a (modhex) public id. */
static void
check_message(const char *err)
{
    size_t n = strnlen(err, YK_IMPORT_ERRBUF_SIZE), i, run = 0, bad = 0;

    CHECK(n > 0 && n < YK_IMPORT_ERRBUF_SIZE - 1);
    CHECK(strchr(err, '\n') == NULL);
    for (i = 0; i <= n; i++) {
        char c = err[i];

        if (c != '\0' && strchr("0123456789abcdefABCDEF", c) != NULL) {
            run++;
            bad += strchr("bcdefBCDEF", c) == NULL;
            continue;
        }
        CHECK(run < 12 || bad == 0);
        run = bad = 0;
    }
}

/* Every token of a successful parse: canonical public id found in its
 * line, secrets found in hex in that line, lines rising, no public id
 * twice, fields in range. */
static void
check_set(const yk_import_set *set, int format, const lines *l)
{
    static const unsigned char zero[YK_IMPORT_ACCESS_CODE_LEN];
    char hex[2 * YK_AES_KEY_LEN + 1];
    size_t count = yk_import_set_count(set), i, j, prev = 0;

    CHECK(count >= 1 && count <= l->n);
    CHECK(yk_import_set_get(set, count) == NULL);
    if (format != YK_IMPORT_AUTO)
        CHECK(yk_import_set_format(set) == format);
    CHECK(yk_import_set_format(set) >= YK_IMPORT_YKMAN_CSV &&
          yk_import_set_format(set) <= YK_IMPORT_KSM);
    for (i = 0; i < count; i++) {
        const yk_import_token *t = yk_import_set_get(set, i);

        CHECK(t != NULL);
        CHECK(t->line > prev && t->line <= l->n);
        prev = t->line;
        CHECK(canonical_pubid(t->pubid));
        CHECK(line_has(l, t->line, t->pubid));
        yk_hex_encode(t->private_id, YK_PRIVID_LEN, hex);
        CHECK(line_has(l, t->line, hex));
        yk_hex_encode(t->aes_key, YK_AES_KEY_LEN, hex);
        CHECK(line_has(l, t->line, hex));
        CHECK(strlen(t->serial) <= YK_IMPORT_SERIAL_MAX);
        CHECK(strspn(t->serial, "0123456789") == strlen(t->serial));
        if (t->serial[0] != '\0')
            CHECK(line_has(l, t->line, t->serial));
        CHECK(t->has_access_code == 0 || t->has_access_code == 1);
        if (t->has_access_code) {
            CHECK(memcmp(t->access_code, zero, sizeof(zero)) != 0);
            yk_hex_encode(t->access_code, YK_IMPORT_ACCESS_CODE_LEN, hex);
            CHECK(line_has(l, t->line, hex));
        } else {
            CHECK(memcmp(t->access_code, zero, sizeof(zero)) == 0);
        }
        if (yk_import_set_format(set) == YK_IMPORT_TRADITIONAL)
            CHECK(t->slot == 1 || t->slot == 2);
        else
            CHECK(t->slot == 0);
        for (j = 0; j < i; j++)
            CHECK(strcmp(yk_import_set_get(set, j)->pubid, t->pubid) != 0);
    }
}

/* Two parses of one input give the same tokens. */
static void
check_same(const yk_import_set *a, const yk_import_set *b)
{
    size_t i;

    CHECK(yk_import_set_format(a) == yk_import_set_format(b));
    CHECK(yk_import_set_count(a) == yk_import_set_count(b));
    for (i = 0; i < yk_import_set_count(a); i++) {
        const yk_import_token *x = yk_import_set_get(a, i);
        const yk_import_token *y = yk_import_set_get(b, i);

        CHECK(strcmp(x->pubid, y->pubid) == 0);
        CHECK(memcmp(x->aes_key, y->aes_key, YK_AES_KEY_LEN) == 0);
        CHECK(memcmp(x->private_id, y->private_id, YK_PRIVID_LEN) == 0);
        CHECK(strcmp(x->serial, y->serial) == 0);
        CHECK(x->has_access_code == y->has_access_code);
        CHECK(memcmp(x->access_code, y->access_code,
                     YK_IMPORT_ACCESS_CODE_LEN) == 0);
        CHECK(x->slot == y->slot && x->line == y->line);
    }
}

/* The map parser on the raw input: entries canonical and found in their
 * lines, lookups agree with the entries, no public id twice. */
static void
check_map(const uint8_t *data, size_t size, const lines *l)
{
    yk_import_map *map = NULL;
    char err[YK_IMPORT_ERRBUF_SIZE];
    krb5_error_code ret;
    size_t count, i, j, prev = 0;

    ret = yk_import_parse_map((const char *)data, size, &map, err,
                              sizeof(err));
    if (ret != 0) {
        CHECK(ret == EINVAL || ret == ENOMEM);
        CHECK(map == NULL);
        check_message(err);
        return;
    }
    count = yk_import_map_count(map);
    CHECK(count >= 1 && count <= l->n);
    CHECK(yk_import_map_pubid(map, count) == NULL);
    for (i = 0; i < count; i++) {
        const char *pubid = yk_import_map_pubid(map, i);
        const char *princ = yk_import_map_principal(map, i);
        size_t line = yk_import_map_line(map, i), k;

        CHECK(line > prev && line <= l->n);
        prev = line;
        CHECK(canonical_pubid(pubid));
        CHECK(line_has(l, line, pubid));
        CHECK(princ != NULL && princ[0] != '\0');
        CHECK(strlen(princ) <= YK_IMPORT_PRINCIPAL_MAX);
        for (k = 0; princ[k] != '\0'; k++) {
            unsigned char c = (unsigned char)princ[k];

            CHECK(c > 0x20 && c != 0x7f);
        }
        /* The principal is in the raw line, case kept. */
        CHECK(memmem(data + l->start[line - 1], l->len[line - 1], princ,
                     strlen(princ)) != NULL);
        CHECK(yk_import_map_lookup(map, pubid) == princ);
        for (j = 0; j < i; j++)
            CHECK(strcmp(yk_import_map_pubid(map, j), pubid) != 0);
    }
    yk_import_map_free(map);
}

/* A map written for set (upper-case public ids, token i mapped to "p<i>")
 * that leaves out the tokens whose index is a multiple of skip (none when
 * skip is 0): lookups find exactly the written ones, and the map check
 * names the first token left out. */
static void
check_map_for_set(const yk_import_set *set, unsigned int skip)
{
    size_t count = yk_import_set_count(set), i, k, pos = 0, first = 0;
    size_t cap = count * (YK_PUBID_MODHEX_MAX + 24) + 1;
    char *text = malloc(cap), name[24], err[YK_IMPORT_ERRBUF_SIZE];
    char expect[YK_IMPORT_ERRBUF_SIZE];
    yk_import_map *map = NULL;
    krb5_error_code ret;
    int written = 0, missing = 0;

    CHECK(text != NULL);
    for (i = 0; i < count; i++) {
        const yk_import_token *t = yk_import_set_get(set, i);

        if (skip != 0 && i % skip == 0) {
            if (!missing)
                first = i;
            missing = 1;
            continue;
        }
        for (k = 0; t->pubid[k] != '\0'; k++)
            text[pos++] = (char)(t->pubid[k] - 32);
        pos += (size_t)snprintf(text + pos, cap - pos, "\tp%zu\r\n", i);
        written = 1;
    }
    ret = yk_import_parse_map(text, pos, &map, err, sizeof(err));
    if (!written) {
        CHECK(ret == EINVAL && map == NULL);
        free(text);
        return;
    }
    CHECK(ret == 0);
    for (i = 0; i < count; i++) {
        const char *p = yk_import_map_lookup(map,
                                             yk_import_set_get(set, i)->pubid);

        if (skip != 0 && i % skip == 0) {
            CHECK(p == NULL);
        } else {
            snprintf(name, sizeof(name), "p%zu", i);
            CHECK(p != NULL && strcmp(p, name) == 0);
        }
    }
    ret = yk_import_map_check(map, set, err, sizeof(err));
    if (!missing) {
        CHECK(ret == 0);
    } else {
        CHECK(ret == EINVAL);
        snprintf(expect, sizeof(expect), "line %zu: public id %s has no "
                 "line in the map file", yk_import_set_get(set, first)->line,
                 yk_import_set_get(set, first)->pubid);
        CHECK(strcmp(err, expect) == 0);
    }
    yk_import_map_free(map);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: parse it in every format and as a map, and check what the
 * parsers accept and how they refuse. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yk_import_set *sets[NFORMATS] = { NULL };
    char err[YK_IMPORT_ERRBUF_SIZE];
    krb5_error_code ret;
    lines l;
    int i, detected;

    lines_init(&l, data, size);
    for (i = 0; i < NFORMATS; i++) {
        ret = yk_import_parse((const char *)data, size, formats[i],
                              &sets[i], err, sizeof(err));
        if (ret != 0) {
            CHECK(ret == EINVAL || ret == ENOMEM);
            CHECK(sets[i] == NULL);
            check_message(err);
            continue;
        }
        check_set(sets[i], formats[i], &l);
    }

    /* Auto-detection agrees with the forcing of the detected format, and
     * a forced format that parses is the one detected. */
    if (sets[0] != NULL) {
        detected = yk_import_set_format(sets[0]);
        CHECK(sets[detected] != NULL);
        check_same(sets[0], sets[detected]);
    }
    for (i = 1; i < NFORMATS; i++) {
        if (sets[i] != NULL) {
            CHECK(sets[0] != NULL);
            CHECK(yk_import_set_format(sets[0]) == formats[i]);
        }
    }

    check_map(data, size, &l);
    if (sets[0] != NULL)
        check_map_for_set(sets[0], size > 0 ? data[size - 1] % 4 : 0);

    for (i = 0; i < NFORMATS; i++)
        yk_import_set_free(sets[i]);
    lines_free(&l);
    return 0;
}
