/* `brainlesslab run` as one rank of an MPI job (run_mpi.h, docs/cluster.md).
 *
 * The launch is read from the environment that mpirun, Slurm's srun and the
 * PMI/PMIx launchers set, so that every other invocation of the program runs
 * without loading MPI at all: only then is the MPI module dlopen()ed
 * (src/dist/mpi_transport.h). A launch of one rank is a plain run.
 *
 * The job, with N ranks:
 *  1. every rank reads, resolves and prepares the plan (its part r + 1 of N,
 *     bl_evaluation_prepare_part) with run's checks; rank 0 collects every
 *     rank's verdict and reports the first failure once (rank 0's own, else
 *     "rank R: ..."); every rank then exits 1, and nothing was written;
 *  2. rank 0 reserves the record, as run does before it executes;
 *  3. every rank runs its part with its own OpenMP threads and sends rank 0
 *     a status message, then (when it succeeded) its encoded part; rank 0
 *     receives them in rank order, decodes each, and combines them
 *     (bl_evaluate_parts), so the record's results are those of one process;
 *  4. rank 0 writes the record with the execution metadata's "distribution"
 *     {"kind": "mpi", "ranks": N, "cpu_threads": T}, prints the record line
 *     and the summary, and tells every rank the exit code.
 *
 * Failures: a rank whose part fails sends its error instead of a part; rank
 * 0 still drains every other rank's messages (so no rank is left blocked in
 * a send), then fails the record with that rank's message prefixed by
 * "rank R: ", reports one line, and every rank exits non-zero. When rank 0
 * itself fails or is stopped while running (Ctrl-C, SIGTERM), it fails the
 * record and reports as run does, then ends the job (MPI_Abort), since the
 * other ranks' parts no longer matter. A rank killed outright makes mpirun
 * end the whole job; the record then stays reserved or FAILED, never DONE. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "brainlesslab/alloc.h"
#include "brainlesslab/buf.h"
#include "brainlesslab/json.h"
#include "brainlesslab/plan.h"
#include "cli.h"
#include "dist/mpi_transport.h"
#include "run_mpi.h"

/* ---- the launch ---------------------------------------------------------- */

/* A non-negative decimal environment variable, or -1. */
static long env_number(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    return *end || errno || v < 0 ? -1 : v;
}

/* How many ranks the launcher says it started: Open MPI's mpirun, MPICH's
 * PMI, then a Slurm job step (srun). 0 when nothing names a launch, -1 when
 * only PMIx's rank does (srun --mpi=pmix under some set-ups): then only MPI
 * can tell the size. */
static long launched_ranks(void)
{
    long n = env_number("OMPI_COMM_WORLD_SIZE");
    if (n < 0)
        n = env_number("PMI_SIZE");
    if (n < 0 && getenv("SLURM_STEP_ID"))
        n = env_number("SLURM_STEP_NUM_TASKS");
    if (n < 0 && getenv("PMIX_RANK"))
        return -1;
    return n < 0 ? 0 : n;
}

/* This process's rank as the launcher named it (0 when none does), so that
 * a refusal before MPI is initialised is still printed by one rank only. */
static long launched_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                        "SLURM_PROCID"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        const long r = env_number(names[k]);
        if (r >= 0)
            return r;
    }
    return 0;
}

/* --shard with several ranks: each rank would run the same part. */
static void shard_refused(long ranks, bl_error *err)
{
    bl_fail(err, BL_EVALUE,
            "--shard cannot be combined with an MPI launch of %ld ranks: start each shard "
            "as one process, or drop --shard",
            ranks);
}

/* One refusal line from the first rank; every rank exits 1. */
static int refuse(const bl_error *err)
{
    return launched_rank() == 0 ? bl_cli_report(err) : 1;
}

/* ---- the module ---------------------------------------------------------- */

#ifdef BL_MPI_MODULE
/* "<dir of the program>/<rel>/<module>" into buf; false when it cannot be
 * named. The build tree keeps the module beside the program; an installed
 * program finds it under BL_MPI_MODULE_RELDIR (relative to its bindir). */
static bool module_path(const char *rel, char *buf, size_t cap)
{
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    const int len = snprintf(buf, cap, "%s/%s%s%s", exe, rel, *rel ? "/" : "", BL_MPI_MODULE);
    return len > 0 && (size_t)len < cap;
}
#endif

