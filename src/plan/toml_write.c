/* A TOML writer for bl_json trees (spec/platform.md §2.2).
 *
 * Layout, per table: its scalar keys (and inline arrays) first, then its
 * arrays of tables as [[path]] blocks, then its sub-tables as [path] blocks;
 * within each group the tree's order. Null-valued keys are omitted (TOML has
 * no null). Byte-exact tomli_w output is not a goal; reading the text back
 * giving an equal tree is. Written in C because it needs nothing from toml++. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "brainlesslab/plan.h"
#include "brainlesslab/text.h"

/* Trees nest no deeper than the reader accepts (toml_bridge.cpp). */
#define BL_TOML_WRITE_MAX_DEPTH 256

typedef struct bl_tw {
    bl_buf *out;
    bl_error *err;
} bl_tw;

/* A TOML basic string. Control characters (TOML forbids them raw, DEL
 * included) are escaped; everything else is copied as UTF-8. */
static bl_status put_string(bl_tw *w, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    bl_buf_putc(w->out, '"');
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = bl_utf8_decode(p + i, len - i, &cp);
        if (n == 0)
            return bl_fail(w->err, BL_EVALUE, "TOML strings must be valid UTF-8");
        switch (cp) {
        case '"': bl_buf_puts(w->out, "\\\""); break;
        case '\\': bl_buf_puts(w->out, "\\\\"); break;
        case '\b': bl_buf_puts(w->out, "\\b"); break;
        case '\t': bl_buf_puts(w->out, "\\t"); break;
        case '\n': bl_buf_puts(w->out, "\\n"); break;
        case '\f': bl_buf_puts(w->out, "\\f"); break;
        case '\r': bl_buf_puts(w->out, "\\r"); break;
        default:
            if (cp < 0x20 || cp == 0x7F)
                bl_buf_printf(w->out, "\\u%04" PRIX32, cp);
            else
                bl_buf_append(w->out, p + i, n);
        }
        i += n;
    }
    bl_buf_putc(w->out, '"');
    return BL_OK;
}

/* Bare keys where TOML allows them ([A-Za-z0-9_-]+), quoted otherwise. */
static bl_status put_key(bl_tw *w, const char *k, size_t len)
{
    bool bare = len > 0;
    for (size_t i = 0; i < len && bare; i++) {
        char c = k[i];
        bare = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '_' || c == '-';
    }
    if (bare) {
        bl_buf_append(w->out, k, len);
        return BL_OK;
    }
    return put_string(w, k, len);
}

bl_status bl_toml_put_key(bl_buf *out, const char *k, size_t len, bl_error *err)
{
    bl_tw w = {out, err};
    return put_key(&w, k, len);
}

/* An object, at any depth, somewhere inside v. */
static bool holds_object(const bl_json *v, int depth)
{
    if (depth > BL_TOML_WRITE_MAX_DEPTH)
        return true; /* the writer reports the depth itself */
    switch (bl_json_kindof(v)) {
    case BL_JSON_OBJECT:
        return true;
    case BL_JSON_ARRAY:
        for (size_t i = 0; i < bl_json_size(v); i++)
            if (holds_object(bl_json_at(v, i), depth + 1))
                return true;
        return false;
    default:
        return false;
    }
}

/* An array written as [[path]] blocks: non-empty, every element a table, and
 * some element holding more than flat values (flat records such as
 * interventions stay inline, as §2.2 shows). */
static bool is_table_array(const bl_json *v)
{
    if (bl_json_kindof(v) != BL_JSON_ARRAY || bl_json_size(v) == 0)
        return false;
    bool nested = false;
    for (size_t i = 0; i < bl_json_size(v); i++) {
        const bl_json *e = bl_json_at(v, i);
        if (bl_json_kindof(e) != BL_JSON_OBJECT)
            return false;
        for (size_t j = 0; j < bl_json_size(e); j++)
            if (holds_object(bl_json_value_at(e, j), 0))
                nested = true;
    }
    return nested;
}

static bl_status depth_error(bl_tw *w)
{
    return bl_fail(w->err, BL_EVALUE, "TOML nesting is deeper than %d levels",
                   BL_TOML_WRITE_MAX_DEPTH);
}

static bl_status put_inline(bl_tw *w, const bl_json *v, int depth);

