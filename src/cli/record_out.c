/* The end that every command writing a record shares (run, run under MPI,
 * run --shard, merge): stop signals asked before each file, errors after
 * the reservation turned into a FAILED record, and the one line on stdout
 * that says where the record is and what it is. */
#include <signal.h>
#include <string.h>

#include "cli.h"

bl_status bl_cli_reserve_record(const char *dest, bl_reservation *res, bl_error *err)
{
    /* The path must be printable as the record line's JSON (valid UTF-8)
     * before it exists. */
    bl_buf line;
    bl_buf_init(&line);
    bl_status st = bl_cli_path_line("record", dest, "complete", &line, err);
    bl_buf_clear(&line);
    if (st != BL_OK)
        return st;
    /* From here a stop signal only raises a flag: the runner stops at the
     * next tick boundary, the writer before its next file, and the
     * reservation is failed before the program exits. A write over
     * RLIMIT_FSIZE must fail (EFBIG, then FAILED), not kill. */
    bl_cli_flag_interrupts();
    signal(SIGXFSZ, SIG_IGN);
    return bl_record_reserve(dest, res, err);
}

bl_status bl_cli_stop_requested(void *ctx, const char *rel, bl_error *err)
{
    (void)ctx;
    (void)rel;
    const int sig = bl_cli_interrupted;
    return sig ? bl_fail_signal(err, sig) : BL_OK;
}

int bl_cli_fail_reserved(const bl_reservation *r, const bl_error *err)
{
    bl_error ferr;
    if (bl_record_fail(r, err, &ferr) != BL_OK)
        (void)bl_cli_report(&ferr); /* the record may be damaged: say so too */
    return bl_cli_report(err);
}

int bl_cli_record_written(const char *path, bool *printed)
{
    *printed = false;
    bl_error err = {0};
    bl_json *inspection = NULL;
    bl_buf out;
    bl_buf_init(&out);
    int rc;
    if (bl_record_inspect(path, &inspection, &err) != BL_OK) {
        rc = bl_cli_report(&err);
        goto done;
    }
    const char *status = bl_json_get_string(bl_json_get(inspection, "status"), NULL);
    if (bl_cli_path_line("record", path, status, &out, &err) != BL_OK) {
        rc = bl_cli_report(&err);
        goto done;
    }
    rc = bl_cli_emit(&out);
    *printed = true;
    if (rc == 0)
        rc = strcmp(status, "complete") == 0 ? 0 : 1;
done:
    bl_buf_clear(&out);
    bl_json_destroy(inspection);
    return rc;
}

int bl_cli_write_evaluation(bl_record_input *in, const bl_reservation *r, bool *printed)
{
    *printed = false;
    bl_error err = {0};
    bl_recordings recs = {0};
    bl_json *replays = NULL;
    const char *written = NULL;
    int rc;
    if (!in->before_file)
        in->before_file = bl_cli_stop_requested;
    if (bl_record_channels(in, &recs, &replays, &err) != BL_OK)
        rc = bl_cli_fail_reserved(r, &err);
    /* bl_record_write fails the reservation itself on any error, a stop
     * signal before its completion marker included (then exit 128 + the
     * signal, nothing on stdout). Once the marker is written the record is
     * what it is, and a later signal does not change what is reported. */
    else if (bl_record_write(in, r, &written, &err) != BL_OK)
        rc = bl_cli_report(&err);
    else
        rc = bl_cli_record_written(r->path, printed);
    bl_json_destroy(replays);
    bl_recordings_clear(&recs);
    return rc;
}
