/* The program's version and the versions of the libraries it runs on. */
#ifndef BRAINLESSLAB_VERSION_H
#define BRAINLESSLAB_VERSION_H

#include "brainlesslab/buf.h"

const char *bl_version(void);
/* One "name version" line per component, program first, then every library
 * the program links: jansson, libcrypto, Random123, toml++, libzip, zlib and
 * OpenMP (its specification date and runtime library). */
void bl_version_report(bl_buf *out);

#endif