static bl_status put_scalar(bl_tw *w, const bl_json *v)
{
    switch (bl_json_kindof(v)) {
    case BL_JSON_BOOL:
        bl_buf_puts(w->out, bl_json_get_bool(v) ? "true" : "false");
        return BL_OK;
    case BL_JSON_INT:
        bl_buf_printf(w->out, "%" PRId64, bl_json_get_int(v));
        return BL_OK;
    case BL_JSON_BIGINT:
        return bl_fail(w->err, BL_EVALUE, "TOML integers are limited to 64 bits");
    case BL_JSON_REAL: {
        double d = bl_json_get_real(v);
        /* Python repr form ("0.1", "1e-05", "1e+16") is valid TOML float
         * syntax and reads back as the same double. */
        if (!bl_json_write_double(w->out, d))
            bl_buf_puts(w->out, isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
        return BL_OK;
    }
    case BL_JSON_STRING: {
        size_t len;
        const char *s = bl_json_get_string(v, &len);
        return put_string(w, s, len);
    }
    case BL_JSON_NULL:
        return bl_fail(w->err, BL_ETYPE, "TOML cannot hold a null inside an array");
    default:
        BL_ASSERT(0);
        return BL_ERUNTIME;
    }
}

/* An inline value: scalars, [a, b] and { k = v }. Nulls in tables are
 * omitted like everywhere else. */
static bl_status put_inline(bl_tw *w, const bl_json *v, int depth)
{
    if (depth > BL_TOML_WRITE_MAX_DEPTH)
        return depth_error(w);
    bl_status st = BL_OK;
    if (bl_json_kindof(v) == BL_JSON_ARRAY) {
        bl_buf_putc(w->out, '[');
        for (size_t i = 0; i < bl_json_size(v) && st == BL_OK; i++) {
            if (i)
                bl_buf_puts(w->out, ", ");
            st = put_inline(w, bl_json_at(v, i), depth + 1);
        }
        bl_buf_putc(w->out, ']');
        return st;
    }
    if (bl_json_kindof(v) == BL_JSON_OBJECT) {
        bool first = true;
        bl_buf_putc(w->out, '{');
        for (size_t i = 0; i < bl_json_size(v) && st == BL_OK; i++) {
            const bl_json *val = bl_json_value_at(v, i);
            if (bl_json_kindof(val) == BL_JSON_NULL)
                continue;
            size_t klen;
            const char *k = bl_json_key_at(v, i, &klen);
            bl_buf_puts(w->out, first ? " " : ", ");
            first = false;
            st = put_key(w, k, klen);
            if (st == BL_OK) {
                bl_buf_puts(w->out, " = ");
                st = put_inline(w, val, depth + 1);
            }
        }
        bl_buf_puts(w->out, first ? "}" : " }");
        return st;
    }
    return put_scalar(w, v);
}

/* "key = value" for a scalar or an inline array; non-empty arrays one
 * element per line with a 4-space indent and a trailing comma (§2.2). */
static bl_status put_keyval(bl_tw *w, const char *k, size_t klen, const bl_json *v, int depth)
{
    bl_status st = put_key(w, k, klen);
    if (st != BL_OK)
        return st;
    bl_buf_puts(w->out, " = ");
    if (bl_json_kindof(v) == BL_JSON_ARRAY && bl_json_size(v) > 0) {
        bl_buf_puts(w->out, "[\n");
        for (size_t i = 0; i < bl_json_size(v) && st == BL_OK; i++) {
            bl_buf_puts(w->out, "    ");
            st = put_inline(w, bl_json_at(v, i), depth + 1);
            bl_buf_puts(w->out, ",\n");
        }
        bl_buf_puts(w->out, "]\n");
        return st;
    }
    st = put_inline(w, v, depth);
    bl_buf_putc(w->out, '\n');
    return st;
}

/* The header path of a table: "a.b.c" with each part a key. */
typedef struct bl_tw_path {
    const struct bl_tw_path *up;
    const char *key;
    size_t len;
} bl_tw_path;

static bl_status put_path(bl_tw *w, const bl_tw_path *p)
{
    if (p->up) {
        bl_status st = put_path(w, p->up);
        if (st != BL_OK)
            return st;
        bl_buf_putc(w->out, '.');
    }
    return put_key(w, p->key, p->len);
}

static bl_status put_header(bl_tw *w, const bl_tw_path *p, bool array)
{
    bl_buf_puts(w->out, array ? "\n[[" : "\n[");
    bl_status st = put_path(w, p);
    bl_buf_puts(w->out, array ? "]]\n" : "]\n");
    return st;
}

/* The body of a table (its header, if any, already written). */
static bl_status put_table(bl_tw *w, const bl_json *t, const bl_tw_path *path, int depth)
{
    if (depth > BL_TOML_WRITE_MAX_DEPTH)
        return depth_error(w);
    bl_status st = BL_OK;
    size_t n = bl_json_size(t);
    /* Three passes: scalars and inline arrays, arrays of tables, tables. */
    for (int pass = 0; pass < 3 && st == BL_OK; pass++) {
        for (size_t i = 0; i < n && st == BL_OK; i++) {
            const bl_json *v = bl_json_value_at(t, i);
            bl_json_kind kind = bl_json_kindof(v);
            if (kind == BL_JSON_NULL)
                continue;
            int group = kind == BL_JSON_OBJECT ? 2 : is_table_array(v) ? 1 : 0;
            if (group != pass)
                continue;
            size_t klen;
            const char *k = bl_json_key_at(t, i, &klen);
            bl_tw_path sub = {path, k, klen};
            if (group == 0) {
                st = put_keyval(w, k, klen, v, depth);
            } else if (group == 1) {
                for (size_t j = 0; j < bl_json_size(v) && st == BL_OK; j++) {
                    st = put_header(w, &sub, true);
                    if (st == BL_OK)
                        st = put_table(w, bl_json_at(v, j), &sub, depth + 2);
                }
            } else {
                st = put_header(w, &sub, false);
                if (st == BL_OK)
                    st = put_table(w, v, &sub, depth + 1);
            }
        }
    }
    return st;
}

bl_status bl_toml_write(const bl_json *doc, bl_buf *out, bl_error *err)
{
    BL_ASSERT(doc && out);
    if (bl_json_kindof(doc) != BL_JSON_OBJECT)
        return bl_fail(err, BL_ETYPE, "a TOML document must be a table");
    bl_tw w = {out, err};
    bl_status st = put_table(&w, doc, NULL, 0);
    if (st != BL_OK)
        return st;
    return bl_buf_status(out, err);
}
