/* SPDX-License-Identifier: MIT */
/* mitotp.c: MIT's RADIUS "otp" module beside ours, sharing padata 142. */

/*
 * krb5kdc routes a padata type to the first module that lists it, and
 * modules named by a "module =" line come before the built-in ones: every
 * PA-OTP-REQUEST (142) reaches us, also those of principals that MIT's
 * otp module (Debian's krb5-otp) serves through RADIUS, marked by the
 * string attribute "otp".  The hints are not routed: the KDC asks every
 * module, so MIT's module still sends its PA-OTP-CHALLENGE to its
 * principals (and ours stays silent for them).
 *
 * So when the KDC has loaded MIT's module, we start an instance of it of
 * our own (its vtable from its initvt, its state from its init: the same
 * [otp] profile sections) and hand it the PA-OTP-REQUESTs of principals
 * with the "otp" attribute, with the KDC's callbacks and respond.  Whether
 * the KDC loaded it is read off the process: the KDC opens every module
 * before it initializes any, so by our init MIT's otp.so is mapped if it
 * is installed and not disabled in [plugins] kdcpreauth; it is found by
 * its exported initvt, whatever its file name.
 */

#define _GNU_SOURCE 1  /* dl_iterate_phdr, RTLD_NOLOAD */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "mitotp.h"
#include "verify.h"

#define YK_MITOTP_INITVT "kdcpreauth_otp_initvt"
#define YK_MITOTP_ATTR "otp"         /* MIT's per-principal string attr */
#define YK_KDCPREAUTH_MAJOR 1        /* the kdcpreauth interface version */
#define YK_KDCPREAUTH_MINOR 2        /* what krb5kdc 1.20 asks for */

struct yk_mitotp {
    int broken;                      /* loaded by the KDC, but our copy
                                      * did not start: its principals'
                                      * requests are discarded */
    void *handle;                    /* dlopen reference to otp.so */
    char *path;                      /* its file, for the log */
    struct krb5_kdcpreauth_vtable_st vt;
    krb5_kdcpreauth_moddata moddata; /* our instance's state */
};

/* The file names of the objects mapped in this process (a NULL-terminated
 * array, malloc'd). */
typedef struct {
    char **names;
    size_t n, cap;
    int failed;
} yk_objects;

/* dl_iterate_phdr callback: collect one object's file name. */
static int
collect_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    yk_objects *o = arg;
    char **grown;

    (void)size;
    if (info->dlpi_name == NULL || info->dlpi_name[0] != '/')
        return 0;
    if (o->n + 2 > o->cap) {
        grown = realloc(o->names, (o->cap + 16) * sizeof(*grown));
        if (grown == NULL) {
            o->failed = 1;
            return 1;
        }
        o->names = grown;
        o->cap += 16;
    }
    o->names[o->n] = strdup(info->dlpi_name);
    if (o->names[o->n] == NULL) {
        o->failed = 1;
        return 1;
    }
    o->names[++o->n] = NULL;
    return 0;
}

/* Free the names of collect_object. */
static void
objects_free(yk_objects *o)
{
    size_t i;

    for (i = 0; i < o->n; i++)
        free(o->names[i]);
    free(o->names);
}

/* The mapped object that exports MIT's otp initvt: its handle (a new
 * reference), path (malloc'd) and initvt into the out-parameters; ENOENT
 * when none is mapped.  dlopen runs outside dl_iterate_phdr, which holds
 * the loader's lock. */
