/* Text helpers shared by every serialiser and message writer: strict UTF-8
 * decoding, Python's repr of a str, and the escaping of control characters
 * in text that came from a user. They live once, here, so that a plan's
 * labels, a task option's message and a terminal line escape alike. */
#ifndef BRAINLESSLAB_TEXT_H
#define BRAINLESSLAB_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/buf.h"

/* Decodes the UTF-8 sequence at s (len >= 1 bytes left), strictly: no
 * overlong forms, no surrogates, nothing above U+10FFFF. Returns its length
 * in bytes with the code point in *cp, or 0 if it is invalid. */
size_t bl_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);
/* Whether all `n` bytes of `text` are valid UTF-8 (as bl_utf8_decode). */
bool bl_utf8_valid(const char *text, size_t n);

/* Python's repr of a str appended to `b`: single quotes unless the text
 * holds a single quote and no double quote. ASCII controls and
 * U+0080..U+00A0 (not printable in Python) are escaped as \xNN; other
 * non-ASCII characters are written as they are (Python keeps printable ones;
 * the rare non-printable code points above U+00A0 are an accepted,
 * documented difference). Its bytes reach contract hashes through sweep
 * labels: they must never change. Out of memory latches in `b`. */
void bl_repr_string(bl_buf *b, const char *s, size_t n);

/* Text that came from a user (an id, a label, a path) made safe to print on
 * a terminal, as Python's repr writes such characters inside a string: C0
 * controls and DEL as \n, \r, \t or \xNN (\x07, \x1b, \x7f), U+0080..U+00A0
 * (the C1 controls, and the no-break space Python's repr escapes too; the
 * same range as bl_repr_string) as \xNN of the code point (\x85), and every
 * byte that is not valid UTF-8 as \xNN of the byte. Everything else, other
 * non-ASCII text, backslashes and quotes included, is copied as it is, so a
 * message that already quotes a value with repr stays the reference's text.
 * Appends to `out`; false when it ran out of memory. */
bool bl_escape_controls(bl_buf *out, const char *s, size_t len);

#endif
