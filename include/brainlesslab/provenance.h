/* Provenance: what a record says about the program and machine that made
 * it (spec/platform.md §7.3, the environment/ files), and deterministic ZIP archives.
 *
 * Where the reference captures its Python package sources, lock file and
 * interpreter, this program captures the exact source tree it was built
 * from: at build time the sources are packed into a deterministic archive
 * (sorted entries, fixed 1980-01-01 timestamps, mode 0644, deflate) that is
 * compiled into the binary together with its SHA-256, so every record
 * carries the code that produced it and a receipt that proves which. */
#ifndef BRAINLESSLAB_PROVENANCE_H
#define BRAINLESSLAB_PROVENANCE_H

#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/status.h"

/* ---- deterministic ZIP archives (libzip) --------------------------------- */

typedef struct bl_zip_entry {
    const char *name;   /* portable relative path */
    const void *data;
    size_t len;
} bl_zip_entry;

/* A ZIP archive of the entries in byte order of their names (whatever
 * order they are given in), each deflated, dated 1980-01-01 00:00:00, mode
 * 0644 regular file. The same entries always give the same bytes. Duplicate
 * or unsafe names (absolute, "..", backslash, empty) are BL_EVALUE. */
bl_status bl_zip_build(const bl_zip_entry *entries, size_t n, bl_buf *out, bl_error *err);

/* Reads every member of an archive held in memory, for programs that
 * verify what a record carries (environment/package-source.zip, .npz
 * features) and for the tests; the engine itself never reads archives.
 * *entries is a heap array whose names and data are heap copies, released
 * with bl_zip_entries_destroy. */
bl_status bl_zip_read(const void *zip, size_t len, bl_zip_entry **entries, size_t *n,
                      bl_error *err);
void bl_zip_entries_destroy(bl_zip_entry *entries, size_t n);

/* A NumPy .npz (deflated ZIP) of float64 1-D arrays, members
 * "<name>.npy" in .npy format 1.0, little-endian, C order. */
bl_status bl_npz_build(const char *const *names, const double *const *arrays,
                       const size_t *lengths, size_t n, bl_buf *out, bl_error *err);

/* Reading a .npz archive (the decoder's data/probe_features.npz): every
 * member must be "<name>.npy" holding a .npy file bl_npy_parse accepts;
 * anything else (not a ZIP archive, unsafe or duplicate names, a damaged
 * member, another member kind) refuses the whole archive with BL_EVALUE.
 * Members are sorted by name, which is without the ".npy". */
typedef struct bl_npz_member {
    char *name;
    bl_npy *array;
} bl_npz_member;

typedef struct bl_npz {
    bl_npz_member *members;
    size_t n;
} bl_npz;

bl_status bl_npz_parse(const void *bytes, size_t len, bl_npz **out, bl_error *err);
/* The same from a regular file of at most `cap` bytes (no symbolic link);
 * messages start with the path. */
bl_status bl_npz_read(const char *path, size_t cap, bl_npz **out, bl_error *err);
/* The member called `name` (without ".npy"), or NULL. */
const bl_npy *bl_npz_get(const bl_npz *z, const char *name);
void bl_npz_destroy(bl_npz *z);

/* ---- the embedded source bundle ------------------------------------------- */

/* The deterministic archive of the sources this binary was built from
 * (in a git checkout every file git tracks plus every new file it does not
 * ignore, as of the build; without git, the project's own folders:
 * tools/provenance.cmake), and the SHA-256 hex of its bytes, both fixed at
 * build time. */
const void *bl_source_bundle(size_t *len);
const char *bl_source_bundle_sha256(void);

/* environment/source.json: {"entrypoint": "brainlesslab", "file_sha256":
 * {name: sha256}, "files": [sorted names], "format":
 * "brainlesslab-source-bundle", "sha256": <of the archive>, "version": 1}.
 * Computed once, at build time, from the bundle (the build embeds it beside
 * the bundle): bl_source_receipt_text gives its exact record bytes (JSON
 * with sorted keys, compact, one trailing newline), bl_source_receipt the
 * parsed value. Neither inflates nor hashes anything. */
const void *bl_source_receipt_text(size_t *len);
bl_status bl_source_receipt(bl_json **out, bl_error *err);

/* Re-hashes the embedded bundle (about 1 MB) and fails with BL_ERUNTIME
 * when it does not match bl_source_bundle_sha256: the binary was altered
 * after its build. For callers that vouch for the bundle without writing
 * it out and hashing the written bytes. */
bl_status bl_source_bundle_verify(bl_error *err);

/* The lock-file equivalent (environment/build.lock): the exact build
 * configuration and dependency versions of this binary, as text. */
bl_status bl_build_lock(bl_buf *out, bl_error *err);

/* ---- the environment ------------------------------------------------------ */

/* environment/environment.json minus "execution" (the caller adds the
 * result metadata): {"compiler": {"id", "version", "flags"}, "libraries":
 * {"jansson", "libcrypto", "random123", "tomlplusplus", "libzip", "zlib",
 * "openmp"}, "machine": <cpu architecture>, "cpu": <model name>, "os": <id
 * and version>, "kernel": <release>, "package_version": <ours>,
 * "platform": "linux"}. */
bl_status bl_environment_json(bl_json **out, bl_error *err);

#endif
