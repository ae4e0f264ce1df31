/* SPDX-License-Identifier: MIT */
/* admin_kdb.c: the KDC database, through kadm5's server library. */

/*
 * enroll --require sets +requires_preauth +requires_hwauth, and purge asks
 * whether a principal still exists.  Both go through libkadm5srv the way
 * kadmin.local does: a krb5 context made by kadm5_init_krb5_context (it
 * reads kdc.conf, so the same file as ykadmin is put in KRB5_KDC_PROFILE
 * first), the realm in the parameters, kadm5_init_with_password with the
 * local server handle (no password is checked: opening the database and
 * its stash needs the KDC's file permissions, so this runs on a KDC as
 * root or the KDC's user).  The principal recorded as the modifier is the
 * operator's login name with the instance "admin", as kadmin.local
 * records it.  Configured kadm5_hook modules run, as with kadmin.local.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kadm5/admin.h>

#include "admin.h"
#include "errors.h"

#define CALLER_MAX 512                /* "login/admin@REALM" */

struct yk_admin_kdb {
    krb5_context ctx;             /* the handle's own context */
    void *handle;                 /* kadm5 server handle */
    int klog;                     /* krb5_klog_init was called */
};

/* The kadm5 server library's logger: exported by libkadm5srv_mit but
 * declared only in krb5's private adm_proto.h.  Weak, so that a library
 * without them leaves them NULL (the noise then stays). */
extern krb5_error_code krb5_klog_init(krb5_context context, char *ename,
                                      char *whoami, krb5_boolean do_com_err)
    __attribute__((weak));
extern void krb5_klog_close(krb5_context context) __attribute__((weak));

/* A message for a kadm5 or krb5 code from the handle's context. */
static const char *
kdb_strerror(krb5_context ctx, krb5_error_code code, char *buf,
             size_t size)
{
    const char *msg;

    if ((code > YK_ERR_BASE && code < YK_ERR_LAST) || code < 256 ||
        ctx == NULL)
        return yk_strerror(code);
    msg = krb5_get_error_message(ctx, code);
    snprintf(buf, size, "%s", msg != NULL ? msg : yk_strerror(code));
    krb5_free_error_message(ctx, msg);
    return buf;
}

/* Open the realm's database; see admin.h. */
krb5_error_code
yk_admin_kdb_open(yk_admin *adm, yk_admin_kdb **kdb_out)
{
    kadm5_config_params params;
    yk_admin_kdb *kdb = NULL;
    struct passwd *pw;
    krb5_error_code ret;
    char caller[CALLER_MAX], msg[256];

    ret = yk_admin_load_config(adm);
    if (ret)
        return ret;
    kdb = calloc(1, sizeof(*kdb));
    if (kdb == NULL) {
        yk_admin_fail("out of memory");
        return ENOMEM;
    }
    /* kadm5_init_krb5_context reads KRB5_KDC_PROFILE: make it the file
     * ykadmin reads. */
    if (setenv("KRB5_KDC_PROFILE", adm->config_path, 1) != 0) {
        ret = errno;
        yk_admin_fail("cannot set KRB5_KDC_PROFILE: %s", strerror(ret));
        goto cleanup;
    }
    ret = kadm5_init_krb5_context(&kdb->ctx);
    if (ret) {
        kdb->ctx = NULL;
        yk_admin_fail("cannot initialise Kerberos for the KDC database: %s",
                      yk_strerror(ret));
        goto cleanup;
    }
    /* The kadm5 server library logs through krb5_klog, which prints to
     * standard error until initialised: its "No dictionary file
     * specified, continuing without one." (password quality is not ours
     * to check) would look like an error of ours.  Initialised under our
     * own name, with no [logging] entry of that name, it logs only
     * errors, to syslog. */
    if (krb5_klog_init != NULL && krb5_klog_close != NULL &&
        krb5_klog_init(kdb->ctx, "ykadmin", "ykadmin", FALSE) == 0)
        kdb->klog = 1;
    pw = getpwuid(getuid());
    snprintf(caller, sizeof(caller), "%s/admin@%s",
             pw != NULL && pw->pw_name != NULL ? pw->pw_name : "root",
             adm->realm);

    memset(&params, 0, sizeof(params));
    params.mask = KADM5_CONFIG_REALM;
    params.realm = adm->realm;
    ret = kadm5_init_with_password(kdb->ctx, caller, NULL,
                                   KADM5_ADMIN_SERVICE, &params,
                                   KADM5_STRUCT_VERSION,
                                   KADM5_API_VERSION_4, NULL,
                                   &kdb->handle);
    if (ret) {
        kdb->handle = NULL;
        yk_admin_fail("cannot open the KDC database of %s (as kadmin.local "
                      "does; run this on a KDC, as root or the KDC's user): "
                      "%s", adm->realm,
                      kdb_strerror(kdb->ctx, ret, msg, sizeof(msg)));
        goto cleanup;
    }
    *kdb_out = kdb;
    kdb = NULL;

cleanup:
    yk_admin_kdb_close(kdb);
    return ret;
}

