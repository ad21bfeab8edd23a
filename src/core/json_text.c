/* The scalar pieces of JSON writing that other serialisers share: Python
 * json.dumps string escaping and Python repr of floats. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brainlesslab/json.h"
#include "brainlesslab/text.h"
#include "text_internal.h"

bl_status bl_json_write_string(bl_buf *out, const char *s, size_t len, bool ascii,
                               bl_error *err)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    bl_buf_putc(out, '"');
    size_t i = 0;
    while (i < len) {
        size_t run = bl_text_append_plain(out, s, i, len, true);
        if (run > i) {
            i = run;
            continue;
        }
        uint32_t cp;
        size_t n = bl_utf8_decode(u + i, len - i, &cp);
        if (n == 0)
            return bl_fail(err, BL_EVALUE, "string is not valid UTF-8 (byte %zu)", i);
        char esc[16];
        switch (cp) {
        case '"': bl_buf_puts(out, "\\\""); break;
        case '\\': bl_buf_puts(out, "\\\\"); break;
        case '\n': bl_buf_puts(out, "\\n"); break;
        case '\r': bl_buf_puts(out, "\\r"); break;
        case '\t': bl_buf_puts(out, "\\t"); break;
        case '\b': bl_buf_puts(out, "\\b"); break;
        case '\f': bl_buf_puts(out, "\\f"); break;
        default:
            if (cp < 0x20 || (ascii && cp >= 0x7f)) {
                /* Python escapes DEL only in ASCII mode; control characters always. */
                unsigned long units[2] = {cp, 0};
                int nu = 1;
                if (cp >= 0x10000) {
                    unsigned long v = cp - 0x10000;
                    units[0] = 0xd800 | (v >> 10);
                    units[1] = 0xdc00 | (v & 0x3ff);
                    nu = 2;
                }
                for (int k = 0; k < nu; k++) {
                    esc[0] = '\\', esc[1] = 'u';
                    for (int d = 0; d < 4; d++)
                        esc[2 + d] = hex[(units[k] >> (12 - 4 * d)) & 0xf];
                    bl_buf_append(out, esc, 6);
                }
            } else {
                bl_buf_append(out, s + i, n);
            }
        }
        i += n;
    }
    bl_buf_putc(out, '"');
    return bl_buf_status(out, err);
}

/* Splits "%.*e" text into its significant digits (no dot) and exponent. */
static int split_scientific(const char *text, char *digits, int *ndigits)
{
    const char *e = strchr(text, 'e');
    int m = 0;
    for (const char *p = text; p < e; p++)
        if (*p != '.')
            digits[m++] = *p;
    digits[m] = '\0';
    *ndigits = m;
    return atoi(e + 1);
}

/* Shortest round-trip digits of a finite positive v (David Gay's mode 0, as
 * Python's repr): the fewest significant digits that read back as v, and of
 * those the nearest to v. Writes the digits without trailing zeros and returns
 * the decimal exponent of the first digit (v = d.ddd x 10^exp). */
static int shortest_digits(double v, char digits[32])
{
    char text[40];
    int m = 0, exp10 = 0;
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(text, sizeof text, "%.*e", prec - 1, v);
        exp10 = split_scientific(text, digits, &m);
        double back = strtod(text, NULL);
        if (back == v)
            break;
        if (back < v) {
            /* The nearest prec-digit decimal lies below v and misses it. Just
             * above a power of two the rounding interval is twice as wide as
             * below, so the next decimal up may still read back as v; it is
             * then the answer at this length (only this side can be lopsided:
             * the nearest decimal always wins on the wider side). */
            char up[32];
            memcpy(up, digits, (size_t)m + 1);
            int k = m - 1, upexp = exp10;
            while (k >= 0 && up[k] == '9')
                up[k--] = '0';
            if (k < 0) {
                up[0] = '1';
                upexp++;
            } else {
                up[k]++;
            }
            snprintf(text, sizeof text, "%c.%se%d", up[0], m > 1 ? up + 1 : "0", upexp);
            if (strtod(text, NULL) == v) {
                memcpy(digits, up, (size_t)m + 1);
                exp10 = upexp;
                break;
            }
        }
    }
    /* 17 significant digits always round-trip a double. */
    while (m > 1 && digits[m - 1] == '0')
        digits[--m] = '\0';
    return exp10;
}

bool bl_json_write_double(bl_buf *out, double v)
{
    if (!isfinite(v))
        return false;
    if (v == 0.0)
        return bl_buf_puts(out, signbit(v) ? "-0.0" : "0.0");
    char digits[32];
    int exp10 = shortest_digits(fabs(v), digits);
    int nd = (int)strlen(digits);
    char text[64];
    int t = 0;
    if (signbit(v))
        text[t++] = '-';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 < 0) {
            text[t++] = '0';
            text[t++] = '.';
            for (int z = -1; z > exp10; z--)
                text[t++] = '0';
            memcpy(text + t, digits, (size_t)nd);
            t += nd;
        } else {
            for (int d = 0; d <= exp10; d++)
                text[t++] = d < nd ? digits[d] : '0';
            text[t++] = '.';
            if (nd > exp10 + 1) {
                memcpy(text + t, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
                t += nd - exp10 - 1;
            } else {
                text[t++] = '0';
            }
        }
        text[t] = '\0';
    } else {
        text[t++] = digits[0];
        if (nd > 1) {
            text[t++] = '.';
            memcpy(text + t, digits + 1, (size_t)(nd - 1));
            t += nd - 1;
        }
        snprintf(text + t, sizeof text - (size_t)t, "e%c%02d", exp10 < 0 ? '-' : '+',
                 exp10 < 0 ? -exp10 : exp10);
    }
    return bl_buf_puts(out, text);
}