static bl_status load_transport(const bl_mpi_transport **out, bl_error *err)
{
#ifdef BL_MPI_MODULE
    static const char *const dirs[] = {"", BL_MPI_MODULE_RELDIR};
    char path[PATH_MAX];
    for (size_t k = 0; k < sizeof dirs / sizeof *dirs; k++) {
        if (!module_path(dirs[k], path, sizeof path) || access(path, F_OK) != 0)
            continue;
        /* Never closed: MPI stays initialised until the program ends. */
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            return bl_fail(err, BL_ERUNTIME, "cannot load the MPI module: %s", dlerror());
        /* dlsym's object pointer as the function pointer it is (POSIX
         * guarantees they convert; ISO C has no cast between them). */
        void *sym = dlsym(h, BL_MPI_TRANSPORT_SYMBOL);
        bl_mpi_transport_fn get;
        memcpy(&get, &sym, sizeof get);
        const bl_mpi_transport *t = get ? get() : NULL;
        if (!t || t->version != BL_MPI_TRANSPORT_VERSION)
            return bl_fail(err, BL_ERUNTIME, "%s is not this build's MPI module", path);
        *out = t;
        return BL_OK;
    }
    return bl_fail(err, BL_ERUNTIME,
                   "the MPI module %s is missing beside the program and in %s; "
                   "reinstall brainlesslab",
                   BL_MPI_MODULE, BL_MPI_MODULE_RELDIR);
#else
    *out = NULL;
    return bl_fail(err, BL_ERUNTIME,
                   "this build has no MPI support; rebuild with libopenmpi-dev installed "
                   "(cmake -DBL_MPI=ON), or run the plan as shards (--shard K/N) without "
                   "an MPI launcher");
#endif
}

/* ---- messages between ranks ---------------------------------------------- */

/* A status message: the status as 4 little-endian bytes, then the message
 * text (status 0: the part follows as the next message). */
static int send_status(const bl_mpi_transport *mpi, const bl_error *e)
{
    unsigned char msg[4 + BL_ERROR_MAX];
    const uint32_t st = e ? (uint32_t)e->status : 0;
    const size_t len = e ? strnlen(e->msg, sizeof e->msg) : 0;
    for (int k = 0; k < 4; k++)
        msg[k] = (unsigned char)(st >> (8 * k));
    if (len)
        memcpy(msg + 4, e->msg, len);
    return mpi->send(0, msg, 4 + len);
}

/* The next message from `src` into a buffer of its own (bl_free). */
static bl_status recv_message(const bl_mpi_transport *mpi, int src, unsigned char **data,
                              size_t *len, bl_error *err)
{
    uint64_t n = 0;
    if (mpi->recv_length(src, &n) != 0)
        return bl_fail(err, BL_ERUNTIME, "rank %d: MPI receive failed", src);
    if (n > SIZE_MAX - 1)
        return bl_fail(err, BL_ENOMEM, "rank %d: a message of %llu bytes does not fit memory",
                       src, (unsigned long long)n);
    unsigned char *buf = bl_malloc(n ? (size_t)n : 1);
    if (!buf) {
        /* The transport cannot drop a message, and a sender left blocked
         * would hang the job: end it. */
        bl_fail(err, BL_ENOMEM, "out of memory for rank %d's message of %llu bytes", src,
                (unsigned long long)n);
        mpi->abort(bl_cli_report(err));
        return err->status;
    }
    if (mpi->recv_data(src, buf, n) != 0) {
        bl_free(buf);
        return bl_fail(err, BL_ERUNTIME, "rank %d: MPI receive failed", src);
    }
    *data = buf;
    *len = (size_t)n;
    return BL_OK;
}

/* Rank `src`'s status message into *got (BL_OK, or its error prefixed by
 * its rank). */
static bl_status recv_status(const bl_mpi_transport *mpi, int src, bl_error *got, bl_error *err)
{
    unsigned char *msg = NULL;
    size_t len = 0;
    if (recv_message(mpi, src, &msg, &len, err) != BL_OK)
        return err->status;
    uint32_t st = 0;
    for (int k = 0; k < 4 && (size_t)k < len; k++)
        st |= (uint32_t)msg[k] << (8 * k);
    bl_error_clear(got);
    if (len < 4 || st >= BL_STATUS_COUNT) {
        bl_fail(got, BL_ERUNTIME, "rank %d sent a malformed status message", src);
    } else if (st != BL_OK) {
        const size_t n = len - 4 < BL_ERROR_MAX - 1 ? len - 4 : BL_ERROR_MAX - 1;
        bl_fail(got, (bl_status)st, "rank %d: %.*s", src, (int)n, (const char *)msg + 4);
    }
    bl_free(msg);
    return BL_OK;
}

