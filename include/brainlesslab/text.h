/* Text helpers shared by every module that checks or writes text: strict
 * UTF-8 validation, once, so that a zip member's name and a host's text
 * read from /proc are judged alike. */
#ifndef BRAINLESSLAB_TEXT_H
#define BRAINLESSLAB_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether all `n` bytes of `text` are valid UTF-8, strictly: no overlong
 * forms, no surrogates, nothing above U+10FFFF. */
bool bl_utf8_valid(const char *text, size_t n);

#endif
