/* The JSON value tree, its jansson-based reader and the tree writers.
 * String escaping and float formatting live in json_text.c, because other
 * serialisers (seed payloads) share them. */
#include "brainlesslab/json.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/file.h"
#include "brainlesslab/sha256.h"

typedef struct bl_json_member {
    char *key;          /* NUL-terminated copy; keylen counts an inner NUL too */
    size_t keylen;
    bl_json *value;
} bl_json_member;

struct bl_json {
    bl_json_kind kind;
    union {
        bool b;
        int64_t i;
        double r;
        struct {
            char *s;    /* NUL-terminated copy, so callers may treat it as a C string */
            size_t len;
        } str;
        struct {
            uint64_t *limbs;    /* little-endian magnitude, top limb non-zero */
            size_t n;
            bool negative;
        } big;
        struct {
            bl_json **items;
            size_t n, cap;
        } arr;
        struct {
            bl_json_member *members;
            size_t n, cap;
        } obj;
    } u;
};

static bl_status out_of_memory(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory");
}

/* ---- construction ---------------------------------------------------- */

static bl_json *new_value(bl_json_kind kind)
{
    bl_json *v = bl_calloc(1, sizeof *v);
    if (v)
        v->kind = kind;
    return v;
}

bl_json *bl_json_null(void) { return new_value(BL_JSON_NULL); }

bl_json *bl_json_bool(bool b)
{
    bl_json *v = new_value(BL_JSON_BOOL);
    if (v)
        v->u.b = b;
    return v;
}

bl_json *bl_json_int(int64_t i)
{
    bl_json *v = new_value(BL_JSON_INT);
    if (v)
        v->u.i = i;
    return v;
}

bl_json *bl_json_bigint(bool negative, const uint64_t *limbs, size_t nlimbs)
{
    /* Normalised so that equality and writing never meet two spellings of
     * one number (a BIGINT 5 next to an INT 5). */
    while (nlimbs > 0 && limbs[nlimbs - 1] == 0)
        nlimbs--;
    if (nlimbs == 0)
        return bl_json_int(0);
    if (nlimbs == 1) {
        uint64_t m = limbs[0];
        if (!negative && m <= (uint64_t)INT64_MAX)
            return bl_json_int((int64_t)m);
        if (negative && m <= (uint64_t)INT64_MAX + 1)
            return bl_json_int(m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m);
    }
    bl_json *v = new_value(BL_JSON_BIGINT);
    if (!v)
        return NULL;
    v->u.big.limbs = bl_mallocarray(nlimbs, sizeof *limbs);
    if (!v->u.big.limbs) {
        bl_free(v);
        return NULL;
    }
    memcpy(v->u.big.limbs, limbs, nlimbs * sizeof *limbs);
    v->u.big.n = nlimbs;
    v->u.big.negative = negative;
    return v;
}

bl_json *bl_json_real(double r)
{
    bl_json *v = new_value(BL_JSON_REAL);
    if (v)
        v->u.r = r;
    return v;
}

bl_json *bl_json_string(const char *s) { return bl_json_stringn(s, strlen(s)); }

bl_json *bl_json_stringn(const char *s, size_t len)
{
    bl_json *v = new_value(BL_JSON_STRING);
    if (!v)
        return NULL;
    v->u.str.s = bl_strndup(s, len);
    if (!v->u.str.s) {
        bl_free(v);
        return NULL;
    }
    v->u.str.len = len;
    return v;
}

bl_json *bl_json_array(void) { return new_value(BL_JSON_ARRAY); }

bl_json *bl_json_object(void) { return new_value(BL_JSON_OBJECT); }