/* Every rank's verdict on a step, decided by rank 0: BL_OK when every rank
 * succeeded; otherwise rank 0's *err holds the failure to report (its own
 * first, else the first other rank's), and every rank gets a non-OK
 * status. */
static bl_status agree(const bl_mpi_transport *mpi, int rank, int size, bl_status st,
                       bl_error *err)
{
    int64_t verdict = st != BL_OK;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            bl_error got;
            if (recv_status(mpi, r, &got, &got) != BL_OK || got.status != BL_OK) {
                if (!verdict)
                    *err = got;
                verdict = 1;
            }
        }
    } else if (send_status(mpi, st != BL_OK ? err : NULL) != 0) {
        verdict = 1;
    }
    if (mpi->bcast(&verdict) != 0)
        verdict = 1;
    if (verdict && st == BL_OK && rank != 0)
        return bl_fail(err, BL_ERUNTIME, "another rank failed");
    return verdict ? (st != BL_OK ? st : err->status) : BL_OK;
}

/* A refusal agreed by every rank, reported once by rank 0. No rank exits
 * before rank 0 has reported: mpirun ends the whole job (SIGTERM) as soon
 * as one rank exits non-zero, which could cut rank 0 off before its line,
 * or make its exit-on-signal handler add a second one. From here on rank
 * 0 only notes stop signals. `sig` is the stop signal this rank itself got
 * before the refusal: another rank's signal is this run's failure (exit
 * 1), not a signal to rank 0. */
static int report_agreed(const bl_mpi_transport *mpi, int rank, int sig, const bl_error *err)
{
    int64_t rc = 1;
    if (rank == 0) {
        bl_cli_flag_interrupts();
        rc = bl_cli_report(err);
        if (rc > 128 && !sig)
            rc = 1;
    }
    int64_t reported = 1;
    (void)mpi->bcast(&reported);
    return (int)rc;
}

/* ---- the ranks' run ------------------------------------------------------- */

typedef struct mpi_run {
    const bl_mpi_transport *mpi;
    const bl_cli_run_steps *steps;
    int rank, size;
    bl_plan *plan;
    bl_resolved_plan *resolved;
    bl_execution x;
    bl_cli_pool cals;
    bl_evaluation_prepared *prepared;
    char *dest;
} mpi_run;

/* Step 1 on every rank: run's checks, with this rank's part prepared. */
static bl_status prepare(mpi_run *m, const bl_cli_args *args, bl_error *err)
{
    const bl_cli_run_steps *s = m->steps;
    bl_status st = BL_OK;
    if (bl_plan_read(args->positional, &m->plan, err) != BL_OK ||
        bl_plan_resolve(m->plan, &m->resolved, err) != BL_OK ||
        s->execution(args, &m->x, err) != BL_OK || s->calibrations(args, &m->cals, err) != BL_OK ||
        s->plan_id(bl_plan_id(m->plan), err) != BL_OK ||
        bl_evaluation_prepare_part(m->resolved, &m->x,
                                   (const bl_calibration *const *)m->cals.cals, m->cals.n,
                                   m->rank + 1, m->size, &m->prepared, err) != BL_OK)
        st = err->status;
    if (st == BL_OK && m->rank == 0) {
        bl_buf line;
        bl_buf_init(&line);
        /* The record's path must be printable as JSON before it exists. */
        if (bl_record_name(bl_cli_value(args, "--root"), bl_plan_id(m->plan), &m->dest, err) !=
                BL_OK ||
            bl_cli_path_line("record", m->dest, "complete", &line, err) != BL_OK)
            st = err->status;
        bl_buf_clear(&line);
    }
    return st;
}

/* A part run under a signal or an error in the same words as run's. */
static bl_status run_part(const mpi_run *m, bl_run_result **part, bl_error *err)
{
    bl_run_hooks hooks = {.interrupt = &bl_cli_interrupted};
    bl_status st = bl_evaluate_part(m->prepared, &hooks, part, err);
    const int sig = bl_cli_interrupted;
    if (sig && (st == BL_OK || st == BL_EINTERRUPT))
        st = bl_fail_signal(err, sig);
    return st;
}

