/* The MPI transport: the few MPI operations `brainlesslab run` needs when
 * mpirun or srun starts it as several ranks (src/cli/run_mpi.c), behind a
 * table of functions.
 *
 * The table lives in its own shared module, libbrainlesslab-mpi.so
 * (src/dist/mpi_module.c), the only code linked against libmpi. The program
 * loads it with dlopen only when its environment says a launcher started it
 * as one of several ranks, so no other invocation pays for loading Open MPI
 * and its dependencies (docs/performance.md, "Scaling out"). Only the
 * calling thread uses MPI (MPI_THREAD_FUNNELED): the OpenMP threads of a
 * rank never do.
 *
 * Every call either succeeds or ends the job: the module keeps MPI's
 * default error handler (MPI_ERRORS_ARE_FATAL), and Open MPI aborts the
 * whole job when a rank dies, so no rank can wait for ever on a dead peer. */
#ifndef BL_DIST_MPI_TRANSPORT_H
#define BL_DIST_MPI_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever the table changes, so that a program never calls into a
 * module built from other sources. */
#define BL_MPI_TRANSPORT_VERSION 1

/* The module's one exported symbol, looked up by this name. */
#define BL_MPI_TRANSPORT_SYMBOL "bl_mpi_transport_get"

typedef struct bl_mpi_transport {
    int version; /* BL_MPI_TRANSPORT_VERSION */
    /* MPI_Init_thread(FUNNELED), then this rank and the size of
     * MPI_COMM_WORLD. Non-zero on failure, with a line in msg. */
    int (*init)(int *rank, int *size, char *msg, size_t cap);
    /* One message of any length to rank `dest`: its length, then the bytes
     * in chunks that fit MPI's int counts. Messages between two ranks
     * arrive in the order they were sent. */
    int (*send)(int dest, const void *data, uint64_t len);
    /* The next message from rank `src` in two steps: its length, then its
     * bytes into a buffer of that length (the caller owns the buffer). */
    int (*recv_length)(int src, uint64_t *len);
    int (*recv_data)(int src, void *data, uint64_t len);
    /* Rank 0's *value on every rank. */
    int (*bcast)(int64_t *value);
    /* Ends every rank of the job with `code` (MPI_Abort); does not return. */
    void (*abort)(int code);
    int (*finalize)(void);
    /* MPI_Get_library_version's text, for messages. */
    const char *(*library)(void);
} bl_mpi_transport;

typedef const bl_mpi_transport *(*bl_mpi_transport_fn)(void);

#endif