void bl_json_destroy(bl_json *v)
{
    if (!v)
        return;
    switch (v->kind) {
    case BL_JSON_BIGINT:
        bl_free(v->u.big.limbs);
        break;
    case BL_JSON_STRING:
        bl_free(v->u.str.s);
        break;
    case BL_JSON_ARRAY:
        for (size_t i = 0; i < v->u.arr.n; i++)
            bl_json_destroy(v->u.arr.items[i]);
        bl_free(v->u.arr.items);
        break;
    case BL_JSON_OBJECT:
        for (size_t i = 0; i < v->u.obj.n; i++) {
            bl_free(v->u.obj.members[i].key);
            bl_json_destroy(v->u.obj.members[i].value);
        }
        bl_free(v->u.obj.members);
        break;
    default:
        break;
    }
    bl_free(v);
}

/* Grows *items (of *cap elements of `size` bytes) to hold one more than n. */
static bool grow(void **items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap : 4;
    while (ncap <= n) {
        if (ncap > SIZE_MAX / 2 / size)
            return false;
        ncap *= 2;
    }
    void *p = bl_realloc(*items, ncap * size);
    if (!p)
        return false;
    *items = p;
    *cap = ncap;
    return true;
}

bl_status bl_json_array_append(bl_json *array, bl_json *item, bl_error *err)
{
    BL_ASSERT(array && array->kind == BL_JSON_ARRAY);
    /* A NULL item is a constructor that ran out of memory, so callers may
     * nest constructors in the call and check once. */
    if (!item)
        return out_of_memory(err);
    void *items = array->u.arr.items;
    if (!grow(&items, &array->u.arr.cap, array->u.arr.n, sizeof(bl_json *))) {
        bl_json_destroy(item);
        return out_of_memory(err);
    }
    array->u.arr.items = items;
    array->u.arr.items[array->u.arr.n++] = item;
    return BL_OK;
}

static size_t find_member(const bl_json *object, const char *key, size_t keylen)
{
    for (size_t i = 0; i < object->u.obj.n; i++) {
        const bl_json_member *m = &object->u.obj.members[i];
        if (m->keylen == keylen && memcmp(m->key, key, keylen) == 0)
            return i;
    }
    return SIZE_MAX;
}

/* Appends a member whose key the caller knows to be new (the reader: jansson
 * has already rejected duplicates), skipping the linear search. */
static bl_status append_member(bl_json *object, const char *key, size_t keylen,
                               bl_json *item, bl_error *err)
{
    if (!item)
        return out_of_memory(err);
    char *copy = bl_strndup(key, keylen);
    void *members = object->u.obj.members;
    if (!copy || !grow(&members, &object->u.obj.cap, object->u.obj.n, sizeof(bl_json_member))) {
        bl_free(copy);
        bl_json_destroy(item);
        return out_of_memory(err);
    }
    object->u.obj.members = members;
    object->u.obj.members[object->u.obj.n++] = (bl_json_member){copy, keylen, item};
    return BL_OK;
}

bl_status bl_json_object_setn(bl_json *object, const char *key, size_t keylen,
                              bl_json *item, bl_error *err)
{
    BL_ASSERT(object && object->kind == BL_JSON_OBJECT);
    if (!item)
        return out_of_memory(err);
    size_t at = find_member(object, key, keylen);
    if (at != SIZE_MAX) {
        /* Replacing keeps the key's place, as a Python dict does. */
        bl_json_destroy(object->u.obj.members[at].value);
        object->u.obj.members[at].value = item;
        return BL_OK;
    }
    return append_member(object, key, keylen, item, err);
}

bl_status bl_json_object_set(bl_json *object, const char *key, bl_json *item, bl_error *err)
{
    return bl_json_object_setn(object, key, strlen(key), item, err);
}

/* Whether a sticky add may go ahead; otherwise `value` is freed and *st
 * holds the error. */
static bool sticky_ready(bl_status *st, const bl_json *container, bl_json *value,
                         bl_error *err)
{
    if (*st == BL_OK && container && value)
        return true;
    bl_json_destroy(value);
    if (*st == BL_OK)
        *st = out_of_memory(err);
    return false;
}

