/* What the harnesses in tests/fuzz share. Each fuzz_<name>.c defines
 * LLVMFuzzerTestOneInput and is linked twice: with libFuzzer's main() by
 * `make fuzz` (BL_FUZZ=ON, clang), and with replay.c's main() in every build,
 * where ctest feeds it each file of tests/fuzz/corpus/fuzz_<name>/ so the
 * sanitizer build of CI replays the committed corpora.
 *
 * A harness returns 0 for every input; a finding is a crash, a sanitizer
 * report, a leak, or an abort() where a promise of the API is broken. */
#ifndef BL_FUZZ_H
#define BL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A fresh private directory for the process (mkdtemp under $TMPDIR or /tmp),
 * removed with everything in it at exit; aborts when none can be made, since
 * a harness without its directory would test nothing. */
const char *bl_fuzz_tmpdir(void);

/* Writes `len` bytes to `path` (replaced if it exists); aborts on failure. */
void bl_fuzz_write(const char *path, const void *data, size_t len);

#endif
