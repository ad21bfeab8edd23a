/* Every public header of the engine, for programs that would rather include
 * one file: `#include <brainlesslab/brainlesslab.h>` (pkg-config brainlesslab
 * gives the include path and the library).
 *
 * The headers come in the order of the module tower (DESIGN.md, Layout),
 * bottom to top: core, rng, models, tasks, plan, run, results, records,
 * measure. Each header also compiles on its own, so a program may include
 * only the ones it uses. tests/test_umbrella.c uses one function of every
 * header through this file alone, and the umbrella_complete test fails when
 * a header of include/brainlesslab/ is missing here. */
#ifndef BRAINLESSLAB_BRAINLESSLAB_H
#define BRAINLESSLAB_BRAINLESSLAB_H

/* core */
#include "brainlesslab/status.h"
#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/file.h"
#include "brainlesslab/json.h"
#include "brainlesslab/sha256.h"
#include "brainlesslab/sysinfo.h"
#include "brainlesslab/text.h"
#include "brainlesslab/npy.h"
#include "brainlesslab/npstat.h"
#include "brainlesslab/version.h"
/* rng */
#include "brainlesslab/rng.h"
/* models */
#include "brainlesslab/model.h"
/* tasks */
#include "brainlesslab/task.h"
/* plan */
#include "brainlesslab/plan.h"
/* run */
#include "brainlesslab/run.h"
/* results */
#include "brainlesslab/results.h"
#include "brainlesslab/evaluation.h"

#include "brainlesslab/analysis.h"
/* records */
#include "brainlesslab/provenance.h"
#include "brainlesslab/records.h"
/* figures */
#include "brainlesslab/figures.h"
/* measure */
#include "brainlesslab/measure.h"

#endif
