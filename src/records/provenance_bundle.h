/* Internal to src/records: the embedded source bundle and its receipt.
 * The data are defined by the C source that tools/source_bundle.c
 * generates at build time into the build directory (see
 * tools/provenance.cmake); provenance.c serves them through
 * bl_source_bundle, bl_source_bundle_sha256 and bl_source_receipt. */
#ifndef BL_RECORDS_PROVENANCE_BUNDLE_H
#define BL_RECORDS_PROVENANCE_BUNDLE_H

#include <stddef.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/status.h"

extern const unsigned char bl_bundle_bytes[];
extern const size_t bl_bundle_size;
/* Lowercase hex SHA-256 of the bytes, computed by the generator. */
extern const char bl_bundle_sha256[65];
/* The exact bytes of environment/source.json for this bundle, computed by
 * the generator with bl_source_receipt_text_of (not NUL-terminated). */
extern const unsigned char bl_bundle_receipt[];
extern const size_t bl_bundle_receipt_size;

/* The receipt of an archive held in memory (source_receipt.c): hashes the
 * archive and every member (bl_zip_visit's checks apply). This is the
 * computation the generator runs once per build; at run time only the
 * tests run it, to prove the embedded receipt equals it. */
bl_status bl_source_receipt_of(const void *zip, size_t len, bl_json **out, bl_error *err);
/* The same receipt as record JSON text, appended to `out`. */
bl_status bl_source_receipt_text_of(const void *zip, size_t len, bl_buf *out, bl_error *err);

#endif
