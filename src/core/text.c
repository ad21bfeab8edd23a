/* Text helpers shared across the project (brainlesslab/text.h): strict UTF-8
 * decoding, Python's repr of a str, and the control-character escaper for
 * user text on a terminal. */
#include <string.h>

#include "brainlesslab/text.h"
#include "text_internal.h"

size_t bl_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n > len)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

bool bl_utf8_valid(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t len = bl_utf8_decode(s + i, n - i, &cp);
        if (len == 0)
            return false;
        i += len;
    }
    return true;
}

size_t bl_text_append_plain(bl_buf *out, const char *s, size_t i, size_t len, bool json)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t run = i;
    while (run < len && u[run] >= 0x20 && u[run] < 0x7f &&
           !(json && (u[run] == '"' || u[run] == '\\')))
        run++;
    if (run > i)
        bl_buf_append(out, s + i, run - i);
    return run;
}

void bl_repr_string(bl_buf *b, const char *s, size_t n)
{
    bool has_single = memchr(s, '\'', n) != NULL, has_double = memchr(s, '"', n) != NULL;
    char q = has_single && !has_double ? '"' : '\'';
    bl_buf_putc(b, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == (unsigned char)q) {
            bl_buf_putc(b, '\\');
            bl_buf_putc(b, (char)c);
        } else if (c == '\n') {
            bl_buf_puts(b, "\\n");
        } else if (c == '\r') {
            bl_buf_puts(b, "\\r");
        } else if (c == '\t') {
            bl_buf_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            bl_buf_printf(b, "\\x%02x", c);
        } else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] <= 0xa0) {
            bl_buf_printf(b, "\\x%02x", (unsigned char)s[i + 1]);
            i++;
        } else {
            bl_buf_putc(b, (char)c);
        }
    }
    bl_buf_putc(b, q);
}

bool bl_escape_controls(bl_buf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t run = bl_text_append_plain(out, s, i, len, false);
        if (run > i) {
            i = run;
            continue;
        }
        uint32_t cp;
        size_t n = bl_utf8_decode(u + i, len - i, &cp);
        if (n == 0) {
            n = 1; /* a stray byte: escape it alone and resynchronise after it */
            cp = u[i];
        } else if (cp == '\n' || cp == '\r' || cp == '\t') {
            bl_buf_puts(out, cp == '\n' ? "\\n" : cp == '\r' ? "\\r" : "\\t");
            i += n;
            continue;
        } else if (cp >= 0x20 && (cp < 0x7f || cp > 0xa0)) {
            bl_buf_append(out, s + i, n);
            i += n;
            continue;
        }
        const char esc[4] = {'\\', 'x', hex[cp >> 4], hex[cp & 0xf]};
        bl_buf_append(out, esc, sizeof esc);
        i += n;
    }
    return !out->failed;
}