void bl_json_put(bl_status *st, bl_json *object, const char *key, bl_json *value,
                 bl_error *err)
{
    if (sticky_ready(st, object, value, err))
        *st = bl_json_object_set(object, key, value, err);
}

void bl_json_push(bl_status *st, bl_json *array, bl_json *value, bl_error *err)
{
    if (sticky_ready(st, array, value, err))
        *st = bl_json_array_append(array, value, err);
}

bl_status bl_json_hand_over(bl_status st, bl_json *value, bl_json **out)
{
    if (st == BL_OK)
        *out = value;
    else
        bl_json_destroy(value);
    return st;
}

bl_json *bl_json_copy(const bl_json *v)
{
    BL_ASSERT(v);
    switch (v->kind) {
    case BL_JSON_NULL:
        return bl_json_null();
    case BL_JSON_BOOL:
        return bl_json_bool(v->u.b);
    case BL_JSON_INT:
        return bl_json_int(v->u.i);
    case BL_JSON_BIGINT:
        return bl_json_bigint(v->u.big.negative, v->u.big.limbs, v->u.big.n);
    case BL_JSON_REAL:
        return bl_json_real(v->u.r);
    case BL_JSON_STRING:
        return bl_json_stringn(v->u.str.s, v->u.str.len);
    case BL_JSON_ARRAY: {
        bl_json *a = bl_json_array();
        if (!a)
            return NULL;
        for (size_t i = 0; i < v->u.arr.n; i++) {
            if (bl_json_array_append(a, bl_json_copy(v->u.arr.items[i]), NULL) != BL_OK) {
                bl_json_destroy(a);
                return NULL;
            }
        }
        return a;
    }
    case BL_JSON_OBJECT: {
        bl_json *o = bl_json_object();
        if (!o)
            return NULL;
        for (size_t i = 0; i < v->u.obj.n; i++) {
            const bl_json_member *m = &v->u.obj.members[i];
            if (append_member(o, m->key, m->keylen, bl_json_copy(m->value), NULL) != BL_OK) {
                bl_json_destroy(o);
                return NULL;
            }
        }
        return o;
    }
    }
    BL_ASSERT(!"unknown JSON kind");
    return NULL;
}

/* ---- access ---------------------------------------------------------- */

bl_json_kind bl_json_kindof(const bl_json *v)
{
    BL_ASSERT(v);
    return v->kind;
}

const char *bl_json_python_type(const bl_json *v, const char *array_type)
{
    switch (v ? bl_json_kindof(v) : BL_JSON_NULL) {
    case BL_JSON_NULL:
        return "NoneType";
    case BL_JSON_BOOL:
        return "bool";
    case BL_JSON_INT:
    case BL_JSON_BIGINT:
        return "int";
    case BL_JSON_REAL:
        return "float";
    case BL_JSON_STRING:
        return "str";
    case BL_JSON_ARRAY:
        return array_type;
    case BL_JSON_OBJECT:
        return "dict";
    }
    return "object";
}

bool bl_json_get_bool(const bl_json *v)
{
    BL_ASSERT(v && v->kind == BL_JSON_BOOL);
    return v->u.b;
}

int64_t bl_json_get_int(const bl_json *v)
{
    BL_ASSERT(v && v->kind == BL_JSON_INT);
    return v->u.i;
}

double bl_json_get_real(const bl_json *v)
{
    BL_ASSERT(v && v->kind == BL_JSON_REAL);
    return v->u.r;
}

const char *bl_json_get_string(const bl_json *v, size_t *len)
{
    BL_ASSERT(v && v->kind == BL_JSON_STRING);
    if (len)
        *len = v->u.str.len;
    return v->u.str.s;
}

