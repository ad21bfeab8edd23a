/* `brainlesslab run` under MPI (src/cli/run_mpi.c): when mpirun or srun
 * starts the program as several ranks, every rank prepares the plan, runs
 * its deterministic part of the job list, and rank 0 gathers the parts and
 * writes the one record (docs/cluster.md).
 *
 * run.c hands its own steps over in a table, so that both ways of running
 * read the command line, check the plan and write the record with the same
 * code. */
#ifndef BL_CLI_RUN_MPI_H
#define BL_CLI_RUN_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "args.h"
#include "brainlesslab/evaluation.h"
#include "brainlesslab/records.h"
#include "brainlesslab/run.h"
#include "brainlesslab/status.h"

/* The calibration records of every --calibration source, pooled. */
typedef struct bl_cli_pool {
    bl_calibration **cals;
    size_t n;
} bl_cli_pool;

/* The steps of run.c that the MPI run takes too. */
typedef struct bl_cli_run_steps {
    bl_status (*execution)(const bl_cli_args *args, bl_execution *x, bl_error *err);
    bl_status (*calibrations)(const bl_cli_args *args, bl_cli_pool *p, bl_error *err);
    void (*pool_free)(bl_cli_pool *p);
    bl_status (*plan_id)(const char *id, bl_error *err);
    void (*summary)(const bl_evaluation *e);
} bl_cli_run_steps;

/* Called first by `run`. Returns false when the environment names no
 * launch of several ranks (run then runs as one process); otherwise it ran
 * the command as one rank of the job, or refused it with one line (a build
 * without MPI, --shard under MPI, a launcher whose ranks MPI cannot see),
 * and *rc is the exit code. */
bool bl_cli_run_mpi(const bl_cli_args *args, const bl_cli_run_steps *steps, int *rc);

#endif
