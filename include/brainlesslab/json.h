/* The project's JSON value tree and its writers.
 *
 * The tree keeps integers and reals apart (`1` and `1.0` hash differently in a
 * contract) and holds integers beyond 64 bits (256-bit seeds) as unsigned
 * magnitudes with a sign. Text is read with jansson (integers limited to 64
 * bits; a larger one is a clear error) and written by our own writers, because
 * the bytes of canonical JSON are a contract (spec/platform.md §1.5).
 *
 * Ownership: a tree has one owner, who frees it with bl_json_destroy. Containers
 * take ownership of the values added to them, also when the add fails. */
#ifndef BRAINLESSLAB_JSON_H
#define BRAINLESSLAB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/status.h"

typedef enum bl_json_kind {
    BL_JSON_NULL,
    BL_JSON_BOOL,
    BL_JSON_INT,      /* fits int64_t */
    BL_JSON_BIGINT,   /* beyond int64_t: sign + little-endian 64-bit limbs */
    BL_JSON_REAL,
    BL_JSON_STRING,   /* UTF-8 bytes with explicit length (may hold NUL) */
    BL_JSON_ARRAY,
    BL_JSON_OBJECT,   /* keys unique, kept in insertion order */
} bl_json_kind;

typedef struct bl_json bl_json;

/* Constructors: NULL on allocation failure. */
bl_json *bl_json_null(void);
bl_json *bl_json_bool(bool v);
bl_json *bl_json_int(int64_t v);
/* An integer of any size from little-endian 64-bit limbs (magnitude) and a
 * sign; normalised, so a value that fits int64_t becomes BL_JSON_INT. */
bl_json *bl_json_bigint(bool negative, const uint64_t *limbs, size_t nlimbs);
bl_json *bl_json_real(double v);
bl_json *bl_json_string(const char *s);               /* NUL-terminated */
bl_json *bl_json_stringn(const char *s, size_t len);
bl_json *bl_json_array(void);
bl_json *bl_json_object(void);

void bl_json_destroy(bl_json *v);
bl_json *bl_json_copy(const bl_json *v);   /* deep copy, NULL on failure */

/* Containers. Both take ownership of `item` whatever the outcome (a failed
 * add frees it). Setting an existing object key replaces its value. */
bl_status bl_json_array_append(bl_json *array, bl_json *item, bl_error *err);
bl_status bl_json_object_set(bl_json *object, const char *key, bl_json *item,
                             bl_error *err);
bl_status bl_json_object_setn(bl_json *object, const char *key, size_t keylen,
                              bl_json *item, bl_error *err);

/* Sticky builders: a document is built as a flat list of calls with one
 * check of *st at the end. Each call takes ownership of `value` and is a
 * no-op (freeing `value`) once *st holds an error; a NULL `value` or
 * container (a constructor that ran out of memory) sets *st to BL_ENOMEM
 * with "out of memory"; a failed add sets *st to its status. */
void bl_json_put(bl_status *st, bl_json *object, const char *key, bl_json *value,
                 bl_error *err);
void bl_json_push(bl_status *st, bl_json *array, bl_json *value, bl_error *err);
/* The end of a sticky builder: *out = value when st is BL_OK, else value is
 * destroyed (and *out left alone). Returns st. */
bl_status bl_json_hand_over(bl_status st, bl_json *value, bl_json **out);

/* Accessors. They BL_ASSERT the kind where a kind is implied. */
bl_json_kind bl_json_kindof(const bl_json *v);
/* The name Python's type() gives v as the reference holds it, for its error
 * texts: arrays are lists in a plan document and tuples in task options
 * (array_type says which); NULL is NoneType. */
const char *bl_json_python_type(const bl_json *v, const char *array_type);
bool bl_json_get_bool(const bl_json *v);
int64_t bl_json_get_int(const bl_json *v);
double bl_json_get_real(const bl_json *v);
const char *bl_json_get_string(const bl_json *v, size_t *len);
/* BIGINT (or INT) magnitude: returns the limb count and, if limbs is not
 * NULL, copies up to max limbs; *negative gets the sign. */