size_t bl_json_get_bigint(const bl_json *v, bool *negative, uint64_t *limbs, size_t max)
{
    BL_ASSERT(v && (v->kind == BL_JSON_INT || v->kind == BL_JSON_BIGINT));
    if (v->kind == BL_JSON_INT) {
        /* Unsigned negation, so INT64_MIN yields 2^63 without overflow. */
        uint64_t mag = v->u.i < 0 ? (uint64_t)0 - (uint64_t)v->u.i : (uint64_t)v->u.i;
        if (negative)
            *negative = v->u.i < 0;
        if (mag == 0)
            return 0;
        if (limbs && max >= 1)
            limbs[0] = mag;
        return 1;
    }
    if (negative)
        *negative = v->u.big.negative;
    if (limbs) {
        size_t n = v->u.big.n < max ? v->u.big.n : max;
        memcpy(limbs, v->u.big.limbs, n * sizeof *limbs);
    }
    return v->u.big.n;
}

size_t bl_json_size(const bl_json *v)
{
    BL_ASSERT(v && (v->kind == BL_JSON_ARRAY || v->kind == BL_JSON_OBJECT));
    return v->kind == BL_JSON_ARRAY ? v->u.arr.n : v->u.obj.n;
}

bl_json *bl_json_at(const bl_json *v, size_t i)
{
    BL_ASSERT(v && v->kind == BL_JSON_ARRAY && i < v->u.arr.n);
    return v->u.arr.items[i];
}

const char *bl_json_key_at(const bl_json *v, size_t i, size_t *len)
{
    BL_ASSERT(v && v->kind == BL_JSON_OBJECT && i < v->u.obj.n);
    if (len)
        *len = v->u.obj.members[i].keylen;
    return v->u.obj.members[i].key;
}

bl_json *bl_json_value_at(const bl_json *v, size_t i)
{
    BL_ASSERT(v && v->kind == BL_JSON_OBJECT && i < v->u.obj.n);
    return v->u.obj.members[i].value;
}

bl_json *bl_json_get(const bl_json *object, const char *key)
{
    BL_ASSERT(object && object->kind == BL_JSON_OBJECT);
    size_t at = find_member(object, key, strlen(key));
    return at == SIZE_MAX ? NULL : object->u.obj.members[at].value;
}

const bl_json *bl_json_if(const bl_json *v, bl_json_kind k)
{
    return v && v->kind == k ? v : NULL;
}

const bl_json *bl_json_field(const bl_json *v, const char *key)
{
    return bl_json_if(v, BL_JSON_OBJECT) ? bl_json_get(v, key) : NULL;
}

const char *bl_json_string_field(const bl_json *v, const char *key)
{
    const bl_json *s = bl_json_if(bl_json_field(v, key), BL_JSON_STRING);
    return s ? bl_json_get_string(s, NULL) : NULL;
}

bool bl_json_equal(const bl_json *a, const bl_json *b)
{
    BL_ASSERT(a && b);
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case BL_JSON_NULL:
        return true;
    case BL_JSON_BOOL:
        return a->u.b == b->u.b;
    case BL_JSON_INT:
        return a->u.i == b->u.i;
    case BL_JSON_BIGINT:
        return a->u.big.negative == b->u.big.negative && a->u.big.n == b->u.big.n &&
               memcmp(a->u.big.limbs, b->u.big.limbs, a->u.big.n * sizeof(uint64_t)) == 0;
    case BL_JSON_REAL:
        /* By bits, so that 0.0 and -0.0 (which hash differently) differ. */
        if (isnan(a->u.r) && isnan(b->u.r))
            return true;
        return memcmp(&a->u.r, &b->u.r, sizeof(double)) == 0;
    case BL_JSON_STRING:
        return a->u.str.len == b->u.str.len &&
               memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    case BL_JSON_ARRAY:
        if (a->u.arr.n != b->u.arr.n)
            return false;
        for (size_t i = 0; i < a->u.arr.n; i++)
            if (!bl_json_equal(a->u.arr.items[i], b->u.arr.items[i]))
                return false;
        return true;
    case BL_JSON_OBJECT:
        if (a->u.obj.n != b->u.obj.n)
            return false;
        for (size_t i = 0; i < a->u.obj.n; i++) {
            const bl_json_member *m = &a->u.obj.members[i];
            size_t at = find_member(b, m->key, m->keylen);
            if (at == SIZE_MAX || !bl_json_equal(m->value, b->u.obj.members[at].value))
                return false;
        }
        return true;
    }
    return false;
}