/* Whether principal exists in the database. */
krb5_error_code
yk_admin_kdb_exists(yk_admin_kdb *kdb, const char *principal,
                    int *exists_out)
{
    kadm5_principal_ent_rec ent;
    krb5_principal princ = NULL;
    krb5_error_code ret;
    char msg[256];

    ret = krb5_parse_name(kdb->ctx, principal, &princ);
    if (ret) {
        yk_admin_fail("cannot parse the principal name \"%s\": %s",
                      principal,
                      kdb_strerror(kdb->ctx, ret, msg, sizeof(msg)));
        return ret;
    }
    memset(&ent, 0, sizeof(ent));
    ret = kadm5_get_principal(kdb->handle, princ, &ent,
                              KADM5_PRINCIPAL_NORMAL_MASK);
    if (ret == KADM5_UNK_PRINC) {
        *exists_out = 0;
        ret = 0;
    } else if (ret) {
        yk_admin_fail("cannot read %s from the KDC database: %s", principal,
                      kdb_strerror(kdb->ctx, ret, msg, sizeof(msg)));
    } else {
        *exists_out = 1;
        (void)kadm5_free_principal_ent(kdb->handle, &ent);
    }
    krb5_free_principal(kdb->ctx, princ);
    return ret;
}

/* Add REQUIRES_PRE_AUTH and REQUIRES_HW_AUTH to principal's attributes. */
krb5_error_code
yk_admin_kdb_require_hwauth(yk_admin_kdb *kdb, const char *principal,
                            int *changed_out)
{
    const krb5_flags want = KRB5_KDB_REQUIRES_PRE_AUTH |
        KRB5_KDB_REQUIRES_HW_AUTH;
    kadm5_principal_ent_rec ent;
    krb5_principal princ = NULL;
    krb5_error_code ret;
    int have_ent = 0;
    char msg[256];

    memset(&ent, 0, sizeof(ent));
    ret = krb5_parse_name(kdb->ctx, principal, &princ);
    if (ret) {
        yk_admin_fail("cannot parse the principal name \"%s\": %s",
                      principal,
                      kdb_strerror(kdb->ctx, ret, msg, sizeof(msg)));
        goto cleanup;
    }
    ret = kadm5_get_principal(kdb->handle, princ, &ent,
                              KADM5_PRINCIPAL_NORMAL_MASK);
    if (ret) {
        yk_admin_fail("cannot read %s from the KDC database: %s", principal,
                      kdb_strerror(kdb->ctx, ret, msg, sizeof(msg)));
        goto cleanup;
    }
    have_ent = 1;
    if ((ent.attributes & want) == want) {
        *changed_out = 0;
        goto cleanup;
    }
    ent.attributes |= want;
    ret = kadm5_modify_principal(kdb->handle, &ent, KADM5_ATTRIBUTES);
    if (ret) {
        yk_admin_fail("cannot set +requires_preauth +requires_hwauth on %s: "
                      "%s", principal,
                      kdb_strerror(kdb->ctx, ret, msg, sizeof(msg)));
        goto cleanup;
    }
    *changed_out = 1;

cleanup:
    if (have_ent)
        (void)kadm5_free_principal_ent(kdb->handle, &ent);
    krb5_free_principal(kdb->ctx, princ);
    return ret;
}

/* Close the handle and its context. */
void
yk_admin_kdb_close(yk_admin_kdb *kdb)
{
    if (kdb == NULL)
        return;
    if (kdb->handle != NULL)
        (void)kadm5_destroy(kdb->handle);
    if (kdb->klog)
        krb5_klog_close(kdb->ctx);
    if (kdb->ctx != NULL)
        krb5_free_context(kdb->ctx);
    free(kdb);
}