size_t bl_json_get_bigint(const bl_json *v, bool *negative, uint64_t *limbs, size_t max);
size_t bl_json_size(const bl_json *v);                       /* array or object */
bl_json *bl_json_at(const bl_json *v, size_t i);             /* array element */
const char *bl_json_key_at(const bl_json *v, size_t i, size_t *len); /* object */
bl_json *bl_json_value_at(const bl_json *v, size_t i);       /* object */
bl_json *bl_json_get(const bl_json *object, const char *key); /* NULL if absent */

/* Typed access to documents from outside (records, replays), whose shape is
 * not trusted, where the accessors above assert kinds: v when it is a value
 * of kind k, else NULL (NULL in, NULL out); member `key` of v when v is an
 * object, else NULL; a string member's text, else NULL. */
const bl_json *bl_json_if(const bl_json *v, bl_json_kind k);
const bl_json *bl_json_field(const bl_json *v, const char *key);
const char *bl_json_string_field(const bl_json *v, const char *key);

/* Structural equality: kinds must agree (1 != 1.0); reals compare by bits
 * except that both NaN compare equal; object key order is ignored. */
bool bl_json_equal(const bl_json *a, const bl_json *b);

/* Reading. Any valid JSON text (a scalar at the top level included),
 * duplicate object keys rejected, NUL in strings allowed. `what` names the
 * source in messages (a file name, or "JSON text"); errors are BL_EVALUE with
 * "<what>:<line>:<column>: <message>". */
bl_status bl_json_parse(const char *text, size_t len, const char *what,
                        bl_json **out, bl_error *err);
/* A regular JSON file of at most BL_FILE_JSON_MAX bytes, read as
 * bl_file_read does with `flags` (BL_FILE_NOFOLLOW); `what` names the kind
 * of file if it is too large ("calibration file"). */
bl_status bl_json_read_file_as(const char *path, const char *what, unsigned flags,
                               bl_json **out, bl_error *err);
/* bl_json_read_file_as(path, "JSON file", 0, ...). */
bl_status bl_json_read_file(const char *path, bl_json **out, bl_error *err);

/* Writing. */
enum {
    BL_JSON_SORT_KEYS = 1u << 0,  /* keys by code point (UTF-8 byte order) */
    BL_JSON_ASCII = 1u << 1,      /* escape every non-ASCII character as \uXXXX */
    BL_JSON_SPACED = 1u << 2,     /* Python's default separators ", " and ": " */
    BL_JSON_INDENT = 1u << 3,     /* json.dumps(indent=2): one item per line */
    /* spec/platform.md §1.5: sorted keys, compact, ASCII-only. */
    BL_JSON_CANONICAL = BL_JSON_SORT_KEYS | BL_JSON_ASCII,
};
/* Writes `v`; NaN and infinities are a BL_EVALUE error (nothing partial is
 * promised in `out` then). Floats in Python repr form. */
bl_status bl_json_write(const bl_json *v, unsigned flags, bl_buf *out, bl_error *err);
/* Canonical text as a new NUL-terminated heap string (caller bl_frees). */
bl_status bl_json_canonical(const bl_json *v, char **out, size_t *len, bl_error *err);
/* Lowercase hex SHA-256 of the canonical text (65 bytes with NUL). */
bl_status bl_json_digest(const bl_json *v, char hex[65], bl_error *err);

/* Pieces of the writer, shared with other serialisers (seed payloads). */
/* A JSON string literal with quotes, Python json.dumps escaping; with
 * `ascii`, non-ASCII code points become lowercase \uXXXX (surrogate pairs for
 * astral ones). Invalid UTF-8 is BL_EVALUE. */
bl_status bl_json_write_string(bl_buf *out, const char *s, size_t len, bool ascii,
                               bl_error *err);
/* A finite double in Python repr form ("0.1", "1e-05", "1e+16", "-0.0").
 * Returns false (writes nothing) for NaN or infinity. */
bool bl_json_write_double(bl_buf *out, double v);

#endif