/* ---- reading --------------------------------------------------------- */

/* jansson 2.14 mishandles a failed allocation: its lexer drops the byte it
 * could not store, which silently corrupts a string or number, reports some
 * failures as syntax errors, and can trip an assert (and abort) when it
 * later un-reads that byte. So a failed request is recorded for this thread
 * and retried once, which hides an injected failure (it hits one allocation
 * only) from jansson, and the parse that saw it reports BL_ENOMEM whatever
 * jansson returned. Only a genuine exhaustion, failing twice, reaches
 * jansson's own handling. */
static _Thread_local bool jansson_alloc_failed;

static void *jansson_malloc(size_t size)
{
    void *p = bl_malloc(size);
    if (!p) {
        jansson_alloc_failed = true;
        p = bl_malloc(size);
    }
    return p;
}

static once_flag jansson_once = ONCE_FLAG_INIT;

static void install_jansson_allocator(void) { json_set_alloc_funcs(jansson_malloc, bl_free); }

/* Our tree from jansson's; NULL when out of memory. jansson's own depth
 * limit (2048) bounds the recursion. */
static bl_json *from_jansson(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_NULL:
        return bl_json_null();
    case JSON_TRUE:
        return bl_json_bool(true);
    case JSON_FALSE:
        return bl_json_bool(false);
    case JSON_INTEGER:
        return bl_json_int((int64_t)json_integer_value(j));
    case JSON_REAL:
        return bl_json_real(json_real_value(j));
    case JSON_STRING:
        return bl_json_stringn(json_string_value(j), json_string_length(j));
    case JSON_ARRAY: {
        bl_json *a = bl_json_array();
        if (!a)
            return NULL;
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (bl_json_array_append(a, from_jansson(json_array_get(j, i)), NULL) != BL_OK) {
                bl_json_destroy(a);
                return NULL;
            }
        }
        return a;
    }
    case JSON_OBJECT: {
        bl_json *o = bl_json_object();
        if (!o)
            return NULL;
        const char *key;
        size_t keylen;
        json_t *value;
        /* jansson keeps insertion order and has rejected duplicates. */
        json_object_keylen_foreach((json_t *)j, key, keylen, value) {
            if (append_member(o, key, keylen, from_jansson(value), NULL) != BL_OK) {
                bl_json_destroy(o);
                return NULL;
            }
        }
        return o;
    }
    }
    return NULL;
}

bl_status bl_json_parse(const char *text, size_t len, const char *what,
                        bl_json **out, bl_error *err)
{
    BL_ASSERT(out && (text || len == 0));
    *out = NULL;
    if (!what)
        what = "JSON text";
    if (!text)
        text = "";
    call_once(&jansson_once, install_jansson_allocator);

    json_error_t jerr;
    jansson_alloc_failed = false;
    json_t *root = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
                              &jerr);
    if (jansson_alloc_failed) {
        json_decref(root);
        return out_of_memory(err);
    }
    if (!root) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return out_of_memory(err);
        if (json_error_code(&jerr) == json_error_numeric_overflow &&
            strncmp(jerr.text, "too big", 7) == 0)
            return bl_fail(err, BL_EVALUE, "%s:%d:%d: integer out of the 64-bit range", what,
                           jerr.line, jerr.column);
        return bl_fail(err, BL_EVALUE, "%s:%d:%d: %s", what, jerr.line, jerr.column,
                       jerr.text[0] ? jerr.text : "invalid JSON");
    }
    bl_json *v = from_jansson(root);
    json_decref(root);
    if (!v)
        return out_of_memory(err);
    *out = v;
    return BL_OK;
}

