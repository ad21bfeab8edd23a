/* Noise tapes (spec/models.md §6.4): a generator read as an endless
 * row-major (frames x width) array, prefetched a tile at a time. Frames are
 * drawn only once and in order, so the frames a trial consumes never depend
 * on the tile size or on how far it previewed. */
#include <string.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/rng.h"

struct bl_tape {
    bl_gen gen;
    bl_tape_dist dist;
    size_t width;
    size_t tile;
    uint64_t consumed;
    size_t head;    /* first prepared, unconsumed frame in buf */
    size_t ready;   /* prepared frames from head on */
    double *buf;    /* tile x width */
};

bl_status bl_tape_create(bl_tape **out, const bl_seed *seed, size_t width, size_t tile,
                         bl_tape_dist dist, bl_error *err)
{
    *out = NULL;
    if (width == 0)
        return bl_fail(err, BL_EVALUE, "noise tape width must be at least 1");
    if (tile == 0)
        return bl_fail(err, BL_EVALUE, "noise tape tile must be at least 1 frame");
    if (dist != BL_TAPE_NORMAL && dist != BL_TAPE_UNIFORM)
        return bl_fail(err, BL_EVALUE, "noise tape distribution must be normal or uniform");
    if (tile > SIZE_MAX / width)
        return bl_fail(err, BL_ENOMEM, "noise tape of %zu x %zu values is too large", tile,
                       width);
    bl_tape *t = bl_calloc(1, sizeof *t);
    if (!t)
        goto fail;
    t->buf = bl_mallocarray(tile * width, sizeof *t->buf);
    if (!t->buf)
        goto fail;
    bl_gen_init(&t->gen, seed);
    t->dist = dist;
    t->width = width;
    t->tile = tile;
    *out = t;
    return BL_OK;
fail:
    bl_tape_destroy(t);
    return bl_fail(err, BL_ENOMEM, "out of memory creating a noise tape of %zu x %zu values",
                   tile, width);
}

void bl_tape_destroy(bl_tape *t)
{
    if (!t)
        return;
    bl_free(t->buf);
    bl_free(t);
}

bl_status bl_tape_preview(bl_tape *t, size_t count, const double **frames, bl_error *err)
{
    if (count < 1 || count > t->tile)
        return bl_fail(err, BL_EVALUE, "noise tape preview of %zu frames: must be 1..%zu",
                       count, t->tile);
    if (count > t->ready) {
        /* Compact lazily: only when the requested block would run past the
         * end of the buffer, so a steady preview/consume cycle moves little. */
        if (t->head + count > t->tile) {
            memmove(t->buf, t->buf + t->head * t->width, t->ready * t->width * sizeof *t->buf);
            t->head = 0;
        }
        double *dst = t->buf + (t->head + t->ready) * t->width;
        size_t n = (count - t->ready) * t->width;
        if (t->dist == BL_TAPE_NORMAL)
            bl_gen_standard_normal_fill(&t->gen, dst, n);
        else
            bl_gen_random_fill(&t->gen, dst, n);
        t->ready = count;
    }
    *frames = t->buf + t->head * t->width;
    return BL_OK;
}

bl_status bl_tape_consume(bl_tape *t, size_t count, bl_error *err)
{
    if (count > t->ready)
        return bl_fail(err, BL_EVALUE,
                       "noise tape cannot consume %zu frames: only %zu are prepared", count,
                       t->ready);
    t->head += count;
    t->ready -= count;
    if (t->ready == 0)
        t->head = 0;
    t->consumed += count;
    return BL_OK;
}

bl_status bl_tape_frame(bl_tape *t, const double **frame, bl_error *err)
{
    bl_status st = bl_tape_preview(t, 1, frame, err);
    if (st != BL_OK)
        return st;
    return bl_tape_consume(t, 1, err);
}

uint64_t bl_tape_consumed(const bl_tape *t) { return t->consumed; }
size_t bl_tape_width(const bl_tape *t) { return t->width; }
