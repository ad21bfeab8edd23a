/* .npy reader (NumPy format versions 1.0 and 2.0).
 *
 * Strict on purpose: the files come from the reference, so anything NumPy
 * would not have written for the dtypes we know (another dtype, big-endian,
 * Fortran order, a malformed header, a size that does not match the data,
 * bytes after the data) is reported rather than guessed at. Where NumPy's
 * own reader is laxer we say so below:
 *  - bytes after the data are an error (np.load ignores them);
 *  - repeated header keys are an error (Python keeps the last one);
 *  - a bool byte other than 0 or 1 is an error (NumPy reads it as True);
 *  - only the descr spellings NumPy writes are accepted ('|i1', not '<i1'). */
#include "brainlesslab/npy.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/file.h"

/* The data are copied as they are in the file: little-endian IEEE numbers
 * and two's-complement integers must be the host's own representation. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the .npy reader copies little-endian data as is");
#else
#error "cannot tell the host byte order; the .npy reader needs a little-endian host"
#endif
_Static_assert(sizeof(double) == 8 && sizeof(float) == 4, "IEEE binary64/binary32 expected");

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_PREAMBLE_MAX 12 /* magic, version, 4-byte header length */

static const struct {
    const char *descr;
    bl_npy_dtype dtype;
    size_t itemsize;
} known_dtypes[] = {
    {"<f8", BL_NPY_F8, 8}, {"<f4", BL_NPY_F4, 4}, {"<i8", BL_NPY_I8, 8},
    {"<i4", BL_NPY_I4, 4}, {"|i1", BL_NPY_I1, 1}, {"|b1", BL_NPY_B1, 1},
};

/* What the header says, before any data is looked at. */
typedef struct npy_header {
    bl_npy_dtype dtype;
    size_t itemsize;
    int ndim;
    size_t shape[BL_NPY_MAX_DIMS];
    size_t count;
    size_t nbytes;
} npy_header;

/* ---- preamble ---------------------------------------------------------- */

/* Reads magic, version and header length from the first `len` bytes; sets
 * *header_start (10 or 12) and *header_len. */
static bl_status parse_preamble(const unsigned char *b, size_t len, const char *what,
                                size_t *header_start, size_t *header_len, bl_error *err)
{
    if (len < NPY_MAGIC_LEN + 2 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
        /* A prefix of the magic is a truncated file, anything else is not ours. */
        size_t k = len < NPY_MAGIC_LEN ? len : NPY_MAGIC_LEN;
        if (k == 0 || memcmp(b, NPY_MAGIC, k) == 0)
            return bl_fail(err, BL_EVALUE, "%s: truncated .npy file (%zu bytes)", what, len);
        return bl_fail(err, BL_EVALUE, "%s: not a .npy file (bad magic)", what);
    }
    unsigned major = b[6], minor = b[7];
    size_t lenbytes;
    if (major == 1 && minor == 0)
        lenbytes = 2;
    else if (major == 2 && minor == 0)
        lenbytes = 4;
    else
        return bl_fail(err, BL_EVALUE, "%s: unsupported .npy format version %u.%u (1.0 and 2.0 are read)",
                       what, major, minor);
    if (len < 8 + lenbytes)
        return bl_fail(err, BL_EVALUE, "%s: truncated .npy header", what);
    size_t hl = 0;
    for (size_t i = lenbytes; i-- > 0;)
        hl = (hl << 8) | b[8 + i];
    *header_start = 8 + lenbytes;
    *header_len = hl;
    return BL_OK;
}

/* ---- header dict -------------------------------------------------------- */

/* The header is a Python dict literal; this is the subset of Python's
 * literal syntax NumPy writes, with its whitespace rules relaxed as Python's
 * are inside brackets. */
typedef enum tok_kind {
    TOK_END, TOK_LBRACE, TOK_RBRACE, TOK_LPAREN, TOK_RPAREN, TOK_COLON, TOK_COMMA,
    TOK_STRING, TOK_INT, TOK_TRUE, TOK_FALSE, TOK_OTHER,
} tok_kind;

