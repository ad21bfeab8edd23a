/* Figures: SVG pictures of a complete record (`brainlesslab plot`,
 * docs/figures.md). Above records in the module tower: a record is read
 * only through the inspector (checksums verified first) and its summary,
 * trials and probe files, each checked against its manifest checksum again
 * as it is read. Records are never changed: figures go into a new
 * directory outside the record.
 *
 * Figures (one per outcome key where targets of several tasks share a
 * record): outcomes-<key>.svg (per target the block means, the estimate,
 * its bootstrap interval and, where calibrated, the null band),
 * contrasts-<key>.svg (paired contrasts: block differences, estimate,
 * interval), sweep-<key>.svg (sweep plans: the outcome against the swept
 * value, one series per combination of the other axes) and probe-<n>.svg
 * (probe_events records, one per target: native accuracy per observation
 * point and, given decode's output, decoder, permutation and constant
 * accuracies). figures.json lists them. */
#ifndef BRAINLESSLAB_FIGURES_H
#define BRAINLESSLAB_FIGURES_H

#include <stddef.h>

#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/status.h"

typedef struct bl_figure {
    char *file;   /* "outcomes-track_score.svg" */
    char *kind;   /* outcomes, contrasts, sweep, probe */
    char *title;
    size_t marks; /* data marks drawn (elements of class "mark") */
    bl_buf svg;
} bl_figure;

typedef struct bl_figure_set {
    bl_figure *items;
    size_t n;
    bl_json *index; /* the figures.json document */
} bl_figure_set;

/* Draws every figure of `record` in memory. The record must inspect
 * complete ("plot requires a complete record; this record is <status>").
 * `decoded` (or NULL) is the file `decode --out` wrote for this record: a
 * file of another shape is BL_EVALUE "<path>: not the output of
 * brainlesslab decode (<why>)", one whose blocks, trials or native scores
 * are not this record's "<path>: decoded results do not belong to this
 * record (<why>)". */
bl_status bl_figures_make(const char *record, const char *decoded, bl_figure_set *out,
                          bl_error *err);

/* Writes the set into `dir`, a new directory outside the record: a dir
 * inside the record (or the record itself) is BL_EVALUE "--out must be
 * outside the record: a file added to a record makes it incomplete", an
 * existing one BL_EEXIST. Parents are created. On any failure everything
 * this call made is removed again. */
bl_status bl_figures_write(const bl_figure_set *set, const char *record, const char *dir,
                           bl_error *err);

void bl_figure_set_clear(bl_figure_set *set);

#endif