/* Step 3 on ranks 1..N-1: the status, then the part. */
static void send_part(const mpi_run *m)
{
    bl_error err = {0};
    bl_run_result *part = NULL;
    bl_buf bytes;
    bl_buf_init(&bytes);
    bl_status st = run_part(m, &part, &err);
    if (st == BL_OK)
        st = bl_run_part_encode(part, &bytes, &err);
    bl_run_result_destroy(part);
    if (send_status(m->mpi, st == BL_OK ? NULL : &err) != 0 ||
        (st == BL_OK && m->mpi->send(0, bytes.data, bytes.len) != 0))
        m->mpi->abort(1);
    bl_buf_clear(&bytes);
}

/* Step 3 on rank 0: its own part, then every other rank's in rank order,
 * into parts[0..size-1]. Every message is received even after a failure, so
 * that no rank stays blocked in a send; the first failure is the one
 * reported. *remote tells whether it came from another rank, *drained
 * whether every rank's messages were received. */
static bl_status gather(const mpi_run *m, bl_run_result **parts, bool *remote, bool *drained,
                        bl_error *err)
{
    bl_status st = run_part(m, &parts[0], err);
    if (st != BL_OK)
        return st; /* rank 0's own failure: the caller ends the job */
    *drained = true;
    for (int r = 1; r < m->size; r++) {
        bl_error got;
        if (recv_status(m->mpi, r, &got, &got) != BL_OK || got.status != BL_OK) {
            if (st == BL_OK) {
                *err = got;
                st = got.status;
                *remote = true;
            }
            continue;
        }
        unsigned char *bytes = NULL;
        size_t len = 0;
        bl_error local;
        if (recv_message(m->mpi, r, &bytes, &len, &local) != BL_OK) {
            if (st == BL_OK) {
                *err = local;
                st = local.status;
            }
            continue;
        }
        if (st == BL_OK &&
            bl_run_part_decode(m->prepared, bytes, len, &parts[r], &local) != BL_OK) {
            bl_fail(err, local.status, "rank %d's part: %s", r, local.msg);
            st = local.status;
        }
        bl_free(bytes);
    }
    /* A stop signal that reached rank 0 while it waited is what it reports,
     * as run would, even when the other ranks (which mpirun signals too)
     * reported their own stop first. */
    const int sig = bl_cli_interrupted;
    if (sig) {
        st = bl_fail_signal(err, sig);
        *remote = false;
    }
    return st;
}

/* {"cpu_threads": T, "kind": "mpi", "ranks": N} for the record's metadata. */
static bl_status distribution(const mpi_run *m, bl_json **out, bl_error *err)
{
    bl_status st = BL_OK;
    bl_json *d = bl_json_object();
    bl_json_put(&st, d, "kind", bl_json_string("mpi"), err);
    bl_json_put(&st, d, "ranks", bl_json_int(m->size), err);
    bl_json_put(&st, d, "cpu_threads", bl_json_int(m->x.cpu_threads), err);
    return bl_json_hand_over(st, d, out);
}

/* Steps 2 to 4 on rank 0; returns the exit code. */
static int run_root(mpi_run *m)
{
    bl_error err = {0};
    bl_reservation res = {0};
    bl_run_result **parts = bl_calloc((size_t)m->size, sizeof *parts);
    bl_evaluation *result = NULL;
    bl_json *dist = NULL;
    bool remote = false, drained = false;
    int rc;

    bl_status st = parts ? BL_OK : bl_fail(&err, BL_ENOMEM, "out of memory for the parts");
    if (st == BL_OK)
        st = bl_record_reserve(m->dest, &res, &err);
    int64_t go = st != BL_OK;
    if (m->mpi->bcast(&go) != 0 || st != BL_OK) {
        rc = st != BL_OK ? bl_cli_report(&err) : 1;
        goto done;
    }
    st = gather(m, parts, &remote, &drained, &err);
    if (st == BL_OK)
        st = bl_evaluate_parts(m->prepared, parts, (size_t)m->size, &result, &err);
    if (st == BL_OK)
        st = distribution(m, &dist, &err);
    if (st != BL_OK) {
        rc = bl_cli_fail_reserved(&res, &err);
        /* Another rank's stop is this run's failure, not this rank's signal. */
        if (remote)
            rc = 1;
        if (!drained)
            m->mpi->abort(rc); /* the other ranks' work is lost anyway */
        goto done;
    }
    bl_record_input input = {
        .plan = m->plan,
        .resolved = m->resolved,
        .execution = &m->x,
        .evaluation = result,
        .distribution = dist,
    };
    bool printed;
    rc = bl_cli_write_evaluation(&input, &res, &printed);
    if (printed)
        m->steps->summary(result);
done:
    if (parts)
        for (int r = 0; r < m->size; r++)
            bl_run_result_destroy(parts[r]);
    bl_free(parts);
    bl_json_destroy(dist);
    bl_reservation_clear(&res);
    bl_evaluation_destroy(result);
    return rc;
}

