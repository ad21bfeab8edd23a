/* The replay viewer page (web/), compiled into the CLI at build time by
 * tools/web_embed.c so that `brainlesslab replays` can write it next to the
 * replays without finding the source tree. */
#ifndef BL_CLI_WEB_ASSETS_H
#define BL_CLI_WEB_ASSETS_H

#include <stddef.h>

typedef struct bl_web_asset {
    const char *name;          /* base name, e.g. "index.html" */
    const unsigned char *data; /* its bytes */
    size_t len;
} bl_web_asset;

extern const bl_web_asset bl_web_assets[];
extern const size_t bl_web_nassets;

#endif