bl_status bl_json_read_file_as(const char *path, const char *what, unsigned flags,
                               bl_json **out, bl_error *err)
{
    BL_ASSERT(path && what && out);
    *out = NULL;
    char *text;
    size_t len;
    bl_status st = bl_file_read(path, BL_FILE_JSON_MAX, what, flags, &text, &len, err);
    if (st != BL_OK)
        return st;
    st = bl_json_parse(text, len, path, out, err);
    bl_free(text);
    return st;
}

bl_status bl_json_read_file(const char *path, bl_json **out, bl_error *err)
{
    return bl_json_read_file_as(path, "JSON file", 0, out, err);
}

/* ---- writing --------------------------------------------------------- */

/* Decimal digits of a magnitude: repeated division by 10^9 over 32-bit
 * words keeps every step within 64-bit arithmetic (no __int128). */
static bl_status write_bigint(bl_buf *out, bool negative, const uint64_t *limbs, size_t n,
                              bl_error *err)
{
    bl_status st = BL_OK;
    size_t nw = 2 * n;
    uint32_t *w = bl_mallocarray(nw, sizeof *w);
    /* 64 bits are fewer than 20 decimal digits. */
    char *digits = bl_mallocarray(n, 20);
    if (!w || !digits) {
        st = out_of_memory(err);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        w[2 * k] = (uint32_t)limbs[k];
        w[2 * k + 1] = (uint32_t)(limbs[k] >> 32);
    }
    size_t top = nw, nd = 0;
    while (top > 0 && w[top - 1] == 0)
        top--;
    if (top == 0)
        digits[nd++] = '0';
    while (top > 0) {
        uint64_t rem = 0;
        for (size_t k = top; k-- > 0;) {
            uint64_t cur = (rem << 32) | w[k];
            w[k] = (uint32_t)(cur / 1000000000u);
            rem = cur % 1000000000u;
        }
        while (top > 0 && w[top - 1] == 0)
            top--;
        /* Inner chunks keep their leading zeros; the last one does not. */
        for (int d = 0; d < 9 && (top > 0 || rem > 0); d++) {
            digits[nd++] = (char)('0' + rem % 10);
            rem /= 10;
        }
    }
    if (negative)
        bl_buf_putc(out, '-');
    while (nd > 0)
        bl_buf_putc(out, digits[--nd]);
done:
    bl_free(w);
    bl_free(digits);
    return st;
}

static int compare_members(const void *pa, const void *pb)
{
    const bl_json_member *a = *(const bl_json_member *const *)pa;
    const bl_json_member *b = *(const bl_json_member *const *)pb;
    size_t n = a->keylen < b->keylen ? a->keylen : b->keylen;
    int c = memcmp(a->key, b->key, n);
    if (c != 0)
        return c;
    return a->keylen < b->keylen ? -1 : a->keylen > b->keylen;
}

/* With BL_JSON_INDENT: a newline and two spaces per level before an item
 * or a closing bracket, as Python's json.dumps(indent=2) writes them. */
static void newline(bl_buf *out, unsigned flags, size_t depth)
{
    if (!(flags & BL_JSON_INDENT))
        return;
    bl_buf_putc(out, '\n');
    for (size_t i = 0; i < depth; i++)
        bl_buf_puts(out, "  ");
}

