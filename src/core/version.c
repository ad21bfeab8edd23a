#include "brainlesslab/version.h"

#include <jansson.h>
#include <openssl/crypto.h>

#include "build_info.h"

const char *bl_version(void) { return BL_VERSION; }

void bl_version_report(bl_buf *out)
{
    bl_buf_printf(out, "brainlesslab %s (%s build, %s)\n", BL_VERSION, BL_BUILD_TYPE,
                  BL_C_COMPILER);
    bl_buf_printf(out, "jansson %s\n", jansson_version_str());
    bl_buf_printf(out, "libcrypto %s\n", OpenSSL_version(OPENSSL_VERSION_STRING));
    bl_buf_printf(out, "Random123 %s\n", BL_RANDOM123_VERSION);
}
