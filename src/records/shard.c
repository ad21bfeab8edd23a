/* Shard records read back (include/brainlesslab/records.h, docs/records.md
 * "Shard records"): `merge` trusts a shard only as far as inspection
 * does, so a shard is read through it (complete, every checksum valid),
 * and its part's bytes are checked against the manifest's digest once
 * more as they are read, since the directory may have changed since. */
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/records.h"
#include "brainlesslab/results.h"
#include "records/records_internal.h"

/* A shard's part is read whole: 2^40 bytes bounds a damaged file's claim
 * on memory far above any part this program writes (about 200 bytes a
 * trial without recordings). */
#define SHARD_PART_MAX ((size_t)1 << 40)

void bl_shard_clear(bl_shard *s)
{
    bl_json_destroy(s->manifest);
    bl_free(s->bytes);
    bl_calibrations_destroy(s->calibrations, s->ncalibrations);
    memset(s, 0, sizeof *s);
}

static bool is_int(const bl_json *v)
{
    return v && bl_json_kindof(v) == BL_JSON_INT;
}

static bool is_string(const bl_json *v)
{
    return v && bl_json_kindof(v) == BL_JSON_STRING;
}

/* The description's fields merge compares, present and of their kinds. */
static bool description_whole(const bl_json *d)
{
    static const char *const strings[] = {"plan_id", "engine_version", "runtime_fingerprint",
                                          "source_sha256", "recording"};
    if (!d || bl_json_kindof(d) != BL_JSON_OBJECT || !is_int(bl_json_get(d, "part")) ||
        !is_int(bl_json_get(d, "parts")) || !is_int(bl_json_get(d, "jobs")))
        return false;
    for (size_t k = 0; k < sizeof strings / sizeof *strings; k++)
        if (!is_string(bl_json_get(d, strings[k])))
            return false;
    const bl_json *ids = bl_json_get(d, "calibrations"), *ranges = bl_json_get(d, "job_ranges");
    if (!ids || bl_json_kindof(ids) != BL_JSON_ARRAY || !ranges ||
        bl_json_kindof(ranges) != BL_JSON_ARRAY ||
        bl_json_kindof(bl_json_get(d, "execution")) != BL_JSON_OBJECT)
        return false;
    for (size_t k = 0; k < bl_json_size(ids); k++)
        if (!is_string(bl_json_at(ids, k)))
            return false;
    return true;
}

/* The shard's calibrations, which must be the ones its description lists. */
static bl_status read_calibrations(const char *path, bl_shard *s, bl_error *err)
{
    const bl_json *ids = bl_json_get(s->description, "calibrations");
    if (bl_json_size(ids) == 0)
        return BL_OK;
    char *file = bl_record_path_join(path, BL_SHARD_CALIBRATIONS);
    if (!file)
        return bl_fail(err, BL_ENOMEM, "out of memory for a path");
    bl_status st = bl_calibrations_read_file(file, &s->calibrations, &s->ncalibrations, err);
    bl_free(file);
    if (st != BL_OK)
        return st;
    bool same = s->ncalibrations == bl_json_size(ids);
    for (size_t k = 0; same && k < s->ncalibrations; k++)
        same = strcmp(s->calibrations[k]->id, bl_json_get_string(bl_json_at(ids, k), NULL)) == 0;
    return same ? BL_OK
                : bl_fail(err, BL_EVALUE, "%s: shard calibrations do not match its manifest",
                          path);
}

bl_status bl_shard_read(const char *path, bl_shard *out, bl_error *err)
{
    memset(out, 0, sizeof *out);
    bl_json *map = NULL;
    bl_error why = {0};
    bl_status st = bl_record_inspect(path, &map, &why);
    if (st != BL_OK)
        return bl_fail(err, st, "%s: %s", path, why.msg);
    const bl_json *manifest = bl_json_get(map, "manifest");
    const bl_json *kind = bl_json_get(manifest, "kind");
    const char *status = bl_json_get_string(bl_json_get(map, "status"), NULL);
    if (!is_string(kind) || strcmp(bl_json_get_string(kind, NULL), "shard") != 0)
        st = bl_fail(err, BL_EVALUE, "%s: not a shard record", path);
    else if (!bl_json_get_bool(bl_json_get(map, "checksums_valid")))
        st = bl_fail(err, BL_EVALUE, "%s: shard artifacts do not match their checksums", path);
    else if (!bl_json_get_bool(bl_json_get(map, "complete")))
        st = bl_fail(err, BL_EVALUE, "%s: shard is not complete (status: %s)", path, status);
    else if (!description_whole(bl_json_get(manifest, "shard")))
        st = bl_fail(err, BL_EVALUE, "%s: shard manifest has no valid shard description", path);
    if (st != BL_OK) {
        bl_json_destroy(map);
        return st;
    }
    /* The manifest outlives the inspection map. */
    out->manifest = bl_json_copy(manifest);
    bl_json_destroy(map);
    if (!out->manifest)
        return bl_fail(err, BL_ENOMEM, "out of memory for a shard manifest");
    out->description = bl_json_get(out->manifest, "shard");
    out->part = bl_json_get_int(bl_json_get(out->description, "part"));
    out->parts = bl_json_get_int(bl_json_get(out->description, "parts"));
    const bl_json *dj = bl_json_get(bl_json_get(out->manifest, "artifact_sha256"),
                                    BL_SHARD_PART);
    const char *digest = is_string(dj) ? bl_json_get_string(dj, NULL) : NULL;
    st = bl_record_artifact_read(path, BL_SHARD_PART, digest, SHARD_PART_MAX, "shard part",
                                 &out->bytes, &out->len, &why);
    if (st != BL_OK)
        st = bl_fail(err, st, "%s: %s", path, why.msg);
    if (st == BL_OK)
        st = read_calibrations(path, out, err);
    if (st != BL_OK)
        bl_shard_clear(out);
    return st;
}
