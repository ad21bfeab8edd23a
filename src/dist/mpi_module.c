/* libbrainlesslab-mpi.so: the MPI transport of src/dist/mpi_transport.h
 * over Open MPI (or any MPI 3 library). Built only with BL_MPI; loaded by
 * `brainlesslab run` only under an MPI launcher (src/cli/run_mpi.c). */
#include <mpi.h>
#include <stdio.h>

#include "mpi_transport.h"

/* Messages travel as chunks of at most 1 GiB: MPI counts are ints, and an
 * encoded part of a large run can exceed 2 GiB. */
#define CHUNK ((uint64_t)1 << 30)
/* One tag for every message: the order between two ranks is MPI's
 * non-overtaking order of one (source, tag, communicator). */
#define TAG 21

static int init(int *rank, int *size, char *msg, size_t cap)
{
    int provided = 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
        snprintf(msg, cap, "MPI_Init_thread failed (error %d)", rc);
        return 1;
    }
    if (provided < MPI_THREAD_FUNNELED) {
        snprintf(msg, cap, "the MPI library does not support MPI_THREAD_FUNNELED");
        return 1;
    }
    if (MPI_Comm_rank(MPI_COMM_WORLD, rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, size) != MPI_SUCCESS) {
        snprintf(msg, cap, "MPI_COMM_WORLD has no rank or size");
        return 1;
    }
    return 0;
}

static int send_message(int dest, const void *data, uint64_t len)
{
    if (MPI_Send(&len, 1, MPI_UINT64_T, dest, TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 1;
    const char *p = data;
    for (uint64_t off = 0; off < len; off += CHUNK) {
        const uint64_t n = len - off < CHUNK ? len - off : CHUNK;
        if (MPI_Send(p + off, (int)n, MPI_BYTE, dest, TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
            return 1;
    }
    return 0;
}

static int recv_length(int src, uint64_t *len)
{
    return MPI_Recv(len, 1, MPI_UINT64_T, src, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
           MPI_SUCCESS;
}

static int recv_data(int src, void *data, uint64_t len)
{
    char *p = data;
    for (uint64_t off = 0; off < len; off += CHUNK) {
        const uint64_t n = len - off < CHUNK ? len - off : CHUNK;
        if (MPI_Recv(p + off, (int)n, MPI_BYTE, src, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS)
            return 1;
    }
    return 0;
}

static int bcast(int64_t *value)
{
    return MPI_Bcast(value, 1, MPI_INT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS;
}

static void abort_job(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}

static int finalize(void)
{
    return MPI_Finalize() != MPI_SUCCESS;
}

static const char *library(void)
{
    static char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(text, &len) != MPI_SUCCESS)
        return "unknown MPI library";
    return text;
}

static const bl_mpi_transport table = {
    .version = BL_MPI_TRANSPORT_VERSION,
    .init = init,
    .send = send_message,
    .recv_length = recv_length,
    .recv_data = recv_data,
    .bcast = bcast,
    .abort = abort_job,
    .finalize = finalize,
    .library = library,
};

/* The one symbol the module exports (-fvisibility=hidden elsewhere). */
__attribute__((visibility("default"))) const bl_mpi_transport *bl_mpi_transport_get(void);

const bl_mpi_transport *bl_mpi_transport_get(void)
{
    return &table;
}