typedef struct lexer {
    const char *p, *end;
    /* the current token */
    tok_kind kind;
    const char *text; /* TOK_STRING: contents without quotes; TOK_OTHER: the word */
    size_t text_len;
    uint64_t value;   /* TOK_INT */
    bool overflow;    /* TOK_INT larger than uint64 */
    bool bad_string;  /* TOK_STRING unterminated or holding an escape */
} lexer;

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_word(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static void lex_next(lexer *lx)
{
    while (lx->p < lx->end && is_space(*lx->p))
        lx->p++;
    lx->text = lx->p;
    lx->text_len = 0;
    lx->overflow = false;
    lx->bad_string = false;
    if (lx->p == lx->end) {
        lx->kind = TOK_END;
        return;
    }
    char c = *lx->p;
    const char *punct = "{}():,";
    const tok_kind punct_kinds[] = {TOK_LBRACE, TOK_RBRACE, TOK_LPAREN, TOK_RPAREN, TOK_COLON, TOK_COMMA};
    const char *hit = c ? strchr(punct, c) : NULL;
    if (hit) {
        lx->kind = punct_kinds[hit - punct];
        lx->text_len = 1;
        lx->p++;
        return;
    }
    if (c == '\'' || c == '"') {
        const char *s = ++lx->p;
        while (lx->p < lx->end && *lx->p != c && *lx->p != '\\' && *lx->p != '\n')
            lx->p++;
        lx->kind = TOK_STRING;
        lx->text = s;
        lx->text_len = (size_t)(lx->p - s);
        if (lx->p == lx->end || *lx->p != c)
            lx->bad_string = true;
        else
            lx->p++;
        return;
    }
    if (is_word(c)) {
        const char *s = lx->p;
        while (lx->p < lx->end && is_word(*lx->p))
            lx->p++;
        lx->text = s;
        lx->text_len = (size_t)(lx->p - s);
        if (lx->text_len == 4 && memcmp(s, "True", 4) == 0) {
            lx->kind = TOK_TRUE;
        } else if (lx->text_len == 5 && memcmp(s, "False", 5) == 0) {
            lx->kind = TOK_FALSE;
        } else {
            /* Python's decimal integer literal: no sign, no leading zeros,
             * no underscores (NumPy never writes them). */
            bool digits = true;
            for (size_t i = 0; i < lx->text_len; i++)
                digits = digits && s[i] >= '0' && s[i] <= '9';
            if (!digits || (lx->text_len > 1 && s[0] == '0')) {
                lx->kind = TOK_OTHER;
                return;
            }
            lx->kind = TOK_INT;
            lx->value = 0;
            for (size_t i = 0; i < lx->text_len; i++) {
                uint64_t dig = (uint64_t)(s[i] - '0');
                if (lx->value > (UINT64_MAX - dig) / 10)
                    lx->overflow = true;
                else
                    lx->value = lx->value * 10 + dig;
            }
        }
        return;
    }
    lx->kind = TOK_OTHER;
    lx->text_len = 1;
    lx->p++;
}

/* Shows a token's text in a message: quoted, bounded, printable, so that a
 * damaged header cannot put control bytes or pages of text into the line. */
static const char *tok_show(const lexer *lx, char *buf, size_t size)
{
    if (lx->kind == TOK_END)
        return "the end of the header";
    size_t n = lx->text_len < 32 ? lx->text_len : 32, o = 0;
    buf[o++] = '\'';
    for (size_t i = 0; i < n && o + 5 < size; i++) {
        unsigned char c = (unsigned char)lx->text[i];
        buf[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (n < lx->text_len) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '\'';
    buf[o] = '\0';
    return buf;
}

static bl_status malformed(const lexer *lx, const char *what, const char *expected, bl_error *err)
{
    char shown[48];
    return bl_fail(err, BL_EVALUE, "%s: malformed .npy header: expected %s, found %s", what,
                   expected, tok_show(lx, shown, sizeof shown));
}

static bool str_is(const lexer *lx, const char *s)
{
    return lx->text_len == strlen(s) && memcmp(lx->text, s, lx->text_len) == 0;
}

static bl_status parse_descr(const lexer *lx, const char *what, npy_header *h, bl_error *err)
{
    if (lx->kind != TOK_STRING) {
        /* Structured dtypes are lists of fields; not something we read. */
        return bl_fail(err, BL_EVALUE, "%s: unsupported dtype (descr is not a simple type string)", what);
    }
    for (size_t i = 0; i < sizeof known_dtypes / sizeof *known_dtypes; i++) {
        if (str_is(lx, known_dtypes[i].descr)) {
            h->dtype = known_dtypes[i].dtype;
            h->itemsize = known_dtypes[i].itemsize;
            return BL_OK;
        }
    }
    char shown[48];
    tok_show(lx, shown, sizeof shown);
    if (lx->text_len == 3 && lx->text[0] == '>') {
        for (size_t i = 0; i < sizeof known_dtypes / sizeof *known_dtypes; i++)
            if (known_dtypes[i].descr[0] == '<' && memcmp(lx->text + 1, known_dtypes[i].descr + 1, 2) == 0)
                return bl_fail(err, BL_EVALUE, "%s: big-endian dtype %s is not supported", what, shown);
    }
    if (lx->text_len >= 2 && lx->text[1] == 'O')
        return bl_fail(err, BL_EVALUE, "%s: object arrays (%s) are not supported", what, shown);
    return bl_fail(err, BL_EVALUE, "%s: unsupported dtype %s (f8, f4, i8, i4, i1 and b1 are read)",
                   what, shown);
}

/* Parses "( INT , ... )" with Python's tuple rules: "()" and "(n,)" but not "(n)". */
static bl_status parse_shape(lexer *lx, const char *what, npy_header *h, bl_error *err)
{
    if (lx->kind != TOK_LPAREN)
        return bl_fail(err, BL_EVALUE, "%s: malformed .npy header: shape is not a tuple", what);
    int nd = 0;
    bool comma_seen = false;
    lex_next(lx);
    while (lx->kind != TOK_RPAREN) {
        if (lx->kind != TOK_INT)
            return malformed(lx, what, "a non-negative integer in shape", err);
        if (nd == BL_NPY_MAX_DIMS)
            return bl_fail(err, BL_EVALUE, "%s: arrays of more than %d dimensions are not supported",
                           what, BL_NPY_MAX_DIMS);
        /* NumPy's sizes are signed (npy_intp); nothing larger can exist. */
        if (lx->overflow || lx->value > (uint64_t)PTRDIFF_MAX)
            return bl_fail(err, BL_EVALUE, "%s: shape dimension too large", what);
        h->shape[nd++] = (size_t)lx->value;
        lex_next(lx);
        if (lx->kind == TOK_COMMA) {
            comma_seen = true;
            lex_next(lx);
        } else if (lx->kind != TOK_RPAREN) {
            return malformed(lx, what, "',' or ')' in shape", err);
        }
    }
    if (nd == 1 && !comma_seen)
        return bl_fail(err, BL_EVALUE, "%s: malformed .npy header: shape is not a tuple", what);
    h->ndim = nd;
    /* NumPy's own check: the non-zero dimensions times the item size must
     * fit in npy_intp, even when a zero dimension makes the array empty. */
    size_t bytes = h->itemsize, count = 1;
    for (int i = 0; i < nd; i++) {
        if (h->shape[i] == 0) {
            count = 0;
            continue;
        }
        if (bytes > (size_t)PTRDIFF_MAX / h->shape[i])
            return bl_fail(err, BL_EVALUE, "%s: shape overflows (array too big)", what);
        bytes *= h->shape[i];
        count *= h->shape[i];
    }
    h->count = count;
    h->nbytes = count * h->itemsize;
    return BL_OK;
}

static bl_status parse_header(const char *text, size_t len, const char *what, npy_header *h,
                              bl_error *err)
{
    enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };
    unsigned seen = 0;
    bl_status st;
    lexer lx = {.p = text, .end = text + len};
    /* The shape's item-size check needs the dtype, which may come later. */
    lexer shape_at = {0};

    lex_next(&lx);
    if (lx.kind != TOK_LBRACE)
        return bl_fail(err, BL_EVALUE, "%s: malformed .npy header: not a dict", what);
    lex_next(&lx);
    while (lx.kind != TOK_RBRACE) {
        if (lx.kind != TOK_STRING || lx.bad_string)
            return malformed(&lx, what, "a quoted key", err);
        unsigned key = str_is(&lx, "descr") ? KEY_DESCR
                       : str_is(&lx, "fortran_order") ? KEY_FORTRAN
                       : str_is(&lx, "shape") ? KEY_SHAPE : 0;
        if (!key) {
            char shown[48];
            return bl_fail(err, BL_EVALUE, "%s: malformed .npy header: unexpected key %s", what,
                           tok_show(&lx, shown, sizeof shown));
        }
        if (seen & key)
            return bl_fail(err, BL_EVALUE, "%s: malformed .npy header: repeated key", what);
        seen |= key;
        lex_next(&lx);
        if (lx.kind != TOK_COLON)
            return malformed(&lx, what, "':'", err);
        lex_next(&lx);
        if (key == KEY_DESCR) {
            if (lx.kind == TOK_STRING && lx.bad_string)
                return malformed(&lx, what, "a closed string", err);
            if ((st = parse_descr(&lx, what, h, err)) != BL_OK)
                return st;
            lex_next(&lx);
        } else if (key == KEY_FORTRAN) {
            if (lx.kind == TOK_TRUE)
                return bl_fail(err, BL_EVALUE, "%s: fortran_order True is not supported", what);
            if (lx.kind != TOK_FALSE)
                return malformed(&lx, what, "True or False for fortran_order", err);
            lex_next(&lx);
        } else {
            /* Skip over the tuple now, measure it once the dtype is known. */
            shape_at = lx;
            while (lx.kind != TOK_RPAREN && lx.kind != TOK_END && lx.kind != TOK_RBRACE)
                lex_next(&lx);
            if (shape_at.kind == TOK_LPAREN && lx.kind == TOK_RPAREN)
                lex_next(&lx);
        }
        if (lx.kind == TOK_COMMA)
            lex_next(&lx);
        else if (lx.kind != TOK_RBRACE)
            return malformed(&lx, what, "',' or '}'", err);
    }
    lex_next(&lx);
    if (lx.kind != TOK_END)
        return malformed(&lx, what, "nothing after the header dict", err);
    if (seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE)) {
        const char *missing = !(seen & KEY_DESCR) ? "descr" : !(seen & KEY_FORTRAN) ? "fortran_order" : "shape";
        return bl_fail(err, BL_EVALUE, "%s: malformed .npy header: no '%s' key", what, missing);
    }
    return parse_shape(&shape_at, what, h, err);
}

/* ---- assembly ----------------------------------------------------------- */

static bl_status new_array(const npy_header *h, const char *what, bl_npy **out, bl_error *err)
{
    bl_npy *a = bl_malloc(sizeof *a);
    if (!a)
        goto fail;
    memset(a, 0, sizeof *a);
    a->dtype = h->dtype;
    a->itemsize = h->itemsize;
    a->ndim = h->ndim;
    memcpy(a->shape, h->shape, sizeof a->shape);
    a->count = h->count;
    a->data = bl_malloc(h->nbytes);
    if (!a->data)
        goto fail;
    *out = a;
    return BL_OK;
fail:
    bl_free(a);
    return bl_fail(err, BL_ENOMEM, "%s: out of memory for %zu bytes of array data", what, h->nbytes);
}

static bl_status check_bools(const bl_npy *a, const char *what, bl_error *err)
{
    if (a->dtype != BL_NPY_B1)
        return BL_OK;
    const unsigned char *b = a->data;
    for (size_t i = 0; i < a->count; i++)
        if (b[i] > 1)
            return bl_fail(err, BL_EVALUE, "%s: bool element %zu holds byte %u (0 or 1 expected)",
                           what, i, b[i]);
    return BL_OK;
}

static bl_status size_mismatch(const char *what, size_t expected, size_t found, bl_error *err)
{
    if (found < expected)
        return bl_fail(err, BL_EVALUE, "%s: truncated .npy data (%zu bytes expected, %zu found)",
                       what, expected, found);
    return bl_fail(err, BL_EVALUE, "%s: %zu unexpected bytes after the .npy data", what, found - expected);
}

bl_status bl_npy_parse(const void *bytes, size_t len, const char *what, bl_npy **out, bl_error *err)
{
    const unsigned char *b = bytes;
    size_t start, hlen;
    npy_header h = {0};
    bl_npy *a = NULL;
    bl_status st;

    *out = NULL;
    if ((st = parse_preamble(b, len, what, &start, &hlen, err)) != BL_OK)
        return st;
    if (hlen > len - start)
        return bl_fail(err, BL_EVALUE, "%s: truncated .npy header", what);
    if ((st = parse_header((const char *)b + start, hlen, what, &h, err)) != BL_OK)
        return st;
    size_t have = len - start - hlen;
    if (have != h.nbytes)
        return size_mismatch(what, h.nbytes, have, err);
    if ((st = new_array(&h, what, &a, err)) != BL_OK)
        return st;
    if (h.nbytes)
        memcpy(a->data, b + start + hlen, h.nbytes);
    if ((st = check_bools(a, what, err)) != BL_OK)
        goto fail;
    *out = a;
    return BL_OK;
fail:
    bl_npy_destroy(a);
    return st;
}

bl_status bl_npy_read(const char *path, bl_npy **out, bl_error *err)
{
    unsigned char pre[NPY_PREAMBLE_MAX];
    char *header = NULL;
    bl_npy *a = NULL;
    npy_header h = {0};
    size_t got, start, hlen;
    bl_status st;

    *out = NULL;
    /* Only a regular file: a FIFO could stall the reader forever. */
    int fd;
    uint64_t size;
    if ((st = bl_file_open(path, 0, &fd, &size, err)) != BL_OK)
        return st;
    /* The size is known up front, so a lying header cannot make us
     * allocate more than the file holds. */
    bool sized = true;
    size_t fsize = (size_t)size;

    if ((st = bl_file_read_upto(fd, pre, sizeof pre, &got, path, err)) != BL_OK)
        goto fail;
    if ((st = parse_preamble(pre, got, path, &start, &hlen, err)) != BL_OK)
        goto fail;
    if (got > fsize)
        sized = false; /* it grew since fstat: trust only what read() says */
    if (sized && hlen > fsize - start) {
        st = bl_fail(err, BL_EVALUE, "%s: truncated .npy header", path);
        goto fail;
    }
    header = bl_malloc(hlen);
    if (!header) {
        st = bl_fail(err, BL_ENOMEM, "%s: out of memory for a %zu-byte .npy header", path, hlen);
        goto fail;
    }
    /* The preamble read may already hold the first header bytes. */
    size_t early = got - start < hlen ? got - start : hlen;
    memcpy(header, pre + start, early);
    size_t rest;
    if ((st = bl_file_read_upto(fd, header + early, hlen - early, &rest, path, err)) != BL_OK)
        goto fail;
    if (early + rest < hlen) {
        st = bl_fail(err, BL_EVALUE, "%s: truncated .npy header", path);
        goto fail;
    }
    if ((st = parse_header(header, hlen, path, &h, err)) != BL_OK)
        goto fail;
    size_t consumed = start + hlen;
    if (sized && fsize - consumed != h.nbytes) {
        st = size_mismatch(path, h.nbytes, fsize - consumed, err);
        goto fail;
    }
    if ((st = new_array(&h, path, &a, err)) != BL_OK)
        goto fail;
    /* Bytes of a short (version 1, tiny header) file's preamble past the
     * header are data. */
    size_t pre_data = got > consumed ? got - consumed : 0;
    if (pre_data > h.nbytes) {
        st = size_mismatch(path, h.nbytes, pre_data, err);
        goto fail;
    }
    /* Only then is pre + consumed inside pre[] (the header usually ends
     * far past it, and pointing there is undefined behaviour). */
    if (pre_data > 0)
        memcpy(a->data, pre + consumed, pre_data);
    if ((st = bl_file_read_upto(fd, (char *)a->data + pre_data, h.nbytes - pre_data, &rest,
                                path, err)) != BL_OK)
        goto fail;
    if (pre_data + rest < h.nbytes) {
        st = size_mismatch(path, h.nbytes, pre_data + rest, err);
        goto fail;
    }
    /* The file may have changed since fstat, or not be a regular file. */
    unsigned char extra;
    if ((st = bl_file_read_upto(fd, &extra, 1, &rest, path, err)) != BL_OK)
        goto fail;
    if (rest) {
        st = bl_fail(err, BL_EVALUE, "%s: unexpected bytes after the .npy data", path);
        goto fail;
    }
    if ((st = check_bools(a, path, err)) != BL_OK)
        goto fail;
    close(fd);
    bl_free(header);
    *out = a;
    return BL_OK;
fail:
    close(fd);
    bl_free(header);
    bl_npy_destroy(a);
    return st;
}

void bl_npy_destroy(bl_npy *a)
{
    if (!a)
        return;
    bl_free(a->data);
    bl_free(a);
}

double bl_npy_get_f64(const bl_npy *a, size_t i)
{
    BL_ASSERT(a && i < a->count);
    const char *p = (const char *)a->data + i * a->itemsize;
    switch (a->dtype) {
    case BL_NPY_F8: { double v; memcpy(&v, p, sizeof v); return v; }
    case BL_NPY_F4: { float v; memcpy(&v, p, sizeof v); return (double)v; }
    case BL_NPY_I8: { int64_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case BL_NPY_I4: { int32_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case BL_NPY_I1: { int8_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case BL_NPY_B1: return (double)*(const unsigned char *)p;
    }
    BL_ASSERT(!"unknown dtype");
    return 0.0;
}

int64_t bl_npy_get_i64(const bl_npy *a, size_t i)
{
    BL_ASSERT(a && i < a->count);
    BL_ASSERT(a->dtype != BL_NPY_F8 && a->dtype != BL_NPY_F4);
    const char *p = (const char *)a->data + i * a->itemsize;
    switch (a->dtype) {
    case BL_NPY_I8: { int64_t v; memcpy(&v, p, sizeof v); return v; }
    case BL_NPY_I4: { int32_t v; memcpy(&v, p, sizeof v); return v; }
    case BL_NPY_I1: { int8_t v; memcpy(&v, p, sizeof v); return v; }
    case BL_NPY_B1: return *(const unsigned char *)p;
    default: break;
    }
    BL_ASSERT(!"not an integer dtype");
    return 0;
}
