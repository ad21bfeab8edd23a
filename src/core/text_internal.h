/* Shared between the core's text writers (text.c, json_text.c); not public. */
#ifndef BL_CORE_TEXT_INTERNAL_H
#define BL_CORE_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "brainlesslab/buf.h"

/* Appends the run of printable ASCII that starts at s[i] in one piece (with
 * `json`, a quote or a backslash ends it too, since JSON escapes them);
 * returns the index after the run (i when there is none). */
size_t bl_text_append_plain(bl_buf *out, const char *s, size_t i, size_t len, bool json);

#endif
