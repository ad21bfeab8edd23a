#include "brainlesslab/version.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <zip.h>
#include <zlib.h>

#include "build_info.h"

const char *bl_version(void) { return BL_VERSION; }

/* Run-time versions where a library can tell (jansson, libcrypto, libzip,
 * zlib: the shared object actually loaded), otherwise what the build
 * compiled against: the Debian package of the header-only Random123, the
 * version header of the header-only toml++ (read at configure time), and
 * the OpenMP specification date the compiler implements, with its runtime. */
void bl_version_report(bl_buf *out)
{
    bl_buf_printf(out, "brainlesslab %s (%s build, %s)\n", BL_VERSION, BL_BUILD_TYPE,
                  BL_C_COMPILER);
    bl_buf_printf(out, "jansson %s\n", jansson_version_str());
    bl_buf_printf(out, "libcrypto %s\n", OpenSSL_version(OPENSSL_VERSION_STRING));
    bl_buf_printf(out, "Random123 %s\n", BL_RANDOM123_VERSION);
    bl_buf_printf(out, "toml++ %s\n", BL_TOMLPP_VERSION);
    bl_buf_printf(out, "libzip %s\n", zip_libzip_version());
    bl_buf_printf(out, "zlib %s\n", zlibVersion());
#ifdef _OPENMP
    bl_buf_printf(out, "OpenMP %ld (%s)\n", (long)_OPENMP, BL_OPENMP_LIB);
#endif
}
