/* admin_master.c: ykadmin init-master-key (creating the master keyring). */

#ifdef HAVE_CONFIG_H
#include <config.h>  /* autoconf's, not shared/config.h: hence <> */
#endif

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "admin.h"
#include "errors.h"
#include "keywrap.h"

/* Parse init-master-key's options; returns -1 to go on, or an exit status.
 * *path_out is the --keyring argument (borrowed) or NULL. */
static int
parse_options(int argc, char **argv, const char **path_out)
{
    static const struct option opts[] = {
        { "keyring", required_argument, NULL, 'k' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const yk_admin_cmd *cmd = &yk_admin_cmd_init_master_key;
    int c;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 'k':
            *path_out = optarg;
            break;
        case 'h':
            return yk_admin_help(cmd);
        case ':':
            return yk_admin_usage(cmd, "option %s needs an argument",
                                  argv[optind - 1]);
        default:
            return yk_admin_usage(cmd, "unknown option %s",
                                  argv[optind - 1]);
        }
    }
    if (optind < argc)
        return yk_admin_usage(cmd, "unexpected argument \"%s\"",
                              argv[optind]);
    return -1;
}

/* Create a keyring holding one fresh key (version 1) at the configured
 * path; an existing file is never replaced. */
static int
run_init_master_key(yk_admin *adm, int argc, char **argv)
{
    const char *path = NULL;
    yk_keyring *kr = NULL;
    krb5_error_code ret;
    uint32_t version = 0;
    int status;

    status = parse_options(argc, argv, &path);
    if (status >= 0)
        return status;
    if (path == NULL)
        path = yk_admin_keyring_path(adm);
    if (path == NULL)
        return YK_ADMIN_EXIT_FAIL;

    ret = yk_keyring_new(&kr);
    if (!ret)
        ret = yk_keyring_add_key(kr, &version);
    if (ret) {
        status = yk_admin_fail("cannot generate a master key: %s",
                               yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_keyring_write(kr, path, 1);
    if (ret == EEXIST) {
        status = yk_admin_fail("%s already exists: refusing to overwrite a "
                               "master keyring (every token wrapped with "
                               "it would be lost)", path);
        goto cleanup;
    }
    if (ret) {
        status = yk_admin_fail("cannot write the master keyring %s: %s",
                               path, yk_strerror(ret));
        goto cleanup;
    }
    yk_admin_log(adm, "init-master-key keyring=%s version=%lu", path,
                 (unsigned long)version);
    printf("Created the master keyring %s (key version %lu, mode 0600).\n"
           "Copy it to every KDC (owned by the KDC's user, mode 0600) and "
           "keep an\noffline copy: losing it means re-enrolling every "
           "token.\n", path, (unsigned long)version);
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_keyring_free(kr);
    return status;
}

const yk_admin_cmd yk_admin_cmd_init_master_key = {
    "init-master-key",
    "[--keyring FILE]",
    "create the master keyring that wraps token secrets",
    "Creates a new master keyring holding one random AES-256 key (version\n"
    "1, from libgcrypt's strong random pool), mode 0600.  An existing file\n"
    "is never overwritten.\n\n"
    "Options:\n"
    "  --keyring FILE   where to create it (default: the global --keyring,\n"
    "                   else yubikey_master_key_file of kdc.conf)\n",
    run_init_master_key
};