static krb5_error_code
find_loaded(void **handle_out, char **path_out,
            krb5_plugin_initvt_fn *initvt_out)
{
    yk_objects o = { NULL, 0, 0, 0 };
    krb5_error_code ret = ENOENT;
    void *h, *sym;
    size_t i;

    dl_iterate_phdr(collect_object, &o);
    if (o.failed) {
        objects_free(&o);
        return ENOMEM;
    }
    for (i = 0; i < o.n && ret == ENOENT; i++) {
        h = dlopen(o.names[i], RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
        if (h == NULL)
            continue;
        sym = dlsym(h, YK_MITOTP_INITVT);
        if (sym == NULL) {
            dlclose(h);
            continue;
        }
        *path_out = strdup(o.names[i]);
        if (*path_out == NULL) {
            dlclose(h);
            ret = ENOMEM;
            break;
        }
        *handle_out = h;
        *initvt_out = (krb5_plugin_initvt_fn)sym;
        ret = 0;
    }
    objects_free(&o);
    return ret;
}

krb5_error_code
yk_mitotp_new(krb5_context context, const char **realmnames,
              yk_mitotp **mit_out)
{
    krb5_error_code ret;
    krb5_plugin_initvt_fn initvt = NULL;
    yk_mitotp *mit;

    *mit_out = NULL;
    mit = calloc(1, sizeof(*mit));
    if (mit == NULL)
        return ENOMEM;
    ret = find_loaded(&mit->handle, &mit->path, &initvt);
    if (ret == ENOENT) {
        yk_kdc_log("MIT's otp module is not loaded (krb5-otp not "
                   "installed, or disabled in [plugins] kdcpreauth): "
                   "every PA-OTP-REQUEST is krb5-yubikey's, the otp string "
                   "attribute has no effect");
        yk_mitotp_free(context, mit);
        return 0;
    }
    if (ret) {
        yk_mitotp_free(context, mit);
        return ret;
    }
    ret = initvt(context, YK_KDCPREAUTH_MAJOR, YK_KDCPREAUTH_MINOR,
                 (krb5_plugin_vtable)&mit->vt);
    if (ret == 0 && (mit->vt.verify == NULL || mit->vt.init == NULL))
        ret = KRB5_PLUGIN_NO_HANDLE;
    if (ret == 0)
        ret = mit->vt.init(context, &mit->moddata, realmnames);
    if (ret) {
        /* Fail closed without counting: the KDC's own copy still sends
         * its principals challenges; their requests get no answer (an
         * outage, not a wrong OTP: no lockout). */
        yk_kdc_log("MIT's otp module (%s) is loaded but could not be "
                   "started beside krb5-yubikey (%s): PA-OTP-REQUESTs of "
                   "principals with the otp string attribute are "
                   "discarded", mit->path, error_message(ret));
        mit->vt.fini = NULL;
        mit->moddata = NULL;
        mit->broken = 1;
        *mit_out = mit;
        return 0;
    }
    yk_kdc_log("MIT's otp module is loaded (%s): PA-OTP-REQUESTs of "
               "principals with the otp string attribute go to it, the "
               "others to krb5-yubikey", mit->path);
    *mit_out = mit;
    return 0;
}

void
yk_mitotp_free(krb5_context context, yk_mitotp *mit)
{
    if (mit == NULL)
        return;
    if (mit->moddata != NULL && mit->vt.fini != NULL)
        mit->vt.fini(context, mit->moddata);
    if (mit->handle != NULL)
        dlclose(mit->handle);
    free(mit->path);
    free(mit);
}

int
yk_mitotp_owns(yk_mitotp *mit, krb5_context context,
               krb5_kdcpreauth_callbacks cb, krb5_kdcpreauth_rock rock)
{
    char *value = NULL;

    if (mit == NULL)
        return 0;
    if (cb->get_string(context, rock, YK_MITOTP_ATTR, &value) != 0 ||
        value == NULL)
        return 0;
    cb->free_string(context, rock, value);
    return 1;
}

void
yk_mitotp_verify(yk_mitotp *mit, krb5_context context, krb5_data *req_pkt,
                 krb5_kdc_req *request, krb5_enc_tkt_part *enc_tkt_reply,
                 krb5_pa_data *pa, krb5_kdcpreauth_callbacks cb,
                 krb5_kdcpreauth_rock rock,
                 krb5_kdcpreauth_verify_respond_fn respond, void *arg)
{
    if (mit->broken) {
        (*respond)(arg, KRB5KDC_ERR_DISCARD, NULL, NULL, NULL);
        return;
    }
    mit->vt.verify(context, req_pkt, request, enc_tkt_reply, pa, cb, rock,
                   mit->moddata, respond, arg);
}
