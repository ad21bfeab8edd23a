/* What a record says about the program and machine that made it
 * (spec/platform.md §7.3: environment/source.json, environment/build.lock,
 * environment/environment.json).
 *
 * The reference captures its package sources, uv.lock and interpreter at
 * run time. A compiled program cannot find its sources at run time (the
 * tree may be gone, or changed since the build), so the build packs them
 * into the binary instead (tools/provenance.cmake, tools/source_bundle.c)
 * with their SHA-256 and their receipt (source_receipt.c), all fixed at
 * build time, so no process inflates or hashes the bundle to describe it;
 * whoever writes the bundle out checks its bytes against the embedded hash
 * (bl_source_bundle_verify, or the record manifest's own hash of the
 * written file). The build configuration and Debian package versions are fixed at
 * configure time into provenance_info.h; what depends on the machine
 * (library versions actually loaded, CPU, OS, kernel) is read when asked. */
#include "brainlesslab/provenance.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <zip.h>
#include <zlib.h>

#include "brainlesslab/sha256.h"
#include "brainlesslab/sysinfo.h"
#include "brainlesslab/version.h"
#include "provenance_info.h"
#include "records/provenance_bundle.h"

/* ---- the source bundle ---------------------------------------------------------- */

const void *bl_source_bundle(size_t *len)
{
    if (len)
        *len = bl_bundle_size;
    return bl_bundle_bytes;
}

const char *bl_source_bundle_sha256(void) { return bl_bundle_sha256; }

bl_status bl_source_bundle_verify(bl_error *err)
{
    char hex[2 * BL_SHA256_BYTES + 1];
    bl_status st = bl_sha256_hex(bl_bundle_bytes, bl_bundle_size, hex, err);
    if (st != BL_OK)
        return st;
    /* A mismatch means the binary was altered after the build: a receipt
     * would vouch for sources other than the ones it names. */
    if (strcmp(hex, bl_bundle_sha256) != 0)
        return bl_fail(err, BL_ERUNTIME,
                       "the embedded source bundle does not match its SHA-256 (%s, expected %s)",
                       hex, bl_bundle_sha256);
    return BL_OK;
}

const void *bl_source_receipt_text(size_t *len)
{
    if (len)
        *len = bl_bundle_receipt_size;
    return bl_bundle_receipt;
}

bl_status bl_source_receipt(bl_json **out, bl_error *err)
{
    return bl_json_parse((const char *)bl_bundle_receipt, bl_bundle_receipt_size,
                         "the embedded source receipt", out, err);
}

/* ---- the build lock ------------------------------------------------------------- */

bl_status bl_build_lock(bl_buf *out, bl_error *err)
{
    /* Keys sorted within each section, one "name = value" per line, so two
     * locks compare line by line. */
    bl_buf_puts(out, "# environment/build.lock: how this brainlesslab binary was built\n");
    bl_buf_puts(out, "[build]\n");
    bl_buf_printf(out, "brainlesslab = %s\n", bl_version());
    bl_buf_printf(out, "build_type = %s\n", BL_PROV_BUILD_TYPE);
    bl_buf_printf(out, "c_compiler = %s %s\n", BL_PROV_C_COMPILER_ID, BL_PROV_C_COMPILER_VERSION);
    bl_buf_printf(out, "c_flags = %s\n", BL_PROV_C_FLAGS);
    bl_buf_printf(out, "cmake = %s\n", BL_PROV_CMAKE_VERSION);
    bl_buf_printf(out, "cxx_compiler = %s\n", BL_PROV_CXX_COMPILER);
    bl_buf_printf(out, "source_sha256 = %s\n", bl_bundle_sha256);
    bl_buf_puts(out, "\n[packages]\n");
    bl_buf_puts(out, BL_PROV_PACKAGES);
    return bl_buf_status(out, err);
}

/* ---- the environment --------------------------------------------------------------- */

/* Sets key to a string, or to null when `value` is NULL (unknown here);
 * sticky, as bl_json_put. */
static void set_text(bl_status *st, bl_json *obj, const char *key, const char *value,
                     bl_error *err)
{
    bl_json_put(st, obj, key, value ? bl_json_string(value) : bl_json_null(), err);
}

bl_status bl_environment_json(bl_json **out, bl_error *err)
{
    *out = NULL;
    bl_status st = BL_OK;
    bl_json *env = bl_json_object();
    bl_json *compiler = bl_json_object();
    bl_json *libs = bl_json_object();
    if (!env || !compiler || !libs) {
        st = bl_fail(err, BL_ENOMEM, "out of memory describing the environment");
        goto fail;
    }

    set_text(&st, compiler, "id", BL_PROV_C_COMPILER_ID, err);
    set_text(&st, compiler, "version", BL_PROV_C_COMPILER_VERSION, err);
    set_text(&st, compiler, "flags", BL_PROV_C_FLAGS, err);

    /* Header versions where the library has no run-time query (jansson's
     * is compiled in; Random123 and toml++ are header libraries, known by
     * their Debian package version), run-time versions where it has one. */
#ifdef _OPENMP
    char openmp[32];
    snprintf(openmp, sizeof openmp, "%ld", (long)_OPENMP);
#else
    const char *openmp = NULL;
#endif
    set_text(&st, libs, "jansson", JANSSON_VERSION, err);
    set_text(&st, libs, "libcrypto", OpenSSL_version(OPENSSL_VERSION_STRING), err);
    set_text(&st, libs, "libzip", zip_libzip_version(), err);
    set_text(&st, libs, "openmp", openmp, err);
    set_text(&st, libs, "random123", BL_PROV_RANDOM123_VERSION, err);
    set_text(&st, libs, "tomlplusplus", BL_PROV_TOMLPLUSPLUS_VERSION, err);
    set_text(&st, libs, "zlib", zlibVersion(), err);

    struct utsname uts;
    bool have_uts = uname(&uts) == 0;
    char machine[sizeof uts.machine], kernel[sizeof uts.release];
    if (have_uts) {
        bl_sysinfo_trimmed(machine, sizeof machine, uts.machine);
        bl_sysinfo_trimmed(kernel, sizeof kernel, uts.release);
    }
    char cpu[256];
    bool have_cpu = bl_sysinfo_cpuinfo_field(NULL, "model name", cpu, sizeof cpu);
    char os[256];
    bool have_os = bl_sysinfo_os_name(NULL, os, sizeof os);

    bl_json_put(&st, env, "compiler", compiler, err);
    compiler = NULL; /* owned by env whatever the outcome */
    set_text(&st, env, "cpu", have_cpu ? cpu : NULL, err);
    set_text(&st, env, "kernel", have_uts ? kernel : NULL, err);
    bl_json_put(&st, env, "libraries", libs, err);
    libs = NULL;
    set_text(&st, env, "machine", have_uts ? machine : NULL, err);
    set_text(&st, env, "os", have_os ? os : NULL, err);
    set_text(&st, env, "package_version", bl_version(), err);
    set_text(&st, env, "platform", "linux", err);
    if (st != BL_OK)
        goto fail;
    *out = env;
    return BL_OK;

fail:
    bl_json_destroy(compiler);
    bl_json_destroy(libs);
    bl_json_destroy(env);
    return st;
}