/* The whole job on one rank; every rank returns the same kind of exit
 * code (0 only when the record is complete). */
static int run_ranks(mpi_run *m, const bl_cli_args *args)
{
    bl_error err = {0};
    int64_t rc;
    /* Until the reservation a stop signal ends rank 0 on the spot, as it
     * ends run (mpirun then ends the others). The other ranks only note it,
     * at once, so that their stop is always reported by rank 0 and fails
     * the record once it exists. */
    if (m->rank == 0)
        bl_cli_exit_on_interrupt();
    else
        bl_cli_flag_interrupts();
    bl_status st = prepare(m, args, &err);
    const int sig = bl_cli_interrupted;
    if (st == BL_OK && sig)
        st = bl_fail_signal(&err, sig);
    if (agree(m->mpi, m->rank, m->size, st, &err) != BL_OK) {
        rc = report_agreed(m->mpi, m->rank, sig, &err);
        goto done;
    }
    /* From here a stop signal only raises a flag, as in run. */
    if (m->rank == 0)
        bl_cli_flag_interrupts();
    signal(SIGXFSZ, SIG_IGN);
    if (m->rank == 0) {
        rc = run_root(m);
    } else {
        int64_t go = 1;
        if (m->mpi->bcast(&go) == 0 && go == 0)
            send_part(m);
        rc = 1;
    }
    /* Rank 0's exit code for every rank, so that no rank ends before rank
     * 0 has written the record (mpirun ends the job when a rank exits
     * non-zero). */
    if (m->mpi->bcast(&rc) != 0)
        rc = 1;
done:
    bl_evaluation_prepared_destroy(m->prepared);
    m->steps->pool_free(&m->cals);
    bl_resolved_plan_destroy(m->resolved);
    bl_plan_destroy(m->plan);
    bl_free(m->dest);
    return (int)rc;
}

bool bl_cli_run_mpi(const bl_cli_args *args, const bl_cli_run_steps *steps, int *rc)
{
    const long launched = launched_ranks();
    if (launched == 0 || launched == 1)
        return false;
    bl_error err = {0};
    /* --shard with several ranks is refused once MPI is up, so that every
     * rank waits for rank 0's line (report_agreed); only a program that
     * cannot load MPI refuses it on each rank alone. */
    const char *shard = bl_cli_value(args, "--shard");
    const bl_mpi_transport *mpi = NULL;
    if (load_transport(&mpi, &err) != BL_OK) {
        /* PMIx alone may name a launch of one rank: that rank runs. */
        if (launched < 0 && launched_rank() == 0)
            return false;
        if (shard && launched > 1)
            shard_refused(launched, &err);
        *rc = refuse(&err);
        return true;
    }
    mpi_run m = {.mpi = mpi, .steps = steps};
    char why[256] = "";
    if (mpi->init(&m.rank, &m.size, why, sizeof why) != 0) {
        bl_fail(&err, BL_ERUNTIME, "%s", why);
        *rc = refuse(&err);
        return true;
    }
    if (launched > 0 && m.size != launched) {
        /* Tasks that each see a world of their own (srun without an MPI
         * plugin) would each write a whole record. */
        bl_fail(&err, BL_ERUNTIME,
                "the launcher started %ld tasks but MPI sees %d rank%s (with srun, select "
                "the MPI plugin: srun --mpi=pmix)",
                launched, m.size, m.size == 1 ? "" : "s");
        *rc = refuse(&err);
    } else if (m.size == 1) {
        (void)mpi->finalize();
        return false;
    } else if (shard) {
        shard_refused(m.size, &err);
        *rc = report_agreed(mpi, m.rank, 0, &err);
    } else {
        *rc = run_ranks(&m, args);
    }
    (void)mpi->finalize();
    return true;
}