static bl_status write_value(const bl_json *v, unsigned flags, size_t depth, bl_buf *out,
                             bl_error *err)
{
    /* indent=2 implies Python's separators "," and ": " (no trailing space
     * before a newline). */
    const char *item_sep = flags & BL_JSON_INDENT ? "," : flags & BL_JSON_SPACED ? ", " : ",";
    const char *key_sep = flags & (BL_JSON_SPACED | BL_JSON_INDENT) ? ": " : ":";
    bool ascii = flags & BL_JSON_ASCII;
    bl_status st = BL_OK;
    switch (v->kind) {
    case BL_JSON_NULL:
        bl_buf_puts(out, "null");
        break;
    case BL_JSON_BOOL:
        bl_buf_puts(out, v->u.b ? "true" : "false");
        break;
    case BL_JSON_INT:
        bl_buf_printf(out, "%" PRId64, v->u.i);
        break;
    case BL_JSON_BIGINT:
        st = write_bigint(out, v->u.big.negative, v->u.big.limbs, v->u.big.n, err);
        break;
    case BL_JSON_REAL:
        /* Checked here: write_double's false also means out of memory. */
        if (!isfinite(v->u.r))
            return bl_fail(err, BL_EVALUE, "Out of range float values are not JSON compliant");
        bl_json_write_double(out, v->u.r);
        break;
    case BL_JSON_STRING:
        st = bl_json_write_string(out, v->u.str.s, v->u.str.len, ascii, err);
        break;
    case BL_JSON_ARRAY:
        bl_buf_putc(out, '[');
        for (size_t i = 0; i < v->u.arr.n && st == BL_OK; i++) {
            if (i > 0)
                bl_buf_puts(out, item_sep);
            newline(out, flags, depth + 1);
            st = write_value(v->u.arr.items[i], flags, depth + 1, out, err);
        }
        if (v->u.arr.n > 0)
            newline(out, flags, depth);
        bl_buf_putc(out, ']');
        break;
    case BL_JSON_OBJECT: {
        size_t n = v->u.obj.n;
        const bl_json_member **order = NULL;
        if ((flags & BL_JSON_SORT_KEYS) && n > 1) {
            order = bl_mallocarray(n, sizeof *order);
            if (!order)
                return out_of_memory(err);
            for (size_t i = 0; i < n; i++)
                order[i] = &v->u.obj.members[i];
            qsort(order, n, sizeof *order, compare_members);
        }
        bl_buf_putc(out, '{');
        for (size_t i = 0; i < n && st == BL_OK; i++) {
            const bl_json_member *m = order ? order[i] : &v->u.obj.members[i];
            if (i > 0)
                bl_buf_puts(out, item_sep);
            newline(out, flags, depth + 1);
            st = bl_json_write_string(out, m->key, m->keylen, ascii, err);
            if (st != BL_OK)
                break;
            bl_buf_puts(out, key_sep);
            st = write_value(m->value, flags, depth + 1, out, err);
        }
        if (n > 0)
            newline(out, flags, depth);
        bl_buf_putc(out, '}');
        bl_free(order);
        break;
    }
    }
    return st;
}

bl_status bl_json_write(const bl_json *v, unsigned flags, bl_buf *out, bl_error *err)
{
    BL_ASSERT(v && out);
    bl_status st = write_value(v, flags, 0, out, err);
    if (st != BL_OK)
        return st;
    return bl_buf_status(out, err);
}

bl_status bl_json_canonical(const bl_json *v, char **out, size_t *len, bl_error *err)
{
    BL_ASSERT(out);
    *out = NULL;
    bl_buf b;
    bl_buf_init(&b);
    bl_status st = bl_json_write(v, BL_JSON_CANONICAL, &b, err);
    if (st != BL_OK) {
        bl_buf_clear(&b);
        return st;
    }
    size_t n;
    char *text = bl_buf_take(&b, &n);
    if (!text)
        return out_of_memory(err);
    *out = text;
    if (len)
        *len = n;
    return BL_OK;
}

bl_status bl_json_digest(const bl_json *v, char hex[65], bl_error *err)
{
    /* Most digested values (ids, keys, small configs) fit on the stack. */
    char storage[1024];
    bl_buf b;
    bl_buf_init_fixed(&b, storage, sizeof storage);
    bl_status st = bl_json_write(v, BL_JSON_CANONICAL, &b, err);
    if (st == BL_OK)
        st = bl_sha256_hex(b.data, b.len, hex, err);
    bl_buf_clear(&b);
    return st;
}
