/* Internal to src/records: the embedded source bundle. These are defined by
 * the C source that tools/source_bundle.c generates at build time into the
 * build directory (see tools/provenance.cmake); provenance.c serves them
 * through bl_source_bundle and bl_source_bundle_sha256. */
#ifndef BL_RECORDS_PROVENANCE_BUNDLE_H
#define BL_RECORDS_PROVENANCE_BUNDLE_H

#include <stddef.h>

extern const unsigned char bl_bundle_bytes[];
extern const size_t bl_bundle_size;
/* Lowercase hex SHA-256 of the bytes, computed by the generator. */
extern const char bl_bundle_sha256[65];

#endif
